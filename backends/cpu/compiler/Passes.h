//===- Passes.h - CPU backend passes ----------------------------*- C++ -*-===//
//
// Declares the CPU backend's passes and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_CPU_COMPILER_PASSES_H_
#define TK_BACKENDS_CPU_COMPILER_PASSES_H_

#include "compiler/DeviceTarget.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tk::cpu {

/// Suffix of the launch entry point the driver looks up.
inline constexpr llvm::StringLiteral kLaunchSuffix = kLaunchSymbolSuffix;

#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"

/// Registers the CPU backend's passes (for tk-opt).
inline void registerCpuPasses() { registerTkCpuPasses(); }

} // namespace tk::cpu

#endif // TK_BACKENDS_CPU_COMPILER_PASSES_H_
