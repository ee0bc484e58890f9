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
//    once; later work sees the bytes (the null stream, a blocking stream
//    behind it, another thread's copy, a non-blocking stream); an earlier kernel's
//    failure is reported by the next synchronizing call, not by the copy.
//  * A blocking hipMemset of plain device memory, and a hipStreamSynchronize,
//    return at once where nothing the host can observe is queued where they
//    would wait (hipr raises a stream fence instead): what the host can
//    observe is unchanged. Another thread's copy on a non-blocking stream,
//    issued after the call returned, reads the bytes even while the stream
//    is still busy before them. A kernel, an event record, a host callback
//    (on the stream, or on the null stream behind a blocking stream) make
//    them wait, as does managed memory in the process (the host then reads
//    a managed value that the kernel before the memset wrote).
//  * hipDeviceSynchronize likewise returns at once where only fills of and
//    copies into device memory are queued, on any stream (another thread's
//    read on another stream after it sees the bytes), and waits for a
//    kernel (one that fails: the synchronize reports it).
//  * Plain hipMalloc is exact whatever hipr does to spare its round trip (on
//    the sim, small allocations are placed in memory the worker leased to
//    the session ahead of use): memory is usable at once by a kernel on
//    another thread; hipMemGetInfo counts what was allocated and not what
//    is held for later; an allocation of nearly all free memory succeeds
//    while small ones were just made, and one more fails with
//    hipErrorOutOfMemory; hipMemGetAddressRange knows each allocation.
//  * hipFree waits for the device in HIP: memory freed while a kernel still
//    reads it, allocated again and overwritten, does not change what that
//    kernel reads; right after hipFree, hipMemGetInfo counts the memory
//    free, a kernel and a held copy into it still queued. (hipr keeps
//    freed blocks for the next hipMalloc of their size, with no round trip,
//    once a synchronisation of every stream has followed the free: the
//    churn check's reuse is counted by the scenario from the client's debug
//    log.)
#include <hip/hip_runtime.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
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
  // A non-blocking stream does not wait for the null stream, but a read
  // there issued after the upload returned still sees its bytes (hipr's
  // stream fence), even while the null stream is busy before the upload.
  constexpr size_t kBig = size_t{64} << 20;
  char* big;
  HIP_OK(hipMalloc(&big, kBig));
  hipStream_t nb;
  HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) HIP_OK(hipMemsetAsync(big, i, kBig, nullptr));
    std::vector<int> mine(kN, 1000 + round);
    HIP_OK(hipMemcpy(d, mine.data(), kN * sizeof(int), hipMemcpyHostToDevice));
    HIP_OK(hipMemcpyAsync(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, nb));
    HIP_OK(hipStreamSynchronize(nb));
    for (int i = 0; i < kN; ++i)
      CHECK(got[i] == 1000 + round, "round %d: a non-blocking stream read d[%d] = %d after the upload returned",
            round, i, got[i]);
  }
  HIP_OK(hipStreamDestroy(nb));
  HIP_OK(hipFree(big));
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

// hipFree waits for the device: right after it, hipMemGetInfo counts the
// memory free, though a kernel reading it was still running when it was
// called and a copy from pageable memory into it waited behind the kernel
// (the hip device holds the stream there with the copy's bytes).
void CheckFreeCountedAtOnce() {
  constexpr int kInts = 1 << 18;
  constexpr int kSpins = 20 * 1000 * 1000;
  int* out;
  int* x;
  HIP_OK(hipMalloc(&out, 2 * sizeof(int)));
  HIP_OK(hipMalloc(&x, kInts * sizeof(int)));
  HIP_OK(hipMemsetD32(x, 5, kInts));
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipDeviceSynchronize());
  size_t free0 = 0, free1 = 0, total = 0;
  HIP_OK(hipMemGetInfo(&free0, &total));
  std::vector<int> host(kInts, 9);
  hipLaunchKernelGGL(slow_read, dim3(1), dim3(1), 0, s, x, kInts, kSpins, out);
  HIP_OK(hipMemcpyAsync(x, host.data(), kInts * sizeof(int), hipMemcpyHostToDevice, s));
  HIP_OK(hipFree(x));
  HIP_OK(hipMemGetInfo(&free1, &total));
  CHECK(free1 == free0 + kInts * sizeof(int), "hipMemGetInfo right after hipFree: %zu free, %zu before the free "
        "of %zu bytes", free1, free0, kInts * sizeof(int));
  HIP_OK(hipStreamSynchronize(s));
  int got[2] = {0, 0};
  HIP_OK(hipMemcpy(got, out, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got[0] == 5 && got[1] == 5, "the kernel before the copy read %d, %d, not 5", got[0], got[1]);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(out));
  printf("memory freed behind a running kernel and a held copy counted free when hipFree returned\n");
}

// A blocking memset behind a long fill on the null stream, then another
// thread's read on a non-blocking stream (which does not wait for the null
// stream): natively the memset has completed when it returns, so the read
// sees it; hipr's memset returned at once (nothing the host can see was
// queued before it), and its stream fence makes the non-blocking stream
// wait for it on the worker. A kernel queued before a blocking memset can
// be seen by the host (its writes to host memory, its failure), so then the
// memset waits, and reports the kernel's failure.
void CheckBlockingMemset() {
  constexpr size_t kBig = size_t{64} << 20;
  int* d;
  char* big;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  HIP_OK(hipMalloc(&big, kBig));
  hipStream_t nb;
  HIP_OK(hipStreamCreateWithFlags(&nb, hipStreamNonBlocking));
  for (int round = 0; round < 3; ++round) {
    hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, nullptr, d, 1, kN);
    HIP_OK(hipDeviceSynchronize());
    for (int i = 0; i < 4; ++i) HIP_OK(hipMemsetAsync(big, i, kBig, nullptr));  // Busy for a while.
    const unsigned char value = static_cast<unsigned char>(0x10 + round);
    std::atomic<bool> filled{false};
    std::thread other([&] {
      HIP_OK(hipMemset(d, value, kN * sizeof(int)));
      filled.store(true);
    });
    while (!filled.load()) usleep(100);
    std::vector<int> got(kN, 0);
    HIP_OK(hipMemcpyAsync(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, nb));
    HIP_OK(hipStreamSynchronize(nb));
    other.join();
    int want;
    std::memset(&want, value, sizeof want);
    for (int i = 0; i < kN; ++i)
      CHECK(got[i] == want, "round %d: a non-blocking stream read %d at [%d] after hipMemset had returned, not %d",
            round, got[i], i, want);
  }
  // A failing kernel before a blocking memset: the memset waits for it and
  // reports the failure, once.
  (void)hipGetLastError();
  hipLaunchKernelGGL(e2e_fails, dim3(1), dim3(1), 0, nullptr, d);
  HIP_OK(hipGetLastError());
  usleep(200 * 1000);  // The kernel has failed by now.
  HIP_EXPECT(hipMemset(d, 0, kN * sizeof(int)), hipErrorLaunchFailure);
  HIP_OK(hipDeviceSynchronize());
  std::vector<int> got(kN, -1);
  HIP_OK(hipMemcpy(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 0, "the memset after the failed kernel: d[%d] = %d", i, got[i]);
  HIP_OK(hipStreamDestroy(nb));
  HIP_OK(hipFree(big));
  HIP_OK(hipFree(d));
  printf("a blocking memset returned at once; another thread's non-blocking stream saw it in order, and one "
         "behind a kernel waited\n");
}

void SleepThenSet(hipStream_t, hipError_t, void* flag) {
  usleep(100 * 1000);
  static_cast<std::atomic<bool>*>(flag)->store(true);
}

// hipStreamSynchronize while the only work not seen complete is fills of
// and copies into device memory returns at once (hipr raises a stream
// fence); with anything else queued (on its stream, or on the null stream
// behind a blocking stream), it waits as natively.
void CheckStreamSynchronize() {
  constexpr size_t kBig = size_t{64} << 20;
  char* big;
  int* d;
  HIP_OK(hipMalloc(&big, kBig));
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  hipStream_t s1, s2, blocking;
  HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  HIP_OK(hipStreamCreate(&blocking));
  std::vector<int> src(kN), got(kN);
  for (int round = 0; round < 3; ++round) {
    // Fills and an upload only: the synchronize returns at once, and a read
    // on another non-blocking stream after it still sees the upload.
    for (int i = 0; i < 4; ++i) HIP_OK(hipMemsetAsync(big, i, kBig, s1));
    for (int i = 0; i < kN; ++i) src[i] = round * 100000 + i;
    HIP_OK(hipMemcpyAsync(d, src.data(), kN * sizeof(int), hipMemcpyHostToDevice, s1));
    HIP_OK(hipStreamSynchronize(s1));
    HIP_OK(hipMemcpyAsync(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, s2));
    HIP_OK(hipStreamSynchronize(s2));
    for (int i = 0; i < kN; ++i)
      CHECK(got[i] == round * 100000 + i, "round %d: after hipStreamSynchronize another stream read d[%d] = %d",
            round, i, got[i]);
  }
  // An event record: the host may time the event right after.
  hipEvent_t start, stop;
  HIP_OK(hipEventCreate(&start));
  HIP_OK(hipEventCreate(&stop));
  HIP_OK(hipEventRecord(start, s1));
  for (int i = 0; i < 4; ++i) HIP_OK(hipMemsetAsync(big, i, kBig, s1));
  HIP_OK(hipEventRecord(stop, s1));
  HIP_OK(hipStreamSynchronize(s1));
  float ms = -1;
  HIP_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0, "elapsed time %f", ms);
  // A host callback: it has run when the synchronize returns.
  std::atomic<bool> ran{false};
  HIP_OK(hipStreamAddCallback(s1, SleepThenSet, &ran, 0));
  HIP_OK(hipMemsetAsync(big, 0, kBig, s1));
  HIP_OK(hipStreamSynchronize(s1));
  CHECK(ran.load(), "hipStreamSynchronize returned before the host callback queued on its stream ran");
  // A blocking stream waits for the null stream's work: a callback there.
  std::atomic<bool> null_ran{false};
  HIP_OK(hipStreamAddCallback(nullptr, SleepThenSet, &null_ran, 0));
  HIP_OK(hipMemsetAsync(big, 0, kBig, blocking));
  HIP_OK(hipStreamSynchronize(blocking));
  CHECK(null_ran.load(), "hipStreamSynchronize of a blocking stream returned before the null stream's callback "
        "it waits behind ran");
  HIP_OK(hipEventDestroy(start));
  HIP_OK(hipEventDestroy(stop));
  HIP_OK(hipStreamDestroy(blocking));
  HIP_OK(hipStreamDestroy(s2));
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(big));
  printf("a stream synchronize that guarded only device memory returned at once; event times, callbacks and the "
         "null stream were waited for\n");
}

// hipDeviceSynchronize while the only work not seen complete is fills of
// and copies into device memory, on any stream, returns at once (hipr
// raises a stream fence on each): a read from another thread on another
// non-blocking stream still sees the bytes. With a kernel queued (here one
// that fails on the device), it waits, and reports the kernel's failure.
void CheckDeviceSynchronize() {
  constexpr size_t kBig = size_t{64} << 20;
  char* big;
  int* d;
  HIP_OK(hipMalloc(&big, kBig));
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  hipStream_t s1, s2;
  HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  std::vector<int> src(kN), got(kN);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) HIP_OK(hipMemsetAsync(big, i, kBig, s1));
    for (int i = 0; i < kN; ++i) src[i] = round * 7000 + i;
    HIP_OK(hipMemcpyAsync(d, src.data(), kN * sizeof(int), hipMemcpyHostToDevice, s1));
    HIP_OK(hipMemsetAsync(big, 9, kBig, nullptr));
    HIP_OK(hipDeviceSynchronize());
    std::thread([&] {
      HIP_OK(hipMemcpyAsync(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, s2));
      HIP_OK(hipStreamSynchronize(s2));
    }).join();
    for (int i = 0; i < kN; ++i)
      CHECK(got[i] == round * 7000 + i, "round %d: after hipDeviceSynchronize another thread read d[%d] = %d", round,
            i, got[i]);
  }
  (void)hipGetLastError();
  hipLaunchKernelGGL(e2e_fails, dim3(1), dim3(1), 0, s1, d);
  HIP_OK(hipMemsetAsync(big, 0, kBig, s2));
  HIP_EXPECT(hipDeviceSynchronize(), hipErrorLaunchFailure);
  HIP_OK(hipDeviceSynchronize());  // Reported once.
  (void)hipGetLastError();
  HIP_OK(hipStreamDestroy(s2));
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(big));
  printf("a device synchronize that guarded only device memory returned at once; one behind a failing kernel "
         "waited and reported it\n");
}

__global__ void write_managed(int* m, int value) { *m = value; }

// With managed memory in the process, a blocking memset synchronizes its
// stream and so refreshes what the host reads of managed memory: the value
// the kernel before it wrote. (It must not return before that.)
void CheckBlockingMemsetWithManaged() {
  int* m;
  HIP_OK(hipMallocManaged(&m, sizeof(int)));
  *m = 0;
  int* d;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  HIP_OK(hipDeviceSynchronize());
  for (int round = 1; round <= 3; ++round) {
    hipLaunchKernelGGL(write_managed, dim3(1), dim3(1), 0, nullptr, m, round);
    HIP_OK(hipMemset(d, 0, kN * sizeof(int)));
    CHECK(*m == round, "round %d: after a blocking memset the host read %d from managed memory", round, *m);
  }
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(m));
  printf("with managed memory, a blocking memset waited: the host read what the kernel before it wrote\n");
}

}  // namespace

// Many small allocations, then nearly all the rest: what a program observes
// of hipMalloc (its memory, hipMemGetInfo, out of memory) is as if each had
// gone to the device, though after the first none waits for the worker.
void CheckLeasedAllocations() {
  constexpr size_t kMiB = size_t{1} << 20;
  size_t free0 = 0, total = 0;
  HIP_OK(hipMemGetInfo(&free0, &total));
  std::vector<int*> small(24);
  size_t asked = 0;
  for (size_t i = 0; i < small.size(); ++i) {
    const size_t bytes = (i + 1) * 1000 * sizeof(int);
    HIP_OK(hipMalloc(&small[i], bytes));
    asked += bytes;
    // Used at once, from another thread, by a kernel and a copy.
    std::thread([&, i] {
      hipLaunchKernelGGL(fill, dim3(kGrid), dim3(kBlock), 0, nullptr, small[i], static_cast<int>(i) * 100000,
                         static_cast<int>((i + 1) * 1000));
      int last = -1;
      HIP_OK(hipMemcpy(&last, small[i] + (i + 1) * 1000 - 1, sizeof last, hipMemcpyDeviceToHost));
      CHECK(last == static_cast<int>(i) * 100000 + static_cast<int>((i + 1) * 1000) - 1,
            "allocation %zu read back %d", i, last);
    }).join();
    void* base = nullptr;
    size_t size = 0;
    HIP_OK(hipMemGetAddressRange(reinterpret_cast<hipDeviceptr_t*>(&base), &size, small[i] + 7));
    CHECK(base == small[i] && size == bytes, "allocation %zu: range %p +%zu, expected %p +%zu", i, base, size,
          static_cast<void*>(small[i]), bytes);
  }
  size_t free1 = 0;
  HIP_OK(hipMemGetInfo(&free1, &total));
  // Devices round allocations up (the sim to 4 KiB pages, GPUs to more):
  // never by as much as a megabyte each here.
  CHECK(free1 + asked <= free0 && free0 - free1 <= asked + small.size() * kMiB,
        "hipMemGetInfo: %zu bytes fewer free after allocating %zu", free0 - free1, asked);
  // Nearly all that is free, right after a small allocation: it must fit.
  int* one = nullptr;
  HIP_OK(hipMalloc(&one, 4096));
  void* most = nullptr;
  HIP_OK(hipMalloc(&most, free1 - 4 * kMiB));
  void* more = nullptr;
  HIP_EXPECT(hipMalloc(&more, 8 * kMiB), hipErrorOutOfMemory);
  CHECK(more == nullptr, "a failed hipMalloc gave %p", more);
  HIP_EXPECT(hipGetLastError(), hipErrorOutOfMemory);
  HIP_OK(hipFree(most));
  HIP_OK(hipFree(one));
  for (int* p : small) HIP_OK(hipFree(p));
  HIP_OK(hipDeviceSynchronize());
  size_t free2 = 0;
  HIP_OK(hipMemGetInfo(&free2, &total));
  CHECK(free2 == free0, "hipMemGetInfo: %zu free after freeing everything, %zu before", free2, free0);
  printf("leased allocations: 24 small hipMallocs used at once, counted exactly; nearly all the rest fits, "
         "and more fails\n");
}

int main() {
  CheckAllocationChurn();
  CheckDeferredError();
  CheckBlockingUpload();
  CheckPinnedDeviceToHost();
  CheckPageableDeviceToHost();
  CheckMixedStreamOrder();
  CheckFreedWhileRead();
  CheckFreeCountedAtOnce();
  CheckBlockingMemset();
  CheckStreamSynchronize();
  CheckDeviceSynchronize();
  CheckLeasedAllocations();
  CheckBlockingMemsetWithManaged();  // Last: managed memory turns the memset's early return off.
  return e2e::Finish("async_semantics");
}
