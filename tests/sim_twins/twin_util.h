// Helpers shared by the twin test programs: device functions the twins keep,
// and host code (a HIP error check) the rewriter must drop from them.
#pragma once

#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace twin_test {

constexpr int kBlock = 256;

__device__ inline int GlobalIndex() { return static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); }

__host__ __device__ inline float Square(float x) { return x * x; }

// Host only: calls the HIP runtime, which twins have not got.
inline void Check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    fprintf(stderr, "%s: %s\n", what, hipGetErrorString(e));
    exit(1);
  }
}

}  // namespace twin_test
