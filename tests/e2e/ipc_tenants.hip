// ipc_tenants: IPC handles across tenants and workers (run_e2e.py's
// ipc_tenants scenario runs it as several tenants against two workers).
//
//   ipc_tenants export
//     allocates device memory with a pattern and an interprocess event
//     (recorded), prints "HANDLES <memory hex> <event hex>", and waits for a
//     line on stdin; then checks that the allowed openers' writes (0x5A over
//     the first kWritten bytes) landed and nothing else changed.
//   ipc_tenants open <memory hex> <event hex> allowed|refused
//     allowed: opens both, reads the pattern, writes 0x5A over the first
//     kWritten bytes, waits for the event, closes both.
//     refused: both opens fail with hipErrorInvalidValue and write nothing.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common.h"

namespace {

constexpr size_t kBytes = 256 << 10;
constexpr size_t kWritten = 4096;
constexpr uint64_t kSeed = 9090;

template <class Handle>
std::string Hex(const Handle& h) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < sizeof h; ++i) {
    const auto b = static_cast<uint8_t>(h.reserved[i]);
    s += kDigits[b >> 4];
    s += kDigits[b & 15];
  }
  return s;
}

template <class Handle>
Handle FromHex(const char* s) {
  Handle h{};
  CHECK(strlen(s) == 2 * sizeof h, "a handle is %zu hex digits", 2 * sizeof h);
  for (size_t i = 0; i < sizeof h; ++i) {
    unsigned v = 0;
    CHECK(sscanf(s + 2 * i, "%2x", &v) == 1, "bad hex");
    h.reserved[i] = static_cast<char>(v);
  }
  return h;
}

int Export() {
  uint8_t* dev = nullptr;
  HIP_OK(hipMalloc(&dev, kBytes));
  std::vector<uint8_t> want(kBytes);
  e2e::FillPattern(want.data(), kBytes, kSeed);
  HIP_OK(hipMemcpy(dev, want.data(), kBytes, hipMemcpyHostToDevice));
  hipIpcMemHandle_t mem{};
  HIP_OK(hipIpcGetMemHandle(&mem, dev));
  hipEvent_t ev = nullptr;
  HIP_OK(hipEventCreateWithFlags(&ev, hipEventDisableTiming | hipEventInterprocess));
  HIP_OK(hipEventRecord(ev, nullptr));
  HIP_OK(hipEventSynchronize(ev));
  hipIpcEventHandle_t event{};
  HIP_OK(hipIpcGetEventHandle(&event, ev));
  printf("HANDLES %s %s\n", Hex(mem).c_str(), Hex(event).c_str());
  fflush(stdout);
  CHECK(e2e::WaitForStdinLine(240), "exporter: no line on stdin after the openers");
  std::vector<uint8_t> got(kBytes);
  HIP_OK(hipMemcpy(got.data(), dev, kBytes, hipMemcpyDeviceToHost));
  memset(want.data(), 0x5A, kWritten);
  for (size_t i = 0; i < kBytes; ++i)
    CHECK(got[i] == want[i], "exporter: byte %zu is 0x%02x, expected 0x%02x", i, got[i], want[i]);
  printf("exporter: the allowed openers' writes landed, nothing else changed\n");
  HIP_OK(hipEventDestroy(ev));
  HIP_OK(hipFree(dev));
  return e2e::Finish("ipc_tenants");
}

int Open(const hipIpcMemHandle_t& mem, const hipIpcEventHandle_t& event, bool allowed) {
  void* p = nullptr;
  hipEvent_t ev = nullptr;
  if (!allowed) {
    HIP_EXPECT(hipIpcOpenMemHandle(&p, mem, 0), hipErrorInvalidValue);
    CHECK(p == nullptr, "opener: a refused open wrote its output");
    HIP_EXPECT(hipIpcOpenEventHandle(&ev, event), hipErrorInvalidValue);
    CHECK(ev == nullptr, "opener: a refused event open wrote its output");
    // This tenant's own memory still works.
    void* own = nullptr;
    HIP_OK(hipMalloc(&own, 4096));
    HIP_OK(hipMemset(own, 1, 4096));
    HIP_OK(hipFree(own));
    printf("opener: both handles refused with hipErrorInvalidValue\n");
    return e2e::Finish("ipc_tenants");
  }
  HIP_OK(hipIpcOpenMemHandle(&p, mem, 0));
  std::vector<uint8_t> got(kBytes), want(kBytes);
  HIP_OK(hipMemcpy(got.data(), p, kBytes, hipMemcpyDeviceToHost));
  e2e::FillPattern(want.data(), kBytes, kSeed);
  for (size_t i = 0; i < kBytes; ++i)
    CHECK(got[i] == want[i] || (i < kWritten && got[i] == 0x5A), "opener: byte %zu of the exporter's memory is 0x%02x",
          i, got[i]);
  HIP_OK(hipMemset(p, 0x5A, kWritten));
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipIpcCloseMemHandle(p));
  HIP_OK(hipIpcOpenEventHandle(&ev, event));
  HIP_OK(hipEventSynchronize(ev));
  HIP_OK(hipEventDestroy(ev));
  printf("opener: opened both handles, read the exporter's bytes and wrote some\n");
  return e2e::Finish("ipc_tenants");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "export") == 0) return Export();
  if (argc == 5 && strcmp(argv[1], "open") == 0)
    return Open(FromHex<hipIpcMemHandle_t>(argv[2]), FromHex<hipIpcEventHandle_t>(argv[3]),
                strcmp(argv[4], "allowed") == 0);
  fprintf(stderr, "usage: ipc_tenants export | open MEM EVENT allowed|refused\n");
  return 2;
}
