//===- DumpSeedKernels.cpp - print the seed kernels built in C++ ----------===//
//
// `tk-seed-kernels [--names] [kernel...]` prints the module each seed kernel
// builder produces (all kernels when none is named). `--names` prints the
// SSA names the builder attached with Tile::named, which is how the `.tk`
// twins were written.
//
//===----------------------------------------------------------------------===//

#include "SeedKernels.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

int main(int argc, char **argv) {
  bool names = false;
  llvm::SmallVector<llvm::StringRef> wanted;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "--names")
      names = true;
    else if (arg == "-h" || arg == "--help") {
      llvm::outs() << "usage: tk-seed-kernels [--names] [kernel...]\n";
      return 0;
    } else
      wanted.push_back(arg);
  }
  for (llvm::StringRef name : wanted)
    if (llvm::none_of(tk::seeds::getSeedKernels(),
                      [&](const tk::seeds::SeedKernel &kernel) {
                        return kernel.name == name;
                      })) {
      llvm::errs() << "tk-seed-kernels: no seed kernel named '" << name
                   << "'\n";
      return 1;
    }

  mlir::MLIRContext ctx;
  mlir::OpPrintingFlags flags;
  if (names)
    flags.printNameLocAsPrefix();
  for (const tk::seeds::SeedKernel &kernel : tk::seeds::getSeedKernels()) {
    if (!wanted.empty() && !llvm::is_contained(wanted, kernel.name))
      continue;
    std::string error;
    auto module = kernel.build(&ctx, &error);
    if (mlir::failed(module)) {
      llvm::errs() << "tk-seed-kernels: " << kernel.name << ": " << error
                   << "\n";
      return 1;
    }
    (*module)->print(llvm::outs(), flags);
  }
  return 0;
}
