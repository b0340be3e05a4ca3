# Small helpers shared by every component's CMakeLists.txt.

# The MLIR headers tk's files share (cmake/pch/TkMLIRHeaders.h), precompiled
# once by TkMLIRHeaders and reused by every library that links MLIR
# (tk_add_library) and the larger tests and tools: parsing them is most of
# what compiling one of tk's files costs. A reused header must be made with
# the same code-generation flags as its users, so the owner and its users
# are all compiled position-independent (-fPIC); GCC checks the rest (and
# -Winvalid-pch, which CMake adds, says when it cannot use one), clang
# refuses a header made with other options. TK_PRECOMPILED_HEADERS=OFF
# builds without, which also checks that each file includes what it uses.
option(TK_PRECOMPILED_HEADERS
  "Precompile the MLIR headers once and reuse them in every library" ON)
if(TK_PRECOMPILED_HEADERS)
  add_library(TkMLIRHeaders OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/TkMLIRHeaders.cpp)
  set_target_properties(TkMLIRHeaders PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_link_libraries(TkMLIRHeaders PRIVATE MLIR LLVM)
  target_precompile_headers(TkMLIRHeaders PRIVATE
    ${PROJECT_SOURCE_DIR}/cmake/pch/TkMLIRHeaders.h)
endif()

# tk_reuse_mlir_headers(target): `target` compiles with the precompiled MLIR
# headers: worth it where its files include MLIR (a file that does not pays
# about a second to load the header).
function(tk_reuse_mlir_headers target)
  if(NOT TK_PRECOMPILED_HEADERS)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    # CMake's position independence for executables is -fPIE; the header's
    # is -fPIC, which a PIE may contain.
    target_compile_options(${target} PRIVATE -fPIC)
  else()
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  endif()
  target_precompile_headers(${target} REUSE_FROM TkMLIRHeaders)
endfunction()

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
  if("MLIR" IN_LIST ARG_LINK)
    tk_reuse_mlir_headers(${name})
  endif()
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

# The rocm and xe columns start an external validator for every cell
# (llvm-objdump, ocloc, iga64): ctest checks one shard of each, every N-th
# cell from a stated one, and `make conformance` (tools/conformance.sh) the
# whole columns. 1 checks the whole columns in ctest too.
set(TK_VALIDATED_COLUMN_SHARDS 3 CACHE STRING
    "Check 1 of N shards of the rocm and xe conformance columns in ctest")

# tk_conformance_shard_args(out column index): tk-conformance's --shard for
# shard `index` of a validated column (none when it is checked whole).
function(tk_conformance_shard_args out column index)
  if(TK_VALIDATED_COLUMN_SHARDS GREATER 1)
    math(EXPR shard "${index} % ${TK_VALIDATED_COLUMN_SHARDS}")
    set(${out} --shard ${shard}/${TK_VALIDATED_COLUMN_SHARDS} PARENT_SCOPE)
  else()
    set(${out} "" PARENT_SCOPE)
  endif()
endfunction()

# tk_add_driver_plugin(<backend> LINK <driver libraries>...): the backend's
# plugin.cpp built again as libtk_driver_<backend>.so, with
# TK_PLUGIN_DRIVER_ONLY: the same ABI table without compile and validate
# (PluginSupport.h's TK_IF_COMPILER), linking the driver and no compiler.
# libtk_runtime.so, which loads packages, opens these.
function(tk_add_driver_plugin backend)
  cmake_parse_arguments(ARG "" "" "LINK" ${ARGN})
  add_library(tk_driver_${backend} SHARED plugin.cpp)
  target_compile_definitions(tk_driver_${backend} PRIVATE TK_PLUGIN_DRIVER_ONLY)
  target_include_directories(tk_driver_${backend} PRIVATE
    ${PROJECT_SOURCE_DIR}/backends ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(tk_driver_${backend} PRIVATE ${ARG_LINK} TkCAPIHeaders)
  tk_link_no_undefined(tk_driver_${backend})
  tk_set_warnings(tk_driver_${backend})
endfunction()
