//===- Fragments.h - a matrix intrinsic's fragment as IR --------*- C++ -*-===//
//
// What a matrix unit needs of its intrinsic's layouts when it emits code:
// where this thread's registers of one fragment lie. The layouts themselves
// are the TargetInfo's (tk::FragmentLayout); units place them instead of
// computing positions register by register.
//
//===----------------------------------------------------------------------===//

#ifndef TK_CORE_CONVERSION_FRAGMENTS_H_
#define TK_CORE_CONVERSION_FRAGMENTS_H_

#include "tk/core/TargetInfo.h"

#include "mlir/IR/Builders.h"
#include "mlir/Support/LLVM.h"

#include <array>
#include <optional>
#include <string>
#include <utility>

namespace tk {

/// This thread's share of one fragment: the (row, col) of its first element
/// and every register's constant offset from there, in register order.
struct FragmentPlacement {
  mlir::Value row, col;
  llvm::SmallVector<std::array<int64_t, 2>> offsets;

  /// The (row, col) of every register of the fragment placed `rowShift`
  /// rows and `colShift` columns further (another tile of the same warp).
  llvm::SmallVector<std::pair<mlir::Value, mlir::Value>>
  positions(mlir::OpBuilder &builder, mlir::Location loc, int64_t rowShift = 0,
            int64_t colShift = 0) const;
  /// The same fragment with its origin moved by (`rowOrigin`,
  /// `colOrigin`), index values: a tile elsewhere in the warp's block.
  FragmentPlacement shifted(mlir::OpBuilder &builder, mlir::Location loc,
                            mlir::Value rowOrigin, mlir::Value colOrigin) const;
  /// The rows alone (`dim` 0) or the columns alone (1) of every register,
  /// `shift` further: for a unit that walks tiles by rows, then columns.
  llvm::SmallVector<mlir::Value> along(mlir::OpBuilder &builder,
                                       mlir::Location loc, int dim,
                                       int64_t shift) const;
};

/// Places `layout` for a `rows` x `cols` fragment whose element (0, 0) is at
/// (`originRow`, `originCol`) (index values; null for 0, to be `shifted`
/// later): `warp` is this warp's index
/// among the fragment's warps (null for a fragment of one warp), `lane` its
/// lane. Fails where the lanes' tile wraps over the fragment (lanes holding
/// copies): their offsets would differ from lane to lane.
mlir::FailureOr<FragmentPlacement>
placeFragment(mlir::OpBuilder &builder, mlir::Location loc,
              const FragmentLayout &layout, int64_t rows, int64_t cols,
              mlir::Value originRow, mlir::Value originCol, mlir::Value warp,
              mlir::Value lane);

/// How the rows of a held accumulator fall on registers and lanes, for
/// reductions along rows without workgroup memory and for per-row values
/// kept in registers (FlashAttention's running max and sum):
/// `rowOfRegister[i]` is the row of a thread's register i minus the row of
/// its register 0, the same in every thread; and the threads holding one
/// row are all the lanes of a warp that differ only in the bits `laneMask`
/// of their lane index.
struct RegisterRows {
  llvm::SmallVector<int64_t> rowOfRegister;
  int64_t laneMask = 0;
};

/// A thread's place in a HeldLayout whose tiles go to groups in blocks, as
/// IR: what positions() places registers from, and what a unit's
/// accumulate reads its operand fragments at, so that it updates the
/// registers where core put them.
struct HeldBlockPlacement {
  /// The thread's lane in its warp.
  mlir::Value lane;
  /// The first row and column of its group's block of tiles.
  mlir::Value rowBase, colBase;
  /// Its registers of one tile, relative to the tile's origin.
  FragmentPlacement accumulator;
};

/// How a matrix unit holds a product's accumulator in registers, stated as
/// a layout (as Triton's MMA encodings are) rather than register by
/// register. The product is cut into tiles of one instruction's accumulator
/// (`tile` rows x cols), each held by a group of `groupThreads` threads (a
/// warp, wave or subgroup; wgmma's warpgroup of 4 warps) as `fragment`
/// says, warp by warp of the group. Tiles go to groups either in blocks
/// (group g sits at (g / groups[1], g % groups[1]) of a `groups` grid and
/// holds a block of `tilesPerGroup` tiles, rows then columns) or `cyclic`ly
/// (tiles in row-major order, group g holding tiles g, g + G, ... of the G
/// groups). A thread's registers are its tiles' fragments in that order.
struct HeldLayout {
  std::string intrinsic;
  FragmentLayout fragment;
  std::array<int64_t, 2> tile = {1, 1};
  int64_t groupThreads = 1;
  std::array<int64_t, 2> groups = {1, 1};
  std::array<int64_t, 2> tilesPerGroup = {1, 1};
  bool cyclic = false;

  /// The (row, col) of every register of thread `thread` of an `m` x `n`
  /// product held by `numThreads` threads, in register order.
  llvm::SmallVector<std::array<int64_t, 2>>
  elementsOf(int64_t thread, int64_t numThreads, int64_t m, int64_t n) const;

  /// elementsOf as IR, for the thread `thread` (index value): where core
  /// initialises a held product's registers and writes them back from.
  /// Fails where the fragment does not cover its tile.
  mlir::FailureOr<llvm::SmallVector<std::pair<mlir::Value, mlir::Value>>>
  positions(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value thread,
            int64_t numThreads, int64_t m, int64_t n) const;

  /// For tiles dealt in turn (`cyclic`): the index, in the product's
  /// row-major order of tiles, of the `j`th tile of the group of thread
  /// `thread` (index value) of `numThreads`.
  mlir::Value dealtTile(mlir::OpBuilder &builder, mlir::Location loc,
                        mlir::Value thread, int64_t j,
                        int64_t numThreads) const;

  /// The first row and column of tile `tileIndex` (index value, row-major)
  /// of a product `n` columns wide.
  std::pair<mlir::Value, mlir::Value> tileOrigin(mlir::OpBuilder &builder,
                                                 mlir::Location loc,
                                                 mlir::Value tileIndex,
                                                 int64_t n) const;

  /// Thread `thread`'s registers of the tile at `origin`: its lane and warp
  /// in its group placed in `fragment`. Fails where the fragment does not
  /// cover its tile.
  mlir::FailureOr<FragmentPlacement>
  placeInTile(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value thread,
              std::pair<mlir::Value, mlir::Value> origin) const;

  /// The place of thread `thread` (index value), for a layout dealt in
  /// blocks (not `cyclic`). Fails where the fragment does not cover its
  /// tile.
  mlir::FailureOr<HeldBlockPlacement> placeBlock(mlir::OpBuilder &builder,
                                                 mlir::Location loc,
                                                 mlir::Value thread) const;

  /// The rows of an `m` x `n` product held this way by `numThreads`
  /// threads, where they fit RegisterRows (each row within one warp, every
  /// thread's registers at the same row offsets); nothing otherwise: a row
  /// split over warps needs workgroup memory.
  std::optional<RegisterRows> rowsOf(int64_t numThreads, int64_t m,
                                     int64_t n) const;

  /// Where the layout does not hold every element of an `m` x `n` product
  /// exactly once over `numThreads` threads, in words; nothing when it does.
  std::optional<std::string> uncovered(int64_t numThreads, int64_t m,
                                       int64_t n) const;
};

/// Where a matrix unit reads an operand of a held product from in workgroup
/// memory, stated as a layout (as Triton's `#ttg.swizzled_shared` and
/// `#ttg.nvmma_shared` are) rather than element by element. The operand
/// (`shape`: rows x cols) is cut into tiles of `tile` elements, stored one
/// after another, consecutive along dimension `tilesAlong` first (1: along
/// the rows, 0: down them). In a tile, lines run along dimension
/// `contiguous` (1: rows of the operand; 0: its columns, a B read K-major);
/// each line is cut into chunks of `vec` elements, and chunk j of line i is
/// stored at chunk j ^ ((i / perPhase) % maxPhase), so that the lines an
/// instruction reads at once fall on distinct banks. A buffer in the layout
/// is aligned to `alignment` bytes. Examples:
/// - mma.sync: one tile, rows of 16-byte chunks, swizzled over each 128-byte
///   line of banks (vec 8 f16, maxPhase up to 8);
/// - wgmma's 128-byte swizzle: tiles of 64 elements along the contiguous
///   dimension, each all of the other one, vec 8, maxPhase 8, 1024-byte
///   aligned; its interleave: 8x8 core matrices;
/// - MFMA, WMMA, DPAS (LayoutMatrixUnit): one tile, K-major, chunks of the
///   elements one lane reads.
struct SharedLayout {
  int contiguous = 1;
  std::array<int64_t, 2> tile = {1, 1};
  int tilesAlong = 1;
  int64_t vec = 1, perPhase = 1, maxPhase = 1;
  int64_t alignment = 16;

  /// The element offset of (`row`, `col`) of an operand of `shape` in a
  /// buffer of shape[0] * shape[1] elements.
  int64_t offset(int64_t row, int64_t col, std::array<int64_t, 2> shape) const;
  /// The same, as IR (index values).
  mlir::Value offset(mlir::OpBuilder &builder, mlir::Location loc,
                     mlir::Value row, mlir::Value col,
                     std::array<int64_t, 2> shape) const;
  /// Where the layout cannot hold an operand of `shape` (tiles that do not
  /// divide it, chunks that do not divide a tile's lines), in words;
  /// nothing when it can.
  std::optional<std::string> misfit(std::array<int64_t, 2> shape) const;
  /// The longest run of elements along the contiguous dimension that the
  /// layout keeps consecutive from any run-aligned start: what one copy of
  /// global memory (an async copy's 16 bytes) may move as one.
  int64_t consecutiveRun() const;

  bool operator==(const SharedLayout &other) const {
    return contiguous == other.contiguous && tile == other.tile &&
           tilesAlong == other.tilesAlong && vec == other.vec &&
           perPhase == other.perPhase && maxPhase == other.maxPhase &&
           alignment == other.alignment;
  }
  bool operator!=(const SharedLayout &other) const { return !(*this == other); }
};

/// The lane-index bits along which the lanes holding one row of a fragment
/// differ (mma.sync's accumulator: the 4 lanes of a quad, bits 0b11).
int64_t rowLaneMask(const FragmentLayout &layout);

} // namespace tk

#endif // TK_CORE_CONVERSION_FRAGMENTS_H_
