// Test program (client_stub_worker_roundtrip): the stub against a real
// hipr-worker (sim device), started by run_with_worker.sh. Device queries,
// large synchronous copies through chunk frames, hipMemcpyDefault and bounds
// checks, streams, events, async copies (batched and direct), pinned memory,
// memsets, device-to-device and 2-D copies, frees and handle validation, a
// forked child with its own session, and rough latency figures.
#include <hip/hip_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

static int failures = 0;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::printf("FAIL line %d: %s\n", __LINE__, #cond);                  \
      ++failures;                                                          \
    }                                                                      \
  } while (0)
#define OK(call) CHECK((call) == hipSuccess)

static double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void Fill(std::vector<unsigned char>& v, unsigned seed) {
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>(seed + i * 31 + (i >> 13));
}

int main() {
  int count = 0;
  OK(hipGetDeviceCount(&count));
  CHECK(count >= 1);
  hipDeviceProp_t prop;
  OK(hipGetDeviceProperties(&prop, 0));
  std::printf("device 0: %s (%s), %zu MiB, %d CUs\n", prop.name, prop.gcnArchName,
              prop.totalGlobalMem >> 20, prop.multiProcessorCount);
  int v = 0;
  OK(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 0));
  CHECK(v == prop.warpSize);
  int rt = 0, drv = 0;
  OK(hipRuntimeGetVersion(&rt));
  OK(hipDriverGetVersion(&drv));
  std::printf("runtime %d driver %d\n", rt, drv);
  size_t free_b = 0, total_b = 0;
  OK(hipMemGetInfo(&free_b, &total_b));
  std::printf("mem: free %zu MiB total %zu MiB\n", free_b >> 20, total_b >> 20);

  // 1. Big synchronous round trip (streams through chunk frames).
  const size_t big = (64u << 20) + 12345;
  std::vector<unsigned char> h(big), back(big);
  Fill(h, 7);
  void* d = nullptr;
  OK(hipMalloc(&d, big));
  double t0 = Now();
  OK(hipMemcpy(d, h.data(), big, hipMemcpyHostToDevice));
  double t1 = Now();
  OK(hipMemcpy(back.data(), d, big, hipMemcpyDeviceToHost));
  double t2 = Now();
  CHECK(back == h);
  std::printf("64 MiB (first touch): H2D %.0f MiB/s, D2H %.0f MiB/s\n", big / 1048576.0 / (t1 - t0),
              big / 1048576.0 / (t2 - t1));

  // 2. Default direction, interior pointers, bounds.
  std::vector<unsigned char> small(1000);
  OK(hipMemcpy(small.data(), static_cast<char*>(d) + 4096, 1000, hipMemcpyDefault));
  CHECK(std::memcmp(small.data(), h.data() + 4096, 1000) == 0);
  CHECK(hipMemcpy(small.data(), static_cast<char*>(d) + big - 10, 100, hipMemcpyDeviceToHost) ==
        hipErrorInvalidValue);
  CHECK(hipMemcpy(small.data(), h.data(), 100, hipMemcpyDeviceToHost) == hipErrorInvalidValue);
  CHECK(hipMemcpy(d, h.data(), 10, static_cast<hipMemcpyKind>(17)) == hipErrorInvalidMemcpyDirection);

  // 3. Streams, async copies (small batched, large direct), pinned, events.
  hipStream_t s;
  OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipEvent_t e0, e1;
  OK(hipEventCreate(&e0));
  OK(hipEventCreate(&e1));
  void* d2 = nullptr;
  OK(hipMalloc(&d2, 2 << 20));
  std::vector<unsigned char> a(60000), b(1 << 20);
  Fill(a, 1);
  Fill(b, 2);
  OK(hipEventRecord(e0, s));
  OK(hipMemcpyAsync(d2, a.data(), a.size(), hipMemcpyHostToDevice, s));
  std::memset(a.data(), 0, a.size());  // Consumed on return.
  OK(hipMemcpyAsync(static_cast<char*>(d2) + (1 << 20), b.data(), b.size(), hipMemcpyHostToDevice, s));
  std::vector<unsigned char> b_copy = b;
  std::memset(b.data(), 0, b.size());
  OK(hipEventRecord(e1, s));
  void* pinned = nullptr;
  OK(hipHostMalloc(&pinned, 2 << 20, 0));
  OK(hipMemcpyAsync(pinned, d2, 2 << 20, hipMemcpyDeviceToHost, s));
  OK(hipStreamSynchronize(s));
  OK(hipEventSynchronize(e1));
  float ms = -1;
  OK(hipEventElapsedTime(&ms, e0, e1));
  std::printf("elapsed %.3f ms\n", ms);
  Fill(a, 1);
  CHECK(std::memcmp(pinned, a.data(), a.size()) == 0);
  CHECK(std::memcmp(static_cast<char*>(pinned) + (1 << 20), b_copy.data(), b_copy.size()) == 0);
  hipPointerAttribute_t attr;
  OK(hipPointerGetAttributes(&attr, pinned));
  CHECK(attr.memoryType == hipMemoryTypeHost);
  OK(hipPointerGetAttributes(&attr, static_cast<char*>(d2) + 5));
  CHECK(attr.memoryType == hipMemoryTypeDevice && attr.device == 0);
  CHECK(hipPointerGetAttributes(&attr, a.data()) == hipErrorInvalidValue);
  size_t sz = 0;
  OK(hipMemPtrGetInfo(d2, &sz));
  CHECK(sz == (2u << 20));

  // 4. Memsets and device-to-device.
  OK(hipMemsetD32(d2, 0x11223344, 16));
  OK(hipMemsetD16Async(static_cast<char*>(d2) + 64, 0xBEEF, 8, s));
  OK(hipStreamSynchronize(s));  // s is non-blocking: no implicit order with the null stream.
  OK(hipMemset(static_cast<char*>(d2) + 80, 0x7f, 16));
  OK(hipMemcpyDtoD(static_cast<char*>(d2) + 4096, d2, 96));
  unsigned char m[96];
  OK(hipDeviceSynchronize());
  OK(hipMemcpy(m, static_cast<char*>(d2) + 4096, 96, hipMemcpyDeviceToHost));
  CHECK(m[0] == 0x44 && m[3] == 0x11 && m[60] == 0x44);
  CHECK(m[64] == 0xEF && m[65] == 0xBE && m[78] == 0xEF);
  CHECK(m[80] == 0x7f && m[95] == 0x7f);

  // 5. 2-D copies with pitch.
  const size_t w = 100, rows = 50, hp = 128, dp = 256;
  std::vector<unsigned char> h2(hp * rows), r2(hp * rows, 0);
  Fill(h2, 9);
  void* d3 = nullptr;
  OK(hipMalloc(&d3, dp * rows));
  OK(hipMemcpy2D(d3, dp, h2.data(), hp, w, rows, hipMemcpyHostToDevice));
  OK(hipMemcpy2DAsync(r2.data(), hp, d3, dp, w, rows, hipMemcpyDeviceToHost, s));
  bool same = true;
  for (size_t r = 0; r < rows; ++r) same &= std::memcmp(&r2[r * hp], &h2[r * hp], w) == 0;
  CHECK(same);
  CHECK(hipMemcpy2D(d3, dp, h2.data(), hp, 300, rows, hipMemcpyHostToDevice) == hipErrorInvalidPitchValue);

  // 6. Frees and handles.
  OK(hipFree(d3));
  CHECK(hipFree(d3) == hipErrorInvalidValue);
  CHECK(hipFree(a.data()) == hipErrorInvalidValue);
  OK(hipHostFree(pinned));
  OK(hipEventDestroy(e0));
  CHECK(hipEventDestroy(e0) == hipErrorContextIsDestroyed);
  OK(hipEventDestroy(e1));
  OK(hipStreamDestroy(s));
  CHECK(hipStreamSynchronize(s) == hipErrorContextIsDestroyed);

  // 7. A forked child opens its own session.
  pid_t pid = fork();
  if (pid == 0) {
    void* cd = nullptr;
    int bad = 0;
    if (hipMalloc(&cd, 1 << 20) != hipSuccess) bad |= 1;
    std::vector<unsigned char> x(1 << 20), y(1 << 20);
    Fill(x, 3);
    if (hipMemcpy(cd, x.data(), x.size(), hipMemcpyHostToDevice) != hipSuccess) bad |= 2;
    if (hipMemcpy(y.data(), cd, y.size(), hipMemcpyDeviceToHost) != hipSuccess) bad |= 4;
    if (x != y) bad |= 8;
    // The parent's allocation is not the child's.
    if (hipMemcpy(y.data(), d2, 16, hipMemcpyDeviceToHost) != hipErrorInvalidValue) bad |= 16;
    _exit(bad);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::printf("child exit %d\n", WEXITSTATUS(status));
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  // The parent's session is unharmed by the child.
  OK(hipMemcpy(back.data(), d, 4096, hipMemcpyDeviceToHost));
  CHECK(std::memcmp(back.data(), h.data(), 4096) == 0);

  // 8. Null-call latency.
  const int n = 2000;
  double t3 = Now();
  for (int i = 0; i < n; ++i) (void)hipStreamQuery(nullptr);
  double t4 = Now();
  std::printf("hipStreamQuery round trip: %.1f us\n", (t4 - t3) / n * 1e6);
  t3 = Now();
  for (int i = 0; i < 100000; ++i) (void)hipMemsetAsync(d, 0, 64, nullptr);
  OK(hipDeviceSynchronize());
  t4 = Now();
  std::printf("hipMemsetAsync (fire-and-forget) incl. final sync: %.2f us/call\n", (t4 - t3) / 100000 * 1e6);

  OK(hipFree(d));
  OK(hipFree(d2));
  std::printf("%s (%d failures)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
