// isolation: one of two clients running at once. Each writes patterns of its
// own seed into its allocations and verifies them, round after round; a
// byte of the other client's data (or a stale round) fails the check. The
// two sessions live in separate worker processes, so their device addresses
// may coincide; the data must not mix.
//
// Usage: isolation --seed S [--rounds R]
// Prints "E2E_ADDRS <seed> <addr>..." once allocated; under the driver it
// then waits for a go-ahead (E2E_READY) so both clients run their rounds
// at the same time.
#include <string>
#include <vector>

#include "common.h"

namespace {

constexpr size_t kSizes[] = {size_t{1} << 20, (size_t{3} << 20) + 5, size_t{8} << 20, 65535, 4096};
constexpr int kBuffers = sizeof kSizes / sizeof kSizes[0];

uint64_t SeedFor(uint64_t client_seed, int buffer, int round) {
  return e2e::Mix64(client_seed * 1000003 + static_cast<uint64_t>(buffer) * 131 + static_cast<uint64_t>(round));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seed = 0;
  int rounds = 20;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      seed = strtoull(argv[++i], nullptr, 10);
    } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: %s --seed S [--rounds R]\n", argv[0]);
      return 2;
    }
  }
  CHECK(seed != 0, "--seed is required");

  uint8_t* d[kBuffers];
  std::vector<uint8_t> host[kBuffers];
  std::string addrs;
  for (int b = 0; b < kBuffers; ++b) {
    void* p = nullptr;
    HIP_OK(hipMalloc(&p, kSizes[b]));
    d[b] = static_cast<uint8_t*>(p);
    e2e::CheckNotHostAccessible(p, kSizes[b], "isolation buffer");
    host[b].resize(kSizes[b]);
    e2e::FillPattern(host[b].data(), kSizes[b], SeedFor(seed, b, 0));
    HIP_OK(hipMemcpy(d[b], host[b].data(), kSizes[b], hipMemcpyHostToDevice));
    char buf[32];
    snprintf(buf, sizeof buf, " %p", p);
    addrs += buf;
  }
  printf("E2E_ADDRS %llu%s\n", static_cast<unsigned long long>(seed), addrs.c_str());
  fflush(stdout);
  e2e::Handshake("READY");

  hipStream_t stream = nullptr;
  HIP_OK(hipStreamCreate(&stream));
  std::vector<uint8_t> got;
  for (int round = 1; round <= rounds; ++round) {
    for (int b = 0; b < kBuffers; ++b) {
      const size_t n = kSizes[b];
      got.assign(n, 0);
      HIP_OK(hipMemcpy(got.data(), d[b], n, hipMemcpyDeviceToHost));
      std::string what = "seed " + std::to_string(seed) + " buffer " + std::to_string(b) + " before round " +
                         std::to_string(round);
      CHECK_PATTERN(got.data(), n, SeedFor(seed, b, round - 1), what.c_str());
      // Next round's bytes: half the rounds async on a stream.
      e2e::FillPattern(host[b].data(), n, SeedFor(seed, b, round));
      if (round % 2 == 0) {
        HIP_OK(hipMemcpyAsync(d[b], host[b].data(), n, hipMemcpyHostToDevice, stream));
      } else {
        HIP_OK(hipMemcpy(d[b], host[b].data(), n, hipMemcpyHostToDevice));
      }
    }
    HIP_OK(hipStreamSynchronize(stream));
    // A memset with a client-specific byte, checked, then restored.
    const uint8_t byte = static_cast<uint8_t>(seed * 37 + round);
    HIP_OK(hipMemset(d[0] + 4096, byte, 65536));
    got.assign(65536 + 8192, 0);
    HIP_OK(hipMemcpy(got.data(), d[0], got.size(), hipMemcpyDeviceToHost));
    CHECK(memcmp(got.data(), host[0].data(), 4096) == 0, "seed %llu round %d: bytes before the memset changed",
          static_cast<unsigned long long>(seed), round);
    CHECK_BYTES_EQUAL(got.data() + 4096, 65536, byte, "client memset");
    HIP_OK(hipMemcpy(d[0] + 4096, host[0].data() + 4096, 65536, hipMemcpyHostToDevice));
  }
  for (int b = 0; b < kBuffers; ++b) HIP_OK(hipFree(d[b]));
  HIP_OK(hipStreamDestroy(stream));
  printf("[isolation] seed %llu: %d rounds over %d buffers verified\n", static_cast<unsigned long long>(seed), rounds,
         kBuffers);
  return e2e::Finish("isolation");
}
