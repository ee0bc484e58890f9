// Creates the Device named by --device. The `hip` device lives in a module,
// one per ROCm major (libhipr_device_hip.so for 5.x, libhipr_device_hip6.so,
// libhipr_device_hip7.so), that only session processes and throwaway probe
// children ever load, so the acceptor and the zygote never load or
// initialise the GPU runtime.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "worker_service/process/config.h"
#include "worker_service/device/device.h"
#include "worker_service/device/visible_devices.h"

namespace hipr::worker {

struct DeviceProbe {
  std::string summary;                   // What was found.
  std::string hip_module;                // hip: the module chosen.
  std::vector<std::string> passed_over;  // hip: "PATH: why" of each newer module that could not serve.
};

// Checks that the configured device can work, without touching a GPU
// runtime in this process. For `hip`, each candidate module (newest ROCm
// major first) is loaded in a forked child that counts its devices; the
// first that finds one is chosen. The worker then names it in
// config.hip_module, so that every session loads that one.
Status ProbeDevice(const WorkerConfig& config, DeviceProbe* probe);

// The hip device modules to try, newest ROCm major first: --hip-module
// alone when given, else every libhipr_device_hip*.so beside the binary
// (installed: lib/hipr-worker/; build tree: lib/hipr-worker/ or bin/).
std::vector<std::string> HipModuleCandidates(const WorkerConfig& config);

// Loads a hip device module bound to its runtime (--hip-runtime): for a
// session process or a throwaway probe child, never the acceptor. Without
// `path`, the first of HipModuleCandidates.
Status LoadHipModule(const WorkerConfig& config, const std::string& path, void** handle);
Status LoadHipModule(const WorkerConfig& config, void** handle);

// In a session process: creates the device, with the devices the client's
// selection leaves (visible_devices.h; kNotFound when it leaves none).
Status CreateDevice(const WorkerConfig& config, const VisibleDevices& visible, std::unique_ptr<Device>* out);

}  // namespace hipr::worker
