// The kernels: each thread adds WIDTH consecutive elements.
#include <hip/hip_runtime.h>

#include "width.h"

__global__ void vadd(const float* a, const float* b, float* c, int n) {
  int first = (blockIdx.x * blockDim.x + threadIdx.x) * WIDTH;
  for (int k = 0; k < WIDTH; ++k) {
    if (first + k < n) c[first + k] = a[first + k] + b[first + k];
  }
}

hipError_t launch_vadd(const float* a, const float* b, float* c, int n) {
  int threads = (n + WIDTH - 1) / WIDTH;
  hipLaunchKernelGGL(vadd, dim3((threads + 127) / 128), dim3(128), 0, 0, a, b, c, n);
  return hipGetLastError();
}
