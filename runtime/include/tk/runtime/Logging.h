//===- Logging.h - the runtime's logger -------------------------*- C++ -*-===//
//
// tk logs through one spdlog logger named "tk", writing to stderr. Its level
// comes from TK_LOG_LEVEL (trace, debug, info, warn, error, off; default
// warn), read once, when the logger is first used.
//
//===----------------------------------------------------------------------===//

#ifndef TK_RUNTIME_LOGGING_H_
#define TK_RUNTIME_LOGGING_H_

#include <spdlog/spdlog.h>

namespace tk::runtime {

/// The "tk" logger; created on first use, shared with anything else in the
/// process that asks spdlog for "tk". Never null.
spdlog::logger &getLogger();

} // namespace tk::runtime

#endif // TK_RUNTIME_LOGGING_H_
