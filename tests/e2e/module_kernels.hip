// module_kernels.co: device code loaded at run time with hipModuleLoad /
// hipModuleLoadData by module_api (built with `hipcc --genco`).
#include <hip/hip_runtime.h>

__device__ float module_scale = 2.0f;

extern "C" __global__ void add_vec(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

// c[i] = module_scale * a[i] + offset; a char and a double exercise padding.
extern "C" __global__ void scaled_add(const float* a, char pad, double offset, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = module_scale * a[i] + static_cast<float>(offset) + pad;
}

// No bounds check on purpose: launched with a partial last block, only the
// threads that exist write (their block's size, at the position a full-size
// block of `stride` threads would give them).
extern "C" __global__ void mark_threads(int* out, int stride) {
  out[blockIdx.x * stride + threadIdx.x] = blockDim.x;
}
