//===- BlockPointer.cpp - make_block_ptr, advance, boundary checks --------===//
//
// Each program walks one band of 32 rows of a strided R x C matrix in 32x32
// windows (tk.make_block_ptr, tk.advance inside an scf.for), loads with a
// boundary check on both axes and zero padding, and stores 2x+1 through a
// second block pointer with a boundary check. The output's row stride leaves
// a gap that must keep its fill: a store outside the shape would land there.
//
//===----------------------------------------------------------------------===//

#include "Cases.h"

using namespace tk;
using namespace tk::conformance;

void tk::conformance::addBlockPointerCases(
    std::vector<ConformanceCase> &cases) {
  ConformanceCase c;
  c.name = "block_ptr";
  c.summary = "block-pointer load/store with boundary checks and advance";
  c.dtypes = {DType::F32, DType::F16, DType::BF16, DType::I32};
  c.shapes = {shape({1, 1}), shape({45, 70}), shape({64, 64}),
              shape({100, 33})};
  c.build = TK_KERNEL_BUILDER([](mlir::MLIRContext *ctx, DType dtype,
                                 const Shape &, std::string *error) {
    KernelBuilder k(ctx, "block_ptr");
    mlir::Type type = toMLIR(ctx, dtype);
    Tile x = k.argPtr("x", type, 16), y = k.argPtr("y", type, 16);
    Tile R = k.argI32("R"), C = k.argI32("C");
    Tile xStride = k.argI32("x_stride"), yStride = k.argI32("y_stride");
    int64_t B = k.constexpr_("BLOCK", 32);
    Tile row0 = k.programId(0) * B;
    Tile R64 = R.to(k.i64()), C64 = C.to(k.i64());
    Tile xs = xStride.to(k.i64()), ys = yStride.to(k.i64());
    Tile in = k.makeBlockPtr(x, {R64, C64}, {xs, 1}, {row0, 0}, {B, B}, {1, 0});
    Tile out =
        k.makeBlockPtr(y, {R64, C64}, {ys, 1}, {row0, 0}, {B, B}, {1, 0});
    Tile steps = k.cdiv(C, B);
    k.forLoop(0, steps, 1, {in, out},
              [&](Tile, llvm::ArrayRef<Tile> p) -> llvm::SmallVector<Tile> {
                Tile v = k.loadBlock(p[0], {0, 1}, PaddingOption::Zero);
                Tile twice = v * 2;
                k.storeBlock(p[1], twice + 1, {0, 1});
                return {k.advance(p[0], {0, B}), k.advance(p[1], {0, B})};
              });
    return finishKernel(k, error);
  });
  c.run = [](CellRun &r) {
    int64_t R = r.dim(0), C = r.dim(1);
    int64_t xStride = C + 5, yStride = C + 2;
    DType t = r.dtype();
    std::vector<double> x = r.random(R * xStride, -50, 50, t, 91);
    tk_arg dx = r.input(t, x);
    tk_arg dy = r.output(t, R * yStride, -7);
    r.launch({cdiv(R, 32), 1, 1},
             {dx, dy, tk_arg_i32(int32_t(R)), tk_arg_i32(int32_t(C)),
              tk_arg_i32(int32_t(xStride)), tk_arg_i32(int32_t(yStride))});
    std::vector<double> want(R * yStride, -7);
    for (int64_t i = 0; i < R; ++i)
      for (int64_t j = 0; j < C; ++j)
        want[i * yStride + j] =
            roundTo(t, roundTo(t, x[i * xStride + j] * 2) + 1);
    r.check("y", r.read(dy), want, {});
  };
  cases.push_back(std::move(c));
}
