// RUN: tk-opt %s --tk-remove-dead-loop-values --canonicalize | FileCheck %s
//
// tk-remove-dead-loop-values: a pointer that only advances itself is no
// longer carried; one a load reads, one whose result is used after the
// loop, and one that feeds another carried value stay. An outer loop's
// pointer dies once the inner loop that advanced it no longer does.

// CHECK-LABEL: func.func @pointers
// CHECK: %[[R:.+]]:2 = scf.for {{.*}} iter_args(%[[READ:.+]] = %{{.+}}, %[[SUM:.+]] = %{{.+}}) -> (!llvm.ptr, f32)
// CHECK:   %[[V:.+]] = llvm.load %[[READ]]
// CHECK:   %[[NEXT:.+]] = llvm.getelementptr %[[READ]][8]
// CHECK-NOT: llvm.getelementptr
// CHECK:   scf.yield %[[NEXT]], %{{.+}} : !llvm.ptr, f32
// CHECK: return %[[R]]#1
func.func @pointers(%p: !llvm.ptr, %q: !llvm.ptr, %n: index) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r:3 = scf.for %i = %c0 to %n step %c1
      iter_args(%read = %p, %dead = %q, %sum = %zero) -> (!llvm.ptr, !llvm.ptr, f32) {
    %v = llvm.load %read : !llvm.ptr -> f32
    %s = arith.addf %sum, %v : f32
    %a = llvm.getelementptr %read[8] : (!llvm.ptr) -> !llvm.ptr, f32
    %b = llvm.getelementptr %dead[4] : (!llvm.ptr) -> !llvm.ptr, f32
    %c = llvm.getelementptr %b[4] : (!llvm.ptr) -> !llvm.ptr, f32
    scf.yield %a, %c, %s : !llvm.ptr, !llvm.ptr, f32
  }
  return %r#2 : f32
}

// The result is used after the loop: the pointer stays.
// CHECK-LABEL: func.func @used_after
// CHECK: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (!llvm.ptr)
// CHECK:   llvm.getelementptr
func.func @used_after(%p: !llvm.ptr, %n: index) -> !llvm.ptr {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %p) -> (!llvm.ptr) {
    %y = llvm.getelementptr %x[4] : (!llvm.ptr) -> !llvm.ptr, f32
    scf.yield %y : !llvm.ptr
  }
  return %r : !llvm.ptr
}

// %x feeds %y's next value, which a store reads: both stay.
// CHECK-LABEL: func.func @feeds_another
// CHECK: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (!llvm.ptr, !llvm.ptr)
func.func @feeds_another(%p: !llvm.ptr, %q: !llvm.ptr, %n: index, %v: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1
      iter_args(%x = %p, %y = %q) -> (!llvm.ptr, !llvm.ptr) {
    llvm.store %v, %y : f32, !llvm.ptr
    %nx = llvm.getelementptr %x[4] : (!llvm.ptr) -> !llvm.ptr, f32
    scf.yield %nx, %x : !llvm.ptr, !llvm.ptr
  }
  return
}

// The inner loop only advances %x; then the outer loop's %x is dead too.
// CHECK-LABEL: func.func @nested
// CHECK: scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK:   scf.for {{.*}} iter_args(%{{.+}} = %{{.+}}) -> (f32)
// CHECK-NOT: llvm.getelementptr
func.func @nested(%p: !llvm.ptr, %n: index, %v: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %r:2 = scf.for %i = %c0 to %n step %c1
      iter_args(%x = %p, %s = %zero) -> (!llvm.ptr, f32) {
    %in:2 = scf.for %j = %c0 to %n step %c1
        iter_args(%xi = %x, %si = %s) -> (!llvm.ptr, f32) {
      %nx = llvm.getelementptr %xi[4] : (!llvm.ptr) -> !llvm.ptr, f32
      %ns = arith.addf %si, %v : f32
      scf.yield %nx, %ns : !llvm.ptr, f32
    }
    scf.yield %in#0, %in#1 : !llvm.ptr, f32
  }
  return %r#1 : f32
}
