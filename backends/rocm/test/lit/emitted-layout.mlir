// RUN: tk-opt %s --tk-hold-accumulators="target=gfx942 target-units=true" --tk-assign-thread-layouts="target=gfx942 target-units=true" | FileCheck %s --check-prefix=WAVE64
// RUN: tk-opt %s --tk-hold-accumulators="target=gfx1100 target-units=true" --tk-assign-thread-layouts="target=gfx1100 target-units=true" | FileCheck %s --check-prefix=WAVE32
// RUN: tk-opt %s --tk-assign-thread-layouts="target=gfx942 target-units=true" -o %t.mlir
// RUN: tk-opt %t.mlir --tk-convert-to-simt="target=gfx942 target-units=true" | FileCheck %s --check-prefix=SIMT
// RUN: sed -e 's/groupThreads = 64/groupThreads = 32/' %t.mlir > %t.lying.mlir
// RUN: not tk-opt %t.lying.mlir --tk-convert-to-simt="target=gfx942 target-units=true" 2>&1 | FileCheck %s --check-prefix=LYING
// RUN: sed -e 's/ {tkw.held = #tkw.held<[^>]*>}//' %t.mlir > %t.missing.mlir
// RUN: not tk-opt %t.missing.mlir --tk-convert-to-simt="target=gfx942 target-units=true" 2>&1 | FileCheck %s --check-prefix=MISSING
//
// A product the matrix cores compute without holding it (here a 256x256
// result, more registers than a wave may hold) is spread over the waves by
// the unit's emit: the instruction's tiles dealt to the waves in turn. The
// unit states that as a layout, which tk-assign-thread-layouts records on
// the dot (#tkw.held with cyclic = true, and no tkw.product) and
// tk-convert-to-simt checks against the unit: it refuses a dot that records
// another layout, or none. (The unit's test checks that emit writes each
// element from the thread the layout states: RocmBackendTest,
// MatrixCoresStateHowTheySpreadAProduct.)

// WAVE64: #frag_acc = #tkw.fragment<"mfma.f32.32x32x8f16", opIdx = 2, sizePerLane = [4, 1], lanesPerWarp = [2, 32], warpsPerFragment = [1, 1], order = [1, 0]>
// WAVE64: tk.dot {{.*}} {tkw.held = #tkw.held<#frag_acc, tile = [32, 32], groupThreads = 64, groups = [1, 1], tilesPerGroup = [1, 1], cyclic = true>}
// WAVE32: #frag_acc = #tkw.fragment<"wmma.f32.16x16x16.f16"
// WAVE32: tk.dot {{.*}} {tkw.held = #tkw.held<#frag_acc, tile = [16, 16], groupThreads = 32, groups = [1, 1], tilesPerGroup = [1, 1], cyclic = true>}
// SIMT: llvm.call_intrinsic "llvm.amdgcn.mfma.f32.32x32x8f16"
// LYING: error: 'tk.dot' op tk-convert-to-simt: thread layout #tkw.held<{{.*}}groupThreads = 32{{.*}}> is not how the matrix unit spreads this product over the threads: it states #tkw.held<{{.*}}groupThreads = 64
// MISSING: error: 'tk.dot' op tk-convert-to-simt: the dot records no tkw.held; the matrix unit spreads it over the threads as #tkw.held<

tk.func @big_product(%a: !tk.ptr<f16> {tk.divisibility = 16 : i32},
                     %o: !tk.ptr<f32> {tk.divisibility = 16 : i32}) {
  %r = tk.make_range {end = 256 : i32, start = 0 : i32} : tensor<256xi32>
  %row = tk.expand_dims %r {axis = 1 : i32} : tensor<256xi32> -> tensor<256x1xi32>
  %col = tk.expand_dims %r {axis = 0 : i32} : tensor<256xi32> -> tensor<1x256xi32>
  %rowb = tk.broadcast %row : tensor<256x1xi32> -> tensor<256x256xi32>
  %colb = tk.broadcast %col : tensor<1x256xi32> -> tensor<256x256xi32>
  %c256 = arith.constant 256 : i32
  %c256t = tk.splat %c256 : i32 -> tensor<256x256xi32>
  %rows = arith.muli %rowb, %c256t : tensor<256x256xi32>
  %offs = arith.addi %rows, %colb : tensor<256x256xi32>
  %sa = tk.splat %a : !tk.ptr<f16> -> tensor<256x256x!tk.ptr<f16>>
  %pa = tk.addptr %sa, %offs : tensor<256x256x!tk.ptr<f16>>, tensor<256x256xi32>
  %x = tk.load %pa : tensor<256x256x!tk.ptr<f16>>
  %zero = arith.constant dense<0.000000e+00> : tensor<256x256xf32>
  %qk = tk.dot %x, %x, %zero : tensor<256x256xf16> * tensor<256x256xf16> -> tensor<256x256xf32>
  %so = tk.splat %o : !tk.ptr<f32> -> tensor<256x256x!tk.ptr<f32>>
  %po = tk.addptr %so, %offs : tensor<256x256x!tk.ptr<f32>>, tensor<256x256xi32>
  tk.store %po, %qk : tensor<256x256x!tk.ptr<f32>>
  tk.return
}
