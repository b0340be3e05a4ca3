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
// W32-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64}
// W16-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 64 : i64, tkw.threads_per_warp = 16 : i64}
// W64-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 256 : i64, tkw.threads_per_warp = 64 : i64}
// W8-SAME: attributes {tkw.conversions = 0 : i64, tkw.threads = 32 : i64, tkw.threads_per_warp = 8 : i64}
// CPU-SAME: attributes {tkw.threads = 0 : i64}
// W32: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8: tk.load {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>}
// CPU: tk.load {{.*}} {tkw.layout = #tkw.shared}
// Neither reduction has a split (tkw.split): each reads registers.
// CHECK-NOT: tkw.split
// CHECK: arith.subf
// CHECK-NOT: tkw.layout
// CHECK-SAME: tensor<1024xf32>
// W32-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8-NEXT: math.exp {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>}
// CPU-NEXT: math.exp {{.*}} {tkw.layout = #tkw.shared}
// CHECK-NOT: tkw.split
// CHECK: arith.divf
// CHECK-NOT: tkw.layout
// CHECK-SAME: tensor<1024xf32>
// The store visits the row by the runs of the registers it reads.
// W32: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>}
// CPU: tk.store
// CPU-NOT: tkw.layout
// CPU-SAME: tensor<1024x!tk.ptr<f32>>

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

// Every store of a tile records how the threads visit it: runs of up to 4
// elements of a row, as wide as the threads can all take the same number
// of. The 64x2 tile (128 elements) takes runs of 2 at 32 and 64 threads,
// single elements at 128 and 256; the 1024-element row runs of 4 at any
// of them. A store of a scalar has none, nor any store on the CPU.
// CHECK-LABEL: tk.func @store_runs
// W32: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 128>} : tensor<64x2x!tk.ptr<f32>>
// W16: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 2, threads = 64>} : tensor<64x2x!tk.ptr<f32>>
// W64: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 256>} : tensor<64x2x!tk.ptr<f32>>
// W8: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 2, threads = 32>} : tensor<64x2x!tk.ptr<f32>>
// W32: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
// W16: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>} : tensor<1024x!tk.ptr<f32>>
// W64: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>} : tensor<1024x!tk.ptr<f32>>
// W8: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>} : tensor<1024x!tk.ptr<f32>>
// CHECK: tk.store
// CHECK-NOT: tkw.layout
// CHECK-SAME: !tk.ptr<f32>
// CPU-NOT: tkw.layout
// CHECK: tk.return
tk.func @store_runs(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                    %v: f32) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c = tk.make_range {end = 2 : i32, start = 0 : i32} : tensor<2xi32>
  %rows = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %cols = tk.expand_dims %c {axis = 0 : i32} : tensor<2xi32> -> tensor<1x2xi32>
  %c2 = arith.constant dense<2> : tensor<64x1xi32>
  %rowoff = arith.muli %rows, %c2 : tensor<64x1xi32>
  %rb = tk.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x2xi32>
  %cb = tk.broadcast %cols : tensor<1x2xi32> -> tensor<64x2xi32>
  %offs = arith.addi %rb, %cb : tensor<64x2xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<64x2x!tk.ptr<f32>>
  %op = tk.addptr %os, %offs : tensor<64x2x!tk.ptr<f32>>, tensor<64x2xi32>
  %vs = tk.splat %v : f32 -> tensor<64x2xf32>
  tk.store %op, %vs : tensor<64x2x!tk.ptr<f32>>
  %w = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %ws = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %wp = tk.addptr %ws, %w : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %wv = tk.splat %v : f32 -> tensor<1024xf32>
  tk.store %wp, %wv : tensor<1024x!tk.ptr<f32>>
  tk.store %out, %v : !tk.ptr<f32>
  tk.return
}

// -----

// A reduction of memory or of recomputed elements records how the threads
// share its lines (tkw.split): rows of a 2-D tile a part per lane of one
// warp, at every warp size; a whole 1-D tile of 32-bit values a part per
// thread, meeting across the warps; 16-bit values (no shuffles) and the
// columns (a line per thread, or 2 parts at 256 threads) in memory. The
// softmax above has none: its reductions read registers.
// CHECK-LABEL: tk.func @reduce_splits
// W32: tk.reduce({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 32, across = "lanes">}
// W16: tk.reduce({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 16, across = "lanes">}
// W64: tk.reduce({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 64, across = "lanes">}
// W8: tk.reduce({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 8, across = "lanes">}
// W32: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// W16: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// W64: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 2, across = "memory">}
// W8: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// W32: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 128, across = "warps">}
// W16: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 64, across = "warps">}
// W64: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 256, across = "warps">}
// W8: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 32, across = "warps">}
// W32: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 128, across = "memory">}
// W16: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 64, across = "memory">}
// W64: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 256, across = "memory">}
// W8: tk.reduce({{.*}}) {axis = 0 : i32, tkw.split = #tkw.split<parts = 32, across = "memory">}
// CPU-NOT: tkw.split
// CHECK: tk.return
tk.func @reduce_splits(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                       %half: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                       %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %c = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %rows = tk.expand_dims %r {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %cols = tk.expand_dims %c {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  %c128 = arith.constant dense<128> : tensor<64x1xi32>
  %rowoff = arith.muli %rows, %c128 : tensor<64x1xi32>
  %rb = tk.broadcast %rowoff : tensor<64x1xi32> -> tensor<64x128xi32>
  %cb = tk.broadcast %cols : tensor<1x128xi32> -> tensor<64x128xi32>
  %offs = arith.addi %rb, %cb : tensor<64x128xi32>
  %is = tk.splat %in : !tk.ptr<f32> -> tensor<64x128x!tk.ptr<f32>>
  %ip = tk.addptr %is, %offs : tensor<64x128x!tk.ptr<f32>>, tensor<64x128xi32>
  %x = tk.load %ip : tensor<64x128x!tk.ptr<f32>>
  %rowsum = tk.reduce(%x : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %colsum = tk.reduce(%x : tensor<64x128xf32>) {axis = 0 : i32} -> tensor<128xf32> {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %w = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %ws = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %wp = tk.addptr %ws, %w : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %y = tk.load %wp : tensor<1024x!tk.ptr<f32>>
  %total = tk.reduce(%y : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.addf %a, %b : f32
    tk.reduce.return %s : f32
  }
  %hs = tk.splat %half : !tk.ptr<f16> -> tensor<1024x!tk.ptr<f16>>
  %hp = tk.addptr %hs, %w : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
  %h = tk.load %hp : tensor<1024x!tk.ptr<f16>>
  %hmax = tk.reduce(%h : tensor<1024xf16>) {axis = 0 : i32} -> f16 {
  ^bb0(%a: f16, %b: f16):
    %m = arith.maxnumf %a, %b : f16
    tk.reduce.return %m : f16
  }
  %hw = arith.extf %hmax : f16 to f32
  %sum = arith.addf %total, %hw : f32
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<64x!tk.ptr<f32>>
  %op = tk.addptr %os, %r : tensor<64x!tk.ptr<f32>>, tensor<64xi32>
  tk.store %op, %rowsum : tensor<64x!tk.ptr<f32>>
  %cs = tk.splat %out : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %cp = tk.addptr %cs, %c : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %cp, %colsum : tensor<128x!tk.ptr<f32>>
  tk.store %out, %sum : !tk.ptr<f32>
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
// W8: tk.load {{.*}} {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 32>>}
// CPU: tk.load {{.*}} {tkw.layout = #tkw.shared}
// W32: tk.load {{.*}} {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>}
// W16: tk.load {{.*}} {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 64>>}
// W64: tk.load {{.*}} {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 256>>}
// W8: tk.load {{.*}} {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 32>>}
// CPU: tk.load {{.*}} {tkw.layout = #tkw.shared}
// CHECK: scf.for
// CHECK-NOT: tkw.layout = #tkw.shared
// W32: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 128>}
// W16: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 64>}
// W64: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 256>}
// W8: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 4, threads = 32>}
// CPU-NOT: tkw.layout
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

// -----

// A scan runs each line in one thread, serially along its axis: its split
// is a single part per line. An atomic on a tile visits single elements,
// each its own read-modify-write: runs of 1 over the threads. The store of
// the atomic's result takes runs of its own. The CPU records neither.
// CHECK-LABEL: tk.func @scan_and_atomic
// W32: tk.atomic_rmw {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 128>}
// W16: tk.atomic_rmw {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 64>}
// W64: tk.atomic_rmw {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 256>}
// W8: tk.atomic_rmw {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 32>}
// W32: tk.atomic_cas {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 128>}
// W16: tk.atomic_cas {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 64>}
// W64: tk.atomic_cas {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 256>}
// W8: tk.atomic_cas {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 32>}
// W32: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 2, threads = 128>}
// W64: tk.store {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 256>}
// W32: tk.scan({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// W16: tk.scan({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// W64: tk.scan({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// W8: tk.scan({{.*}}) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">}
// CPU-NOT: tkw.split
// CPU-NOT: tkw.layout
// CHECK: tk.return
tk.func @scan_and_atomic(%p: !tk.ptr<i32> {tk.divisibility = 16 : i32},
                         %o: !tk.ptr<i32> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %s = tk.splat %p : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %ptrs = tk.addptr %s, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %one = arith.constant dense<1> : tensor<256xi32>
  %old = tk.atomic_rmw add, acq_rel, %ptrs, %one : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>) -> tensor<256xi32>
  %zero = arith.constant dense<0> : tensor<256xi32>
  %seen = tk.atomic_cas acq_rel, %ptrs, %zero, %old : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>, tensor<256xi32>) -> tensor<256xi32>
  %so = tk.splat %o : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %po = tk.addptr %so, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  tk.store %po, %seen : tensor<256x!tk.ptr<i32>>
  %rows = tk.reshape %seen : tensor<256xi32> -> tensor<8x32xi32>
  %cum = tk.scan(%rows : tensor<8x32xi32>) {axis = 1 : i32, reverse = false} -> tensor<8x32xi32> {
  ^bb0(%a: i32, %b: i32):
    %sum = arith.addi %a, %b : i32
    tk.scan.return %sum : i32
  }
  %flat = tk.reshape %cum : tensor<8x32xi32> -> tensor<256xi32>
  tk.store %po, %flat : tensor<256x!tk.ptr<i32>>
  tk.return
}

// -----

// An assert on a tile checks single elements, each failing one reporting
// itself: runs of 1 over the threads, as an atomic's.
// CHECK-LABEL: tk.func @assert_tile
// W32: tk.assert {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 128>}
// W16: tk.assert {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 64>}
// W64: tk.assert {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 256>}
// W8: tk.assert {{.*}} {tkw.layout = #tkw.runs<width = 1, threads = 32>}
// CPU-NOT: tkw.layout
// CHECK: tk.return
tk.func @assert_tile(%n: i32) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %nv = tk.splat %n : i32 -> tensor<256xi32>
  %ok = arith.cmpi slt, %r, %nv : tensor<256xi32>
  tk.assert %ok, "index out of range" : tensor<256xi1>
  tk.return
}

// -----

// A tile a loop carries in workgroup memory (a running sum of f16 rows) and
// an scf.if's tile result: the loop's tkw.iter_layouts and the if's
// tkw.result_layouts name the runs that write their buffers (the initial
// value, each trip's value, each branch's value): 16 bytes of f16 (runs of
// 8) where they spread the 1024 elements evenly, 4 at 256 threads. The CPU
// records neither.
// CHECK-LABEL: tk.func @carried
// CHECK: scf.for
// CHECK: scf.yield
// W32-NEXT: } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 128>>]}
// W16-NEXT: } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 64>>]}
// W64-NEXT: } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 4, threads = 256>>]}
// W8-NEXT: } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 32>>]}
// CPU-NEXT: }{{$}}
// CHECK: scf.if
// CHECK: arith.negf
// CHECK: scf.yield
// W32-NEXT: } {tkw.result_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 128>>]}
// W16-NEXT: } {tkw.result_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 64>>]}
// W64-NEXT: } {tkw.result_layouts = [#tkw.shared<written = #tkw.runs<width = 4, threads = 256>>]}
// W8-NEXT: } {tkw.result_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 32>>]}
// CPU-NEXT: }{{$}}
// CHECK: tk.return
tk.func @carried(%in: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %is = tk.splat %in : !tk.ptr<f16> -> tensor<1024x!tk.ptr<f16>>
  %ip = tk.addptr %is, %r : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
  %zero = arith.constant dense<0.0> : tensor<1024xf16>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<1024xf16>) : i32 {
    %row = arith.muli %i, %c1 : i32
    %rv = tk.splat %row : i32 -> tensor<1024xi32>
    %p = tk.addptr %ip, %rv : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
    %x = tk.load %p : tensor<1024x!tk.ptr<f16>>
    %next = arith.addf %acc, %x : tensor<1024xf16>
    scf.yield %next : tensor<1024xf16>
  }
  %pos = arith.cmpi sgt, %n, %c0 : i32
  %pick = scf.if %pos -> (tensor<1024xf16>) {
    scf.yield %sum : tensor<1024xf16>
  } else {
    %neg = arith.negf %sum : tensor<1024xf16>
    scf.yield %neg : tensor<1024xf16>
  }
  %os = tk.splat %out : !tk.ptr<f16> -> tensor<1024x!tk.ptr<f16>>
  %op = tk.addptr %os, %r : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
  tk.store %op, %pick : tensor<1024x!tk.ptr<f16>>
  tk.return
}
