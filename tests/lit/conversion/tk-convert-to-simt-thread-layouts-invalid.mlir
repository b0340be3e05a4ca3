// RUN: tk-opt %s --split-input-file --tk-convert-to-simt="target=cuda-sm80 num-warps=4" -verify-diagnostics

// Thread layouts that do not fit the lowering are errors naming the op.

// expected-error @below {{thread layouts were assigned for 64 threads a program, not 128}}
tk.func @other_threads(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 64 : i64} {
  %r = tk.make_range {end = 1024 : i32, start = 0 : i32} : tensor<1024xi32>
  %nv = tk.splat %n : i32 -> tensor<1024xi32>
  %mask = arith.cmpi slt, %r, %nv : tensor<1024xi32>
  %bs = tk.splat %in : !tk.ptr<f32> -> tensor<1024x!tk.ptr<f32>>
  %ptrs = tk.addptr %bs, %r : tensor<1024x!tk.ptr<f32>>, tensor<1024xi32>
  %x = tk.load %ptrs, %mask {tkw.layout = #tkw.shared} : tensor<1024x!tk.ptr<f32>>
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

tk.func @uneven(%in: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                 %out: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %n: i32)
    attributes {tkw.threads = 128 : i64} {
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
    attributes {tkw.threads = 128 : i64} {
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
    attributes {tkw.threads = 128 : i64} {
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
    attributes {tkw.threads = 128 : i64} {
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
                         %n: i32) attributes {tkw.threads = 128 : i64} {
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
                              %n: i32) attributes {tkw.threads = 128 : i64} {
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
    attributes {tkw.threads = 128 : i64} {
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
