// RUN: tk-opt %s -split-input-file -verify-diagnostics
//
// Malformed kernels: tk.func signatures, the tk.* dialect attributes on
// kernels and their arguments, and the !tk.ptr type.

// expected-error @+1 {{'tk.func' op a kernel returns nothing; write results through pointers (found 1 results)}}
tk.func @kernel_with_result(%x: i32) -> i32 {
  tk.return %x : i32
}

// -----

// expected-error @+1 {{'tk.func' op argument 1 must be a scalar or a !tk.ptr to scalars, not 'tensor<128xf32>'}}
tk.func @tile_argument(%x: i32, %t: tensor<128xf32>) {
  tk.return
}

// -----

// expected-error @+1 {{'tk.func' op argument 0 must be a scalar or a !tk.ptr to scalars, not '!tk.ptr<tensor<64x32xf16>>'}}
tk.func @block_ptr_argument(%bp: !tk.ptr<tensor<64x32xf16>>) {
  tk.return
}

// -----

tk.func @return_values(%x: i32) {
  // expected-error @+1 {{'tk.return' op returns 1 values but the kernel returns 0}}
  tk.return %x : i32
}

// -----

// expected-error @+1 {{'tk.divisibility' of argument 0 must be a positive power-of-two integer, not 12 : i32}}
tk.func @divisibility_not_power_of_two(%x: !tk.ptr<f32> {tk.divisibility = 12 : i32}) {
  tk.return
}

// -----

// expected-error @+1 {{'tk.divisibility' of argument 1 must be a positive power-of-two integer, not 0 : i32}}
tk.func @divisibility_zero(%n: i32, %x: !tk.ptr<f32> {tk.divisibility = 0 : i32}) {
  tk.return
}

// -----

// expected-error @+1 {{'tk.divisibility' of argument 1 applies to pointers and integers, not 'f32'}}
tk.func @divisibility_on_float(%x: !tk.ptr<f32>, %s: f32 {tk.divisibility = 16 : i32}) {
  tk.return
}

// -----

// A kernel without a body is refused for that; its argument attributes are
// checked against its signature, as there is no block to hold the arguments.
// expected-error @+1 {{'tk.func' op a kernel needs a body}}
tk.func @no_body(%x: !tk.ptr<f32> {tk.divisibility = 16 : i32})

// -----

// expected-error @+1 {{'tk.divisibility' of argument 0 applies to pointers and integers, not 'f32'}}
tk.func @no_body_float(%s: f32 {tk.divisibility = 16 : i32})

// -----

// expected-error @+1 {{unknown argument attribute 'tk.alignment'}}
tk.func @unknown_arg_attr(%x: !tk.ptr<f32> {tk.alignment = 16 : i32}) {
  tk.return
}

// -----

// expected-error @+1 {{'tk.constexprs' must be a dictionary from name to value}}
tk.func @constexprs_not_dict(%x: !tk.ptr<f32>) attributes {tk.constexprs = [1024 : i32]} {
  tk.return
}

// -----

// expected-error @+1 {{constexpr 'BLOCK' must be an integer, float or bool, not "big"}}
tk.func @constexprs_bad_value(%x: !tk.ptr<f32>) attributes {tk.constexprs = {BLOCK = "big"}} {
  tk.return
}

// -----

// expected-error @+1 {{'tk.arg_names' names 1 arguments but the kernel has 2}}
tk.func @arg_names_count(%x: !tk.ptr<f32>, %n: i32) attributes {tk.arg_names = ["x"]} {
  tk.return
}

// -----

// expected-error @+1 {{'tk.arg_names' must be an array of strings}}
tk.func @arg_names_not_strings(%x: !tk.ptr<f32>) attributes {tk.arg_names = [0 : i32]} {
  tk.return
}

// -----

tk.func @constexprs_elsewhere() {
  // expected-error @+1 {{'tk.constexprs' belongs on a tk.func}}
  %c = arith.constant {tk.constexprs = {BLOCK = 16 : i32}} 0 : i32
  tk.return
}

// -----

// expected-error @+1 {{!tk.ptr points to i1, i8, i16, i32, i64, f8E4M3FN, f8E5M2, f16, bf16, f32, f64 or a tile of them, not 'index'}}
tk.func @ptr_to_index(%x: !tk.ptr<index>) {
  tk.return
}

// -----

// expected-error @+1 {{a block pointer points to a statically shaped tile of scalars, not 'tensor<?x32xf16>'}}
tk.func @block_ptr_dynamic(%x: !tk.ptr<tensor<?x32xf16>>) {
  tk.return
}
