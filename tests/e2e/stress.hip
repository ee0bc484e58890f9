// stress: 16 threads x 1,000 mixed calls at once through one session -
// launches, async copies both ways, memsets, event records and queries,
// stream synchronizations - each thread on its own stream and buffer,
// every result checked against what the thread computed itself.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "common.h"

__global__ void bump(int* counter, int by) { *counter += by; }

namespace {

constexpr int kThreads = 16;
constexpr int kCalls = 1000;

// Runs one thread's calls; returns false (after printing why) on a wrong
// result. HIP errors fail the program at once.
bool RunThread(int t) {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipEvent_t e;
  HIP_OK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, 4 * sizeof(int)));
  HIP_OK(hipMemsetAsync(d, 0, 4 * sizeof(int), s));
  int counter = 0;
  int last_copied = -1;
  int last_memset = 0;
  for (int i = 0; i < kCalls; ++i) {
    switch (i % 5) {
      case 0:
        hipLaunchKernelGGL(bump, dim3(1), dim3(1), 0, s, d, t + 1);
        HIP_OK(hipGetLastError());
        counter += t + 1;
        break;
      case 1: {
        int value = t * 100000 + i;  // Pageable: consumed when the call returns.
        HIP_OK(hipMemcpyAsync(d + 1, &value, sizeof value, hipMemcpyHostToDevice, s));
        value = -1;
        last_copied = t * 100000 + i;
        break;
      }
      case 2:
        last_memset = (t * 7 + i) & 0x7f;
        HIP_OK(hipMemsetAsync(d + 2, last_memset, sizeof(int), s));
        break;
      case 3: {
        HIP_OK(hipEventRecord(e, s));
        hipError_t q = hipEventQuery(e);
        CHECK(q == hipSuccess || q == hipErrorNotReady, "hipEventQuery returned %s", hipGetErrorName(q));
        break;
      }
      case 4:
        if (i % 50 == 4) {
          int seen[4] = {};
          HIP_OK(hipMemcpyAsync(seen, d, sizeof seen, hipMemcpyDeviceToHost, s));  // Pageable: done at return.
          HIP_OK(hipStreamSynchronize(s));
          const int byte = last_memset;
          const int memset_word = byte | byte << 8 | byte << 16 | byte << 24;
          if (seen[0] != counter || seen[1] != last_copied || seen[2] != memset_word) {
            fprintf(stderr, "thread %d call %d: device has {%d, %d, %#x}, expected {%d, %d, %#x}\n", t, i, seen[0],
                    seen[1], seen[2], counter, last_copied, memset_word);
            return false;
          }
        }
        break;
    }
  }
  HIP_OK(hipStreamSynchronize(s));
  int final_counter = 0;
  HIP_OK(hipMemcpy(&final_counter, d, sizeof final_counter, hipMemcpyDeviceToHost));
  HIP_OK(hipFree(d));
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
  if (final_counter != counter) {
    fprintf(stderr, "thread %d: final counter %d, expected %d\n", t, final_counter, counter);
    return false;
  }
  return true;
}

}  // namespace

int main() {
  HIP_OK(hipSetDevice(0));
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      if (RunThread(t)) ++good;
    });
  for (auto& th : threads) th.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(good.load() == kThreads, "%d of %d threads saw correct results", good.load(), kThreads);
  printf("%d threads x %d mixed calls: all results correct in %.2f s\n", kThreads, kCalls, s);
  return e2e::Finish("stress");
}
