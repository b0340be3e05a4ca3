// RUN: tk-opt %s --tk-share-workgroup-memory --split-input-file | FileCheck %s

// Two tiles of one type whose lives do not overlap share one buffer. The
// barrier after the first tile's last use already separates them; the
// third tile follows the second without one, so a barrier is inserted
// before its first use.
// CHECK-LABEL: memref.global "private" @k_tile0 : memref<64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: memref.global
// CHECK-LABEL: func.func @k
// CHECK: %[[A:.*]] = memref.get_global @k_tile0
// CHECK-NEXT: %[[B:.*]] = memref.get_global @k_tile0
// CHECK-NEXT: %[[C:.*]] = memref.get_global @k_tile0
// CHECK: memref.store %{{.*}}, %[[A]][%{{.*}}] : memref<64xf32
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[B]][%{{.*}}]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store %{{.*}}, %[[C]][%{{.*}}]
memref.global "private" @k_tile0 : memref<64xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64}
memref.global "private" @k_tile1 : memref<64xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64}
memref.global "private" @k_tile2 : memref<64xf32, #gpu.address_space<workgroup>> {alignment = 16 : i64}
func.func @k(%i: index, %x: f32) {
  %0 = memref.get_global @k_tile0 : memref<64xf32, #gpu.address_space<workgroup>>
  %1 = memref.get_global @k_tile1 : memref<64xf32, #gpu.address_space<workgroup>>
  %2 = memref.get_global @k_tile2 : memref<64xf32, #gpu.address_space<workgroup>>
  memref.store %x, %0[%i] : memref<64xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  %y = memref.load %0[%i] : memref<64xf32, #gpu.address_space<workgroup>>
  gpu.barrier
  memref.store %y, %1[%i] : memref<64xf32, #gpu.address_space<workgroup>>
  memref.store %y, %2[%i] : memref<64xf32, #gpu.address_space<workgroup>>
  return
}

// -----

// A tile used inside a loop lives for the whole loop, so the tile written
// in the loop's body keeps its own buffer; so does a tile of another type
// and one that something other than a load or store reaches.
// CHECK-LABEL: memref.global "private" @loop_tile0
// CHECK: memref.global "private" @loop_tile1
// CHECK: memref.global "private" @loop_tile2
// CHECK: memref.global "private" @loop_tile3
// CHECK-LABEL: func.func @loop
memref.global "private" @loop_tile0 : memref<64xf32, #gpu.address_space<workgroup>>
memref.global "private" @loop_tile1 : memref<64xf32, #gpu.address_space<workgroup>>
memref.global "private" @loop_tile2 : memref<64xi32, #gpu.address_space<workgroup>>
memref.global "private" @loop_tile3 : memref<64xf32, #gpu.address_space<workgroup>>
func.func @loop(%i: index, %n: index, %x: f32, %k: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = memref.get_global @loop_tile0 : memref<64xf32, #gpu.address_space<workgroup>>
  %1 = memref.get_global @loop_tile1 : memref<64xf32, #gpu.address_space<workgroup>>
  %2 = memref.get_global @loop_tile2 : memref<64xi32, #gpu.address_space<workgroup>>
  %3 = memref.get_global @loop_tile3 : memref<64xf32, #gpu.address_space<workgroup>>
  scf.for %j = %c0 to %n step %c1 {
    %y = memref.load %0[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %y, %1[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    gpu.barrier
    %z = memref.load %1[%i] : memref<64xf32, #gpu.address_space<workgroup>>
    memref.store %z, %0[%i] : memref<64xf32, #gpu.address_space<workgroup>>
  }
  gpu.barrier
  memref.store %k, %2[%i] : memref<64xi32, #gpu.address_space<workgroup>>
  gpu.barrier
  memref.copy %3, %3 : memref<64xf32, #gpu.address_space<workgroup>> to memref<64xf32, #gpu.address_space<workgroup>>
  return
}
