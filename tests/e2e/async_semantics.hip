// async_semantics: what native HIP promises about asynchronous work, through
// the stub.
//
//  * A kernel that fails on the device (the worker runs with
//    --sim-fail-kernel e2e_fails, as a faulting kernel on a GPU) is reported
//    by the next synchronizing call, once, and not before: its launch and the
//    fire-and-forget calls after it return hipSuccess.
//  * hipMemcpyAsync device-to-host into pinned memory: the bytes are there at
//    the stream's next synchronization point (hipStreamSynchronize,
//    hipEventSynchronize on a later event, hipDeviceSynchronize), and several
//    such copies in flight land in order.
//  * hipMemcpyAsync device-to-host into pageable memory has completed when
//    it returns.
//  * Stream order across mixed launches, copies, memsets and a callback.
//  * A blocking hipMemcpy from pageable memory to device memory returns once
//    its source is consumed, as ROCm's does (clr, direct dispatch: the top
//    level does not wait for an unpinned copy): the source can be reused at
//    once; later work sees the bytes in stream order (the null stream, a
//    blocking stream behind it, another thread's copy); an earlier kernel's
//    failure is reported by the next synchronizing call, not by the copy.
//  * hipFree waits for the device in HIP: memory freed while a kernel still
//    reads it, allocated again and overwritten, does not change what that
//    kernel reads. (hipr keeps freed blocks for the next hipMalloc of their
//    size, with no round trip, once a synchronisation of every stream has
//    followed the free: the churn check's reuse is counted by the scenario
//    from the client's debug log.)
#include <hip/hip_runtime.h>

#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common.h"

__global__ void e2e_fails(int* p) { p[0] = 1; }

__global__ void fill(int* p, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = base + i;
}

__global__ void add_one(int* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

// A slow reader: spins, then copies out the first and last ints of x.
__global__ void slow_read(const int* x, int n, int spins, int* out) {
  volatile int s = 0;
  for (int i = 0; i < spins; ++i) s = s + 1;
  out[0] = x[0];
  out[1] = x[n - 1];
}

namespace {

constexpr int kN = 1 << 16;
constexpr int kBlock = 256;
constexpr int kGrid = kN / kBlock;

void CheckDeferredError() {
  int* d;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  (void)hipGetLastError();
  hipLaunchKernelGGL(e2e_fails, dim3(1), dim3(1), 0, s, d);
  HIP_OK(hipGetLastError());  // The launch itself was fine.
  usleep(200 * 1000);          // The kernel has failed by now; nothing says so yet.
  HIP_OK(hipMemsetAsync(d, 0, kN * sizeof(int), s));
  hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, s, d, 0, kN);
  HIP_OK(hipGetLastError());
  HIP_OK(hipEventRecord(e, s));
  HIP_EXPECT(hipStreamSynchronize(s), hipErrorLaunchFailure);
  HIP_OK(hipStreamSynchronize(s));  // Reported once.
  HIP_OK(hipEventSynchronize(e));
  // The work after the failed kernel still ran (the sim fails only that one).
  std::vector<int> got(kN);
  HIP_OK(hipMemcpy(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == i, "after the failed kernel: d[%d] = %d", i, got[i]);
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  printf("a failing kernel was reported by the next synchronize, once, and not before\n");
}

void CheckPinnedDeviceToHost() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipEvent_t after;
  HIP_OK(hipEventCreate(&after));
  int* d;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  constexpr int kCopies = 4;
  int* pinned[kCopies];
  for (int c = 0; c < kCopies; ++c) HIP_OK(hipHostMalloc(&pinned[c], kN * sizeof(int), 0));
  for (int sync = 0; sync < 3; ++sync) {
    for (int c = 0; c < kCopies; ++c) memset(pinned[c], 0xff, kN * sizeof(int));
    // Each copy sees the device buffer as the kernels before it left it.
    for (int c = 0; c < kCopies; ++c) {
      hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, s, d, 1000 * (sync * kCopies + c), kN);
      HIP_OK(hipMemcpyAsync(pinned[c], d, kN * sizeof(int), hipMemcpyDeviceToHost, s));
    }
    const char* how = "hipStreamSynchronize";
    if (sync == 0) {
      HIP_OK(hipStreamSynchronize(s));
    } else if (sync == 1) {
      how = "hipEventSynchronize";
      HIP_OK(hipEventRecord(after, s));
      HIP_OK(hipEventSynchronize(after));
    } else {
      how = "hipDeviceSynchronize";
      HIP_OK(hipDeviceSynchronize());
    }
    for (int c = 0; c < kCopies; ++c)
      for (int i = 0; i < kN; ++i)
        CHECK(pinned[c][i] == 1000 * (sync * kCopies + c) + i, "after %s: copy %d [%d] = %d", how, c, i,
              pinned[c][i]);
  }
  for (int c = 0; c < kCopies; ++c) HIP_OK(hipHostFree(pinned[c]));
  HIP_OK(hipFree(d));
  HIP_OK(hipEventDestroy(after));
  HIP_OK(hipStreamDestroy(s));
  printf("async copies into pinned memory were in place at hipStreamSynchronize, hipEventSynchronize and "
         "hipDeviceSynchronize\n");
}

void CheckPageableDeviceToHost() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  int* d;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  std::vector<int> host(kN, -1);
  hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, s, d, 7, kN);
  hipLaunchKernelGGL(add_one, dim3(kGrid), dim3(kBlock), 0, s, d, kN);
  HIP_OK(hipMemcpyAsync(host.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, s));
  // No synchronization: the copy from pageable memory has completed.
  for (int i = 0; i < kN; ++i) CHECK(host[i] == 8 + i, "pageable async copy: [%d] = %d on return", i, host[i]);
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  printf("an async copy into pageable memory had completed when it returned\n");
}

void Bump(hipStream_t, hipError_t status, void* user) {
  if (status == hipSuccess) static_cast<std::atomic<int>*>(user)->fetch_add(1);
}

// fill, memset half, add_one, D2D copy, callback, H2D over a quarter,
// add_one: each step's result depends on the order.
void CheckMixedStreamOrder() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  int *a, *b;
  HIP_OK(hipMalloc(&a, kN * sizeof(int)));
  HIP_OK(hipMalloc(&b, kN * sizeof(int)));
  std::vector<int> quarter(kN / 4, 100);
  std::atomic<int> callbacks{0};
  for (int round = 0; round < 20; ++round) {
    hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, s, a, round, kN);
    HIP_OK(hipMemsetAsync(a, 0, kN / 2 * sizeof(int), s));
    hipLaunchKernelGGL(add_one, dim3(kGrid), dim3(kBlock), 0, s, a, kN);
    HIP_OK(hipMemcpyAsync(b, a, kN * sizeof(int), hipMemcpyDeviceToDevice, s));
    HIP_OK(hipStreamAddCallback(s, Bump, &callbacks, 0));
    HIP_OK(hipMemcpyAsync(b, quarter.data(), kN / 4 * sizeof(int), hipMemcpyHostToDevice, s));
    hipLaunchKernelGGL(add_one, dim3(kGrid), dim3(kBlock), 0, s, b, kN);
  }
  std::vector<int> got(kN);
  HIP_OK(hipMemcpyAsync(got.data(), b, kN * sizeof(int), hipMemcpyDeviceToHost, s));
  const int last = 19;
  for (int i = 0; i < kN; ++i) {
    const int want = i < kN / 4 ? 101 : i < kN / 2 ? 2 : last + i + 2;
    CHECK(got[i] == want, "mixed stream order: b[%d] = %d, expected %d", i, got[i], want);
  }
  CHECK(callbacks.load() == 20, "%d callbacks ran before the copy behind them", callbacks.load());
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
  HIP_OK(hipStreamDestroy(s));
  printf("20 rounds of launches, memsets, copies and callbacks ran in stream order\n");
}

void CheckBlockingUpload() {
  int* d;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  std::vector<int> src(kN);
  for (int i = 0; i < kN; ++i) src[i] = 3 * i;
  HIP_OK(hipMemcpy(d, src.data(), kN * sizeof(int), hipMemcpyHostToDevice));
  std::fill(src.begin(), src.end(), -1);  // The copy has its bytes already.
  // A kernel on a blocking stream runs after the null stream's copy, and the
  // null stream's read-back after the kernel (the legacy null stream).
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipLaunchKernelGGL(add_one, dim3(kGrid), dim3(kBlock), 0, s, d, kN);
  std::vector<int> got(kN);
  HIP_OK(hipMemcpy(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 3 * i + 1, "after upload and kernel: d[%d] = %d", i, got[i]);
  // Another thread's upload, then this thread's read-back once it returned.
  std::atomic<bool> uploaded{false};
  std::thread other([&] {
    std::vector<int> mine(kN, 7);
    HIP_OK(hipMemcpy(d, mine.data(), kN * sizeof(int), hipMemcpyHostToDevice));
    uploaded.store(true);
  });
  while (!uploaded.load()) usleep(100);
  HIP_OK(hipMemcpy(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost));
  other.join();
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 7, "after another thread's upload: d[%d] = %d", i, got[i]);
  // A failing kernel, then an upload: the copy returns hipSuccess (it waits
  // for nothing), the next synchronizing call reports the failure, once.
  (void)hipGetLastError();
  hipLaunchKernelGGL(e2e_fails, dim3(1), dim3(1), 0, nullptr, d);
  HIP_OK(hipGetLastError());
  usleep(200 * 1000);  // The kernel has failed by now.
  HIP_OK(hipMemcpy(d, src.data(), sizeof(int), hipMemcpyHostToDevice));
  HIP_EXPECT(hipDeviceSynchronize(), hipErrorLaunchFailure);
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipMemcpy(got.data(), d, sizeof(int), hipMemcpyDeviceToHost));
  CHECK(got[0] == -1, "the upload after the failed kernel: d[0] = %d", got[0]);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  printf("a blocking upload returned once its source was consumed; stream order and errors held\n");
}

// Scratch memory allocated and freed every step, with a blocking read-back
// on the null stream in between (no non-blocking stream exists yet): each
// step's result is right whichever block it gets.
void CheckAllocationChurn() {
  std::vector<int> got(kN);
  for (int step = 0; step < 20; ++step) {
    int* t;
    HIP_OK(hipMalloc(&t, kN * sizeof(int)));
    hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, nullptr, t, step * 10, kN);
    HIP_OK(hipMemcpy(got.data(), t, kN * sizeof(int), hipMemcpyDeviceToHost));
    CHECK(got[0] == step * 10 && got[kN - 1] == step * 10 + kN - 1, "step %d: scratch read back %d, %d", step,
          got[0], got[kN - 1]);
    HIP_OK(hipFree(t));
  }
  printf("allocation churn: 20 steps of hipMalloc, kernel, read-back, hipFree\n");
}

// Memory freed while a kernel on a non-blocking stream still reads it, then
// allocated again at its size and overwritten on the null stream (which does
// not wait for a non-blocking stream): the kernel still reads what was there.
void CheckFreedWhileRead() {
  constexpr int kInts = 1 << 18;
  constexpr int kSpins = 20 * 1000 * 1000;
  int* out;
  HIP_OK(hipMalloc(&out, 2 * sizeof(int)));
  hipStream_t nb;
  HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
  for (int round = 0; round < 2; ++round) {
    int* x;
    HIP_OK(hipMalloc(&x, kInts * sizeof(int)));
    HIP_OK(hipMemsetD32(x, 5, kInts));
    HIP_OK(hipDeviceSynchronize());
    hipLaunchKernelGGL(slow_read, dim3(1), dim3(1), 0, nb, x, kInts, kSpins, out);
    HIP_OK(hipFree(x));
    int* y;
    HIP_OK(hipMalloc(&y, kInts * sizeof(int)));
    HIP_OK(hipMemsetD32(y, -1, kInts));
    HIP_OK(hipStreamSynchronize(nb));
    int got[2] = {0, 0};
    HIP_OK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
    CHECK(got[0] == 5 && got[1] == 5, "round %d: a kernel read memory freed while it ran as %d, %d, not 5: a later "
          "allocation overwrote it", round, got[0], got[1]);
    HIP_OK(hipFree(y));
  }
  HIP_OK(hipStreamDestroy(nb));
  HIP_OK(hipFree(out));
  printf("memory freed while a kernel read it was not handed out again under it\n");
}

}  // namespace

int main() {
  CheckAllocationChurn();
  CheckDeferredError();
  CheckBlockingUpload();
  CheckPinnedDeviceToHost();
  CheckPageableDeviceToHost();
  CheckMixedStreamOrder();
  CheckFreedWhileRead();
  return e2e::Finish("async_semantics");
}
