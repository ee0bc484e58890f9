// The device conformance suite (device_conformance.h) on both devices:
//
//   Sim:   SimDevice in this process, with the build's kernel twins.
//   Forwarded: a ForwardingDevice around it.
//   Chain: the hip device (libhipr_device_hip.so) in this process, bound to
//          hipr's own stub as its libamdhip64.so.5 (--hip-runtime), which
//          forwards to a sim worker process started for the suite: every
//          call goes through a HIP runtime, as on an MI-series node.
#include "worker_service/device/device_conformance.h"

#include <stdlib.h>
#include <sys/mman.h>

#include "tests/support/raw_client.h"
#include "worker_service/process/config.h"
#include "worker_service/device/device_factory.h"
#include "worker_service/device/forwarding_device.h"
#include "worker_service/sim/sim_device.h"

namespace hipr::test {
namespace {

struct SimDevices {
  static std::unique_ptr<worker::Device> Make() {
    worker::sim::SimOptions options;
    options.memory_bytes = 512ull << 20;
    options.kernel_dirs = {HIPR_TEST_TWINS};
    std::unique_ptr<worker::sim::SimDevice> device;
    Status st = worker::sim::SimDevice::Create(options, &device);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return nullptr;
    // The window a client would offer: a free range of this process.
    const uint64_t size = 4ull << 30;
    void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    munmap(p, size);
    msg::AddressWindow used;
    st = device->AttachWindow({reinterpret_cast<uint64_t>(p), size}, &used);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return device;
  }
};

// A ForwardingDevice around the sim: the base a test double starts from
// forwards everything.
struct ForwardedDevices {
  static std::unique_ptr<worker::Device> Make() {
    std::unique_ptr<worker::Device> sim = SimDevices::Make();
    if (sim == nullptr) return nullptr;
    return std::make_unique<worker::ForwardingDevice>(std::move(sim));
  }
};

struct ChainDevices {
  static std::unique_ptr<worker::Device> Make() {
    // One sim worker behind the stub for the whole suite; the stub reads
    // HIPR_SERVER at its first call.
    // HIPR_SERVER at its first call. Stopped at exit.
    static WorkerProcess inner({"--sim-kernels", HIPR_TEST_TWINS, "--code-cache", ""});
    setenv("HIPR_SERVER", ("127.0.0.1:" + std::to_string(inner.port())).c_str(), 1);
    worker::WorkerConfig config;
    config.device = "hip";
    config.hip_module = HIPR_TEST_HIP_MODULE;
    config.hip_runtime = HIPR_TEST_STUB;
    std::unique_ptr<worker::Device> device;
    Status st = worker::CreateDevice(config, {}, &device);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return nullptr;
    msg::AddressWindow used;
    st = device->AttachWindow({}, &used);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return device;
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(Sim, DeviceConformance, SimDevices);
INSTANTIATE_TYPED_TEST_SUITE_P(Forwarded, DeviceConformance, ForwardedDevices);
INSTANTIATE_TYPED_TEST_SUITE_P(Chain, DeviceConformance, ChainDevices);

}  // namespace hipr::test
