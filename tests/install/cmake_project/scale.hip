// The second translation unit: its own code object, so its own twin.
#include <hip/hip_runtime.h>

#include "offset.h"

__global__ void scale(int* data, int n, int factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = add_offset(data[i] * factor);
}

hipError_t launch_scale(int* data, int n, int factor) {
  hipLaunchKernelGGL(scale, dim3((n + 63) / 64), dim3(64), 0, 0, data, n, factor);
  return hipGetLastError();
}
