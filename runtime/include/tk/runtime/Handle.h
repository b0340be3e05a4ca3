//===- Handle.h - the objects behind the C API's opaque handles -*- C++ -*-===//
//
// Every tk_* handle points at a HandleObject that carries a magic number for
// its kind. Releasing a handle clears the magic and parks the object in a
// bounded quarantine instead of freeing it at once, so a stale handle used
// again soon after its release reads a cleared magic and gets
// TK_ERROR_INVALID_HANDLE instead of touching freed memory.
//
// This is best effort: a handle used after more than kQuarantineSize other
// releases, or a pointer that was never a handle, is undefined behaviour, as
// with any C API. It catches the common bug (release, then use) without a
// global handle table, which would put a lock on the launch path.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_HANDLE_H_
#define TK_RUNTIME_HANDLE_H_

#include "tk/runtime/Status.h"

#include <atomic>
#include <cstdint>
#include <memory>

namespace tk::runtime {

class HandleObject {
public:
  /// How many released objects are kept, cleared, before being freed.
  static constexpr size_t kQuarantineSize = 4096;

  explicit HandleObject(uint32_t magic) : magic(magic) {}
  virtual ~HandleObject();
  HandleObject(const HandleObject &) = delete;
  HandleObject &operator=(const HandleObject &) = delete;

  /// True while the handle has not been released. One relaxed load: cheap
  /// enough for the launch path.
  bool isLive(uint32_t expected) const {
    return magic.load(std::memory_order_relaxed) == expected;
  }

  /// Takes the magic of a live object of kind `expected`, atomically: of
  /// two threads releasing one handle at once, exactly one gets true.
  bool claim(uint32_t expected) {
    return magic.compare_exchange_strong(expected, 0,
                                         std::memory_order_acq_rel);
  }

  /// Clears the magic and hands the object to the quarantine, which frees it
  /// after kQuarantineSize later releases. The caller has already given back
  /// what the object owned on the device.
  static void retire(std::unique_ptr<HandleObject> object);

private:
  std::atomic<uint32_t> magic;
};

/// Resolves a C handle of kind T (whose T::kMagic and T::kHandleName say what
/// to expect): INVALID_ARGUMENT for NULL, INVALID_HANDLE for a released one.
template <typename T> Status lookupHandle(const void *handle, T **out) {
  if (!handle)
    return Status(TK_ERROR_INVALID_ARGUMENT,
                  std::string(T::kHandleName) + " is NULL");
  // The magic is read through the base class, which is at the start of every
  // handle object, before the pointer is trusted as a T.
  auto *object = static_cast<const HandleObject *>(handle);
  if (!object->isLive(T::kMagic))
    return Status(TK_ERROR_INVALID_HANDLE,
                  std::string(T::kHandleName) +
                      " handle is not live: it was released or never created");
  *out = static_cast<T *>(const_cast<HandleObject *>(object));
  return Status::success();
}

/// Resolves a handle that is about to be released: as lookupHandle, but
/// the magic is taken in the same step, so that a second release of it,
/// concurrent or later, is TK_ERROR_INVALID_HANDLE and never a double free.
template <typename T> Status claimHandle(const void *handle, T **out) {
  TK_RETURN_IF_ERROR(lookupHandle(handle, out));
  if (!(*out)->claim(T::kMagic))
    return Status(TK_ERROR_INVALID_HANDLE,
                  std::string(T::kHandleName) +
                      " handle is not live: another thread released it");
  return Status::success();
}

} // namespace tk::runtime

#endif // TK_RUNTIME_HANDLE_H_
