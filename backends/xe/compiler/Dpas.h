//===- Dpas.h - tk.dot on Intel's DPAS --------------------------*- C++ -*-===//
//
// The matrix unit of Xe-HPC and Xe-HPG: core's LayoutMatrixUnit, which takes
// each DPAS shape and where the work-items of a subgroup hold its operands
// from the TargetInfo preset, with the packing and builtin that IGC turns
// into `dpas`: intel_sub_group_<a>_<b>_matrix_mad_k<K> of the OpenCL
// extension cl_intel_subgroup_matrix_multiply_accumulate.
//
// The call is named here rather than through MLIR's xevm.mma: XeVM's
// lowering passes a as the subgroup-16 form (a vector of shorts), which IGC
// resolves at subgroup 16 (pvc) but not at subgroup 8 (dg2), where the
// extension takes a as ints: ocloc then leaves an unresolved call.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_COMPILER_DPAS_H_
#define TK_BACKENDS_XE_COMPILER_DPAS_H_

#include "tk/core/Conversion/LayoutMatrixUnit.h"

#include <memory>
#include <string>

namespace tk::xe {

class DpasUnit : public tk::LayoutMatrixUnit {
public:
  explicit DpasUnit(tk::TargetInfo info) : LayoutMatrixUnit(std::move(info)) {}

  /// a: rows of shorts at subgroup 16, of ints at subgroup 8; b: ints; tf32
  /// as floats.
  mlir::Type operandType(mlir::OpBuilder &builder,
                         const tk::MatrixIntrinsic &intrinsic, unsigned operand,
                         mlir::Type element, int64_t count) const override;
  mlir::Value multiply(mlir::OpBuilder &builder, mlir::Location loc,
                       const tk::MatrixIntrinsic &intrinsic, mlir::Value a,
                       mlir::Value b, mlir::Value accumulator) const override;
};

/// The Itanium-mangled name of the builtin for `intrinsic` with these
/// argument types, e.g.
/// "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_sDv8_iDv8_f".
std::string dpasBuiltinName(const tk::MatrixIntrinsic &intrinsic, mlir::Type a,
                            mlir::Type b, mlir::Type accumulator);

/// The unit for `info`, or null when its preset has no DPAS.
std::shared_ptr<const tk::MatrixUnit> makeDpasUnit(const tk::TargetInfo &info);

} // namespace tk::xe

#endif // TK_BACKENDS_XE_COMPILER_DPAS_H_
