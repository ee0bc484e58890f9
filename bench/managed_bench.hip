// hipr-bench-managed: what managed memory costs through hipr, each figure
// beside baselines measured in the same run, interleaved, as medians.
//
// One step is what a program using managed memory does in a loop: host code
// changes one int, a kernel (one thread) increments another, the host
// synchronises and reads it. For a managed allocation of S bytes:
//   - managed: hipMallocManaged memory, hipDeviceSynchronize;
//   - explicit (baseline 1): device memory of S bytes and what a programmer
//     writes without managed memory: a 4-byte hipMemcpy in, the kernel, a
//     4-byte hipMemcpy out;
//   - raw (baseline 2): a raw TCP round trip plus S bytes downloaded over
//     loopback: what a step would cost at least if the synchronisation read
//     the allocation back whole, as hipr does where neither side can tell
//     which pages changed (docs/architecture.md, "Managed memory"). Where
//     both can (the client's mirror and the sim's device copy are watched
//     by the kernel), a step moves only the pages written and costs about
//     the same at every size.
// Built with hipcc; on a sim worker the kernel runs through its twin.
#include <hip/hip_runtime.h>

#include <cstring>
#include <vector>

#include "bench_util.h"

using namespace hipr_bench;

__global__ void bump(int* p) { p[1] += 1; }

namespace {

constexpr int kSteps = 50;

void ManagedSteps(int* m) {
  for (int i = 0; i < kSteps; ++i) {
    m[0] = i;
    hipLaunchKernelGGL(bump, dim3(1), dim3(1), 0, nullptr, m);
    Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
    if (m[1] <= 0) Check(hipErrorUnknown, "the kernel's write did not reach the host");
  }
}

void ExplicitSteps(int* d) {
  int host[2] = {0, 0};
  for (int i = 0; i < kSteps; ++i) {
    host[0] = i;
    Check(hipMemcpy(d, host, sizeof(int), hipMemcpyHostToDevice), "hipMemcpy in");
    hipLaunchKernelGGL(bump, dim3(1), dim3(1), 0, nullptr, d);
    Check(hipMemcpy(&host[1], d + 1, sizeof(int), hipMemcpyDeviceToHost), "hipMemcpy out");
    if (host[1] <= 0) Check(hipErrorUnknown, "the kernel's write did not come back");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const size_t sizes[] = {size_t{64} << 10, size_t{1} << 20, size_t{16} << 20};
  RawPeer peer;
  peer.Start(sizes[2]);
  std::vector<char> sink(sizes[2]);
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  std::printf("%d interleaved rounds of %d steps, medians per step\n", rounds, kSteps);
  std::printf("%-40s %10s %10s %8s %10s %8s\n", "managed allocation", "managed", "explicit", "ratio", "raw", "ratio");
  for (size_t size : sizes) {
    // The managed allocation lives only through its own phase: hipr takes
    // any kernel to write any managed memory, so one left allocated would
    // be read back in the explicit phase too.
    auto managed_phase = [&] {
      int* m = nullptr;
      Check(hipMallocManaged(reinterpret_cast<void**>(&m), size, hipMemAttachGlobal), "hipMallocManaged");
      ManagedSteps(m);  // Warm-up (the module's first use loads it), then measured.
      const double t = Seconds([&] { ManagedSteps(m); }) / kSteps;
      Check(hipFree(m), "hipFree");
      return t;
    };
    int* d = nullptr;
    Check(hipMalloc(reinterpret_cast<void**>(&d), size), "hipMalloc");
    Check(hipMemset(d, 0, size), "hipMemset");
    ExplicitSteps(d);
    std::vector<double> managed, expl, raw;
    for (int r = 0; r < rounds; ++r) {
      managed.push_back(managed_phase());
      expl.push_back(Seconds([&] { ExplicitSteps(d); }) / kSteps);
      raw.push_back(Seconds([&] {
        for (int i = 0; i < kSteps; ++i) {
          peer.SpinPing();
          peer.Download(sink.data(), size);
        }
      }) / kSteps);
    }
    const double mm = Median(managed), ee = Median(expl), rr = Median(raw);
    char label[64];
    std::snprintf(label, sizeof label, "%zu KiB: step", size >> 10);
    std::printf("%-40s %7.0f us %7.0f us %7.2fx %7.0f us %7.2fx\n", label, mm * 1e6, ee * 1e6, mm / ee, rr * 1e6,
                mm / rr);
    Check(hipFree(d), "hipFree");
  }
  peer.Stop();
  return 0;
}
