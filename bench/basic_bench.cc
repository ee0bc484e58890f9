// hipr-bench-basic: the first figures, each beside its physical baseline
// measured in the same run on the same machine, interleaved (A B A B ...)
// and reported as medians:
//   - a synchronous null HIP call (hipDeviceSynchronize with nothing queued)
//     through the stub vs a raw TCP ping-pong of the same frame sizes with a
//     separate echo process, both sides polling up to 50 us before they
//     sleep as hipr's do (the like-for-like baseline), and vs one where both
//     sleep in recv() at once;
//   - hipMemcpy H2D and D2H of 256 MiB vs raw single-connection TCP
//     throughput of the same byte count to/from a separate process.
// Run under the stub against a worker (bench/run-basic-bench starts both).
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_util.h"

using namespace hipr_bench;

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int kCalls = 2000;
  const uint64_t kBytes = 256ull << 20;

  RawPeer peer;
  peer.Start(kBytes);  // Forked before this process allocates anything large.
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  hipDeviceProp_t prop;
  Check(hipGetDeviceProperties(&prop, 0), "hipGetDeviceProperties");
  void* dev = nullptr;
  Check(hipMalloc(&dev, kBytes), "hipMalloc");
  std::vector<char> host(kBytes, 7);

  std::vector<double> hip_rtt, raw_rtt, spin_rtt, hip_h2d, raw_up, hip_d2h, raw_down;
  for (int r = 0; r < rounds; ++r) {
    hip_rtt.push_back(Seconds([&] {
      for (int i = 0; i < kCalls; ++i) Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
    }) / kCalls);
    spin_rtt.push_back(Seconds([&] {
      for (int i = 0; i < kCalls; ++i) peer.SpinPing();
    }) / kCalls);
    raw_rtt.push_back(Seconds([&] {
      for (int i = 0; i < kCalls; ++i) peer.Ping();
    }) / kCalls);
    hip_h2d.push_back(Seconds([&] { Check(hipMemcpy(dev, host.data(), kBytes, hipMemcpyHostToDevice), "H2D"); }));
    raw_up.push_back(Seconds([&] { peer.Upload(host.data(), kBytes); }));
    hip_d2h.push_back(Seconds([&] { Check(hipMemcpy(host.data(), dev, kBytes, hipMemcpyDeviceToHost), "D2H"); }));
    raw_down.push_back(Seconds([&] { peer.Download(host.data(), kBytes); }));
  }
  peer.Stop();
  Check(hipFree(dev), "hipFree");

  auto gibps = [&](double s) { return static_cast<double>(kBytes) / s / (1ull << 30); };
  double a = Median(hip_rtt), b = Median(spin_rtt), c = Median(raw_rtt);
  std::printf("device: %s (%s), %d interleaved rounds, medians\n", prop.name, prop.gcnArchName, rounds);
  std::printf("%-34s %12s %12s %8s\n", "figure", "hipr", "baseline", "ratio");
  std::printf("%-34s %9.1f us %9.1f us %7.2fx\n", "null sync call vs raw TCP ping-pong", a * 1e6, b * 1e6, a / b);
  std::printf("%-34s %9.1f us %9.1f us %7.2fx\n", "  ... vs one sleeping in recv()", a * 1e6, c * 1e6, a / c);
  double h = gibps(Median(hip_h2d)), u = gibps(Median(raw_up));
  std::printf("%-34s %7.2f GiB/s %6.2f GiB/s %7.0f%%\n", "H2D 256 MiB vs raw TCP upload", h, u, 100 * h / u);
  double d = gibps(Median(hip_d2h)), w = gibps(Median(raw_down));
  std::printf("%-34s %7.2f GiB/s %6.2f GiB/s %7.0f%%\n", "D2H 256 MiB vs raw TCP download", d, w, 100 * d / w);
  return 0;
}
