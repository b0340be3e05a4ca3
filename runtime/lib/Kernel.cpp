//===- Kernel.cpp - a compiled, loaded kernel and its launch --------------===//
//
// Kernels loaded from packages (a source to compile goes to the library's
// KernelCompiler, KernelCompile.cpp in libtk.so), the checked
// allocation-free launch, and the occupancy estimate. No LLVM: this is part
// of libtk_runtime.so.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Kernel.h"
#include "tk/runtime/CEnum.h"

#include "tk/core/BoundsRecord.h"
#include "tk/package/Package.h"
#include "tk/runtime/Buffer.h"
#include "tk/runtime/KernelCompiler.h"
#include "tk/runtime/Logging.h"

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

using namespace tk::runtime;

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

bool tk::runtime::isBoundsCheckingRequested() {
  const char *value = std::getenv("TK_CHECK_BOUNDS");
  return value && *value && std::strcmp(value, "0") != 0;
}

Status tk::runtime::readKernelOptions(const tk_compile_options *options,
                                      KernelOptions &out) {
  out.checkBounds = isBoundsCheckingRequested();
  if (!options)
    return Status::success();
  if (options->struct_size == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "options->struct_size is 0; set it to "
                  "sizeof(tk_compile_options)");
  auto has = [&](size_t offset, size_t size) {
    return options->struct_size >= offset + size;
  };
  if (has(offsetof(tk_compile_options, num_warps), sizeof(int32_t)))
    out.numWarps = options->num_warps;
  if (has(offsetof(tk_compile_options, num_stages), sizeof(int32_t)))
    out.numStages = options->num_stages;
  if (has(offsetof(tk_compile_options, num_constexprs), sizeof(size_t)) &&
      options->num_constexprs) {
    if (!options->constexprs)
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "options->constexprs is NULL but num_constexprs is " +
                        std::to_string(options->num_constexprs));
    out.constexprs.assign(options->constexprs,
                          options->constexprs + options->num_constexprs);
  }
  if (has(offsetof(tk_compile_options, min_programs_per_cu), sizeof(int32_t)))
    out.minProgramsPerCu = options->min_programs_per_cu;
  if (has(offsetof(tk_compile_options, source_name), sizeof(const char *)) &&
      options->source_name)
    out.sourceName = options->source_name;
  // Either turns it on: the environment reaches a program's kernels without
  // changing its code.
  if (has(offsetof(tk_compile_options, check_bounds), sizeof(int32_t)) &&
      options->check_bounds != 0)
    out.checkBounds = true;
  if (out.numWarps < 0 || out.numStages < 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "options->num_warps (" + std::to_string(out.numWarps) +
                      ") and num_stages (" + std::to_string(out.numStages) +
                      ") must be >= 0 (0: the backend's default)");
  if (out.minProgramsPerCu < 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "options->min_programs_per_cu (" +
                      std::to_string(out.minProgramsPerCu) +
                      ") must be >= 0 (0: no occupancy hint)");
  return Status::success();
}

Status tk::runtime::loadKernelExecutable(Device &device,
                                         const PreparedKernel &prepared,
                                         const CompiledBinary &binary,
                                         void **out) {
  tk_plugin_arg_type types[kMaxKernelArguments];
  for (size_t i = 0; i < prepared.arguments.size(); ++i)
    types[i] = prepared.arguments[i].type;
  *out = nullptr;
  tk_status code = device.getApi().executable_load(
      device.getIndex(), binary.data.data(), binary.data.size(),
      prepared.entry.c_str(), types, prepared.arguments.size(), out);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "executable_load of '" +
                                                  prepared.entry + "'");
  return Status::success();
}

/// "0x7f00dead0000".
static std::string formatAddress(uintptr_t address) {
  char text[2 + 2 * sizeof(uintptr_t) + 1];
  std::snprintf(text, sizeof(text), "0x%llx",
                static_cast<unsigned long long>(address));
  return text;
}

/// A package's binary a device can run, and how well (Plugin::rankTarget).
struct PackageCandidate {
  const tk::package::Binary *binary;
  int32_t rank;
};

/// The kernel `source` (TK_SOURCE_PACKAGE) names, and the binaries of it the
/// device runs, best first: the one built for the compile target its plugin
/// names (the target the kernel cache keys on), then those the plugin says
/// run there in a portable form (PTX for a later GPU, SPIR-V of a subgroup
/// size and features the device has), in the package's order.
static Status selectPackageBinaries(Device &device,
                                    const tk_kernel_source &source,
                                    const KernelOptions &options,
                                    tk::package::Package &package,
                                    PreparedKernel &prepared,
                                    std::vector<PackageCandidate> &candidates) {
  if (!source.data || source.size == 0)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "source->data is NULL or source->size is 0: a package is "
                  "the bytes of a .tkpkg file");
  std::string error;
  if (!tk::package::read(source.data, source.size, package, error))
    return Status(TK_ERROR_INVALID_ARGUMENT, "package: " + error);
  std::string names;
  for (const tk::package::Kernel &kernel : package.kernels)
    names += (names.empty() ? "" : ", ") + kernel.entry;
  const tk::package::Kernel *kernel = nullptr;
  if (source.entry)
    kernel = package.find(source.entry);
  else if (package.kernels.size() == 1)
    kernel = &package.kernels.front();
  if (!kernel)
    return Status(
        TK_ERROR_NOT_FOUND,
        (source.entry
             ? "package: no kernel '" + std::string(source.entry) + "'"
             : std::string("package: source->entry is NULL "
                           "and the package has ") +
                   std::to_string(package.kernels.size()) + " kernels") +
            " (it has: " + (names.empty() ? "none" : names) + ")");

  // What was decided when the package was built cannot change now.
  const std::string what = "package kernel '" + kernel->entry + "'";
  if (!options.constexprs.empty())
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  what + " was specialised when the package was built: "
                         "options->constexprs cannot change it");
  if (options.checkBounds)
    return Status(TK_ERROR_UNSUPPORTED,
                  what + " has no bounds checks: the bounds-checked mode "
                         "(check_bounds, TK_CHECK_BOUNDS) compiles them into "
                         "the kernel, so create it from its source");
  if ((options.numWarps && options.numWarps != kernel->numWarps) ||
      (options.numStages && options.numStages != kernel->numStages))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  what + " was compiled with num_warps " +
                      std::to_string(kernel->numWarps) + " and num_stages " +
                      std::to_string(kernel->numStages) + "; options ask for " +
                      std::to_string(options.numWarps) + " and " +
                      std::to_string(options.numStages));

  std::string target;
  Plugin &plugin = device.getPlugin();
  TK_RETURN_IF_ERROR(plugin.queryCompileTarget(device.getIndex(),
                                               device.getProps().arch, target));
  std::string targets;
  for (const tk::package::Binary &binary : kernel->binaries) {
    targets += (targets.empty() ? "" : ", ") + binary.backend + " '" +
               binary.target + "'";
    if (binary.backend != plugin.getName())
      continue;
    int32_t rank = 0;
    TK_RETURN_IF_ERROR(
        plugin.rankTarget(device.getIndex(), target, binary.target, rank));
    if (rank > 0)
      candidates.push_back({&binary, rank});
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const PackageCandidate &a, const PackageCandidate &b) {
                     return a.rank > b.rank;
                   });
  if (candidates.empty())
    return Status(TK_ERROR_UNSUPPORTED,
                  what + " has no binary for this device (" + plugin.getName() +
                      " '" + target +
                      "'), nor one that runs there; the package has " +
                      (targets.empty() ? std::string("none") : targets));

  if (kernel->arguments.size() > kMaxKernelArguments)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  what + " has " + std::to_string(kernel->arguments.size()) +
                      " arguments; a launch passes at most " +
                      std::to_string(kMaxKernelArguments));
  prepared.entry = kernel->entry;
  for (const tk::package::Argument &argument : kernel->arguments) {
    if (argument.kind > TK_PLUGIN_ARG_F64 || argument.divisibility < 1 ||
        argument.alignment < 1 || argument.elementBytes < 0)
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    what + ": argument '" + argument.name + "' has kind " +
                        std::to_string(argument.kind) + ", divisibility " +
                        std::to_string(argument.divisibility) +
                        " and alignment " + std::to_string(argument.alignment) +
                        ", which no tk kernel has");
    KernelArgument converted;
    converted.name = argument.name;
    converted.typeName = argument.typeName;
    converted.type = static_cast<tk_plugin_arg_type>(argument.kind);
    converted.divisibility = argument.divisibility;
    converted.alignment = argument.alignment;
    converted.elementBytes = argument.elementBytes;
    prepared.arguments.push_back(std::move(converted));
  }
  return Status::success();
}

static std::shared_ptr<const CompiledBinary>
toCompiledBinary(const tk::package::Binary &binary) {
  auto compiled = std::make_shared<CompiledBinary>();
  compiled->data.assign(binary.bytes.begin(), binary.bytes.end());
  compiled->numWarps = binary.numWarps;
  compiled->sharedMemoryBytes = binary.sharedMemoryBytes;
  compiled->registersPerThread = binary.registersPerThread;
  return compiled;
}

Kernel *Kernel::adopt(Device &device, PreparedKernel &&prepared,
                      std::shared_ptr<const CompiledBinary> binary,
                      void *executable, BinaryOrigin origin,
                      Buffer *boundsRecord) {
  Kernel *kernel = new Kernel(device, std::move(prepared), std::move(binary),
                              executable, origin);
  kernel->boundsRecord = boundsRecord;
  return kernel;
}

Status Kernel::create(Device &device, const tk_kernel_source &source,
                      const tk_compile_options *options, Kernel **out) {
  KernelOptions resolved;
  TK_RETURN_IF_ERROR(readKernelOptions(options, resolved));
  if (rawEnumValue(source.kind) != TK_SOURCE_PACKAGE) {
    KernelCompiler *compiler = getKernelCompiler();
    if (!compiler)
      return compilerMissing("a kernel source other than a package");
    return compiler->createKernel(device, source, resolved, out);
  }
  // Built ahead of time: no compiler, no cache. The best binary that
  // loads; the refusals of all where none does.
  tk::package::Package package;
  PreparedKernel prepared;
  std::vector<PackageCandidate> candidates;
  TK_RETURN_IF_ERROR(selectPackageBinaries(device, source, resolved, package,
                                           prepared, candidates));
  Status refused;
  std::string refusals;
  for (const PackageCandidate &candidate : candidates) {
    std::shared_ptr<const CompiledBinary> binary =
        toCompiledBinary(*candidate.binary);
    void *executable = nullptr;
    Status loaded =
        loadKernelExecutable(device, prepared, *binary, &executable);
    if (loaded.isOk()) {
      if (candidate.rank < 2)
        getLogger().info("package kernel '{}': no binary for this "
                         "device's own target; loaded the one for '{}'",
                         prepared.entry, candidate.binary->target);
      *out = adopt(device, std::move(prepared), std::move(binary), executable,
                   BinaryOrigin::Package, /*boundsRecord=*/nullptr);
      return Status::success();
    }
    refused = loaded;
    refusals += (refusals.empty() ? "" : "; ") + std::string("'") +
                candidate.binary->target + "': " + loaded.message();
  }
  return Status(refused.code(), "package kernel '" + prepared.entry +
                                    "': no binary of it loads (" + refusals +
                                    ")");
}

Status Kernel::release(Kernel *kernel) {
  std::unique_ptr<HandleObject> object(kernel);
  Status status;
  if (kernel->executable) {
    tk_status code = kernel->api.executable_unload(kernel->executable);
    if (code != TK_SUCCESS)
      status = kernel->device.getPlugin().makeError(code, "executable_unload");
    kernel->executable = nullptr;
  }
  if (kernel->boundsRecord) {
    Status released = Buffer::release(kernel->boundsRecord);
    if (status.isOk())
      status = released;
    kernel->boundsRecord = nullptr;
  }
  // The quarantine keeps the object, not what it owned.
  kernel->arguments = {};
  kernel->binary.reset();
  retire(std::move(object));
  return status;
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

Status Kernel::checkGrid(const tk_grid &grid) const {
  static const char *const axes[] = {"x", "y", "z"};
  const int32_t dims[] = {grid.x, grid.y, grid.z};
  const tk_device_props &props = device.getProps();
  for (int axis = 0; axis < 3; ++axis) {
    if (dims[axis] < 1)
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "launch of '" + entry + "': grid." + axes[axis] + " is " +
                        std::to_string(dims[axis]) +
                        "; every grid dimension must be >= 1");
    // A plugin that reports no limit (0) gets none checked.
    if (props.max_grid[axis] > 0 && dims[axis] > props.max_grid[axis])
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "launch of '" + entry + "': grid." + axes[axis] + " = " +
                        std::to_string(dims[axis]) +
                        " exceeds the device's limit max_grid[" +
                        std::to_string(axis) +
                        "] = " + std::to_string(props.max_grid[axis]));
  }
  return Status::success();
}

Status Kernel::argumentError(tk_status code, size_t index,
                             const std::string &what) const {
  return Status(code, "launch of '" + entry + "': argument " +
                          std::to_string(index) + " ('" +
                          arguments[index].name + "'): " + what);
}

static std::string getKindName(long long kind) {
  switch (kind) {
  case TK_ARG_BUFFER:
    return "a buffer";
  case TK_ARG_I32:
    return "i32";
  case TK_ARG_I64:
    return "i64";
  case TK_ARG_F32:
    return "f32";
  case TK_ARG_F64:
    return "f64";
  }
  return "kind " + std::to_string(kind) + ", which is no tk_arg_kind";
}

/// The tk_arg_kind that passes a plugin argument type.
static tk_arg_kind getExpectedKind(tk_plugin_arg_type type) {
  switch (type) {
  case TK_PLUGIN_ARG_PTR:
    return TK_ARG_BUFFER;
  case TK_PLUGIN_ARG_I32:
    return TK_ARG_I32;
  case TK_PLUGIN_ARG_I64:
    return TK_ARG_I64;
  case TK_PLUGIN_ARG_F32:
    return TK_ARG_F32;
  case TK_PLUGIN_ARG_F64:
    return TK_ARG_F64;
  }
  return TK_ARG_I32;
}

namespace {
/// One argument's value as the compiled code reads it; `args[i]` of the
/// plugin's launch points at one of these.
union ArgumentValue {
  void *pointer;
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
};
} // namespace

Status Kernel::launch(const tk_grid &grid, const tk_args *args,
                      Stream *stream) {
  TK_RETURN_IF_ERROR(checkGrid(grid));
  size_t count = args ? args->count : 0;
  size_t expectedCount = getNumUserArguments();
  if (count != expectedCount) {
    std::string names;
    for (size_t i = 0; i < expectedCount; ++i)
      names += (names.empty() ? "" : ", ") + arguments[i].name;
    return Status(TK_ERROR_ARGUMENT_MISMATCH,
                  "launch of '" + entry + "': the kernel takes " +
                      std::to_string(expectedCount) + " arguments (" + names +
                      "), got " + std::to_string(count));
  }
  if (count && !args->args)
    return Status(TK_ERROR_INVALID_ARGUMENT, "launch of '" + entry +
                                                 "': args->args is NULL but "
                                                 "args->count is " +
                                                 std::to_string(count));
  if (stream && &stream->getDevice() != &device)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "launch of '" + entry + "': the stream belongs to device " +
                      std::to_string(stream->getDevice().getIndex()) +
                      ", the kernel to device " +
                      std::to_string(device.getIndex()));

  // Stack storage only: the signature was sized at creation, so the hot path
  // neither allocates nor hashes nor locks.
  ArgumentValue values[kMaxKernelArguments];
  void *pointers[kMaxKernelArguments];
  // The bytes of each buffer argument, for the bounds-checked mode.
  size_t bufferBytes[kMaxKernelArguments];
  for (size_t i = 0; i < count; ++i) {
    const tk_arg &arg = args->args[i];
    const KernelArgument &expected = arguments[i];
    tk_arg_kind kind = getExpectedKind(expected.type);
    long long given = rawEnumValue(arg.kind);
    if (given != kind)
      return argumentError(TK_ERROR_ARGUMENT_MISMATCH, i,
                           std::string("expected ") +
                               (kind == TK_ARG_BUFFER
                                    ? "a buffer for " + expected.typeName
                                    : expected.typeName) +
                               ", got " + getKindName(given));
    switch (kind) {
    case TK_ARG_BUFFER: {
      if (!arg.value.buffer)
        return argumentError(TK_ERROR_INVALID_ARGUMENT, i,
                             "the buffer is NULL");
      Buffer *buffer = nullptr;
      Status found = Buffer::fromHandle(arg.value.buffer, &buffer);
      if (!found.isOk())
        return argumentError(found.code(), i, found.message());
      if (&buffer->getDevice() != &device)
        return argumentError(
            TK_ERROR_INVALID_ARGUMENT, i,
            "the buffer lives on device " +
                std::to_string(buffer->getDevice().getIndex()) +
                ", the kernel on device " + std::to_string(device.getIndex()));
      if (buffer->getSize() < size_t(expected.elementBytes))
        return argumentError(
            TK_ERROR_ARGUMENT_MISMATCH, i,
            "the buffer of " + std::to_string(buffer->getSize()) +
                " bytes is too small for one element of " + expected.typeName +
                " (" + std::to_string(expected.elementBytes) + " bytes)");
      auto address = reinterpret_cast<uintptr_t>(buffer->getDevicePointer());
      if (address % uint64_t(expected.alignment) != 0)
        return argumentError(
            TK_ERROR_ARGUMENT_MISMATCH, i,
            "the buffer's device address " + formatAddress(address) +
                " is not a multiple of " + std::to_string(expected.alignment) +
                " bytes, which the kernel was specialised for "
                "(tk.divisibility = " +
                std::to_string(expected.divisibility) + ")");
      values[i].pointer = buffer->getDevicePointer();
      bufferBytes[i] = buffer->getSize();
      break;
    }
    case TK_ARG_I32:
      if (arg.value.i32 % expected.divisibility != 0)
        return argumentError(TK_ERROR_ARGUMENT_MISMATCH, i,
                             "the value " + std::to_string(arg.value.i32) +
                                 " is not a multiple of " +
                                 std::to_string(expected.divisibility) +
                                 " (tk.divisibility)");
      values[i].i32 = arg.value.i32;
      break;
    case TK_ARG_I64:
      if (arg.value.i64 % expected.divisibility != 0)
        return argumentError(TK_ERROR_ARGUMENT_MISMATCH, i,
                             "the value " + std::to_string(arg.value.i64) +
                                 " is not a multiple of " +
                                 std::to_string(expected.divisibility) +
                                 " (tk.divisibility)");
      values[i].i64 = arg.value.i64;
      break;
    case TK_ARG_F32:
      values[i].f32 = arg.value.f32;
      break;
    case TK_ARG_F64:
      values[i].f64 = arg.value.f64;
      break;
    }
    pointers[i] = &values[i];
  }

  const int32_t dims[3] = {grid.x, grid.y, grid.z};
  if (boundsChecks)
    return launchChecked(dims, pointers, values, bufferBytes, stream);
  tk_status code = api.launch(executable, dims, pointers,
                              stream ? stream->getNative() : nullptr);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "launch of '" + entry + "'");
  return Status::success();
}

Status Kernel::launchChecked(const int32_t dims[3], void **pointers,
                             void *argumentValues, const size_t *bufferBytes,
                             Stream *stream) {
  auto *values = static_cast<ArgumentValue *>(argumentValues);
  const BoundsCheckTable &table = *boundsChecks;
  size_t next = table.numUserArguments;
  auto extentOf = [&](unsigned argument) {
    return int64_t(
        bufferBytes[argument] /
        size_t(std::max<int64_t>(arguments[argument].elementBytes, 1)));
  };
  for (unsigned argument : table.extentArguments) {
    values[next].i64 = extentOf(argument);
    pointers[next] = &values[next];
    ++next;
  }
  values[next].pointer = boundsRecord->getDevicePointer();
  pointers[next] = &values[next];

  // One launch at a time owns the record, from clearing it to reading it.
  std::lock_guard<std::mutex> lock(boundsMutex);
  std::vector<int64_t> record(std::max<size_t>(table.sites.size(), 1),
                              kBoundsRecordUnset);
  TK_RETURN_IF_ERROR(
      boundsRecord->write(0, record.data(), record.size() * sizeof(int64_t)));
  void *native = stream ? stream->getNative() : nullptr;
  tk_status code = api.launch(executable, dims, pointers, native);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(code, "launch of '" + entry + "'");
  code = api.stream_synchronize(device.getIndex(), native);
  if (code != TK_SUCCESS)
    return device.getPlugin().makeError(
        code, "stream_synchronize after the bounds-checked launch of '" +
                  entry + "'");
  TK_RETURN_IF_ERROR(
      boundsRecord->read(0, record.data(), record.size() * sizeof(int64_t)));

  std::optional<size_t> first;
  size_t hits = 0;
  for (size_t site = 0; site < table.sites.size(); ++site)
    if (record[site] != kBoundsRecordUnset) {
      ++hits;
      if (!first)
        first = site;
    }
  if (!first)
    return Status::success();
  const BoundsCheckSite &site = table.sites[*first];
  const KernelArgument &argument = arguments[site.argument];
  bool writes = site.op != "load";
  // "f32" of "!tk.ptr<f32>".
  std::string_view elementType(argument.typeName);
  if (elementType.substr(0, 8) == "!tk.ptr<" && elementType.back() == '>')
    elementType = elementType.substr(8, elementType.size() - 9);
  std::string message =
      "launch of '" + entry + "': out of bounds: the " + site.op + " at " +
      site.location + " " + (writes ? "accessed" : "read") + " element " +
      std::to_string(record[*first]) + " of argument " +
      std::to_string(site.argument) + " ('" + argument.name +
      "'), a buffer of " + std::to_string(extentOf(site.argument)) +
      " elements of " + std::string(elementType) + " (" +
      std::to_string(bufferBytes[site.argument]) +
      " bytes); the access was masked off there, so nothing outside the "
      "buffer was touched";
  if (hits > 1)
    message += " (" + std::to_string(hits - 1) + " more access" +
               (hits > 2 ? "es" : "") +
               " of the kernel went out of bounds too)";
  return Status(TK_ERROR_OUT_OF_BOUNDS, message);
}

//===----------------------------------------------------------------------===//
// Occupancy
//===----------------------------------------------------------------------===//

Status Kernel::getOccupancy(int *out) const {
  if (api.executable_occupancy) {
    int32_t programs = 0;
    tk_status code = api.executable_occupancy(executable, &programs);
    if (code != TK_SUCCESS)
      return device.getPlugin().makeError(code, "executable_occupancy");
    if (programs > 0) {
      *out = programs;
      return Status::success();
    }
  }

  *out = estimateOccupancy(device.getProps(), *binary);
  return Status::success();
}

int Kernel::estimateOccupancy(const tk_device_props &props,
                              const CompiledBinary &binary) {
  // Each resource a program holds for its whole life bounds how many share a
  // unit. max_threads_per_block stands in for the per-unit thread limit, so
  // this errs low (NVIDIA allows 2048 threads per SM but 1024 per block).
  int64_t warps = binary.numWarps > 0 ? binary.numWarps : 4;
  int64_t threads = warps * std::max<int64_t>(props.warp_size, 1);
  int64_t programs = std::numeric_limits<int32_t>::max();
  if (props.max_threads_per_block > 0)
    programs =
        std::min<int64_t>(programs, props.max_threads_per_block / threads);
  if (binary.registersPerThread > 0 && props.registers_per_cu > 0)
    programs =
        std::min<int64_t>(programs, props.registers_per_cu /
                                        (binary.registersPerThread * threads));
  if (binary.sharedMemoryBytes > 0 && props.shared_memory_per_block > 0)
    programs = std::min<int64_t>(programs, props.shared_memory_per_block /
                                               binary.sharedMemoryBytes);
  // Nothing known bounds it: say 1, the one answer that is always safe.
  if (programs == std::numeric_limits<int32_t>::max())
    return 1;
  // A kernel that loaded runs at least one program per unit; never 0, so a
  // persistent grid sized from this is never empty.
  return static_cast<int>(std::max<int64_t>(programs, 1));
}
