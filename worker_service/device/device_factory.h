// Creates the Device named by --device. The `hip` device lives in a module
// (libhipr_device_hip.so) that only session processes and a throwaway probe
// child ever load, so the acceptor and the zygote never load or initialise
// the GPU runtime.
#pragma once

#include <memory>
#include <string>

#include "protocol/status.h"
#include "worker_service/process/config.h"
#include "worker_service/device/device.h"

namespace hipr::worker {

// Checks at start-up that the configured device can work, without touching
// a GPU runtime in this process: for `hip` a forked child loads the module
// and counts devices. `summary` describes what was found.
Status ProbeDevice(const WorkerConfig& config, std::string* summary);

// Loads the hip device module (--hip-module, else beside the binary,
// installed or in the build tree) bound to its runtime (--hip-runtime):
// for a session process or a throwaway probe child, never the acceptor.
Status LoadHipModule(const WorkerConfig& config, void** handle);

// In a session process: creates the device.
Status CreateDevice(const WorkerConfig& config, std::unique_ptr<Device>* out);

}  // namespace hipr::worker
