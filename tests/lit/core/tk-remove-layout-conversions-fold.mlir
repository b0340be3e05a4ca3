// RUN: tk-opt %s --tk-remove-layout-conversions | FileCheck %s --check-prefix=FOLD
//
// tk-remove-layout-conversions on tiles already in #tkw.linear layouts (2
// warps of 4 lanes).

// A conversion to the same layout folds; a range converted there and
// back is computed where it is used: a range and its sum in the final
// layout, and no conversion at all.
// FOLD-LABEL: tk.func @there_and_back
// FOLD-NEXT: %[[R:.+]] = tk.make_range {{.*}} : tensor<8xi32, #[[L:linear]]>
// FOLD-NEXT: %[[SUM:.+]] = arith.addi %[[R]], %[[R]] : tensor<8xi32, #[[L]]>
// FOLD-NEXT: tk.reduce(%[[SUM]] : tensor<8xi32, #[[L]]>)
// FOLD-NOT: tkw.convert_layout
tk.func @there_and_back(%p: !tk.ptr<i32>) {
  %r = tk.make_range {end = 8 : i32, start = 0 : i32} : tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>>
  %same = tkw.convert_layout %r : tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>> -> tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>>
  %a = tkw.convert_layout %same : tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>> -> tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>>
  %b = arith.addi %a, %a : tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>>
  %c = tkw.convert_layout %b : tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[2], [4]], warp = [[1]]>> -> tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>>
  %d = tk.reduce(%c : tensor<8xi32, #tkw.linear<shape = [8], register = [], lane = [[1], [2]], warp = [[4]]>>) {axis = 0 : i32} -> i32 {
  ^bb0(%x: i32, %y: i32):
    %t = arith.addi %x, %y : i32
    tk.reduce.return %t : i32
  }
  tk.store %p, %d : !tk.ptr<i32>
  tk.return
}
