//===- Status.cpp - status values and the thread's last error -------------===//
//
// The thread-local last-error slot behind tk_last_error() and the names of
// the status codes.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Status.h"

using namespace tk::runtime;

/// One message per thread: a failed call on one thread never clobbers the
/// message another thread is about to read.
static thread_local std::string lastError;

tk_status Status::report() const {
  if (!isOk())
    setLastError(statusMessage);
  return statusCode;
}

void tk::runtime::setLastError(std::string message) {
  lastError = std::move(message);
}

const char *tk::runtime::getLastError() { return lastError.c_str(); }

const char *tk::runtime::getStatusName(tk_status status) {
  switch (status) {
#define TK_STATUS_CASE(name)                                                   \
  case name:                                                                   \
    return #name;
    TK_STATUS_CASE(TK_SUCCESS)
    TK_STATUS_CASE(TK_ERROR_INVALID_ARGUMENT)
    TK_STATUS_CASE(TK_ERROR_INVALID_HANDLE)
    TK_STATUS_CASE(TK_ERROR_INVALID_IR)
    TK_STATUS_CASE(TK_ERROR_NOT_FOUND)
    TK_STATUS_CASE(TK_ERROR_ARGUMENT_MISMATCH)
    TK_STATUS_CASE(TK_ERROR_OUT_OF_MEMORY)
    TK_STATUS_CASE(TK_ERROR_NO_DEVICE)
    TK_STATUS_CASE(TK_ERROR_UNSUPPORTED)
    TK_STATUS_CASE(TK_ERROR_COMPILATION)
    TK_STATUS_CASE(TK_ERROR_PLUGIN)
    TK_STATUS_CASE(TK_ERROR_ABI_MISMATCH)
    TK_STATUS_CASE(TK_ERROR_DEVICE)
    TK_STATUS_CASE(TK_ERROR_IO)
    TK_STATUS_CASE(TK_ERROR_INTERNAL)
    TK_STATUS_CASE(TK_ERROR_OUT_OF_BOUNDS)
#undef TK_STATUS_CASE
  case TK_STATUS_MAX_ENUM:
    break;
  }
  return "TK_UNKNOWN_STATUS";
}
