//===- CApi.cpp - the tk C API (tk.h) over the runtime objects ------------===//
//
// Every tk.h function: resolve handles, call the runtime object, turn its
// Status into a tk_status and the thread's last error. No C++ exception
// crosses this boundary; handles are the runtime objects themselves.
//
//===----------------------------------------------------------------------===//

#include "tk/tk.h"

#include "tk/runtime/Buffer.h"
#include "tk/runtime/CEnum.h"
#include "tk/runtime/Device.h"
#include "tk/runtime/Event.h"
#include "tk/runtime/Kernel.h"
#include "tk/runtime/KernelCompiler.h"
#include "tk/runtime/Runtime.h"
#include "tk/runtime/Status.h"
#include "tk/runtime/Stream.h"

#include <algorithm>
#include <cstring>
#include <new>

using namespace tk::runtime;

namespace {
/// Runs `body` (which returns a Status) and reports its failure; an escaping
/// exception (std::bad_alloc from a container, say) becomes a status too.
template <typename Body> tk_status guard(Body &&body) noexcept {
  try {
    return body().report();
  } catch (const std::bad_alloc &) {
    setLastError("out of host memory");
    return TK_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception &error) {
    setLastError(std::string("internal error: ") + error.what());
    return TK_ERROR_INTERNAL;
  } catch (...) {
    setLastError("internal error: unknown exception");
    return TK_ERROR_INTERNAL;
  }
}

Status requireOut(const void *out, const char *name) {
  if (!out)
    return Status(TK_ERROR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  return Status::success();
}

/// A struct the caller sizes (`size`, its struct_size) must hold at least
/// the struct_size field.
Status requireStructSize(size_t size, const char *type) {
  if (size < sizeof(size_t))
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  "out->struct_size is " + std::to_string(size) +
                      "; set it to sizeof(" + type + ")");
  return Status::success();
}
} // namespace

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

const char *tk_status_string(tk_status status) { return getStatusName(status); }

const char *tk_last_error(void) { return getLastError(); }

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

tk_status tk_device_count(int *out_count) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_count, "out_count"));
    *out_count = 0;
    Runtime *runtime = nullptr;
    TK_RETURN_IF_ERROR(Runtime::get(&runtime));
    *out_count = runtime->getDeviceCount();
    return Status::success();
  });
}

tk_status tk_device_get(int index, tk_device *out_device) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_device, "out_device"));
    *out_device = nullptr;
    Runtime *runtime = nullptr;
    TK_RETURN_IF_ERROR(Runtime::get(&runtime));
    Device *device = nullptr;
    TK_RETURN_IF_ERROR(runtime->getDevice(index, &device));
    *out_device = device->toHandle();
    return Status::success();
  });
}

tk_status tk_device_query(tk_device device, tk_device_props *out) {
  return guard([&] {
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    TK_RETURN_IF_ERROR(requireOut(out, "out"));
    size_t size = out->struct_size;
    TK_RETURN_IF_ERROR(requireStructSize(size, "tk_device_props"));
    // An older caller's smaller struct gets the fields it knows about.
    std::memcpy(out, &object->getProps(),
                std::min(size, sizeof(tk_device_props)));
    out->struct_size = std::min(size, sizeof(tk_device_props));
    return Status::success();
  });
}

tk_status tk_device_get_native(tk_device device, tk_device_native *out) {
  return guard([&] {
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    TK_RETURN_IF_ERROR(requireOut(out, "out"));
    TK_RETURN_IF_ERROR(requireStructSize(out->struct_size, "tk_device_native"));
    return object->getPlugin().queryNative(object->getIndex(), *out);
  });
}

tk_status tk_device_capabilities(tk_device device, tk_capabilities *out) {
  return guard([&] {
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    TK_RETURN_IF_ERROR(requireOut(out, "out"));
    TK_RETURN_IF_ERROR(requireStructSize(out->struct_size, "tk_capabilities"));
    return object->getPlugin().queryCapabilities(object->getIndex(), *out);
  });
}

tk_status tk_backend_name(const char **out_name) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_name, "out_name"));
    *out_name = nullptr;
    Runtime *runtime = nullptr;
    TK_RETURN_IF_ERROR(Runtime::get(&runtime));
    *out_name = runtime->getPlugin().getName().c_str();
    return Status::success();
  });
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

tk_status tk_buffer_create(tk_device device, size_t bytes,
                           tk_buffer *out_buffer) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_buffer, "out_buffer"));
    *out_buffer = nullptr;
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    Buffer *buffer = nullptr;
    TK_RETURN_IF_ERROR(Buffer::create(*object, bytes, &buffer));
    *out_buffer = buffer->toHandle();
    return Status::success();
  });
}

tk_status tk_buffer_wrap(tk_device device, void *device_pointer, size_t bytes,
                         tk_buffer *out_buffer) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_buffer, "out_buffer"));
    *out_buffer = nullptr;
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    Buffer *buffer = nullptr;
    TK_RETURN_IF_ERROR(Buffer::wrap(*object, device_pointer, bytes, &buffer));
    *out_buffer = buffer->toHandle();
    return Status::success();
  });
}

tk_status tk_buffer_release(tk_buffer buffer) {
  return guard([&] {
    Buffer *object = nullptr;
    TK_RETURN_IF_ERROR(claimHandle(buffer, &object));
    return Buffer::release(object);
  });
}

tk_status tk_buffer_size(tk_buffer buffer, size_t *out_bytes) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_bytes, "out_bytes"));
    Buffer *object = nullptr;
    TK_RETURN_IF_ERROR(Buffer::fromHandle(buffer, &object));
    *out_bytes = object->getSize();
    return Status::success();
  });
}

tk_status tk_buffer_device_pointer(tk_buffer buffer, void **out_pointer) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_pointer, "out_pointer"));
    Buffer *object = nullptr;
    TK_RETURN_IF_ERROR(Buffer::fromHandle(buffer, &object));
    *out_pointer = object->getDevicePointer();
    return Status::success();
  });
}

tk_status tk_buffer_write(tk_buffer dst, size_t offset, const void *src,
                          size_t bytes) {
  return guard([&] {
    Buffer *object = nullptr;
    TK_RETURN_IF_ERROR(Buffer::fromHandle(dst, &object));
    return object->write(offset, src, bytes);
  });
}

tk_status tk_buffer_read(tk_buffer src, size_t offset, void *dst,
                         size_t bytes) {
  return guard([&] {
    Buffer *object = nullptr;
    TK_RETURN_IF_ERROR(Buffer::fromHandle(src, &object));
    return object->read(offset, dst, bytes);
  });
}

tk_status tk_buffer_copy(tk_buffer dst, size_t dst_offset, tk_buffer src,
                         size_t src_offset, size_t bytes) {
  return guard([&] {
    Buffer *destination = nullptr, *source = nullptr;
    TK_RETURN_IF_ERROR(Buffer::fromHandle(dst, &destination));
    TK_RETURN_IF_ERROR(Buffer::fromHandle(src, &source));
    return destination->copyFrom(dst_offset, *source, src_offset, bytes);
  });
}

//===----------------------------------------------------------------------===//
// Streams
//===----------------------------------------------------------------------===//

tk_status tk_stream_create(tk_device device, tk_stream *out_stream) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_stream, "out_stream"));
    *out_stream = nullptr;
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    Stream *stream = nullptr;
    TK_RETURN_IF_ERROR(Stream::create(*object, &stream));
    *out_stream = stream->toHandle();
    return Status::success();
  });
}

tk_status tk_stream_wrap(tk_device device, void *native_stream,
                         tk_stream *out_stream) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_stream, "out_stream"));
    *out_stream = nullptr;
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    Stream *stream = nullptr;
    TK_RETURN_IF_ERROR(Stream::wrap(*object, native_stream, &stream));
    *out_stream = stream->toHandle();
    return Status::success();
  });
}

tk_status tk_stream_release(tk_stream stream) {
  return guard([&] {
    Stream *object = nullptr;
    TK_RETURN_IF_ERROR(claimHandle(stream, &object));
    return Stream::release(object);
  });
}

tk_status tk_stream_synchronize(tk_stream stream) {
  return guard([&] {
    Stream *object = nullptr;
    TK_RETURN_IF_ERROR(Stream::fromHandle(stream, &object));
    return object->synchronize();
  });
}

//===----------------------------------------------------------------------===//
// Events
//===----------------------------------------------------------------------===//

tk_status tk_event_create(tk_device device, tk_event *out_event) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_event, "out_event"));
    *out_event = nullptr;
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    Event *event = nullptr;
    TK_RETURN_IF_ERROR(Event::create(*object, &event));
    *out_event = event->toHandle();
    return Status::success();
  });
}

tk_status tk_event_release(tk_event event) {
  return guard([&] {
    Event *object = nullptr;
    TK_RETURN_IF_ERROR(claimHandle(event, &object));
    return Event::release(object);
  });
}

tk_status tk_event_record(tk_event event, tk_stream stream) {
  return guard([&] {
    Event *object = nullptr;
    TK_RETURN_IF_ERROR(Event::fromHandle(event, &object));
    Stream *on = nullptr;
    if (stream)
      TK_RETURN_IF_ERROR(Stream::fromHandle(stream, &on));
    return object->record(on);
  });
}

tk_status tk_event_synchronize(tk_event event) {
  return guard([&] {
    Event *object = nullptr;
    TK_RETURN_IF_ERROR(Event::fromHandle(event, &object));
    return object->synchronize();
  });
}

tk_status tk_event_elapsed_ms(tk_event start, tk_event end, float *out_ms) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_ms, "out_ms"));
    Event *first = nullptr, *last = nullptr;
    TK_RETURN_IF_ERROR(Event::fromHandle(start, &first));
    TK_RETURN_IF_ERROR(Event::fromHandle(end, &last));
    return Event::elapsedMs(*first, *last, *out_ms);
  });
}

tk_status tk_synchronize(tk_device device) {
  return guard([&] {
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    return object->synchronize();
  });
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

tk_status tk_kernel_create(tk_device device, const tk_kernel_source *source,
                           const tk_compile_options *options,
                           tk_kernel *out_kernel) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_kernel, "out_kernel"));
    *out_kernel = nullptr;
    TK_RETURN_IF_ERROR(requireOut(source, "source"));
    Device *object = nullptr;
    TK_RETURN_IF_ERROR(Device::fromHandle(device, &object));
    // Autotuning (an option of creation) creates each configuration through
    // this function and keeps the fastest.
    if (options &&
        options->struct_size >= offsetof(tk_compile_options, autotune) +
                                    sizeof(options->autotune) &&
        options->autotune) {
      if (rawEnumValue(source->kind) == TK_SOURCE_PACKAGE)
        return Status(TK_ERROR_INVALID_ARGUMENT,
                      "options->autotune with a package: its kernels were "
                      "compiled when it was built; autotune their source");
      KernelCompiler *compiler = getKernelCompiler();
      if (!compiler)
        return compilerMissing("options->autotune");
      return compiler->createAutotuned(device, *source, *options->autotune,
                                       out_kernel);
    }
    Kernel *kernel = nullptr;
    TK_RETURN_IF_ERROR(Kernel::create(*object, *source, options, &kernel));
    *out_kernel = kernel->toHandle();
    return Status::success();
  });
}

tk_status tk_autotune(tk_device device, const tk_autotune_request *request,
                      tk_kernel *out_kernel, tk_autotune_result *out_result) {
  return guard([&] {
    KernelCompiler *compiler = getKernelCompiler();
    if (compiler)
      return compiler->autotune(device, request, out_kernel, out_result);
    if (out_kernel)
      *out_kernel = nullptr;
    return compilerMissing("tk_autotune");
  });
}

tk_status tk_kernel_release(tk_kernel kernel) {
  return guard([&] {
    Kernel *object = nullptr;
    TK_RETURN_IF_ERROR(claimHandle(kernel, &object));
    return Kernel::release(object);
  });
}

tk_status tk_ttir_read_metadata(const char *json, size_t size,
                                tk_compile_options *options) {
  return guard([&] {
    if (!json)
      return Status(TK_ERROR_INVALID_ARGUMENT, "json is NULL");
    TK_RETURN_IF_ERROR(requireOut(options, "options"));
    if (options->struct_size <
        offsetof(tk_compile_options, num_stages) + sizeof(options->num_stages))
      return Status(TK_ERROR_INVALID_ARGUMENT,
                    "options->struct_size is " +
                        std::to_string(options->struct_size) +
                        ", too small to hold num_warps and num_stages; set it "
                        "to sizeof(tk_compile_options)");
    KernelCompiler *compiler = getKernelCompiler();
    if (!compiler)
      return compilerMissing("tk_ttir_read_metadata (Triton's JSON reader)");
    return compiler->readTritonMetadata(
        std::string_view(json, size ? size : std::strlen(json)),
        options->num_warps, options->num_stages);
  });
}

tk_status tk_kernel_num_args(tk_kernel kernel, int *out_count) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_count, "out_count"));
    Kernel *object = nullptr;
    TK_RETURN_IF_ERROR(Kernel::fromHandle(kernel, &object));
    *out_count = static_cast<int>(object->getNumUserArguments());
    return Status::success();
  });
}

tk_status tk_kernel_occupancy(tk_kernel kernel, int *out_programs_per_cu) {
  return guard([&] {
    TK_RETURN_IF_ERROR(requireOut(out_programs_per_cu, "out_programs_per_cu"));
    Kernel *object = nullptr;
    TK_RETURN_IF_ERROR(Kernel::fromHandle(kernel, &object));
    return object->getOccupancy(out_programs_per_cu);
  });
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

tk_status tk_launch(tk_kernel kernel, tk_grid grid, const tk_args *args) {
  return guard([&] {
    Kernel *object = nullptr;
    TK_RETURN_IF_ERROR(Kernel::fromHandle(kernel, &object));
    TK_RETURN_IF_ERROR(object->launch(grid, args, /*stream=*/nullptr));
    Device &device = object->getDevice();
    tk_status code = device.getApi().stream_synchronize(device.getIndex(),
                                                        /*stream=*/nullptr);
    if (code != TK_SUCCESS)
      return device.getPlugin().makeError(code, "stream_synchronize after "
                                                "launch of '" +
                                                    object->getEntry() + "'");
    return Status::success();
  });
}

tk_status tk_launch_async(tk_kernel kernel, tk_grid grid, const tk_args *args,
                          tk_stream stream) {
  return guard([&] {
    Kernel *object = nullptr;
    TK_RETURN_IF_ERROR(Kernel::fromHandle(kernel, &object));
    Stream *queue = nullptr;
    if (stream)
      TK_RETURN_IF_ERROR(Stream::fromHandle(stream, &queue));
    return object->launch(grid, args, queue);
  });
}
