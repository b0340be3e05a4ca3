//===- XeBackendTest.cpp - the Xe plugin without an Intel GPU ---*- C++ -*-===//
//
// What must hold on any machine: SPIR-V for every target that spirv-val
// passes and Intel's compiler builds at the target's SIMD width; dots on
// DPAS in iga64's disassembly; the DPAS builtin's mangled names; the
// package refuses every truncation; validate() fails on a package that
// claims DPAS its code lacks; compile errors are the right statuses; the
// plugin answers NO_DEVICE, naming why, where no Intel GPU answers.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compiler.h"
#include "compiler/Dpas.h"
#include "compiler/Package.h"
#include "compiler/TargetInfo.h"
#include "tk/core/TargetInfo.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/tk_plugin.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using tk::runtime::Plugin;
using tk::runtime::PluginLoader;

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Plugin *plugin() {
  static Plugin *opened = [] {
    Plugin *out = nullptr;
    tk::runtime::Status status =
        PluginLoader::openFile(TK_XE_PLUGIN_PATH, "xe", &out);
    EXPECT_TRUE(status.isOk()) << status.message();
    return out;
  }();
  return opened;
}

const tk_backend_interface &api() { return plugin()->getApi(); }

tk_status compile(const std::string &file, const std::string &entry,
                  const std::string &arch, tk::xe::Package &package,
                  std::string &error) {
  std::string text = readFile(std::string(TK_EXAMPLES_KERNELS) + "/" + file);
  tk::xe::CompileInput input;
  input.module = text.data();
  input.size = text.size();
  input.entry = entry;
  if (tk_status status = tk::xe::parseTarget(arch, input.options.target, error))
    return status;
  return tk::xe::compileToPackage(input, package, error);
}

tk::xe::Package compileOrFail(const std::string &file, const std::string &entry,
                              const std::string &arch) {
  tk::xe::Package package;
  std::string error;
  EXPECT_EQ(compile(file, entry, arch, package, error), TK_SUCCESS) << error;
  return package;
}

/// validate() with Intel's tools (TK_XE_VALIDATION=1).
tk_status validateStrictly(const tk::xe::Package &package, std::string &report,
                           std::string &error) {
  setenv("TK_XE_VALIDATION", "1", 1);
  std::string bytes = tk::xe::serializePackage(package);
  tk_status status =
      tk::xe::validatePackage(bytes.data(), bytes.size(), report, error);
  unsetenv("TK_XE_VALIDATION");
  return status;
}

TEST(XeCompiler, EveryTargetBuildsAtItsSubgroupSize) {
  ASSERT_TRUE(tk::xe::haveOcloc()) << "ocloc (intel-opencl-icd) is needed";
  for (auto [arch, subgroup] : {std::pair{"pvc", 16}, std::pair{"dg2", 8}}) {
    tk::xe::Package package =
        compileOrFail("vector_add.tk", "vector_add", arch);
    EXPECT_EQ(package.target, arch);
    EXPECT_EQ(package.subgroupSize, subgroup);
    // num_warps 4 counts warps of 32 lanes: 128 work-items in 128 /
    // subgroup subgroups, which the package records.
    EXPECT_EQ(package.threadsPerBlock, 4 * 32);
    EXPECT_EQ(package.numWarps, 4 * 32 / subgroup);
    EXPECT_EQ(package.sharedMemoryBytes, 0);
    EXPECT_EQ(package.matrixDots, 0);
    ASSERT_EQ(package.natives.size(), 1u) << arch;
    EXPECT_EQ(package.natives[0].target, arch);
    EXPECT_EQ(package.natives[0].scratchBytes, 0) << arch;
    EXPECT_GE(package.natives[0].grfRegisters, 128) << arch;
    std::string report, error;
    EXPECT_EQ(validateStrictly(package, report, error), TK_SUCCESS) << error;
    EXPECT_NE(report.find("SIMD" + std::to_string(subgroup)), std::string::npos)
        << report;
  }
}

TEST(XeCompiler, DotsRunOnDpas) {
  for (const char *arch : {"pvc", "dg2"}) {
    tk::xe::Package package = compileOrFail("matmul.tk", "matmul", arch);
    EXPECT_EQ(package.matrixDots, 1) << arch;
    ASSERT_EQ(package.natives.size(), 1u) << arch;
    EXPECT_GT(package.natives[0].dpasInstructions, 0) << arch;
    std::string report, error;
    EXPECT_EQ(validateStrictly(package, report, error), TK_SUCCESS) << error;
  }
}

TEST(XeCompiler, ValidateFailsOnAPackageThatClaimsDpas) {
  tk::xe::Package package = compileOrFail("vector_add.tk", "vector_add", "pvc");
  std::string report, error;
  package.matrixDots = 1;
  EXPECT_EQ(validateStrictly(package, report, error), TK_ERROR_COMPILATION);
  EXPECT_NE(error.find("no dpas"), std::string::npos) << error;
  // SLM the module does not declare is a lie too.
  package.matrixDots = 0;
  package.sharedMemoryBytes = 4096;
  EXPECT_EQ(validateStrictly(package, report, error), TK_ERROR_COMPILATION);
  EXPECT_NE(error.find("SLM"), std::string::npos) << error;
  // SPIR-V that is not valid fails spirv-val, strict or not.
  tk::xe::Package broken = compileOrFail("vector_add.tk", "vector_add", "pvc");
  broken.spirv.resize(broken.spirv.size() - 8);
  std::string bytes = tk::xe::serializePackage(broken);
  EXPECT_EQ(tk::xe::validatePackage(bytes.data(), bytes.size(), report, error),
            TK_ERROR_COMPILATION);
  EXPECT_NE(error.find("spirv-val"), std::string::npos) << error;
}

TEST(XeDpas, BuiltinNamesAreTheExtensionsMangling) {
  mlir::MLIRContext context;
  mlir::Builder b(&context);
  auto vec = [&](int64_t n, mlir::Type t) {
    return mlir::VectorType::get({n}, t);
  };
  mlir::Type i16 = b.getI16Type(), i32 = b.getI32Type(), f32 = b.getF32Type();
  auto intrinsic = [](tk::MatrixElementType type, int64_t n, int64_t k) {
    tk::MatrixIntrinsic out;
    out.aType = out.bType = type;
    out.m = 8;
    out.n = n;
    out.k = k;
    return out;
  };
  using ET = tk::MatrixElementType;
  // What clang writes for the declarations of the OpenCL extension.
  EXPECT_EQ(tk::xe::dpasBuiltinName(intrinsic(ET::F16, 16, 16), vec(8, i16),
                                    vec(8, i32), vec(8, f32)),
            "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_sDv8_iDv8_f");
  EXPECT_EQ(tk::xe::dpasBuiltinName(intrinsic(ET::F16, 8, 16), vec(8, i32),
                                    vec(8, i32), vec(8, f32)),
            "_Z38intel_sub_group_f16_f16_matrix_mad_k16Dv8_iS_Dv8_f");
  EXPECT_EQ(tk::xe::dpasBuiltinName(intrinsic(ET::I8, 16, 32), vec(8, i16),
                                    vec(8, i32), vec(8, i32)),
            "_Z36intel_sub_group_i8_i8_matrix_mad_k32Dv8_sDv8_iS0_");
  EXPECT_EQ(tk::xe::dpasBuiltinName(intrinsic(ET::TF32, 16, 8), vec(4, f32),
                                    vec(8, f32), vec(8, f32)),
            "_Z39intel_sub_group_tf32_tf32_matrix_mad_k8Dv4_fDv8_fS0_");
}

TEST(XePackage, RoundTripsAndRefusesEveryTruncation) {
  tk::xe::Package package = compileOrFail("softmax.tk", "softmax", "dg2");
  package.buildOptions = tk::xe::kLargeRegisterFileOption;
  std::string bytes = tk::xe::serializePackage(package);
  tk::xe::Package parsed;
  std::string error;
  ASSERT_EQ(tk::xe::parsePackage(bytes.data(), bytes.size(), parsed, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(parsed.entry, "softmax");
  EXPECT_EQ(parsed.buildOptions, package.buildOptions);
  EXPECT_EQ(parsed.spirv, package.spirv);
  ASSERT_EQ(parsed.natives.size(), package.natives.size());
  EXPECT_EQ(parsed.natives[0].bytes, package.natives[0].bytes);
  EXPECT_EQ(parsed.sharedMemoryBytes, package.sharedMemoryBytes);
  // Every cut is refused, never read past.
  for (size_t cut = 0; cut < bytes.size(); cut += 1 + cut / 64)
    EXPECT_EQ(tk::xe::parsePackage(bytes.data(), cut, parsed, error),
              TK_ERROR_INVALID_ARGUMENT)
        << "cut at " << cut;
  std::string trailing = bytes + "x";
  EXPECT_EQ(
      tk::xe::parsePackage(trailing.data(), trailing.size(), parsed, error),
      TK_ERROR_INVALID_ARGUMENT);
  tk::xe::Package notSpirv = package;
  notSpirv.spirv = std::string(64, 'x');
  std::string notSpirvBytes = tk::xe::serializePackage(notSpirv);
  EXPECT_EQ(tk::xe::parsePackage(notSpirvBytes.data(), notSpirvBytes.size(),
                                 parsed, error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("not little-endian SPIR-V"), std::string::npos) << error;
}

TEST(XeCompiler, ErrorsHaveTheirStatus) {
  tk::xe::Package package;
  std::string error;
  EXPECT_EQ(compile("vector_add.tk", "vector_add", "bmg", package, error),
            TK_ERROR_UNSUPPORTED);
  EXPECT_NE(error.find("pvc"), std::string::npos) << error;
  EXPECT_EQ(compile("vector_add.tk", "missing", "pvc", package, error),
            TK_ERROR_NOT_FOUND);
  tk::xe::CompileInput input;
  std::string bad = "tk.func @f( {";
  input.module = bad.data();
  input.size = bad.size();
  input.entry = "f";
  ASSERT_EQ(tk::xe::parseTarget("pvc", input.options.target, error),
            TK_SUCCESS);
  EXPECT_EQ(tk::xe::compileToPackage(input, package, error),
            TK_ERROR_INVALID_IR);
}

TEST(XePlugin, NamesWhyThereIsNoDevice) {
  ASSERT_NE(plugin(), nullptr);
  EXPECT_STREQ(api().name, "xe");
  tk_status status = api().initialize();
  if (status == TK_SUCCESS)
    GTEST_SKIP() << "this machine has an Intel GPU";
  EXPECT_EQ(status, TK_ERROR_NO_DEVICE);
  std::string why = api().last_error();
  EXPECT_NE(why.find("tk-xe: "), std::string::npos) << why;
  EXPECT_NE(why.find("zeInit"), std::string::npos) << why;
  int32_t count = -1;
  EXPECT_EQ(api().device_count(&count), TK_SUCCESS);
  EXPECT_EQ(count, 0);
  // Calls after a failed zeInit answer from tk's state (Level Zero's loader
  // would crash), and say no device.
  void *memory = nullptr;
  EXPECT_NE(api().mem_alloc(0, 64, &memory), TK_SUCCESS);
}

TEST(XePlugin, DeclaresDpasAndWhatItLowers) {
  tk_backend_capabilities caps;
  caps.struct_size = sizeof(caps);
  ASSERT_EQ(api().get_capabilities(0, &caps), TK_SUCCESS) << api().last_error();
  EXPECT_EQ(caps.mma_kinds, uint32_t(TK_MMA_BIT_DPAS));
  EXPECT_EQ(caps.fp8, 1);
  EXPECT_NE(caps.dtypes & TK_DTYPE_BIT_BF16, 0u);
  EXPECT_NE(caps.dtypes & TK_DTYPE_BIT_F16, 0u);
  EXPECT_NE(caps.dtypes & TK_DTYPE_BIT_F8E4M3, 0u);
  // dg2 has no f64 unit.
  setenv("TK_XE_ARCH", "dg2", 1);
  ASSERT_EQ(api().get_capabilities(0, &caps), TK_SUCCESS) << api().last_error();
  unsetenv("TK_XE_ARCH");
  EXPECT_EQ(caps.dtypes & TK_DTYPE_BIT_F64, 0u);
}

TEST(XePlugin, CompileTargetFollowsTkXeArch) {
  // The kernel cache keys on this: dg2 code must not be found again as pvc
  // code on the same device, nor a package without its native binary.
  char target[64];
  setenv("TK_XE_ARCH", "dg2", 1);
  ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
      << api().last_error();
  EXPECT_STREQ(target, "dg2 native");
  setenv("TK_XE_ARCH", "pvc", 1);
  setenv("TK_XE_NATIVE", "0", 1);
  ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
      << api().last_error();
  EXPECT_STREQ(target, "pvc spirv");
  unsetenv("TK_XE_NATIVE");
  unsetenv("TK_XE_ARCH");
}

TEST(XePlugin, CompileAndValidateThroughTheABI) {
  std::string text =
      readFile(std::string(TK_EXAMPLES_KERNELS) + "/vector_add.tk");
  tk_plugin_compile_request request;
  std::memset(&request, 0, sizeof(request));
  request.struct_size = sizeof(request);
  request.module_bytecode = text.data();
  request.module_size = text.size();
  request.entry = "vector_add";
  request.num_warps = 4;
  tk_plugin_binary binary;
  std::memset(&binary, 0, sizeof(binary));
  setenv("TK_XE_ARCH", "dg2", 1);
  ASSERT_EQ(api().compile(&request, &binary), TK_SUCCESS) << api().last_error();
  unsetenv("TK_XE_ARCH");
  EXPECT_EQ(api().validate(binary.data, binary.size), TK_SUCCESS)
      << api().last_error();
  EXPECT_EQ(api().validate(binary.data, 10), TK_ERROR_INVALID_ARGUMENT);
  tk::xe::Package package;
  std::string error;
  ASSERT_EQ(tk::xe::parsePackage(binary.data, binary.size, package, error),
            TK_SUCCESS);
  EXPECT_EQ(package.subgroupSize, 8);
  api().binary_free(&binary);
}

} // namespace
