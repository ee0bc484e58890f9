// managed: `__managed__` variables through the stub. Host code reads and
// writes them directly (a mirror in the client), kernels through the device
// copy; every check compares values that only a correct exchange at launches
// and synchronisation points can produce.
#include "common.h"

struct Pair {
  int a;
  int b;
};

__managed__ int counter = 5;
__managed__ float ramp[64];
__managed__ Pair pair = {1, 2};
__managed__ int big[1 << 18];  // 1 MiB: only changed spans travel.

__global__ void count_threads() { atomicAdd(&counter, 1); }

__global__ void fill_ramp(float scale) {
  int i = threadIdx.x;
  ramp[i] = scale * i;
}

// Through a pointer argument: the stub rewrites a mirror address to the
// device copy.
__global__ void add_to(int* p, int v) { atomicAdd(p, v); }

__global__ void bump_b() { pair.b += 10; }

__global__ void read_pair_a(int* out) { *out = pair.a; }

__global__ void set_counter(int v) { counter = v; }

__global__ void big_probe(int index, int* out) {
  *out = big[index];
  big[index + 1] = big[index] * 2;
}

// hipMallocManaged memory, page by page (1024 ints a page): reads four
// pages host code wrote, writes two others.
__global__ void sum_pages(int* m, int* out) {
  out[0] = m[0] + m[5 * 1024] + m[100 * 1024 + 7] + m[7 * 1024 + 3];
  m[3 * 1024 + 1] = 77;
  m[200 * 1024 + 1023] = 88;
}

namespace {

// Called first in main, before any HIP call: the registration constructor
// has filled the mirrors.
void CheckInitialValues() {
  CHECK(counter == 5, "counter before any HIP call: %d", counter);
  CHECK(pair.a == 1 && pair.b == 2, "pair before any HIP call: {%d, %d}", pair.a, pair.b);
  CHECK(ramp[7] == 0.0f && big[12345] == 0, "zero-initialised managed arrays: %f %d", ramp[7], big[12345]);
  printf("initial values visible before any HIP call\n");
}

void CheckHostWriteThenKernel() {
  counter = 10;
  count_threads<<<4, 64>>>();
  HIP_OK(hipGetLastError());
  HIP_OK(hipDeviceSynchronize());
  CHECK(counter == 10 + 256, "counter after 256 increments from 10: %d", counter);
  printf("host write seen by the kernel, kernel's atomics seen by the host\n");
}

void CheckStreamSync() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipLaunchKernelGGL(fill_ramp, dim3(1), dim3(64), 0, s, 0.5f);
  HIP_OK(hipStreamSynchronize(s));
  for (int i = 0; i < 64; ++i) CHECK(ramp[i] == 0.5f * i, "ramp[%d] = %f", i, ramp[i]);
  HIP_OK(hipStreamDestroy(s));
  printf("hipStreamSynchronize brought the kernel's writes\n");
}

void CheckPointerArgument() {
  const int before = counter;
  add_to<<<1, 32>>>(&counter, 3);
  HIP_OK(hipDeviceSynchronize());
  CHECK(counter == before + 96, "counter via a pointer argument: %d, expected %d", counter, before + 96);
  hipPointerAttribute_t attr{};
  HIP_OK(hipPointerGetAttributes(&attr, &counter));
  CHECK(attr.isManaged == 1, "hipPointerGetAttributes(&counter).isManaged = %d", attr.isManaged);
  printf("a pointer to a managed variable works as a kernel argument\n");
}

void CheckMerge() {
  int* d_out = nullptr;
  HIP_OK(hipMalloc(&d_out, sizeof(int)));
  bump_b<<<1, 1>>>();
  pair.a = 7;  // Host writes one field while the kernel writes the other.
  HIP_OK(hipDeviceSynchronize());
  CHECK(pair.a == 7 && pair.b == 12, "after the merge: a=%d (7) b=%d (12)", pair.a, pair.b);
  read_pair_a<<<1, 1>>>(d_out);
  int a = 0;
  HIP_OK(hipMemcpy(&a, d_out, sizeof a, hipMemcpyDeviceToHost));
  CHECK(a == 7, "the kernel read pair.a = %d, expected the host's 7", a);
  HIP_OK(hipFree(d_out));
  printf("host and device writes to different bytes both survive\n");
}

void CheckBlockingCopyIsSync() {
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, sizeof(int)));
  set_counter<<<1, 1>>>(123);
  int x = 0;
  HIP_OK(hipMemcpy(&x, d, sizeof x, hipMemcpyDeviceToHost));  // Synchronises the null stream.
  CHECK(counter == 123, "counter after a blocking copy: %d", counter);
  // A copy from the mirror reads what the host sees.
  counter = 77;
  HIP_OK(hipMemcpy(d, &counter, sizeof(int), hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(&x, d, sizeof x, hipMemcpyDeviceToHost));
  CHECK(x == 77, "copied from the mirror: %d", x);
  HIP_OK(hipFree(d));
  printf("a blocking copy is a synchronisation point\n");
}

// A synchronisation's read-back must not queue behind work enqueued after
// it: here the event's synchronisation (which covers the whole device)
// comes while a blocking stream waits for a flag, which would hold a
// read-back on the null stream for ever.
void CheckReadBackBesideHeldStream() {
  hipStream_t writer, held, releaser;
  HIP_OK(hipStreamCreateWithFlags(&writer, hipStreamNonBlocking));
  HIP_OK(hipStreamCreate(&held));
  HIP_OK(hipStreamCreateWithFlags(&releaser, hipStreamNonBlocking));
  uint32_t* flag = nullptr;
  HIP_OK(hipMalloc(&flag, sizeof *flag));
  HIP_OK(hipMemset(flag, 0, sizeof *flag));
  hipEvent_t written;
  HIP_OK(hipEventCreate(&written));
  HIP_OK(hipStreamWaitValue32(held, flag, 1, hipStreamWaitValueEq, 0xffffffffu));
  set_counter<<<1, 1, 0, writer>>>(4242);
  HIP_OK(hipEventRecord(written, writer));
  HIP_OK(hipEventSynchronize(written));
  CHECK(counter == 4242, "counter after hipEventSynchronize with another stream held: %d", counter);
  HIP_OK(hipStreamWriteValue32(releaser, flag, 1, 0));
  HIP_OK(hipStreamSynchronize(held));
  HIP_OK(hipEventDestroy(written));
  HIP_OK(hipFree(flag));
  for (hipStream_t s : {writer, held, releaser}) HIP_OK(hipStreamDestroy(s));
  printf("a read-back does not wait for a stream held after the synchronisation\n");
}

void CheckLargeVariable() {
  int* d_out = nullptr;
  HIP_OK(hipMalloc(&d_out, sizeof(int)));
  const int index = 200000;
  big[index] = 21;
  big_probe<<<1, 1>>>(index, d_out);
  HIP_OK(hipDeviceSynchronize());
  int seen = 0;
  HIP_OK(hipMemcpy(&seen, d_out, sizeof seen, hipMemcpyDeviceToHost));
  CHECK(seen == 21, "the kernel read big[%d] = %d, expected 21", index, seen);
  CHECK(big[index + 1] == 42, "big[%d] = %d after the kernel, expected 42", index + 1, big[index + 1]);
  CHECK(big[0] == 0 && big[(1 << 18) - 1] == 0, "untouched elements changed");
  HIP_OK(hipFree(d_out));
  printf("1 MiB managed array: a host write and a kernel write both arrive\n");
}

// A managed allocation whose changes are found page by page (the client
// and the sim watch written pages where the kernel can tell): every page
// host code wrote reaches the kernel, one of them written by read(2) (the
// kernel writing on the program's behalf), every page the kernel wrote
// comes back, and nothing else changes; the second step changes one page
// again.
void CheckAllocationPages() {
  constexpr int kInts = 1 << 18;  // 1 MiB: 256 pages.
  int* m = nullptr;
  int* out = nullptr;
  HIP_OK(hipMallocManaged(reinterpret_cast<void**>(&m), kInts * sizeof(int), hipMemAttachGlobal));
  HIP_OK(hipMallocManaged(reinterpret_cast<void**>(&out), sizeof(int), hipMemAttachGlobal));
  m[0] = 1;
  m[5 * 1024] = 20;
  m[100 * 1024 + 7] = 300;
  char path[] = "/tmp/hipr-managed-XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp failed");
  const int from_file[4] = {0, 0, 0, 4000};
  CHECK(write(fd, from_file, sizeof from_file) == static_cast<ssize_t>(sizeof from_file), "write failed");
  CHECK(lseek(fd, 0, SEEK_SET) == 0, "lseek failed");
  CHECK(read(fd, &m[7 * 1024], sizeof from_file) == static_cast<ssize_t>(sizeof from_file), "read(2) failed");
  close(fd);
  unlink(path);
  sum_pages<<<1, 1>>>(m, out);
  HIP_OK(hipGetLastError());
  HIP_OK(hipDeviceSynchronize());
  CHECK(*out == 4321, "the kernel summed %d, expected 4321 (1 + 20 + 300 + 4000)", *out);
  CHECK(m[3 * 1024 + 1] == 77 && m[200 * 1024 + 1023] == 88, "the kernel's writes came back as %d and %d",
        m[3 * 1024 + 1], m[200 * 1024 + 1023]);
  int nonzero = 0;
  for (int i = 0; i < kInts; ++i) nonzero += m[i] != 0;
  CHECK(nonzero == 6 && m[0] == 1 && m[5 * 1024] == 20 && m[100 * 1024 + 7] == 300 && m[7 * 1024 + 3] == 4000,
        "%d nonzero ints after the first step, expected the 6 written", nonzero);
  m[100 * 1024 + 7] = 5000;
  sum_pages<<<1, 1>>>(m, out);
  HIP_OK(hipDeviceSynchronize());
  CHECK(*out == 9021, "the second step summed %d, expected 9021", *out);
  HIP_OK(hipFree(m));
  HIP_OK(hipFree(out));
  printf("managed allocation: host writes to four pages arrive, one by read(2); two kernel-written pages return\n");
}

}  // namespace

int main() {
  CheckInitialValues();
  CheckHostWriteThenKernel();
  CheckStreamSync();
  CheckPointerArgument();
  CheckMerge();
  CheckBlockingCopyIsSync();
  CheckReadBackBesideHeldStream();
  CheckLargeVariable();
  CheckAllocationPages();
  return e2e::Finish("managed");
}
