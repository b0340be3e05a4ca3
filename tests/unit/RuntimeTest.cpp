//===- RuntimeTest.cpp - tests of the runtime's C++ objects ---------------===//
//
// The plugin loader against purpose-built broken plugins, kernel preparation
// (parse, verify, entry, constexprs, signature), tk::specializeArguments, and
// the kernel cache (single-flight compile, disk entries, corruption). None of
// these needs a backend plugin.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestSupport.h"

#include "tk/core/Specialize.h"
#include "tk/ir/Dialect.h"
#include "tk/ir/NestingLimit.h"
#include "tk/runtime/Device.h"
#include "tk/runtime/Kernel.h"
#include "tk/runtime/KernelCache.h"
#include "tk/runtime/KernelCompile.h"
#include "tk/runtime/KernelSource.h"
#include "tk/runtime/PluginLoader.h"
#include "tk/runtime/Status.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

using namespace tk::runtime;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

//===----------------------------------------------------------------------===//
// Plugin loader
//===----------------------------------------------------------------------===//

/// A loader that sees the fixture plugins (noentry, abi99) and the build's
/// lib folder (where the real plugins are built).
PluginLoader makeFixtureLoader() {
  return PluginLoader({TK_TEST_PLUGIN_DIR, TK_TEST_LIB_DIR});
}

TEST(PluginLoader, FindsFixturePlugins) {
  std::vector<PluginFile> plugins = makeFixtureLoader().findPlugins();
  std::vector<std::string> names;
  for (const PluginFile &plugin : plugins)
    names.push_back(plugin.name);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"abi99", "noentry"}));
}

TEST(PluginLoader, UnknownBackendListsPluginsFound) {
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().select("nosuch", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("TK_BACKEND=nosuch"),
                    HasSubstr("libtk_backend_nosuch.so"),
                    HasSubstr("plugins found: "), HasSubstr("abi99 ("),
                    HasSubstr("noentry (")));
  EXPECT_EQ(plugin, nullptr);
}

TEST(PluginLoader, ListWithoutNamesIsInvalid) {
  // Commas and spaces alone are a mistake, not a request for the default
  // order (which an unset TK_BACKEND asks for).
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().select(" , ,,", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("TK_BACKEND=' , ,,' names no backend"),
                    HasSubstr("leave it unset")));
  EXPECT_EQ(plugin, nullptr);
}

TEST(PluginLoader, InvalidNameIsNotFound) {
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().open("../etc/passwd", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_NOT_FOUND);
}

TEST(PluginLoader, MissingEntryPointNamesFileAndSymbol) {
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().open("noentry", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_PLUGIN);
  EXPECT_THAT(status.message(), AllOf(HasSubstr("libtk_backend_noentry.so"),
                                      HasSubstr("tk_backend_get_interface")));
}

TEST(PluginLoader, AbiMismatchNamesBothVersions) {
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().open("abi99", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_ABI_MISMATCH);
  EXPECT_THAT(
      status.message(),
      AllOf(
          HasSubstr("libtk_backend_abi99.so"), HasSubstr("ABI version 99"),
          HasSubstr("speaks version " + std::to_string(TK_PLUGIN_ABI_MAJOR))));
}

TEST(PluginLoader, MinorZeroPluginHasUnknownCapabilities) {
  // A table of ABI 1.0 ends before get_capabilities: it loads, and its
  // capabilities are "unknown" without the field past struct_size being read
  // (the fixture's trap would set dtypes and fail).
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().open("minor0", &plugin);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_FALSE(plugin->declaresCapabilities());
  EXPECT_FALSE(plugin->hasEvents());
  tk_capabilities caps;
  std::memset(&caps, 0xff, sizeof(caps));
  caps.struct_size = sizeof(caps);
  Status query = plugin->queryCapabilities(0, caps);
  ASSERT_TRUE(query.isOk()) << query.message();
  EXPECT_EQ(caps.known, 0);
  EXPECT_EQ(caps.dtypes, 0u);
  EXPECT_EQ(caps.atomics, 0u);
}

TEST(PluginLoader, CpuDeclaresCapabilities) {
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().open("cpu", &plugin);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_TRUE(plugin->declaresCapabilities());
  EXPECT_TRUE(plugin->hasEvents());
  tk_capabilities caps;
  std::memset(&caps, 0, sizeof(caps));
  caps.struct_size = sizeof(caps);
  ASSERT_TRUE(plugin->queryCapabilities(0, caps).isOk());
  EXPECT_EQ(caps.known, 1);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_BF16);
  // The CPU backend has fp8 (computed in f32, converted by tk-expand-fp8).
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F8E4M3);
  EXPECT_TRUE(caps.dtypes & TK_DTYPE_BIT_F8E5M2);
  EXPECT_EQ(caps.fp8, 1);
  EXPECT_EQ(caps.mma_kinds, uint32_t(TK_MMA_NONE));
  EXPECT_TRUE(caps.atomics & TK_ATOMIC_BIT_CAS);
}

TEST(PluginLoader, ListReportsEveryAttempt) {
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().select("nosuch, abi99", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_ABI_MISMATCH);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("nosuch"), HasSubstr("ABI version 99")));
}

TEST(PluginLoader, AutomaticSelectionWithoutBackends) {
  Plugin *plugin = nullptr;
  Status status = PluginLoader({TK_TEST_PLUGIN_DIR}).select(nullptr, &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("cuda, rocm, xe, vulkan, cpu"),
                    HasSubstr("cpu: not installed"), HasSubstr("abi99")));
}

TEST(PluginLoader, SearchPathStartsWithTkBackendPath) {
  const char *old = std::getenv("TK_BACKEND_PATH");
  std::string saved = old ? old : "";
  setenv("TK_BACKEND_PATH", "/nonexistent/a::/nonexistent/b", 1);
  std::vector<std::string> path = PluginLoader::getDefaultSearchPath();
  if (old)
    setenv("TK_BACKEND_PATH", saved.c_str(), 1);
  else
    unsetenv("TK_BACKEND_PATH");
  ASSERT_GE(path.size(), 3u);
  EXPECT_EQ(path[0], "/nonexistent/a");
  EXPECT_EQ(path[1], "/nonexistent/b");
  // Then the folder of libtk.so itself, found with dladdr.
  llvm::SmallString<256> lib;
  ASSERT_FALSE(llvm::sys::fs::real_path(TK_TEST_LIB_DIR, lib));
  EXPECT_EQ(path[2], std::string(lib));
}

//===----------------------------------------------------------------------===//
// Kernel preparation
//===----------------------------------------------------------------------===//

tk_kernel_source textSource(const std::string &text,
                            const char *entry = nullptr) {
  return tk_kernel_source{TK_SOURCE_TEXT, text.data(), text.size(), entry};
}

TEST(KernelSource, VectorAddSignatureWithSourceNames) {
  std::string text = tk::test::readKernel("vector_add.tk");
  ASSERT_FALSE(text.empty());
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {}, prepared);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(prepared.entry, "vector_add");
  ASSERT_EQ(prepared.arguments.size(), 4u);
  const char *names[] = {"x", "y", "out", "n"};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(prepared.arguments[i].name, names[i]);
  EXPECT_EQ(prepared.arguments[2].type, TK_PLUGIN_ARG_PTR);
  EXPECT_EQ(prepared.arguments[2].typeName, "!tk.ptr<f32>");
  EXPECT_EQ(prepared.arguments[2].elementBytes, 4);
  EXPECT_EQ(prepared.arguments[2].divisibility, 16);
  EXPECT_EQ(prepared.arguments[2].alignment, 16);
  EXPECT_EQ(prepared.arguments[3].type, TK_PLUGIN_ARG_I32);
  EXPECT_FALSE(prepared.bytecode.empty());
}

/// One source's specialisations side by side in a package: the entry takes
/// a new name in the bytecode the plugins compile, which reads back with it,
/// and the signature stays.
TEST(KernelSource, RenamedEntryReadsBackUnderItsNewName) {
  std::string text = tk::test::readKernel("vector_add.tk");
  ASSERT_FALSE(text.empty());
  PreparedKernel prepared;
  ASSERT_TRUE(prepareKernel(textSource(text), {}, prepared).isOk());
  std::vector<KernelArgument> arguments = prepared.arguments;
  std::string before = prepared.bytecode;
  Status renamed = renameEntry(prepared, "vector_add_f32_block1024");
  ASSERT_TRUE(renamed.isOk()) << renamed.message();
  EXPECT_EQ(prepared.entry, "vector_add_f32_block1024");
  EXPECT_NE(prepared.bytecode, before);
  ASSERT_EQ(prepared.arguments.size(), arguments.size());

  tk_kernel_source bytecode = {TK_SOURCE_BYTECODE, prepared.bytecode.data(),
                               prepared.bytecode.size(),
                               "vector_add_f32_block1024"};
  PreparedKernel again;
  Status read = prepareKernel(bytecode, {}, again);
  ASSERT_TRUE(read.isOk()) << read.message();
  EXPECT_EQ(again.entry, "vector_add_f32_block1024");
  for (size_t i = 0; i < arguments.size(); ++i)
    EXPECT_EQ(again.arguments[i].name, arguments[i].name);
  bytecode.entry = "vector_add";
  EXPECT_EQ(prepareKernel(bytecode, {}, again).code(), TK_ERROR_NOT_FOUND);
}

/// An entry point is an identifier on every backend (PTX, SPIR-V, ELF).
TEST(KernelSource, RenamingToANonIdentifierIsRefused) {
  std::string text = tk::test::readKernel("vector_add.tk");
  PreparedKernel prepared;
  ASSERT_TRUE(prepareKernel(textSource(text), {}, prepared).isOk());
  for (const char *name : {"", "3rd", "matmul/f16", "a b", "x-y"}) {
    Status status = renameEntry(prepared, name);
    EXPECT_EQ(status.code(), TK_ERROR_INVALID_ARGUMENT) << name;
    EXPECT_THAT(status.message(), HasSubstr("cannot name a kernel")) << name;
    EXPECT_EQ(prepared.entry, "vector_add");
  }
}

TEST(KernelSource, MalformedIRGivesLocatedDiagnostic) {
  std::string text = "tk.func @bad(%x: i32) {\n"
                     "  %y = arith.addi %x, %nowhere : i32\n"
                     "  tk.return\n"
                     "}\n";
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_INVALID_IR);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("<source>:2:"), HasSubstr("error:"),
                    HasSubstr("nowhere")));
}

TEST(KernelSource, VerifierErrorGivesLocatedDiagnostic) {
  std::string text = "tk.func @bad() {\n"
                     "  %r = tk.make_range {end = 8 : i32, start = 16 : i32} "
                     ": tensor<8xi32>\n"
                     "  tk.return\n"
                     "}\n";
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_INVALID_IR);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("<source>:2:"), HasSubstr("tk.make_range")));
}

/// `depth` scf.for loops, one inside the other, in a kernel.
std::string nestedLoops(int depth) {
  std::string text = "tk.func @deep(%n: i32) {\n"
                     "  %c0 = arith.constant 0 : index\n"
                     "  %c1 = arith.constant 1 : index\n";
  for (int i = 0; i < depth; ++i)
    text += "  scf.for %i" + std::to_string(i) + " = %c0 to %c1 step %c1 {\n";
  for (int i = 0; i < depth; ++i)
    text += "  }\n";
  return text + "  tk.return\n}\n";
}

TEST(KernelSource, NestingBeyondTheLimitIsRefusedBeforeParsing) {
  // 3000 nested loops overflowed the parser's stack: a segfault of the
  // thread calling tk_kernel_create.
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(nestedLoops(3000)), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_INVALID_IR);
  // The func's brace is the first level, each loop's one more.
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("<source>:259:"),
                    HasSubstr("nests deeper than 256 brackets")));
  // Real kernels are far from it.
  EXPECT_TRUE(prepareKernel(textSource(nestedLoops(40)), {}, prepared).isOk());
}

TEST(KernelSource, NestingCountsNeitherStringsCommentsNorArrows) {
  std::string deep(300, '[');
  EXPECT_EQ(tk::findNestingBeyond("\"" + deep + "\" // " + deep), std::nullopt);
  std::string arrows;
  for (int i = 0; i < 300; ++i)
    arrows += "(i32) -> i32 ";
  EXPECT_EQ(tk::findNestingBeyond("<" + arrows + ">"), std::nullopt);
  EXPECT_EQ(tk::findNestingBeyond("\"\\\"\"" + deep),
            std::optional<size_t>(260));
  EXPECT_EQ(tk::findNestingBeyond("{<([" + deep, 3), std::optional<size_t>(3));
}

TEST(KernelSource, UnknownEntryListsAvailableNames) {
  std::string text = tk::test::readKernel("vector_add.tk");
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text, "nope"), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("'nope'"), HasSubstr("vector_add")));
}

TEST(KernelSource, SeveralKernelsNeedAnEntry) {
  std::string text = "tk.func @first(%x: i32) { tk.return }\n"
                     "tk.func @second(%y: i64) { tk.return }\n";
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("first, second"), HasSubstr("entry")));
  status = prepareKernel(textSource(text, "second"), {}, prepared);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(prepared.arguments.size(), 1u);
  EXPECT_EQ(prepared.arguments[0].name, "y");
  EXPECT_EQ(prepared.arguments[0].type, TK_PLUGIN_ARG_I64);
}

TEST(KernelSource, ConstexprRemovesTheArgument) {
  std::string text = tk::test::readKernel("vector_add.tk");
  tk_constexpr_value n = {"n", 4096};
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {n}, prepared);
  ASSERT_TRUE(status.isOk()) << status.message();
  ASSERT_EQ(prepared.arguments.size(), 3u);
  EXPECT_EQ(prepared.arguments[2].name, "out");

  // A different value is a different kernel (and cache key).
  PreparedKernel other;
  tk_constexpr_value m = {"n", 8192};
  ASSERT_TRUE(prepareKernel(textSource(text), {m}, other).isOk());
  EXPECT_NE(prepared.bytecode, other.bytecode);
}

TEST(KernelSource, UnknownConstexprListsArguments) {
  std::string text = tk::test::readKernel("vector_add.tk");
  tk_constexpr_value wrong = {"N", 4096};
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {wrong}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_NOT_FOUND);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("'N'"), HasSubstr("x, y, out, n")));
}

TEST(KernelSource, PointerConstexprIsRefused) {
  std::string text = tk::test::readKernel("vector_add.tk");
  tk_constexpr_value wrong = {"x", 0};
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {wrong}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(), HasSubstr("'x'"));
}

TEST(KernelSource, UnsupportedArgumentTypeIsNamed) {
  std::string text = "tk.func @narrow(%x: !tk.ptr<f16>, %flag: i16) {\n"
                     "  tk.return\n"
                     "}\n";
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("argument 1 ('flag')"), HasSubstr("i16")));
  // As a constexpr it is fine.
  tk_constexpr_value flag = {"flag", 1};
  status = prepareKernel(textSource(text), {flag}, prepared);
  EXPECT_TRUE(status.isOk()) << status.message();
}

TEST(KernelSource, TooManyArguments) {
  std::string text = "tk.func @wide(";
  for (size_t i = 0; i <= kMaxKernelArguments; ++i)
    text += (i ? ", %a" : "%a") + std::to_string(i) + ": i32";
  text += ") {\n  tk.return\n}\n";
  PreparedKernel prepared;
  Status status = prepareKernel(textSource(text), {}, prepared);
  EXPECT_EQ(status.code(), TK_ERROR_UNSUPPORTED);
  EXPECT_THAT(status.message(), HasSubstr("at most 64"));
}

TEST(KernelSource, BytecodeRoundTrip) {
  std::string text = tk::test::readKernel("vector_add.tk");
  PreparedKernel fromText;
  ASSERT_TRUE(prepareKernel(textSource(text), {}, fromText).isOk());
  tk_kernel_source bytecode = {TK_SOURCE_BYTECODE, fromText.bytecode.data(),
                               fromText.bytecode.size(), nullptr};
  PreparedKernel fromBytecode;
  Status status = prepareKernel(bytecode, {}, fromBytecode);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(fromBytecode.entry, "vector_add");
  ASSERT_EQ(fromBytecode.arguments.size(), 4u);
  // The names travel inside the IR (tk.arg_names) once recovered.
  EXPECT_EQ(fromBytecode.arguments[2].name, "out");

  std::string garbage = "definitely not bytecode";
  tk_kernel_source bad = {TK_SOURCE_BYTECODE, garbage.data(), garbage.size(),
                          nullptr};
  EXPECT_EQ(prepareKernel(bad, {}, fromBytecode).code(), TK_ERROR_INVALID_IR);
}

TEST(KernelSource, BuilderModuleFromAnotherContext) {
  mlir::DialectRegistry registry;
  tk::registerTkDialects(registry);
  mlir::MLIRContext context(registry);
  std::string text = tk::test::readKernel("vector_add.tk");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  ASSERT_TRUE(module);
  mlir::ModuleOp op = *module;
  tk_kernel_source source = {TK_SOURCE_MODULE, &op, 0, "vector_add"};
  PreparedKernel prepared;
  Status status = prepareKernel(source, {}, prepared);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_EQ(prepared.arguments.size(), 4u);
  // The caller's module is left as it was.
  auto funcs = module->getOps<tk::FuncOp>();
  EXPECT_EQ(std::distance(funcs.begin(), funcs.end()), 1);
}

//===----------------------------------------------------------------------===//
// tk::specializeArguments
//===----------------------------------------------------------------------===//

class SpecializeTest : public ::testing::Test {
protected:
  SpecializeTest() : context(makeRegistry()) {}
  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    tk::registerTkDialects(registry);
    return registry;
  }
  tk::FuncOp parse(llvm::StringRef text) {
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return {};
    return *module->getOps<tk::FuncOp>().begin();
  }
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

TEST_F(SpecializeTest, FoldsAndRecords) {
  tk::FuncOp func =
      parse("tk.func @k(%p: !tk.ptr<f32>, %a: i32, %b: i8, %c: f32) attributes "
            "{tk.arg_names = [\"p\", \"a\", \"b\", \"c\"], "
            "tk.constexprs = {BLOCK = 64 : i32}} {\n"
            "  %s = arith.addi %a, %a : i32\n"
            "  %t = arith.addi %b, %b : i8\n"
            "  %u = arith.addf %c, %c : f32\n"
            "  tk.return\n"
            "}\n");
  ASSERT_TRUE(func);
  ASSERT_TRUE(mlir::succeeded(
      tk::specializeArguments(func, {{1, 7}, {2, 200}, {3, 2}})));
  EXPECT_EQ(func.getNumArguments(), 1u);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
  auto names = func->getAttrOfType<mlir::ArrayAttr>("tk.arg_names");
  ASSERT_TRUE(names);
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(mlir::cast<mlir::StringAttr>(names[0]).getValue(), "p");
  mlir::DictionaryAttr constexprs = func.getConstexprs();
  ASSERT_TRUE(constexprs);
  EXPECT_TRUE(constexprs.get("BLOCK"));
  EXPECT_EQ(mlir::cast<mlir::IntegerAttr>(constexprs.get("a")).getInt(), 7);
  // 200 fits i8 read as unsigned; it is stored as its bit pattern.
  EXPECT_EQ(mlir::cast<mlir::IntegerAttr>(constexprs.get("b")).getInt(), -56);
  EXPECT_EQ(mlir::cast<mlir::FloatAttr>(constexprs.get("c")).getValueAsDouble(),
            2.0);
}

TEST_F(SpecializeTest, RefusesWithoutChanging) {
  tk::FuncOp func = parse("tk.func @k(%p: !tk.ptr<f32>, %a: i8) {\n"
                          "  tk.return\n"
                          "}\n");
  ASSERT_TRUE(func);
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
    messages += d.str() + "\n";
    return mlir::success();
  });
  EXPECT_TRUE(mlir::failed(tk::specializeArguments(func, {{1, 300}})));
  EXPECT_TRUE(mlir::failed(tk::specializeArguments(func, {{0, 0}})));
  EXPECT_TRUE(mlir::failed(tk::specializeArguments(func, {{1, 1}, {1, 2}})));
  EXPECT_TRUE(mlir::failed(tk::specializeArguments(func, {{5, 1}})));
  EXPECT_EQ(func.getNumArguments(), 2u);
  EXPECT_THAT(messages, AllOf(HasSubstr("300"), HasSubstr("arg1"),
                              HasSubstr("only integer and floating-point")));
}

//===----------------------------------------------------------------------===//
// Kernel cache
//===----------------------------------------------------------------------===//

CacheKey makeKey(const char *text) {
  return CacheKeyBuilder().add(text).finish();
}

TEST(KernelCache, KeysFrameTheirParts) {
  CacheKey ab_c = CacheKeyBuilder().add("ab").add("c").finish();
  CacheKey a_bc = CacheKeyBuilder().add("a").add("bc").finish();
  EXPECT_NE(ab_c, a_bc);
  EXPECT_EQ(KernelCache::toHex(ab_c).size(), 64u);
}

TEST(KernelCache, MemoryThenDiskThenCompiler) {
  tk::test::ScopedCacheDir dir;
  KernelCache cache;
  CacheKey key = makeKey("memory-disk");
  int compiles = 0;
  auto compile = [&](CompiledBinary &binary) {
    ++compiles;
    binary.data = {1, 2, 3, 4};
    binary.numWarps = 8;
    binary.sharedMemoryBytes = 1024;
    binary.registersPerThread = 32;
    return Status::success();
  };
  std::shared_ptr<const CompiledBinary> binary;
  KernelCache::Origin origin;
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  EXPECT_EQ(origin, KernelCache::Origin::Compiler);
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  EXPECT_EQ(origin, KernelCache::Origin::Memory);
  cache.clearMemory();
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  EXPECT_EQ(origin, KernelCache::Origin::Disk);
  EXPECT_EQ(compiles, 1);
  EXPECT_EQ(binary->data, (std::vector<uint8_t>{1, 2, 3, 4}));
  EXPECT_EQ(binary->numWarps, 8);
  EXPECT_EQ(binary->sharedMemoryBytes, 1024);
  EXPECT_EQ(binary->registersPerThread, 32);
  // Nothing but the entry is left in the folder (no temporaries).
  std::error_code error;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(dir.getPath(), error), end;
       !error && it != end; it.increment(error))
    ++files;
  EXPECT_EQ(files, 1);
}

/// Writes `bytes` over the entry of `key`, or truncates it to `size` bytes.
void damageEntry(const std::string &path, const std::string &bytes,
                 bool truncate) {
  std::string contents;
  {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    ASSERT_TRUE(bool(buffer));
    contents = (*buffer)->getBuffer().str();
  }
  if (truncate)
    contents.resize(bytes.size());
  else
    contents.replace(contents.size() - bytes.size(), bytes.size(), bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

TEST(KernelCache, CorruptAndTruncatedEntriesAreRecompiled) {
  tk::test::ScopedCacheDir dir;
  KernelCache cache;
  CacheKey key = makeKey("corrupt");
  int compiles = 0;
  auto compile = [&](CompiledBinary &binary) {
    ++compiles;
    binary.data.assign(4096, 0x5a);
    return Status::success();
  };
  std::shared_ptr<const CompiledBinary> binary;
  KernelCache::Origin origin;
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  std::string path = KernelCache::getEntryPath(dir.getPath(), key);
  ASSERT_TRUE(llvm::sys::fs::exists(path));

  uint64_t corruptBefore = cache.getStatistics().corruptEntries;
  damageEntry(path, "garbage!", /*truncate=*/false);
  cache.clearMemory();
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  EXPECT_EQ(origin, KernelCache::Origin::Compiler);
  EXPECT_EQ(compiles, 2);
  EXPECT_EQ(binary->data.size(), 4096u);

  damageEntry(path, std::string(40, 'x'), /*truncate=*/true);
  cache.clearMemory();
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  EXPECT_EQ(origin, KernelCache::Origin::Compiler);
  EXPECT_EQ(compiles, 3);
  EXPECT_EQ(cache.getStatistics().corruptEntries, corruptBefore + 2);

  // The rewritten entry is good again.
  cache.clearMemory();
  ASSERT_TRUE(cache.getOrCompile(key, compile, binary, &origin).isOk());
  EXPECT_EQ(origin, KernelCache::Origin::Disk);
}

TEST(KernelCache, EntryUnderAnotherKeyIsRejected) {
  tk::test::ScopedCacheDir dir;
  CompiledBinary binary;
  binary.data = {9, 9, 9};
  CacheKey key = makeKey("one"), other = makeKey("two");
  ASSERT_TRUE(KernelCache::writeEntry(dir.getPath(), key, binary).isOk());
  std::string why;
  CompiledBinary read;
  EXPECT_EQ(
      KernelCache::readEntry(KernelCache::getEntryPath(dir.getPath(), key),
                             other, read, why),
      KernelCache::ReadResult::Corrupt);
  EXPECT_THAT(why, HasSubstr("key"));
}

TEST(KernelCache, ConcurrentRequestsCompileOnce) {
  tk::test::ScopedCacheDir dir;
  KernelCache cache;
  CacheKey key = makeKey("concurrent");
  std::atomic<int> compiles{0};
  auto compile = [&](CompiledBinary &binary) {
    ++compiles;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    binary.data = {42};
    return Status::success();
  };
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      std::shared_ptr<const CompiledBinary> binary;
      if (cache.getOrCompile(key, compile, binary).isOk() && binary &&
          binary->data == std::vector<uint8_t>{42})
        ++ok;
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(ok, 8);
  EXPECT_EQ(compiles, 1);
}

TEST(KernelCache, FailedCompileIsSharedThenRetried) {
  tk::test::ScopedCacheDir dir;
  KernelCache cache;
  CacheKey key = makeKey("failing");
  int calls = 0;
  auto failing = [&](CompiledBinary &) {
    ++calls;
    return Status(TK_ERROR_COMPILATION, "no good");
  };
  std::shared_ptr<const CompiledBinary> binary;
  Status status = cache.getOrCompile(key, failing, binary);
  EXPECT_EQ(status.code(), TK_ERROR_COMPILATION);
  EXPECT_EQ(status.message(), "no good");
  status = cache.getOrCompile(key, failing, binary);
  EXPECT_EQ(calls, 2);
  EXPECT_FALSE(
      llvm::sys::fs::exists(KernelCache::getEntryPath(dir.getPath(), key)));
}

TEST(KernelCache, UnwritableFolderOnlyCostsTime) {
  // A file where the folder should be: writes fail, lookups still work.
  std::string base = tk::test::makeTempDir("tk-cache-blocked");
  std::string blocker = base + "/not-a-folder";
  std::ofstream(blocker) << "x";
  setenv("TK_CACHE_DIR", blocker.c_str(), 1);
  KernelCache cache;
  std::shared_ptr<const CompiledBinary> binary;
  Status status = cache.getOrCompile(
      makeKey("blocked"),
      [](CompiledBinary &b) {
        b.data = {1};
        return Status::success();
      },
      binary);
  unsetenv("TK_CACHE_DIR");
  llvm::sys::fs::remove_directories(base);
  EXPECT_TRUE(status.isOk()) << status.message();
}

//===----------------------------------------------------------------------===//
// Occupancy estimate
//===----------------------------------------------------------------------===//

TEST(KernelCache, KeyedOnThePluginsCompileTargetNotTheDeviceArch) {
  // TK_CUDA_ARCH=sm_80 on an sm_90 GPU compiles other code for the same
  // device: the retarget fixture changes its compile_target the same way,
  // and each target must get its own entry (it once shared the device's).
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().select("retarget", &plugin);
  ASSERT_TRUE(status.isOk()) << status.message();
  std::unique_ptr<Device> device;
  ASSERT_TRUE(Device::create(*plugin, 0, device).isOk());
  tk::test::ScopedCacheDir dir;
  KernelCache cache;
  std::string text = tk::test::readKernel("vector_add.tk");
  tk_kernel_source source = textSource(text);

  auto originFor = [&](const char *target) {
    setenv("TK_RETARGET_NAME", target, 1);
    std::string seen;
    EXPECT_TRUE(plugin->queryCompileTarget(0, "", seen).isOk());
    EXPECT_EQ(seen, target);
    Kernel *kernel = nullptr;
    Status created = createKernelFromSource(*device, cache, source,
                                            KernelOptions(), &kernel);
    EXPECT_TRUE(created.isOk()) << created.message();
    KernelCache::Origin origin =
        kernel ? kernel->getOrigin() : KernelCache::Origin::Memory;
    if (kernel) {
      EXPECT_TRUE(Kernel::release(kernel).isOk());
    }
    return origin;
  };
  EXPECT_EQ(originFor("target-a"), KernelCache::Origin::Compiler);
  EXPECT_EQ(originFor("target-a"), KernelCache::Origin::Memory);
  EXPECT_EQ(originFor("target-b"), KernelCache::Origin::Compiler);
  cache.clearMemory();
  EXPECT_EQ(originFor("target-a"), KernelCache::Origin::Disk);
  EXPECT_EQ(originFor("target-b"), KernelCache::Origin::Disk);
  unsetenv("TK_RETARGET_NAME");
}

TEST(PluginLoader, ImpossibleDeviceCountIsRefused) {
  // 2e9 devices: once a loop making a Device of each, under the runtime's
  // selection lock, until memory ran out.
  Plugin *plugin = nullptr;
  Status status = makeFixtureLoader().select("manydevices", &plugin);
  EXPECT_EQ(status.code(), TK_ERROR_PLUGIN);
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("manydevices"), HasSubstr("2000000000 devices"),
                    HasSubstr("at most 4096")));
}

TEST(PluginLoader, CompileTargetFallsBackToTheArchBeforeAbi15) {
  // minor0's table ends long before compile_target: the device's arch is
  // the answer, and nothing past struct_size is read.
  Plugin *plugin = nullptr;
  ASSERT_TRUE(makeFixtureLoader().open("minor0", &plugin).isOk());
  std::string target;
  ASSERT_TRUE(plugin->queryCompileTarget(0, "sm_90", target).isOk());
  EXPECT_EQ(target, "sm_90");
}

TEST(PluginLoader, CpuCompileTargetNamesTheHost) {
  Plugin *plugin = nullptr;
  ASSERT_TRUE(makeFixtureLoader().select("cpu", &plugin).isOk());
  std::string target;
  Status status = plugin->queryCompileTarget(0, "", target);
  ASSERT_TRUE(status.isOk()) << status.message();
  EXPECT_THAT(target, HasSubstr(llvm::sys::getHostCPUName().str()));
  // A buffer too small for the name is refused, not cut.
  char small[4];
  EXPECT_EQ(plugin->getApi().compile_target(0, small, sizeof(small)),
            TK_ERROR_INVALID_ARGUMENT);
  EXPECT_THAT(plugin->getApi().last_error(), HasSubstr("compile_target needs"));
}

TEST(Occupancy, EstimateFromDeviceLimits) {
  // An H100-like device: 32 lanes, 64K registers per SM, 227 KiB of opt-in
  // shared memory, 1024 threads per block.
  tk_device_props props = {};
  props.warp_size = 32;
  props.registers_per_cu = 65536;
  props.shared_memory_per_block = 232448;
  props.max_threads_per_block = 1024;
  CompiledBinary binary;
  binary.numWarps = 4;
  binary.registersPerThread = 128;
  binary.sharedMemoryBytes = 49152;
  // Registers: 65536 / (128 x 128) = 4; shared memory: 232448 / 49152 = 4;
  // threads: 1024 / 128 = 8.
  EXPECT_EQ(Kernel::estimateOccupancy(props, binary), 4);
  binary.registersPerThread = 32;
  binary.sharedMemoryBytes = 0;
  EXPECT_EQ(Kernel::estimateOccupancy(props, binary), 8);
  // Larger than the device allows: still 1, never 0.
  binary.numWarps = 64;
  EXPECT_EQ(Kernel::estimateOccupancy(props, binary), 1);
  // Nothing known: 1.
  EXPECT_EQ(Kernel::estimateOccupancy(tk_device_props{}, CompiledBinary{}), 1);
}

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

TEST(Status, NamesAndLastError) {
  EXPECT_STREQ(getStatusName(TK_ERROR_INVALID_IR), "TK_ERROR_INVALID_IR");
  EXPECT_STREQ(getStatusName(static_cast<tk_status>(99)), "TK_UNKNOWN_STATUS");
  Status status(TK_ERROR_IO, "disk full");
  EXPECT_EQ(status.prefix("cache").report(), TK_ERROR_IO);
  EXPECT_STREQ(getLastError(), "cache: disk full");
  // Each thread has its own message.
  std::thread([] { EXPECT_STREQ(getLastError(), ""); }).join();
}

} // namespace
