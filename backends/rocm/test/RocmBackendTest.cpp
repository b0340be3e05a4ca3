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
#include "compiler/RecomputeLaneIndices.h"
#include "compiler/TargetInfo.h"
#include "tk/core/TargetInfo.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/tk_plugin.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/SourceMgr.h"

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

// gfx1100 at head size 128 (lit/Inputs/attention-d128.tk): q is staged in
// LDS (32 KiB beside the dots' 16) and nothing spills. On a device with 40
// KiB of LDS the slot would not fit: the kernel compiles with q held in
// registers instead, in the dots' 32 KiB, not UNSUPPORTED.
TEST(RocmCompiler, StagedOperandsFallBackToRegistersWhereLdsIsShort) {
  std::string text =
      readFile(std::string(TK_ROCM_TEST_INPUTS) + "/attention-d128.tk");
  auto build = [&](const std::string &overrides, tk::rocm::Package &package) {
    tk::rocm::CompileInput input;
    input.module = text.data();
    input.size = text.size();
    input.entry = "attention";
    input.options.numWarps = 8;
    std::string error;
    EXPECT_EQ(tk::rocm::parseTarget("gfx1100", input.options.target, error),
              TK_SUCCESS)
        << error;
    input.options.target.preset += overrides;
    tk_status status = tk::rocm::compileToPackage(input, package, error);
    EXPECT_EQ(status, TK_SUCCESS) << error;
    return status;
  };
  tk::rocm::Package staged, held;
  ASSERT_EQ(build("", staged), TK_SUCCESS);
  EXPECT_EQ(staged.sharedMemoryBytes, 49152);
  EXPECT_EQ(staged.scratchBytes, 0);
  ASSERT_EQ(build(":shared-memory=40960", held), TK_SUCCESS);
  EXPECT_EQ(held.sharedMemoryBytes, 32768);
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

// A kernel of one loop: %row, from the workitem id, is read inside the loop
// and after it; %column only after it. After the loop both are recomputed
// from the lane id, and %offset reads the clones; the loop still reads the
// first %row. The loop is guarded, so "after" is where its skip path joins.
constexpr const char *kLoopKernel = R"(
define amdgpu_kernel void @kernel(ptr addrspace(1) %out, i32 %n) !reqd_work_group_size !0 {
entry:
  %tid = call i32 @llvm.amdgcn.workitem.id.x()
  %row = shl i32 %tid, 2
  %column = and i32 %tid, 7
  %guard = icmp sgt i32 %n, 0
  br i1 %guard, label %loop, label %after
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %inside = add i32 %i, %row
  %at.inside = getelementptr float, ptr addrspace(1) %out, i32 %inside
  store float 1.0, ptr addrspace(1) %at.inside
  %next = add i32 %i, 1
  %done = icmp eq i32 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  br label %after
after:
  %offset = add i32 %row, %column
  %at = getelementptr float, ptr addrspace(1) %out, i32 %offset
  store float 2.0, ptr addrspace(1) %at
  br label %tail
tail:
  ret void
}
declare i32 @llvm.amdgcn.workitem.id.x()
!0 = !{i32 WORKGROUP}
)";

// `exitJoins`: the loop exits straight into the block where its skip path
// joins (as optimised code has it), not through a block of its own.
std::unique_ptr<llvm::Module> parseLoopKernel(llvm::LLVMContext &context,
                                              const std::string &workgroup,
                                              bool exitJoins = false) {
  std::string text = kLoopKernel;
  text.replace(text.find("WORKGROUP"), 9, workgroup);
  if (exitJoins) {
    text.replace(text.find("label %exit, label %loop"), 24,
                 "label %after, label %loop");
    std::string exitBlock = "exit:\n  br label %after\n";
    text.erase(text.find(exitBlock), exitBlock.size());
  }
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module =
      llvm::parseAssemblyString(text, diagnostic, context);
  EXPECT_TRUE(module) << diagnostic.getMessage().str();
  return module;
}

llvm::Instruction *instructionNamed(llvm::Function &kernel,
                                    llvm::StringRef name) {
  for (llvm::BasicBlock &block : kernel)
    for (llvm::Instruction &inst : block)
      if (inst.getName() == name)
        return &inst;
  return nullptr;
}

// Whether `value` is computed from the lane id's inline assembly.
bool readsLaneId(const llvm::Value *value) {
  const auto *inst = llvm::dyn_cast<llvm::Instruction>(value);
  if (!inst)
    return false;
  if (const auto *call = llvm::dyn_cast<llvm::CallInst>(inst))
    return call->isInlineAsm() &&
           llvm::StringRef(llvm::cast<llvm::InlineAsm>(call->getCalledOperand())
                               ->getAsmString())
               .contains("v_mbcnt_lo_u32_b32 $0, -1, 0");
  return llvm::any_of(inst->operands(), [](const llvm::Value *operand) {
    return readsLaneId(operand);
  });
}

std::string printed(const llvm::Function &kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel.print(os);
  return text;
}

TEST(RocmRecomputeLaneIndices, ClonesAfterTheLoopWhatIsUsedAfterIt) {
  for (auto [waveSize, exitJoins] :
       {std::pair{32u, false}, {64u, false}, {32u, true}}) {
    SCOPED_TRACE("wave" + std::to_string(waveSize) +
                 (exitJoins ? ", exit joins" : ""));
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module =
        parseLoopKernel(context, "128, i32 1, i32 1", exitJoins);
    ASSERT_TRUE(module);
    llvm::Function &kernel = *module->getFunction("kernel");
    EXPECT_EQ(tk::rocm::recomputeLaneIndicesAfterLoops(kernel, waveSize), 2u);
    std::string broken;
    llvm::raw_string_ostream os(broken);
    ASSERT_FALSE(llvm::verifyFunction(kernel, &os)) << broken;

    llvm::Instruction *offset = instructionNamed(kernel, "offset");
    ASSERT_TRUE(offset);
    for (llvm::Value *operand : offset->operands()) {
      auto *clone = llvm::cast<llvm::Instruction>(operand);
      EXPECT_EQ(clone->getParent()->getName(), "after")
          << "reads a value of before the loop";
      EXPECT_TRUE(readsLaneId(clone));
    }
    llvm::Instruction *inside = instructionNamed(kernel, "inside");
    ASSERT_TRUE(inside);
    EXPECT_EQ(inside->getOperand(1), instructionNamed(kernel, "row"));
    EXPECT_EQ(instructionNamed(kernel, "row")->getParent()->getName(), "entry");
    // The wave's first id: uniform, read once where the kernel begins.
    std::string text = printed(kernel);
    EXPECT_NE(text.find("call i32 @llvm.amdgcn.readfirstlane.i32(i32 %tid)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("and i32 %0, " + std::to_string(-int(waveSize))),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("v_mbcnt_hi_u32_b32") != std::string::npos,
              waveSize == 64)
        << text;
  }
}

TEST(RocmRecomputeLaneIndices, LeavesKernelsWhoseIdsAreNotWaveAndLane) {
  // Two rows of 64, a wave and a half, no size at all: a workitem id x is not
  // its wave's first id plus its lane there, or not known to be.
  for (const char *workgroup : {"64, i32 2, i32 1", "48, i32 1, i32 1"}) {
    llvm::LLVMContext context;
    std::unique_ptr<llvm::Module> module = parseLoopKernel(context, workgroup);
    ASSERT_TRUE(module);
    llvm::Function &kernel = *module->getFunction("kernel");
    std::string before = printed(kernel);
    EXPECT_EQ(tk::rocm::recomputeLaneIndicesAfterLoops(kernel, 32), 0u)
        << workgroup;
    EXPECT_EQ(printed(kernel), before);
  }
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> module =
      parseLoopKernel(context, "64, i32 1, i32 1");
  ASSERT_TRUE(module);
  llvm::Function &kernel = *module->getFunction("kernel");
  kernel.setMetadata("reqd_work_group_size", nullptr);
  EXPECT_EQ(tk::rocm::recomputeLaneIndicesAfterLoops(kernel, 32), 0u);
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
  // fp8 by tk-expand-fp8's integer code (not CDNA3's FNUZ fp8).
  EXPECT_EQ(caps.fp8, 1);
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
