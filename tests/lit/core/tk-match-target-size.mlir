// RUN: tk-opt %s --split-input-file --tk-match-target-size="target=cuda-sm80" | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: tk-opt %s --split-input-file --tk-match-target-size="target=amd-cdna3" | FileCheck %s --check-prefixes=CHECK,CDNA3
// RUN: tk-opt %s --split-input-file --tk-match-target-size="target=amd-rdna3" | FileCheck %s --check-prefixes=CHECK,RDNA3
// RUN: tk-opt %s --split-input-file --tk-match-target-size="target=intel-pvc" | FileCheck %s --check-prefixes=CHECK,PVC
// RUN: tk-opt %s --split-input-file --tk-match-target-size="target=intel-dg2" | FileCheck %s --check-prefixes=CHECK,DG2
// RUN: tk-opt %s --split-input-file --tk-match-target-size="target=cpu" | FileCheck %s --check-prefixes=CHECK,CPU

// tk-match-target-size on the warp-level dot of the seed GEMM (a warp's
// 32x64 = 32x32 * 32x64 block): mma.sync m16n8k16 (sm80, warp 32), mfma
// 32x32x8 (CDNA3, wave 64), wmma 16x16x16 (RDNA3, wave 32), dpas 8x16x16
// (PVC, subgroup 16), dpas 8x8x16 (DG2, subgroup 8); the CPU has no matrix
// intrinsic and keeps the dot. The pieces are held as the intrinsic's
// fragments, the layouts each backend's TargetInfo states for its operands
// and accumulator: which lane holds which elements.

#blocked = #tkw.blocked<sizePerWarp = [32, 64], warpsPerCTA = [8, 4], order = [1, 0]>
#a = #tkw.dot_operand<opIdx = 0, parent = #blocked>
#b = #tkw.dot_operand<opIdx = 1, parent = #blocked>

// SM80-DAG: #frag_a = #tkw.fragment<"mma.m16n8k16.f32.f16", opIdx = 0, sizePerLane = [1, 2], lanesPerWarp = [8, 4], warpsPerFragment = [1, 1], order = [1, 0]>
// SM80-DAG: #frag_b = #tkw.fragment<"mma.m16n8k16.f32.f16", opIdx = 1, sizePerLane = [2, 1], lanesPerWarp = [4, 8], warpsPerFragment = [1, 1], order = [0, 1]>
// SM80-DAG: #frag_acc = #tkw.fragment<"mma.m16n8k16.f32.f16", opIdx = 2, sizePerLane = [1, 2], lanesPerWarp = [8, 4], warpsPerFragment = [1, 1], order = [1, 0]>
// CDNA3-DAG: #frag_a = #tkw.fragment<"mfma.f32.32x32x8f16", opIdx = 0, sizePerLane = [1, 4], lanesPerWarp = [32, 2], warpsPerFragment = [1, 1], order = [0, 1]>
// CDNA3-DAG: #frag_b = #tkw.fragment<"mfma.f32.32x32x8f16", opIdx = 1, sizePerLane = [4, 1], lanesPerWarp = [2, 32], warpsPerFragment = [1, 1], order = [1, 0]>
// CDNA3-DAG: #frag_acc = #tkw.fragment<"mfma.f32.32x32x8f16", opIdx = 2, sizePerLane = [4, 1], lanesPerWarp = [2, 32], warpsPerFragment = [1, 1], order = [1, 0]>
// RDNA3-DAG: #frag_a = #tkw.fragment<"wmma.f32.16x16x16.f16", opIdx = 0, sizePerLane = [1, 16], lanesPerWarp = [16, 2], warpsPerFragment = [1, 1], order = [0, 1]>
// RDNA3-DAG: #frag_acc = #tkw.fragment<"wmma.f32.16x16x16.f16", opIdx = 2, sizePerLane = [1, 1], lanesPerWarp = [2, 16], warpsPerFragment = [1, 1], order = [1, 0]>
// PVC-DAG: #frag_a = #tkw.fragment<"dpas.8x16x16.f32.f16", opIdx = 0, sizePerLane = [1, 1], lanesPerWarp = [1, 16], warpsPerFragment = [1, 1], order = [1, 0]>
// PVC-DAG: #frag_b = #tkw.fragment<"dpas.8x16x16.f32.f16", opIdx = 1, sizePerLane = [16, 1], lanesPerWarp = [1, 16], warpsPerFragment = [1, 1], order = [1, 0]>
// PVC-DAG: #frag_acc = #tkw.fragment<"dpas.8x16x16.f32.f16", opIdx = 2, sizePerLane = [8, 1], lanesPerWarp = [1, 16], warpsPerFragment = [1, 1], order = [1, 0]>
// DG2-DAG: #frag_a = #tkw.fragment<"dpas.8x8x16.f32.f16", opIdx = 0, sizePerLane = [1, 2], lanesPerWarp = [1, 8], warpsPerFragment = [1, 1], order = [1, 0]>
// DG2-DAG: #frag_acc = #tkw.fragment<"dpas.8x8x16.f32.f16", opIdx = 2, sizePerLane = [8, 1], lanesPerWarp = [1, 8], warpsPerFragment = [1, 1], order = [1, 0]>
// CHECK: tk.func @seed_dot
// CHECK-SAME: tkw.level = "intrinsic"
// SM80: %[[A00:.*]] = tkw.extract %[[A:.*]] [0, 0] : tensor<32x32xf16, #dot_op> -> tensor<16x16xf16, #frag_a>
// SM80: %[[A01:.*]] = tkw.extract %[[A]] [0, 16] : tensor<32x32xf16, #dot_op> -> tensor<16x16xf16, #frag_a>
// SM80: %[[B00:.*]] = tkw.extract %[[B:.*]] [0, 0] : tensor<32x64xf16, #dot_op1> -> tensor<16x8xf16, #frag_b>
// SM80: %[[B10:.*]] = tkw.extract %[[B]] [16, 0] : tensor<32x64xf16, #dot_op1> -> tensor<16x8xf16, #frag_b>
// SM80: %[[C00:.*]] = tkw.extract %[[C:.*]] [0, 0] : tensor<32x64xf32, #blocked> -> tensor<16x8xf32, #frag_acc>
// SM80: %[[D0:.*]] = tk.dot %[[A00]], %[[B00]], %[[C00]] {tkw.intrinsic = "mma.m16n8k16.f32.f16"} : tensor<16x16xf16, #frag_a> * tensor<16x8xf16, #frag_b> -> tensor<16x8xf32, #frag_acc>
// SM80: %[[D1:.*]] = tk.dot %[[A01]], %[[B10]], %[[D0]] {tkw.intrinsic = "mma.m16n8k16.f32.f16"}
// SM80-COUNT-30: tk.dot {{.*}} {tkw.intrinsic = "mma.m16n8k16.f32.f16"}
// SM80: tkw.glue %[[D1]], {{.*}} : {{.*}} -> tensor<32x64xf32, #blocked>
// CDNA3-COUNT-8: tk.dot {{.*}} {tkw.intrinsic = "mfma.f32.32x32x8f16"} : tensor<32x8xf16, #frag_a> * tensor<8x32xf16, #frag_b> -> tensor<32x32xf32, #frag_acc>
// CDNA3: tkw.glue {{.*}} : tensor<32x32xf32, #frag_acc>, tensor<32x32xf32, #frag_acc> -> tensor<32x64xf32, #blocked>
// RDNA3-COUNT-16: tk.dot {{.*}} {tkw.intrinsic = "wmma.f32.16x16x16.f16"} : tensor<16x16xf16, #frag_a> * tensor<16x16xf16, #frag_b> -> tensor<16x16xf32, #frag_acc>
// PVC-COUNT-32: tk.dot {{.*}} {tkw.intrinsic = "dpas.8x16x16.f32.f16"} : tensor<8x16xf16, #frag_a> * tensor<16x16xf16, #frag_b> -> tensor<8x16xf32, #frag_acc>
// PVC: tkw.glue
// DG2-COUNT-64: tk.dot {{.*}} {tkw.intrinsic = "dpas.8x8x16.f32.f16"} : tensor<8x16xf16, #frag_a> * tensor<16x8xf16, #frag_b> -> tensor<8x8xf32, #frag_acc>
// DG2: tkw.glue
// CPU-NOT: tkw.extract
// CPU: tk.dot {{.*}} : tensor<32x32xf16, #dot_op> * tensor<32x64xf16, #dot_op1> -> tensor<32x64xf32, #blocked>
// CHECK: tk.store
tk.func @seed_dot(%pa: !tk.ptr<f16>, %pb: !tk.ptr<f16>, %pc: !tk.ptr<f32>) attributes {tkw.level = "warp", tkw.num_warps = 32 : i32} {
  %ap = tk.splat %pa : !tk.ptr<f16> -> tensor<32x32x!tk.ptr<f16>, #a>
  %a = tk.load %ap : tensor<32x32x!tk.ptr<f16>, #a>
  %bp = tk.splat %pb : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>, #b>
  %b = tk.load %bp : tensor<32x64x!tk.ptr<f16>, #b>
  %cp = tk.splat %pc : !tk.ptr<f32> -> tensor<32x64x!tk.ptr<f32>, #blocked>
  %c = tk.load %cp : tensor<32x64x!tk.ptr<f32>, #blocked>
  %d = tk.dot %a, %b, %c : tensor<32x32xf16, #a> * tensor<32x64xf16, #b> -> tensor<32x64xf32, #blocked>
  tk.store %cp, %d : tensor<32x64x!tk.ptr<f32>, #blocked>
  tk.return
}

// -----

// f32 inputs use the tf32 intrinsics only when input_precision allows it:
// mma m16n8k8 (sm80), dpas 8x16x8 (PVC); CDNA3 and RDNA3 list none, and an
// IEEE dot stays whole everywhere.

#blocked = #tkw.blocked<sizePerWarp = [16, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#a = #tkw.dot_operand<opIdx = 0, parent = #blocked>
#b = #tkw.dot_operand<opIdx = 1, parent = #blocked>

// CHECK: tk.func @tf32
// SM80-COUNT-4: tk.dot {{.*}} {input_precision = #tk.input_precision<tf32>, tkw.intrinsic = "mma.m16n8k8.f32.tf32"} : tensor<16x8xf32, #frag_a> * tensor<8x8xf32, #frag_b> -> tensor<16x8xf32, #frag_acc>
// PVC-COUNT-4: tk.dot {{.*}} {input_precision = #tk.input_precision<tf32>, tkw.intrinsic = "dpas.8x16x8.f32.tf32"} : tensor<8x8xf32, #frag_a> * tensor<8x16xf32, #frag_b> -> tensor<8x16xf32, #frag_acc>
// CDNA3-NOT: tkw.intrinsic
// RDNA3-NOT: tkw.intrinsic
// DG2-NOT: tkw.intrinsic
// CPU-NOT: tkw.intrinsic
// CHECK: tk.dot {{.*}} : tensor<16x16xf32, #dot_op> * tensor<16x16xf32, #dot_op1> -> tensor<16x16xf32, #blocked>
// CHECK-NOT: tkw.intrinsic
tk.func @tf32(%pa: !tk.ptr<f32>, %pc: !tk.ptr<f32>) attributes {tkw.level = "warp", tkw.num_warps = 4 : i32} {
  %ap = tk.splat %pa : !tk.ptr<f32> -> tensor<16x16x!tk.ptr<f32>, #a>
  %a = tk.load %ap : tensor<16x16x!tk.ptr<f32>, #a>
  %bp = tk.splat %pa : !tk.ptr<f32> -> tensor<16x16x!tk.ptr<f32>, #b>
  %b = tk.load %bp : tensor<16x16x!tk.ptr<f32>, #b>
  %cp = tk.splat %pc : !tk.ptr<f32> -> tensor<16x16x!tk.ptr<f32>, #blocked>
  %c = tk.load %cp : tensor<16x16x!tk.ptr<f32>, #blocked>
  %d = tk.dot %a, %b, %c {input_precision = #tk.input_precision<tf32>} : tensor<16x16xf32, #a> * tensor<16x16xf32, #b> -> tensor<16x16xf32, #blocked>
  %e = tk.dot %a, %b, %d : tensor<16x16xf32, #a> * tensor<16x16xf32, #b> -> tensor<16x16xf32, #blocked>
  tk.store %cp, %e : tensor<16x16x!tk.ptr<f32>, #blocked>
  tk.return
}

// -----

// A warp tile that is one intrinsic whole: its operands and accumulator
// enter the fragments through explicit tkw.convert_layout ops, and the
// result leaves them through one (layout moves are ops, never implied).

#blocked = #tkw.blocked<sizePerWarp = [16, 8], warpsPerCTA = [1, 1], order = [1, 0]>
#a = #tkw.dot_operand<opIdx = 0, parent = #blocked>
#b = #tkw.dot_operand<opIdx = 1, parent = #blocked>

// CHECK: tk.func @one_piece
// SM80: %[[A:.*]] = tkw.convert_layout %{{.*}} : tensor<16x16xf16, #dot_op> -> tensor<16x16xf16, #frag_a>
// SM80: %[[B:.*]] = tkw.convert_layout %{{.*}} : tensor<16x8xf16, #dot_op1> -> tensor<16x8xf16, #frag_b>
// SM80: %[[C:.*]] = tkw.convert_layout %{{.*}} : tensor<16x8xf32, #blocked> -> tensor<16x8xf32, #frag_acc>
// SM80: %[[D:.*]] = tk.dot %[[A]], %[[B]], %[[C]] {tkw.intrinsic = "mma.m16n8k16.f32.f16"}
// SM80: %[[R:.*]] = tkw.convert_layout %[[D]] : tensor<16x8xf32, #frag_acc> -> tensor<16x8xf32, #blocked>
// SM80: tk.store %{{.*}}, %[[R]]
// SM80-NOT: tkw.glue
tk.func @one_piece(%pa: !tk.ptr<f16>, %pc: !tk.ptr<f32>) attributes {tkw.level = "warp", tkw.num_warps = 1 : i32} {
  %ap = tk.splat %pa : !tk.ptr<f16> -> tensor<16x16x!tk.ptr<f16>, #a>
  %a = tk.load %ap : tensor<16x16x!tk.ptr<f16>, #a>
  %bp = tk.splat %pa : !tk.ptr<f16> -> tensor<16x8x!tk.ptr<f16>, #b>
  %b = tk.load %bp : tensor<16x8x!tk.ptr<f16>, #b>
  %cp = tk.splat %pc : !tk.ptr<f32> -> tensor<16x8x!tk.ptr<f32>, #blocked>
  %c = tk.load %cp : tensor<16x8x!tk.ptr<f32>, #blocked>
  %d = tk.dot %a, %b, %c : tensor<16x16xf16, #a> * tensor<16x8xf16, #b> -> tensor<16x8xf32, #blocked>
  tk.store %cp, %d : tensor<16x8x!tk.ptr<f32>, #blocked>
  tk.return
}
