// Client-side logging. The stub lives inside arbitrary processes, so it uses
// no logging library with global state: lines go to stderr with a "hipr"
// prefix, filtered by HIPR_LOG_LEVEL (error|warn|info|debug|trace; default
// warn). Thread-safe; usable before any constructor has run.
#pragma once

#include <cstdarg>

namespace hipr::client {

enum class LogLevel : int { kTrace = 0, kDebug, kInfo, kWarn, kError, kOff };

// True when lines at `level` are printed.
bool LogEnabled(LogLevel level);

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
