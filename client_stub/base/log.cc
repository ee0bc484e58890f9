#include "client_stub/base/log.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hipr::client {
namespace {

constexpr int kLevelUnread = -1;

// constinit: a constant in .data, never a dynamic initialiser, so logging
// works from other libraries' constructors that run before the stub's own.
constinit std::atomic<int> g_level{kLevelUnread};

int Level() {
  int level = g_level.load(std::memory_order_relaxed);
  if (level != kLevelUnread) return level;
  // Racing first readers parse the same environment and store the same value.
  // A bad value is reported once, by Config (ConfigFromEnvironment).
  LogLevel parsed = LogLevel::kWarn;
  if (const char* text = std::getenv("HIPR_LOG_LEVEL"); text != nullptr) ParseLogLevel(text, &parsed);
  level = static_cast<int>(parsed);
  g_level.store(level, std::memory_order_relaxed);
  return level;
}

}  // namespace

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "error") *out = LogLevel::kError;
  else if (s == "warn" || s == "warning") *out = LogLevel::kWarn;
  else if (s == "info") *out = LogLevel::kInfo;
  else if (s == "debug") *out = LogLevel::kDebug;
  else if (s == "trace") *out = LogLevel::kTrace;
  else if (s == "off" || s == "none") *out = LogLevel::kOff;
  else return false;
  return true;
}

bool LogEnabled(LogLevel level) {
  return level != LogLevel::kOff && static_cast<int>(level) >= Level();
}

void LogLine(LogLevel level, const char* fmt, ...) {
  if (!LogEnabled(level)) return;
  // One write(2) per line: lines from several threads never interleave, and
  // no lock or stdio state is involved (usable after fork, before main).
  char line[2048];
  int n = std::snprintf(line, sizeof line, "hipr[%d]: ", static_cast<int>(getpid()));
  if (n < 0) return;
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n), fmt, ap);
  va_end(ap);
  if (m < 0) return;
  size_t len = static_cast<size_t>(n) + static_cast<size_t>(m);
  if (len > sizeof line - 2) {
    len = sizeof line - 2;
    std::memcpy(line + len - 3, "...", 3);
  }
  line[len++] = '\n';
  const char* p = line;
  while (len > 0) {
    ssize_t w = write(STDERR_FILENO, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    p += w;
    len -= static_cast<size_t>(w);
  }
}

}  // namespace hipr::client
