//===- Debug.cpp - tk.assert and tk.print on a thread's registers ---------===//
//
// The threads check and print the elements they hold, each element once, by
// its first holder (as stores write them). A failed check prints its
// message with the program id, as the CPU's does. A print gives
// each element of a tile a line of its own, with the program id and the
// element's coordinates (Triton's device_print), and its scalars one line
// from the program's first thread; a GPU's printf orders lines by thread,
// not by element.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Conversion/ScalarOps.h"
#include "tk/ir/Dialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace tk::simt {

namespace {

/// The program id, x, y and z.
SmallVector<Value> programId(OpBuilder &b, Location loc) {
  SmallVector<Value> ids;
  for (gpu::Dimension dim :
       {gpu::Dimension::x, gpu::Dimension::y, gpu::Dimension::z})
    ids.push_back(arith::IndexCastUIOp::create(
        b, loc, b.getI32Type(), gpu::BlockIdOp::create(b, loc, dim)));
  return ids;
}

struct AssertLowering : OpConversionPattern<tk::AssertOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tk::AssertOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    Type type = op.getCondition().getType();
    if (isa<RankedTensorType>(type) && !getLinearLayout(type))
      return failure();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    auto [holder, copies] = getWriters(rewriter, loc, type, thread);
    std::string format =
        "tk assert failed in program (%d, %d, %d): " + op.getMessage().str() +
        "\n";
    Value on = arith::ConstantIntOp::create(rewriter, loc, 1, 1);
    ValueRange conditions = adaptor.getCondition();
    for (auto [reg, ok] : llvm::enumerate(conditions)) {
      if (int32_t(reg) & copies)
        continue;
      Value failedCheck = arith::XOrIOp::create(rewriter, loc, ok, on);
      if (isa<RankedTensorType>(type))
        failedCheck = arith::AndIOp::create(rewriter, loc, holder, failedCheck);
      guarded(rewriter, loc, failedCheck, [&](OpBuilder &b) {
        gpu::PrintfOp::create(b, loc, format, programId(b, loc));
      });
    }
    rewriter.eraseOp(op);
    return success();
  }
};

struct PrintLowering : OpConversionPattern<tk::PrintOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(tk::PrintOp op, OneToNOpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto converter = getTypeConverter<RegisterTypeConverter>();
    for (Value arg : op.getArgs())
      if (isa<RankedTensorType>(arg.getType()) &&
          !getLinearLayout(arg.getType()))
        return failure();
    ThreadPosition thread = ThreadPosition::get(rewriter, loc, *converter);
    std::string prefix = op.getPrefix().str();
    // The scalars: one line from the program's first thread.
    std::string line = "pid (%d, %d, %d) " + prefix;
    bool anyScalar = op.getArgs().empty();
    for (Value arg : op.getArgs())
      anyScalar |= !isa<RankedTensorType>(arg.getType());
    if (anyScalar) {
      Value first =
          getWriters(rewriter, loc, rewriter.getI32Type(), thread).holder;
      guarded(rewriter, loc, first, [&](OpBuilder &b) {
        SmallVector<Value> args = programId(b, loc);
        std::string format = line;
        for (auto [arg, values] :
             llvm::zip_equal(op.getArgs(), adaptor.getArgs())) {
          if (isa<RankedTensorType>(arg.getType()))
            continue;
          std::string spec;
          args.push_back(promoteForPrintf(b, loc, values.front(), spec));
          format += " " + spec;
        }
        gpu::PrintfOp::create(b, loc, format + "\n", args);
      });
    }
    // Each element of each tile: a line from its first holder.
    for (auto [arg, values] :
         llvm::zip_equal(op.getArgs(), adaptor.getArgs())) {
      auto tile = dyn_cast<RankedTensorType>(arg.getType());
      if (!tile)
        continue;
      const LinearLayout &layout = *getLinearLayout(tile);
      auto [holder, copies] = getWriters(rewriter, loc, tile, thread);
      ThreadCoordinates coordinates(rewriter, loc, layout, thread);
      std::string index = "idx (";
      for (int64_t d = 0; d < tile.getRank(); ++d)
        index += d ? ", %d" : "%d";
      index += ") ";
      for (auto [reg, value] : llvm::enumerate(values)) {
        if (int32_t(reg) & copies)
          continue;
        guarded(rewriter, loc, holder, [&](OpBuilder &b) {
          SmallVector<Value> args = programId(b, loc);
          for (int64_t d = 0; d < tile.getRank(); ++d)
            args.push_back(coordinates.get(b, loc, int32_t(reg), unsigned(d)));
          std::string spec;
          args.push_back(promoteForPrintf(b, loc, value, spec));
          gpu::PrintfOp::create(
              b, loc, "pid (%d, %d, %d) " + index + prefix + spec + "\n", args);
        });
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void populateDebugPatterns(RegisterTypeConverter &converter,
                           RewritePatternSet &patterns) {
  patterns.add<AssertLowering, PrintLowering>(converter, patterns.getContext());
}

} // namespace tk::simt
