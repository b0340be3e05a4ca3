// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=cuda-sm80 num-warps=4" --canonicalize | FileCheck %s --check-prefixes=CHECK,W32
// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=intel-pvc num-warps=8" --canonicalize | FileCheck %s --check-prefixes=CHECK,W16
// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=amd-cdna3 num-warps=2" --canonicalize | FileCheck %s --check-prefixes=CHECK,W64
// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=intel-dg2 num-warps=16" --canonicalize | FileCheck %s --check-prefixes=CHECK,W8
// RUN: not tk-opt %s --split-input-file --tk-convert-to-simt="target=amd-cdna3 num-warps=32" 2>&1 | FileCheck %s --check-prefix=TOOMANY
// RUN: not tk-opt %s --split-input-file --tk-convert-to-simt="target=intel-pvc num-warps=3" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// RUN: not tk-opt %s --split-input-file --tk-convert-to-simt="num-warps=4" 2>&1 | FileCheck %s --check-prefix=NOTARGET
// RUN: not tk-opt %s --split-input-file --tk-convert-to-simt="target=nosuch-gpu" 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// tk-convert-to-simt at the warp sizes of the targets tk lowers for, 128
// threads each: 4 warps of 32 (NVIDIA), 8 subgroups of 16 (PVC), 2 waves of
// 64 (CDNA) or 16 subgroups of 8 (DG2). Lane and warp come from the target's warp
// size, butterfly shuffles span exactly one warp (offsets from half the
// warp down to 1, width the warp), and one value a warp crosses workgroup
// memory.
// TOOMANY: 32 warps of 64 lanes exceed the 1024 threads a workgroup of amd-cdna3 may have
// UNEVEN: num-warps must be a positive power of two, not 3
// NOTARGET: target=<preset> is required
// UNKNOWN: unknown target 'nosuch-gpu'; known: amd-cdna2, amd-cdna3, amd-rdna3, cpu, cuda-sm80, cuda-sm90a, intel-dg2, intel-pvc, vulkan, vulkan-lavapipe

// A whole-tile sum, a part per thread: each warp combines its lanes' parts,
// lane 0 of each warp writes its warp's value, and every thread combines
// the warps' values after one barrier.
// W32: memref.global "private" @sum_tile0 : memref<4xf32, #gpu.address_space<workgroup>>
// W16: memref.global "private" @sum_tile0 : memref<8xf32, #gpu.address_space<workgroup>>
// W64: memref.global "private" @sum_tile0 : memref<2xf32, #gpu.address_space<workgroup>>
// W8: memref.global "private" @sum_tile0 : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK-LABEL: func.func @sum
// W64: gpu.shuffle  xor %{{.*}}, %c32_i32, %c64_i32 : f32
// W64: gpu.shuffle  xor %{{.*}}, %c16_i32, %c64_i32 : f32
// W64: gpu.shuffle  xor %{{.*}}, %c8_i32, %c64_i32 : f32
// W64: gpu.shuffle  xor %{{.*}}, %c4_i32, %c64_i32 : f32
// W64: gpu.shuffle  xor %{{.*}}, %c2_i32, %c64_i32 : f32
// W64: gpu.shuffle  xor %{{.*}}, %c1_i32, %c64_i32 : f32
// W32: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32 : f32
// W32: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32 : f32
// W32: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32 : f32
// W32: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32 : f32
// W32: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32 : f32
// W16: gpu.shuffle  xor %{{.*}}, %c8_i32, %c16_i32 : f32
// W16: gpu.shuffle  xor %{{.*}}, %c4_i32, %c16_i32 : f32
// W16: gpu.shuffle  xor %{{.*}}, %c2_i32, %c16_i32 : f32
// W16: gpu.shuffle  xor %{{.*}}, %c1_i32, %c16_i32 : f32
// W8: gpu.shuffle  xor %{{.*}}, %c4_i32, %c8_i32 : f32
// W8: gpu.shuffle  xor %{{.*}}, %c2_i32, %c8_i32 : f32
// W8: gpu.shuffle  xor %{{.*}}, %c1_i32, %c8_i32 : f32
// CHECK-NOT: gpu.shuffle
// W32: %[[LANE:.*]] = arith.remui %{{.*}}, %c32 : index
// W16: %[[LANE:.*]] = arith.remui %{{.*}}, %c16 : index
// W64: %[[LANE:.*]] = arith.remui %{{.*}}, %c64 : index
// W8: %[[LANE:.*]] = arith.remui %{{.*}}, %c8 : index
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK: scf.if %[[FIRST]] {
// W32: %[[WARP:.*]] = arith.divui %{{.*}}, %c32 : index
// W16: %[[WARP:.*]] = arith.divui %{{.*}}, %c16 : index
// W64: %[[WARP:.*]] = arith.divui %{{.*}}, %c64 : index
// W8: %[[WARP:.*]] = arith.divui %{{.*}}, %c8 : index
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[WARP]]]
// CHECK: gpu.barrier
// W32-COUNT-4: memref.load
// W16-COUNT-8: memref.load
// W64-COUNT-2: memref.load
// W8-COUNT-16: memref.load
// CHECK-NOT: memref.load
// CHECK: return
tk.func @sum(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %v = tk.load %xp : tensor<1024x!tk.ptr<f32>>
  %s = tk.reduce(%v : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %t = arith.addf %a, %b : f32
    tk.reduce.return %t : f32
  }
  tk.store %o, %s : !tk.ptr<f32>
  tk.return
}

// -----

// Row maxima of a 16x256 tile: each warp takes whole rows (rows warp,
// warp + numWarps, ...), its lanes the columns lane, lane + warp size, ...,
// and the row's value is one butterfly over the warp.
// CHECK-LABEL: func.func @rows
// W32: %[[LANE:.*]] = arith.remui %thread_id_x, %c32 : index
// W32-NEXT: %[[WARP:.*]] = arith.divui %thread_id_x, %c32 : index
// W32-NEXT: scf.for %{{.*}} = %[[WARP]] to %c16 step %c4 {
// W16: %[[LANE:.*]] = arith.remui %thread_id_x, %c16 : index
// W16-NEXT: %[[WARP:.*]] = arith.divui %thread_id_x, %c16 : index
// W16-NEXT: scf.for %{{.*}} = %[[WARP]] to %c16 step %c8 {
// W64: %[[LANE:.*]] = arith.remui %thread_id_x, %c64 : index
// W64-NEXT: %[[WARP:.*]] = arith.divui %thread_id_x, %c64 : index
// W64-NEXT: scf.for %{{.*}} = %[[WARP]] to %c16 step %c2 {
// W8: %[[LANE:.*]] = arith.remui %thread_id_x, %c8 : index
// W8-NEXT: %[[WARP:.*]] = arith.divui %thread_id_x, %c8 : index
// W8-NEXT: scf.for %{{.*}} = %[[WARP]] to %c16 step %c16 {
// W32: scf.for %{{.*}} = %{{.*}} to %c256 step %c32 iter_args
// W16: scf.for %{{.*}} = %{{.*}} to %c256 step %c16 iter_args
// W64: scf.for %{{.*}} = %{{.*}} to %c256 step %c64 iter_args
// W8: scf.for %{{.*}} = %{{.*}} to %c256 step %c8 iter_args
// W32-COUNT-5: gpu.shuffle  xor %{{.*}}, %c{{[0-9]+}}_i32, %c32_i32 : f32
// W16-COUNT-4: gpu.shuffle  xor %{{.*}}, %c{{[0-9]+}}_i32, %c16_i32 : f32
// W64-COUNT-6: gpu.shuffle  xor %{{.*}}, %c{{[0-9]+}}_i32, %c64_i32 : f32
// W8-COUNT-3: gpu.shuffle  xor %{{.*}}, %c{{[0-9]+}}_i32, %c8_i32 : f32
// CHECK-NOT: gpu.shuffle
// CHECK: arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK: gpu.barrier
tk.func @rows(%x: !tk.ptr<f32>, %o: !tk.ptr<f32>) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %c = tk.expand_dims %r {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
  %cb = tk.broadcast %c : tensor<1x256xi32> -> tensor<16x256xi32>
  %xs = tk.splat %x : !tk.ptr<f32> -> tensor<16x256x!tk.ptr<f32>>
  %xp = tk.addptr %xs, %cb : tensor<16x256x!tk.ptr<f32>>, tensor<16x256xi32>
  %v = tk.load %xp : tensor<16x256x!tk.ptr<f32>>
  %s = tk.reduce(%v : tensor<16x256xf32>) {axis = 1 : i32} -> tensor<16xf32> {
  ^bb0(%a: f32, %b: f32):
    %t = arith.maximumf %a, %b : f32
    tk.reduce.return %t : f32
  }
  %rr = tk.make_range {end = 16 : i32, start = 0 : i32} : tensor<16xi32>
  %os = tk.splat %o : !tk.ptr<f32> -> tensor<16x!tk.ptr<f32>>
  %op = tk.addptr %os, %rr : tensor<16x!tk.ptr<f32>>, tensor<16xi32>
  tk.store %op, %s : tensor<16x!tk.ptr<f32>>
  tk.return
}
