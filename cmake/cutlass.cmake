# CUTLASS 4.2.0, header-only, from the nvidia-cutlass==4.2.0.0 wheel that scripts/setup.sh
# unpacks into .deps/cutlass (include/ and tools/util/include/). -DCUTLASS_DIR=<root> or the
# CUTLASS_DIR environment variable point elsewhere.
set(FUSEDMOE_CUTLASS_REQUIRED 4.2.0)
if(NOT CUTLASS_DIR AND DEFINED ENV{CUTLASS_DIR})
  set(CUTLASS_DIR $ENV{CUTLASS_DIR})
endif()
if(NOT CUTLASS_DIR)
  set(CUTLASS_DIR ${PROJECT_SOURCE_DIR}/.deps/cutlass)
endif()
set(CUTLASS_DIR ${CUTLASS_DIR} CACHE PATH "CUTLASS root holding include/cutlass/version.h")

set(_cutlass_version_h ${CUTLASS_DIR}/include/cutlass/version.h)
if(NOT EXISTS ${_cutlass_version_h})
  message(FATAL_ERROR
    "CUTLASS not found: ${_cutlass_version_h} does not exist.\n"
    "Run scripts/setup.sh (installs nvidia-cutlass==4.2.0.0 into .deps/cutlass), or pass "
    "-DCUTLASS_DIR=<CUTLASS root>, or configure with -DFUSEDMOE_CUDA=OFF for a CPU-only build.")
endif()
file(STRINGS ${_cutlass_version_h} _cutlass_lines REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) ")
foreach(_part MAJOR MINOR PATCH)
  string(REGEX MATCH "CUTLASS_${_part} ([0-9]+)" _m "${_cutlass_lines}")
  set(_cutlass_${_part} ${CMAKE_MATCH_1})
endforeach()
set(FUSEDMOE_CUTLASS_VERSION "${_cutlass_MAJOR}.${_cutlass_MINOR}.${_cutlass_PATCH}")
if(NOT FUSEDMOE_CUTLASS_VERSION VERSION_EQUAL FUSEDMOE_CUTLASS_REQUIRED)
  message(FATAL_ERROR
    "CUTLASS at ${CUTLASS_DIR} is version ${FUSEDMOE_CUTLASS_VERSION}; fusedmoe needs "
    "${FUSEDMOE_CUTLASS_REQUIRED}. Run scripts/setup.sh or point -DCUTLASS_DIR at CUTLASS ${FUSEDMOE_CUTLASS_REQUIRED}.")
endif()
message(STATUS "CUTLASS ${FUSEDMOE_CUTLASS_VERSION} at ${CUTLASS_DIR}")

add_library(cutlass_headers INTERFACE)
target_include_directories(cutlass_headers SYSTEM INTERFACE
  ${CUTLASS_DIR}/include
  ${CUTLASS_DIR}/tools/util/include)
