// hipr-bench-launch: kernel launch figures through the stub, each beside a
// raw TCP ping-pong measured in the same run, interleaved, as medians:
//   - the async launch rate: how fast the client issues empty-kernel
//     launches (the calls alone; the device catches up afterwards);
//   - a loop of 1,000 empty launches + one hipDeviceSynchronize, end to end,
//     as a multiple of one raw round trip (it costs a handful of round trips
//     at most, never one per launch).
// `hipr-bench-launch --loop-once` runs one such loop and exits, for counting
// its round trips with HIPR_STATS=1 (bench/run-launch-bench does both).
// Built with hipcc; on a sim worker the kernel runs through its twin.
#include <hip/hip_runtime.h>

#include <cstring>

#include "bench_util.h"

using namespace hipr_bench;

__global__ void empty_kernel() {}

namespace {

constexpr int kRateLaunches = 10000;
constexpr int kLoopLaunches = 1000;
constexpr int kPings = 2000;

void Loop() {
  for (int i = 0; i < kLoopLaunches; ++i) hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(1), 0, nullptr);
  Check(hipGetLastError(), "launch");
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--loop-once") == 0) {
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
    hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(1), 0, nullptr);  // Module load and shipping, once.
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize (warm-up)");
    Loop();
    std::printf("one loop of %d launches + hipDeviceSynchronize done\n", kLoopLaunches);
    return 0;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  RawPeer peer;
  peer.Start(1 << 20);
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  Loop();  // Warm-up: the module's first use loads (and maybe ships) it.

  std::vector<double> issue, loop, rtt;
  for (int r = 0; r < rounds; ++r) {
    issue.push_back(Seconds([&] {
      for (int i = 0; i < kRateLaunches; ++i) hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(1), 0, nullptr);
    }));
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
    loop.push_back(Seconds(Loop));
    rtt.push_back(Seconds([&] {
      for (int i = 0; i < kPings; ++i) peer.Ping();
    }) / kPings);
  }
  peer.Stop();
  const double rate = kRateLaunches / Median(issue);
  const double per_launch = Median(issue) / kRateLaunches;
  const double l = Median(loop);
  const double t = Median(rtt);
  std::printf("%d interleaved rounds, medians\n", rounds);
  std::printf("%-46s %12s %12s %9s\n", "figure", "hipr", "baseline", "ratio");
  std::printf("%-46s %9.2f us %9.1f us %8.3fx\n", "async launch call vs raw TCP round trip", per_launch * 1e6,
              t * 1e6, per_launch / t);
  std::printf("%-46s %9.0f /s\n", "async launch rate (calls only)", rate);
  std::printf("%-46s %9.1f ms %9.1f us %8.1fx\n", "1,000 launches + sync vs raw TCP round trip", l * 1e3, t * 1e6,
              l / t);
  return 0;
}
