//===- SeedKernels.cpp - the seed kernels, written with the builder -------===//
//
// Each function follows its Triton original line by line. C++ does not fix
// the order in which the operands of one expression are evaluated, so every
// statement below builds ops from at most one operand: the op order, and so
// the text in the `.tk` twins, is the same with every compiler.
//
//===----------------------------------------------------------------------===//

#include "SeedKernels.h"

#include "tk/ir/Builder.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace tk;
using namespace tk::seeds;

/// Finishes `k`, copying the builder's error into `error` on failure.
static KernelModule finish(KernelBuilder &k, std::string *error) {
  KernelModule module = k.finish();
  if (failed(module) && error)
    *error = k.error().str();
  return module;
}

//===----------------------------------------------------------------------===//
// vector_add
//===----------------------------------------------------------------------===//

KernelModule tk::seeds::buildVectorAdd(MLIRContext *ctx, Type dtype,
                                       int64_t block, std::string *error) {
  KernelBuilder k(ctx, "vector_add");
  Tile x = k.argPtr("x", dtype, /*divisibility=*/16);
  Tile y = k.argPtr("y", dtype, 16);
  Tile out = k.argPtr("out", dtype, 16);
  Tile n = k.argI32("n");
  int64_t BLOCK = k.constexpr_("BLOCK", block);

  // offsets = pid * BLOCK + arange(0, BLOCK); mask = offsets < n
  Tile pid = k.programId(0).named("pid");
  Tile start = (pid * BLOCK).named("start");
  Tile range = k.arange(0, BLOCK).named("range");
  Tile offs = (start + range).named("offs");
  Tile mask = (offs < n).named("mask");
  Tile xv = k.load(x + offs, mask).named("xv");
  Tile yv = k.load(y + offs, mask).named("yv");
  Tile sum = (xv + yv).named("sum");
  k.store(out + offs, sum, mask);
  return finish(k, error);
}

//===----------------------------------------------------------------------===//
// matrix_copy
//===----------------------------------------------------------------------===//

KernelModule tk::seeds::buildMatrixCopy(MLIRContext *ctx, Type dtype,
                                        int64_t block, std::string *error) {
  KernelBuilder k(ctx, "matrix_copy");
  Tile src = k.argPtr("src", dtype, 16);
  Tile dst = k.argPtr("dst", dtype, 16);
  Tile rows = k.argI32("rows");
  Tile cols = k.argI32("cols");
  Tile strideRow = k.argI32("stride_row");
  Tile strideCol = k.argI32("stride_col");
  int64_t BLOCK = k.constexpr_("BLOCK", block);

  Tile pidM = k.programId(0).named("pid_m");
  Tile pidN = k.programId(1).named("pid_n");
  Tile startM = (pidM * BLOCK).named("start_m");
  Tile rangeM = k.arange(0, BLOCK).named("range_m");
  Tile offsM = (startM + rangeM).named("offs_m");
  Tile startN = (pidN * BLOCK).named("start_n");
  Tile rangeN = k.arange(0, BLOCK).named("range_n");
  Tile offsN = (startN + rangeN).named("offs_n");

  // offs_m[:, None] and offs_n[None, :] broadcast to a BLOCK x BLOCK tile.
  Tile rowIdx = offsM.col().named("row_idx");
  Tile colIdx = offsN.row().named("col_idx");
  Tile rowMask = (rowIdx < rows).named("row_mask");
  Tile colMask = (colIdx < cols).named("col_mask");
  Tile mask = (rowMask & colMask).named("mask");
  Tile rowOffs = (rowIdx * strideRow).named("row_offs");
  Tile colOffs = (colIdx * strideCol).named("col_offs");
  Tile offs = (rowOffs + colOffs).named("offs");
  Tile data = k.load(src + offs, mask).named("data");
  k.store(dst + offs, data, mask);
  return finish(k, error);
}

//===----------------------------------------------------------------------===//
// matrix_transpose
//===----------------------------------------------------------------------===//

KernelModule tk::seeds::buildMatrixTranspose(MLIRContext *ctx, Type dtype,
                                             int64_t block,
                                             std::string *error) {
  KernelBuilder k(ctx, "matrix_transpose");
  Tile input = k.argPtr("input", dtype, 16);
  Tile output = k.argPtr("output", dtype, 16);
  Tile rows = k.argI32("rows");
  Tile cols = k.argI32("cols");
  Tile strideIr = k.argI32("stride_ir");
  Tile strideIc = k.argI32("stride_ic");
  Tile strideOr = k.argI32("stride_or");
  Tile strideOc = k.argI32("stride_oc");
  int64_t BLOCK = k.constexpr_("BLOCK", block);

  Tile pidR = k.programId(0).named("pid_r");
  Tile pidC = k.programId(1).named("pid_c");
  Tile startR = (pidR * BLOCK).named("start_r");
  Tile rangeR = k.arange(0, BLOCK).named("range_r");
  Tile offsR = (startR + rangeR).named("offs_r");
  Tile startC = (pidC * BLOCK).named("start_c");
  Tile rangeC = k.arange(0, BLOCK).named("range_c");
  Tile offsC = (startC + rangeC).named("offs_c");

  // Read the [rows_, cols_] tile of the input...
  Tile inRow = offsR.col().named("in_row");
  Tile inCol = offsC.row().named("in_col");
  Tile inRowOffs = (inRow * strideIr).named("in_row_offs");
  Tile inColOffs = (inCol * strideIc).named("in_col_offs");
  Tile inOffs = (inRowOffs + inColOffs).named("in_offs");
  Tile inRowMask = (inRow < rows).named("in_row_mask");
  Tile inColMask = (inCol < cols).named("in_col_mask");
  Tile inMask = (inRowMask & inColMask).named("in_mask");
  Tile tile = k.load(input + inOffs, inMask).named("tile");

  // ...and write its transpose to the [cols_, rows_] tile of the output.
  Tile outRow = offsC.col().named("out_row");
  Tile outCol = offsR.row().named("out_col");
  Tile outRowOffs = (outRow * strideOr).named("out_row_offs");
  Tile outColOffs = (outCol * strideOc).named("out_col_offs");
  Tile outOffs = (outRowOffs + outColOffs).named("out_offs");
  Tile outRowMask = (outRow < cols).named("out_row_mask");
  Tile outColMask = (outCol < rows).named("out_col_mask");
  Tile outMask = (outRowMask & outColMask).named("out_mask");
  Tile transposed = tile.trans().named("transposed");
  k.store(output + outOffs, transposed, outMask);
  return finish(k, error);
}

//===----------------------------------------------------------------------===//
// softmax, persistent_softmax
//===----------------------------------------------------------------------===//

/// The body both softmax kernels share: softmax of row `row`, computed in
/// f32. `cols` is arange(0, BLOCK) and `mask` is `cols < n_cols`.
static void softmaxRow(KernelBuilder &k, Type dtype, Tile input, Tile output,
                       Tile inStride, Tile outStride, Tile row, Tile cols,
                       Tile mask) {
  Tile inOffset = (row * inStride).named("in_offset");
  Tile rowPtr = (input + inOffset).named("row_ptr");
  // Masked lanes read -inf: they never win the max and exp() makes them 0.
  Tile x = k.load(rowPtr + cols, mask, -std::numeric_limits<double>::infinity())
               .named("x");
  Tile xf = x.to(k.f32());
  Tile rowMax = k.max(xf, 0).named("row_max");
  Tile shifted = (xf - rowMax).named("shifted");
  // Approximate exp and divide, as Triton's tl.exp and `/` are: 2 ulp on
  // values that are summed and scaled, and a quarter of the instructions.
  Tile num = k.fastExp(shifted).named("num");
  Tile den = k.sum(num, 0).named("den");
  Tile y = k.fastDiv(num, den).named("y");
  Tile yOut = y.to(dtype);
  Tile outOffset = (row * outStride).named("out_offset");
  Tile outPtr = (output + outOffset).named("out_ptr");
  k.store(outPtr + cols, yOut, mask);
}

KernelModule tk::seeds::buildSoftmax(MLIRContext *ctx, Type dtype,
                                     int64_t block, std::string *error,
                                     unsigned rowStrideDivisibility) {
  KernelBuilder k(ctx, "softmax");
  Tile input = k.argPtr("input", dtype, 16);
  Tile output = k.argPtr("output", dtype, 16);
  Tile inStride = k.argI32("input_row_stride", rowStrideDivisibility);
  Tile outStride = k.argI32("output_row_stride", rowStrideDivisibility);
  Tile nCols = k.argI32("n_cols");
  int64_t BLOCK = k.constexpr_("BLOCK", block);

  Tile row = k.programId(0).named("row");
  Tile cols = k.arange(0, BLOCK).named("cols");
  Tile mask = (cols < nCols).named("mask");
  softmaxRow(k, dtype, input, output, inStride, outStride, row, cols, mask);
  return finish(k, error);
}

KernelModule tk::seeds::buildPersistentSoftmax(MLIRContext *ctx, Type dtype,
                                               int64_t block,
                                               std::string *error) {
  KernelBuilder k(ctx, "persistent_softmax");
  Tile input = k.argPtr("input", dtype, 16);
  Tile output = k.argPtr("output", dtype, 16);
  Tile inStride = k.argI32("input_row_stride");
  Tile outStride = k.argI32("output_row_stride");
  Tile nRows = k.argI32("n_rows");
  Tile nCols = k.argI32("n_cols");
  int64_t BLOCK = k.constexpr_("BLOCK", block);

  // for row in range(program_id(0), n_rows, num_programs(0))
  Tile rowStart = k.programId(0).named("row_start");
  Tile rowStep = k.numPrograms(0).named("row_step");
  // The columns and their mask do not depend on the row.
  Tile cols = k.arange(0, BLOCK).named("cols");
  Tile mask = (cols < nCols).named("mask");
  k.forLoop(rowStart, nRows, rowStep, [&](Tile row) {
    softmaxRow(k, dtype, input, output, inStride, outStride, row.named("row"),
               cols, mask);
  });
  return finish(k, error);
}

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

KernelModule tk::seeds::buildMatmul(MLIRContext *ctx, Type inputType,
                                    Type outputType, const MatmulConfig &config,
                                    std::string *error) {
  KernelBuilder k(ctx, "matmul");
  Tile a = k.argPtr("a", inputType, 16);
  Tile b = k.argPtr("b", inputType, 16);
  Tile c = k.argPtr("c", outputType, 16);
  Tile M = k.argI32("M", config.sizeDivisibility);
  Tile N = k.argI32("N", config.sizeDivisibility);
  Tile K = k.argI32("K", config.sizeDivisibility);
  Tile strideAm = k.argI32("stride_am", config.rowStrideDivisibility);
  Tile strideAk = k.argI32("stride_ak");
  Tile strideBk =
      k.argI32("stride_bk", config.kMajorB ? 0 : config.rowStrideDivisibility);
  Tile strideBn =
      k.argI32("stride_bn", config.kMajorB ? config.rowStrideDivisibility : 0);
  Tile strideCm = k.argI32("stride_cm", config.rowStrideDivisibility);
  Tile strideCn = k.argI32("stride_cn");
  Tile kPerSplit, strideCs;
  if (config.splitK) {
    kPerSplit = k.argI32("k_per_split", 16);
    strideCs = k.argI32("stride_cs");
  }
  Tile scaleA, scaleB;
  if (config.scales == MatmulScales::PerTensor) {
    scaleA = k.argF32("scale_a");
    scaleB = k.argF32("scale_b");
  } else if (config.scales == MatmulScales::PerRow) {
    scaleA = k.argPtr("scale_a", k.f32(), 16);
    scaleB = k.argPtr("scale_b", k.f32(), 16);
  }
  int64_t BLOCK_M = k.constexpr_("BLOCK_M", config.blockM);
  int64_t BLOCK_N = k.constexpr_("BLOCK_N", config.blockN);
  int64_t BLOCK_K = k.constexpr_("BLOCK_K", config.blockK);
  int64_t GROUP_SIZE_M = k.constexpr_("GROUP_SIZE_M", config.groupSizeM);

  // Grouped ordering: GROUP_SIZE_M rows of program tiles are walked column
  // by column, so consecutive programs share tiles of `a` and `b` in L2.
  Tile pid = k.programId(0).named("pid");
  Tile numPidM = k.cdiv(M, BLOCK_M).named("num_pid_m");
  Tile numPidN = k.cdiv(N, BLOCK_N).named("num_pid_n");
  Tile numPidInGroup = (numPidN * GROUP_SIZE_M).named("num_pid_in_group");
  Tile groupId = (pid / numPidInGroup).named("group_id");
  Tile firstPidM = (groupId * GROUP_SIZE_M).named("first_pid_m");
  Tile pidsLeftM = (numPidM - firstPidM).named("pids_left_m");
  Tile groupSizeM = k.minimum(pidsLeftM, GROUP_SIZE_M).named("group_size_m");
  Tile pidInGroup = (pid % numPidInGroup).named("pid_in_group");
  Tile pidMInGroup = (pidInGroup % groupSizeM).named("pid_m_in_group");
  Tile pidM = (firstPidM + pidMInGroup).named("pid_m");
  Tile pidN = (pidInGroup / groupSizeM).named("pid_n");

  Tile startM = (pidM * BLOCK_M).named("start_m");
  Tile rangeM = k.arange(0, BLOCK_M).named("range_m");
  Tile offsM = (startM + rangeM).named("offs_m");
  Tile startN = (pidN * BLOCK_N).named("start_n");
  Tile rangeN = k.arange(0, BLOCK_N).named("range_n");
  Tile offsN = (startN + rangeN).named("offs_n");
  Tile offsK = k.arange(0, BLOCK_K).named("offs_k");

  // a_ptrs = a + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
  Tile mIdx = offsM.col().named("m_idx");
  Tile kRow = offsK.row().named("k_row");
  Tile kCol = offsK.col().named("k_col");
  Tile nIdx = offsN.row().named("n_idx");
  Tile aRowOffs = (mIdx * strideAm).named("a_row_offs");
  Tile aColOffs = (kRow * strideAk).named("a_col_offs");
  Tile aOffs = (aRowOffs + aColOffs).named("a_offs");
  Tile aPtrs = (a + aOffs).named("a_ptrs");
  Tile bRowOffs = (kCol * strideBk).named("b_row_offs");
  Tile bColOffs = (nIdx * strideBn).named("b_col_offs");
  Tile bOffs = (bRowOffs + bColOffs).named("b_offs");
  Tile bPtrs = (b + bOffs).named("b_ptrs");
  Tile mMask = (mIdx < M).named("m_mask");
  Tile nMask = (nIdx < N).named("n_mask");
  Tile aStep = (strideAk * BLOCK_K).named("a_step");
  Tile bStep = (strideBk * BLOCK_K).named("b_step");
  // Split-K: this program's rows of K start at k_start; K counts the rows
  // left from there, at most k_per_split.
  if (config.splitK) {
    Tile kStart = (k.programId(1) * kPerSplit).named("k_start");
    aPtrs = (aPtrs + kStart * strideAk).named("a_split_ptrs");
    bPtrs = (bPtrs + kStart * strideBk).named("b_split_ptrs");
    K = k.minimum(K - kStart, kPerSplit).named("k_split");
    c = (c + k.programId(1) * strideCs).named("c_split");
  }

  DotOptions dotOptions;
  dotOptions.inputPrecision = config.inputPrecision;
  Type accType = inputType.isInteger(8) ? k.i32() : k.f32();
  Tile acc = k.zeros({BLOCK_M, BLOCK_N}, accType).named("acc");
  Tile kTiles = k.cdiv(K, BLOCK_K).named("k_tiles");
  // One trip: the product of a BLOCK_K slice of a and b; lanes past K (with
  // `kMasked`) read 0 and add nothing to the dot.
  auto trip = [&](bool kMasked) {
    return [&, kMasked](Tile kt, ArrayRef<Tile> carried) -> SmallVector<Tile> {
      kt.named("kt");
      carried[0].named("acc_iter");
      carried[1].named("a_iter");
      carried[2].named("b_iter");
      Tile aMask = mMask, bMask = nMask, kLeft;
      if (kMasked) {
        Tile kDone = (kt * BLOCK_K).named("k_done");
        kLeft = (K - kDone).named("k_left");
        Tile aKMask = (kRow < kLeft).named("a_k_mask");
        aMask = (mMask & aKMask).named("a_mask");
      }
      Tile aTile = k.load(carried[1], aMask, 0).named("a_tile");
      if (kMasked) {
        Tile bKMask = (kCol < kLeft).named("b_k_mask");
        bMask = (bKMask & nMask).named("b_mask");
      }
      Tile bTile = k.load(carried[2], bMask, 0).named("b_tile");
      Tile accNext =
          k.dot(aTile, bTile, carried[0], dotOptions).named("acc_next");
      Tile aNext = (carried[1] + aStep).named("a_next");
      Tile bNext = (carried[2] + bStep).named("b_next");
      return {accNext, aNext, bNext};
    };
  };
  SmallVector<Tile> results;
  if (config.peelK) {
    // The whole BLOCK_K slices first, without K masks; the slice K cuts
    // (if any) in a second loop of at most one trip. That loop's pointers
    // start afresh from a and b rather than from the first loop's walk:
    // its masked loads take another layout, in which arange-based pointers
    // are computed directly where a walk's would cross threads.
    Tile wholeTiles = (K / BLOCK_K).named("k_whole_tiles");
    results = k.forLoop(0, wholeTiles, 1, {acc, aPtrs, bPtrs}, trip(false));
    if (!results.empty()) {
      Tile aCut = (aPtrs + wholeTiles * aStep).named("a_cut_ptrs");
      Tile bCut = (bPtrs + wholeTiles * bStep).named("b_cut_ptrs");
      results = k.forLoop(wholeTiles, kTiles, 1, {results[0], aCut, bCut},
                          trip(true));
    }
  } else {
    results = k.forLoop(0, kTiles, 1, {acc, aPtrs, bPtrs}, trip(true));
  }
  if (results.empty())
    return finish(k, error);

  Tile product = results[0];
  if (config.scales == MatmulScales::PerTensor) {
    product = (product * (scaleA * scaleB).named("scale")).named("scaled");
  } else if (config.scales == MatmulScales::PerRow) {
    // Rows and columns past M and N read 1: their products are not stored.
    Tile rowScale = k.load(scaleA + mIdx, mMask, 1.0).named("row_scale");
    Tile colScale = k.load(scaleB + nIdx, nMask, 1.0).named("col_scale");
    product = (product * (rowScale * colScale).named("scale")).named("scaled");
  }
  Tile cTile = product.to(outputType).named("c_tile");
  Tile cRowOffs = (mIdx * strideCm).named("c_row_offs");
  Tile cColOffs = (nIdx * strideCn).named("c_col_offs");
  Tile cOffs = (cRowOffs + cColOffs).named("c_offs");
  Tile cMask = (mMask & nMask).named("c_mask");
  k.store(c + cOffs, cTile, cMask);
  return finish(k, error);
}

KernelModule tk::seeds::buildSplitKSum(MLIRContext *ctx, Type outputType,
                                       int64_t splits, int64_t block,
                                       std::string *error) {
  KernelBuilder k(ctx, "split_k_sum");
  Tile partial = k.argPtr("partial", k.f32(), 16);
  Tile out = k.argPtr("out", outputType, 16);
  Tile n = k.argI32("n");
  Tile strideS = k.argI32("stride_s", 16);
  int64_t BLOCK = k.constexpr_("BLOCK", block);
  k.constexpr_("SPLITS", splits);
  Tile offs = (k.programId(0) * BLOCK + k.arange(0, BLOCK)).named("offs");
  Tile mask = (offs < n).named("mask");
  // The planes in order, one element-wise chain: every load is a vector.
  Tile sum = k.load(partial + offs, mask, 0);
  for (int64_t s = 1; s < splits; ++s)
    sum = sum + k.load(partial + strideS * s + offs, mask, 0);
  k.store(out + offs, sum.to(outputType), mask);
  return finish(k, error);
}

//===----------------------------------------------------------------------===//
// layernorm
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Fused attention forward (FlashAttention-2)
//===----------------------------------------------------------------------===//

// o = softmax(q k^T * scale) v for each head, one program per block of
// BLOCK_M query rows: an scf.for walks BLOCK_N-row blocks of k and v, keeps
// the running row maximum m and denominator l (online softmax) and rescales
// the f32 accumulator by exp(m_old - m_new) between the two dots, as
// FlashAttention-2 does. p is cast to the input type before the second dot
// (f16/bf16 inputs multiply on the tensor cores of GPUs). Sequence lengths
// and head dims that do not fill a block are masked; the keys only in a
// second loop over the last partial block, so the main loop has no mask.
KernelModule tk::seeds::buildAttention(MLIRContext *ctx, Type type,
                                       const AttentionConfig &config,
                                       std::string *error) {
  KernelBuilder k(ctx, "attention_fwd");
  // A product and the sum it feeds round once (the accumulator's and l's
  // rescales, the row max's scaling), as Triton's attention compiles.
  k.setFloatContraction(true);
  Tile q = k.argPtr("q", type, 16), kk = k.argPtr("k", type, 16);
  Tile v = k.argPtr("v", type, 16), o = k.argPtr("o", type, 16);
  Tile N = k.argI32("N"), D = k.argI32("D", config.headDimDivisibility);
  Tile scale = k.argF32("sm_scale");
  int64_t BM = k.constexpr_("BLOCK_M", config.blockM);
  int64_t BN = k.constexpr_("BLOCK_N", config.blockN);
  int64_t BD = k.constexpr_("BLOCK_D", config.blockD);
  const double inf = std::numeric_limits<double>::infinity();

  // [heads, N, D], contiguous.
  Tile pidM = k.programId(0), head = k.programId(1);
  Tile headSize = N * D;
  Tile base = head * headSize;
  Tile startM = pidM * BM;
  int64_t groups = config.rowGroups;
  if (groups < 1 || BM % groups != 0) {
    if (error)
      *error = "attention: rowGroups " + std::to_string(groups) +
               " does not divide blockM " + std::to_string(BM);
    return failure();
  }
  int64_t groupRows = BM / groups;
  Tile dIdx = k.arange(0, BD).row();
  Tile dMask = dIdx < D;
  // Each group's rows: their offsets into q and o, and their q tile.
  struct RowGroup {
    Tile offsM, qOffs, qMask, qTile;
  };
  llvm::SmallVector<RowGroup> rowGroups;
  for (int64_t g = 0; g < groups; ++g) {
    Tile groupStart = g ? startM + g * groupRows : startM;
    Tile offsM = groupStart + k.arange(0, groupRows);
    Tile mIdx = offsM.col();
    Tile mRowOff = mIdx * D;
    Tile qOffs = mRowOff + dIdx;
    Tile mValid = mIdx < N;
    Tile qMask = mValid & dMask;
    Tile qBase = q + base;
    rowGroups.push_back({offsM, qOffs, qMask, k.load(qBase + qOffs, qMask, 0)});
  }
  Tile kBase = kk + base;
  Tile vBase = v + base;

  // The scores in base 2: exp(x) = exp2(x * log2(e)), with log2(e) folded
  // into the scale once, so that each score costs one ex2 (FlashAttention's
  // and Triton's tutorial's form). m and l are kept in that base.
  Tile scaleLog2 = scale * 1.4426950408889634;
  // Carried per group: m, l, acc.
  llvm::SmallVector<Tile> init;
  for (int64_t g = 0; g < groups; ++g) {
    init.push_back(k.full({groupRows}, -inf, k.f32()));
    init.push_back(k.zeros({groupRows}, k.f32()));
    init.push_back(k.zeros({groupRows, BD}, k.f32()));
  }
  // One trip over the keys [startN, startN + BN). Only a trip past the last
  // full block (`masked`) has keys past N to hide, and only one on the
  // diagonal of a causal kernel (`diagonal`, also `masked`) keys past some
  // of its rows.
  auto trip = [&](Tile startN, llvm::ArrayRef<Tile> carried, bool masked,
                  bool diagonal) -> llvm::SmallVector<Tile> {
    Tile offsN = startN + k.arange(0, BN);
    Tile nIdx = offsN.col();
    Tile nRowOff = nIdx * D;
    Tile kvOffs = nRowOff + dIdx;
    Tile kvMask = masked ? (nIdx < N) & dMask : dMask;
    Tile kTile = k.load(kBase + kvOffs, kvMask, 0); // [BN, BD]
    Tile vTile = k.load(vBase + kvOffs, kvMask, 0);
    Tile kT = k.trans(kTile);
    // s = q k^T of every group first, keys past N at -inf.
    llvm::SmallVector<Tile> scores;
    for (const RowGroup &group : rowGroups) {
      Tile s = k.dot(group.qTile, kT);
      if (masked) {
        Tile visible = offsN.row() < N;
        if (diagonal)
          visible = visible & (offsN.row() <= group.offsM.col());
        s = k.where(visible, s, -inf);
      }
      scores.push_back(s);
    }
    llvm::SmallVector<Tile> next;
    for (int64_t g = 0; g < groups; ++g) {
      Tile m = carried[3 * g], l = carried[3 * g + 1], acc = carried[3 * g + 2],
           s = scores[g];
      // Online softmax: new running max (of the scaled scores: the scaled
      // max, as sm_scale > 0), rescale of l and acc. Each score is scaled
      // and shifted by one fma.
      Tile blockMax = k.max(s, 1) * scaleLog2;
      Tile mNew = k.maximum(m, blockMax);
      Tile p = k.fastExp2(k.fma(s, scaleLog2, (-mNew).col()));
      Tile mDiff = m - mNew;
      Tile alpha = k.fastExp2(mDiff);
      Tile lScaled = l * alpha;
      Tile lNew = lScaled + k.sum(p, 1);
      Tile accScaled = acc * alpha.col();
      Tile accNew = k.dot(p.to(type), vTile, accScaled);
      next.append({mNew, lNew, accNew});
    }
    return next;
  };
  // FlashAttention-3's order (config.overlapProducts): a trip issues its
  // scores s = q k^T, then the previous trip's p v, then runs its softmax
  // on s while a unit that runs dots asynchronously computes p v; only the
  // rescale of the accumulator waits for it. The loop carries p, zeros
  // before the first trip, whose p v reads no values (they are masked to
  // zeros too: 0 * v would be NaN where v holds an infinity).
  auto valuesBefore = [&](Tile startN) {
    Tile prevIdx = (startN - BN + k.arange(0, BN)).col();
    return k.load(vBase + (prevIdx * D + dIdx), (prevIdx >= 0) & dMask, 0);
  };
  auto overlappedTrip =
      [&](Tile startN,
          llvm::ArrayRef<Tile> carried) -> llvm::SmallVector<Tile> {
    Tile nIdx = (startN + k.arange(0, BN)).col();
    Tile kTile = k.load(kBase + (nIdx * D + dIdx), dMask, 0);
    Tile kT = k.trans(kTile);
    llvm::SmallVector<Tile> scores;
    for (const RowGroup &group : rowGroups)
      scores.push_back(k.dot(group.qTile, kT));
    Tile vBefore = valuesBefore(startN);
    llvm::SmallVector<Tile> withBefore;
    for (int64_t g = 0; g < groups; ++g)
      withBefore.push_back(
          k.dot(carried[4 * g + 3], vBefore, carried[4 * g + 2]));
    llvm::SmallVector<Tile> next;
    for (int64_t g = 0; g < groups; ++g) {
      Tile m = carried[4 * g], l = carried[4 * g + 1], s = scores[g];
      Tile mNew = k.maximum(m, k.max(s, 1) * scaleLog2);
      Tile p = k.fastExp2(k.fma(s, scaleLog2, (-mNew).col()));
      Tile alpha = k.fastExp2(m - mNew);
      Tile lNew = l * alpha + k.sum(p, 1);
      next.append({mNew, lNew, withBefore[g] * alpha.col(), p.to(type)});
    }
    return next;
  };
  // The full blocks, then the last partial one (no trip when BN divides N).
  // Causal: the full blocks before the block's first row, then those up to
  // its last row (or N), masked. Every row sees key 0 on its first trip, so
  // no row's running max stays -inf past it.
  Tile nFull = (N / BN) * BN;
  Tile unmaskedEnd = nFull, end = N;
  if (config.causal) {
    unmaskedEnd = k.minimum((startM / BN) * BN, nFull);
    end = k.minimum(startM + BM, N);
  }
  llvm::SmallVector<Tile> state;
  if (config.overlapProducts) {
    llvm::SmallVector<Tile> overlapped;
    for (int64_t g = 0; g < groups; ++g)
      overlapped.append({init[3 * g], init[3 * g + 1], init[3 * g + 2],
                         k.zeros({groupRows, BN}, type)});
    overlapped = k.forLoop(0, unmaskedEnd, BN, overlapped,
                           [&](Tile startN, llvm::ArrayRef<Tile> carried) {
                             return overlappedTrip(startN, carried);
                           });
    if (overlapped.empty())
      return finish(k, error);
    // The last trip's p v (zeros where no trip ran).
    Tile vLast = valuesBefore(unmaskedEnd);
    for (int64_t g = 0; g < groups; ++g)
      state.append(
          {overlapped[4 * g], overlapped[4 * g + 1],
           k.dot(overlapped[4 * g + 3], vLast, overlapped[4 * g + 2])});
  } else {
    state = k.forLoop(0, unmaskedEnd, BN, init,
                      [&](Tile startN, llvm::ArrayRef<Tile> carried) {
                        return trip(startN, carried, /*masked=*/false,
                                    /*diagonal=*/false);
                      });
    if (state.empty())
      return finish(k, error);
  }
  state = k.forLoop(unmaskedEnd, end, BN, state,
                    [&](Tile startN, llvm::ArrayRef<Tile> carried) {
                      return trip(startN, carried, /*masked=*/true,
                                  /*diagonal=*/config.causal);
                    });
  if (state.empty())
    return finish(k, error);
  for (int64_t g = 0; g < groups; ++g) {
    Tile out = state[3 * g + 2] / state[3 * g + 1].col();
    Tile oBase = o + base;
    k.store(oBase + rowGroups[g].qOffs, out.to(type), rowGroups[g].qMask);
  }
  return finish(k, error);
}

KernelModule tk::seeds::buildLayerNorm(MLIRContext *ctx, Type dtype,
                                       int64_t block, std::string *error) {
  KernelBuilder k(ctx, "layernorm");
  Tile x = k.argPtr("x", dtype, 16);
  Tile y = k.argPtr("y", dtype, 16);
  Tile weight = k.argPtr("weight", dtype, 16);
  Tile bias = k.argPtr("bias", dtype, 16);
  Tile rowStride = k.argI32("row_stride");
  Tile nCols = k.argI32("n_cols");
  Tile eps = k.argF32("eps");
  int64_t BLOCK = k.constexpr_("BLOCK", block);

  Tile row = k.programId(0).named("row");
  Tile rowOffset = (row * rowStride).named("row_offset");
  Tile xRow = (x + rowOffset).named("x_row");
  Tile yRow = (y + rowOffset).named("y_row");
  Tile cols = k.arange(0, BLOCK).named("cols");
  Tile mask = (cols < nCols).named("mask");

  // Statistics in f32; masked lanes read 0 and are zeroed again after the
  // mean is subtracted, so they add nothing to the variance.
  Tile xv = k.load(xRow + cols, mask, 0).named("xv");
  Tile xf = xv.to(k.f32());
  Tile n = k.cast(nCols, k.f32()).named("n");
  Tile total = k.sum(xf, 0).named("total");
  Tile mean = (total / n).named("mean");
  Tile diff = (xf - mean).named("diff");
  Tile xc = k.where(mask, diff, 0.0).named("xc");
  Tile sq = (xc * xc).named("sq");
  Tile sqSum = k.sum(sq, 0).named("sq_sum");
  Tile var = (sqSum / n).named("var");
  Tile varEps = (var + eps).named("var_eps");
  Tile rstd = k.rsqrt(varEps).named("rstd");

  Tile w = k.load(weight + cols, mask).named("w");
  Tile wf = w.to(k.f32());
  Tile bv = k.load(bias + cols, mask).named("bv");
  Tile bf = bv.to(k.f32());
  Tile xhat = (xc * rstd).named("xhat");
  Tile scaled = (xhat * wf).named("scaled");
  Tile yv = (scaled + bf).named("yv");
  Tile yOut = yv.to(dtype);
  k.store(yRow + cols, yOut, mask);
  return finish(k, error);
}

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

ArrayRef<SeedKernel> tk::seeds::getSeedKernels() {
  // The variants the `.tk` files hold: f32 throughout, f16 inputs and output
  // for matmul.
  static const SeedKernel kernels[] = {
      {"vector_add", "vector_add.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildVectorAdd(ctx, Float32Type::get(ctx), 1024, error);
       }},
      {"matrix_copy", "matrix_copy.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildMatrixCopy(ctx, Float32Type::get(ctx), 64, error);
       }},
      {"matrix_transpose", "matrix_transpose.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildMatrixTranspose(ctx, Float32Type::get(ctx), 32, error);
       }},
      {"softmax", "softmax.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildSoftmax(ctx, Float32Type::get(ctx), 1024, error);
       }},
      {"persistent_softmax", "persistent_softmax.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildPersistentSoftmax(ctx, Float32Type::get(ctx), 1024, error);
       }},
      {"matmul", "matmul.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildMatmul(ctx, Float16Type::get(ctx), Float16Type::get(ctx),
                            MatmulConfig(), error);
       }},
      {"layernorm", "layernorm.tk",
       [](MLIRContext *ctx, std::string *error) {
         return buildLayerNorm(ctx, Float32Type::get(ctx), 1024, error);
       }},
  };
  return kernels;
}
