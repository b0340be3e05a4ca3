//===- Ttir.cpp - Triton's kernels, imported from their TTIR --------------===//
//
// One case per kernel of the TTIR corpus (tests/ttir/corpus, made by Triton
// 3.6 on an H100): the kernel is created from the `.ttir` Triton wrote
// (TK_SOURCE_TTIR) with Triton's num_warps and num_stages from its
// `kernel.json`, launched on the corpus' inputs over Triton's grid, and each
// output compared with what Triton computed there (checked against PyTorch
// when the corpus was made). The tolerances below say how far a correct tk
// kernel may be from Triton's answer on another device.
//
//===----------------------------------------------------------------------===//

#include "cases/Cases.h"

#include "tk/ttir/TritonMetadata.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstdlib>
#include <cstring>
#include <map>

using namespace tk::conformance;

namespace {

/// The folder of the corpus: TK_TTIR_CORPUS, else the source tree's.
std::string corpusDir() {
  if (const char *dir = std::getenv("TK_TTIR_CORPUS"))
    return dir;
  return TK_TTIR_CORPUS_DIR;
}

/// How far a correct kernel may be from Triton's answer, per corpus kernel.
/// A wrong kernel misses by whole values; these are a few roundings.
Tolerance toleranceFor(llvm::StringRef kernel, DType dtype) {
  // One rounding of each op, the same ops in the same order: Triton's
  // divisions on NVIDIA are div.full (2 ulp), hence 4 eps.
  if (kernel == "vector_add" || kernel == "copy" || kernel == "transpose" ||
      kernel == "seeded_dropout")
    return epsTolerance(dtype, 4);
  // exp with ex2.approx on Triton's side, sums of 781 in another order.
  if (kernel == "fused_softmax")
    return epsTolerance(dtype, 64, 8);
  // Means and variances of 1000 in another order, tl.sqrt's approximation.
  if (kernel == "layernorm_forward")
    return epsTolerance(dtype, 128, 64);
  // f32 sums of 224 (80) products in another order, then one f16 rounding.
  if (kernel == "matmul_f16" || kernel == "block_ptr_matmul" ||
      kernel == "tutorial_matmul" || kernel == "descriptor_matmul")
    return epsTolerance(dtype, 2, 1);
  // Triton's dot ran in tf32 (10-bit mantissas, relative error 2^-11 a
  // product); a backend may compute it in ieee f32.
  if (kernel == "matmul_f32_tf32")
    return Tolerance{std::ldexp(1.0, -8), std::ldexp(1.0, -9), 0};
  // Softmax probabilities rounded to f16 before the second dot, as Triton
  // does; exp2 approximations.
  if (kernel == "attention_forward" || kernel == "descriptor_attention" ||
      kernel == "host_descriptor_attention")
    return epsTolerance(dtype, 4, 2);
  // erf and sigmoid's exp, each a few ulp on either side.
  if (kernel == "gelu_clamp")
    return epsTolerance(dtype, 16, 4);
  // The rest are exact on integers (cumsum, histogram, argmax) or moves
  // (interleave, split).
  return epsTolerance(dtype, 4);
}

std::optional<DType> corpusDType(llvm::StringRef name) {
  if (name == "float32")
    return DType::F32;
  if (name == "float16")
    return DType::F16;
  if (name == "bfloat16")
    return DType::BF16;
  if (name == "int32")
    return DType::I32;
  return std::nullopt;
}

struct CorpusArg {
  std::string name;
  std::string kind; // buffer, i32, i64, f32
  DType dtype = DType::F32;
  int64_t count = 0;
  std::string file;     // the input, for an input buffer
  std::string expected; // the answer, for an output
  double value = 0;     // a scalar's
  // A scalar of a host tensor descriptor (its shape or stride): passed even
  // when 1, since Triton's TTIR has a parameter for the descriptor.
  bool ofDescriptor = false;
};

struct CorpusKernel {
  std::string name;
  std::string folder;
  int numWarps = 0;
  int numStages = 0;
  tk_grid grid = {1, 1, 1};
  std::vector<CorpusArg> args;
  DType dtype = DType::F32; // the first output's
  std::vector<int64_t> shape;
  /// The text of kernel.ttir, read once with the metadata.
  std::string ttir;
};

/// Reads `folder/kernel.json` and `folder/kernel.ttir`; an error names the
/// file and, for the metadata, the field.
llvm::Expected<CorpusKernel> readKernel(const std::string &folder) {
  auto fail = [&](const llvm::Twine &what) {
    return llvm::createStringError(folder + "/kernel.json: " + what);
  };
  auto file = llvm::MemoryBuffer::getFile(folder + "/kernel.json");
  if (!file)
    return fail("cannot be read");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*file)->getBuffer());
  if (!json)
    return fail(toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return fail("not an object");
  CorpusKernel kernel;
  kernel.folder = folder;
  kernel.name = llvm::sys::path::filename(folder).str();
  std::string error;
  auto metadata = tk::ttir::parseTritonMetadata((*file)->getBuffer(), error);
  if (mlir::failed(metadata))
    return fail(error);
  kernel.numWarps = metadata->numWarps.value_or(0);
  kernel.numStages = metadata->numStages.value_or(0);
  const llvm::json::Array *grid = object->getArray("grid");
  if (!grid || grid->size() != 3)
    return fail("no grid of three");
  int32_t *axes[] = {&kernel.grid.x, &kernel.grid.y, &kernel.grid.z};
  for (size_t i = 0; i < 3; ++i) {
    std::optional<int64_t> n = (*grid)[i].getAsInteger();
    if (!n || *n < 1)
      return fail("grid[" + llvm::Twine(i) + "] is not a positive count");
    *axes[i] = static_cast<int32_t>(*n);
  }
  const llvm::json::Array *args = object->getArray("args");
  if (!args)
    return fail("no args");
  bool haveOutput = false;
  for (const llvm::json::Value &entry : *args) {
    const llvm::json::Object *a = entry.getAsObject();
    if (!a)
      return fail("an argument is not an object");
    CorpusArg arg;
    arg.name = a->getString("name").value_or("").str();
    arg.kind = a->getString("kind").value_or("").str();
    if (arg.kind == "buffer") {
      std::optional<DType> dtype =
          corpusDType(a->getString("dtype").value_or(""));
      const llvm::json::Array *shape = a->getArray("shape");
      if (!dtype || !shape)
        return fail("buffer '" + arg.name + "' has no known dtype or shape");
      arg.dtype = *dtype;
      arg.count = 1;
      std::vector<int64_t> dims;
      for (const llvm::json::Value &d : *shape) {
        dims.push_back(d.getAsInteger().value_or(0));
        arg.count *= dims.back();
      }
      arg.file = a->getString("file").value_or("").str();
      arg.expected = a->getString("expected").value_or("").str();
      // An output may start from a file (a histogram's zeros) or as NaN.
      if (arg.file.empty() && arg.expected.empty())
        return fail("buffer '" + arg.name +
                    "' is neither an input (file) nor an output (expected)");
      if (!arg.expected.empty() && !haveOutput) {
        haveOutput = true;
        kernel.dtype = arg.dtype;
        kernel.shape = dims;
      }
    } else if (arg.kind == "i32" || arg.kind == "i64" || arg.kind == "f32") {
      std::optional<double> value = a->getNumber("value");
      if (!value)
        return fail("scalar '" + arg.name + "' has no value");
      arg.value = *value;
      arg.ofDescriptor = a->getString("descriptor").has_value();
    } else {
      return fail("argument '" + arg.name + "' has kind '" + arg.kind +
                  "'; the suite passes buffers, i32, i64 and f32");
    }
    kernel.args.push_back(std::move(arg));
  }
  if (!haveOutput)
    return fail("no output to check");
  auto ttir = llvm::MemoryBuffer::getFile(folder + "/kernel.ttir",
                                          /*IsText=*/true);
  if (!ttir)
    return llvm::createStringError(folder + "/kernel.ttir cannot be read");
  kernel.ttir = (*ttir)->getBuffer().str();
  return kernel;
}

/// The elements of a corpus `.bin` of `count` elements of `dtype`.
llvm::Expected<std::vector<double>> readValues(const std::string &path,
                                               DType dtype, int64_t count) {
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!file)
    return llvm::createStringError(path + " cannot be read");
  llvm::StringRef bytes = (*file)->getBuffer();
  size_t width = dtypeBytes(dtype);
  if (bytes.size() != width * count)
    return llvm::createStringError(path + " has " + llvm::Twine(bytes.size()) +
                                   " bytes, not " + llvm::Twine(width * count));
  std::vector<double> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const char *at = bytes.data() + i * width;
    switch (dtype) {
    case DType::F32: {
      float v;
      std::memcpy(&v, at, 4);
      values[i] = v;
      break;
    }
    case DType::F16: {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      values[i] = tk_f16_to_f32(bits);
      break;
    }
    case DType::BF16: {
      uint16_t bits;
      std::memcpy(&bits, at, 2);
      values[i] = tk_bf16_to_f32(bits);
      break;
    }
    case DType::I32: {
      int32_t v;
      std::memcpy(&v, at, 4);
      values[i] = v;
      break;
    }
    default:
      return llvm::createStringError("unexpected dtype");
    }
  }
  return values;
}

/// The tk_atomic_bit of each `tt.atomic_rmw KIND,` and `tt.atomic_cas` in
/// TTIR text.
uint32_t atomicsUsed(llvm::StringRef ttir) {
  static const std::pair<llvm::StringRef, uint32_t> kinds[] = {
      {"add", TK_ATOMIC_BIT_ADD},   {"fadd", TK_ATOMIC_BIT_FADD},
      {"max", TK_ATOMIC_BIT_MAX},   {"min", TK_ATOMIC_BIT_MIN},
      {"umax", TK_ATOMIC_BIT_UMAX}, {"umin", TK_ATOMIC_BIT_UMIN},
      {"and", TK_ATOMIC_BIT_AND},   {"or", TK_ATOMIC_BIT_OR},
      {"xor", TK_ATOMIC_BIT_XOR},   {"exch", TK_ATOMIC_BIT_XCHG}};
  uint32_t bits = 0;
  if (ttir.contains("tt.atomic_cas "))
    bits |= TK_ATOMIC_BIT_CAS;
  for (size_t at = ttir.find("tt.atomic_rmw "); at != llvm::StringRef::npos;
       at = ttir.find("tt.atomic_rmw ", at + 1)) {
    llvm::StringRef kind =
        ttir.drop_front(at + strlen("tt.atomic_rmw ")).split(',').first;
    for (const auto &[name, bit] : kinds)
      if (kind == name)
        bits |= bit;
  }
  return bits;
}

void runCorpusKernel(CellRun &run, const CorpusKernel &kernel) {
  std::vector<tk_arg> args;
  std::vector<std::pair<size_t, const CorpusArg *>> outputs;
  for (const CorpusArg &arg : kernel.args) {
    if (arg.kind == "buffer" && !arg.file.empty()) {
      auto values =
          readValues(kernel.folder + "/" + arg.file, arg.dtype, arg.count);
      if (!values)
        return run.fail(toString(values.takeError()));
      if (!arg.expected.empty())
        outputs.push_back({args.size(), &arg});
      args.push_back(run.input(arg.dtype, *values));
    } else if (arg.kind == "buffer") {
      outputs.push_back({args.size(), &arg});
      args.push_back(run.output(arg.dtype, arg.count));
    } else if (arg.kind != "f32" && arg.value == 1 && !arg.ofDescriptor) {
      // Triton specialises integer arguments equal to 1 into the kernel:
      // its TTIR has no parameter for them.
      continue;
    } else if (arg.kind == "i32") {
      args.push_back(tk_arg_i32(static_cast<int32_t>(arg.value)));
    } else if (arg.kind == "i64") {
      args.push_back(tk_arg_i64(static_cast<int64_t>(arg.value)));
    } else {
      args.push_back(tk_arg_f32(static_cast<float>(arg.value)));
    }
  }
  if (!run.launch(kernel.grid, args))
    return;
  for (auto [index, arg] : outputs) {
    auto want =
        readValues(kernel.folder + "/" + arg->expected, arg->dtype, arg->count);
    if (!want)
      return run.fail(toString(want.takeError()));
    run.check(arg->name, run.read(args[index]), *want,
              toleranceFor(kernel.name, arg->dtype));
  }
}

} // namespace

void tk::conformance::addTtirCases(std::vector<ConformanceCase> &cases) {
  std::string root = corpusDir();
  std::vector<std::string> folders;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::sys::fs::is_directory(it->path()))
      folders.push_back(it->path());
  std::sort(folders.begin(), folders.end());
  if (folders.empty()) {
    // Missing, the corpus would pass by running nothing: it is a FAIL cell.
    ConformanceCase kase;
    kase.name = "ttir_corpus";
    kase.summary = "the TTIR corpus, which is missing";
    kase.dtypes = {DType::F32};
    kase.shapes = {shape({1})};
    kase.ttir = TK_KERNEL_BUILDER(
        [root](std::string *error) -> mlir::FailureOr<std::string> {
          *error = "no TTIR corpus in '" + root + "' (TK_TTIR_CORPUS)";
          return mlir::failure();
        });
    kase.run = [](CellRun &) {};
    cases.push_back(std::move(kase));
    return;
  }
  for (const std::string &folder : folders) {
    ConformanceCase kase;
    kase.name = "ttir_" + llvm::sys::path::filename(folder).str();
    llvm::Expected<CorpusKernel> read = readKernel(folder);
    if (!read) {
      // A corpus entry that cannot be read is a FAIL cell naming why.
      std::string why = toString(read.takeError());
      kase.summary = "a TTIR corpus kernel whose metadata is unreadable";
      kase.dtypes = {DType::F32};
      kase.shapes = {shape({1})};
      kase.ttir = TK_KERNEL_BUILDER(
          [why](std::string *error) -> mlir::FailureOr<std::string> {
            *error = why;
            return mlir::failure();
          });
      kase.run = [](CellRun &) {};
      cases.push_back(std::move(kase));
      continue;
    }
    auto kernel = std::make_shared<CorpusKernel>(std::move(*read));
    // The atomics the TTIR uses, which a backend must declare.
    kase.needs.atomics = atomicsUsed(kernel->ttir);
    kase.summary =
        "Triton's " + kernel->name + " from its TTIR, against Triton's answer";
    for (const CorpusArg &arg : kernel->args)
      if (arg.kind == "buffer")
        kase.needs.dtypes |= dtypeBit(arg.dtype);
    kase.dtypes = {kernel->dtype};
    kase.shapes = {shape(kernel->shape)};
    kase.ttir = TK_KERNEL_BUILDER(
        [kernel](std::string *) -> mlir::FailureOr<std::string> {
          return kernel->ttir;
        });
    kase.settings = [kernel](DType, const Shape &) {
      CompileSettings settings;
      settings.numWarps = kernel->numWarps;
      settings.numStages = kernel->numStages;
      return settings;
    };
    kase.run = [kernel](CellRun &run) { runCorpusKernel(run, *kernel); };
    cases.push_back(std::move(kase));
  }
}
