// Checking helpers shared by the end-to-end test programs (tests/e2e/*.hip).
//
// Every program checks itself: the first failed check prints
// "E2E_FAIL <file>:<line>: <what>" on stderr and exits with kExitCheckFailed.
// Programs are built by Debian's hipcc and linked against Debian's
// libamdhip64 as any user program; run_e2e.py runs them through the hipr stub
// and reads their output (markers below are part of that contract).
//
// Markers on stdout, one line each:
//   E2E_PAUSE <pid>   the program waits for one line on stdin (only when
//                     HIPR_E2E_HANDSHAKE is set) so the driver can read
//                     /proc/<pid>/maps of the live process;
//   E2E_PASS <name>   every check passed (the last line before exit 0).
#pragma once

#include <dlfcn.h>
#include <errno.h>
#include <hip/hip_runtime.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

namespace e2e {

// Exit codes the driver expects.
constexpr int kExitPass = 0;
constexpr int kExitCheckFailed = 1;
// copy_loop: the link was lost and every call then returned hipErrorNoDevice.
constexpr int kExitLinkLost = 3;
// copy_loop: a HIP error other than hipErrorNoDevice ended the loop.
constexpr int kExitOtherHipError = 4;
// copy_loop: the loop never saw an error before its time limit.
constexpr int kExitNoError = 5;

// Name of the stub's file; drop-in names are symlinks to it, so
// /proc/self/maps (which shows the file itself) always shows this name.
constexpr const char* kStubFile = "libhip_client_stub.so";

[[noreturn]] inline void Fail(const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
inline void Fail(const char* file, int line, const char* fmt, ...) {
  fflush(stdout);
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "E2E_FAIL %s:%d: %s\n", file, line, msg);
  fflush(stderr);
  _exit(kExitCheckFailed);  // No atexit handlers: the stub may be in any state.
}

// CHECK's failure: the condition's text is an argument, never part of the
// format (a condition may hold a '%', as an sscanf format does).
[[noreturn]] inline void FailCheck(const char* file, int line, const char* cond, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
inline void FailCheck(const char* file, int line, const char* cond, const char* fmt, ...) {
  char msg[1792];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  Fail(file, line, "check `%s` failed: %s", cond, msg);
}

inline const char* ErrName(hipError_t e) { return hipGetErrorName(e); }

// Whether the worker serves a hip device (the e2e chain, or a GPU node:
// HIPR_E2E_DEVICE, set by the harness), whose runtime picks device addresses
// (no window) and which lacks what docs/operations.md lists.
inline bool OnHipDevice() {
  const char* d = getenv("HIPR_E2E_DEVICE");
  return d != nullptr && strcmp(d, "hip") == 0;
}

}  // namespace e2e

// CHECK(cond, fmt, ...): fails the program with a message unless cond holds.
#define CHECK(cond, ...)                                                          \
  do {                                                                            \
    if (!(cond)) ::e2e::FailCheck(__FILE__, __LINE__, #cond, __VA_ARGS__);       \
  } while (0)

// HIP_OK(call): the call must return hipSuccess.
#define HIP_OK(call)                                                                       \
  do {                                                                                     \
    hipError_t e2e_err_ = (call);                                                          \
    if (e2e_err_ != hipSuccess)                                                            \
      ::e2e::Fail(__FILE__, __LINE__, "%s returned %s (%d), expected hipSuccess", #call,   \
                  ::e2e::ErrName(e2e_err_), static_cast<int>(e2e_err_));                   \
  } while (0)

// HIP_EXPECT(call, expected): the call must return exactly `expected`.
#define HIP_EXPECT(call, expected)                                                          \
  do {                                                                                      \
    hipError_t e2e_err_ = (call);                                                           \
    if (e2e_err_ != (expected))                                                             \
      ::e2e::Fail(__FILE__, __LINE__, "%s returned %s (%d), expected %s", #call,            \
                  ::e2e::ErrName(e2e_err_), static_cast<int>(e2e_err_), #expected);         \
  } while (0)

namespace e2e {

inline double NowSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// ---- Byte patterns --------------------------------------------------------

// A byte stream determined by `seed` (mix the size, a buffer id, a round...
// into it): neighbouring seeds and offsets give unrelated bytes, so a copy
// to the wrong place, a stale buffer or another client's data never match.
inline uint64_t Mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

inline uint8_t PatternByte(uint64_t seed, size_t index) {
  return static_cast<uint8_t>(Mix64(seed * 0x9e3779b97f4a7c15ull + (index >> 3)) >> (8 * (index & 7)));
}

inline void FillPattern(void* dst, size_t n, uint64_t seed) {
  uint8_t* p = static_cast<uint8_t*>(dst);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = Mix64(seed * 0x9e3779b97f4a7c15ull + (i >> 3));
    memcpy(p + i, &v, 8);
  }
  for (; i < n; ++i) p[i] = PatternByte(seed, i);
}

// Index of the first byte of `got` that differs from the pattern, or n.
inline size_t FirstPatternMismatch(const void* got, size_t n, uint64_t seed) {
  const uint8_t* p = static_cast<const uint8_t*>(got);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v = Mix64(seed * 0x9e3779b97f4a7c15ull + (i >> 3));
    if (memcmp(p + i, &v, 8) != 0) break;
  }
  for (; i < n; ++i)
    if (p[i] != PatternByte(seed, i)) return i;
  return n;
}

// Index of the first byte of `got` that is not `value`, or n.
inline size_t FirstNotEqual(const void* got, size_t n, uint8_t value) {
  const uint8_t* p = static_cast<const uint8_t*>(got);
  for (size_t i = 0; i < n; ++i)
    if (p[i] != value) return i;
  return n;
}

// Fails unless `got` holds pattern `seed`; `what` names the check.
#define CHECK_PATTERN(got, n, seed, what)                                                     \
  do {                                                                                        \
    size_t e2e_bad_ = ::e2e::FirstPatternMismatch((got), (n), (seed));                        \
    if (e2e_bad_ != (n))                                                                      \
      ::e2e::Fail(__FILE__, __LINE__,                                                         \
                  "%s: byte %zu of %zu is 0x%02x, expected 0x%02x (pattern seed %llu)",        \
                  (what), e2e_bad_, static_cast<size_t>(n),                                   \
                  static_cast<const uint8_t*>(got)[e2e_bad_],                                 \
                  ::e2e::PatternByte((seed), e2e_bad_), static_cast<unsigned long long>(seed)); \
  } while (0)

#define CHECK_BYTES_EQUAL(got, n, value, what)                                                \
  do {                                                                                        \
    size_t e2e_bad_ = ::e2e::FirstNotEqual((got), (n), (value));                              \
    if (e2e_bad_ != (n))                                                                      \
      ::e2e::Fail(__FILE__, __LINE__, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x",      \
                  (what), e2e_bad_, static_cast<size_t>(n),                                   \
                  static_cast<const uint8_t*>(got)[e2e_bad_], static_cast<unsigned>(value));  \
  } while (0)

// ---- /proc/self/maps ------------------------------------------------------

struct Mapping {
  uintptr_t start = 0;
  uintptr_t end = 0;
  std::string perms;  // "r-xp", "---p", ...
  unsigned long inode = 0;
  std::string dev;
  std::string path;  // Empty for anonymous mappings.
};

inline std::vector<Mapping> ReadMaps() {
  std::vector<Mapping> maps;
  FILE* f = fopen("/proc/self/maps", "re");
  if (f == nullptr) Fail(__FILE__, __LINE__, "cannot open /proc/self/maps: %s", strerror(errno));
  char line[4096 + 256];
  while (fgets(line, sizeof line, f) != nullptr) {
    Mapping m;
    unsigned long long start = 0, end = 0, offset = 0;
    char perms[8] = {}, dev[32] = {};
    int consumed = 0;
    if (sscanf(line, "%llx-%llx %7s %llx %31s %lu %n", &start, &end, perms, &offset, dev, &m.inode,
               &consumed) < 6)
      continue;
    m.start = static_cast<uintptr_t>(start);
    m.end = static_cast<uintptr_t>(end);
    m.perms = perms;
    m.dev = dev;
    std::string rest = line + consumed;
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.pop_back();
    // A file replaced on disk while mapped (e.g. the stub rebuilt during a
    // run) shows as "<path> (deleted)"; it is still that file.
    static constexpr char kDeleted[] = " (deleted)";
    constexpr size_t kDeletedLen = sizeof kDeleted - 1;
    if (rest.size() > kDeletedLen && rest.compare(rest.size() - kDeletedLen, kDeletedLen, kDeleted) == 0)
      rest.resize(rest.size() - kDeletedLen);
    m.path = rest;
    maps.push_back(m);
  }
  fclose(f);
  return maps;
}

inline std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

inline bool StartsWith(const std::string& s, const char* prefix) {
  return s.compare(0, strlen(prefix), prefix) == 0;
}

// The real HIP runtime and what it drags in (HSA runtime, thunk): none of it
// may ever be mapped in a client.
inline bool IsRealRuntimeFile(const std::string& path) {
  std::string base = Basename(path);
  return StartsWith(base, "libamdhip64") || StartsWith(base, "libhsa-runtime64") ||
         StartsWith(base, "libhsakmt");
}

// Fails if the real libamdhip64 / HSA runtime is mapped, if the stub is not,
// or if more than one copy (distinct files) of the stub is mapped.
inline void CheckMapsClean() {
  std::vector<Mapping> maps = ReadMaps();
  std::vector<std::string> stub_files;  // "dev:inode path", distinct.
  for (const Mapping& m : maps) {
    if (m.path.empty() || m.path[0] != '/') continue;
    if (IsRealRuntimeFile(m.path))
      Fail(__FILE__, __LINE__, "the real HIP runtime is mapped in this process: %s", m.path.c_str());
    if (Basename(m.path) == kStubFile) {
      std::string id = m.dev + ":" + std::to_string(m.inode) + " " + m.path;
      bool seen = false;
      for (const std::string& s : stub_files) seen = seen || s == id;
      if (!seen) stub_files.push_back(id);
    }
  }
  if (stub_files.empty()) Fail(__FILE__, __LINE__, "%s is not mapped: is the stub in use?", kStubFile);
  if (stub_files.size() != 1)
    Fail(__FILE__, __LINE__, "%zu copies of the stub are mapped (first two: %s | %s)", stub_files.size(),
         stub_files[0].c_str(), stub_files[1].c_str());
}

// The file that defines `symbol` as this process resolves it, by realpath.
inline std::string DefiningFile(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "<no object>";
  char resolved[PATH_MAX];
  if (realpath(info.dli_fname, resolved) == nullptr) return info.dli_fname;
  return resolved;
}

// Fails unless the process's hipMalloc lives in the stub.
inline void CheckHipIsStub() {
  void* sym = dlsym(RTLD_DEFAULT, "hipMalloc");
  CHECK(sym != nullptr, "dlsym(RTLD_DEFAULT, hipMalloc): %s", dlerror());
  std::string file = DefiningFile(sym);
  CHECK(Basename(file) == kStubFile, "hipMalloc resolves to %s, not the stub", file.c_str());
}

// Fails unless every byte of [p, p+n) lies in PROT_NONE ("---p") mappings
// of this process: a device address must never be dereferenceable here.
inline void CheckNotHostAccessible(const void* p, size_t n, const char* what) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uintptr_t end = a + (n == 0 ? 1 : n);
  std::vector<Mapping> maps = ReadMaps();
  while (a < end) {
    const Mapping* hit = nullptr;
    for (const Mapping& m : maps)
      if (m.start <= a && a < m.end) hit = &m;
    if (hit == nullptr)
      Fail(__FILE__, __LINE__, "%s: device address %#lx is not reserved in this process (no mapping)", what,
           static_cast<unsigned long>(a));
    if (hit->perms.compare(0, 3, "---") != 0)
      Fail(__FILE__, __LINE__, "%s: device address %#lx lies in a %s mapping (%lx-%lx %s): host-accessible",
           what, static_cast<unsigned long>(a), hit->perms.c_str(), static_cast<unsigned long>(hit->start),
           static_cast<unsigned long>(hit->end), hit->path.c_str());
    a = hit->end;
  }
}

// ---- End of a program -------------------------------------------------------

// Waits for one line on stdin, at most `timeout_s`; false on timeout or EOF.
inline bool WaitForStdinLine(int timeout_s) {
  double deadline = NowSeconds() + timeout_s;
  for (;;) {
    int left_ms = static_cast<int>((deadline - NowSeconds()) * 1000);
    if (left_ms <= 0) return false;
    pollfd pfd{STDIN_FILENO, POLLIN, 0};
    int r = poll(&pfd, 1, left_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char c;
    ssize_t got = read(STDIN_FILENO, &c, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    if (c == '\n') return true;
  }
}

// Under the driver (HIPR_E2E_HANDSHAKE set): prints "E2E_<marker> <pid>"
// and waits for the driver's go-ahead line. A no-op otherwise.
inline void Handshake(const char* marker) {
  if (getenv("HIPR_E2E_HANDSHAKE") == nullptr) return;
  printf("E2E_%s %d\n", marker, static_cast<int>(getpid()));
  fflush(stdout);
  CHECK(WaitForStdinLine(120), "no go-ahead from the driver on stdin after E2E_%s", marker);
}

// The last thing each program does: the maps checks, the driver's look at
// the live process, then "E2E_PASS <name>".
inline int Finish(const char* name) {
  CheckHipIsStub();
  CheckMapsClean();
  printf("maps: the stub is mapped once; no real libamdhip64 / libhsa-runtime64 / libhsakmt\n");
  Handshake("PAUSE");
  printf("E2E_PASS %s\n", name);
  fflush(stdout);
  return kExitPass;
}

}  // namespace e2e
