// RUN: tk-opt %s --tk-insert-barriers | FileCheck %s
//
// A loop whose wgmma products run on into the next trip (tkw.pending = 1)
// and whose copies come after its dot: the K loop of
// tk-pipeline-loads-rings.mlir on sm_90a through tk-allocate-shared-memory,
// its ring cut to three slots (Triton's count), the copies moved after the
// dot. The dot's wait ends the previous trip's products, which read the
// slot the copies then fill: in this warp, but maybe not yet in the others,
// so the copies need a barrier of their own after the dot. The barrier
// before the dot (the operands' copies landed) does not order them: the
// products it would have to end were still running when it ran.
//
// CHECK: scf.for
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: tk.dot {{.+}}tkw.pending = 1
// CHECK-NOT: tkw.async_copy
// CHECK: gpu.barrier
// CHECK-NEXT: tkw.async_copy
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield

#linear = #tkw.linear<shape = [64], register = [[1], [2]], lane = [[4], [8], [16], [32], [0]], warp = [[0], [0]]>
#linear1 = #tkw.linear<shape = [64], register = [[1], [2], [4]], lane = [[8], [16], [32], [0], [0]], warp = [[0], [0]]>
#linear2 = #tkw.linear<shape = [64], register = [[8], [16], [32]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]]>
#linear3 = #tkw.linear<shape = [64], register = [[32]], lane = [[0], [0], [1], [2], [4]], warp = [[8], [16]]>
#linear4 = #tkw.linear<shape = [32], register = [[1], [2], [4]], lane = [[8], [16], [0], [0], [0]], warp = [[0], [0]]>
#linear5 = #tkw.linear<shape = [32], register = [[16]], lane = [[0], [0], [0], [1], [2]], warp = [[4], [8]]>
#linear6 = #tkw.linear<shape = [64, 1], register = [[8, 0], [16, 0], [32, 0]], lane = [[0, 0], [0, 0], [0, 0], [0, 0], [1, 0]], warp = [[2, 0], [4, 0]]>
#linear7 = #tkw.linear<shape = [64, 1], register = [[32, 0]], lane = [[0, 0], [0, 0], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>
#linear8 = #tkw.linear<shape = [1, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [0, 0], [0, 0], [0, 0]], warp = [[0, 0], [0, 0]]>
#linear9 = #tkw.linear<shape = [32, 1], register = [[16, 0]], lane = [[0, 0], [0, 0], [0, 0], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]]>
#linear10 = #tkw.linear<shape = [1, 64], register = [[0, 1], [0, 2]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [0, 0]], warp = [[0, 0], [0, 0]]>
#linear11 = #tkw.linear<shape = [1, 64], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [0, 32], [0, 0], [0, 0]], warp = [[0, 0], [0, 0]]>
#linear12 = #tkw.linear<shape = [64, 32], register = [[0, 1], [0, 2], [0, 4], [32, 0]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>
#linear13 = #tkw.linear<shape = [32, 64], register = [[0, 1], [0, 2], [0, 4], [16, 0]], lane = [[0, 8], [0, 16], [0, 32], [1, 0], [2, 0]], warp = [[4, 0], [8, 0]]>
#linear14 = #tkw.linear<shape = [64, 64], register = [[0, 1], [0, 2], [8, 0], [16, 0], [32, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>
#linear15 = #tkw.linear<shape = [64, 64], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>
module {
  tk.func @matmul_k_loop(%arg0: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg1: !tk.ptr<f16> {tk.divisibility = 16 : i32}, %arg2: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %arg3: !tk.ptr<f32> {tk.divisibility = 16 : i32}, %arg4: i32, %arg5: i32 {tk.divisibility = 16 : i32}) attributes {tkw.num_warps = 4 : i32, tkw.shared_memory = 32768 : i64, tkw.target = "cuda-sm90a", tkw.threads_per_warp = 32 : i32} {
    %0 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #linear>
    %1 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #linear1>
    %2 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #linear2>
    %3 = tk.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32, #linear3>
    %4 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #linear4>
    %5 = tk.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32, #linear5>
    %6 = tk.expand_dims %2 {axis = 1 : i32} : tensor<64xi32, #linear2> -> tensor<64x1xi32, #linear6>
    %7 = tk.expand_dims %3 {axis = 1 : i32} : tensor<64xi32, #linear3> -> tensor<64x1xi32, #linear7>
    %8 = tk.expand_dims %4 {axis = 0 : i32} : tensor<32xi32, #linear4> -> tensor<1x32xi32, #linear8>
    %9 = tk.expand_dims %5 {axis = 1 : i32} : tensor<32xi32, #linear5> -> tensor<32x1xi32, #linear9>
    %10 = tk.expand_dims %0 {axis = 0 : i32} : tensor<64xi32, #linear> -> tensor<1x64xi32, #linear10>
    %11 = tk.expand_dims %1 {axis = 0 : i32} : tensor<64xi32, #linear1> -> tensor<1x64xi32, #linear11>
    %cst = arith.constant dense<32> : tensor<64x1xi32, #linear6>
    %cst_0 = arith.constant dense<32> : tensor<64x1xi32, #linear7>
    %cst_1 = arith.constant dense<64> : tensor<32x1xi32, #linear9>
    %cst_2 = arith.constant dense<64> : tensor<64x1xi32, #linear6>
    %12 = arith.muli %6, %cst : tensor<64x1xi32, #linear6>
    %13 = arith.muli %7, %cst_0 : tensor<64x1xi32, #linear7>
    %14 = tk.broadcast %13 : tensor<64x1xi32, #linear7> -> tensor<64x32xi32, #linear12>
    %15 = tk.broadcast %8 : tensor<1x32xi32, #linear8> -> tensor<64x32xi32, #linear12>
    %16 = arith.addi %14, %15 : tensor<64x32xi32, #linear12>
    %17 = tk.splat %arg0 : !tk.ptr<f16> -> tensor<64x32x!tk.ptr<f16>, #linear12>
    %18 = tk.addptr %17, %16 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi32, #linear12>
    %19 = arith.muli %9, %cst_1 : tensor<32x1xi32, #linear9>
    %20 = tk.broadcast %19 : tensor<32x1xi32, #linear9> -> tensor<32x64xi32, #linear13>
    %21 = tk.broadcast %11 : tensor<1x64xi32, #linear11> -> tensor<32x64xi32, #linear13>
    %22 = arith.addi %20, %21 : tensor<32x64xi32, #linear13>
    %23 = tk.splat %arg1 : !tk.ptr<f16> -> tensor<32x64x!tk.ptr<f16>, #linear13>
    %24 = tk.addptr %23, %22 : tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi32, #linear13>
    %25 = arith.muli %6, %cst_2 : tensor<64x1xi32, #linear6>
    %26 = tk.broadcast %25 : tensor<64x1xi32, #linear6> -> tensor<64x64xi32, #linear14>
    %27 = tk.broadcast %10 : tensor<1x64xi32, #linear10> -> tensor<64x64xi32, #linear14>
    %28 = arith.addi %26, %27 : tensor<64x64xi32, #linear14>
    %29 = tk.splat %arg2 : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>, #linear14>
    %30 = tk.addptr %29, %28 : tensor<64x64x!tk.ptr<f32>, #linear14>, tensor<64x64xi32, #linear14>
    %cst_3 = arith.constant dense<32> : tensor<64x32xi32, #linear12>
    %cst_4 = arith.constant dense<2048> : tensor<32x64xi32, #linear13>
    %cst_5 = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #linear15>
    %cst_6 = arith.constant dense<0.000000e+00> : tensor<64x32xf16, #linear12>
    %cst_7 = arith.constant dense<0.000000e+00> : tensor<32x64xf16, #linear13>
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %c32_i32 = arith.constant 32 : i32
    %31 = tkw.local_alloc {tkw.scratch = array<i64: 0, 16384>} : <3, [64, 32], f16, #tkw.nvmma<swizzle = 64, order = [1, 0]>>
    %32 = tkw.local_alloc {tkw.scratch = array<i64: 16384, 16384>} : <3, [32, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>
    %c0_i32_8 = arith.constant 0 : i32
    %33 = arith.cmpi slt, %c0_i32, %arg4 : i32
    %34 = arith.muli %c0_i32, %c32_i32 : i32
    %35 = arith.subi %arg5, %34 : i32
    %36 = tk.splat %35 : i32 -> tensor<1x32xi32, #linear8>
    %37 = arith.cmpi slt, %8, %36 : tensor<1x32xi32, #linear8>
    %38 = tk.broadcast %37 : tensor<1x32xi1, #linear8> -> tensor<64x32xi1, #linear12>
    %39 = tk.splat %33 : i1 -> tensor<64x32xi1, #linear12>
    %40 = arith.andi %38, %39 : tensor<64x32xi1, #linear12>
    tkw.async_copy %18, %40 into %31[%c0_i32_8] : <3, [64, 32], f16, #tkw.nvmma<swizzle = 64, order = [1, 0]>>, tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi1, #linear12>
    %41 = tk.splat %35 : i32 -> tensor<32x1xi32, #linear9>
    %42 = arith.cmpi slt, %9, %41 : tensor<32x1xi32, #linear9>
    %43 = tk.broadcast %42 : tensor<32x1xi1, #linear9> -> tensor<32x64xi1, #linear13>
    %44 = tk.splat %33 : i1 -> tensor<32x64xi1, #linear13>
    %45 = arith.andi %43, %44 : tensor<32x64xi1, #linear13>
    tkw.async_copy %24, %45 into %32[%c0_i32_8] : <3, [32, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi1, #linear13>
    tkw.async_commit
    %46 = tk.addptr %24, %cst_4 : tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi32, #linear13>
    %47 = tk.addptr %18, %cst_3 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi32, #linear12>
    %c1_i32_9 = arith.constant 1 : i32
    %48 = arith.muli %c1_i32, %c1_i32_9 : i32
    %49 = arith.addi %c0_i32, %48 : i32
    %c1_i32_10 = arith.constant 1 : i32
    %50 = arith.cmpi slt, %49, %arg4 : i32
    %51 = arith.muli %49, %c32_i32 : i32
    %52 = arith.subi %arg5, %51 : i32
    %53 = tk.splat %52 : i32 -> tensor<1x32xi32, #linear8>
    %54 = arith.cmpi slt, %8, %53 : tensor<1x32xi32, #linear8>
    %55 = tk.broadcast %54 : tensor<1x32xi1, #linear8> -> tensor<64x32xi1, #linear12>
    %56 = tk.splat %50 : i1 -> tensor<64x32xi1, #linear12>
    %57 = arith.andi %55, %56 : tensor<64x32xi1, #linear12>
    tkw.async_copy %47, %57 into %31[%c1_i32_10] : <3, [64, 32], f16, #tkw.nvmma<swizzle = 64, order = [1, 0]>>, tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi1, #linear12>
    %58 = tk.splat %52 : i32 -> tensor<32x1xi32, #linear9>
    %59 = arith.cmpi slt, %9, %58 : tensor<32x1xi32, #linear9>
    %60 = tk.broadcast %59 : tensor<32x1xi1, #linear9> -> tensor<32x64xi1, #linear13>
    %61 = tk.splat %50 : i1 -> tensor<32x64xi1, #linear13>
    %62 = arith.andi %60, %61 : tensor<32x64xi1, #linear13>
    tkw.async_copy %46, %62 into %32[%c1_i32_10] : <3, [32, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi1, #linear13>
    tkw.async_commit
    %63 = tk.addptr %46, %cst_4 : tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi32, #linear13>
    %64 = tk.addptr %47, %cst_3 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi32, #linear12>
    %c0_i32_11 = arith.constant 0 : i32
    %65 = arith.cmpi slt, %c0_i32, %arg4 : i32
    %66:6 = scf.if %65 -> (tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x64xf32, #linear15>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x32x!tk.ptr<f16>, #linear12>, i32) {
      %70:6 = scf.for %arg6 = %c0_i32 to %arg4 step %c1_i32 iter_args(%arg7 = %18, %arg8 = %24, %arg9 = %cst_5, %arg10 = %63, %arg11 = %64, %arg12 = %c0_i32_11) -> (tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x64xf32, #linear15>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x32x!tk.ptr<f16>, #linear12>, i32)  : i32 {
        tkw.async_wait pending = 1
        %c4_i32 = arith.constant 3 : i32
        %c2_i32 = arith.constant 2 : i32
        %72 = arith.addi %arg12, %c2_i32 : i32
        %73 = arith.remui %72, %c4_i32 : i32
        %c2_i32_12 = arith.constant 2 : i32
        %74 = arith.muli %c1_i32, %c2_i32_12 : i32
        %75 = arith.addi %arg6, %74 : i32
        %76 = tk.addptr %arg10, %cst_4 : tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi32, #linear13>
        %77 = tk.addptr %arg11, %cst_3 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi32, #linear12>
        %c4_i32_13 = arith.constant 3 : i32
        %c1_i32_14 = arith.constant 1 : i32
        %78 = arith.addi %arg12, %c1_i32_14 : i32
        %79 = arith.remui %78, %c4_i32_13 : i32
        %80 = arith.muli %arg6, %c32_i32 : i32
        %81 = arith.subi %arg5, %80 : i32
        %82 = tk.splat %81 : i32 -> tensor<1x32xi32, #linear8>
        %83 = arith.cmpi slt, %8, %82 : tensor<1x32xi32, #linear8>
        %84 = tk.broadcast %83 : tensor<1x32xi1, #linear8> -> tensor<64x32xi1, #linear12>
        %85 = tk.splat %81 : i32 -> tensor<32x1xi32, #linear9>
        %86 = arith.cmpi slt, %9, %85 : tensor<32x1xi32, #linear9>
        %87 = tk.broadcast %86 : tensor<32x1xi1, #linear9> -> tensor<32x64xi1, #linear13>
        %88 = tk.load %30 : tensor<64x64x!tk.ptr<f32>, #linear14>
        %89 = tkw.local_load %31[%arg12] : <3, [64, 32], f16, #tkw.nvmma<swizzle = 64, order = [1, 0]>> -> tensor<64x32xf16, #linear12>
        %90 = tkw.local_load %32[%arg12] : <3, [32, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>> -> tensor<32x64xf16, #linear13>
        %91 = tk.dot %89, %90, %arg9 {tkw.intrinsic = "wgmma.m64nNk16.f32.f16", tkw.pending = 1 : i64} : tensor<64x32xf16, #linear12> * tensor<32x64xf16, #linear13> -> tensor<64x64xf32, #linear15>
        %92 = tk.addptr %arg7, %cst_3 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi32, #linear12>
        %93 = tk.addptr %arg8, %cst_4 : tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi32, #linear13>
        %94 = arith.cmpi slt, %75, %arg4 : i32
        %95 = arith.muli %75, %c32_i32 : i32
        %96 = arith.subi %arg5, %95 : i32
        %97 = tk.splat %96 : i32 -> tensor<1x32xi32, #linear8>
        %98 = arith.cmpi slt, %8, %97 : tensor<1x32xi32, #linear8>
        %99 = tk.broadcast %98 : tensor<1x32xi1, #linear8> -> tensor<64x32xi1, #linear12>
        %100 = tk.splat %94 : i1 -> tensor<64x32xi1, #linear12>
        %101 = arith.andi %99, %100 : tensor<64x32xi1, #linear12>
        tkw.async_copy %arg11, %101 into %31[%73] : <3, [64, 32], f16, #tkw.nvmma<swizzle = 64, order = [1, 0]>>, tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<64x32xi1, #linear12>
        %102 = tk.splat %96 : i32 -> tensor<32x1xi32, #linear9>
        %103 = arith.cmpi slt, %9, %102 : tensor<32x1xi32, #linear9>
        %104 = tk.broadcast %103 : tensor<32x1xi1, #linear9> -> tensor<32x64xi1, #linear13>
        %105 = tk.splat %94 : i1 -> tensor<32x64xi1, #linear13>
        %106 = arith.andi %104, %105 : tensor<32x64xi1, #linear13>
        tkw.async_copy %arg10, %106 into %32[%73] : <3, [32, 64], f16, #tkw.nvmma<swizzle = 128, order = [1, 0]>>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<32x64xi1, #linear13>
        tkw.async_commit
        scf.yield %92, %93, %91, %76, %77, %79 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x64xf32, #linear15>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x32x!tk.ptr<f16>, #linear12>, i32
      }
      %71 = tkw.dot_wait %70#2 pending = 0 : tensor<64x64xf32, #linear15>
      scf.yield %70#0, %70#1, %71, %70#3, %70#4, %70#5 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x64xf32, #linear15>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x32x!tk.ptr<f16>, #linear12>, i32
    } else {
      scf.yield %18, %24, %cst_5, %63, %64, %c0_i32_11 : tensor<64x32x!tk.ptr<f16>, #linear12>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x64xf32, #linear15>, tensor<32x64x!tk.ptr<f16>, #linear13>, tensor<64x32x!tk.ptr<f16>, #linear12>, i32
    }
    tkw.async_wait pending = 0
    %67 = tkw.convert_layout %66#2 {tkw.scratch = array<i64: 0, 8192>} : tensor<64x64xf32, #linear15> -> tensor<64x64xf32, #linear14>
    %68 = tk.splat %arg3 : !tk.ptr<f32> -> tensor<64x64x!tk.ptr<f32>, #linear14>
    %69 = tk.addptr %68, %28 : tensor<64x64x!tk.ptr<f32>, #linear14>, tensor<64x64xi32, #linear14>
    tk.store %69, %67 : tensor<64x64x!tk.ptr<f32>, #linear14>
    tk.return
  }
}

