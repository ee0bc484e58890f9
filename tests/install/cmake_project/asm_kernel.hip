// asm_kernel: a kernel with GCN inline assembly, which a twin cannot
// express; the program builds, its twin does not.
#include <hip/hip_runtime.h>

#include <cstdio>

__global__ void lane_mask(unsigned* out) {
  unsigned v;
  asm volatile("v_mov_b32 %0, 1" : "=v"(v));
  out[threadIdx.x] = v;
}

int main() {
  unsigned* d = nullptr;
  if (hipMalloc(&d, 64 * sizeof(unsigned)) != hipSuccess) return 1;
  hipLaunchKernelGGL(lane_mask, dim3(1), dim3(64), 0, 0, d);
  hipError_t err = hipDeviceSynchronize();
  std::printf("asm_kernel: %s\n", hipGetErrorString(err));
  return err == hipSuccess ? 0 : 1;
}
