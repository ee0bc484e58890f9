// threads: one client thread's wait must not stop another thread's work
// from reaching the device. Thread A synchronizes stream S1, whose kernel
// spins until a device flag is set; thread B, later, sets that flag with a
// copy on a non-blocking stream S2: first hipMemcpyAsync, then the blocking
// hipMemcpyWithStream (B waits for its own reply while A still waits for
// its). If the worker replayed A's wait by blocking, or the stub let one
// synchronous call at a time through, B's copy would never run and A would
// wait forever (a watchdog fails the program after kWatchdogSeconds).
#include <atomic>
#include <chrono>
#include <thread>

#include "common.h"

__global__ void spin_until_set(volatile int* flag, int* done) {
  while (*flag == 0) {
  }
  *done = 1;
}

namespace {

constexpr int kWatchdogSeconds = 30;
constexpr int kSetterDelayMs = 300;

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void Round(bool blocking_copy) {
  const char* how = blocking_copy ? "hipMemcpyWithStream" : "hipMemcpyAsync";
  hipStream_t s1;
  hipStream_t s2;
  HIP_OK(hipStreamCreate(&s1));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  int* flag = nullptr;
  int* done = nullptr;
  HIP_OK(hipMalloc(&flag, sizeof(int)));
  HIP_OK(hipMalloc(&done, sizeof(int)));
  HIP_OK(hipMemset(flag, 0, sizeof(int)));
  HIP_OK(hipMemset(done, 0, sizeof(int)));
  HIP_OK(hipDeviceSynchronize());

  std::atomic<bool> a_returned{false};
  std::thread watchdog([&] {
    for (int i = 0; i < kWatchdogSeconds * 10 && !a_returned; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(a_returned, "thread A's hipStreamSynchronize(S1) did not return within %d s: thread B's %s "
                      "on S2 never reached the device", kWatchdogSeconds, how);
  });

  hipLaunchKernelGGL(spin_until_set, dim3(1), dim3(1), 0, s1, flag, done);
  HIP_OK(hipGetLastError());

  double b_call_seconds = -1;
  std::thread b([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(kSetterDelayMs));
    static const int one = 1;
    auto t0 = std::chrono::steady_clock::now();
    if (blocking_copy) {
      HIP_OK(hipMemcpyWithStream(flag, &one, sizeof one, hipMemcpyHostToDevice, s2));
    } else {
      HIP_OK(hipMemcpyAsync(flag, &one, sizeof one, hipMemcpyHostToDevice, s2));
    }
    b_call_seconds = Seconds(t0);
  });

  auto t0 = std::chrono::steady_clock::now();
  HIP_OK(hipStreamSynchronize(s1));  // Thread A.
  const double a_seconds = Seconds(t0);
  a_returned = true;
  b.join();
  watchdog.join();

  CHECK(a_seconds >= kSetterDelayMs / 1000.0 * 0.9, "A returned after %.3f s, before B set the flag", a_seconds);
  CHECK(b_call_seconds >= 0 && b_call_seconds < 2.0, "B's %s took %.3f s", how, b_call_seconds);
  int finished = 0;
  HIP_OK(hipMemcpy(&finished, done, sizeof finished, hipMemcpyDeviceToHost));
  CHECK(finished == 1, "the kernel did not finish: done=%d", finished);
  printf("A waited %.3f s for the flag B set with %s on a non-blocking stream (B's call took %.6f s)\n",
         a_seconds, how, b_call_seconds);
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipStreamDestroy(s2));
  HIP_OK(hipFree(flag));
  HIP_OK(hipFree(done));
}

}  // namespace

int main() {
  Round(false);
  Round(true);
  return e2e::Finish("threads");
}
