// RUN: tk-opt %s -split-input-file -verify-diagnostics
//
// Malformed uses of the tk ops: each case is rejected by the op's verifier
// with a message that says what it expected. Where the custom syntax would
// infer the offending type, the op is written in MLIR's generic form.

//===----------------------------------------------------------------------===//
// Program position
//===----------------------------------------------------------------------===//

tk.func @program_id_axis() {
  // expected-error @+1 {{'tk.program_id' op axis must be 0, 1 or 2, not 3}}
  %0 = tk.program_id 3 : i32
  tk.return
}

// -----

tk.func @num_programs_axis() {
  // expected-error @+1 {{'tk.num_programs' op axis must be 0, 1 or 2, not 3}}
  %0 = tk.num_programs 3 : i32
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// make_range
//===----------------------------------------------------------------------===//

tk.func @range_not_power_of_two() {
  // expected-error @+1 {{'tk.make_range' op range size 100 must be a power of two}}
  %0 = tk.make_range {start = 0 : i32, end = 100 : i32} : tensor<100xi32>
  tk.return
}

// -----

tk.func @range_empty() {
  // expected-error @+1 {{'tk.make_range' op end (16) must be greater than start (16)}}
  %0 = tk.make_range {start = 16 : i32, end = 16 : i32} : tensor<1xi32>
  tk.return
}

// -----

tk.func @range_backwards() {
  // expected-error @+1 {{'tk.make_range' op end (0) must be greater than start (64)}}
  %0 = tk.make_range {start = 64 : i32, end = 0 : i32} : tensor<64xi32>
  tk.return
}

// -----

tk.func @range_result_size() {
  // expected-error @+1 {{'tk.make_range' op result must be 'tensor<128xi32>', not 'tensor<64xi32>'}}
  %0 = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<64xi32>
  tk.return
}

// -----

// The bounds are signed i32: a negative bound must not read as a huge one.
tk.func @range_negative_bounds() {
  // expected-error @+1 {{'tk.make_range' op end (-8) must be greater than start (8)}}
  %0 = tk.make_range {start = 8 : i32, end = -8 : i32} : tensor<16xi32>
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

tk.func @splat_dtype(%x: f32) {
  // expected-error @+1 {{'tk.splat' op result element type 'f16' differs from the scalar's type 'f32'}}
  %0 = tk.splat %x : f32 -> tensor<128xf16>
  tk.return
}

// -----

tk.func @broadcast_dtype(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<1x64xf32>
  // expected-error @+1 {{'tk.broadcast' op element type changes from 'f32' to 'f16'}}
  %1 = tk.broadcast %0 : tensor<1x64xf32> -> tensor<32x64xf16>
  tk.return
}

// -----

tk.func @broadcast_shape(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<2x64xf32>
  // expected-error @+1 {{'tk.broadcast' op dimension 0 of size 2 cannot broadcast to 32}}
  %1 = tk.broadcast %0 : tensor<2x64xf32> -> tensor<32x64xf32>
  tk.return
}

// -----

tk.func @broadcast_rank(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<64xf32>
  // expected-error @+1 {{'tk.broadcast' op rank changes from 1 to 2; use tk.expand_dims first}}
  %1 = tk.broadcast %0 : tensor<64xf32> -> tensor<32x64xf32>
  tk.return
}

// -----

tk.func @expand_dims_result() {
  %0 = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // expected-error @+1 {{'tk.expand_dims' op result must be 'tensor<128x1xi32>', not 'tensor<1x128xi32>'}}
  %1 = tk.expand_dims %0 {axis = 1 : i32} : tensor<128xi32> -> tensor<1x128xi32>
  tk.return
}

// -----

tk.func @expand_dims_axis() {
  %0 = tk.make_range {start = 0 : i32, end = 128 : i32} : tensor<128xi32>
  // expected-error @+1 {{'tk.expand_dims' op axis 2 is out of range for rank 1}}
  %1 = tk.expand_dims %0 {axis = 2 : i32} : tensor<128xi32> -> tensor<128x1xi32>
  tk.return
}

// -----

tk.func @reshape_count(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<4x32xf32>
  // expected-error @+1 {{'tk.reshape' op result must have the 128 elements of the source, not 64}}
  %1 = tk.reshape %0 : tensor<4x32xf32> -> tensor<64xf32>
  tk.return
}

// -----

tk.func @reshape_dtype(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<4x32xf32>
  // expected-error @+1 {{'tk.reshape' op element type changes from 'f32' to 'i32'}}
  %1 = tk.reshape %0 : tensor<4x32xf32> -> tensor<128xi32>
  tk.return
}

// -----

tk.func @trans_order(%x: f16) {
  %0 = tk.splat %x : f16 -> tensor<64x32xf16>
  // expected-error @+1 {{'tk.trans' op order must be a permutation of the 2 dimensions}}
  %1 = tk.trans %0 {order = array<i32: 1, 1>} : tensor<64x32xf16> -> tensor<32x64xf16>
  tk.return
}

// -----

tk.func @trans_result(%x: f16) {
  %0 = tk.splat %x : f16 -> tensor<64x32xf16>
  // expected-error @+1 {{'tk.trans' op result must be 'tensor<32x64xf16>', not 'tensor<64x32xf16>'}}
  %1 = tk.trans %0 {order = array<i32: 1, 0>} : tensor<64x32xf16> -> tensor<64x32xf16>
  tk.return
}

// -----

tk.func @cat_result(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<32x8xf32>
  // expected-error @+1 {{'tk.cat' op result must be 'tensor<64x8xf32>', not 'tensor<32x16xf32>'}}
  %1 = tk.cat %0, %0 : tensor<32x8xf32> -> tensor<32x16xf32>
  tk.return
}

// -----

tk.func @cat_operands(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<32x8xf32>
  %1 = tk.splat %x : f32 -> tensor<16x8xf32>
  // expected-error @+1 {{'tk.cat' op requires all operands to have the same type}}
  %2 = "tk.cat"(%0, %1) : (tensor<32x8xf32>, tensor<16x8xf32>) -> tensor<48x8xf32>
  tk.return
}

// -----

tk.func @cat_rank0() {
  %0 = arith.constant dense<1.0> : tensor<f32>
  // expected-error @+1 {{'tk.cat' op concatenates along dimension 0, so the operands must have rank 1 or more, not 'tensor<f32>'}}
  %1 = tk.cat %0, %0 : tensor<f32> -> tensor<2xf32>
  tk.return
}

// -----

tk.func @join_result(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<64xf32>
  // expected-error @+1 {{'tk.join' op result must be 'tensor<64x2xf32>', not 'tensor<128xf32>'}}
  %1 = tk.join %0, %0 : tensor<64xf32> -> tensor<128xf32>
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// addptr, load, store
//===----------------------------------------------------------------------===//

tk.func @addptr_offset_shape(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-error @+1 {{'tk.addptr' op expected offset of shape [128] like the pointer, not shape [64]}}
  %2 = tk.addptr %0, %1 : tensor<128x!tk.ptr<f32>>, tensor<64xi32>
  tk.return
}

// -----

tk.func @addptr_scalar_ptr_tile_offset(%p: !tk.ptr<f32>) {
  %0 = tk.make_range {start = 0 : i32, end = 64 : i32} : tensor<64xi32>
  // expected-error @+1 {{'tk.addptr' op expected a scalar offset like the pointer, not a tile of shape [64]}}
  %1 = tk.addptr %p, %0 : !tk.ptr<f32>, tensor<64xi32>
  tk.return
}

// -----

tk.func @load_mask_shape(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = arith.constant dense<true> : tensor<64xi1>
  // expected-error @+1 {{'tk.load' op expected mask of shape [128] like the pointer, not shape [64]}}
  %2 = "tk.load"(%0, %1) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<128x!tk.ptr<f32>>, tensor<64xi1>) -> tensor<128xf32>
  tk.return
}

// -----

tk.func @load_mask_dtype(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = arith.constant dense<1> : tensor<128xi8>
  // expected-error @+1 {{'tk.load' op operand #1 must be 1-bit signless integer or statically shaped tile of 1-bit signless integer, but got 'tensor<128xi8>'}}
  %2 = "tk.load"(%0, %1) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (tensor<128x!tk.ptr<f32>>, tensor<128xi8>) -> tensor<128xf32>
  tk.return
}

// -----

tk.func @load_other_without_mask(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = arith.constant dense<0.0> : tensor<128xf32>
  // expected-error @+1 {{'tk.load' op 'other' needs a mask: it fills the lanes the mask turns off}}
  %2 = "tk.load"(%0, %1) <{operandSegmentSizes = array<i32: 1, 0, 1>}> : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>) -> tensor<128xf32>
  tk.return
}

// -----

tk.func @load_other_type(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = arith.constant dense<true> : tensor<128xi1>
  %2 = arith.constant dense<0.0> : tensor<128xf16>
  // expected-error @+1 {{'tk.load' op other must be 'tensor<128xf32>' (the type of the loaded value), not 'tensor<128xf16>'}}
  %3 = "tk.load"(%0, %1, %2) <{operandSegmentSizes = array<i32: 1, 1, 1>}> : (tensor<128x!tk.ptr<f32>>, tensor<128xi1>, tensor<128xf16>) -> tensor<128xf32>
  tk.return
}

// -----

tk.func @load_result_type(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  // expected-error @+1 {{'tk.load' op result must be 'tensor<128xf32>' (the pointee type), not 'tensor<128xf16>'}}
  %1 = "tk.load"(%0) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (tensor<128x!tk.ptr<f32>>) -> tensor<128xf16>
  tk.return
}

// -----

tk.func @load_scalar_ptr_tile_mask(%p: !tk.ptr<f32>) {
  %0 = arith.constant dense<true> : tensor<4xi1>
  // expected-error @+1 {{'tk.load' op expected a scalar mask like the pointer, not a tile of shape [4]}}
  %1 = "tk.load"(%p, %0) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (!tk.ptr<f32>, tensor<4xi1>) -> f32
  tk.return
}

// -----

tk.func @load_block_ptr_mask(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32, %c: i1) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  // expected-error @+1 {{'tk.load' op a block-pointer access takes boundary_check, not a mask}}
  %1 = tk.load %0, %c : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @store_block_ptr_mask(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32, %c: i1) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  %1 = tk.load %0 : !tk.ptr<tensor<64x32xf16>>
  // expected-error @+1 {{'tk.store' op a block-pointer access takes boundary_check, not a mask}}
  tk.store %0, %1, %c : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @boundary_check_range(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  // expected-error @+1 {{'tk.load' op boundary_check dimension 2 is out of range for a block of rank 2}}
  %1 = tk.load %0 {boundary_check = array<i32: 0, 2>} : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @boundary_check_twice(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  %1 = tk.load %0 : !tk.ptr<tensor<64x32xf16>>
  // expected-error @+1 {{'tk.store' op boundary_check lists dimension 1 twice}}
  tk.store %0, %1 {boundary_check = array<i32: 1, 1>} : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @boundary_check_pointer_tile(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  // expected-error @+1 {{'tk.load' op boundary_check applies to block pointers only}}
  %1 = tk.load %0 {boundary_check = array<i32: 0>} : tensor<128x!tk.ptr<f32>>
  tk.return
}

// -----

tk.func @padding_without_boundary_check(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  // expected-error @+1 {{'tk.load' op padding needs a boundary_check}}
  %1 = tk.load %0 {padding = #tk.padding<zero>} : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @store_value_dtype(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = arith.constant dense<1.0> : tensor<128xf16>
  // expected-error @+1 {{'tk.store' op value must be 'tensor<128xf32>' (the pointee type), not 'tensor<128xf16>'}}
  "tk.store"(%0, %1) : (tensor<128x!tk.ptr<f32>>, tensor<128xf16>) -> ()
  tk.return
}

// -----

tk.func @store_mask_shape(%p: !tk.ptr<f32>) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = arith.constant dense<1.0> : tensor<128xf32>
  %2 = arith.constant dense<true> : tensor<256xi1>
  // expected-error @+1 {{'tk.store' op expected mask of shape [128] like the pointer, not shape [256]}}
  "tk.store"(%0, %1, %2) : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>, tensor<256xi1>) -> ()
  tk.return
}

// -----

tk.func @store_block_ptr_value(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  %1 = arith.constant dense<1.0> : tensor<32x64xf16>
  // expected-error @+1 {{'tk.store' op value must be 'tensor<64x32xf16>' (the pointee type), not 'tensor<32x64xf16>'}}
  "tk.store"(%0, %1) : (!tk.ptr<tensor<64x32xf16>>, tensor<32x64xf16>) -> ()
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// Block pointers
//===----------------------------------------------------------------------===//

tk.func @block_ptr_shape_count(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  // expected-error @+1 {{'tk.make_block_ptr' op has 1 shape values but the block has rank 2}}
  %0 = tk.make_block_ptr %base, [%m], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @block_ptr_strides_count(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  // expected-error @+1 {{'tk.make_block_ptr' op has 3 strides but the block has rank 2}}
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @block_ptr_offsets_count(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  // expected-error @+1 {{'tk.make_block_ptr' op has 1 offsets but the block has rank 2}}
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @block_ptr_order(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  // expected-error @+1 {{'tk.make_block_ptr' op order must be a permutation of the 2 dimensions}}
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 0, 2>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @block_ptr_elem(%base: !tk.ptr<f32>, %m: i64, %k: i64, %o: i32) {
  // expected-error @+1 {{'tk.make_block_ptr' op base points to 'f32' but the block holds 'f16'}}
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f32> -> !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

tk.func @advance_offsets(%base: !tk.ptr<f16>, %m: i64, %k: i64, %o: i32) {
  %0 = tk.make_block_ptr %base, [%m, %k], [%k, %m], [%o, %o] {order = array<i32: 1, 0>} : !tk.ptr<f16> -> !tk.ptr<tensor<64x32xf16>>
  // expected-error @+1 {{'tk.advance' op has 3 offsets but the block has rank 2}}
  %1 = tk.advance %0, [%o, %o, %o] : !tk.ptr<tensor<64x32xf16>>
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

tk.func @dot_rank() {
  %a = arith.constant dense<1.0> : tensor<64xf16>
  %b = arith.constant dense<1.0> : tensor<64x32xf16>
  %c = arith.constant dense<0.0> : tensor<64x32xf32>
  // expected-error @+1 {{'tk.dot' op operands must be 2-D tiles (got ranks 1, 2, 2)}}
  %d = tk.dot %a, %b, %c : tensor<64xf16> * tensor<64x32xf16> -> tensor<64x32xf32>
  tk.return
}

// -----

tk.func @dot_k() {
  %a = arith.constant dense<1.0> : tensor<64x32xf16>
  %b = arith.constant dense<1.0> : tensor<16x64xf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tk.dot' op expected b to have 32 rows (the columns of a), not 16}}
  %d = tk.dot %a, %b, %c : tensor<64x32xf16> * tensor<16x64xf16> -> tensor<64x64xf32>
  tk.return
}

// -----

tk.func @dot_acc_shape() {
  %a = arith.constant dense<1.0> : tensor<64x32xf16>
  %b = arith.constant dense<1.0> : tensor<32x16xf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tk.dot' op expected the accumulator to be 64x16, not 64x64}}
  %d = tk.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x16xf16> -> tensor<64x64xf32>
  tk.return
}

// -----

tk.func @dot_operand_dtypes() {
  %a = arith.constant dense<1.0> : tensor<64x32xf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tk.dot' op operand element types differ: 'f16' and 'bf16'}}
  %d = tk.dot %a, %b, %c : tensor<64x32xf16> * tensor<32x64xbf16> -> tensor<64x64xf32>
  tk.return
}

// -----

tk.func @dot_acc_dtype() {
  %a = arith.constant dense<1.0> : tensor<64x32xbf16>
  %b = arith.constant dense<1.0> : tensor<32x64xbf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf16>
  // expected-error @+1 {{'tk.dot' op cannot multiply 'bf16' inputs into a 'f16' accumulator}}
  %d = tk.dot %a, %b, %c : tensor<64x32xbf16> * tensor<32x64xbf16> -> tensor<64x64xf16>
  tk.return
}

// -----

tk.func @dot_int_acc_dtype() {
  %a = arith.constant dense<1> : tensor<64x32xi8>
  %b = arith.constant dense<1> : tensor<32x64xi8>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tk.dot' op cannot multiply 'i8' inputs into a 'f32' accumulator}}
  %d = tk.dot %a, %b, %c : tensor<64x32xi8> * tensor<32x64xi8> -> tensor<64x64xf32>
  tk.return
}

// -----

tk.func @dot_tf32_on_f16() {
  %a = arith.constant dense<1.0> : tensor<64x32xf16>
  %b = arith.constant dense<1.0> : tensor<32x64xf16>
  %c = arith.constant dense<0.0> : tensor<64x64xf32>
  // expected-error @+1 {{'tk.dot' op input_precision tf32 applies to f32 inputs only}}
  %d = tk.dot %a, %b, %c {input_precision = #tk.input_precision<tf32>} : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// reduce, scan
//===----------------------------------------------------------------------===//

tk.func @reduce_axis(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<64x128xf32>
  // expected-error @+1 {{'tk.reduce' op axis 2 is out of range for rank 2}}
  %1 = tk.reduce(%0 : tensor<64x128xf32>) {axis = 2 : i32} -> tensor<64xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.reduce.return %r : f32
  }
  tk.return
}

// -----

tk.func @scan_axis(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.scan' op axis 1 is out of range for rank 1}}
  %1 = tk.scan(%0 : tensor<128xf32>) {axis = 1 : i32} -> tensor<128xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.scan.return %r : f32
  }
  tk.return
}

// -----

tk.func @reduce_result(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<64x128xf32>
  // expected-error @+1 {{'tk.reduce' op result 0 must be 'tensor<64xf32>', not 'tensor<128xf32>'}}
  %1 = tk.reduce(%0 : tensor<64x128xf32>) {axis = 1 : i32} -> tensor<128xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.reduce.return %r : f32
  }
  tk.return
}

// -----

tk.func @reduce_1d_result(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.reduce' op result 0 must be 'f32', not 'tensor<1xf32>'}}
  %1 = tk.reduce(%0 : tensor<128xf32>) {axis = 0 : i32} -> tensor<1xf32> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.reduce.return %r : f32
  }
  tk.return
}

// -----

tk.func @scan_result(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.scan' op result 0 must be 'tensor<128xf32>', not 'tensor<128xf16>'}}
  %1 = tk.scan(%0 : tensor<128xf32>) {axis = 0 : i32} -> tensor<128xf16> {
  ^bb0(%a: f32, %b: f32):
    %r = arith.addf %a, %b : f32
    tk.scan.return %r : f32
  }
  tk.return
}

// -----

tk.func @reduce_source_shapes(%x: f32, %i: i32) {
  %0 = tk.splat %x : f32 -> tensor<64x128xf32>
  %1 = tk.splat %i : i32 -> tensor<128x64xi32>
  // expected-error @+1 {{'tk.reduce' op all sources must have the same shape}}
  %2:2 = tk.reduce(%0, %1 : tensor<64x128xf32>, tensor<128x64xi32>) {axis = 0 : i32} -> tensor<128xf32>, tensor<64xi32> {
  ^bb0(%av: f32, %ai: i32, %bv: f32, %bi: i32):
    tk.reduce.return %av, %ai : f32, i32
  }
  tk.return
}

// -----

tk.func @reduce_no_sources() {
  // expected-error @+1 {{'tk.reduce' op needs at least one source tile}}
  "tk.reduce"() <{axis = 0 : i32}> ({
  ^bb0:
    "tk.reduce.return"() : () -> ()
  }) : () -> ()
  tk.return
}

// -----

tk.func @combiner_arity(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.reduce' op combiner must take 2 arguments (accumulated, then new values), not 3}}
  %1 = tk.reduce(%0 : tensor<128xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %r = arith.addf %a, %b : f32
    tk.reduce.return %r : f32
  }
  tk.return
}

// -----

tk.func @combiner_arg_type(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.scan' op combiner argument 1 must be 'f32', not 'f16'}}
  %1 = tk.scan(%0 : tensor<128xf32>) {axis = 0 : i32} -> tensor<128xf32> {
  ^bb0(%a: f32, %b: f16):
    tk.scan.return %a : f32
  }
  tk.return
}

// -----

tk.func @combiner_return_count(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.reduce' op combiner must return 1 values, not 2}}
  %1 = tk.reduce(%0 : tensor<128xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    tk.reduce.return %a, %b : f32, f32
  }
  tk.return
}

// -----

tk.func @combiner_return_type(%x: f32) {
  %0 = tk.splat %x : f32 -> tensor<128xf32>
  // expected-error @+1 {{'tk.reduce' op combiner result 0 must be 'f32', not 'i1'}}
  %1 = tk.reduce(%0 : tensor<128xf32>) {axis = 0 : i32} -> f32 {
  ^bb0(%a: f32, %b: f32):
    %r = arith.cmpf olt, %a, %b : f32
    tk.reduce.return %r : i1
  }
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// fp_to_fp
//===----------------------------------------------------------------------===//

tk.func @fp_to_fp_narrowing(%x: f32) {
  // expected-error @+1 {{'tk.fp_to_fp' op narrowing 'f32' to 'f8E4M3FN' needs a rounding mode}}
  %0 = tk.fp_to_fp %x : f32 -> f8E4M3FN
  tk.return
}

// -----

tk.func @fp_to_fp_widening(%x: f8E5M2) {
  // expected-error @+1 {{'tk.fp_to_fp' op widening 'f8E5M2' to 'f16' is exact and takes no rounding mode}}
  %0 = tk.fp_to_fp %x {rounding = #tk.rounding<rtne>} : f8E5M2 -> f16
  tk.return
}

// -----

tk.func @fp_to_fp_same_width(%x: f16) {
  // expected-error @+1 {{'tk.fp_to_fp' op narrowing 'f16' to 'bf16' needs a rounding mode}}
  %0 = tk.fp_to_fp %x : f16 -> bf16
  tk.return
}

// -----

tk.func @fp_to_fp_itself(%x: f16) {
  %0 = tk.splat %x : f16 -> tensor<128xf16>
  // expected-error @+1 {{'tk.fp_to_fp' op converts 'f16' to itself}}
  %1 = tk.fp_to_fp %0 : tensor<128xf16> -> tensor<128xf16>
  tk.return
}

// -----

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

tk.func @atomic_fadd_int(%p: !tk.ptr<i32>, %v: i32) {
  // expected-error @+1 {{'tk.atomic_rmw' op fadd needs a float value, not 'i32'}}
  %0 = tk.atomic_rmw fadd, relaxed, %p, %v : (!tk.ptr<i32>, i32) -> i32
  tk.return
}

// -----

tk.func @atomic_add_float(%p: !tk.ptr<f32>, %v: f32) {
  // expected-error @+1 {{'tk.atomic_rmw' op add needs an integer value, not 'f32' (use fadd for floats)}}
  %0 = tk.atomic_rmw add, relaxed, %p, %v : (!tk.ptr<f32>, f32) -> f32
  tk.return
}

// -----

tk.func @atomic_value_type(%p: !tk.ptr<f32>, %v: f16) {
  // expected-error @+1 {{'tk.atomic_rmw' op value must be 'f32', not 'f16'}}
  %0 = tk.atomic_rmw fadd, relaxed, %p, %v : (!tk.ptr<f32>, f16) -> f16
  tk.return
}

// -----

tk.func @atomic_mask_shape(%p: !tk.ptr<f32>, %v: f32) {
  %0 = tk.splat %p : !tk.ptr<f32> -> tensor<128x!tk.ptr<f32>>
  %1 = tk.splat %v : f32 -> tensor<128xf32>
  %2 = arith.constant dense<true> : tensor<64xi1>
  // expected-error @+1 {{'tk.atomic_rmw' op expected mask of shape [128] like the pointer, not shape [64]}}
  %3 = tk.atomic_rmw fadd, acq_rel, %0, %1, %2 : (tensor<128x!tk.ptr<f32>>, tensor<128xf32>, tensor<64xi1>) -> tensor<128xf32>
  tk.return
}

// -----

tk.func @atomic_cas_i8(%p: !tk.ptr<i8>, %c: i8, %v: i8) {
  // expected-error @+1 {{'tk.atomic_cas' op compare-and-swap works on 16-, 32- or 64-bit values, not 8-bit}}
  %0 = tk.atomic_cas acq_rel, %p, %c, %v : (!tk.ptr<i8>, i8, i8) -> i8
  tk.return
}

// -----

tk.func @atomic_cas_cmp_type(%p: !tk.ptr<i32>, %c: i64, %v: i32) {
  // expected-error @+1 {{'tk.atomic_cas' op compare value must be 'i32', not 'i64'}}
  %0 = tk.atomic_cas acq_rel, %p, %c, %v : (!tk.ptr<i32>, i64, i32) -> i32
  tk.return
}

// -----

tk.func @atomic_rmw_result(%p: !tk.ptr<f32>, %v: f32) {
  // expected-error @+1 {{'tk.atomic_rmw' op result must have the value's type 'f32', not 'f16'}}
  %0 = tk.atomic_rmw fadd, relaxed, %p, %v : (!tk.ptr<f32>, f32) -> f16
  tk.return
}
