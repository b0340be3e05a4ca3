# What `cmake --install` and `cpack -G DEB` put in a prefix, and how programs
# outside the tree find it:
#
#   bin/tk-info, tk-compile, tk-opt, tk-conformance
#   include/tk/tk.h, tk_plugin.h                 the C API and the plugin ABI
#   <libdir>/libtk.so                            the runtime
#   <libdir>/libtk_runtime.so                    the runtime without a compiler:
#                                                packages only, no LLVM/MLIR
#   <libdir>/tk/libtk_driver_<name>.so           the plugins it opens
#   <libdir>/tk/libtk_backend_<name>.so          the plugins, found from
#                                                libtk.so's folder
#   <libdir>/tk/tk-bytecode-check                reads callers' bytecode apart
#   include/tk/ir/*.h, *.h.inc, <libdir>/libTkIR.a
#                                                the C++ builder (tk::builder)
#   <libdir>/cmake/tk/tkConfig.cmake             find_package(tk CONFIG): tk::tk,
#                                                COMPONENTS builder: tk::builder,
#                                                tk_add_kernels (TkKernels.cmake)
#   <libdir>/pkgconfig/tk.pc                     pkg-config --cflags --libs tk
#   share/tk/kernels/*.tk, share/tk/examples/    the example kernels and hello.c
#
# Users of the C API see it only, so tk::tk is an imported library over tk.h
# and libtk.so: nothing of MLIR, LLVM or spdlog leaks into their build. The
# C++ builder (tk/ir/Builder.h) makes MLIR modules, so its users build with
# MLIR 22: tk::builder (find_package(tk COMPONENTS builder)) is libTkIR.a
# with the dialect's headers, generated ones included, over MLIR's targets.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TK_INSTALL_PLUGIN_DIR ${CMAKE_INSTALL_LIBDIR}/tk)
set(TK_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tk)

# Installed binaries find libtk.so through $ORIGIN and LLVM/MLIR 22 where
# they were linked from (/usr/lib/llvm-22/lib: INSTALL_RPATH_USE_LINK_PATH),
# so the prefix can move.
file(RELATIVE_PATH tk_bin_to_lib "/${CMAKE_INSTALL_BINDIR}"
     "/${CMAKE_INSTALL_LIBDIR}")
file(RELATIVE_PATH tk_plugin_to_lib "/${TK_INSTALL_PLUGIN_DIR}"
     "/${CMAKE_INSTALL_LIBDIR}")

set(tk_installed_tools tk-info tk-compile tk-opt tk-conformance)
foreach(tool ${tk_installed_tools})
  set_target_properties(${tool} PROPERTIES
    INSTALL_RPATH "$ORIGIN/${tk_bin_to_lib}" INSTALL_RPATH_USE_LINK_PATH ON)
endforeach()
install(TARGETS ${tk_installed_tools}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set_target_properties(tk PROPERTIES
  INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tk LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/capi/include/tk
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")

# The runtime without a compiler (tk::runtime, tk-runtime.pc) and the
# driver-only plugins it opens, beside the full ones.
set_target_properties(tk_runtime PROPERTIES
  INSTALL_RPATH "$ORIGIN" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tk_runtime LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})

foreach(backend cpu cuda rocm vulkan xe)
  foreach(kind backend driver)
    if(TARGET tk_${kind}_${backend})
      set_target_properties(tk_${kind}_${backend} PROPERTIES
        INSTALL_RPATH "$ORIGIN/${tk_plugin_to_lib}"
        INSTALL_RPATH_USE_LINK_PATH ON)
      install(TARGETS tk_${kind}_${backend}
              LIBRARY DESTINATION ${TK_INSTALL_PLUGIN_DIR})
    endif()
  endforeach()
endforeach()

# With the plugins: libtk finds it in <libdir>/tk (BytecodeCheck.cpp).
set_target_properties(tk-bytecode-check PROPERTIES
  INSTALL_RPATH "$ORIGIN/${tk_plugin_to_lib}" INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS tk-bytecode-check RUNTIME DESTINATION ${TK_INSTALL_PLUGIN_DIR})

install(TARGETS TkIR ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/ir/include/tk/ir
                  ${PROJECT_BINARY_DIR}/ir/include/tk/ir
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tk
        FILES_MATCHING PATTERN "*.h" PATTERN "*.h.inc"
        PATTERN "CMakeFiles" EXCLUDE)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/kernels/
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tk/kernels
        FILES_MATCHING PATTERN "*.tk")
install(FILES ${PROJECT_SOURCE_DIR}/examples/c/hello.c
        DESTINATION ${CMAKE_INSTALL_DATADIR}/tk/examples)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tkConfig.cmake.in
  ${PROJECT_BINARY_DIR}/tkConfig.cmake
  INSTALL_DESTINATION ${TK_INSTALL_CMAKE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR TK_INSTALL_PLUGIN_DIR
            CMAKE_INSTALL_DATADIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tkConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tkConfig.cmake
              ${PROJECT_BINARY_DIR}/tkConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TkKernels.cmake
        DESTINATION ${TK_INSTALL_CMAKE_DIR})

# pkg-config: the prefix is found from the .pc file's own folder, so the
# same file serves any --prefix and the Debian package.
file(RELATIVE_PATH tk_pc_to_prefix "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" tk_pc_to_prefix "${tk_pc_to_prefix}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/tk.pc.in
               ${PROJECT_BINARY_DIR}/tk.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/tk-runtime.pc.in
               ${PROJECT_BINARY_DIR}/tk-runtime.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tk.pc ${PROJECT_BINARY_DIR}/tk-runtime.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# cpack -G DEB: the same install under /usr. dpkg-shlibdeps declares the
# libraries the binaries link (LLVM/MLIR 22, spdlog, fmt, libstdc++); the
# plugins open the vendors' drivers with dlopen, so those are suggestions.
# Debian's Tk toolkit owns the package name "tk", and its tk-dev the files
# /usr/lib/<triple>/libtk.so and pkgconfig/tk.pc that this package also
# installs: the two cannot be installed together, and the package says so.
set(CPACK_PACKAGE_NAME tk-tile-kernels)
set(CPACK_DEBIAN_PACKAGE_CONFLICTS "tk-dev")
set(CPACK_PACKAGE_VENDOR "tk developers")
set(CPACK_PACKAGE_CONTACT "tk developers <tk@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "portable tile-kernel runtime: one tile IR on CUDA, ROCm, Xe, Vulkan and CPU")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# As Debian's own packages: stripped binaries, xz (8.5 MB becomes 3 MB,
# which keeps the GPU machine's kit under its 64 MiB).
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
# libLLVM is linked through /usr/lib/llvm-22/lib, a link llvm-22-dev owns,
# so dpkg-shlibdeps cannot name the package of the library itself.
# The cpu backend links each kernel into a shared object with ld.lld and
# compiler-rt's builtins.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "libllvm22 (>= 1:${LLVM_PACKAGE_VERSION}), lld-22, libclang-rt-22-dev")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "libvulkan1, mesa-vulkan-drivers, libze1, ocloc, spirv-tools")
set(CPACK_GENERATOR DEB)
include(CPack)
