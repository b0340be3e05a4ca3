// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-rdna3 num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,REG
// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-rdna3:thread-registers=96 num-warps=4" --tk-dot-operand-layouts | FileCheck %s --check-prefixes=CHECK,STAGED
// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-rdna3:thread-registers=96 num-warps=4" --tk-dot-operand-layouts="stage-operands=false" | FileCheck %s --check-prefixes=CHECK,REG
// RUN: tk-opt %s --tk-assign-linear-layouts="target=amd-rdna3:thread-registers=96 num-warps=4" --tk-dot-operand-layouts --tk-remove-layout-conversions --tk-pipeline-loads --tk-allocate-shared-memory --tk-insert-barriers | FileCheck %s --check-prefix=BARRIERS
//
// An operand the loop around its dot does not change (attention's q) is
// held across the loop in its fragments where the loop's tiles and those
// fragments take at most 3/4 of a thread's registers, as
// estimateLoopTileRegisters counts them. On RDNA3 (WMMA, 256 VGPRs a wave32
// lane) a 64x64x32 f16 dot on 4 warps: the f32 accumulator the trip
// starts with and the one the dot makes (32 registers each), the tile of b
// the trip loads (8) and a's fragments, which WMMA copies into both
// half-waves (32): 104, under 192. Where a thread has fewer
// (thread-registers=96: over 72), a is written once before the loop into a
// ring of one slot, and each trip reads it back in its fragments just
// before the dot; the second loop reads the same slot. stage-operands=false
// (what the pipeline lowers with when the slot does not fit the device's
// workgroup memory) keeps a in registers.
// CHECK-LABEL: tk.func @loop_invariant_a
// CHECK: %[[AV:.+]] = tk.load
// REG-NEXT: %[[AC:.+]] = tkw.convert_layout %[[AV]]
// STAGED-NEXT: %[[RING:.+]] = tkw.local_alloc : <1, [64, 32], f16, #tkw.swizzled<
// STAGED-NEXT: %[[SLOT:.+]] = arith.constant 0 : i32
// STAGED-NEXT: tkw.local_store %[[AV]] into %[[RING]][%[[SLOT]]]
// CHECK-NOT: tkw.convert_layout %[[AV]]
// CHECK: scf.for
// CHECK: %[[BV:.+]] = tk.load
// STAGED-NEXT: %[[AS:.+]] = tkw.local_load %[[RING]][%[[SLOT]]]
// STAGED-NEXT: tk.dot %[[AS]], %[[BV]]
// REG-NEXT: tk.dot %[[AC]], %[[BV]]
// CHECK: scf.for
// STAGED: %[[AS2:.+]] = tkw.local_load %[[RING]][%[[SLOT]]]
// STAGED-NEXT: tk.dot %[[AS2]],
// REG: tk.dot %[[AC]],
// CHECK-NOT: tkw.local_store
//
// The slot lives across both loops (tk-allocate-shared-memory), apart from
// the dots' own scratch. The first trip's read meets the write before the
// loop: tk-insert-barriers puts a barrier before the read, in the loop, as
// Triton's Membar would; the dot after it, which writes b to its scratch,
// needs one a trip anyway, and takes no other.
// BARRIERS-LABEL: tk.func @loop_invariant_a
// BARRIERS: tkw.local_alloc {tkw.scratch = array<i64: [[RING:[0-9]+]], 4096>}
// BARRIERS: tkw.local_store
// BARRIERS-NOT: gpu.barrier
// BARRIERS: scf.for
// BARRIERS: tk.load
// BARRIERS-NEXT: gpu.barrier
// BARRIERS-NEXT: tkw.local_load
// BARRIERS-NEXT: tk.dot {{.*}}tkw.scratch = array<i64: {{[0-9]+}}, 4096>
// BARRIERS-NOT: gpu.barrier
// BARRIERS: scf.yield
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
