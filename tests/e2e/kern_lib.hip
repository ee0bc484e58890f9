// libkern.so: a kernel library. Linked by kernel_user as a DT_NEEDED
// dependency, so its constructor registers its fat binary
// (__hipRegisterFatBinary / __hipRegisterFunction) before the stub's own
// constructors have run.
#include <hip/hip_runtime.h>

__global__ void e2e_scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}

template <typename T>
__global__ void e2e_fill(T* data, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = value;
}
template __global__ void e2e_fill<int>(int*, int, int);

// Launches e2e_scale over n floats; returns hipGetLastError() after the launch.
extern "C" hipError_t kern_launch_scale(float* data, float factor, int n) {
  e2e_scale<<<dim3((n + 255) / 256), dim3(256), 0, 0>>>(data, factor, n);
  return hipGetLastError();
}

// Launches e2e_fill<int> through hipLaunchKernelGGL.
extern "C" hipError_t kern_launch_fill(int* data, int value, int n) {
  hipLaunchKernelGGL(e2e_fill<int>, dim3((n + 255) / 256), dim3(256), 0, 0, data, value, n);
  return hipGetLastError();
}
