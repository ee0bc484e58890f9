// hipr-bench-launch: kernel launch figures through the stub, each beside a
// raw TCP ping-pong measured in the same run, interleaved, as medians (the
// ping-pong polls before it sleeps, as hipr does: RawPeer::SpinPing):
//   - the async launch rate: how fast the client issues empty-kernel
//     launches (the calls alone; the device catches up afterwards);
//   - a loop of 1,000 empty launches + one hipDeviceSynchronize, end to end,
//     as a multiple of one raw round trip (it costs a handful of round trips
//     at most, never one per launch);
//   - the same 1,000 launches captured once into a graph, then launched as
//     one graph + one hipDeviceSynchronize: as a multiple of the round trip
//     and of the plain loop.
// `--inproc-us T` adds the loop's time T (microseconds) through an
// in-process sim device (hipr-bench-inproc, run by bench/run-launch-bench)
// to compare the remote loop with.
// `hipr-bench-launch --loop-once [N]` runs one such loop (or N) and exits,
// for counting its round trips with HIPR_STATS=1 (bench/run-launch-bench
// does both) or for profiling the loop alone.
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

void Launches(hipStream_t stream) {
  for (int i = 0; i < kLoopLaunches; ++i) hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(1), 0, stream);
  Check(hipGetLastError(), "launch");
}

void Loop() {
  Launches(nullptr);
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
}

// The loop's launches captured once (on a stream of its own: the legacy null
// stream cannot capture).
hipGraphExec_t CaptureLoop() {
  hipStream_t s;
  Check(hipStreamCreateWithFlags(&s, hipStreamNonBlocking), "hipStreamCreateWithFlags");
  Check(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), "hipStreamBeginCapture");
  Launches(s);
  hipGraph_t graph;
  Check(hipStreamEndCapture(s, &graph), "hipStreamEndCapture");
  hipGraphExec_t exec;
  Check(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0), "hipGraphInstantiate");
  Check(hipGraphDestroy(graph), "hipGraphDestroy");
  Check(hipStreamDestroy(s), "hipStreamDestroy");
  return exec;
}

void GraphLoop(hipGraphExec_t exec) {
  Check(hipGraphLaunch(exec, nullptr), "hipGraphLaunch");
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--loop-once") == 0) {
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
    hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(1), 0, nullptr);  // Module load and shipping, once.
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize (warm-up)");
    const int loops = argc > 2 ? std::atoi(argv[2]) : 1;
    std::vector<double> times;
    for (int i = 0; i < loops; ++i) times.push_back(Seconds(Loop));
    std::printf("%d loop(s) of %d launches + hipDeviceSynchronize done, median %.1f us\n", loops, kLoopLaunches,
                Median(times) * 1e6);
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--graph-once") == 0) {
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
    hipGraphExec_t exec = CaptureLoop();
    GraphLoop(exec);  // Warm-up.
    GraphLoop(exec);
    std::printf("one graph of %d launches, launched twice, + hipDeviceSynchronize each\n", kLoopLaunches);
    return 0;
  }
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  double inproc_us = 0;
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--inproc-us") == 0) inproc_us = std::atof(argv[i + 1]);
  RawPeer peer;
  peer.Start(1 << 20);
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  Loop();  // Warm-up: the module's first use loads (and maybe ships) it.
  hipGraphExec_t exec = CaptureLoop();
  GraphLoop(exec);

  std::vector<double> issue, loop, graph, rtt;
  for (int r = 0; r < rounds; ++r) {
    issue.push_back(Seconds([&] {
      for (int i = 0; i < kRateLaunches; ++i) hipLaunchKernelGGL(empty_kernel, dim3(1), dim3(1), 0, nullptr);
    }));
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
    loop.push_back(Seconds(Loop));
    graph.push_back(Seconds([&] { GraphLoop(exec); }));
    rtt.push_back(Seconds([&] {
      for (int i = 0; i < kPings; ++i) peer.SpinPing();
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
  std::printf("%-46s %9.2f ms %9.1f us %8.1fx\n", "1,000 launches + sync vs raw TCP round trip", l * 1e3, t * 1e6,
              l / t);
  const double g = Median(graph);
  std::printf("%-46s %9.2f ms %9.1f us %8.1fx\n", "graph of 1,000 launches + sync vs raw round trip", g * 1e3,
              t * 1e6, g / t);
  std::printf("%-46s %9.2f ms %9.2f ms %8.3fx\n", "graph vs the plain 1,000-launch loop", g * 1e3, l * 1e3, g / l);
  if (inproc_us > 0)
    std::printf("%-46s %9.2f ms %9.2f ms %8.2fx\n", "remote loop vs in-process sim device loop", l * 1e3,
                inproc_us * 1e-3, l / (inproc_us * 1e-6));
  Check(hipGraphExecDestroy(exec), "hipGraphExecDestroy");
  return 0;
}
