# Writes OUT (a header defining SIMCORE_GIT_REVISION) from the checkout in SOURCE_DIR: the
# abbreviated commit, "-dirty" when tracked files differ from it, "unknown" outside a
# checkout. Run at every build (cmake -P), it rewrites the header only when the revision
# changed, so that traces name the code that measured them without rebuilding everything.
execute_process(COMMAND git describe --always --dirty --abbrev=7 WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT revision)
  set(revision unknown)
endif()
set(content "#define SIMCORE_GIT_REVISION \"${revision}\"\n")
set(old "")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT old STREQUAL content)
  file(WRITE ${OUT} "${content}")
endif()
