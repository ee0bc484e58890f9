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
//   ipc_tenants hoard LIMIT_MIB
//     tries to hold more than its tenant's memory= through IPC: allocates
//     8 MiB, exports it, opens its own handle and frees the original, again
//     and again. The opened memory keeps counting, so the loop ends with
//     hipErrorOutOfMemory within LIMIT_MIB, and hipMemGetInfo shows what is
//     held; prints "HOARD <rounds> <held bytes>" and pauses (E2E_PAUSE) for
//     the driver to read /metrics.
//   ipc_tenants foreign ADDRESS
//     ADDRESS (hex) is another process's device pointer: hipMemcpy with
//     hipMemcpyDefault from it and to it is hipErrorInvalidValue, not a
//     crash.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>
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
  printf("HANDLES %s %s %llx\n", Hex(mem).c_str(), Hex(event).c_str(),
         static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(dev)));
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

int Hoard(int limit_mib) {
  constexpr size_t kChunk = 8 << 20;
  size_t free0 = 0, total = 0;
  HIP_OK(hipMemGetInfo(&free0, &total));
  std::vector<void*> opened;
  hipError_t last = hipSuccess;
  for (int round = 0; round < 1000; ++round) {
    void* p = nullptr;
    last = hipMalloc(&p, kChunk);
    if (last != hipSuccess) break;
    hipIpcMemHandle_t h{};
    HIP_OK(hipIpcGetMemHandle(&h, p));
    void* q = nullptr;
    last = hipIpcOpenMemHandle(&q, h, 0);
    HIP_OK(hipFree(p));
    if (last != hipSuccess) break;
    opened.push_back(q);
  }
  CHECK(last == hipErrorOutOfMemory, "hoard: the loop ended with %s, not hipErrorOutOfMemory", e2e::ErrName(last));
  const size_t held = opened.size() * kChunk;
  CHECK(held <= static_cast<size_t>(limit_mib) << 20, "hoard: %zu bytes held through IPC, past the tenant's %d MiB",
        held, limit_mib);
  CHECK(!opened.empty(), "hoard: no handle opened at all");
  size_t free1 = 0;
  HIP_OK(hipMemGetInfo(&free1, &total));
  CHECK(free0 - free1 == held, "hoard: hipMemGetInfo shows %zu bytes used, %zu are held", free0 - free1, held);
  printf("HOARD %zu %zu\n", opened.size(), held);
  fflush(stdout);
  const int rc = e2e::Finish("ipc_tenants");  // Pauses while the handles are open.
  for (void* q : opened) HIP_OK(hipIpcCloseMemHandle(q));
  return rc;
}

int Foreign(const char* hex) {
  void* p = reinterpret_cast<void*>(static_cast<uintptr_t>(strtoull(hex, nullptr, 16)));
  std::vector<uint8_t> buf(4096, 1);
  HIP_EXPECT(hipMemcpy(buf.data(), p, buf.size(), hipMemcpyDefault), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy(p, buf.data(), buf.size(), hipMemcpyDefault), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpyAsync(buf.data(), p, buf.size(), hipMemcpyDefault, nullptr), hipErrorInvalidValue);
  for (uint8_t b : buf) CHECK(b == 1, "foreign: a refused copy wrote the host buffer");
  HIP_OK(hipDeviceSynchronize());  // The session goes on.
  printf("foreign: copies naming another process's device pointer refused with hipErrorInvalidValue\n");
  return e2e::Finish("ipc_tenants");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && strcmp(argv[1], "foreign") == 0) return Foreign(argv[2]);
  if (argc == 3 && strcmp(argv[1], "hoard") == 0) return Hoard(atoi(argv[2]));
  if (argc == 2 && strcmp(argv[1], "export") == 0) return Export();
  if (argc == 5 && strcmp(argv[1], "open") == 0)
    return Open(FromHex<hipIpcMemHandle_t>(argv[2]), FromHex<hipIpcEventHandle_t>(argv[3]),
                strcmp(argv[4], "allowed") == 0);
  fprintf(stderr, "usage: ipc_tenants export | open MEM EVENT allowed|refused\n");
  return 2;
}
