# Writes OUTPUT, a header defining TK_BUILD_COMMIT as `git describe --always
# --dirty` of SOURCE_DIR ("unknown" outside a git checkout), so that the
# benchmarks' JSON names the code it measured. Run at every build; the
# header is rewritten only when the commit changes, so nothing rebuilds
# otherwise.
execute_process(
  COMMAND git describe --always --dirty --abbrev=12
  WORKING_DIRECTORY "${SOURCE_DIR}"
  OUTPUT_VARIABLE commit
  OUTPUT_STRIP_TRAILING_WHITESPACE
  ERROR_QUIET
  RESULT_VARIABLE status)
if(NOT status EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
file(WRITE "${OUTPUT}.tmp" "#define TK_BUILD_COMMIT \"${commit}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different
                "${OUTPUT}.tmp" "${OUTPUT}")
file(REMOVE "${OUTPUT}.tmp")
