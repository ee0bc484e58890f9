// Copies to and from hipHostMalloc memory, 64 MiB each way, sync and async,
// whole and 2-D, every byte checked; then an async copy from pinned memory
// freed at once (hipHostFree must let the copy read it first). Over the shm
// transport that memory lies in the host segment and no copy's bytes cross
// the rings: run_e2e.py's pinned_copies scenario reads the stub's byte
// counts (HIPR_STATS=1) to check it, and runs the same over tcp, where they
// must cross.
#include <hip/hip_runtime.h>

#include <cstring>
#include <vector>

#include "common.h"

namespace {
constexpr size_t kMiB = size_t{1} << 20;
}

int main() {
  const size_t n = 64 * kMiB;
  uint8_t* dev = nullptr;
  HIP_OK(hipMalloc(&dev, n));
  void* src = nullptr;
  void* dst = nullptr;
  HIP_OK(hipHostMalloc(&src, n, hipHostMallocDefault));
  HIP_OK(hipHostMalloc(&dst, n, hipHostMallocDefault));

  e2e::FillPattern(src, n, 71);
  HIP_OK(hipMemcpy(dev, src, n, hipMemcpyHostToDevice));
  memset(dst, 0, n);
  HIP_OK(hipMemcpy(dst, dev, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(static_cast<uint8_t*>(dst), n, 71, "blocking pinned H2D then D2H");

  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  e2e::FillPattern(src, n, 72);
  memset(dst, 0, n);
  HIP_OK(hipMemcpyAsync(dev, src, n, hipMemcpyHostToDevice, s));
  HIP_OK(hipMemcpyAsync(dst, dev, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(static_cast<uint8_t*>(dst), n, 72, "async pinned H2D then D2H, one stream");

  // 2-D: 1000 rows of 3000 bytes, the host rows 4096 apart.
  const size_t width = 3000, height = 1000, hpitch = 4096;
  e2e::FillPattern(src, hpitch * height, 73);
  HIP_OK(hipMemcpy2D(dev, width, src, hpitch, width, height, hipMemcpyHostToDevice));
  memset(dst, 0xAB, hpitch * height);
  HIP_OK(hipMemcpy2D(dst, hpitch, dev, width, width, height, hipMemcpyDeviceToHost));
  for (size_t r = 0; r < height; ++r) {
    CHECK(memcmp(static_cast<uint8_t*>(dst) + r * hpitch, static_cast<uint8_t*>(src) + r * hpitch, width) == 0,
          "2-D pinned copy: row %zu differs", r);
    CHECK(static_cast<uint8_t*>(dst)[r * hpitch + width] == 0xAB, "2-D pinned copy wrote past row %zu", r);
  }

  // Freed right after an async copy from it: the copy still reads it.
  void* doomed = nullptr;
  HIP_OK(hipHostMalloc(&doomed, n, hipHostMallocDefault));
  e2e::FillPattern(doomed, n, 74);
  HIP_OK(hipMemcpyAsync(dev, doomed, n, hipMemcpyHostToDevice, s));
  HIP_OK(hipHostFree(doomed));
  std::vector<uint8_t> check(n);
  HIP_OK(hipMemcpy(check.data(), dev, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(check.data(), n, 74, "an async copy from pinned memory freed at once");

  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipHostFree(src));
  HIP_OK(hipHostFree(dst));
  HIP_OK(hipFree(dev));
  printf("[pinned_copies] all checks passed\n");
  return e2e::Finish("pinned_copies");
}
