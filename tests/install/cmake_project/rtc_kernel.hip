// Compiled at run time by rtc_app (hiprtc) with -DALPHA=2 and the name
// expression axpy<float>; the build compiles it the same way with
// hipr-rtc-compile, and the twin stands for that code object.
#include <hip/hip_runtime.h>

template <typename T>
__global__ void axpy(T* y, const T* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = T(ALPHA) * x[i] + y[i];
}
