//===- BuilderSupport.h - what the builder's files share --------*- C++ -*-===//
//
// The message helpers of Builder.cpp, BuilderMemory.cpp and
// BuilderReductions.cpp: types, shapes and numbers as the tk verifiers
// print them.
//
//===----------------------------------------------------------------------===//

#ifndef TK_IR_LIB_BUILDERSUPPORT_H_
#define TK_IR_LIB_BUILDERSUPPORT_H_

#include "tk/ir/Builder.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace tk::builder_support {

using mlir::ArrayRef;
using mlir::Type;

/// `type` as MLIR prints it, for messages.
inline std::string str(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// A shape as `[64, 128]`, the form the tk verifiers use.
inline std::string str(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(shape, os);
  os << "]";
  return text;
}

/// The shape of a Tile for messages: `[64, 128]`, or `scalar`.
inline std::string shapeOf(const Tile &x) {
  return x.isTile() ? str(x.shape()) : std::string("scalar");
}

/// A double for messages.
inline std::string formatDouble(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%g", value);
  return text;
}

/// A pointer to elements (not a block pointer).
inline bool isPointerElem(Type type) {
  auto ptr = mlir::dyn_cast<PtrType>(type);
  return ptr && !ptr.isBlockPointer();
}

inline bool isFp8(Type type) {
  return mlir::isa<mlir::Float8E4M3FNType, mlir::Float8E5M2Type>(type);
}

/// The KernelBuilder behind either operand of a free operator.
inline KernelBuilder *builderOf(const Operand &lhs, const Operand &rhs) {
  if (lhs.builder())
    return lhs.builder();
  return rhs.builder();
}

} // namespace tk::builder_support

#endif // TK_IR_LIB_BUILDERSUPPORT_H_
