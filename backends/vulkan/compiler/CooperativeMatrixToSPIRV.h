//===- CooperativeMatrixToSPIRV.h - tkw matrices as KHR ones ----*- C++ -*-===//
//
// The matrices tk-convert-registers-to-simt makes of #tkw.cooperative_matrix
// tiles (`!tkw.matrix` and its splat, load, store and multiply-add) as
// SPV_KHR_cooperative_matrix's, at subgroup scope.
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_VULKAN_COMPILER_COOPERATIVEMATRIXTOSPIRV_H_
#define TK_BACKENDS_VULKAN_COMPILER_COOPERATIVEMATRIXTOSPIRV_H_

#include "mlir/Dialect/SPIRV/Transforms/SPIRVConversion.h"

namespace tk::vulkan {

/// `!tkw.matrix` as `!spirv.coopmatrix`, and the ops on it.
void populateCooperativeMatrixToSPIRVPatterns(
    mlir::SPIRVTypeConverter &converter, mlir::RewritePatternSet &patterns);

} // namespace tk::vulkan

#endif // TK_BACKENDS_VULKAN_COMPILER_COOPERATIVEMATRIXTOSPIRV_H_
