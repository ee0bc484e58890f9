// launch_probe: kernels whose code-object metadata the client stub's tests
// read (built with hipcc --genco as launch_probe.co), and a program that
// drives the stub's launch and module entry points through the real ABI
// (built by hipcc, run under LD_PRELOAD of the stub against a scripted fake
// worker by launch_abi_test.cc). It checks what each call returns and prints
// "PROBE OK" when every check passed; the fake worker checks what reached
// the wire. argv[1]: the path of launch_probe.co.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstring>

struct Pair {
  int a;
  double b;
};

__device__ int probe_counter;
__constant__ float probe_coeffs[4];

extern "C" __global__ void mixed(char c, int i, double d, float* p, Pair s, short h) {
  if (threadIdx.x == 0) p[0] = c + i + d + s.a + s.b + h + probe_coeffs[0] + probe_counter++;
}

extern "C" __global__ void __launch_bounds__(128) bounded(int* out) { out[threadIdx.x] = 1; }

extern "C" __global__ void shared_user(float* p) {
  __shared__ float tile[1024];
  tile[threadIdx.x] = p[threadIdx.x];
  __syncthreads();
  p[threadIdx.x] = tile[1023 - threadIdx.x];
}

extern "C" __global__ void no_args() {}

template <typename T>
__global__ void fill(T* p, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}
template __global__ void fill<int>(int*, int, int);

static int failures = 0;

#define EXPECT(cond, ...)                      \
  do {                                         \
    if (!(cond)) {                             \
      std::printf("FAILED %s: ", #cond);       \
      std::printf(__VA_ARGS__);                \
      std::printf("\n");                       \
      ++failures;                              \
    }                                          \
  } while (0)

#define EXPECT_ERR(expr, want)                                                                  \
  do {                                                                                          \
    hipError_t got_ = (expr);                                                                   \
    EXPECT(got_ == (want), "%s returned %s, expected %s", #expr, hipGetErrorName(got_), #want); \
  } while (0)

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  int count = 0;
  EXPECT_ERR(hipGetDeviceCount(&count), hipSuccess);

  // <<<>>>: the first launch loads the module; the second reuses it.
  float* fake = reinterpret_cast<float*>(uintptr_t{0x1000});
  mixed<<<dim3(2, 3, 1), dim3(64, 1, 1), 16, 0>>>('x', -5, 2.5, fake, Pair{7, 1.5}, 300);
  EXPECT_ERR(hipGetLastError(), hipSuccess);
  mixed<<<1, 1>>>('y', 1, 0.0, nullptr, Pair{0, 0.0}, 0);
  EXPECT_ERR(hipGetLastError(), hipSuccess);

  // Launch-configuration errors, decided by the client.
  bounded<<<1, 256>>>(nullptr);
  EXPECT_ERR(hipGetLastError(), hipErrorLaunchFailure);
  bounded<<<1, 2048>>>(nullptr);
  EXPECT_ERR(hipGetLastError(), hipErrorInvalidConfiguration);
  int* none = nullptr;
  void* args[] = {&none};
  EXPECT_ERR(hipLaunchKernel(reinterpret_cast<const void*>(bounded), dim3(1), dim3(0), args, 0, nullptr),
             hipErrorInvalidValue);
  EXPECT_ERR(hipLaunchKernel(reinterpret_cast<const void*>(&main), dim3(1), dim3(1), args, 0, nullptr),
             hipErrorInvalidDeviceFunction);
  shared_user<<<1, 64, 65536>>>(nullptr);
  EXPECT_ERR(hipGetLastError(), hipErrorInvalidValue);

  // Attributes and occupancy from the metadata.
  hipFuncAttributes attr{};
  EXPECT_ERR(hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(bounded)), hipSuccess);
  EXPECT(attr.maxThreadsPerBlock == 128, "bounded: maxThreadsPerBlock %d", attr.maxThreadsPerBlock);
  EXPECT_ERR(hipFuncGetAttributes(&attr, reinterpret_cast<const void*>(shared_user)), hipSuccess);
  EXPECT(attr.sharedSizeBytes == 4096, "shared_user: sharedSizeBytes %zu", attr.sharedSizeBytes);
  int blocks = 0;
  EXPECT_ERR(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(fill<int>), 256, 0),
             hipSuccess);
  EXPECT(blocks > 0, "occupancy of fill<int> at 256 threads: %d", blocks);
  EXPECT(std::strcmp(hipKernelNameRefByPtr(reinterpret_cast<const void*>(mixed), nullptr), "mixed") == 0,
         "kernel name");

  // Device variables: their module is loaded already; addresses come from it.
  void* address = nullptr;
  size_t bytes = 0;
  EXPECT_ERR(hipGetSymbolAddress(&address, HIP_SYMBOL(probe_counter)), hipSuccess);
  EXPECT_ERR(hipGetSymbolSize(&bytes, HIP_SYMBOL(probe_counter)), hipSuccess);
  EXPECT(address != nullptr && bytes == sizeof(int), "probe_counter at %p, %zu bytes", address, bytes);
  const float coeffs[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(probe_coeffs), coeffs, sizeof coeffs), hipSuccess);
  EXPECT_ERR(hipMemcpyToSymbol(HIP_SYMBOL(probe_coeffs), coeffs, sizeof coeffs, 4), hipErrorInvalidValue);
  int counter = 0;
  EXPECT_ERR(hipMemcpyFromSymbol(&counter, HIP_SYMBOL(probe_counter), sizeof counter), hipSuccess);
  EXPECT(counter == 42, "probe_counter read %d", counter);
  EXPECT_ERR(hipGetSymbolAddress(&address, &failures), hipErrorInvalidSymbol);

  // The module API on the same code, loaded from the file.
  hipModule_t module = nullptr;
  EXPECT_ERR(hipModuleLoad(&module, argv[1]), hipSuccess);
  hipFunction_t f = nullptr;
  EXPECT_ERR(hipModuleGetFunction(&f, module, "no_such_kernel"), hipErrorNotFound);
  EXPECT_ERR(hipModuleGetFunction(&f, module, "mixed"), hipSuccess);
  EXPECT(std::strcmp(hipKernelNameRef(f), "mixed") == 0, "module kernel name");
  char c = 'k';
  int i = 11;
  double d = -0.25;
  float* p = fake;
  Pair s{3, 4.5};
  short h = -2;
  void* params[] = {&c, &i, &d, &p, &s, &h};
  EXPECT_ERR(hipModuleLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr), hipSuccess);
  // The same arguments as one buffer at the metadata's offsets.
  unsigned char buffer[42] = {};
  std::memcpy(buffer + 0, &c, 1);
  std::memcpy(buffer + 4, &i, 4);
  std::memcpy(buffer + 8, &d, 8);
  std::memcpy(buffer + 16, &p, 8);
  std::memcpy(buffer + 24, &s, 16);
  std::memcpy(buffer + 40, &h, 2);
  size_t size = sizeof buffer;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   HIP_LAUNCH_PARAM_END};
  EXPECT_ERR(hipModuleLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, nullptr, extra), hipSuccess);
  EXPECT_ERR(hipModuleLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, params, extra), hipErrorInvalidValue);
  EXPECT_ERR(hipModuleLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr), hipErrorInvalidValue);
  size_t small = 8;
  void* short_extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, buffer, HIP_LAUNCH_PARAM_BUFFER_SIZE, &small,
                         HIP_LAUNCH_PARAM_END};
  EXPECT_ERR(hipModuleLaunchKernel(f, 4, 1, 1, 32, 1, 1, 0, nullptr, nullptr, short_extra), hipErrorInvalidValue);
  hipFunction_t g = nullptr;
  EXPECT_ERR(hipModuleGetFunction(&g, module, "bounded"), hipSuccess);
  int value = 0;
  EXPECT_ERR(hipFuncGetAttribute(&value, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, g), hipSuccess);
  EXPECT(value == 128, "bounded via the module: %d", value);
  EXPECT_ERR(hipModuleLaunchKernel(g, 1, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), hipErrorLaunchFailure);

  // Device output arrives with the synchronizing call's reply.
  EXPECT_ERR(hipDeviceSynchronize(), hipSuccess);
  EXPECT_ERR(hipModuleUnload(module), hipSuccess);
  EXPECT_ERR(hipModuleLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
             hipErrorInvalidResourceHandle);
  std::printf(failures == 0 ? "PROBE OK\n" : "PROBE FAILED (%d)\n", failures);
  return failures == 0 ? 0 : 1;
}
