// compress: byte-exact round trips of compressible and incompressible data,
// both ways, for the bulk lz4 scenarios (run_e2e.py compress_*), which read
// what the stub's stats and the worker's log say was compressed.
//
// Data, 24 MiB each:
//   sparse  float32 activations after a ReLU: 3 of 4 values exactly 0, the
//           rest uniform in [0, 1) (compressible: lz4 takes it to ~45%);
//   noise   pseudo-random bytes (incompressible).
// Copies: hipMemcpy H2D and D2H of each (1-D), then a pitched hipMemcpy2D of
// the sparse data (rows of 3000 bytes, 4096 apart on the device), and an
// async D2H into pinned memory.
#include <vector>

#include "common.h"

namespace {

constexpr size_t kBytes = size_t{24} << 20;

std::vector<uint8_t> Sparse(size_t n, uint64_t seed) {
  std::vector<uint8_t> b(n, 0);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    const uint64_t r = e2e::Mix64(seed + i);
    if (r % 4 != 0) continue;
    const float f = static_cast<float>((r >> 8) & 0xFFFFFF) / 16777216.0f;
    memcpy(&b[i], &f, 4);
  }
  return b;
}

void RoundTrip(const char* what, const std::vector<uint8_t>& src) {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, src.size()));
  HIP_OK(hipMemcpy(d, src.data(), src.size(), hipMemcpyHostToDevice));
  std::vector<uint8_t> got(src.size(), 0xEE);
  HIP_OK(hipMemcpy(got.data(), d, src.size(), hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), src.data(), src.size()) == 0, "%s: bytes differ after the round trip", what);
  // Pinned destination, asynchronous: lands by the synchronize.
  void* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, src.size(), 0));
  memset(pinned, 0xEE, src.size());
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipMemcpyAsync(pinned, d, src.size(), hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(memcmp(pinned, src.data(), src.size()) == 0, "%s: bytes differ after the async copy", what);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(d));
  printf("[compress] %s: %zu bytes round trip OK\n", what, src.size());
}

void Pitched(const std::vector<uint8_t>& src) {
  constexpr size_t kWidth = 3000, kPitch = 4096;
  const size_t rows = src.size() / kWidth;
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, rows * kPitch));
  HIP_OK(hipMemcpy2D(d, kPitch, src.data(), kWidth, kWidth, rows, hipMemcpyHostToDevice));
  std::vector<uint8_t> got(rows * kWidth, 0xEE);
  HIP_OK(hipMemcpy2D(got.data(), kWidth, d, kPitch, kWidth, rows, hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), src.data(), got.size()) == 0, "pitched: bytes differ after the round trip");
  HIP_OK(hipFree(d));
  printf("[compress] pitched: %zu rows of %zu bytes OK\n", rows, kWidth);
}

}  // namespace

int main() {
  const std::vector<uint8_t> sparse = Sparse(kBytes, 0x5eed);
  std::vector<uint8_t> noise(kBytes);
  e2e::FillPattern(noise.data(), noise.size(), 0xbadc0de);
  RoundTrip("sparse", sparse);
  RoundTrip("noise", noise);
  Pitched(sparse);
  return e2e::Finish("compress");
}
