//===- Logging.cpp - the runtime's logger ---------------------------------===//
//
// Creates the "tk" spdlog logger with the level TK_LOG_LEVEL asks for.
//
//===----------------------------------------------------------------------===//

#include "tk/runtime/Logging.h"

#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <cstring>
#include <optional>

using namespace tk::runtime;

static std::optional<spdlog::level::level_enum> parseLevel(const char *text) {
  static const struct {
    const char *name;
    spdlog::level::level_enum level;
  } levels[] = {
      {"trace", spdlog::level::trace},  {"debug", spdlog::level::debug},
      {"info", spdlog::level::info},    {"warn", spdlog::level::warn},
      {"warning", spdlog::level::warn}, {"error", spdlog::level::err},
      {"off", spdlog::level::off}};
  for (const auto &entry : levels)
    if (strcasecmp(text, entry.name) == 0)
      return entry.level;
  return std::nullopt;
}

static std::shared_ptr<spdlog::logger> createLogger() {
  // spdlog reports misuse (a name registered twice) with exceptions; none may
  // leave the library, so every failure falls back to a silent logger.
  try {
    std::shared_ptr<spdlog::logger> logger = spdlog::get("tk");
    if (!logger) {
      logger = std::make_shared<spdlog::logger>(
          "tk", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
      logger->set_pattern("[tk] [%l] %v");
      try {
        spdlog::register_logger(logger);
      } catch (const spdlog::spdlog_ex &) {
        // Another component registered "tk" between get and register.
        if (auto existing = spdlog::get("tk"))
          logger = existing;
      }
    }
    const char *levelText = std::getenv("TK_LOG_LEVEL");
    std::optional<spdlog::level::level_enum> level;
    if (levelText && *levelText)
      level = parseLevel(levelText);
    logger->set_level(level.value_or(spdlog::level::warn));
    if (levelText && *levelText && !level)
      logger->warn("TK_LOG_LEVEL='{}' is not one of trace, debug, info, warn, "
                   "error, off; using warn",
                   levelText);
    return logger;
  } catch (...) {
    return std::make_shared<spdlog::logger>(
        "tk", std::make_shared<spdlog::sinks::null_sink_mt>());
  }
}

spdlog::logger &tk::runtime::getLogger() {
  static std::shared_ptr<spdlog::logger> logger = createLogger();
  return *logger;
}
