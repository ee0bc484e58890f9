// Twin test program: a plain kernel, a template kernel instantiated for
// float and int, __constant__ and __device__ variables (several to a
// declaration too), device printf.
// Built by hipcc; sim_twin_test runs its kernels through the twin (main()
// is never run by the test: it only makes the instantiations exist).
#include <hip/hip_runtime.h>

#include <vector>

#include "twin_util.h"

__constant__ float kScale[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ int g_counter = 42;
namespace twin_test {
__device__ unsigned long long g_hits;  // Zero-initialised.
}  // namespace twin_test

// Host globals with static initialisers: never part of the twin.
static std::vector<float> g_host_data(16, 1.0f);
int g_host_calls = 0;

// Several declarators to a declaration: each device variable is its own
// code-object variable; the twin keeps the constant and the typedefs device
// code needs and drops the host variables beside them.
__device__ int g_lo = 5, g_hi[2] = {6, 7};
static const int kOne = 1, *g_one_ptr = &kOne;
static int g_host_a = 1, g_host_b = 2;
typedef struct {
  int lo, hi;
} Range, *RangePtr;

__global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = twin_test::GlobalIndex();
  if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
__global__ void fill(T* out, T value, int n) {
  int i = twin_test::GlobalIndex();
  if (i < n) out[i] = value + static_cast<T>(kScale[i % 4]);
}

__global__ void use_globals(int* out, int n) {
  int i = twin_test::GlobalIndex();
  if (i < n) {
    out[i] = g_counter + i;
    atomicAdd(&twin_test::g_hits, 1ull);
  }
}

__global__ void squares(float* data, int n) {
  int i = twin_test::GlobalIndex();
  if (i < n) data[i] = twin_test::Square(data[i]);
}

__global__ void use_pairs(int* out) {
  Range r = {g_lo + kOne, g_hi[1]};
  const RangePtr p = &r;
  out[0] = p->lo;
  out[1] = p->hi;
  out[2] = g_hi[0]++;
}

__global__ void hello(int tag) {
  printf("hello from thread %d of block %d, tag %d\n", static_cast<int>(threadIdx.x), static_cast<int>(blockIdx.x),
         tag);
}

int main() {
  const int n = 1000;
  float* x = nullptr;
  float* y = nullptr;
  int* iy = nullptr;
  twin_test::Check(hipMalloc(&x, n * sizeof(float)), "hipMalloc");
  twin_test::Check(hipMalloc(&y, n * sizeof(float)), "hipMalloc");
  twin_test::Check(hipMalloc(&iy, n * sizeof(int)), "hipMalloc");
  const int blocks = (n + twin_test::kBlock - 1) / twin_test::kBlock;
  saxpy<<<blocks, twin_test::kBlock>>>(n, 2.0f, x, y);
  fill<float><<<blocks, twin_test::kBlock>>>(y, 1.5f, n);
  fill<int><<<blocks, twin_test::kBlock>>>(iy, 7, n);
  use_globals<<<blocks, twin_test::kBlock>>>(iy, n);
  squares<<<blocks, twin_test::kBlock>>>(y, n);
  hello<<<2, 2>>>(5);
  twin_test::Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
  ++g_host_calls;
  g_host_a += g_host_b + *g_one_ptr;
  return g_host_data.empty() ? 1 : 0;
}
