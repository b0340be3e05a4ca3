# Small helpers shared by every component's CMakeLists.txt.

# tk_add_library(name SOURCES... [LINK libs...]): a library of tk whose public
# headers live in <component>/include. Links the shared MLIR and LLVM.
function(tk_add_library name)
  cmake_parse_arguments(ARG "SHARED" "" "SOURCES;LINK;DEPENDS" ${ARGN})
  if(ARG_SHARED)
    add_library(${name} SHARED ${ARG_SOURCES})
  else()
    add_library(${name} STATIC ${ARG_SOURCES})
    set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  tk_set_warnings(${name})
endfunction()

function(tk_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(TK_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# tk_link_no_undefined(target): a shared library whose every symbol must be
# resolved at link time (a plugin missing one fails to build, not to load).
# Not in the fuzz build: clang leaves the sanitizer and coverage runtimes to
# the executable, so every instrumented library has undefined symbols.
function(tk_link_no_undefined target)
  if(NOT TK_FUZZ)
    target_link_options(${target} PRIVATE -Wl,--no-undefined)
  endif()
endfunction()
