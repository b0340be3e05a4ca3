//===- Status.h - status values and the thread's last error -----*- C++ -*-===//
//
// Every fallible runtime function returns a Status: a tk_status code and a
// message that names the problem. The C API turns a failed Status into its
// code and the calling thread's last error (tk_last_error()).
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_STATUS_H_
#define TK_RUNTIME_STATUS_H_

#include "tk/tk.h"

#include <string>
#include <utility>

namespace tk::runtime {

/// A tk_status with its message. A default-constructed Status is success and
/// costs no allocation, so functions on the launch path can return one.
class [[nodiscard]] Status {
public:
  Status() = default;
  Status(tk_status code, std::string message)
      : statusCode(code), statusMessage(std::move(message)) {}

  static Status success() { return Status(); }

  bool isOk() const { return statusCode == TK_SUCCESS; }
  tk_status code() const { return statusCode; }
  const std::string &message() const { return statusMessage; }

  /// Puts `context` and ": " before the message ("cpu: compile: ...").
  Status &prefix(const std::string &context) {
    if (!isOk())
      statusMessage = context + ": " + statusMessage;
    return *this;
  }

  /// Records a failure as the calling thread's last error; returns the code.
  tk_status report() const;

private:
  tk_status statusCode = TK_SUCCESS;
  std::string statusMessage;
};

/// Sets the calling thread's last error message (what tk_last_error returns).
void setLastError(std::string message);

/// The calling thread's last error message; "" when no call has failed. Valid
/// until the thread's next failed call.
const char *getLastError();

/// The constant name of a status ("TK_ERROR_INVALID_IR"), "TK_UNKNOWN_STATUS"
/// for a value outside the enum.
const char *getStatusName(tk_status status);

} // namespace tk::runtime

/// Returns from the enclosing function when `expr` yields a failed Status.
#define TK_RETURN_IF_ERROR(expr)                                               \
  do {                                                                         \
    ::tk::runtime::Status tkStatusTmp = (expr);                                \
    if (!tkStatusTmp.isOk())                                                   \
      return tkStatusTmp;                                                      \
  } while (false)

#endif // TK_RUNTIME_STATUS_H_
