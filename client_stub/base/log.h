// Client-side logging. The stub lives inside arbitrary processes, so it uses
// no logging library with global state: lines go to stderr with a "hipr"
// prefix, filtered by HIPR_LOG_LEVEL (error|warn|info|debug|trace; default
// warn). Thread-safe; usable before any constructor has run.
#pragma once

#include <atomic>
#include <cstdarg>
#include <string_view>

namespace hipr::client {

enum class LogLevel : int { kTrace = 0, kDebug, kInfo, kWarn, kError, kOff };

// True when lines at `level` are printed.
bool LogEnabled(LogLevel level);

// "error", "warn" (or "warning"), "info", "debug", "trace" or "off" (or
// "none"), case-insensitive.
bool ParseLogLevel(std::string_view text, LogLevel* out);

// printf-style; appends a newline.
void LogLine(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace hipr::client

#define HIPR_LOG(level, ...)                                            \
  do {                                                                  \
    if (::hipr::client::LogEnabled(::hipr::client::LogLevel::level))    \
      ::hipr::client::LogLine(::hipr::client::LogLevel::level, __VA_ARGS__); \
  } while (0)
#define HIPR_LOG_ERROR(...) HIPR_LOG(kError, __VA_ARGS__)
#define HIPR_LOG_WARN(...) HIPR_LOG(kWarn, __VA_ARGS__)
#define HIPR_LOG_INFO(...) HIPR_LOG(kInfo, __VA_ARGS__)
#define HIPR_LOG_DEBUG(...) HIPR_LOG(kDebug, __VA_ARGS__)

// Logs once per call site (the first caller wins), e.g. for "not supported"
// notes that would otherwise repeat for every call.
#define HIPR_LOG_ONCE(level, ...)                                              \
  do {                                                                         \
    static constinit std::atomic<bool> hipr_logged_once_{false};               \
    if (!hipr_logged_once_.exchange(true, std::memory_order_relaxed))          \
      HIPR_LOG(level, __VA_ARGS__);                                            \
  } while (0)
