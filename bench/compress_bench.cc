// hipr-bench-compress: hipMemcpy H2D and D2H of compressible and
// incompressible data, for bench/run-compress-bench, which runs it once per
// setting (HIPR_COMPRESS on / off, interleaved) over a rate-limited link and
// takes medians across runs.
//
// Data (`bytes` each, pageable host memory, 1-D copies):
//   sparse  float32 activations after a ReLU: 3 of 4 values exactly 0 (at
//           random positions), the rest uniform in [0, 1);
//   noise   pseudo-random bytes (incompressible, like already-compressed or
//           encrypted data).
// Prints one line per copy: "COPY <h2d|d2h> <sparse|noise> <seconds>", each
// the median of `reps` copies after one warm-up copy.
//
// Usage: hipr-bench-compress [bytes] [reps]   (run under the stub)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "bench_util.h"

using namespace hipr_bench;

namespace {

std::vector<char> Sparse(size_t n) {
  std::vector<char> b(n, 0);
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> value(0.f, 1.f);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    if (rng() % 4 != 0) continue;
    const float f = value(rng);
    std::memcpy(&b[i], &f, 4);
  }
  return b;
}

std::vector<char> Noise(size_t n) {
  std::vector<char> b(n);
  std::mt19937_64 rng(7);
  for (size_t i = 0; i + 8 <= n; i += 8) {
    const uint64_t v = rng();
    std::memcpy(&b[i], &v, 8);
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : size_t{64} << 20;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 3;
  void* dev = nullptr;
  Check(hipMalloc(&dev, bytes), "hipMalloc");
  Check(hipMemset(dev, 0, bytes), "hipMemset");
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
  struct Data {
    const char* name;
    std::vector<char> bytes;
  };
  Data data[] = {{"sparse", Sparse(bytes)}, {"noise", Noise(bytes)}};
  std::vector<char> back(bytes);
  for (Data& d : data) {
    std::vector<double> up, down;
    for (int r = 0; r <= reps; ++r) {
      const double u = Seconds([&] { Check(hipMemcpy(dev, d.bytes.data(), bytes, hipMemcpyHostToDevice), "H2D"); });
      const double w = Seconds([&] { Check(hipMemcpy(back.data(), dev, bytes, hipMemcpyDeviceToHost), "D2H"); });
      if (r == 0) continue;  // Warm-up: page faults, TCP window growth.
      up.push_back(u);
      down.push_back(w);
    }
    if (std::memcmp(back.data(), d.bytes.data(), bytes) != 0) {
      std::fprintf(stderr, "%s: the bytes came back wrong\n", d.name);
      return 1;
    }
    std::printf("COPY h2d %s %.6f\n", d.name, Median(up));
    std::printf("COPY d2h %s %.6f\n", d.name, Median(down));
    std::fflush(stdout);
  }
  Check(hipFree(dev), "hipFree");
  return 0;
}
