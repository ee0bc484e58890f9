// callbacks: hipStreamAddCallback runs on the client, in stream order. The
// stream does not go past a callback until the client has run it (events
// around a sleeping callback measure that on the device's clock), the
// status argument is the stream's, callbacks of a stream run in order, and a
// blocking copy queued behind a held stream completes (the worker's replay
// does not wait for the stream while the client's "done" is on its way),
// and hipMemset has filled its bytes when it returns.
#include <hip/hip_runtime.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "common.h"

__global__ void set_value(int* p, int v) { *p = v; }
__global__ void add_value(int* p, int v) { *p += v; }

namespace {

constexpr int kSleepMs = 300;

std::mutex g_mu;
std::vector<int> g_order;
std::atomic<int> g_calls{0};
std::thread::id g_main_thread;

struct Tag {
  int value;
  hipStream_t stream;
  hipError_t status = hipErrorUnknown;
  hipStream_t seen_stream = nullptr;
  bool ran_on_main = true;
};

void Record(hipStream_t stream, hipError_t status, void* user) {
  auto* tag = static_cast<Tag*>(user);
  tag->status = status;
  tag->seen_stream = stream;
  tag->ran_on_main = std::this_thread::get_id() == g_main_thread;
  std::lock_guard<std::mutex> lock(g_mu);
  g_order.push_back(tag->value);
  ++g_calls;
}

void Sleepy(hipStream_t, hipError_t, void* user) {
  std::this_thread::sleep_for(std::chrono::milliseconds(kSleepMs));
  static_cast<std::atomic<bool>*>(user)->store(true);
}

void CheckTheStreamWaitsForTheCallback() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipEvent_t before, after;
  HIP_OK(hipEventCreate(&before));
  HIP_OK(hipEventCreate(&after));
  std::atomic<bool> ran{false};
  HIP_OK(hipEventRecord(before, s));
  HIP_OK(hipStreamAddCallback(s, Sleepy, &ran, 0));
  HIP_OK(hipEventRecord(after, s));
  HIP_OK(hipEventSynchronize(after));
  CHECK(ran.load(), "the event after the callback completed before the callback ran");
  float ms = 0;
  HIP_OK(hipEventElapsedTime(&ms, before, after));
  CHECK(ms >= kSleepMs * 0.9f, "the stream went past a %d ms callback in %.1f ms", kSleepMs, ms);
  HIP_OK(hipEventDestroy(before));
  HIP_OK(hipEventDestroy(after));
  HIP_OK(hipStreamDestroy(s));
  printf("the stream waited %.1f ms for a %d ms callback\n", ms, kSleepMs);
}

void CheckOrderAndStatus() {
  hipStream_t a, b;
  HIP_OK(hipStreamCreate(&a));
  HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, 2 * sizeof(int)));
  std::vector<Tag> tags;
  tags.reserve(20);
  for (int i = 0; i < 10; ++i) {
    hipLaunchKernelGGL(add_value, dim3(1), dim3(1), 0, a, d, 1);
    tags.push_back(Tag{100 + i, a});
    HIP_OK(hipStreamAddCallback(a, Record, &tags.back(), 0));
    hipLaunchKernelGGL(add_value, dim3(1), dim3(1), 0, b, d + 1, 1);
    tags.push_back(Tag{200 + i, b});
    HIP_OK(hipStreamAddCallback(b, Record, &tags.back(), 0));
  }
  HIP_OK(hipStreamSynchronize(a));
  HIP_OK(hipStreamSynchronize(b));
  CHECK(g_calls.load() == 20, "%d of 20 callbacks ran by the synchronizations", g_calls.load());
  std::vector<int> on_a, on_b;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    for (int v : g_order) (v < 200 ? on_a : on_b).push_back(v);
  }
  for (int i = 0; i < 10; ++i) {
    CHECK(on_a[i] == 100 + i && on_b[i] == 200 + i, "callback order: position %d holds %d and %d", i, on_a[i],
          on_b[i]);
  }
  for (const Tag& t : tags) {
    CHECK(t.status == hipSuccess, "callback %d got status %s", t.value, hipGetErrorName(t.status));
    CHECK(t.seen_stream == t.stream, "callback %d got another stream", t.value);
    CHECK(!t.ran_on_main, "callback %d ran on the calling thread", t.value);
  }
  HIP_EXPECT(hipStreamAddCallback(a, nullptr, nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamAddCallback(a, Record, nullptr, 1), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(a));
  HIP_OK(hipStreamDestroy(b));
  printf("20 callbacks on two streams ran in stream order with hipSuccess\n");
}

void CheckABlockingCopyBehindAHeldStream() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));  // Blocking: the null stream waits for it.
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, sizeof(int)));
  std::atomic<bool> ran{false};
  hipLaunchKernelGGL(set_value, dim3(1), dim3(1), 0, s, d, 3);
  HIP_OK(hipStreamAddCallback(s, Sleepy, &ran, 0));
  hipLaunchKernelGGL(add_value, dim3(1), dim3(1), 0, s, d, 4);
  int v = 0;
  HIP_OK(hipMemcpy(&v, d, sizeof v, hipMemcpyDeviceToHost));  // Null stream: after all of s.
  CHECK(ran.load(), "the blocking copy finished before the callback ran");
  CHECK(v == 7, "copied %d, expected 3 + 4", v);
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  printf("a blocking copy behind a held stream returned the value written after the callback\n");
}

}  // namespace

// Copies queued behind a stream held at a host callback must not hold the
// worker's replay of other calls: the callback waits (20 s at most) for a
// call the main thread makes after queuing them, which needs the replay.
// A worker whose replay waited for the stream would answer that call only
// once the callback gave up.
void CheckCopiesBehindAHeldStreamLeaveTheWorkerFree() {
  constexpr size_t kBytes = 1 << 20;
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  uint8_t* d = nullptr;
  HIP_OK(hipMalloc(&d, kBytes));
  HIP_OK(hipMemset(d, 0x11, kBytes));
  uint8_t* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, kBytes, 0));
  std::vector<uint8_t> pageable(kBytes, 0x22);
  std::atomic<int> answered{0};
  HIP_OK(hipStreamAddCallback(
      s,
      [](hipStream_t, hipError_t, void* flag) {
        auto* f = static_cast<std::atomic<int>*>(flag);
        for (int i = 0; i < 20000 && f->load() == 0; ++i) usleep(1000);
      },
      &answered, 0));
  HIP_OK(hipMemcpyAsync(pinned, d, kBytes, hipMemcpyDeviceToHost, s));          // Reads 0x11 ...
  HIP_OK(hipMemcpyAsync(d, pageable.data(), kBytes, hipMemcpyHostToDevice, s));  // ... then writes 0x22.
  const double start = e2e::NowSeconds();
  size_t free_bytes = 0, total_bytes = 0;
  HIP_OK(hipMemGetInfo(&free_bytes, &total_bytes));
  const double took = e2e::NowSeconds() - start;
  answered.store(1);
  HIP_OK(hipStreamSynchronize(s));
  CHECK(took < 5.0, "a call behind copies on a held stream took %.1f s: the worker waited for that stream", took);
  for (size_t i = 0; i < kBytes; i += 4093) CHECK(pinned[i] == 0x11, "D2H copy byte %zu is 0x%02x", i, pinned[i]);
  std::vector<uint8_t> back(kBytes);
  HIP_OK(hipMemcpy(back.data(), d, kBytes, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < kBytes; i += 4093) CHECK(back[i] == 0x22, "H2D copy byte %zu is 0x%02x", i, back[i]);
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  printf("copies behind a held stream left the worker free: another call took %.3f s\n", took);
}

// hipMemset is done when it returns (clr waits for the fill): here the null
// stream is held behind a blocking stream's sleeping callback, so the fill
// waits for the callback, and so must the call. A copy on a non-blocking
// stream (which never waits for the null stream) then reads the filled bytes.
void CheckABlockingMemsetIsDoneWhenItReturns() {
  constexpr size_t kBytes = 256 << 10;
  hipStream_t held, free_stream;
  HIP_OK(hipStreamCreate(&held));
  HIP_OK(hipStreamCreateWithFlags(&free_stream, hipStreamNonBlocking));
  uint8_t* d = nullptr;
  HIP_OK(hipMalloc(&d, kBytes));
  HIP_OK(hipMemset(d, 0, kBytes));
  uint8_t* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, kBytes, 0));
  std::atomic<bool> ran{false};
  HIP_OK(hipStreamAddCallback(held, Sleepy, &ran, 0));
  const double start = e2e::NowSeconds();
  HIP_OK(hipMemset(d, 0x5a, kBytes));  // The null stream waits for `held`.
  const double took = e2e::NowSeconds() - start;
  CHECK(ran.load(), "hipMemset returned after %.3f s, before the callback it waits behind ran", took);
  HIP_OK(hipMemcpyAsync(pinned, d, kBytes, hipMemcpyDeviceToHost, free_stream));
  HIP_OK(hipStreamSynchronize(free_stream));
  for (size_t i = 0; i < kBytes; i += 4093)
    CHECK(pinned[i] == 0x5a, "byte %zu after hipMemset is 0x%02x", i, pinned[i]);
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(free_stream));
  HIP_OK(hipStreamDestroy(held));
  printf("hipMemset behind a held stream returned after %.3f s, with the fill done\n", took);
}

int main() {
  g_main_thread = std::this_thread::get_id();
  CheckCopiesBehindAHeldStreamLeaveTheWorkerFree();
  CheckTheStreamWaitsForTheCallback();
  CheckOrderAndStatus();
  CheckABlockingCopyBehindAHeldStream();
  CheckABlockingMemsetIsDoneWhenItReturns();
  return e2e::Finish("callbacks");
}
