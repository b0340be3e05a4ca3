# Finds Debian's packaged LLVM/MLIR 22 and sets up TableGen.
#
# The packaged MLIR ships both static archives and the shared libMLIR.so; tk
# links only the shared libraries (MLIR and LLVM) — mixing the two registers
# command-line options twice and aborts at start-up.
set(TK_LLVM_ROOT "/usr/lib/llvm-22" CACHE PATH "Root of the LLVM/MLIR 22 installation")
find_package(MLIR REQUIRED CONFIG HINTS "${TK_LLVM_ROOT}/lib/cmake/mlir")
find_package(LLVM REQUIRED CONFIG HINTS "${TK_LLVM_ROOT}/lib/cmake/llvm")
message(STATUS "tk: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
# LLVM_DEFINITIONS is one string ("-D_GNU_SOURCE -D..."); it must be split.
separate_arguments(TK_LLVM_DEFINITIONS NATIVE_COMMAND "${LLVM_DEFINITIONS}")
add_definitions(${TK_LLVM_DEFINITIONS})
if(NOT LLVM_ENABLE_RTTI)
  set(CMAKE_CXX_FLAGS "${CMAKE_CXX_FLAGS} -fno-rtti")
endif()

# The tools lit tests use (FileCheck, not, count) come with llvm-22-tools.
set(TK_LLVM_TOOLS_DIR "${TK_LLVM_ROOT}/bin")
