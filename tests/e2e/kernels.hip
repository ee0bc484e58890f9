// kernels: every way a hipcc-built program launches kernels, run through the
// stub against a sim worker whose twins are built from this very file. Each
// check compares with a result computed on the host, so a marshalling bug
// (a wrong offset, a lost argument) shows as a wrong value.
//
//   kernels            all checks below, then E2E_PASS kernels
//   kernels --printf   only the printf kernel (the driver checks its text)
#include <vector>

#include "common.h"

// ---- Kernels ------------------------------------------------------------------

__global__ void scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// Sum of `in` into *out: a shared-memory tree per block, one atomicAdd per block.
__global__ void block_sum(const int* in, int n, unsigned long long* out) {
  __shared__ int partial[256];
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) atomicAdd(out, static_cast<unsigned long long>(partial[0]));
}

struct Params {
  double bias;
  int scale;
  char tag;
  float weights[3];
};

// Arguments of every size and alignment, a by-value struct among them.
__global__ void mixed_args(char c, short s, int i, long long ll, float f, double d, Params p, unsigned char u8,
                           const int* in, double* out) {
  int k = threadIdx.x;
  out[k] = c + s + i + static_cast<double>(ll) + f + d + p.bias + p.scale * in[k] + p.tag +
           p.weights[0] + p.weights[1] * 2 + p.weights[2] * 3 + u8;
}

// Reverses each block's slice through dynamic shared memory.
__global__ void reverse_blocks(const float* in, float* out) {
  extern __shared__ float buffer[];
  int t = threadIdx.x;
  int base = blockIdx.x * blockDim.x;
  buffer[t] = in[base + t];
  __syncthreads();
  out[base + t] = buffer[blockDim.x - 1 - t];
}

__constant__ float coefficients[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int counter = 5;

__global__ void polynomial(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = coefficients[0] + v * (coefficients[1] + v * (coefficients[2] + v * coefficients[3]));
    atomicAdd(&counter, 1);
  }
}

__global__ void say_hello(int value) {
  if (threadIdx.x == 0) printf("kernel says hello from block %d: value=%d\n", static_cast<int>(blockIdx.x), value);
}

__global__ void __launch_bounds__(128) bounded(int* out) { out[threadIdx.x] = 1; }

// ---- Checks -------------------------------------------------------------------

static void CheckScale() {
  const int n = 100000;
  std::vector<float> host(n), got(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i % 977) * 0.25f;
  float* d = nullptr;
  HIP_OK(hipMalloc(&d, n * sizeof(float)));
  HIP_OK(hipMemcpy(d, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
  scale<<<(n + 255) / 256, 256>>>(d, 3.0f, n);
  HIP_OK(hipGetLastError());
  hipLaunchKernelGGL(scale, dim3((n + 127) / 128), dim3(128), 0, 0, d, 0.5f, n);
  HIP_OK(hipGetLastError());
  HIP_OK(hipMemcpy(got.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    CHECK(got[i] == host[i] * 3.0f * 0.5f, "scale: element %d is %f, expected %f", i, got[i], host[i] * 1.5f);
  HIP_OK(hipFree(d));
  printf("[kernels] <<<>>> and hipLaunchKernelGGL: ok\n");
}

template <typename T>
static void CheckAxpy(const char* type) {
  const int n = 5000;
  std::vector<T> x(n), y(n), got(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<T>(i % 13);
    y[i] = static_cast<T>(i % 7);
  }
  T *dx = nullptr, *dy = nullptr;
  HIP_OK(hipMalloc(&dx, n * sizeof(T)));
  HIP_OK(hipMalloc(&dy, n * sizeof(T)));
  HIP_OK(hipMemcpy(dx, x.data(), n * sizeof(T), hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(dy, y.data(), n * sizeof(T), hipMemcpyHostToDevice));
  axpy<T><<<(n + 63) / 64, 64>>>(static_cast<T>(3), dx, dy, n);
  HIP_OK(hipGetLastError());
  HIP_OK(hipMemcpy(got.data(), dy, n * sizeof(T), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    CHECK(got[i] == static_cast<T>(3) * x[i] + y[i], "axpy<%s>: element %d wrong", type, i);
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
  printf("[kernels] template axpy<%s>: ok\n", type);
}

static void CheckReduction() {
  const int n = 1 << 18;
  std::vector<int> host(n);
  unsigned long long want = 0;
  for (int i = 0; i < n; ++i) {
    host[i] = (i * 7919) % 1000;
    want += static_cast<unsigned long long>(host[i]);
  }
  int* d = nullptr;
  unsigned long long* sum = nullptr;
  HIP_OK(hipMalloc(&d, n * sizeof(int)));
  HIP_OK(hipMalloc(&sum, sizeof *sum));
  HIP_OK(hipMemcpy(d, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
  HIP_OK(hipMemset(sum, 0, sizeof *sum));
  block_sum<<<n / 256, 256>>>(d, n, sum);
  HIP_OK(hipGetLastError());
  unsigned long long got = 0;
  HIP_OK(hipMemcpy(&got, sum, sizeof got, hipMemcpyDeviceToHost));
  CHECK(got == want, "block_sum: %llu, expected %llu", got, want);
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(sum));
  printf("[kernels] shared-memory reduction with __syncthreads and atomicAdd over %d blocks: ok\n", n / 256);
}

static void CheckMixedArgs() {
  const int threads = 64;
  std::vector<int> in(threads);
  for (int k = 0; k < threads; ++k) in[k] = k * 3 - 40;
  int* din = nullptr;
  double* dout = nullptr;
  HIP_OK(hipMalloc(&din, threads * sizeof(int)));
  HIP_OK(hipMalloc(&dout, threads * sizeof(double)));
  HIP_OK(hipMemcpy(din, in.data(), threads * sizeof(int), hipMemcpyHostToDevice));
  Params p{0.125, -3, 'x', {1.5f, -2.25f, 4.0f}};
  const char c = -7;
  const short s = 1234;
  const int i = -100000;
  const long long ll = 1ll << 40;
  const float f = 0.75f;
  const double d = -1e-3;
  const unsigned char u8 = 250;
  mixed_args<<<1, threads>>>(c, s, i, ll, f, d, p, u8, din, dout);
  HIP_OK(hipGetLastError());
  std::vector<double> got(threads);
  HIP_OK(hipMemcpy(got.data(), dout, threads * sizeof(double), hipMemcpyDeviceToHost));
  for (int k = 0; k < threads; ++k) {
    double want = c + s + i + static_cast<double>(ll) + f + d + p.bias + p.scale * in[k] + p.tag + p.weights[0] +
                  p.weights[1] * 2 + p.weights[2] * 3 + u8;
    CHECK(got[k] == want, "mixed_args: thread %d got %.17g, expected %.17g", k, got[k], want);
  }
  HIP_OK(hipFree(din));
  HIP_OK(hipFree(dout));
  printf("[kernels] by-value struct and mixed argument sizes: ok\n");
}

static void CheckDynamicShared() {
  const int block = 128, blocks = 40, n = block * blocks;
  std::vector<float> in(n), got(n);
  for (int i = 0; i < n; ++i) in[i] = static_cast<float>(i);
  float *din = nullptr, *dout = nullptr;
  HIP_OK(hipMalloc(&din, n * sizeof(float)));
  HIP_OK(hipMalloc(&dout, n * sizeof(float)));
  HIP_OK(hipMemcpy(din, in.data(), n * sizeof(float), hipMemcpyHostToDevice));
  reverse_blocks<<<blocks, block, block * sizeof(float)>>>(din, dout);
  HIP_OK(hipGetLastError());
  HIP_OK(hipMemcpy(got.data(), dout, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < block; ++t)
      CHECK(got[b * block + t] == in[b * block + block - 1 - t], "reverse_blocks: block %d thread %d", b, t);
  HIP_OK(hipFree(din));
  HIP_OK(hipFree(dout));
  printf("[kernels] dynamic shared memory: ok\n");
}

static void CheckSymbols() {
  float coef[4] = {};
  HIP_OK(hipMemcpyFromSymbol(coef, HIP_SYMBOL(coefficients), sizeof coef));
  CHECK(coef[0] == 1.0f && coef[3] == 4.0f, "initial coefficients %f %f %f %f", coef[0], coef[1], coef[2], coef[3]);
  int start = 0;
  HIP_OK(hipMemcpyFromSymbol(&start, HIP_SYMBOL(counter), sizeof start));
  CHECK(start == 5, "initial counter %d, expected 5", start);
  size_t size = 0;
  HIP_OK(hipGetSymbolSize(&size, HIP_SYMBOL(coefficients)));
  CHECK(size == sizeof coef, "hipGetSymbolSize(coefficients) = %zu", size);
  void* address = nullptr;
  HIP_OK(hipGetSymbolAddress(&address, HIP_SYMBOL(counter)));
  CHECK(address != nullptr, "hipGetSymbolAddress(counter) is null");
  e2e::CheckNotHostAccessible(address, sizeof(int), "__device__ counter");

  const float fresh[4] = {0.5f, -1.0f, 0.25f, 2.0f};
  HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(coefficients), fresh, sizeof fresh));
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i % 10) * 0.5f;
  float *dx = nullptr, *dy = nullptr;
  HIP_OK(hipMalloc(&dx, n * sizeof(float)));
  HIP_OK(hipMalloc(&dy, n * sizeof(float)));
  HIP_OK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  polynomial<<<(n + 255) / 256, 256>>>(dx, dy, n);
  HIP_OK(hipGetLastError());
  HIP_OK(hipMemcpy(y.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    float v = x[i];
    float want = fresh[0] + v * (fresh[1] + v * (fresh[2] + v * fresh[3]));
    CHECK(y[i] == want, "polynomial: element %d is %f, expected %f", i, y[i], want);
  }
  int after = 0;
  HIP_OK(hipMemcpy(&after, address, sizeof after, hipMemcpyDeviceToHost));  // Through the address.
  CHECK(after == 5 + n, "counter after the launch is %d, expected %d", after, 5 + n);
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
  printf("[kernels] __constant__ and __device__ variables through symbols: ok\n");
}

static void CheckLaunchErrors() {
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, 1024 * sizeof(int)));
  // As native HIP (clr's launch validation): over the kernel's own limit is
  // a launch failure, over the device's an invalid configuration.
  bounded<<<1, 256>>>(d);  // __launch_bounds__(128).
  hipError_t e = hipGetLastError();
  CHECK(e == hipErrorLaunchFailure, "a launch over __launch_bounds__ returned %s", e2e::ErrName(e));
  bounded<<<1, 2048>>>(d);  // Over the device's 1024.
  hipError_t e2 = hipGetLastError();
  CHECK(e2 == hipErrorInvalidConfiguration, "a launch of 2048 threads per block returned %s", e2e::ErrName(e2));
  bounded<<<1, 128>>>(d);
  HIP_OK(hipGetLastError());
  HIP_OK(hipDeviceSynchronize());  // The refused launches left no deferred error.
  HIP_OK(hipFree(d));
  printf("[kernels] over-limit blocks refused by the launch: %s, %s\n", e2e::ErrName(e), e2e::ErrName(e2));
}

int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "--printf") == 0) {
    say_hello<<<2, 64>>>(42);
    HIP_OK(hipGetLastError());
    HIP_OK(hipDeviceSynchronize());
    printf("[kernels] synchronized after say_hello\n");
    return e2e::Finish("kernels-printf");
  }
  CheckScale();
  CheckAxpy<float>("float");
  CheckAxpy<int>("int");
  CheckAxpy<double>("double");
  CheckReduction();
  CheckMixedArgs();
  CheckDynamicShared();
  CheckSymbols();
  CheckLaunchErrors();
  return e2e::Finish("kernels");
}
