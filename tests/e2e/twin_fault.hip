// twin_fault: kernels that access shared memory past its end. A GPU drops
// or faults such an access; the sim runs the kernel's twin on the host,
// where it is a SIGSEGV, and the session must end with an error that names
// the kernel, the block, the thread and the address, in the client's log
// and the worker's (run_e2e.py, scenario twin_fault, reads both), while the
// worker goes on serving other sessions.
//
//   twin_fault dynamic   one past the end of the launch's dynamic shared
//                        memory (extern __shared__), from thread 3 of
//                        block (1, 0, 0)
//   twin_fault static    one past the end of a __shared__ array, from
//                        thread 5 of block (0, 1, 0)
#include "common.h"

__global__ void write_past_dynamic_shared(int* out, int count) {
  extern __shared__ int buf[];
  buf[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (blockIdx.x == 1 && threadIdx.x == 3) buf[count] = 1;  // `count` ints were asked for.
  out[blockIdx.x * blockDim.x + threadIdx.x] = buf[threadIdx.x];
}

__global__ void write_past_static_shared(int* out, int index) {
  __shared__ int tile[64];
  tile[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (blockIdx.y == 1 && threadIdx.x == 5) tile[index] = 1;  // `index` is 64.
  out[(blockIdx.y * gridDim.x + blockIdx.x) * blockDim.x + threadIdx.x] = tile[threadIdx.x];
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "dynamic";
  const bool dynamic = strcmp(mode, "dynamic") == 0;
  CHECK(dynamic || strcmp(mode, "static") == 0, "unknown mode '%s'", mode);
  const int threads = 64;
  int* out = nullptr;
  HIP_OK(hipMalloc(&out, 2 * threads * sizeof(int)));
  if (dynamic)
    hipLaunchKernelGGL(write_past_dynamic_shared, dim3(2), dim3(threads), threads * sizeof(int), 0, out, threads);
  else
    hipLaunchKernelGGL(write_past_static_shared, dim3(1, 2), dim3(threads), 0, 0, out, threads);
  // The launch is queued; the fault ends the session, so the next call
  // that waits for the device reports it.
  const hipError_t e = hipDeviceSynchronize();
  CHECK(e != hipSuccess, "hipDeviceSynchronize after a kernel that faulted returned hipSuccess");
  printf("[twin_fault] %s: hipDeviceSynchronize returned %s\n", mode, e2e::ErrName(e));
  const hipError_t after = hipMalloc(&out, 16);
  CHECK(after == hipErrorNoDevice, "a call after the session ended returned %s, expected hipErrorNoDevice",
        e2e::ErrName(after));
  return e2e::Finish("twin_fault");
}
