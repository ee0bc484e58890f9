// Copies between two workers of one client (HIPR_SERVER=a,b): hipMemcpyPeer
// of SIZE bytes from device 0 (the first worker's) to device 1 (the
// second's) and back, beside a raw TCP upload of the same bytes on loopback
// (RawPeer, bench_util.h), interleaved in the same run. run-peer-bench runs
// it with the bytes going worker to worker and again with HIPR_PEER_COPY=0
// (through the client).
// Usage: hipr-bench-peer [rounds] [MiB]
#include <string>

#include "bench_util.h"

using namespace hipr_bench;

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const size_t bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 256) << 20;
  int count = 0;
  Check(hipGetDeviceCount(&count), "hipGetDeviceCount");
  if (count < 2) {
    std::fprintf(stderr, "hipr-bench-peer: needs two devices (HIPR_SERVER=a,b), has %d\n", count);
    return 1;
  }
  RawPeer peer;
  peer.Start(bytes);
  std::vector<char> host(bytes, 1);
  void* a = nullptr;
  void* b = nullptr;
  Check(hipSetDevice(0), "hipSetDevice");
  Check(hipMalloc(&a, bytes), "hipMalloc");
  Check(hipMemset(a, 7, bytes), "hipMemset");
  Check(hipSetDevice(1), "hipSetDevice");
  Check(hipMalloc(&b, bytes), "hipMalloc");
  Check(hipMemset(b, 9, bytes), "hipMemset");
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
  Check(hipMemcpyPeer(b, 1, a, 0, bytes), "hipMemcpyPeer (warm-up)");
  std::vector<double> there, back, raw;
  for (int r = 0; r < rounds; ++r) {
    there.push_back(Seconds([&] { Check(hipMemcpyPeer(b, 1, a, 0, bytes), "hipMemcpyPeer 0->1"); }));
    back.push_back(Seconds([&] { Check(hipMemcpyPeer(a, 0, b, 1, bytes), "hipMemcpyPeer 1->0"); }));
    raw.push_back(Seconds([&] { peer.Upload(host.data(), bytes); }));
  }
  const char* how = std::getenv("HIPR_PEER_COPY");
  const std::string path = how != nullptr && std::string(how) == "0" ? "through the client" : "worker to worker";
  const double mib = static_cast<double>(bytes) / (1 << 20);
  const double rr = Median(raw);
  std::printf("%d rounds of %zu MiB, medians; peer copies %s\n", rounds, bytes >> 20, path.c_str());
  std::printf("%-36s %12s %12s %8s\n", "copy", "MiB/s", "raw TCP", "ratio");
  for (const auto& [label, v] : {std::pair<const char*, double>{"hipMemcpyPeer device 0 -> 1", Median(there)},
                                 std::pair<const char*, double>{"hipMemcpyPeer device 1 -> 0", Median(back)}})
    std::printf("%-36s %12.0f %12.0f %7.2fx\n", label, mib / v, mib / rr, rr / v);
  Check(hipFree(b), "hipFree");
  Check(hipSetDevice(0), "hipSetDevice");
  Check(hipFree(a), "hipFree");
  peer.Stop();
  return 0;
}
