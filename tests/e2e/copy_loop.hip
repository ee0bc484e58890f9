// copy_loop: 64 MiB round trips, verified, until told to stop or the link
// breaks. The driver kills the worker (or the session process) mid-run and
// expects the program to notice, not hang and not crash.
//
// Usage: copy_loop [--iterations N] [--max-seconds S]
//   N = 0 (default): loop until a HIP error; exit codes (common.h):
//     kExitLinkLost (3)       a call returned hipErrorNoDevice, and so did a
//                             later call, at once (the session is dead);
//     kExitOtherHipError (4)  another HIP error;
//     kExitNoError (5)        S seconds (default 120) passed without error.
//   N > 0: N verified round trips, then the maps checks and exit 0.
// Prints "E2E_LOOPING <pid>" after the first verified round trip.
#include <vector>

#include "common.h"

namespace {

constexpr size_t kBytes = size_t{64} << 20;

// Returns the first failing call's error, or hipSuccess; fails the program
// if the bytes come back wrong.
hipError_t RoundTrip(uint8_t* d, std::vector<uint8_t>& src, std::vector<uint8_t>& got, uint64_t round) {
  // A fresh stamp each round so a stale device buffer cannot pass.
  memcpy(src.data(), &round, sizeof round);
  hipError_t e = hipMemcpy(d, src.data(), kBytes, hipMemcpyHostToDevice);
  if (e != hipSuccess) return e;
  memset(got.data(), 0, 4096);
  e = hipMemcpy(got.data(), d, kBytes, hipMemcpyDeviceToHost);
  if (e != hipSuccess) return e;
  if (memcmp(got.data(), src.data(), kBytes) != 0) {
    size_t i = 0;
    while (got[i] == src[i]) ++i;
    e2e::Fail(__FILE__, __LINE__, "round %llu: byte %zu is 0x%02x, expected 0x%02x",
              static_cast<unsigned long long>(round), i, got[i], src[i]);
  }
  return hipSuccess;
}

}  // namespace

int main(int argc, char** argv) {
  long iterations = 0;
  double max_seconds = 120;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = strtol(argv[++i], nullptr, 10);
    } else if (strcmp(argv[i], "--max-seconds") == 0 && i + 1 < argc) {
      max_seconds = strtod(argv[++i], nullptr);
    } else {
      fprintf(stderr, "usage: %s [--iterations N] [--max-seconds S]\n", argv[0]);
      return 2;
    }
  }
  std::vector<uint8_t> src(kBytes), got(kBytes);
  e2e::FillPattern(src.data(), kBytes, 0xc0ffee);
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, kBytes));
  e2e::CheckNotHostAccessible(d, kBytes, "copy buffer");

  const double start = e2e::NowSeconds();
  double last_ok = start;
  for (uint64_t round = 1;; ++round) {
    hipError_t e = RoundTrip(static_cast<uint8_t*>(d), src, got, round);
    double now = e2e::NowSeconds();
    if (e != hipSuccess) {
      printf("E2E_HIP_ERROR %s after %llu verified rounds, %.3f s after the last good round\n", e2e::ErrName(e),
             static_cast<unsigned long long>(round - 1), now - last_ok);
      fflush(stdout);
      if (e != hipErrorNoDevice) return e2e::kExitOtherHipError;
      // The session is dead for good: later calls fail at once, the same way.
      double t0 = e2e::NowSeconds();
      void* p = nullptr;
      hipError_t again = hipMalloc(&p, 4096);
      hipError_t sync = hipDeviceSynchronize();
      double took = e2e::NowSeconds() - t0;
      CHECK(again == hipErrorNoDevice, "hipMalloc after the link loss returned %s", e2e::ErrName(again));
      CHECK(sync == hipErrorNoDevice, "hipDeviceSynchronize after the link loss returned %s", e2e::ErrName(sync));
      CHECK(took < 2.0, "calls after the link loss took %.3f s", took);
      e2e::CheckMapsClean();
      printf("E2E_LINK_LOST\n");
      fflush(stdout);
      return e2e::kExitLinkLost;
    }
    last_ok = now;
    if (round == 1) {
      printf("E2E_LOOPING %d\n", static_cast<int>(getpid()));
      fflush(stdout);
    }
    if (iterations > 0 && static_cast<long>(round) >= iterations) break;
    if (iterations == 0 && now - start > max_seconds) {
      printf("E2E_NO_ERROR after %llu rounds in %.1f s\n", static_cast<unsigned long long>(round), now - start);
      fflush(stdout);
      return e2e::kExitNoError;
    }
  }
  HIP_OK(hipFree(d));
  printf("[copy_loop] %ld verified round trips of 64 MiB\n", iterations);
  return e2e::Finish("copy_loop");
}
