// api_table_memory: one row per hand-written memory function (allocation,
// copies, memsets, host memory, symbols), against a sim worker with two
// devices; see api_table.h. Linked against the stub for the 6.x additions.
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "api_table.h"

// For the symbol rows (hipMemcpyToSymbol, hipGetSymbolAddress, ...).
__device__ int g_symbol[64];

__global__ void DoubleSymbol(int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) g_symbol[i] *= 2;
}

namespace {

void Malloc() {
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 1u << 20));
  CHECK(p != nullptr, "hipMalloc gave a null pointer");
  size_t free_after = 0, total = 0;
  HIP_OK(hipMemGetInfo(&free_after, &total));
  HIP_EXPECT(hipMalloc(nullptr, 16), hipErrorInvalidValue);
  void* huge = reinterpret_cast<void*>(0x1);
  HIP_EXPECT(hipMalloc(&huge, total + (1ull << 30)), hipErrorOutOfMemory);
  HIP_OK(hipFree(p));
}

void Free() {
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 4096));
  HIP_OK(hipFree(p));
  HIP_OK(hipFree(nullptr));  // As CUDA: freeing null is a no-op.
  // A second free of the same pointer is an error, not a crash.
  HIP_EXPECT(hipFree(p), hipErrorInvalidValue);
}

void MemGetInfo() {
  size_t free_before = 0, total = 0, free_after = 0;
  HIP_OK(hipMemGetInfo(&free_before, &total));
  CHECK(free_before > 0 && free_before <= total, "free %zu of %zu", free_before, total);
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 64u << 20));
  HIP_OK(hipMemGetInfo(&free_after, &total));
  CHECK(free_after + (64u << 20) <= free_before, "free %zu -> %zu after 64 MiB", free_before, free_after);
  HIP_OK(hipFree(p));
}

const e2e::Row kRows[] = {
    {"hipMalloc", Malloc},
    {"hipFree", Free},
    {"hipMemGetInfo", MemGetInfo},
};

}  // namespace

int main() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == 2, "expected a worker with two sim devices, got %d", count);
  return e2e::RunRows("api_table_memory", kRows);
}
