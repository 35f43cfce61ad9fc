# Script mode (cmake -P), run by the fusedmoe_revision target at every build: writes OUT, a
# header defining FUSEDMOE_GIT_REVISION, with REVISION when given (a copy of the tree without
# its own history), else the source tree's `git rev-parse --short=12 HEAD`, "-dirty" where
# tracked files differ from it; rewritten only when that changes, so that only build_info.cpp
# recompiles, and only after a commit or an edit. (At configure time the revision went stale:
# a build tree configured at one commit reported it for every later build.)
if(REVISION)
  set(rev "${REVISION}")
else()
  execute_process(COMMAND git rev-parse --short=12 HEAD
                  WORKING_DIRECTORY "${SRC}"
                  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rev)
    execute_process(COMMAND git status --porcelain --untracked-files=no
                    WORKING_DIRECTORY "${SRC}"
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      string(APPEND rev "-dirty")
    endif()
  endif()
endif()
if(NOT rev)
  set(rev unknown)
endif()
set(content "#define FUSEDMOE_GIT_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL content)
  file(WRITE "${OUT}" "${content}")
endif()
