//===- Kernel.h - a compiled, loaded kernel and its launch ------*- C++ -*-===//
//
// The object behind tk_kernel: an executable loaded on one device with the
// signature its launches are checked against. Creation does the expensive
// work (a package's binary chosen and loaded here; a source prepared, hashed,
// cached or compiled and loaded by KernelCompile.h) so that a launch only
// checks the arguments against the precomputed signature, packs them on the
// stack and calls the plugin: no allocation, no hashing, no lock.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_KERNEL_H_
#define TK_RUNTIME_KERNEL_H_

#include "tk/runtime/Device.h"
#include "tk/runtime/CompiledBinary.h"
#include "tk/runtime/KernelSignature.h"
#include "tk/runtime/Stream.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tk::runtime {

class Buffer;

/// The options of tk_kernel_create, defaults filled in, whatever the
/// caller's struct_size (fields are only ever appended).
struct KernelOptions {
  int32_t numWarps = 0;
  int32_t numStages = 0;
  std::vector<tk_constexpr_value> constexprs;
  int32_t minProgramsPerCu = 0;
  /// What diagnostics call a text or TTIR source.
  std::string sourceName = kDefaultSourceName;
  /// The bounds-checked mode: options->check_bounds or TK_CHECK_BOUNDS.
  bool checkBounds = false;
};

/// Whether TK_CHECK_BOUNDS asks for the bounds-checked mode (set, and
/// neither "" nor "0").
bool isBoundsCheckingRequested();

/// Reads and checks `options` (may be null) into `out`.
Status readKernelOptions(const tk_compile_options *options, KernelOptions &out);

/// Loads `binary` on `device` with the signature of `prepared`.
Status loadKernelExecutable(Device &device, const PreparedKernel &prepared,
                            const CompiledBinary &binary, void **out);

class Kernel : public HandleObject {
public:
  static constexpr uint32_t kMagic = 0x746b4b4e; // "tkKN"
  static constexpr const char *kHandleName = "kernel";

  /// Loads the binary of a package (TK_SOURCE_PACKAGE) the device runs
  /// best; hands any other source to the library's compiler
  /// (KernelCompiler.h), which libtk_runtime.so has not. `options` may be
  /// null.
  static Status create(Device &device, const tk_kernel_source &source,
                       const tk_compile_options *options, Kernel **out);
  /// The kernel of an `executable` loaded from `binary` on `device`
  /// (loadKernelExecutable); it owns the executable and `boundsRecord` (the
  /// bounds-checked mode's record, or null).
  static Kernel *adopt(Device &device, PreparedKernel &&prepared,
                       std::shared_ptr<const CompiledBinary> binary,
                       void *executable, BinaryOrigin origin,
                       Buffer *boundsRecord);
  /// Unloads the executable and retires the handle (see Handle.h).
  static Status release(Kernel *kernel);

  /// Checks `grid` and `args` against the device limits and the signature
  /// and enqueues the launch on `stream` (null: the default stream). Does
  /// not wait. Thread-safe: many threads may launch one kernel at once.
  Status launch(const tk_grid &grid, const tk_args *args, Stream *stream);

  /// Programs per compute unit: the plugin's answer when it has one, else
  /// an estimate from the binary's warps, registers and shared memory and
  /// the device's limits. At least 1.
  Status getOccupancy(int *out) const;

  /// The estimate getOccupancy falls back on: programs of `binary` that fit
  /// on one compute unit of a device with `props`, bounded by threads
  /// (num_warps x warp size against max_threads_per_block, standing in for
  /// the per-unit limit the props do not carry), registers and shared
  /// memory. At least 1.
  static int estimateOccupancy(const tk_device_props &props,
                               const CompiledBinary &binary);

  Device &getDevice() const { return device; }
  const std::string &getEntry() const { return entry; }
  const std::vector<KernelArgument> &getArguments() const { return arguments; }
  /// The arguments a launch passes: all of them, or the caller's of a
  /// bounds-checked kernel.
  size_t getNumUserArguments() const {
    return boundsChecks ? boundsChecks->numUserArguments : arguments.size();
  }
  /// Whether launches check every access against its buffer
  /// (TK_CHECK_BOUNDS).
  bool isBoundsChecked() const { return boundsChecks.has_value(); }
  const CompiledBinary &getBinary() const { return *binary; }
  /// Where creation found the binary (memory, disk, or a fresh compile).
  BinaryOrigin getOrigin() const { return origin; }

  tk_kernel toHandle() {
    return reinterpret_cast<tk_kernel>(static_cast<HandleObject *>(this));
  }
  static Status fromHandle(tk_kernel handle, Kernel **out) {
    return lookupHandle(handle, out);
  }

private:
  Kernel(Device &device, PreparedKernel &&prepared,
         std::shared_ptr<const CompiledBinary> binary, void *executable,
         BinaryOrigin origin)
      : HandleObject(kMagic), device(device), api(device.getApi()),
        entry(std::move(prepared.entry)),
        arguments(std::move(prepared.arguments)),
        boundsChecks(std::move(prepared.boundsChecks)),
        binary(std::move(binary)), executable(executable), origin(origin) {}

  Status checkGrid(const tk_grid &grid) const;
  /// A bounds-checked launch: clears the record, launches, waits, and turns
  /// the first site the record names into TK_ERROR_OUT_OF_BOUNDS.
  Status launchChecked(const int32_t dims[3], void **pointers,
                       void *argumentValues, const size_t *bufferBytes,
                       Stream *stream);
  /// A launch failure naming the kernel and argument `index`.
  Status argumentError(tk_status code, size_t index,
                       const std::string &what) const;

  Device &device;
  const tk_backend_interface &api;
  std::string entry;
  std::vector<KernelArgument> arguments;
  std::optional<BoundsCheckTable> boundsChecks;
  /// The bounds-checked mode's record (one i64 slot per site), and the lock
  /// that gives one launch at a time the record.
  Buffer *boundsRecord = nullptr;
  std::mutex boundsMutex;
  std::shared_ptr<const CompiledBinary> binary;
  void *executable;
  BinaryOrigin origin;
};

} // namespace tk::runtime

#endif // TK_RUNTIME_KERNEL_H_
