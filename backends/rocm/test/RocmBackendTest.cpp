//===- RocmBackendTest.cpp - the ROCm plugin without an AMD GPU -*- C++ -*-===//
//
// What must hold on any machine: code objects for every target link and
// carry the metadata the package records; the package refuses every
// truncation; the checks of validate() fail on a package that disagrees
// with its code object or claims matrix instructions it lacks; compile
// errors are the right statuses; the plugin answers NO_DEVICE, naming why,
// where no AMD GPU answers.
//
//===----------------------------------------------------------------------===//

#include "compiler/CodeObjectCheck.h"
#include "compiler/Compiler.h"
#include "compiler/MatrixCores.h"
#include "compiler/Package.h"
#include "compiler/TargetInfo.h"
#include "tk/core/Conversion/Fragments.h"
#include "tk/core/TargetInfo.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/tk_plugin.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
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
        PluginLoader::openFile(TK_ROCM_PLUGIN_PATH, "rocm", &out);
    EXPECT_TRUE(status.isOk()) << status.message();
    return out;
  }();
  return opened;
}

const tk_backend_interface &api() { return plugin()->getApi(); }

tk_status compile(const std::string &file, const std::string &entry,
                  const std::string &arch, tk::rocm::Package &package,
                  std::string &error) {
  std::string text = readFile(std::string(TK_EXAMPLES_KERNELS) + "/" + file);
  tk::rocm::CompileInput input;
  input.module = text.data();
  input.size = text.size();
  input.entry = entry;
  if (tk_status status =
          tk::rocm::parseTarget(arch, input.options.target, error))
    return status;
  return tk::rocm::compileToPackage(input, package, error);
}

tk::rocm::Package compileOrFail(const std::string &file,
                                const std::string &entry,
                                const std::string &arch) {
  tk::rocm::Package package;
  std::string error;
  EXPECT_EQ(compile(file, entry, arch, package, error), TK_SUCCESS) << error;
  return package;
}

TEST(RocmCompiler, EveryTargetLinksACodeObjectWithItsWaveSize) {
  for (auto [arch, wave] : {std::pair{"gfx942", 64}, std::pair{"gfx90a", 64},
                            std::pair{"gfx1100", 32}}) {
    tk::rocm::Package package =
        compileOrFail("vector_add.tk", "vector_add", arch);
    EXPECT_EQ(package.arch, arch);
    EXPECT_EQ(package.waveSize, wave) << arch;
    EXPECT_EQ(package.threadsPerBlock, 4 * wave) << arch;
    // Four arguments (three pointers, one i32) and no LDS or spills.
    EXPECT_EQ(package.kernargBytes, 28) << arch;
    EXPECT_EQ(package.sharedMemoryBytes, 0) << arch;
    EXPECT_EQ(package.scratchBytes, 0) << arch;
    EXPECT_GT(package.vgprs, 0) << arch;
    EXPECT_EQ(package.matrixDots, 0) << arch;
    tk::rocm::ToolReport report;
    std::string error;
    EXPECT_EQ(tk::rocm::checkWithLLVMTools(package, report, error), TK_SUCCESS)
        << error;
  }
}

TEST(RocmCompiler, DotsRunOnTheMatrixInstructions) {
  for (const char *arch : {"gfx942", "gfx90a", "gfx1100"}) {
    tk::rocm::Package package = compileOrFail("matmul.tk", "matmul", arch);
    EXPECT_EQ(package.matrixDots, 1) << arch;
    tk::rocm::ToolReport report;
    std::string error;
    ASSERT_EQ(tk::rocm::checkWithLLVMTools(package, report, error), TK_SUCCESS)
        << error;
    EXPECT_GT(report.matrixInstructions, 0) << arch;
  }
}

TEST(RocmCompiler, ChecksFailOnAPackageThatLies) {
  tk::rocm::Package package =
      compileOrFail("vector_add.tk", "vector_add", "gfx942");
  std::string error;
  tk::rocm::ToolReport report;
  // A dot the code does not run on v_mfma.
  tk::rocm::Package noMfma = package;
  noMfma.matrixDots = 1;
  EXPECT_EQ(tk::rocm::checkWithLLVMTools(noMfma, report, error),
            TK_ERROR_COMPILATION);
  EXPECT_NE(error.find("no v_mfma"), std::string::npos) << error;
  // Metadata that is not the code object's.
  tk::rocm::Package wrongLds = package;
  wrongLds.sharedMemoryBytes = 1024;
  EXPECT_NE(tk::rocm::checkMetadata(wrongLds, error), TK_SUCCESS);
  EXPECT_NE(error.find("LDS"), std::string::npos) << error;
  EXPECT_NE(tk::rocm::checkWithLLVMTools(wrongLds, report, error), TK_SUCCESS);
  EXPECT_NE(error.find("group_segment_fixed_size"), std::string::npos) << error;
  tk::rocm::Package wrongEntry = package;
  wrongEntry.entry = "other";
  EXPECT_NE(tk::rocm::checkMetadata(wrongEntry, error), TK_SUCCESS);
}

// What MatrixCoreUnit::registerRows promises of each accumulator fragment
// of the presets: a lane's registers lie at the same row offsets from its
// first as lane 0's, and the lanes holding one row differ only in the bits
// of rowLaneMask, so that row reductions are shuffles over those bits.
TEST(RocmTargets, AccumulatorRowsAreTheSameInEveryLane) {
  tk::rocm::registerTargetPresets();
  for (const char *preset : {"amd-cdna3", "amd-cdna2", "amd-rdna3"}) {
    std::string error;
    std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(preset, error);
    ASSERT_TRUE(info) << error;
    for (const tk::MatrixIntrinsic &intrinsic : info->intrinsics) {
      const tk::FragmentLayout &acc = intrinsic.accLayout;
      auto rowsOf = [&](int64_t lane) {
        std::vector<int64_t> rows;
        for (const auto &element :
             acc.elementsOf(/*warp=*/0, lane, intrinsic.m, intrinsic.n))
          rows.push_back(element[0]);
        return rows;
      };
      std::vector<int64_t> first = rowsOf(0);
      int64_t mask = tk::rowLaneMask(acc);
      for (int64_t lane = 0; lane < info->warpSize; ++lane) {
        std::vector<int64_t> rows = rowsOf(lane);
        ASSERT_EQ(rows.size(), first.size()) << intrinsic.name;
        for (size_t i = 0; i < rows.size(); ++i)
          EXPECT_EQ(rows[i] - rows[0], first[i] - first[0])
              << intrinsic.name << " lane " << lane << " register " << i;
        for (int64_t other = 0; other < info->warpSize; ++other)
          EXPECT_EQ(rowsOf(other)[0] == rows[0],
                    (other & ~mask) == (lane & ~mask))
              << intrinsic.name << " lanes " << lane << ", " << other;
      }
    }
  }
}

// The operands' swizzle in LDS against CDNA's 32 banks of 4 bytes: the
// lanes of a half-wave reading a 32x32x8 MFMA's A fragment (32 rows at one
// k run) touch each bank with at most 2 distinct addresses; stored plainly
// row-major, the same reads would put all 32 rows on the same 2 banks
// (32 words each).
TEST(RocmCompiler, OperandsInLDSSpreadOverTheBanks) {
  tk::rocm::registerTargetPresets();
  std::string error;
  std::optional<tk::TargetInfo> info =
      tk::TargetInfo::parse("amd-cdna3", error);
  ASSERT_TRUE(info) << error;
  tk::rocm::MatrixCoreUnit unit(*info);
  mlir::MLIRContext context;
  tk::MatrixUnit::HeldProduct product;
  product.a = product.b = mlir::Float16Type::get(&context);
  product.accumulator = mlir::Float32Type::get(&context);
  product.m = product.n = 128;
  product.k = 64;
  product.numThreads = 256;
  ASSERT_TRUE(unit.holds(product));
  ASSERT_TRUE(unit.laysOutOperands(product));
  std::optional<tk::SharedLayout> a = unit.operandLayout(product, 0),
                                  b = unit.operandLayout(product, 1);
  // K-major in chunks of the 4 k a lane reads (8 bytes), 16 phases: the
  // 16 chunks of a 128-byte line of the 32 banks (Triton's
  // #ttg.swizzled_shared<{vec = 4, perPhase = 1, maxPhase = 16}>).
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->contiguous, 1);
  EXPECT_EQ(b->contiguous, 0);
  EXPECT_EQ(a->vec, 4);
  EXPECT_EQ(a->maxPhase, 16);
  auto worstBank = [&](auto &&byteOf) {
    int worst = 0;
    for (int half = 0; half < 2; ++half) {
      std::map<int64_t, std::set<int64_t>> banks;
      for (int64_t lane = 32 * half; lane < 32 * half + 32; ++lane)
        for (int64_t word = 0; word < 2; ++word) {
          int64_t address = byteOf(lane) + 4 * word;
          banks[(address / 4) % 32].insert(address / 4);
        }
      for (const auto &[bank, words] : banks)
        worst = std::max(worst, int(words.size()));
    }
    return worst;
  };
  for (int64_t kk = 0; kk < product.k; kk += 8) {
    // mfma 32x32x8: lane l reads row l % 32, k = kk + 4 (l / 32) .. + 3.
    int swizzled = worstBank([&](int64_t lane) {
      return 2 *
             a->offset(lane % 32, kk + 4 * (lane / 32), {product.m, product.k});
    });
    int plain = worstBank([&](int64_t lane) {
      return 2 * ((lane % 32) * product.k + kk + 4 * (lane / 32));
    });
    EXPECT_LE(swizzled, 2) << "k " << kk;
    EXPECT_EQ(plain, 32) << "k " << kk;
  }
  // B is held K-major: a lane's run of k stays one 8-byte read.
  for (int64_t k = 0; k < 4; ++k)
    EXPECT_EQ(b->offset(k, 5, {product.k, product.n}),
              b->offset(0, 5, {product.k, product.n}) + k);
}

TEST(RocmPackage, RoundTripsAndRefusesEveryTruncation) {
  tk::rocm::Package package =
      compileOrFail("vector_add.tk", "vector_add", "gfx1100");
  std::string bytes = tk::rocm::serializePackage(package);
  tk::rocm::Package parsed;
  std::string error;
  ASSERT_EQ(tk::rocm::parsePackage(bytes.data(), bytes.size(), parsed, error),
            TK_SUCCESS)
      << error;
  EXPECT_EQ(parsed.entry, "vector_add");
  EXPECT_EQ(parsed.arch, "gfx1100");
  EXPECT_EQ(parsed.waveSize, 32);
  EXPECT_EQ(parsed.hsaco, package.hsaco);
  for (size_t size = 0; size < bytes.size(); size += 7)
    EXPECT_EQ(tk::rocm::parsePackage(bytes.data(), size, parsed, error),
              TK_ERROR_INVALID_ARGUMENT)
        << size;
  std::string trailing = bytes + "x";
  EXPECT_EQ(
      tk::rocm::parsePackage(trailing.data(), trailing.size(), parsed, error),
      TK_ERROR_INVALID_ARGUMENT);
  // Not an AMDGPU code object.
  tk::rocm::Package notElf = package;
  notElf.hsaco = std::string(200, 'x');
  std::string notElfBytes = tk::rocm::serializePackage(notElf);
  EXPECT_EQ(tk::rocm::parsePackage(notElfBytes.data(), notElfBytes.size(),
                                   parsed, error),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(error.find("not an ELF"), std::string::npos) << error;
}

TEST(RocmCompiler, ErrorsHaveTheirStatus) {
  tk::rocm::Package package;
  std::string error;
  EXPECT_EQ(compile("vector_add.tk", "vector_add", "gfx1030", package, error),
            TK_ERROR_UNSUPPORTED);
  EXPECT_NE(error.find("gfx942"), std::string::npos) << error;
  EXPECT_EQ(compile("vector_add.tk", "missing", "gfx942", package, error),
            TK_ERROR_NOT_FOUND);
  tk::rocm::CompileInput input;
  std::string bad = "tk.func @f( {";
  input.module = bad.data();
  input.size = bad.size();
  input.entry = "f";
  ASSERT_EQ(tk::rocm::parseTarget("gfx942", input.options.target, error),
            TK_SUCCESS);
  EXPECT_EQ(tk::rocm::compileToPackage(input, package, error),
            TK_ERROR_INVALID_IR);
}

TEST(RocmPlugin, NamesWhyThereIsNoDevice) {
  // ctest names rocm in TK_BACKEND: the plugin starts HIP even without
  // /dev/kfd, so HIP's own answer is what it reports (DeviceProbeTest
  // covers the skip).
  ASSERT_NE(plugin(), nullptr);
  EXPECT_STREQ(api().name, "rocm");
  tk_status status = api().initialize();
  if (status == TK_SUCCESS)
    GTEST_SKIP() << "this machine has an AMD GPU";
  EXPECT_EQ(status, TK_ERROR_NO_DEVICE);
  std::string why = api().last_error();
  EXPECT_NE(why.find("tk-rocm: "), std::string::npos) << why;
  EXPECT_TRUE(why.find("libamdhip64") != std::string::npos) << why;
  int32_t count = -1;
  EXPECT_EQ(api().device_count(&count), TK_SUCCESS);
  EXPECT_EQ(count, 0);
}

TEST(RocmPlugin, DeclaresTheMatrixUnitOfItsTarget) {
  tk_backend_capabilities caps;
  caps.struct_size = sizeof(caps);
  setenv("TK_ROCM_ARCH", "gfx1100", 1);
  ASSERT_EQ(api().get_capabilities(0, &caps), TK_SUCCESS) << api().last_error();
  EXPECT_EQ(caps.mma_kinds, uint32_t(TK_MMA_BIT_WMMA));
  setenv("TK_ROCM_ARCH", "gfx942", 1);
  ASSERT_EQ(api().get_capabilities(0, &caps), TK_SUCCESS) << api().last_error();
  EXPECT_EQ(caps.mma_kinds, uint32_t(TK_MMA_BIT_MFMA));
  EXPECT_EQ(caps.fp8, 0);
  unsetenv("TK_ROCM_ARCH");
}

TEST(RocmPlugin, CompileTargetNamesArchAndCodeObjectVersion) {
  // Both change the code object, so the kernel cache keys on both.
  char target[64];
  setenv("TK_ROCM_ARCH", "gfx1100", 1);
  setenv("TK_ROCM_CODE_OBJECT_VERSION", "4", 1);
  ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
      << api().last_error();
  EXPECT_STREQ(target, "gfx1100 cov4");
  setenv("TK_ROCM_ARCH", "gfx942", 1);
  setenv("TK_ROCM_CODE_OBJECT_VERSION", "5", 1);
  ASSERT_EQ(api().compile_target(0, target, sizeof(target)), TK_SUCCESS)
      << api().last_error();
  EXPECT_STREQ(target, "gfx942 cov5");
  unsetenv("TK_ROCM_CODE_OBJECT_VERSION");
  unsetenv("TK_ROCM_ARCH");
}

TEST(RocmPlugin, ValidateCatchesADamagedBinary) {
  tk::rocm::Package package =
      compileOrFail("vector_add.tk", "vector_add", "gfx942");
  std::string bytes = tk::rocm::serializePackage(package);
  EXPECT_EQ(api().validate(bytes.data(), bytes.size()), TK_SUCCESS)
      << api().last_error();
  package.kernargBytes += 8;
  std::string lying = tk::rocm::serializePackage(package);
  EXPECT_EQ(api().validate(lying.data(), lying.size()),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(api().last_error()).find("kernarg"), std::string::npos)
      << api().last_error();
  EXPECT_EQ(api().validate(bytes.data(), 10), TK_ERROR_INVALID_ARGUMENT);
}

} // namespace

// The layout the matrix cores state for a held accumulator (#tkw.held in
// the thread layouts) is where registerPositions puts every register of
// every thread: a 128x128 product on 4 waves (a 2x2 grid of waves), and
// attention's 64x64 scores with rows across waves, on wave64 CDNA3 and
// wave32 RDNA3. A layout that lies (tiles dealt in turn, not in blocks)
// is caught.
TEST(RocmCompiler, MatrixCoresStateTheirHeldLayout) {
  tk::rocm::registerTargetPresets();
  mlir::MLIRContext context;
  for (const char *preset : {"amd-cdna3", "amd-rdna3"}) {
    std::string error;
    std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(preset, error);
    ASSERT_TRUE(info) << error;
    tk::rocm::MatrixCoreUnit unit(*info);
    for (bool rowsAcrossWarps : {false, true}) {
      tk::MatrixUnit::HeldProduct product;
      product.a = product.b = mlir::Float16Type::get(&context);
      product.accumulator = mlir::Float32Type::get(&context);
      product.m = product.n = rowsAcrossWarps ? 64 : 128;
      product.k = 64;
      product.rowsAcrossWarps = rowsAcrossWarps;
      product.numThreads = 4 * info->warpSize;
      SCOPED_TRACE(std::string(preset) +
                   (rowsAcrossWarps ? ", rows across waves" : ", square"));
      ASSERT_TRUE(unit.holds(product));
      std::optional<tk::HeldLayout> layout = unit.heldLayout(product);
      ASSERT_TRUE(layout);
      std::optional<std::string> mismatch =
          tk::heldLayoutMismatch(context, unit, product, *layout);
      EXPECT_FALSE(mismatch) << *mismatch;
      std::optional<std::string> gap =
          layout->uncovered(product.numThreads, product.m, product.n);
      EXPECT_FALSE(gap) << *gap;
      // Rows across waves keep each row in one wave: its lanes along the
      // accumulator's columns share it, and row reductions are shuffles.
      std::optional<tk::RegisterRows> rows = unit.registerRows(product);
      EXPECT_EQ(rows.has_value(), rowsAcrossWarps);
      if (rows) {
        EXPECT_EQ(rows->laneMask, tk::rowLaneMask(layout->fragment));
      }
      if (!rowsAcrossWarps) {
        EXPECT_EQ(layout->groups, (std::array<int64_t, 2>{2, 2}));
        tk::HeldLayout dealt = *layout;
        dealt.cyclic = true;
        EXPECT_TRUE(tk::heldLayoutMismatch(context, unit, product, dealt));
      }
    }
  }
}

// What the matrix cores state of a product they compute without holding
// it (#tkw.held without a product number: the instruction's tiles dealt to
// the waves in turn) is where emit writes each element of the result from,
// for every thread, on wave64 CDNA3 and wave32 RDNA3; with fewer tiles than
// waves too. A layout that lies (groups of half a wave) is caught.
TEST(RocmCompiler, MatrixCoresStateHowTheySpreadAProduct) {
  tk::rocm::registerTargetPresets();
  mlir::MLIRContext context;
  for (const char *preset : {"amd-cdna3", "amd-rdna3"}) {
    std::string error;
    std::optional<tk::TargetInfo> info = tk::TargetInfo::parse(preset, error);
    ASSERT_TRUE(info) << error;
    tk::rocm::MatrixCoreUnit unit(*info);
    for (int64_t size : {64, 32}) {
      tk::MatrixUnit::HeldProduct product;
      product.a = product.b = mlir::Float16Type::get(&context);
      product.accumulator = mlir::Float32Type::get(&context);
      product.m = product.n = size;
      product.k = 32;
      product.numThreads = 4 * info->warpSize;
      SCOPED_TRACE(std::string(preset) + ", " + std::to_string(size));
      std::optional<tk::HeldLayout> layout = unit.emittedLayout(product);
      ASSERT_TRUE(layout);
      EXPECT_TRUE(layout->cyclic);
      EXPECT_EQ(layout->groupThreads, info->warpSize);
      std::optional<std::string> gap =
          layout->uncovered(product.numThreads, product.m, product.n);
      EXPECT_FALSE(gap) << *gap;
      std::optional<std::string> mismatch =
          tk::emittedLayoutMismatch(context, unit, product, *layout);
      EXPECT_FALSE(mismatch) << *mismatch;
      tk::HeldLayout lying = *layout;
      lying.groupThreads /= 2;
      EXPECT_TRUE(tk::emittedLayoutMismatch(context, unit, product, lying));
    }
  }
}
