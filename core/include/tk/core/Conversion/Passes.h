//===- Passes.h - tk conversion passes --------------------------*- C++ -*-===//
//
// Declares the conversions out of the tk dialect and their registration.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_PASSES_H_
#define TK_CORE_CONVERSION_PASSES_H_

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tk {

/// Name of the unit attribute that marks a `func.func` lowered from a
/// `tk.func`; its last six arguments are the grid position (i32 program ids
/// x, y, z, then i32 numbers of programs x, y, z).
inline constexpr llvm::StringLiteral kLoweredKernelAttrName = "tk_kernel";

/// Number of trailing grid arguments of a lowered kernel.
inline constexpr unsigned kNumGridArgs = 6;

#define GEN_PASS_DECL
#include "tk/core/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tk/core/Conversion/Passes.h.inc"

/// Registers every conversion pass of tk with the global registry (for
/// `tk-opt` and textual pipelines).
inline void registerConversionPasses() { registerTkConversionPasses(); }

} // namespace tk

#endif // TK_CORE_CONVERSION_PASSES_H_
