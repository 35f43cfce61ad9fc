# GoogleTest: the system package (libgtest-dev), else sources in .deps/googletest (copied
# there by scripts/setup.sh for the GPU machine, which has no package registry), else
# /usr/src/googletest.
include(GoogleTest)
find_package(GTest QUIET)
if(NOT GTest_FOUND)
  foreach(_dir ${PROJECT_SOURCE_DIR}/.deps/googletest /usr/src/googletest)
    if(EXISTS ${_dir}/CMakeLists.txt)
      set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
      set(BUILD_GMOCK OFF CACHE BOOL "" FORCE)
      add_subdirectory(${_dir} ${PROJECT_BINARY_DIR}/_googletest EXCLUDE_FROM_ALL)
      add_library(GTest::gtest ALIAS gtest)
      add_library(GTest::gtest_main ALIAS gtest_main)
      set(GTest_FOUND TRUE)
      break()
    endif()
  endforeach()
endif()
if(NOT GTest_FOUND)
  message(FATAL_ERROR "GoogleTest not found: install libgtest-dev, run scripts/setup.sh, "
                      "or configure with -DFUSEDMOE_TESTS=OFF.")
endif()
