//===- Atomics.h - tk's atomics as LLVM's -----------------------*- C++ -*-===//
//
// The LLVM dialect's names for tk's atomic kinds and memory semantics, and
// its compare-and-swap, which the GPU lowering
// (tk-convert-registers-to-simt) and the CPU's (tk-convert-to-loops) emit.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_ATOMICS_H_
#define TK_CORE_CONVERSION_ATOMICS_H_

#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace tk {

/// LLVM's atomic ordering of a tk memory semantic.
inline mlir::LLVM::AtomicOrdering toOrdering(tk::MemSemantic sem) {
  using mlir::LLVM::AtomicOrdering;
  switch (sem) {
  case tk::MemSemantic::Relaxed:
    return AtomicOrdering::monotonic;
  case tk::MemSemantic::Acquire:
    return AtomicOrdering::acquire;
  case tk::MemSemantic::Release:
    return AtomicOrdering::release;
  case tk::MemSemantic::AcqRel:
    return AtomicOrdering::acq_rel;
  }
  return AtomicOrdering::seq_cst;
}

/// The strongest ordering allowed for the failure case of a cmpxchg (LLVM IR
/// forbids release orderings there).
inline mlir::LLVM::AtomicOrdering
failureOrdering(mlir::LLVM::AtomicOrdering success) {
  using mlir::LLVM::AtomicOrdering;
  switch (success) {
  case AtomicOrdering::acq_rel:
  case AtomicOrdering::acquire:
    return AtomicOrdering::acquire;
  case AtomicOrdering::seq_cst:
    return AtomicOrdering::seq_cst;
  default:
    return AtomicOrdering::monotonic;
  }
}

/// LLVM's read-modify-write operation of `kind` on elements that are
/// floats (`isFloat`) or integers.
inline mlir::LLVM::AtomicBinOp toAtomicBinOp(tk::AtomicRMWKind kind,
                                             bool isFloat) {
  using mlir::LLVM::AtomicBinOp;
  switch (kind) {
  case tk::AtomicRMWKind::Add:
    return AtomicBinOp::add;
  case tk::AtomicRMWKind::FAdd:
    return AtomicBinOp::fadd;
  case tk::AtomicRMWKind::Max:
    return isFloat ? AtomicBinOp::fmax : AtomicBinOp::max;
  case tk::AtomicRMWKind::Min:
    return isFloat ? AtomicBinOp::fmin : AtomicBinOp::min;
  case tk::AtomicRMWKind::UMax:
    return AtomicBinOp::umax;
  case tk::AtomicRMWKind::UMin:
    return AtomicBinOp::umin;
  case tk::AtomicRMWKind::And:
    return AtomicBinOp::_and;
  case tk::AtomicRMWKind::Or:
    return AtomicBinOp::_or;
  case tk::AtomicRMWKind::Xor:
    return AtomicBinOp::_xor;
  case tk::AtomicRMWKind::Xchg:
    return AtomicBinOp::xchg;
  }
  return AtomicBinOp::xchg;
}

/// A compare-and-swap of the `element` at `pointer`: `value` where it held
/// `compare`; returns what it held. cmpxchg takes integers, so floats
/// compare their bits.
inline mlir::Value emitCompareExchange(mlir::OpBuilder &b, mlir::Location loc,
                                       mlir::Value pointer, mlir::Value compare,
                                       mlir::Value value, mlir::Type element,
                                       mlir::LLVM::AtomicOrdering ordering) {
  bool isFloat = mlir::isa<mlir::FloatType>(element);
  mlir::Type bits = b.getIntegerType(element.getIntOrFloatBitWidth());
  if (isFloat) {
    compare = mlir::arith::BitcastOp::create(b, loc, bits, compare);
    value = mlir::arith::BitcastOp::create(b, loc, bits, value);
  }
  mlir::Value pair = mlir::LLVM::AtomicCmpXchgOp::create(
      b, loc, pointer, compare, value, ordering, failureOrdering(ordering));
  mlir::Value old = mlir::LLVM::ExtractValueOp::create(
      b, loc, pair, llvm::ArrayRef<int64_t>{0});
  if (isFloat)
    old = mlir::arith::BitcastOp::create(b, loc, element, old);
  return old;
}

} // namespace tk

#endif // TK_CORE_CONVERSION_ATOMICS_H_
