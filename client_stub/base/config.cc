#include "client_stub/base/config.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace hipr::client {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Parses a non-negative decimal integer, optionally followed by one of
// K/M/G/T (binary multiples) when `allow_suffix`. False on anything else or
// on overflow.
bool ParseUnsigned(std::string_view text, bool allow_suffix, uint64_t* out) {
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
  uint64_t value = 0;
  size_t i = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) {
    uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  if (i < text.size()) {
    if (!allow_suffix || i + 1 != text.size()) return false;
    int shift = 0;
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: return false;
    }
    if (value > (std::numeric_limits<uint64_t>::max() >> shift)) return false;
    value <<= shift;
  }
  *out = value;
  return true;
}

class Parser {
 public:
  Parser(EnvLookup lookup, void* ctx, std::vector<std::string>* problems)
      : lookup_(lookup), ctx_(ctx), problems_(problems) {}

  const char* Get(const char* name) const { return lookup_(name, ctx_); }

  // Reads `name` into *field when set and within [min, max]; otherwise keeps
  // the default and reports the problem.
  template <class T>
  void Number(const char* name, uint64_t min, uint64_t max, bool allow_suffix, T* field) {
    const char* raw = Get(name);
    if (raw == nullptr) return;
    uint64_t value = 0;
    if (!ParseUnsigned(raw, allow_suffix, &value) || value < min || value > max) {
      Problem(name, raw,
              "expected " + std::string(allow_suffix ? "a byte count (K/M/G/T suffix allowed)"
                                                     : "an integer") +
                  " in [" + std::to_string(min) + ", " + std::to_string(max) + "]",
              std::to_string(*field));
      return;
    }
    *field = static_cast<T>(value);
  }

  // A switch that is on unless set to 0/off/no/false (1/on/yes/true or
  // empty: on; anything else is a problem, and on).
  void Switch(const char* name, bool* field) {
    const char* v = Get(name);
    if (v == nullptr) return;
    const std::string r = Lower(v);
    if (r == "0" || r == "off" || r == "no" || r == "false")
      *field = false;
    else if (!(r == "1" || r == "on" || r == "yes" || r == "true" || r.empty()))
      Problem(name, v, "expected 0 or 1", "1");
  }

  void Problem(const char* name, const char* value, const std::string& why,
               const std::string& fallback) {
    problems_->push_back(std::string(name) + "='" + value + "' is invalid (" + why + "); using " +
                         fallback);
  }

 private:
  EnvLookup lookup_;
  void* ctx_;
  std::vector<std::string>* problems_;
};

const char* ProcessEnv(const char* name, void*) { return std::getenv(name); }

}  // namespace

bool ParseCompress(std::string_view text, Compress* out) {
  const std::string s = Lower(text);
  if (s == "off") *out = Compress::kOff;
  else if (s == "on") *out = Compress::kOn;
  else if (s == "auto") *out = Compress::kAuto;
  else return false;
  return true;
}

Config ParseConfig(EnvLookup lookup, void* ctx, std::vector<std::string>* problems) {
  Config c;
  Parser p(lookup, ctx, problems);
  if (const char* v = p.Get("HIPR_SERVER"); v != nullptr) c.server = v;
  p.Switch("HIPR_RDMA", &c.rdma);
  p.Switch("HIPR_PEER_COPY", &c.peer_copy);
  if (const char* v = p.Get("HIPR_RDMA_DEVICE"); v != nullptr) c.rdma_device = v;
  if (const char* v = p.Get("HIPR_TOKEN"); v != nullptr) c.token = v;
  if (const char* v = p.Get("HIPR_TOKEN_FILE"); v != nullptr) c.token_file = v;
  if (const char* v = p.Get("HIPR_TLS_CA"); v != nullptr) c.tls_ca = v;
  if (const char* v = p.Get("HIPR_TLS_CERT"); v != nullptr) c.tls_cert = v;
  if (const char* v = p.Get("HIPR_TLS_KEY"); v != nullptr) c.tls_key = v;
  if (const char* v = p.Get("HIPR_TLS_SERVER_NAME"); v != nullptr) c.tls_server_name = v;
  if (const char* v = p.Get("HIPR_LOG_LEVEL"); v != nullptr && !ParseLogLevel(v, &c.log_level))
    p.Problem("HIPR_LOG_LEVEL", v, "expected error, warn, info, debug, trace or off", "warn");
  p.Number("HIPR_CONNECT_TIMEOUT_MS", 1, 600000, false, &c.connect_timeout_ms);
  p.Number("HIPR_PEER_TIMEOUT_MS", 100, 86400000, false, &c.peer_timeout_ms);
  p.Number("HIPR_CONNECT_RETRY_S", 0, 86400, false, &c.connect_retry_s);
  // At least 64 MiB; at most 64 TiB (x86-64 user space is 128 TiB).
  p.Number("HIPR_WINDOW_BYTES", uint64_t{64} << 20, uint64_t{64} << 40, true, &c.window_bytes);
  p.Number("HIPR_CHUNK_BYTES", wire::kMinChunkBytes, wire::kMaxChunkBytes, true, &c.chunk_bytes);
  p.Number("HIPR_BATCH_BYTES", 0, uint64_t{1} << 30, true, &c.batch_bytes);
  p.Number("HIPR_FREE_BLOCK_BYTES", 0, uint64_t{1} << 40, true, &c.free_block_bytes);
  p.Number("HIPR_MALLOC_LEASE_BYTES", 0, uint64_t{1} << 40, true, &c.malloc_lease_bytes);
  p.Number("HIPR_FLUSH_US", 0, 10000000, false, &c.flush_us);
  p.Number("HIPR_SPIN_US", 0, 100000, false, &c.spin_us);
  p.Number("HIPR_STATS", 0, 1, false, &c.stats);
  p.Number("HIPR_ZEROCOPY_BYTES", 0, uint64_t{1} << 40, true, &c.zero_copy_bytes);
  if (const char* v = p.Get("HIPR_COMPRESS"); v != nullptr && !ParseCompress(v, &c.compress))
    p.Problem("HIPR_COMPRESS", v, "expected off, on or auto", "auto");
  if (const char* v = p.Get("HIPR_RESUME"); v != nullptr && !ParseCompress(v, &c.resume))
    p.Problem("HIPR_RESUME", v, "expected off, on or auto", "auto");
  if (const char* v = p.Get("HIPR_RTC_DEVICE_LIB_DIR"); v != nullptr) {
    if (*v == '/')
      c.rtc_device_lib_dir = v;
    else
      p.Problem("HIPR_RTC_DEVICE_LIB_DIR", v, "expected an absolute path", c.rtc_device_lib_dir);
  }
  // ROCm's device selection, applied by the worker to this session's devices.
  for (const char* name : {"HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"})
    if (const char* v = p.Get(name); v != nullptr) c.visible_devices.push_back(std::string(name) + "=" + v);
  // Whole pages only: the window is mmap'ed.
  constexpr uint64_t kPage = 4096;
  c.window_bytes = (c.window_bytes + kPage - 1) & ~(kPage - 1);
  return c;
}

Config ConfigFromEnvironment() {
  std::vector<std::string> problems;
  Config c = ParseConfig(&ProcessEnv, nullptr, &problems);
  for (const std::string& line : problems) HIPR_LOG_WARN("%s", line.c_str());
  return c;
}

transport::ClientOptions Config::TransportOptions() const {
  transport::ClientOptions o;
  o.server = server;
  o.connect_timeout_ms = connect_timeout_ms;
  o.peer_timeout_ms = peer_timeout_ms;
  o.spin_us = spin_us;
  o.zero_copy_bytes = zero_copy_bytes;
  o.tls_ca = tls_ca;
  o.tls_cert = tls_cert;
  o.tls_key = tls_key;
  o.tls_server_name = tls_server_name;
  o.rdma = rdma;
  o.rdma_device = rdma_device;
  return o;
}

}  // namespace hipr::client
