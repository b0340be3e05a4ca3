// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=cuda-sm80 num-warps=4" -verify-diagnostics

// Thread layouts that do not fit the lowering are errors naming the op.

// expected-error @below {{thread layouts were assigned for 64 threads a program, not 128}}
tk.func @other_threads(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 64 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// Placed for wave64: the runs of the same 128 threads would be dealt to two
// warps of 64 lanes, not four of 32.
// expected-error @below {{thread layouts were assigned for warps of 64 threads, not 32}}
tk.func @other_warp_size(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 64 : i64} {
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %x = arith.sitofp %r {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<512xi32> to tensor<512xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %x {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}

// -----

// expected-error @below {{thread layouts were assigned for warps of 0 threads, not 32}}
tk.func @no_warp_size(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64} {
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %x = arith.sitofp %r {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<512xi32> to tensor<512xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %x {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @uneven(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{does not spread this tile evenly}}
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.runs<width = 16, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @runs_threads(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{is for another number of threads}}
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.runs<width = 4, threads = 256>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @no_product(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{no tk.dot is held product 0}}
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.accumulator<product = 0>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @warp_level(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{'tkw.layout' must be a thread layout}}
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.blocked<sizePerWarp = [256], warpsPerCTA = [4], order = [0]>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %maxv = tk.splat %max : f32 -> tensor<1024xf32>
  %d = arith.subf %x, %maxv : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  tk.store %optrs, %d, %mask : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// A loop's result layouts say where its held accumulators are after it; a
// loop that holds none (no matrix unit here) cannot keep a result anywhere.
tk.func @result_not_held(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                         %n: i32) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %zero = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{thread layout #tkw.shared is for the result of a held accumulator}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128xf32>) : i32 {
    %next = arith.addf %acc, %one : tensor<128xf32>
    scf.yield %next : tensor<128xf32>
  } {tkw.result_layouts = [#tkw.shared]}
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %optrs, %sum : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @result_layouts_short(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                              %n: i32) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %zero = arith.constant dense<0.000000e+00> : tensor<128xf32>
  %one = arith.constant dense<1.000000e+00> : tensor<128xf32>
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{does not list every result}}
  %sum:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero, %acc2 = %zero) -> (tensor<128xf32>, tensor<128xf32>) : i32 {
    %next = arith.addf %acc, %one : tensor<128xf32>
    scf.yield %next, %acc2 : tensor<128xf32>, tensor<128xf32>
  } {tkw.result_layouts = [unit]}
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %optrs, %sum#0 : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

// A ring (#tkw.ring) needs the backend's async copies and the lowering's
// stage count: tk-opt gives the lowering neither.
tk.func @ring_without_async_copies(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                                   %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  // expected-error @below {{thread layout #tkw.ring<stages = 3, product = 0, operand = 0> is not a ring this lowering fills: it pipelines over 1 stages}}
  %x = tk.load %ptrs {tkw.ring = #tkw.ring<stages = 3, product = 0, operand = 0>} : tensor<128x!tk.ptr<f32>>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<128x!tk.ptr<f32>>, tensor<128xi32>
  tk.store %optrs, %x : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

// Stores: every store of a tile names how its threads visit the tile,
// in runs that spread it evenly, as the registers it reads are laid out.
// -----

tk.func @store_without_layout(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %y = arith.addf %x, %x : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{a store of a tile needs its thread layout (tkw.layout, which tk-assign-thread-layouts records)}}
  tk.store %optrs, %y : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @store_shared(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %y = arith.addf %x, %x : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{thread layout #tkw.shared is not one a store visits its tile in (#tkw.runs or #tkw.accumulator)}}
  tk.store %optrs, %y {tkw.layout = #tkw.shared} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @store_uneven(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %y = arith.addf %x, %x : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{does not spread this tile over the threads in whole runs}}
  tk.store %optrs, %y {tkw.layout = #tkw.runs<width = 16, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @store_other_threads(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %y = arith.addf %x, %x : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{is for another number of threads}}
  tk.store %optrs, %y {tkw.layout = #tkw.runs<width = 4, threads = 64>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @store_not_as_owned(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  %y = arith.addf %x, %x : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{thread layout #tkw.runs<width = 2, threads = 128> is not where the registers it stores are: #tkw.runs<width = 4, threads = 128>}}
  tk.store %optrs, %y {tkw.layout = #tkw.runs<width = 2, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @store_unheld(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %y = arith.addf %x, %x : tensor<1024xf32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{no tk.dot is held product 0}}
  tk.store %optrs, %y {tkw.layout = #tkw.accumulator<product = 0>} : tensor<1024x!tk.ptr<f32>>
  tk.return
}

// -----

// Reductions: one of workgroup memory names its split over the threads, and
// that split fits the tile, the warp and the element type; one of
// registers has none.
// -----

tk.func @reduce_without_split(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{a reduction needs its split over the threads (tkw.split, which tk-assign-thread-layouts records)}}
  %m = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maxnumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  tk.store %out, %m : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @reduce_lanes_of_1d(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{splits rows, and this is not a row reduction of a 2-D tile}}
  %m = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 32, across = "lanes">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maxnumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  tk.store %out, %m : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @reduce_warps_too_few(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{needs a whole 1-D tile and a part per thread}}
  %m = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 64, across = "warps">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maxnumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  tk.store %out, %m : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @reduce_too_many_parts(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{has more parts than a line has elements}}
  %m = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 2048, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maxnumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  tk.store %out, %m : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @reduce_half_shuffles(%in: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f16>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f16> -> tensor<1024x!tk.ptr<f16>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f16>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 8, threads = 128>>} : tensor<1024x!tk.ptr<f16>>
  // expected-error @below {{combines by shuffles, which move 32-bit values}}
  %m = tk.reduce(%x : tensor<1024xf16>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 128, across = "warps">} -> f16 {
  ^bb0(%a: f16, %b: f16):
    %s = arith.maxnumf %a, %b : f16
    tk.reduce.return %s : f16
  }
  tk.store %out, %m : !tk.ptr<f16>
  tk.return
}

// -----

tk.func @reduce_registers_split(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{split #tkw.split<parts = 128, across = "warps"> of a reduction of registers, which their layout splits}}
  %m = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 128, across = "warps">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maxnumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  tk.store %out, %m : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @reduce_across_what(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{parts meet across "lanes", "warps" or "memory", not "banks"}}
  %m = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "banks">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %s = arith.maxnumf %a, %b : f32
    tk.reduce.return %s : f32
  }
  tk.store %out, %m : !tk.ptr<f32>
  tk.return
}

// -----

// Operand layouts: the result of a dot operand's conversion, of operand 0
// or 1.
tk.func @operand_layout_on_a_load(%in: !tk.ptr<f16> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tk.splat %in : !tk.ptr<f16> -> tensor<64x!tk.ptr<f16>>
  %ptrs = tk.addptr %bs, %r : tensor<64x!tk.ptr<f16>>, tensor<64xi32>
  // expected-error @below {{thread layout #tkw.operand<product = 0, operand = 0, tile = [64, 1], tilesAlong = 1, contiguous = 1, vec = 1, perPhase = 1, maxPhase = 1, align = 16> is the result of a dot operand's conversion (tkw.convert_layout)}}
  %x = tk.load %ptrs {tkw.layout = #tkw.operand<product = 0, operand = 0, tile = [64, 1], tilesAlong = 1, contiguous = 1, vec = 1, perPhase = 1, maxPhase = 1, align = 16>} : tensor<64x!tk.ptr<f16>>
  tk.store %ptrs, %x {tkw.layout = #tkw.runs<width = 1, threads = 128>} : tensor<64x!tk.ptr<f16>>
  tk.return
}

// -----

tk.func @operand_c(%in: !tk.ptr<f16> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %bs = tk.splat %in : !tk.ptr<f16> -> tensor<64x!tk.ptr<f16>>
  %ptrs = tk.addptr %bs, %r : tensor<64x!tk.ptr<f16>>, tensor<64xi32>
  %x = tk.load %ptrs : tensor<64x!tk.ptr<f16>>
  // expected-error @below {{operand must be 0 (A) or 1 (B), not 2}}
  %y = tkw.convert_layout %x {tkw.layout = #tkw.operand<product = 0, operand = 2, tile = [64, 1], tilesAlong = 1, contiguous = 1, vec = 1, perPhase = 1, maxPhase = 1, align = 16>} : tensor<64xf16> -> tensor<64xf16>
  tk.store %ptrs, %y {tkw.layout = #tkw.runs<width = 1, threads = 128>} : tensor<64x!tk.ptr<f16>>
  tk.return
}

// -----

// An operand layout whose swizzle leaves the line: 3 phases, not a power
// of two; a chunk as wide as the line.
tk.func @operand_layout_phases(%x: tensor<64x64xf16>) {
  // expected-error @below {{maxPhase and align must be positive powers of two}}
  %y = tkw.convert_layout %x {tkw.layout = #tkw.operand<product = 0, operand = 0, tile = [64, 64], tilesAlong = 1, contiguous = 1, vec = 8, perPhase = 1, maxPhase = 3, align = 128>} : tensor<64x64xf16> -> tensor<64x64xf16>
  tk.return
}

// -----

tk.func @operand_layout_chunks(%x: tensor<64x64xf16>) {
  // expected-error @below {{a line of 64 elements does not hold a multiple of 2 chunks of 64}}
  %y = tkw.convert_layout %x {tkw.layout = #tkw.operand<product = 0, operand = 0, tile = [64, 64], tilesAlong = 1, contiguous = 1, vec = 64, perPhase = 1, maxPhase = 2, align = 128>} : tensor<64x64xf16> -> tensor<64x64xf16>
  tk.return
}

// -----

// Atomics on tiles: each records its runs; runs are all an atomic takes.
tk.func @atomic_without_layout(%p: !tk.ptr<i32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %s = tk.splat %p : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %ptrs = tk.addptr %s, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %one = arith.constant dense<1> : tensor<256xi32>
  // expected-error @below {{an atomic on a tile needs its thread layout (tkw.layout, which tk-assign-thread-layouts records)}}
  %old = tk.atomic_rmw add, relaxed, %ptrs, %one : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>) -> tensor<256xi32>
  tk.return
}

// -----

tk.func @atomic_in_registers(%p: !tk.ptr<i32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %s = tk.splat %p : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %ptrs = tk.addptr %s, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %zero = arith.constant dense<0> : tensor<256xi32>
  // expected-error @below {{thread layout #tkw.accumulator<product = 0> is not one an atomic visits its tile in (#tkw.runs)}}
  %old = tk.atomic_cas acq_rel, %ptrs, %zero, %zero {tkw.layout = #tkw.accumulator<product = 0>} : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>, tensor<256xi32>) -> tensor<256xi32>
  tk.return
}

// -----

tk.func @atomic_uneven_runs(%p: !tk.ptr<i32> {tk.divisibility = 16 : i32})
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %s = tk.splat %p : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %ptrs = tk.addptr %s, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  %one = arith.constant dense<1> : tensor<256xi32>
  // expected-error @below {{thread layout #tkw.runs<width = 4, threads = 128> does not spread this tile over the threads in whole runs}}
  %old = tk.atomic_rmw add, relaxed, %ptrs, %one {tkw.layout = #tkw.runs<width = 4, threads = 128>} : (tensor<256x!tk.ptr<i32>>, tensor<256xi32>) -> tensor<256xi32>
  tk.return
}

// -----

// Scans: a line per thread, the one split they take, and recorded.
tk.func @scan_in_parts() attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %x = arith.constant dense<1> : tensor<8x32xi32>
  // expected-error @below {{thread layout #tkw.split<parts = 2, across = "memory"> is not how a scan is shared: a line per thread, serially (#tkw.split<parts = 1, across = "memory">)}}
  %cum = tk.scan(%x : tensor<8x32xi32>) {axis = 1 : i32, reverse = false, tkw.split = #tkw.split<parts = 2, across = "memory">} -> tensor<8x32xi32> {
  ^bb0(%a: i32, %b: i32):
    %sum = arith.addi %a, %b : i32
    tk.scan.return %sum : i32
  }
  tk.return
}

// -----

tk.func @scan_without_split() attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %x = arith.constant dense<1> : tensor<8x32xi32>
  // expected-error @below {{a scan needs its split over the threads (tkw.split, which tk-assign-thread-layouts records)}}
  %cum = tk.scan(%x : tensor<8x32xi32>) {axis = 1 : i32, reverse = false} -> tensor<8x32xi32> {
  ^bb0(%a: i32, %b: i32):
    %sum = arith.addi %a, %b : i32
    tk.scan.return %sum : i32
  }
  tk.return
}

// -----

tk.func @split_on_a_load(%p: !tk.ptr<i32> {tk.divisibility = 16 : i32}) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %s = tk.splat %p : !tk.ptr<i32> -> tensor<256x!tk.ptr<i32>>
  %ptrs = tk.addptr %s, %r : tensor<256x!tk.ptr<i32>>, tensor<256xi32>
  // expected-error @below {{'tkw.split' must be a #tkw.split layout on a tk.reduce or a tk.scan}}
  %x = tk.load %ptrs {tkw.split = #tkw.split<parts = 1, across = "memory">} : tensor<256x!tk.ptr<i32>>
  tk.return
}

// -----

// An element-wise tile kept in workgroup memory records which thread
// computes and writes which element (#tkw.shared's `written`).
tk.func @shared_without_writers(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                                %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{an element-wise tile kept in workgroup memory needs its writers (#tkw.shared<written = ...>, which tk-assign-thread-layouts records)}}
  %x = tk.load %ptrs {tkw.layout = #tkw.shared} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @shared_uneven_runs(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                            %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.runs<width = 16, threads = 128>> does not spread this tile over the threads in whole runs}}
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 16, threads = 128>>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @shared_other_threads(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                              %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.runs<width = 4, threads = 64>> is for another number of threads}}
  %x = tk.load %ptrs {tkw.layout = #tkw.shared<written = #tkw.runs<width = 4, threads = 64>>} : tensor<1024x!tk.ptr<f32>>
  %max = tk.reduce(%x : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

// A tile computed from registers is written by the threads holding them.
tk.func @shared_not_by_owners(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                              %out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<1024x!tk.ptr<f32>>
  // expected-error @below {{thread layout #tkw.runs<width = 2, threads = 128> is not where the registers it is computed from are: #tkw.runs<width = 4, threads = 128>}}
  %y = arith.mulf %x, %x {tkw.layout = #tkw.shared<written = #tkw.runs<width = 2, threads = 128>>} : tensor<1024xf32>
  %max = tk.reduce(%y : tensor<1024xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 8, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @shared_writers_of_a_reduction(%out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %x = arith.constant dense<1.0> : tensor<8x32xf32>
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.runs<width = 1, threads = 128>> names the writers of an element-wise tile, of a product no matrix unit computes or of a product's rounding; this op writes its own}}
  %rows = tk.reduce(%x : tensor<8x32xf32>) {axis = 1 : i32, tkw.layout = #tkw.shared<written = #tkw.runs<width = 1, threads = 128>>, tkw.split = #tkw.split<parts = 1, across = "memory">} -> tensor<8xf32> {
  ^bb0(%a: f32, %b: f32):
    %m = arith.addf %a, %b : f32
    tk.reduce.return %m : f32
  }
  %max = tk.reduce(%rows : tensor<8xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %m = arith.maxnumf %a, %b : f32
    tk.reduce.return %m : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

// A product no matrix unit computes records which thread computes which
// element, by runs: it holds no registers.
tk.func @fma_dot_without_writers(%out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %a = arith.constant dense<1.0> : tensor<32x16xf32>
  %b = arith.constant dense<2.0> : tensor<16x32xf32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  // expected-error @below {{a product no matrix unit computes needs its writers (#tkw.shared<written = ...>, which tk-assign-thread-layouts records)}}
  %c = tk.dot %a, %b, %zero : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
  %sum = tk.reduce(%c : tensor<32x32xf32>) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">} -> tensor<32xf32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.addf %x, %y : f32
    tk.reduce.return %z : f32
  }
  %max = tk.reduce(%sum : tensor<32xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">} -> f32 {
  ^bb0(%x: f32, %y: f32):
    %z = arith.maxnumf %x, %y : f32
    tk.reduce.return %z : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

tk.func @fma_dot_in_registers(%out: !tk.ptr<f32>) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %a = arith.constant dense<1.0> : tensor<32x16xf32>
  %b = arith.constant dense<2.0> : tensor<16x32xf32>
  %zero = arith.constant dense<0.0> : tensor<32x32xf32>
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.accumulator<product = 0>> names registers; a product no matrix unit computes is written by runs of its elements}}
  %c = tk.dot %a, %b, %zero {tkw.layout = #tkw.shared<written = #tkw.accumulator<product = 0>>} : tensor<32x16xf32> * tensor<16x32xf32> -> tensor<32x32xf32>
  %sum = tk.reduce(%c : tensor<32x32xf32>) {axis = 1 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">} -> tensor<32xf32> {
  ^bb0(%x: f32, %y: f32):
    %z = arith.addf %x, %y : f32
    tk.reduce.return %z : f32
  }
  %max = tk.reduce(%sum : tensor<32xf32>) {axis = 0 : i32, tkw.split = #tkw.split<parts = 1, across = "memory">} -> f32 {
  ^bb0(%x: f32, %y: f32):
    %z = arith.maxnumf %x, %y : f32
    tk.reduce.return %z : f32
  }
  tk.store %out, %max : !tk.ptr<f32>
  tk.return
}

// -----

// An assert on a tile records how the threads check it.
tk.func @assert_without_layout(%n: i32) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %nv = tk.splat %n : i32 -> tensor<256xi32>
  %ok = arith.cmpi slt, %r, %nv : tensor<256xi32>
  // expected-error @below {{an assert on a tile needs its thread layout (tkw.layout, which tk-assign-thread-layouts records)}}
  tk.assert %ok, "index out of range" : tensor<256xi1>
  tk.return
}

// -----

tk.func @assert_in_registers(%n: i32) attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %nv = tk.splat %n : i32 -> tensor<256xi32>
  %ok = arith.cmpi slt, %r, %nv : tensor<256xi32>
  // expected-error @below {{thread layout #tkw.accumulator<product = 0> is not one an assert visits its tile in (#tkw.runs)}}
  tk.assert %ok, "index out of range" {tkw.layout = #tkw.accumulator<product = 0>} : tensor<256xi1>
  tk.return
}

// -----

// A tile a loop carries in workgroup memory names who writes its buffer
// (the initial value, each trip's value): without it the lowering would
// pick runs no record shows.
tk.func @carried_without_writers(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %one = arith.constant dense<1.0> : tensor<512xf32>
  // expected-error @below {{iteration argument 0, a tile carried in workgroup memory, needs its writers (#tkw.shared<written = #tkw.runs<...>>, which tk-assign-thread-layouts records)}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<512xf32>) : i32 {
    %next = arith.addf %acc, %one : tensor<512xf32>
    scf.yield %next : tensor<512xf32>
  }
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %sum {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}

// -----

// Runs of 8 f32 do not spread 512 elements over 128 threads.
tk.func @carried_uneven_runs(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %one = arith.constant dense<1.0> : tensor<512xf32>
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.runs<width = 8, threads = 128>> does not spread this tile over the threads in whole runs}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<512xf32>) : i32 {
    %next = arith.addf %acc, %one : tensor<512xf32>
    scf.yield %next : tensor<512xf32>
  } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 8, threads = 128>>]}
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %sum {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}

// -----

// A loop's buffer is written by runs: registers' owners write where they
// are, which is not a buffer's record.
tk.func @carried_by_registers(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %one = arith.constant dense<1.0> : tensor<512xf32>
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.accumulator<product = 0>> is not one a tile carried in workgroup memory has (#tkw.shared written by #tkw.runs)}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<512xf32>) : i32 {
    %next = arith.addf %acc, %one : tensor<512xf32>
    scf.yield %next : tensor<512xf32>
  } {tkw.iter_layouts = [#tkw.shared<written = #tkw.accumulator<product = 0>>]}
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %sum {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}

// -----

// A scalar the loop carries has no buffer to write.
tk.func @carried_scalar_writers(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %f0 = arith.constant 0.0 : f32
  %f1 = arith.constant 1.0 : f32
  // expected-error @below {{thread layout #tkw.shared<written = #tkw.runs<width = 4, threads = 128>> is for a tile the loop carries in workgroup memory; this argument is not one (a scalar, a pointer walk or a tile held in registers)}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %f0) -> (f32) : i32 {
    %next = arith.addf %acc, %f1 : f32
    scf.yield %next : f32
  } {tkw.iter_layouts = [#tkw.shared<written = #tkw.runs<width = 4, threads = 128>>]}
  tk.store %out, %sum : !tk.ptr<f32>
  tk.return
}

// -----

// An if's tile result names who writes its buffer too.
tk.func @branch_without_writers(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %one = arith.constant dense<1.0> : tensor<512xf32>
  %pos = arith.cmpi sgt, %n, %c0 : i32
  // expected-error @below {{tile result 0 needs its writers (#tkw.shared<written = #tkw.runs<...>>, which tk-assign-thread-layouts records)}}
  %pick = scf.if %pos -> (tensor<512xf32>) {
    scf.yield %one : tensor<512xf32>
  } else {
    scf.yield %zero : tensor<512xf32>
  }
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %pick {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @branch_missing_result(%out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64, tkw.threads_per_warp = 32 : i64} {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<512xf32>
  %one = arith.constant dense<1.0> : tensor<512xf32>
  %pos = arith.cmpi sgt, %n, %c0 : i32
  // expected-error @below {{thread layout [] does not list every result}}
  %pick = scf.if %pos -> (tensor<512xf32>) {
    scf.yield %one : tensor<512xf32>
  } else {
    scf.yield %zero : tensor<512xf32>
  } {tkw.result_layouts = []}
  %r = tk.make_range {end = 512 : i32, start = 0 : i32} : tensor<512xi32>
  %os = tk.splat %out : !tk.ptr<f32> -> tensor<512x!tk.ptr<f32>>
  %optrs = tk.addptr %os, %r : tensor<512x!tk.ptr<f32>>, tensor<512xi32>
  tk.store %optrs, %pick {tkw.layout = #tkw.runs<width = 4, threads = 128>} : tensor<512x!tk.ptr<f32>>
  tk.return
}
