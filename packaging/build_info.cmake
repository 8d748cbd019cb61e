# Writes OUT, a C++ file defining redlock::build_commit(): the git commit
# the binary is built from (twelve hex digits, "-dirty" when tracked files
# differ from it), so that `redlock --version` tells hosts apart. Run at
# every build (a target with no output file of its own); OUT is rewritten
# only when its text changes, so an unchanged tree recompiles nothing.
# COMMIT, when given (a packager's -DREDLOCK_COMMIT=…, or a tarball's
# build with no .git), is used as it is.
if(NOT COMMIT)
  set(COMMIT "unknown")
  find_program(GIT git)
  if(GIT AND EXISTS "${SOURCE_DIR}/.git")
    execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                    OUTPUT_VARIABLE head RESULT_VARIABLE failed OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT failed AND head)
      set(COMMIT "${head}")
      execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                      OUTPUT_VARIABLE changes ERROR_QUIET)
      if(changes)
        string(APPEND COMMIT "-dirty")
      endif()
    endif()
  endif()
endif()
set(text "// Made by packaging/build_info.cmake at build time.\n")
string(APPEND text "namespace redlock {\nconst char* build_commit() noexcept { return \"${COMMIT}\"; }\n}  // namespace redlock\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
