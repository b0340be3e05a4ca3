//===- HostKernelLowering.h - one kernel to serial loop nests ---*- C++ -*-===//
//
// The CPU form of KernelLowering, for tk-convert-to-loops (TkToLoops.cpp):
// one host thread runs a program, so every nest is serial, buffers live on
// the stack, and reductions, scans and dots are the loop nests of
// HostNests.cpp, in orders LLVM vectorises without reassociating floats.
// Private to this folder.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_TKTOLOOPS_HOSTKERNELLOWERING_H_
#define TK_CORE_CONVERSION_TKTOLOOPS_HOSTKERNELLOWERING_H_

#include "KernelLowering.h"

namespace mlir::tk_to_loops {

/// Lowers one tk.func to the loop nests one host thread runs.
class HostKernelLowering final : public KernelLowering {
public:
  HostKernelLowering(tk::FuncOp source, func::FuncOp target,
                     const Config &config)
      : KernelLowering(source, target, config) {}

private:
  /// From the arguments the launcher appends to the kernel's.
  void bindGridPosition(unsigned numArgs) override;
  /// Partial accumulators along the innermost axis (kReductionLanes), then
  /// a tree.
  LogicalResult lowerReduce(tk::ReduceOp op) override;
  LogicalResult lowerScan(tk::ScanOp op) override;
  LogicalResult lowerDot(tk::DotOp op) override;
  /// Refused: the CPU pipeline drops layouts (tk-drop-layouts).
  LogicalResult lowerConvertLayout(tk::warp::ConvertLayoutOp convert) override;
  /// None: the thread visits every element.
  FailureOr<std::optional<StoreLayout>>
  threadLayoutOfAccess(Operation *) override {
    return std::optional<StoreLayout>();
  }
  /// Yes: one loop nest that and-reduces the mask, which LLVM vectorises.
  bool walksMasksToVersion() const override { return true; }
  /// An alloca at function entry, so that loops do not grow the stack.
  Value newBuffer(ArrayRef<int64_t> shape, Type elementType,
                  int64_t alignment) override;
  LogicalResult visitIndices(ArrayRef<int64_t> shape,
                             function_ref<LogicalResult(ArrayRef<Value>)> body,
                             bool contiguous, function_ref<void()> afterRun,
                             int64_t maxRun, bool publish) override;
  /// memref.copy.
  LogicalResult copyBuffer(Value from, Value to, ArrayRef<int64_t> shape,
                           Type elementType, int64_t maxRun,
                           bool publish) override;
  LogicalResult onFirstThread(function_ref<LogicalResult()> body) override {
    return body();
  }
  FailureOr<Value> once(Type,
                        function_ref<FailureOr<Value>()> compute) override {
    return compute();
  }
  void barrier() override {}
  /// A call to the C library's printf.
  void emitPrintf(StringRef format, ValueRange args) override;
  /// None: one thread has no copies to overlap (tk-assign-thread-layouts
  /// places no ring on the CPU, and reading refuses one).
  FailureOr<std::unique_ptr<OperandPipeline>>
  pipelineOperands(const LoopCarry &) override {
    return std::unique_ptr<OperandPipeline>();
  }

  // Nothing in registers: one thread keeps every tile in a buffer on the
  // stack (tk-assign-thread-layouts places no register layout on the CPU).
  const OwnedTile *ownedRead(Value) override { return nullptr; }
  void settleProducts(Value) override {}
  FailureOr<Value> elementInRegisters(Value, ArrayRef<Value>) override {
    return Value();
  }
  bool isHeldResult(Value) const override { return false; }
  LogicalResult keepInRegisters(Value value) override;
  LogicalResult keepInRows(Value value) override;
  LogicalResult visitAsOwners(const OwnedTile *,
                              function_ref<LogicalResult()> body) override {
    return body();
  }
  FailureOr<bool>
  storeFromHeldRegisters(tk::StoreOp, const std::optional<StoreLayout> &,
                         function_ref<LogicalResult(ArrayRef<Value>)>,
                         function_ref<void()>) override {
    return false;
  }
  FailureOr<std::optional<SmallVector<Value>>>
  carryInRegisters(LoopCarry &, unsigned, Value) override {
    return std::optional<SmallVector<Value>>();
  }
  LogicalResult bindCarriedRegisters(const LoopCarry &loop, unsigned i, Value,
                                     ValueRange, bool) override;
  FailureOr<SmallVector<Value>>
  yieldCarriedRegisters(const LoopCarry &loop, unsigned i, Value) override;
};

} // namespace mlir::tk_to_loops

#endif // TK_CORE_CONVERSION_TKTOLOOPS_HOSTKERNELLOWERING_H_
