// RUN: tk-opt %s --split-input-file --tk-convert-registers-to-simt | FileCheck %s
//
// tk.dot on the registers of a thread, one warp of 8 lanes. A dot without
// a matrix intrinsic is fused multiply-adds: each thread holds a 4 x 2
// block of the 8 x 8 product, its 4 rows of a and 2 columns of b whole
// along k (tk-dot-operand-layouts' layouts), and computes each of its 8
// elements over the 4 steps of k, f16 operands in f32.

#acc = #tkw.linear<shape = [8, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [4, 0]], warp = []>
#a = #tkw.linear<shape = [8, 4], register = [[1, 0], [2, 0], [0, 1], [0, 2]], lane = [[0, 0], [0, 0], [4, 0]], warp = []>
#b = #tkw.linear<shape = [4, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [0, 0]], warp = []>

// CHECK-LABEL: func.func @fma_dot
// CHECK-SAME: (%[[X:.*]]: f16, %[[Y:.*]]: f16)
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[XW:.*]] = arith.extf %[[X]] : f16 to f32
// CHECK-DAG: %[[YW:.*]] = arith.extf %[[Y]] : f16 to f32
// CHECK: %[[S0:.*]] = math.fma %[[XW]], %[[YW]], %[[ZERO]] : f32
// CHECK: %[[S1:.*]] = math.fma %{{.*}}, %{{.*}}, %[[S0]] : f32
// CHECK: %[[S2:.*]] = math.fma %{{.*}}, %{{.*}}, %[[S1]] : f32
// CHECK: math.fma %{{.*}}, %{{.*}}, %[[S2]] : f32
// CHECK-COUNT-28: math.fma
// CHECK-NOT: math.fma
// CHECK: return
tk.func @fma_dot(%x: f16, %y: f16) attributes {tkw.num_warps = 1 : i32, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %a = tk.splat %x : f16 -> tensor<8x4xf16, #a>
  %b = tk.splat %y : f16 -> tensor<4x8xf16, #b>
  %zero = arith.constant dense<0.000000e+00> : tensor<8x8xf32, #acc>
  %c = tk.dot %a, %b, %zero : tensor<8x4xf16, #a> * tensor<4x8xf16, #b> -> tensor<8x8xf32, #acc>
  tk.return
}

// -----

// The same product with a and b as loaded (a thread holds 4 consecutive
// elements of a row), which tk-dot-operand-layouts leaves so where a's rows
// and b's columns whole along k would take too many registers: the holders
// write both to the dot's scratch row-major (a at element 0, b at 32:
// tkw.scratch's 128 bytes of f16), and after a barrier one loop over k
// reads, each step, the thread's 4 rows of a (k + 4 row) and 2 columns of
// b (4 k + column + 32) and updates its 8 elements.
#acc = #tkw.linear<shape = [8, 8], register = [[0, 1], [1, 0], [2, 0]], lane = [[0, 2], [0, 4], [4, 0]], warp = []>
#rows = #tkw.linear<shape = [8, 4], register = [[0, 1], [0, 2]], lane = [[1, 0], [2, 0], [4, 0]], warp = []>
#cols = #tkw.linear<shape = [4, 8], register = [[0, 1], [0, 2], [0, 4]], lane = [[1, 0], [2, 0], [0, 0]], warp = []>

// CHECK-LABEL: func.func @fma_dot_from_scratch
// CHECK: %[[BUF:.*]] = memref.get_global @fma_dot_from_scratch_scratch_f16 : memref<64xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: vector.store
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK: %[[SUMS:.*]]:8 = scf.for %[[K:.*]] = %c0 to %c4 step %c1 iter_args(
// CHECK-COUNT-6: memref.load %{{.*}} : memref<64xf16
// CHECK-NOT: memref.load
// CHECK-COUNT-8: math.fma
// CHECK-NOT: math.fma
// CHECK: scf.yield
// CHECK: return
tk.func @fma_dot_from_scratch(%x: f16, %y: f16) attributes {tkw.num_warps = 1 : i32, tkw.shared_memory = 128 : i64, tkw.target = "vulkan:warp-size=8:shared-memory=32768:max-threads=256", tkw.threads_per_warp = 8 : i32} {
  %a = tk.splat %x : f16 -> tensor<8x4xf16, #rows>
  %b = tk.splat %y : f16 -> tensor<4x8xf16, #cols>
  %zero = arith.constant dense<0.000000e+00> : tensor<8x8xf32, #acc>
  %c = tk.dot %a, %b, %zero {tkw.scratch = array<i64: 0, 128>} : tensor<8x4xf16, #rows> * tensor<4x8xf16, #cols> -> tensor<8x8xf32, #acc>
  tk.return
}
