// errors: wrong calls get HIP's errors (never a crash), and the session
// stays usable after each one.
//
// Frees of the wrong kind of pointer, copies from addresses that are not
// device allocations, a bad device ordinal, the HIP 5.x last-error rules,
// error names, and a launch of a kernel the sim worker has no twin for (no
// hipr_add_sim_twin for this program, on purpose).
#include <thread>
#include <vector>

#include "common.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

__global__ void e2e_add_one(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1;
}

void Section(const char* name) {
  printf("[errors] %s\n", name);
  fflush(stdout);
}

// A round trip that must still work after an error.
void CheckSessionUsable(const char* after) {
  const size_t n = 64 * 1024 + 3;
  std::vector<uint8_t> src(n), got(n);
  e2e::FillPattern(src.data(), n, 42);
  void* d = nullptr;
  hipError_t e = hipMalloc(&d, n);
  if (e != hipSuccess) e2e::Fail(__FILE__, __LINE__, "after %s: hipMalloc returned %s", after, e2e::ErrName(e));
  HIP_OK(hipMemcpy(d, src.data(), n, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(got.data(), d, n, hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), src.data(), n) == 0, "after %s: round trip differs", after);
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void BadFrees() {
  Section("hipFree of a host pointer, hipHostFree of a device pointer");
  std::vector<uint8_t> host(4096);
  HIP_EXPECT(hipFree(host.data()), hipErrorInvalidValue);
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidValue);
  // Freeing null is a no-op in HIP.
  HIP_EXPECT(hipFree(nullptr), hipSuccess);
  CheckSessionUsable("hipFree(host pointer)");

  void* d = nullptr;
  HIP_OK(hipMalloc(&d, kMiB));
  hipError_t e = hipHostFree(d);
  if (e == hipErrorInvalidValue) {
    // Refused: the allocation must be untouched.
    std::vector<uint8_t> src(kMiB), got(kMiB);
    e2e::FillPattern(src.data(), kMiB, 43);
    HIP_OK(hipMemcpy(d, src.data(), kMiB, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(got.data(), d, kMiB, hipMemcpyDeviceToHost));
    CHECK(memcmp(got.data(), src.data(), kMiB) == 0, "device buffer broken after a refused hipHostFree");
    HIP_OK(hipFree(d));
    printf("  hipHostFree(device pointer) -> hipErrorInvalidValue, the allocation is intact\n");
  } else if (e == hipSuccess) {
    // Accepted (HIP's runtime frees any allocation it knows): then it is gone.
    HIP_EXPECT(hipFree(d), hipErrorInvalidValue);
    printf("  hipHostFree(device pointer) -> hipSuccess, the allocation is gone\n");
  } else {
    e2e::Fail(__FILE__, __LINE__, "hipHostFree(device pointer) returned %s", e2e::ErrName(e));
  }
  (void)hipGetLastError();
  // hipHostFree of an address HIP never saw.
  HIP_EXPECT(hipHostFree(host.data() + 8), hipErrorInvalidValue);
  (void)hipGetLastError();
  // The remote device cannot reach this process's pinned memory: no device
  // pointer for it (rather than a host address that only looks like one).
  void* pinned = nullptr;
  HIP_EXPECT(hipHostMalloc(&pinned, 4096, hipHostMallocMapped), hipSuccess);
  void* mapped = nullptr;
  HIP_EXPECT(hipHostGetDevicePointer(&mapped, pinned, 0), hipErrorNotSupported);
  CHECK(mapped == nullptr, "hipHostGetDevicePointer wrote an output on failure");
  // And the device says so: a program that checks before mapping takes its
  // other path.
  int can_map = -1;
  HIP_OK(hipDeviceGetAttribute(&can_map, hipDeviceAttributeCanMapHostMemory, 0));
  CHECK(can_map == 0, "hipDeviceAttributeCanMapHostMemory is %d while mapping is refused", can_map);
  HIP_EXPECT(hipHostFree(pinned), hipSuccess);
  (void)hipGetLastError();
  CheckSessionUsable("hipHostFree misuse");
}

void BadCopies() {
  Section("copies from addresses that are not device allocations");
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, kMiB));
  std::vector<uint8_t> host(kMiB, 0x99);

  // Far past the end of an allocation.
  uint8_t* beyond = static_cast<uint8_t*>(d) + (size_t{1} << 30);
  hipError_t e = hipMemcpy(host.data(), beyond, 4096, hipMemcpyDeviceToHost);
  CHECK(e != hipSuccess, "hipMemcpy D2H from device pointer + 1 GiB succeeded");
  printf("  D2H from device pointer + 1 GiB -> %s\n", e2e::ErrName(e));
  CHECK_BYTES_EQUAL(host.data(), 4096, 0x99, "destination of a failed D2H");
  (void)hipGetLastError();
  e = hipMemcpy(beyond, host.data(), 4096, hipMemcpyHostToDevice);
  CHECK(e != hipSuccess, "hipMemcpy H2D to device pointer + 1 GiB succeeded");
  printf("  H2D to device pointer + 1 GiB -> %s\n", e2e::ErrName(e));
  (void)hipGetLastError();
  // Straddling the end of a real allocation.
  e = hipMemcpy(host.data(), static_cast<uint8_t*>(d) + kMiB - 100, 200, hipMemcpyDeviceToHost);
  CHECK(e != hipSuccess, "hipMemcpy D2H across the end of an allocation succeeded");
  printf("  D2H across the end of an allocation -> %s\n", e2e::ErrName(e));
  (void)hipGetLastError();
  CheckSessionUsable("copies from unallocated device addresses");

  // Host addresses used as the device source.
  std::vector<uint8_t> other(4096, 0x11);
  e = hipMemcpy(host.data(), other.data(), 4096, hipMemcpyDeviceToHost);
  CHECK(e != hipSuccess, "hipMemcpy D2H with a heap address as the device source succeeded");
  printf("  D2H from a heap address -> %s\n", e2e::ErrName(e));
  (void)hipGetLastError();
  void* random_address = reinterpret_cast<void*>(uintptr_t{0x00007f1234560000});
  e = hipMemcpy(host.data(), random_address, 4096, hipMemcpyDeviceToHost);
  CHECK(e != hipSuccess, "hipMemcpy D2H from %p succeeded", random_address);
  printf("  D2H from %p -> %s\n", random_address, e2e::ErrName(e));
  (void)hipGetLastError();
  e = hipMemcpyDtoD(d, random_address, 4096);
  CHECK(e != hipSuccess, "hipMemcpyDtoD from %p succeeded", random_address);
  printf("  DtoD from %p -> %s\n", random_address, e2e::ErrName(e));
  (void)hipGetLastError();
  e = hipMemset(random_address, 0, 4096);
  CHECK(e != hipSuccess, "hipMemset of %p succeeded", random_address);
  printf("  hipMemset of %p -> %s\n", random_address, e2e::ErrName(e));
  (void)hipGetLastError();
  HIP_OK(hipFree(d));
  CheckSessionUsable("copies from host addresses");
}

void BadDevice() {
  Section("bad device ordinals");
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  HIP_EXPECT(hipSetDevice(count), hipErrorInvalidDevice);
  HIP_EXPECT(hipSetDevice(99), hipErrorInvalidDevice);
  HIP_EXPECT(hipSetDevice(-1), hipErrorInvalidDevice);
  hipDeviceProp_t prop;
  HIP_EXPECT(hipGetDeviceProperties(&prop, count), hipErrorInvalidDevice);
  int device = -1;
  HIP_OK(hipGetDevice(&device));
  CHECK(device == 0, "the current device is %d after failed hipSetDevice calls", device);
  (void)hipGetLastError();
  CheckSessionUsable("bad device ordinals");
}

// HIP 5.x (what these programs link against): every call stores its return
// code, success included; hipGetLastError returns and clears it;
// hipPeekAtLastError returns it without clearing.
void LastError() {
  Section("hipGetLastError / hipPeekAtLastError");
  (void)hipGetLastError();
  HIP_EXPECT(hipGetLastError(), hipSuccess);
  HIP_EXPECT(hipSetDevice(99), hipErrorInvalidDevice);
  HIP_EXPECT(hipPeekAtLastError(), hipErrorInvalidDevice);
  HIP_EXPECT(hipPeekAtLastError(), hipErrorInvalidDevice);
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidDevice);
  HIP_EXPECT(hipGetLastError(), hipSuccess);
  HIP_EXPECT(hipPeekAtLastError(), hipSuccess);

  // A later successful call replaces the stored code (5.x; 6.x keeps the error).
  HIP_EXPECT(hipSetDevice(99), hipErrorInvalidDevice);
  int device = -1;
  HIP_OK(hipGetDevice(&device));
  HIP_EXPECT(hipGetLastError(), hipSuccess);

  // The last error is per thread.
  HIP_EXPECT(hipSetDevice(99), hipErrorInvalidDevice);
  std::thread other([] {
    if (hipPeekAtLastError() != hipSuccess) {
      fprintf(stderr, "E2E_FAIL another thread sees this thread's last error\n");
      _exit(e2e::kExitCheckFailed);
    }
  });
  other.join();
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidDevice);
}

void ErrorNames() {
  Section("hipGetErrorName / hipGetErrorString");
  struct {
    hipError_t e;
    const char* name;
  } names[] = {{hipSuccess, "hipSuccess"},
               {hipErrorInvalidValue, "hipErrorInvalidValue"},
               {hipErrorInvalidDevice, "hipErrorInvalidDevice"},
               {hipErrorNoDevice, "hipErrorNoDevice"},
               {hipErrorNotSupported, "hipErrorNotSupported"},
               {hipErrorOutOfMemory, "hipErrorOutOfMemory"}};
  for (const auto& n : names) {
    const char* got = hipGetErrorName(n.e);
    CHECK(got != nullptr && strcmp(got, n.name) == 0, "hipGetErrorName(%d) is '%s', expected '%s'",
          static_cast<int>(n.e), got ? got : "(null)", n.name);
    const char* text = hipGetErrorString(n.e);
    CHECK(text != nullptr && text[0] != '\0', "hipGetErrorString(%s) is empty", n.name);
  }
  const char* unknown = hipGetErrorName(static_cast<hipError_t>(12345));
  CHECK(unknown != nullptr && strcmp(unknown, "hipErrorUnknown") == 0, "hipGetErrorName(12345) is '%s'",
        unknown ? unknown : "(null)");
}

void KernelLaunch() {
  Section("kernel launch without a twin on the worker");
  if (e2e::OnHipDevice()) {
    // The sim refuses such a launch from the module's list of kernels it
    // can run; a hip device's runtime loads the whole code object or none.
    printf("not run on the hip device: a launch without a twin is the sim's case\n");
    return;
  }
  const int n = 256;
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, n * sizeof(int)));
  HIP_OK(hipMemset(d, 0, n * sizeof(int)));
  (void)hipGetLastError();
  e2e_add_one<<<dim3(n / 64), dim3(64), 0, 0>>>(d, n);
  HIP_EXPECT(hipGetLastError(), hipErrorNoBinaryForGpu);
  hipLaunchKernelGGL(e2e_add_one, dim3(n / 64), dim3(64), 0, 0, d, n);
  HIP_EXPECT(hipGetLastError(), hipErrorNoBinaryForGpu);
  HIP_OK(hipDeviceSynchronize());  // A refused launch leaves no deferred error.
  // The launch did nothing.
  std::vector<int> got(n, -1);
  HIP_OK(hipMemcpy(got.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(got[i] == 0, "element %d is %d after a refused launch", i, got[i]);
  HIP_OK(hipFree(d));
  CheckSessionUsable("a refused launch");
}

}  // namespace

int main() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count >= 1, "device count %d", count);
  BadFrees();
  BadCopies();
  BadDevice();
  LastError();
  ErrorNames();
  KernelLaunch();
  printf("[errors] all checks passed\n");
  return e2e::Finish("errors");
}
