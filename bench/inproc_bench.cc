// hipr-bench-inproc: the launch loop of hipr-bench-launch (1,000 empty
// kernel launches + one device synchronize) straight through an in-process
// sim device: no stub, no protocol, no socket. What remains is the device's
// own cost per launch, which the remote loop is compared with (bench/
// run-launch-bench passes this figure to hipr-bench-launch --inproc-us).
// Beside it, as every figure: a raw TCP round trip measured in the same run.
//
// Usage: hipr-bench-inproc PROGRAM SIM_KERNELS_DIR [rounds]
//   PROGRAM: the hipcc-built hipr-bench-launch (its gfx90a code object and,
//   in SIM_KERNELS_DIR, its twin).
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "bench_util.h"
#include "protocol/code_object/host_fatbin.h"
#include "worker_service/sim/sim_device.h"

using namespace hipr;
using namespace hipr_bench;

namespace {

constexpr int kLoopLaunches = 1000;
constexpr int kPings = 2000;
constexpr const char* kKernel = "_Z12empty_kernelv";

void Die(const Status& st, const char* what) {
  if (st.ok()) return;
  std::fprintf(stderr, "hipr-bench-inproc: %s: %s\n", what, st.ToString().c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: hipr-bench-inproc PROGRAM SIM_KERNELS_DIR [rounds]\n");
    return 2;
  }
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 7;
  std::ifstream in(argv[1], std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(in)), {});
  co::TargetId gfx90a;
  Die(co::ParseTargetId("gfx90a", &gfx90a), "target id");
  auto image = std::make_shared<worker::ModuleImage>();
  Die(co::FindHostCodeObject(file, gfx90a, &image->code), argv[1]);
  image->sha256 = co::Sha256(image->code);
  Die(co::ParseCodeObject(image->code, &image->info), "code object");
  image->name = argv[1];

  worker::sim::SimOptions options;
  options.memory_bytes = 64u << 20;
  options.kernel_dirs = {argv[2]};
  std::unique_ptr<worker::sim::SimDevice> device;
  Die(worker::sim::SimDevice::Create(options, &device), "sim device");
  worker::ModuleLoadResult loaded;
  Die(device->LoadModule(0, 1, image, &loaded), "module load");
  if (loaded.all_unavailable) Die(Status(StatusCode::kNotFound, loaded.message), "twin");

  auto loop = [&] {
    for (int i = 0; i < kLoopLaunches; ++i) {
      worker::KernelLaunch l;
      l.module = 1;
      l.kernel = kKernel;
      l.grid = {1, 1, 1};
      l.block = {1, 1, 1};
      Die(device->LaunchKernel(std::move(l)), "launch");
    }
    Die(device->DeviceSynchronize(0), "synchronize");
  };
  RawPeer peer;
  peer.Start(1 << 20);
  loop();  // Warm-up.
  std::vector<double> loops, rtt;
  for (int r = 0; r < rounds; ++r) {
    loops.push_back(Seconds(loop));
    rtt.push_back(Seconds([&] {
      for (int i = 0; i < kPings; ++i) peer.SpinPing();
    }) / kPings);
  }
  peer.Stop();
  const double l = Median(loops);
  const double t = Median(rtt);
  std::printf("%-46s %9.2f ms %9.1f us %8.1fx\n", "in-process sim: 1,000 launches + sync vs RTT", l * 1e3, t * 1e6,
              l / t);
  std::printf("inproc_loop_us %.1f\n", l * 1e6);
  return 0;
}
