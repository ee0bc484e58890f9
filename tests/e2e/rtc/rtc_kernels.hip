// Kernels that tests/e2e/rtc.hip compiles at run time with hiprtc (it reads
// this file and rtc_scale.h). The build compiles them the same way
// (hipr-rtc-compile, same options and name expressions) to make their sim
// twin; the two code objects are byte-identical, which is how the worker
// finds the twin. FACTOR comes from the compile options.
#include <hip/hip_runtime.h>

#include "rtc_scale.h"

template <typename T>
__global__ void scale(T* p, T factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = rtc_mul(p[i], factor) + T(FACTOR);
}

extern "C" __global__ void fill_roots(int* p, int base) {
  int i = threadIdx.x;
  p[i] = base + static_cast<int>(sqrtf(static_cast<float>(i)));
}
