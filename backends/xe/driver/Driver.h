//===- Driver.h - the Level Zero loader, opened at run time -----*- C++ -*-===//
//
// Level Zero is never linked: the plugin opens libze_loader with dlopen and
// resolves the symbols of ZeSymbols.def into one table, so the plugin loads
// on machines without the loader (or without an Intel GPU), reporting "no
// device" there.
//
// The types, enum values and structs come from <level_zero/ze_api.h>
// (Debian: libze-dev), a header only: every prototype of the table is held
// against it at compile time (Driver.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TK_BACKENDS_XE_DRIVER_DRIVER_H_
#define TK_BACKENDS_XE_DRIVER_DRIVER_H_

#include "tk/tk.h"

#include <level_zero/ze_api.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tk::xe {

/// The loader's entry points, one pointer per symbol of ZeSymbols.def.
struct DriverApi {
#define TK_ZE_REQUIRED(name, ret, params) ret(*name) params = nullptr;
#include "driver/ZeSymbols.def"
};

/// Opens the Level Zero loader, resolves its symbols and initialises its GPU
/// drivers (zeInit, then zeDriverGet), once per process; later calls return
/// the first outcome. TK_XE_ZE_LIBRARY, when set, names the library to open
/// (a path or a file name); otherwise libze_loader.so.1, then
/// libze_loader.so. TK_ERROR_NO_DEVICE, with the reason in `error`, when no
/// library opens, a required symbol is missing, zeInit fails (no Intel GPU
/// driver, or one that finds no GPU) or no driver is reported.
///
/// After a failed zeInit no other Level Zero function is ever called in the
/// process: Debian 12's loader (1.8.12) crashes in zeDriverGet then.
tk_status openDriver(std::string &error);

/// The table openDriver filled; only valid after it succeeded (its pointers
/// are all NULL otherwise).
const DriverApi &driver();

/// The drivers zeDriverGet reported (Intel's compute-runtime is one, on
/// every GPU it finds); empty before openDriver succeeded.
const std::vector<ze_driver_handle_t> &drivers();

/// What openDriver opened, for messages: "libze_loader.so.1 (Level Zero
/// 1.8)", the API version being the first driver's. Empty before openDriver
/// succeeded.
const std::string &runtimeDescription();

/// zeDriverGetApiVersion of the first driver (0 before openDriver
/// succeeded): ZE_MAKE_VERSION(major, minor).
ze_api_version_t runtimeVersion();

/// The tk_status a ze_result_t is reported as (ZeErrors.def).
tk_status statusOfZeError(ze_result_t result);

/// "Level Zero error 'ZE_RESULT_ERROR_UNINITIALIZED' (0x78000001)"; the
/// name is 'unknown' for a result ZeErrors.def does not list.
std::string describeZeError(ze_result_t result);

/// TK_SUCCESS for ZE_RESULT_SUCCESS; otherwise the mapped status, with
/// `error` set to "tk-xe: <call> failed: <describeZeError>".
tk_status checkZe(ze_result_t result, const char *call, std::string &error);

} // namespace tk::xe

/// Calls loader entry point `name` and returns from the enclosing function
/// (whose `error` string receives the message) when it fails.
#define TK_ZE_RETURN_IF_ERROR(name, ...)                                       \
  do {                                                                         \
    if (tk_status tkZeStatus = ::tk::xe::checkZe(                              \
            ::tk::xe::driver().name(__VA_ARGS__), #name, error))               \
      return tkZeStatus;                                                       \
  } while (false)

#endif // TK_BACKENDS_XE_DRIVER_DRIVER_H_
