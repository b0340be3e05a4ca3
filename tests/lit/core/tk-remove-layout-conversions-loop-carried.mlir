// RUN: tk-opt %s --split-input-file --tk-rewrite-block-pointers --tk-hoist-loop-invariants --tk-assign-linear-layouts="target=amd-rdna3 num-warps=4" --tk-remove-layout-conversions --tk-dot-operand-layouts --tk-remove-layout-conversions | FileCheck %s
//
// A K loop split in two (whole slices unmasked, the cut one masked) whose
// pointer walks go on from the first loop into the second: the masked loads
// take another layout than the 16-byte ones, so the second loop's pointers
// were converted on every trip, through workgroup memory (a tile of
// pointers is no thread's to hand over in registers). The second loop now
// carries them in its loads' layout: each walk is converted once, between
// the loops, and advances in the new layout. The first loop is untouched.
// (The conformance case matmul_walk_across_loops, gfx1100's pipeline.)

// CHECK-LABEL: tk.func @walk_across_loops
// CHECK: %[[FIRST:.+]]:3 = scf.for {{.*}} -> (tensor<64x64xf32, #[[ACC:linear[0-9]*]]>, tensor<64x32x!tk.ptr<f16>, #[[A1:linear[0-9]*]]>, tensor<32x64x!tk.ptr<f16>, #[[B1:linear[0-9]*]]>)
// CHECK-NOT: tkw.convert_layout
// CHECK: scf.yield
// CHECK: %[[A:.+]] = tkw.convert_layout %[[FIRST]]#1 : tensor<64x32x!tk.ptr<f16>, #[[A1]]> -> tensor<64x32x!tk.ptr<f16>, #[[A2:linear[0-9]*]]>
// CHECK-NEXT: %[[B:.+]] = tkw.convert_layout %[[FIRST]]#2 : tensor<32x64x!tk.ptr<f16>, #[[B1]]> -> tensor<32x64x!tk.ptr<f16>, #[[B2:linear[0-9]*]]>
// CHECK-NEXT: scf.for {{.*}} iter_args(%{{.*}} = %[[FIRST]]#0, %[[PA:.+]] = %[[A]], %[[PB:.+]] = %[[B]]) -> (tensor<64x64xf32, #[[ACC]]>, tensor<64x32x!tk.ptr<f16>, #[[A2]]>, tensor<32x64x!tk.ptr<f16>, #[[B2]]>)
// CHECK-NOT: tkw.convert_layout
// CHECK-DAG: tk.load %[[PA]], {{.*}} : tensor<64x32x!tk.ptr<f16>, #[[A2]]>
// CHECK-DAG: tk.load %[[PB]], {{.*}} : tensor<32x64x!tk.ptr<f16>, #[[B2]]>
// CHECK-DAG: %[[NA:.+]] = tk.addptr %[[PA]], {{.*}} : tensor<64x32x!tk.ptr<f16>, #[[A2]]>
// CHECK-DAG: %[[NB:.+]] = tk.addptr %[[PB]], {{.*}} : tensor<32x64x!tk.ptr<f16>, #[[B2]]>
// CHECK: scf.yield %{{.+}}, %[[NA]], %[[NB]]
tk.func @walk_across_loops(%arg0: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg1: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg2: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32 {tk.divisibility = 16 : i32}, %arg7: i32 {tk.divisibility = 16 : i32}, %arg8: i32 {tk.divisibility = 16 : i32}) {
  %c64_i32 = arith.constant 64 : i32
  %0 = arith.addi %arg4, %c64_i32 : i32
  %c1_i32 = arith.constant 1 : i32
  %1 = arith.subi %0, %c1_i32 : i32
  %c64_i32_0 = arith.constant 64 : i32
  %2 = arith.divsi %1, %c64_i32_0 : i32
  %3 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %4 = tk.program_id 0 : i32
  %5 = arith.divsi %4, %2 : i32
  %c64_i32_1 = arith.constant 64 : i32
  %6 = arith.muli %5, %c64_i32_1 : i32
  %7 = tk.splat %6 : i32 -> tensor<64xi32>
  %8 = arith.addi %7, %3 : tensor<64xi32>
  %9 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %10 = tk.program_id 0 : i32
  %11 = arith.remsi %10, %2 : i32
  %c64_i32_2 = arith.constant 64 : i32
  %12 = arith.muli %11, %c64_i32_2 : i32
  %13 = tk.splat %12 : i32 -> tensor<64xi32>
  %14 = arith.addi %13, %9 : tensor<64xi32>
  %15 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %16 = tk.expand_dims %8 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %17 = tk.splat %arg3 : i32 -> tensor<64x1xi32>
  %18 = arith.cmpi slt, %16, %17 : tensor<64x1xi32>
  %19 = tk.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %20 = tk.splat %arg4 : i32 -> tensor<1x64xi32>
  %21 = arith.cmpi slt, %19, %20 : tensor<1x64xi32>
  %22 = tk.expand_dims %15 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %23 = tk.expand_dims %8 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %24 = tk.splat %arg6 : i32 -> tensor<64x1xi32>
  %25 = arith.muli %23, %24 : tensor<64x1xi32>
  %26 = tk.splat %arg0 : !tk.ptr<f16> -> tensor<64x1x!tk.ptr<f16>>
  %27 = tk.addptr %26, %25 : tensor<64x1x!tk.ptr<f16>>, tensor<64x1xi32>
  %28 = tk.broadcast %27 : tensor<64x1x!tk.ptr<f16>> -> tensor<64x32x!tk.ptr<f16>>
  %29 = tk.broadcast %22 : tensor<1x32xi32> -> tensor<64x32xi32>
  %30 = tk.addptr %28, %29 : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
  %31 = tk.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %32 = tk.expand_dims %15 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %33 = tk.splat %arg7 : i32 -> tensor<32x1xi32>
  %34 = arith.muli %32, %33 : tensor<32x1xi32>
  %35 = tk.splat %arg1 : !tk.ptr<f16> -> tensor<32x1x!tk.ptr<f16>>
  %36 = tk.addptr %35, %34 : tensor<32x1x!tk.ptr<f16>>, tensor<32x1xi32>
  %37 = tk.broadcast %36 : tensor<32x1x!tk.ptr<f16>> -> tensor<32x64x!tk.ptr<f16>>
  %38 = tk.broadcast %31 : tensor<1x64xi32> -> tensor<32x64xi32>
  %39 = tk.addptr %37, %38 : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %c32_i32 = arith.constant 32 : i32
  %40 = arith.divsi %arg5, %c32_i32 : i32
  %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32_3 = arith.constant 1 : i32
  %41:3 = scf.for %arg9 = %c0_i32 to %40 step %c1_i32_3 iter_args(%arg10 = %cst, %arg11 = %30, %arg12 = %39) -> (tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>)  : i32 {
    %59 = tk.broadcast %18 : tensor<64x1xi1> -> tensor<64x32xi1>
    %cst_8 = arith.constant dense<0.000000e+00> : tensor<64x32xf16>
    %60 = tk.load %arg11, %59, %cst_8 : tensor<64x32x!tk.ptr<f16>>
    %61 = tk.broadcast %21 : tensor<1x64xi1> -> tensor<32x64xi1>
    %cst_9 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %62 = tk.load %arg12, %61, %cst_9 : tensor<32x64x!tk.ptr<f16>>
    %63 = tk.dot %60, %62, %arg10 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %cst_10 = arith.constant dense<32> : tensor<64x32xi32>
    %64 = tk.addptr %arg11, %cst_10 : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
    %c32_i32_11 = arith.constant 32 : i32
    %65 = arith.muli %arg7, %c32_i32_11 : i32
    %66 = tk.splat %65 : i32 -> tensor<32x64xi32>
    %67 = tk.addptr %arg12, %66 : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
    scf.yield %63, %64, %67 : tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>
  }
  %c32_i32_4 = arith.constant 32 : i32
  %42 = arith.addi %arg5, %c32_i32_4 : i32
  %c1_i32_5 = arith.constant 1 : i32
  %43 = arith.subi %42, %c1_i32_5 : i32
  %c32_i32_6 = arith.constant 32 : i32
  %44 = arith.divsi %43, %c32_i32_6 : i32
  %c1_i32_7 = arith.constant 1 : i32
  %45:3 = scf.for %arg9 = %40 to %44 step %c1_i32_7 iter_args(%arg10 = %41#0, %arg11 = %41#1, %arg12 = %41#2) -> (tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>)  : i32 {
    %c32_i32_8 = arith.constant 32 : i32
    %59 = arith.muli %arg9, %c32_i32_8 : i32
    %60 = arith.subi %arg5, %59 : i32
    %61 = tk.expand_dims %15 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %62 = tk.splat %60 : i32 -> tensor<1x32xi32>
    %63 = arith.cmpi slt, %61, %62 : tensor<1x32xi32>
    %64 = tk.broadcast %18 : tensor<64x1xi1> -> tensor<64x32xi1>
    %65 = tk.broadcast %63 : tensor<1x32xi1> -> tensor<64x32xi1>
    %66 = arith.andi %64, %65 : tensor<64x32xi1>
    %67 = tk.expand_dims %15 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %68 = tk.splat %60 : i32 -> tensor<32x1xi32>
    %69 = arith.cmpi slt, %67, %68 : tensor<32x1xi32>
    %70 = tk.broadcast %69 : tensor<32x1xi1> -> tensor<32x64xi1>
    %71 = tk.broadcast %21 : tensor<1x64xi1> -> tensor<32x64xi1>
    %72 = arith.andi %70, %71 : tensor<32x64xi1>
    %cst_9 = arith.constant dense<0.000000e+00> : tensor<64x32xf16>
    %73 = tk.load %arg11, %66, %cst_9 : tensor<64x32x!tk.ptr<f16>>
    %cst_10 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %74 = tk.load %arg12, %72, %cst_10 : tensor<32x64x!tk.ptr<f16>>
    %75 = tk.dot %73, %74, %arg10 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %cst_11 = arith.constant dense<32> : tensor<64x32xi32>
    %76 = tk.addptr %arg11, %cst_11 : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
    %c32_i32_12 = arith.constant 32 : i32
    %77 = arith.muli %arg7, %c32_i32_12 : i32
    %78 = tk.splat %77 : i32 -> tensor<32x64xi32>
    %79 = tk.addptr %arg12, %78 : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
    scf.yield %75, %76, %79 : tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>
  }
  %46 = tk.broadcast %18 : tensor<64x1xi1> -> tensor<64x64xi1>
  %47 = tk.broadcast %21 : tensor<1x64xi1> -> tensor<64x64xi1>
  %48 = arith.andi %46, %47 : tensor<64x64xi1>
  %49 = arith.truncf %45#0 : tensor<64x64xf32> to tensor<64x64xf16>
  %50 = tk.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %51 = tk.expand_dims %8 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %52 = tk.splat %arg8 : i32 -> tensor<64x1xi32>
  %53 = arith.muli %51, %52 : tensor<64x1xi32>
  %54 = tk.splat %arg2 : !tk.ptr<f16> -> tensor<64x1x!tk.ptr<f16>>
  %55 = tk.addptr %54, %53 : tensor<64x1x!tk.ptr<f16>>, tensor<64x1xi32>
  %56 = tk.broadcast %55 : tensor<64x1x!tk.ptr<f16>> -> tensor<64x64x!tk.ptr<f16>>
  %57 = tk.broadcast %50 : tensor<1x64xi32> -> tensor<64x64xi32>
  %58 = tk.addptr %56, %57 : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  tk.store %58, %49, %48 : tensor<64x64x!tk.ptr<f16>>
  tk.return
}

// -----

// The same, with the second walk's last pointers used after the loop (a
// store through them): the loop's result, carried in the new layout, is
// converted back after the loop for that use; the store then takes the
// loop's layout itself (its zeros are computed again in it), and neither
// conversion remains.
// CHECK-LABEL: tk.func @walk_used_after_loops
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: %[[SECOND:.+]]:3 = scf.for {{.*}} -> (tensor<64x64xf32, #{{.*}}>, tensor<64x32x!tk.ptr<f16>, #[[A2:linear[0-9]*]]>, tensor<32x64x!tk.ptr<f16>, #[[B2:linear[0-9]*]]>)
// CHECK-NOT: tkw.convert_layout
// CHECK: scf.yield
// CHECK-NOT: tkw.convert_layout %[[SECOND]]
// CHECK: tk.store %[[SECOND]]#2, %{{.+}} : tensor<32x64x!tk.ptr<f16>, #[[B2]]>
tk.func @walk_used_after_loops(%arg0: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg1: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg2: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg3: i32, %arg4: i32, %arg5: i32, %arg6: i32 {tk.divisibility = 16 : i32}, %arg7: i32 {tk.divisibility = 16 : i32}, %arg8: i32 {tk.divisibility = 16 : i32}) {
  %c64_i32 = arith.constant 64 : i32
  %0 = arith.addi %arg4, %c64_i32 : i32
  %c1_i32 = arith.constant 1 : i32
  %1 = arith.subi %0, %c1_i32 : i32
  %c64_i32_0 = arith.constant 64 : i32
  %2 = arith.divsi %1, %c64_i32_0 : i32
  %3 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %4 = tk.program_id 0 : i32
  %5 = arith.divsi %4, %2 : i32
  %c64_i32_1 = arith.constant 64 : i32
  %6 = arith.muli %5, %c64_i32_1 : i32
  %7 = tk.splat %6 : i32 -> tensor<64xi32>
  %8 = arith.addi %7, %3 : tensor<64xi32>
  %9 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
  %10 = tk.program_id 0 : i32
  %11 = arith.remsi %10, %2 : i32
  %c64_i32_2 = arith.constant 64 : i32
  %12 = arith.muli %11, %c64_i32_2 : i32
  %13 = tk.splat %12 : i32 -> tensor<64xi32>
  %14 = arith.addi %13, %9 : tensor<64xi32>
  %15 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
  %16 = tk.expand_dims %8 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %17 = tk.splat %arg3 : i32 -> tensor<64x1xi32>
  %18 = arith.cmpi slt, %16, %17 : tensor<64x1xi32>
  %19 = tk.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %20 = tk.splat %arg4 : i32 -> tensor<1x64xi32>
  %21 = arith.cmpi slt, %19, %20 : tensor<1x64xi32>
  %22 = tk.expand_dims %15 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
  %23 = tk.expand_dims %8 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %24 = tk.splat %arg6 : i32 -> tensor<64x1xi32>
  %25 = arith.muli %23, %24 : tensor<64x1xi32>
  %26 = tk.splat %arg0 : !tk.ptr<f16> -> tensor<64x1x!tk.ptr<f16>>
  %27 = tk.addptr %26, %25 : tensor<64x1x!tk.ptr<f16>>, tensor<64x1xi32>
  %28 = tk.broadcast %27 : tensor<64x1x!tk.ptr<f16>> -> tensor<64x32x!tk.ptr<f16>>
  %29 = tk.broadcast %22 : tensor<1x32xi32> -> tensor<64x32xi32>
  %30 = tk.addptr %28, %29 : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
  %31 = tk.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %32 = tk.expand_dims %15 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
  %33 = tk.splat %arg7 : i32 -> tensor<32x1xi32>
  %34 = arith.muli %32, %33 : tensor<32x1xi32>
  %35 = tk.splat %arg1 : !tk.ptr<f16> -> tensor<32x1x!tk.ptr<f16>>
  %36 = tk.addptr %35, %34 : tensor<32x1x!tk.ptr<f16>>, tensor<32x1xi32>
  %37 = tk.broadcast %36 : tensor<32x1x!tk.ptr<f16>> -> tensor<32x64x!tk.ptr<f16>>
  %38 = tk.broadcast %31 : tensor<1x64xi32> -> tensor<32x64xi32>
  %39 = tk.addptr %37, %38 : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
  %c32_i32 = arith.constant 32 : i32
  %40 = arith.divsi %arg5, %c32_i32 : i32
  %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0_i32 = arith.constant 0 : i32
  %c1_i32_3 = arith.constant 1 : i32
  %41:3 = scf.for %arg9 = %c0_i32 to %40 step %c1_i32_3 iter_args(%arg10 = %cst, %arg11 = %30, %arg12 = %39) -> (tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>)  : i32 {
    %59 = tk.broadcast %18 : tensor<64x1xi1> -> tensor<64x32xi1>
    %cst_8 = arith.constant dense<0.000000e+00> : tensor<64x32xf16>
    %60 = tk.load %arg11, %59, %cst_8 : tensor<64x32x!tk.ptr<f16>>
    %61 = tk.broadcast %21 : tensor<1x64xi1> -> tensor<32x64xi1>
    %cst_9 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %62 = tk.load %arg12, %61, %cst_9 : tensor<32x64x!tk.ptr<f16>>
    %63 = tk.dot %60, %62, %arg10 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %cst_10 = arith.constant dense<32> : tensor<64x32xi32>
    %64 = tk.addptr %arg11, %cst_10 : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
    %c32_i32_11 = arith.constant 32 : i32
    %65 = arith.muli %arg7, %c32_i32_11 : i32
    %66 = tk.splat %65 : i32 -> tensor<32x64xi32>
    %67 = tk.addptr %arg12, %66 : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
    scf.yield %63, %64, %67 : tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>
  }
  %c32_i32_4 = arith.constant 32 : i32
  %42 = arith.addi %arg5, %c32_i32_4 : i32
  %c1_i32_5 = arith.constant 1 : i32
  %43 = arith.subi %42, %c1_i32_5 : i32
  %c32_i32_6 = arith.constant 32 : i32
  %44 = arith.divsi %43, %c32_i32_6 : i32
  %c1_i32_7 = arith.constant 1 : i32
  %45:3 = scf.for %arg9 = %40 to %44 step %c1_i32_7 iter_args(%arg10 = %41#0, %arg11 = %41#1, %arg12 = %41#2) -> (tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>)  : i32 {
    %c32_i32_8 = arith.constant 32 : i32
    %59 = arith.muli %arg9, %c32_i32_8 : i32
    %60 = arith.subi %arg5, %59 : i32
    %61 = tk.expand_dims %15 {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
    %62 = tk.splat %60 : i32 -> tensor<1x32xi32>
    %63 = arith.cmpi slt, %61, %62 : tensor<1x32xi32>
    %64 = tk.broadcast %18 : tensor<64x1xi1> -> tensor<64x32xi1>
    %65 = tk.broadcast %63 : tensor<1x32xi1> -> tensor<64x32xi1>
    %66 = arith.andi %64, %65 : tensor<64x32xi1>
    %67 = tk.expand_dims %15 {axis = 1 : i32} : tensor<32xi32> -> tensor<32x1xi32>
    %68 = tk.splat %60 : i32 -> tensor<32x1xi32>
    %69 = arith.cmpi slt, %67, %68 : tensor<32x1xi32>
    %70 = tk.broadcast %69 : tensor<32x1xi1> -> tensor<32x64xi1>
    %71 = tk.broadcast %21 : tensor<1x64xi1> -> tensor<32x64xi1>
    %72 = arith.andi %70, %71 : tensor<32x64xi1>
    %cst_9 = arith.constant dense<0.000000e+00> : tensor<64x32xf16>
    %73 = tk.load %arg11, %66, %cst_9 : tensor<64x32x!tk.ptr<f16>>
    %cst_10 = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
    %74 = tk.load %arg12, %72, %cst_10 : tensor<32x64x!tk.ptr<f16>>
    %75 = tk.dot %73, %74, %arg10 : tensor<64x32xf16> * tensor<32x64xf16> -> tensor<64x64xf32>
    %cst_11 = arith.constant dense<32> : tensor<64x32xi32>
    %76 = tk.addptr %arg11, %cst_11 : tensor<64x32x!tk.ptr<f16>>, tensor<64x32xi32>
    %c32_i32_12 = arith.constant 32 : i32
    %77 = arith.muli %arg7, %c32_i32_12 : i32
    %78 = tk.splat %77 : i32 -> tensor<32x64xi32>
    %79 = tk.addptr %arg12, %78 : tensor<32x64x!tk.ptr<f16>>, tensor<32x64xi32>
    scf.yield %75, %76, %79 : tensor<64x64xf32>, tensor<64x32x!tk.ptr<f16>>, tensor<32x64x!tk.ptr<f16>>
  }
  %46 = tk.broadcast %18 : tensor<64x1xi1> -> tensor<64x64xi1>
  %47 = tk.broadcast %21 : tensor<1x64xi1> -> tensor<64x64xi1>
  %48 = arith.andi %46, %47 : tensor<64x64xi1>
  %49 = arith.truncf %45#0 : tensor<64x64xf32> to tensor<64x64xf16>
  %50 = tk.expand_dims %14 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
  %51 = tk.expand_dims %8 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
  %52 = tk.splat %arg8 : i32 -> tensor<64x1xi32>
  %53 = arith.muli %51, %52 : tensor<64x1xi32>
  %54 = tk.splat %arg2 : !tk.ptr<f16> -> tensor<64x1x!tk.ptr<f16>>
  %55 = tk.addptr %54, %53 : tensor<64x1x!tk.ptr<f16>>, tensor<64x1xi32>
  %56 = tk.broadcast %55 : tensor<64x1x!tk.ptr<f16>> -> tensor<64x64x!tk.ptr<f16>>
  %57 = tk.broadcast %50 : tensor<1x64xi32> -> tensor<64x64xi32>
  %58 = tk.addptr %56, %57 : tensor<64x64x!tk.ptr<f16>>, tensor<64x64xi32>
  tk.store %58, %49, %48 : tensor<64x64x!tk.ptr<f16>>
  %zeros = arith.constant dense<0.000000e+00> : tensor<32x64xf16>
  tk.store %45#2, %zeros : tensor<32x64x!tk.ptr<f16>>
  tk.return
}
