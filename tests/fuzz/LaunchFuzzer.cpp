//===- LaunchFuzzer.cpp - tk_launch's arguments against a signature -------===//
//
// One kernel is created once on the cpu backend; every input is one launch
// of it: a grid, an argument array (count, kinds as raw integers, values,
// buffers that are real, too small, released, NULL, or another kind of
// handle), synchronous or on a stream. The fuzzer knows the signature, so
// it knows whether each launch is well formed:
//   - a well-formed launch succeeds and the kernel ran: the buffer given as
//     `dst` holds the first element of the one given as `src`;
//   - any other is refused with ARGUMENT_MISMATCH, INVALID_ARGUMENT or
//     INVALID_HANDLE and a message, and nothing ran.
// Grid dimensions of 1 or more are folded to 1..3 so that every launch is
// short; zero and negative ones reach tk_launch as they are.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

using tk::fuzz::require;
using tk::fuzz::requireRefusal;

namespace {

// src[0] is copied to dst[0]; n and m only carry their divisibility.
constexpr char kKernel[] = R"(
tk.func @copy_first(%src: !tk.ptr<f32> {tk.divisibility = 16 : i32},
                    %dst: !tk.ptr<f32>,
                    %n: i32 {tk.divisibility = 4 : i32},
                    %m: i64 {tk.divisibility = 8 : i32},
                    %s: f32, %d: f64) {
  %v = tk.load %src : !tk.ptr<f32>
  tk.store %dst, %v : !tk.ptr<f32>
  tk.return
}
)";
constexpr size_t kNumArgs = 6;
constexpr tk_arg_kind kSignature[kNumArgs] = {TK_ARG_BUFFER, TK_ARG_BUFFER,
                                              TK_ARG_I32,    TK_ARG_I64,
                                              TK_ARG_F32,    TK_ARG_F64};

/// The handles a buffer argument may be given.
enum class Handle { First, Second, TooSmall, Released, Null, Kernel, Stream };
constexpr int kNumHandles = 7;

struct Fixture {
  tk_device device = nullptr;
  tk_kernel kernel = nullptr;
  tk_stream stream = nullptr;
  tk_buffer first = nullptr, second = nullptr, tooSmall = nullptr,
            released = nullptr;
  float firstValue = 42.0f, secondValue = -7.0f;
};

void check(tk_status status, const char *what) {
  require(status == TK_SUCCESS, std::string(what) + ": " +
                                    tk_status_string(status) + ": " +
                                    tk_last_error());
}

Fixture &fixture() {
  static Fixture *f = [] {
    auto *f = new Fixture();
    check(tk_device_get(0, &f->device), "tk_device_get");
    tk_kernel_source source = {TK_SOURCE_TEXT, kKernel, sizeof(kKernel) - 1,
                               nullptr};
    check(tk_kernel_create(f->device, &source, nullptr, &f->kernel),
          "tk_kernel_create");
    check(tk_stream_create(f->device, &f->stream), "tk_stream_create");
    check(tk_buffer_create(f->device, 64, &f->first), "tk_buffer_create");
    check(tk_buffer_create(f->device, 64, &f->second), "tk_buffer_create");
    // Smaller than the one f32 the kernel reads.
    check(tk_buffer_create(f->device, 2, &f->tooSmall), "tk_buffer_create");
    // Released once and kept in the runtime's quarantine: nothing else is
    // released while the fuzzer runs.
    check(tk_buffer_create(f->device, 64, &f->released), "tk_buffer_create");
    check(tk_buffer_release(f->released), "tk_buffer_release");
    return f;
  }();
  return *f;
}

tk_buffer handleOf(Handle handle) {
  Fixture &f = fixture();
  switch (handle) {
  case Handle::First:
    return f.first;
  case Handle::Second:
    return f.second;
  case Handle::TooSmall:
    return f.tooSmall;
  case Handle::Released:
    return f.released;
  case Handle::Null:
    return nullptr;
  case Handle::Kernel:
    return reinterpret_cast<tk_buffer>(f.kernel);
  case Handle::Stream:
    return reinterpret_cast<tk_buffer>(f.stream);
  }
  return nullptr;
}

float readFirst(tk_buffer buffer) {
  float value = 0;
  check(tk_buffer_read(buffer, 0, &value, sizeof(value)), "tk_buffer_read");
  return value;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Fixture &f = fixture();
  FuzzedDataProvider input(data, size);

  tk_grid grid;
  bool gridOk = true;
  for (int32_t *dim : {&grid.x, &grid.y, &grid.z}) {
    int32_t value = input.ConsumeIntegral<int32_t>();
    *dim = value >= 1 ? 1 + (value - 1) % 3 : value;
    gridOk &= *dim >= 1;
  }
  bool async = input.ConsumeBool();
  bool nullArray = input.ConsumeIntegralInRange<int>(0, 15) == 0;
  size_t count = input.ConsumeIntegralInRange<size_t>(0, 8);

  std::vector<tk_arg> args(count);
  std::vector<Handle> handles(count, Handle::Null);
  bool argsOk = !nullArray || count == 0;
  argsOk &= count == kNumArgs;
  for (size_t i = 0; i < count; ++i) {
    tk_arg &arg = args[i];
    std::memset(&arg, 0, sizeof(arg));
    // Mostly a kind of the enum, sometimes any integer a C caller may pass.
    int32_t kind = input.ConsumeIntegralInRange<int32_t>(0, 5);
    if (kind == 5)
      kind = input.ConsumeIntegral<int32_t>();
    std::memcpy(&arg.kind, &kind, sizeof(kind));
    bool matches = i < kNumArgs && kind == kSignature[i];
    switch (kind) {
    case TK_ARG_BUFFER:
      handles[i] =
          static_cast<Handle>(input.ConsumeIntegralInRange(0, kNumHandles - 1));
      arg.value.buffer = handleOf(handles[i]);
      matches &= handles[i] == Handle::First || handles[i] == Handle::Second;
      break;
    case TK_ARG_I32:
      arg.value.i32 = input.ConsumeIntegral<int32_t>();
      matches &= arg.value.i32 % 4 == 0;
      break;
    case TK_ARG_I64:
      arg.value.i64 = input.ConsumeIntegral<int64_t>();
      matches &= arg.value.i64 % 8 == 0;
      break;
    case TK_ARG_F32:
      arg.value.f32 = input.ConsumeFloatingPoint<float>();
      break;
    case TK_ARG_F64:
      arg.value.f64 = input.ConsumeFloatingPoint<double>();
      break;
    default:
      arg.value.i64 = input.ConsumeIntegral<int64_t>();
      break;
    }
    argsOk &= matches;
  }

  check(tk_buffer_write(f.first, 0, &f.firstValue, sizeof(float)),
        "tk_buffer_write");
  check(tk_buffer_write(f.second, 0, &f.secondValue, sizeof(float)),
        "tk_buffer_write");
  tk_args list = {nullArray ? nullptr : args.data(), count};
  tk_status status = async ? tk_launch_async(f.kernel, grid, &list, f.stream)
                           : tk_launch(f.kernel, grid, &list);
  if (async && status == TK_SUCCESS)
    check(tk_stream_synchronize(f.stream), "tk_stream_synchronize");
  std::string message = status == TK_SUCCESS ? "" : tk_last_error();

  bool wellFormed = gridOk && argsOk;
  require(wellFormed == (status == TK_SUCCESS),
          std::string(wellFormed ? "a well-formed launch was refused: "
                                 : "an ill-formed launch was accepted") +
              message);
  float firstAfter = readFirst(f.first), secondAfter = readFirst(f.second);
  if (!wellFormed) {
    requireRefusal(status, message,
                   {TK_ERROR_ARGUMENT_MISMATCH, TK_ERROR_INVALID_ARGUMENT,
                    TK_ERROR_INVALID_HANDLE});
    require(firstAfter == f.firstValue && secondAfter == f.secondValue,
            "a refused launch wrote a buffer");
    return 0;
  }
  float source = handles[0] == Handle::First ? f.firstValue : f.secondValue;
  float copied = handles[1] == Handle::First ? firstAfter : secondAfter;
  require(copied == source, "the kernel copied " + std::to_string(copied) +
                                ", not src[0] = " + std::to_string(source));
  return 0;
}
