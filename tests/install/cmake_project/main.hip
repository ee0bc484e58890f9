// scale_app: kernels in two translation units (main.hip, scale.hip), each
// with its own code object and twin; OFFSET from the program's flags.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

#include "offset.h"

hipError_t launch_scale(int* data, int n, int factor);

__global__ void iota(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = add_offset(i);
}

#define CHECK(expr)                                                                 \
  do {                                                                              \
    hipError_t err_ = (expr);                                                       \
    if (err_ != hipSuccess) {                                                       \
      std::fprintf(stderr, "FAIL %s: %s\n", #expr, hipGetErrorString(err_));        \
      return 1;                                                                     \
    }                                                                               \
  } while (0)

int main() {
  const int n = 1000;
  int* d = nullptr;
  CHECK(hipMalloc(&d, n * sizeof(int)));
  hipLaunchKernelGGL(iota, dim3((n + 63) / 64), dim3(64), 0, 0, d, n);
  CHECK(hipGetLastError());
  CHECK(launch_scale(d, n, 3));
  std::vector<int> h(n);
  CHECK(hipMemcpy(h.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  CHECK(hipFree(d));
  for (int i = 0; i < n; ++i) {
    const int want = (i + OFFSET) * 3 + OFFSET;
    if (h[i] != want) {
      std::fprintf(stderr, "FAIL element %d: %d, want %d\n", i, h[i], want);
      return 1;
    }
  }
  std::printf("scale_app: PASS (%d elements)\n", n);
  return 0;
}
