// per_thread: built with -fgpu-default-stream=per-thread, so the default
// stream of each host thread is its own stream (hipLaunchKernel_spt,
// hipMemcpy_spt, hipStreamSynchronize_spt...). The main thread's kernel
// spins until thread B sets a flag with a plain blocking hipMemcpy: on
// B's own per-thread stream that copy does not wait for the main thread's
// kernel. Were both the one null stream, B's copy would queue behind the
// spinning kernel and neither would ever finish (a watchdog fails the
// program instead).
#include <atomic>
#include <chrono>
#include <thread>

#include "common.h"

__global__ void spin_until_set(volatile int* flag, int* done) {
  while (*flag == 0) {
  }
  *done = 1;
}

__global__ void add_one(int* p) { *p += 1; }

int main() {
  constexpr int kWatchdogSeconds = 30;
  int* flag = nullptr;
  int* done = nullptr;
  HIP_OK(hipMalloc(&flag, sizeof(int)));
  HIP_OK(hipMalloc(&done, sizeof(int)));
  HIP_OK(hipMemset(flag, 0, sizeof(int)));
  HIP_OK(hipMemset(done, 0, sizeof(int)));
  HIP_OK(hipStreamSynchronize(0));

  std::atomic<bool> finished{false};
  std::thread watchdog([&] {
    for (int i = 0; i < kWatchdogSeconds * 10 && !finished; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(finished, "the main thread's per-thread stream never finished: thread B's copy waited behind it");
  });

  spin_until_set<<<1, 1>>>(flag, done);  // The main thread's per-thread stream.
  HIP_OK(hipGetLastError());
  std::thread b([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const int one = 1;
    HIP_OK(hipMemcpy(flag, &one, sizeof one, hipMemcpyHostToDevice));  // B's per-thread stream.
    // B's own default stream works as a stream of its own too.
    int* counter = nullptr;
    HIP_OK(hipMalloc(&counter, sizeof(int)));
    HIP_OK(hipMemset(counter, 0, sizeof(int)));
    for (int i = 0; i < 10; ++i) add_one<<<1, 1>>>(counter);
    int value = 0;
    HIP_OK(hipMemcpy(&value, counter, sizeof value, hipMemcpyDeviceToHost));
    CHECK(value == 10, "10 launches on B's per-thread stream gave %d", value);
    HIP_OK(hipFree(counter));
  });
  HIP_OK(hipStreamSynchronize(0));  // hipStreamSynchronize_spt: the main thread's stream.
  finished = true;
  b.join();
  watchdog.join();
  int d = 0;
  HIP_OK(hipMemcpy(&d, done, sizeof d, hipMemcpyDeviceToHost));
  CHECK(d == 1, "the spinning kernel did not finish");
  HIP_OK(hipStreamQuery(hipStreamPerThread));
  unsigned flags = 99;
  HIP_OK(hipStreamGetFlags(hipStreamPerThread, &flags));
  CHECK(flags == hipStreamDefault, "per-thread stream flags %u", flags);
  printf("per-thread default streams: B's blocking copy passed the main thread's spinning kernel\n");
  HIP_OK(hipFree(flag));
  HIP_OK(hipFree(done));
  return e2e::Finish("per_thread");
}
