// RUN: tk-opt %s --split-input-file --tk-assign-thread-layouts="target=cuda-sm80 num-warps=4" | FileCheck %s --check-prefixes=CHECK,W32
// RUN: tk-opt %s --split-input-file --tk-assign-thread-layouts="target=intel-pvc num-warps=4" | FileCheck %s --check-prefixes=CHECK,W16
// RUN: tk-opt %s --split-input-file --tk-assign-thread-layouts="target=amd-cdna3 num-warps=4" | FileCheck %s --check-prefixes=CHECK,W64
// RUN: tk-opt %s --split-input-file --tk-assign-thread-layouts="target=intel-dg2 num-warps=4" | FileCheck %s --check-prefixes=CHECK,W8
// RUN: tk-opt %s --split-input-file --tk-assign-thread-layouts="target=cpu" | FileCheck %s --check-prefixes=CHECK,CPU
// RUN: not tk-opt %s --split-input-file --tk-assign-thread-layouts="num-warps=4" 2>&1 | FileCheck %s --check-prefix=NOTARGET

// tk-assign-thread-layouts at four warps of each warp size (32, 16, 64, 8:
// 128, 64, 256 and 32 threads) and in the CPU form. Held products need a
// backend's matrix unit: backends/*/test/lit/thread-layouts.tk show those
// (and the layout conversions they need, counted in tkw.conversions: none
// here).
// NOTARGET: tk-assign-thread-layouts: target=<preset> is required

// A row softmax: the loaded row and its exponentials are each read twice
// (a reduction and an element-wise chain into the store), always at the
// indices their own thread holds, so they stay in registers: runs of 4
// consecutive elements (16 bytes), thread t holding runs t, t + threads, ...
// The CPU keeps them on the stack. The chains read once (the shifted row,
// the quotient) are recomputed: no layout.
// CHECK-LABEL: tk.func @softmax
// W32-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 128 : i64}
// W16-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 64 : i64}
// W64-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 256 : i64}
// W8-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 32 : i64}
// CPU-SAME: attributes {tkw.threads = 0 : i64}
// W32: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>}
// CPU: tk.load {{.*}} {tkw.layout = #tkw.shared}
// CHECK: arith.subf
// CHECK-NOT: tkw.layout
// CHECK-SAME: tensor<1024xf32>
// W32-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>}
// CPU-NEXT: math.exp {{.*}} {tkw.layout = #tkw.shared}
// CHECK: arith.divf
// CHECK-NOT: tkw.layout
// CHECK-SAME: tensor<1024xf32>

tk.func @softmax(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %pid = tk.program_id 0 : i32
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %row = arith.muli %pid, %n : i32
  %base = tk.addptr %in, %row : !tk.ptr<f32>, i32
  %bs = tk.splat %base : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %ninf = arith.constant dense<0xFF800000> : tensor<1024xf32>
  %x = tk.load %ptrs, %mask, %ninf : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %e = math.exp %d : tensor<1024xf32>
  %sum = tk.reduce(%e : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %sumv = tk.splat %sum : f32 -> tensor<1024xf32>
  %y = arith.divf %e, %sumv : tensor<1024xf32>
  %obase = tk.addptr %out, %row : !tk.ptr<f32>, i32
  %os = tk.splat %obase : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %y, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// A 64x64 tile read by two stores stays in registers where each thread
// holds at most 64 of its elements (32 at 128 threads, 64 at 64, 16 at
// 256); at 32 threads (128 each) it goes to workgroup memory. A tile read
// in a loop is kept whole in workgroup memory: registers would be read in
// another region than the one that wrote them.
// CHECK-LABEL: tk.func @reuse
// W32: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8: tk.load {{.*}} {tkw.layout = #tkw.shared}
// CPU: tk.load {{.*}} {tkw.layout = #tkw.shared}
// CHECK: tk.load {{.*}} {tkw.layout = #tkw.shared}
// CHECK: scf.for
// CHECK-NOT: tkw.layout
// CHECK: tk.return
tk.func @reuse(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
               %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %rows = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %cols = tk.expand_dims %r {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %c64 = arith.constant dense<64> : tensor<64x1xi32>
  %rowoff = arith.muli %rows, %c64 : tensor<64x1xi32>
  %rb = tk.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x64xi32>
  %cb = tk.broadcast %cols : tensor<1x64xi32> -> tensor<64x64xi32>
  %offs = arith.addi %rb, %cb : tensor<64x64xi32>
  %is = tk.splat %in : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %ip = tk.addptr %is, %offs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>>
  %op = tk.addptr %os, %offs : tensor<64x64x!tk.ptr<f32>>, tensor<64x64xi32>
  %x = tk.load %ip : tensor<64x64x!tk.ptr<f32>>
  %twice = arith.addf %x, %x : tensor<64x64xf32>
  tk.store %op, %twice : tensor<64x64x!tk.ptr<f32>>
  %sq = arith.mulf %x, %x : tensor<64x64xf32>
  tk.store %ip, %sq : tensor<64x64x!tk.ptr<f32>>
  %y = tk.load %op : tensor<64x64x!tk.ptr<f32>>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  scf.for %i = %c0 to %n step %c1 : i32 {
    %z = arith.mulf %y, %y : tensor<64x64xf32>
    tk.store %op, %z : tensor<64x64x!tk.ptr<f32>>
  }
  tk.return
}
