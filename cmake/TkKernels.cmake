# tk_add_kernels(<name> SOURCES <file>[:<entry>]... TARGETS <backend>[:<arch>]...
#                [NUM_WARPS <n>] [NUM_STAGES <s>] [RUNTIME <library>])
#
# Compiles kernels ahead of time, at build time: tk-compile --package builds
# one package of every SOURCES kernel (a .tk or Triton .ttir file, and the
# kernel in it; without `:<entry>`, its only kernel) for every TARGETS entry
# (`cpu`, `cuda:sm_90a`, `rocm:gfx942`, `xe:pvc`, `vulkan:sg16`; a backend
# alone compiles for its device 0, or its default without one), and a C
# header that embeds it with typed launchers:
#
#   tk_status <entry>_create(tk_device device, tk_kernel *out_kernel);
#   tk_status <entry>_launch(tk_kernel kernel, tk_stream stream, tk_grid grid,
#                            <the kernel's arguments, typed>);
#
# <name> becomes an INTERFACE library: link it, then #include "<name>.h".
# The package is also written as <name>.tkpkg beside the header, in
# ${CMAKE_CURRENT_BINARY_DIR}/<name>/.
#
# Uses TK_COMPILE_COMMAND (tk-compile) and TK_KERNELS_RUNTIME (the library
# the launchers call, tk::tk), which tkConfig.cmake sets, as tk's own build
# does. RUNTIME names another: tk::runtime (libtk_runtime.so, no compiler in
# the program; its cpu binaries must be an x86-64 level, cpu:x86-64-v2).
function(tk_add_kernels name)
  cmake_parse_arguments(ARG "" "NUM_WARPS;NUM_STAGES;RUNTIME" "SOURCES;TARGETS"
                        ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tk_add_kernels(${name}): unknown arguments "
                        "${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES OR NOT ARG_TARGETS)
    message(FATAL_ERROR "tk_add_kernels(${name}): give SOURCES and TARGETS")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "tk_add_kernels(${name}): the name names a C array "
                        "and a header; use a C identifier")
  endif()
  if(NOT TK_COMPILE_COMMAND)
    message(FATAL_ERROR "tk_add_kernels: TK_COMPILE_COMMAND is not set "
                        "(find_package(tk) sets it)")
  endif()
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/${name})
  set(package ${dir}/${name}.tkpkg)
  set(header ${dir}/${name}.h)
  set(kernels)
  set(files)
  foreach(source IN LISTS ARG_SOURCES)
    # file:entry, the colon after the last slash.
    if(source MATCHES "^(.*[^/]):([A-Za-z_][A-Za-z0-9_.]*)$")
      set(file ${CMAKE_MATCH_1})
      set(entry ":${CMAKE_MATCH_2}")
    else()
      set(file ${source})
      set(entry "")
    endif()
    get_filename_component(file ${file} ABSOLUTE
                           BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND files ${file})
    list(APPEND kernels ${file}${entry})
  endforeach()
  set(options)
  foreach(target IN LISTS ARG_TARGETS)
    list(APPEND options --target ${target})
  endforeach()
  if(ARG_NUM_WARPS)
    list(APPEND options --num-warps ${ARG_NUM_WARPS})
  endif()
  if(ARG_NUM_STAGES)
    list(APPEND options --num-stages ${ARG_NUM_STAGES})
  endif()
  add_custom_command(
    OUTPUT ${package} ${header}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${TK_COMPILE_COMMAND} --package ${package} --header ${header}
            --name ${name} ${options} ${kernels}
    DEPENDS ${files} ${TK_COMPILE_DEPENDS}
    COMMENT "tk-compile: ${name} for ${ARG_TARGETS}"
    VERBATIM)
  add_custom_target(${name}_package DEPENDS ${package} ${header})
  add_library(${name} INTERFACE)
  target_include_directories(${name} INTERFACE ${dir})
  if(ARG_RUNTIME)
    target_link_libraries(${name} INTERFACE ${ARG_RUNTIME})
  else()
    target_link_libraries(${name} INTERFACE ${TK_KERNELS_RUNTIME})
  endif()
  add_dependencies(${name} ${name}_package)
endfunction()
