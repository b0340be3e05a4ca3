//===- SharedTileReader.cpp - registers of a tile read from workgroup memory
//-===//
//
// A tile in workgroup memory, laid out by a linear layout (offset ->
// coordinates), read into the registers of another (register, lane, warp
// -> coordinates): composing the one with the inverse of the other gives
// each register's offset. Where the backend's matrix loads (ldmatrix) fit
// both, a warp reads whole 8x8 matrices at once; otherwise each thread
// reads vectors of the registers that lie at consecutive offsets. The dot's
// operands read from its scratch and tkw.local_load both read this way.
//
//===----------------------------------------------------------------------===//

#include "RegisterLowering.h"

#include "tk/core/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace tk::simt {

void storeRun(OpBuilder &b, Location loc, ValueRange values, Value buffer,
              Value index) {
  if (values.size() == 1) {
    memref::StoreOp::create(b, loc, values.front(), buffer, ValueRange{index});
    return;
  }
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  int64_t bytes = std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
  int64_t width = values.size();
  Value vector = vector::FromElementsOp::create(
      b, loc, VectorType::get({width}, element), values);
  vector::StoreOp::create(b, loc, vector, buffer, ValueRange{index},
                          /*nontemporal=*/false,
                          llvm::MaybeAlign(width * bytes));
}

SmallVector<Value> loadRun(OpBuilder &b, Location loc, Value buffer,
                           Value index, int32_t width) {
  if (width == 1)
    return {memref::LoadOp::create(b, loc, buffer, ValueRange{index})};
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  int64_t bytes = std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
  Value vector = vector::LoadOp::create(
      b, loc, VectorType::get({width}, element), buffer, ValueRange{index},
      /*nontemporal=*/false, llvm::MaybeAlign(width * bytes));
  SmallVector<Value> elements;
  for (int32_t j = 0; j < width; ++j)
    elements.push_back(vector::ExtractOp::create(b, loc, vector, j));
  return elements;
}

FailureOr<SharedTileReader>
SharedTileReader::create(OpBuilder &b, Location loc, Operation *op,
                         Value buffer, Value base, const LinearLayout &layout,
                         const LinearLayout &shared, int32_t fragmentRegisters,
                         const MatrixUnit *unit, const ThreadPosition &thread,
                         ArrayRef<int64_t> origin, int64_t vectorBytes) {
  llvm::Expected<LinearLayout> toOffset = shared.invert();
  if (!toOffset)
    return op->emitOpError("tk-convert-registers-to-simt: a workgroup layout "
                           "that does not invert: ")
           << llvm::toString(toOffset.takeError());
  // A block's coordinates, in the dimensions of the whole.
  LinearLayout placed = layout;
  if (layout.getOutDims() != shared.getOutDims()) {
    llvm::Expected<LinearLayout> widened =
        LinearLayout::create(layout.getBases(), shared.getOutDims());
    if (!widened)
      return op->emitOpError("tk-convert-registers-to-simt: ")
             << llvm::toString(widened.takeError());
    placed = std::move(*widened);
  }
  llvm::Expected<LinearLayout> read = placed.compose(*toOffset);
  if (!read)
    return op->emitOpError("tk-convert-registers-to-simt: ")
           << llvm::toString(read.takeError());
  SharedTileReader reader;
  reader.buffer = buffer;
  reader.base = base;
  if (!origin.empty()) {
    SmallVector<std::pair<StringRef, int32_t>> at;
    std::vector<std::string> dims = toOffset->getInDimNames();
    for (auto [dim, coordinate] : llvm::zip_equal(dims, origin))
      at.push_back({dim, int32_t(coordinate)});
    reader.originOffset = toOffset->apply(at).front().second;
  }
  reader.element = cast<MemRefType>(buffer.getType()).getElementType();
  reader.bytes =
      std::max<int64_t>(reader.element.getIntOrFloatBitWidth() / 8, 1);
  reader.fragmentRegisters = fragmentRegisters;
  reader.unit = unit;
  reader.readOffsets = std::make_shared<LinearLayout>(std::move(*read));
  reader.readThread =
      std::make_shared<ThreadCoordinates>(b, loc, *reader.readOffsets, thread);
  reader.readWidth =
      std::min<int32_t>(reader.readOffsets->getNumConsecutiveInOut(),
                        std::max<int64_t>(vectorBytes / reader.bytes, 1));
  reader.planMatrixReads(b, loc, thread);
  return reader;
}

SmallVector<Value> SharedTileReader::read(OpBuilder &b, Location loc,
                                          ArrayRef<int32_t> registers) const {
  if (std::optional<SmallVector<Value>> matrices =
          readMatrices(b, loc, registers))
    return *matrices;
  SmallVector<Value> picked;
  for (size_t i = 0; i < registers.size();) {
    int32_t reg = registers[i];
    // A run of readWidth registers, aligned, in order: one vector.
    int32_t width = readWidth;
    if (reg % width || i + width > registers.size())
      width = 1;
    for (int32_t j = 1; j < width; ++j)
      if (registers[i + j] != reg + j)
        width = 1;
    llvm::append_range(picked,
                       loadRun(b, loc, buffer, address(b, loc, reg), width));
    i += width;
  }
  return picked;
}

Value SharedTileReader::address(OpBuilder &b, Location loc, int32_t reg) const {
  Value offset = readThread->getFlat(b, loc, reg, originOffset);
  return toIndex(b, loc, arith::AddIOp::create(b, loc, base, offset));
}

/// Whether the unit's matrix loads (ldmatrix) read each fragment whole:
/// its registers in pairs of 16-bit elements, the pair and the first two
/// lane bits moving along 16-byte rows of 8 elements (the lanes' next
/// three bits from row to row: `transpose` the other way round), every
/// other bit from one aligned row to another. Each lane then gives the
/// start of one row of one 8x8 matrix (MatrixUnit::loadMatrices), from
/// `laneRow`, the part of the address that depends on the lane and warp.
void SharedTileReader::planMatrixReads(OpBuilder &b, Location loc,
                                       const ThreadPosition &thread) {
  const LinearLayout &read = *readOffsets;
  int32_t fragmentBits = llvm::Log2_32(fragmentRegisters);
  if (!unit || bytes != 2 || fragmentBits < 1 || fragmentBits > 3 ||
      originOffset % 8 || read.getInDimSizeLog2(kLaneDim) != 5 ||
      read.getInDimSizeLog2(kRegisterDim) < fragmentBits)
    return;
  auto basis = [&](StringRef dim, int32_t bit) {
    return read.getBasis(dim, bit, kOffsetDim);
  };
  auto rowAligned = [](int32_t offset) { return offset % 8 == 0; };
  bool aligned = true;
  for (int32_t bit = 1; bit < read.getInDimSizeLog2(kRegisterDim); ++bit)
    aligned &= rowAligned(basis(kRegisterDim, bit));
  if (read.hasInDim(kWarpDim))
    for (int32_t bit = 0; bit < read.getInDimSizeLog2(kWarpDim); ++bit)
      aligned &= rowAligned(basis(kWarpDim, bit));
  if (!aligned)
    return;
  // The inputs that pick a matrix's row, lowest row bit first.
  SmallVector<std::pair<StringRef, int32_t>> rowBits;
  if (basis(kRegisterDim, 0) == 1 && basis(kLaneDim, 0) == 2 &&
      basis(kLaneDim, 1) == 4 && rowAligned(basis(kLaneDim, 2)) &&
      rowAligned(basis(kLaneDim, 3)) && rowAligned(basis(kLaneDim, 4))) {
    transpose = false;
    rowBits = {{kLaneDim, 2}, {kLaneDim, 3}, {kLaneDim, 4}};
  } else if (basis(kLaneDim, 2) == 1 && basis(kLaneDim, 3) == 2 &&
             basis(kLaneDim, 4) == 4 && rowAligned(basis(kRegisterDim, 0)) &&
             rowAligned(basis(kLaneDim, 0)) && rowAligned(basis(kLaneDim, 1))) {
    transpose = true;
    rowBits = {{kRegisterDim, 0}, {kLaneDim, 0}, {kLaneDim, 1}};
  } else {
    return;
  }
  // Lane L reads row L % 8 of matrix L / 8 (the fragment's register bits
  // above the pair), in its warp.
  Type i32 = b.getI32Type();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIntOp::create(b, loc, i32, value);
  };
  auto term = [&](Value index, int32_t bit, int32_t offset) -> Value {
    Value set = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, index, constant(bit)),
        constant(1));
    return arith::MulIOp::create(b, loc, set, constant(offset));
  };
  Value row = constant(0);
  int32_t bits = 0;
  for (auto [laneBit, input] : llvm::enumerate(rowBits)) {
    int32_t offset = basis(input.first, input.second);
    row = arith::XOrIOp::create(b, loc, row,
                                term(thread.lane, int32_t(laneBit), offset));
    bits |= offset;
  }
  for (int32_t bit = 1; bit < fragmentBits; ++bit) {
    row = arith::XOrIOp::create(
        b, loc, row, term(thread.lane, 2 + bit, basis(kRegisterDim, bit)));
    bits |= basis(kRegisterDim, bit);
  }
  if (read.hasInDim(kWarpDim))
    for (int32_t bit = 0; bit < read.getInDimSizeLog2(kWarpDim); ++bit) {
      row = arith::XOrIOp::create(b, loc, row,
                                  term(thread.warp, bit, basis(kWarpDim, bit)));
      bits |= basis(kWarpDim, bit);
    }
  laneRow = row;
  laneRowBits = bits;
}

/// A fragment's registers by the unit's matrix loads, where
/// planMatrixReads found them fit and `registers` are one fragment's,
/// whole and aligned.
std::optional<SmallVector<Value>>
SharedTileReader::readMatrices(OpBuilder &b, Location loc,
                               ArrayRef<int32_t> registers) const {
  if (!laneRow || int32_t(registers.size()) != fragmentRegisters ||
      registers[0] % fragmentRegisters)
    return std::nullopt;
  for (auto [f, reg] : llvm::enumerate(registers))
    if (reg != registers[0] + int32_t(f))
      return std::nullopt;
  // The fragment's origin: its register bits' offsets, XORed.
  int32_t origin = originOffset;
  for (int32_t bit = 0; bit < readOffsets->getInDimSizeLog2(kRegisterDim);
       ++bit)
    if ((registers[0] >> bit) & 1)
      origin ^= readOffsets->getBasis(kRegisterDim, bit, kOffsetDim);
  // The origin's bits no lane or warp sets are added, which the backend's
  // compiler folds into the load's offset.
  Value offset = xorConstant(b, loc, laneRow, laneRowBits, origin);
  Value start = toIndex(b, loc, arith::AddIOp::create(b, loc, base, offset));
  FailureOr<SmallVector<Value>> elements = unit->loadMatrices(
      b, loc, buffer, start, fragmentRegisters / 2, transpose, element);
  if (failed(elements))
    return std::nullopt;
  return *elements;
}

/// Stores the run `values` as the word `index` of `buffer`, whose elements
/// are words of several of them (vector<4xi32>): each 32 bits of the run
/// packed into an i32.
static void storeWord(OpBuilder &b, Location loc, ValueRange values,
                      Value buffer, Value index) {
  auto word =
      cast<VectorType>(cast<MemRefType>(buffer.getType()).getElementType());
  Type element = values.front().getType();
  int64_t perLane = 32 / element.getIntOrFloatBitWidth();
  Type lane = word.getElementType();
  SmallVector<Value> lanes;
  for (int64_t first = 0; first < int64_t(values.size()); first += perLane) {
    Value packed = vector::FromElementsOp::create(
        b, loc, VectorType::get({perLane}, element),
        values.slice(first, perLane));
    Value bits =
        vector::BitCastOp::create(b, loc, VectorType::get({1}, lane), packed);
    lanes.push_back(vector::ExtractOp::create(b, loc, bits, 0));
  }
  memref::StoreOp::create(b, loc,
                          vector::FromElementsOp::create(b, loc, word, lanes),
                          buffer, ValueRange{index});
}

int64_t getWordElements(mlir::Value buffer, mlir::Type element) {
  auto word =
      dyn_cast<VectorType>(cast<MemRefType>(buffer.getType()).getElementType());
  if (!word)
    return 1;
  return word.getNumElements() * word.getElementTypeBitWidth() /
         element.getIntOrFloatBitWidth();
}

LogicalResult writeTileToWorkgroup(OpBuilder &b, Location loc, Operation *op,
                                   ValueRange values,
                                   const LinearLayout &source,
                                   const LinearLayout &shared, Value buffer,
                                   Value base, const ThreadPosition &thread,
                                   int64_t vectorBytes) {
  llvm::Expected<LinearLayout> toOffset = shared.invert();
  // The writers' registers, lanes and warps -> offsets in the buffer.
  llvm::Expected<LinearLayout> written =
      toOffset ? source.compose(*toOffset) : toOffset.takeError();
  if (!written)
    return op->emitOpError("tk-convert-registers-to-simt: ")
           << llvm::toString(written.takeError());
  Type element = cast<MemRefType>(buffer.getType()).getElementType();
  ThreadCoordinates writeThread(b, loc, *written, thread);
  Value writer = isFirstHolder(b, loc, source, thread);
  int32_t copies = getFreeMask(source, kRegisterDim);
  // A buffer of words (vector<4xi32>) takes whole ones: runs of as many
  // elements, at offsets (from `base`, in elements) that are multiples.
  int32_t perWord = 1;
  if (isa<VectorType>(element)) {
    perWord = getWordElements(buffer, values.front().getType());
    if (written->getNumConsecutiveInOut() < perWord ||
        (copies & (perWord - 1)) || values.size() % perWord)
      return op->emitOpError("tk-convert-registers-to-simt: registers that "
                             "do not fill whole words of workgroup memory");
  }
  int32_t width = perWord;
  if (!isa<VectorType>(element)) {
    int64_t bytes = std::max<int64_t>(element.getIntOrFloatBitWidth() / 8, 1);
    width = std::min<int32_t>(written->getNumConsecutiveInOut(),
                              std::max<int64_t>(vectorBytes / bytes, 1));
  }
  Value wordShift = perWord > 1
                        ? arith::ConstantIntOp::create(b, loc, b.getI32Type(),
                                                       llvm::Log2_32(perWord))
                        : Value();
  auto write = [&] {
    for (int32_t reg = 0; reg < int32_t(values.size()); reg += width) {
      if (reg & copies)
        continue;
      Value start =
          arith::AddIOp::create(b, loc, base, writeThread.getFlat(b, loc, reg));
      if (perWord > 1) {
        start = arith::ShRUIOp::create(b, loc, start, wordShift);
        storeWord(b, loc, values.slice(reg, width), buffer,
                  toIndex(b, loc, start));
        continue;
      }
      storeRun(b, loc, values.slice(reg, width), buffer,
               toIndex(b, loc, start));
    }
  };
  if (!writer) {
    write();
    return success();
  }
  auto branch = scf::IfOp::create(b, loc, writer, false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  write();
  return success();
}

} // namespace tk::simt
