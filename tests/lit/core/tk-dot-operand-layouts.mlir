// RUN: tk-opt %s --tk-assign-linear-layouts="target=cuda-sm80 num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,REG,MMA,SM80
// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-cdna3 num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,REG,MMA,CDNA3
// RUN: tk-opt %s --tk-assign-linear-layouts="target=intel-pvc num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,REG,MMA,PVC
// RUN: tk-opt %s --tk-assign-linear-layouts="target=vulkan num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,REG,FMA
// RUN: tk-opt %s --tk-assign-linear-layouts="target=vulkan-lavapipe num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,SCRATCH
//
// tk-dot-operand-layouts after tk-assign-linear-layouts: a 64x64x32 f16 dot
// on 4 warps (a 2 x 2 grid over the product) takes a and b in its
// intrinsic's operand fragments, tiled as the accumulator is.
//
// sm80, mma.sync m16n8k16. a's fragment (PTX ISA, m16n8k16 A): registers
// [0, 1] (a0/a1), [8, 0] (a2), [0, 8] (a4); lanes [0, 2], [0, 4]
// (threadID_in_group), [1, 0], [2, 0], [4, 0] (groupID). The product's
// extra registers along rows ([32, 0]) are a's too, those along columns are
// not; k repeats once past the fragment's 16 ([0, 16]). The warp 8 columns
// over holds the same a (a zero basis), the one 16 rows down the next rows.
// b's the other way round.
// SM80-DAG: #[[A:linear[0-9]*]] = #tkw.linear<shape = [64, 32], register = {{\[\[}}0, 1], [8, 0], [0, 8], [32, 0], [0, 16]], lane = {{\[\[}}0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = {{\[\[}}0, 0], [16, 0]]>
// SM80-DAG: #[[B:linear[0-9]*]] = #tkw.linear<shape = [32, 64], register = {{\[\[}}1, 0], [8, 0], [0, 16], [0, 32], [16, 0]], lane = {{\[\[}}2, 0], [4, 0], [0, 1], [0, 2], [0, 4]], warp = {{\[\[}}0, 8], [0, 0]]>
// CDNA3, mfma 32x32x8 (wave64): lane l holds row l % 32 of a, k 4 (l / 32)
// to 4 (l / 32) + 3 in its registers; k repeats past 8.
// CDNA3-DAG: #[[A:linear[0-9]*]] = #tkw.linear<shape = [64, 32], register = {{\[\[}}0, 1], [0, 2], [0, 8], [0, 16]], lane = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [16, 0], [0, 4]], warp = {{\[\[}}0, 0], [32, 0]]>
// CDNA3-DAG: #[[B:linear[0-9]*]] = #tkw.linear<shape = [32, 64], register = {{\[\[}}1, 0], [2, 0], [8, 0], [16, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8], [0, 16], [4, 0]], warp = {{\[\[}}0, 32], [0, 0]]>
// PVC, dpas 8x16x16 (subgroup of 16): a's rows in registers, k across
// the lanes.
// PVC-DAG: #[[A:linear[0-9]*]] = #tkw.linear<shape = [64, 32], register = {{\[\[}}1, 0], [2, 0], [4, 0], [16, 0], [32, 0], [0, 16]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8]], warp = {{\[\[}}0, 0], [8, 0]]>
// PVC-DAG: #[[B:linear[0-9]*]] = #tkw.linear<shape = [32, 64], register = {{\[\[}}1, 0], [2, 0], [4, 0], [8, 0], [0, 32], [16, 0]], lane = {{\[\[}}0, 1], [0, 2], [0, 4], [0, 8]], warp = {{\[\[}}0, 16], [0, 0]]>
// Vulkan (subgroups of 32) has no matrix unit: each thread multiplies its
// own block of the product, and holds the rows of a and columns of b it
// needs whole along k (getFmaOperandLayout). On lavapipe (subgroups of 8)
// those blocks are 16 rows by 8 columns, and a's rows, b's columns and the
// accumulator would take 512 32-bit registers a thread, over
// kFmaDotRegisters: the operands stay as loaded, and the dot reads them
// from its workgroup memory a k step at a time.
// CHECK-LABEL: tk.func @dot_bias
// SCRATCH: %[[AL:.+]] = tk.load
// SCRATCH-NOT: tkw.convert_layout
// SCRATCH: %[[BL:.+]] = tk.load
// SCRATCH-NOT: tkw.convert_layout
// SCRATCH: scf.for
// SCRATCH-NEXT: tk.dot %[[AL]], %[[BL]], {{.*}} : tensor<64x32xf16,
// MMA: %[[AV:.+]] = tkw.convert_layout {{.*}} -> tensor<64x32xf16, #[[A]]>
// MMA: %[[BV:.+]] = tkw.convert_layout {{.*}} -> tensor<32x64xf16, #[[B]]>
// FMA: %[[AV:.+]] = tkw.convert_layout {{.*}} -> tensor<64x32xf16,
// FMA: %[[BV:.+]] = tkw.convert_layout {{.*}} -> tensor<32x64xf16,
// REG: scf.for
// SM80-NEXT: tk.dot %[[AV]], %[[BV]], {{.*}} {tkw.intrinsic = "mma.m16n8k16.f32.f16"}
// CDNA3-NEXT: tk.dot %[[AV]], %[[BV]], {{.*}} {tkw.intrinsic = "mfma.f32.32x32x8f16.transposed"}
// PVC-NEXT: tk.dot %[[AV]], %[[BV]], {{.*}} {tkw.intrinsic = "dpas.8x16x16.f32.f16"}
// FMA-NEXT: tk.dot %[[AV]], %[[BV]], {{.*}} : tensor<64x32xf16,
tk.func @dot_bias(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %bias: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %r64 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r32 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %rows = tk.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %kcols = tk.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %krows = tk.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %cols = tk.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %c64k = arith.constant dense<64> : tensor<32x1xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %ar = arith.muli %rows, %c32 : tensor<64x1xi32>
  %arb = tk.broadcast %ar : tensor<64x1xi32> -> tensor<64x32xi32>
  %acb = tk.broadcast %kcols : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arb, %acb : tensor<64x32xi32>
  %pa0 = tk.splat %a : !tk.ptr<f16> -> tensor<64x32x!tk.ptr<f16>>
  %pa = tk.addptr %pa0, %aoff : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
  %av = tk.load %pa : tensor<64x32x!tk.ptr<f16>>
  %br = arith.muli %krows, %c64k : tensor<32x1xi32>
  %brb = tk.broadcast %br : tensor<32x1xi32> -> tensor<32x64xi32>
  %bcb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %brb, %bcb : tensor<32x64xi32>
  %pb0 = tk.splat %b : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>>
  %pb = tk.addptr %pb0, %boff : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %bv = tk.load %pb : tensor<32x64x!tk.ptr<f16>>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero) -> (tensor<64x64xf32>) : i32 {
    %d = tk.dot %av, %bv, %s : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %pbias0 = tk.splat %bias : !tk.ptr<f32> -> tensor<1x64x!tk.ptr<f32>>
  %pbias = tk.addptr %pbias0, %cols : tensor<1x64x!tk.ptr<f32>>, tensor<1x64xi32>
  %biasv = tk.load %pbias : tensor<1x64x!tk.ptr<f32>>
  %biasb = tk.broadcast %biasv : tensor<1x64xf32> -> tensor<64x64xf32>
  %sum = arith.addf %acc, %biasb : tensor<64x64xf32>
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pc0 = tk.splat %c : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %pc, %sum : tensor<64x64x!tk.ptr<f32>>
  tk.return
}

// An operand the loop around its dot does not change converts once, before
// the loop (attention's q); two loops reading it share the conversion. The
// operand the loop loads stays as loaded where the dot has a matrix
// intrinsic: moving it into fragments crosses threads, so the dot reads
// its fragments from workgroup memory one k step at a time. Without an
// intrinsic it converts in the loop.
// On lavapipe both stay as loaded (above).
// CHECK-LABEL: tk.func @loop_invariant_a
// CHECK: %[[AV:.+]] = tk.load
// REG-NEXT: %[[AC:.+]] = tkw.convert_layout %[[AV]]
// CHECK-NOT: tkw.convert_layout %[[AV]]
// CHECK: scf.for
// CHECK: %[[BV:.+]] = tk.load
// MMA-NEXT: tk.dot %[[AC]], %[[BV]]
// FMA: %[[BC:.+]] = tkw.convert_layout %[[BV]]
// FMA-NEXT: tk.dot %[[AC]], %[[BC]]
// SCRATCH-NEXT: tk.dot %[[AV]], %[[BV]]
// CHECK: scf.for
// REG: tk.dot %[[AC]],
// SCRATCH: tk.dot %[[AV]],
tk.func @loop_invariant_a(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %b: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %c: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %r64 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %r32 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %rows = tk.expand_dims %r64 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %kcols = tk.expand_dims %r32 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %krows = tk.expand_dims %r32 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %cols = tk.expand_dims %r64 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %c32 = arith.constant dense<32> : tensor<64x1xi32>
  %c64k = arith.constant dense<64> : tensor<32x1xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %ar = arith.muli %rows, %c32 : tensor<64x1xi32>
  %arb = tk.broadcast %ar : tensor<64x1xi32> -> tensor<64x32xi32>
  %acb = tk.broadcast %kcols : tensor<1x32xi32> -> tensor<64x32xi32>
  %aoff = arith.addi %arb, %acb : tensor<64x32xi32>
  %pa0 = tk.splat %a : !tk.ptr<f16> -> tensor<64x32x!tk.ptr<f16>>
  %pa = tk.addptr %pa0, %aoff : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
  %av = tk.load %pa : tensor<64x32x!tk.ptr<f16>>
  %br = arith.muli %krows, %c64k : tensor<32x1xi32>
  %brb = tk.broadcast %br : tensor<32x1xi32> -> tensor<32x64xi32>
  %bcb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<32x64xi32>
  %boff = arith.addi %brb, %bcb : tensor<32x64xi32>
  %pb0 = tk.splat %b : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>>
  %pb = tk.addptr %pb0, %boff : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %first = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %bv = tk.load %pb : tensor<32x64x!tk.ptr<f16>>
    %next = tk.dot %av, %bv, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %second = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %first) -> (tensor<64x64xf32>) : i32 {
    %bv = tk.load %pb : tensor<32x64x!tk.ptr<f16>>
    %next = tk.dot %av, %bv, %acc : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  %cr = arith.muli %rows, %c64 : tensor<64x1xi32>
  %crb = tk.broadcast %cr : tensor<64x1xi32> -> tensor<64x64xi32>
  %ccb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %coff = arith.addi %crb, %ccb : tensor<64x64xi32>
  %pc0 = tk.splat %c : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %pc = tk.addptr %pc0, %coff : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  tk.store %pc, %second : tensor<64x64x!tk.ptr<f32>>
  tk.return
}
