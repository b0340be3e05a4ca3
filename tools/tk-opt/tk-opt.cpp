//===- tk-opt.cpp - parse, verify, transform and print tk IR --------------===//
//
// The mlir-opt of tk: every tk pass and the upstream passes a pipeline needs
// are registered, so any stage of the lowering can be run and printed alone.
//
//===----------------------------------------------------------------------===//

#include "tk/core/Conversion/Passes.h"
#include "tk/core/Passes.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/thread.h"

#include "RegisterTargetPresets.h"

int main(int argc, char **argv) {
  // Every backend's TargetInfo presets, for the passes' target= options.
  tk::registerAllTargetPresets();
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  // Upstream cleanups (canonicalize, cse, ...) so pipelines can mix them in.
  mlir::registerTransformsPasses();
  // Layouts and the warp and intrinsic levels (tk-assign-layouts, ...).
  tk::registerWarpDialect(registry);
  tk::registerTransformsPasses();
  // Conversions out of tk (tk-convert-to-loops), and the dialects of their
  // output, which passes after them (tk-share-workgroup-memory) read.
  tk::registerConversionPasses();
  registry.insert<mlir::func::FuncDialect, mlir::memref::MemRefDialect,
                  mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect>();
  // The parser, verifier and passes recurse once per level of nesting: on a
  // thread of 1 GiB of stack (reserved, not touched), IR nested thousands
  // deep is slow, not a segfault. (tk_kernel_create refuses such text.)
  mlir::LogicalResult result = mlir::failure();
  llvm::thread worker(std::optional<unsigned>(1u << 30), [&] {
    result = mlir::MlirOptMain(argc, argv, "tk optimizer driver\n", registry);
  });
  worker.join();
  return mlir::asMainReturnCode(result);
}
