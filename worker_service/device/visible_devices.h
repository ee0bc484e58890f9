// The worker's side of the client's device selection (protocol/visible_devices.h).
#pragma once

#include <string>

#include "protocol/visible_devices.h"

namespace hipr::worker {

using hipr::ComposeVisible;
using hipr::kCudaVisibleDevices;
using hipr::kHipVisibleDevices;
using hipr::kRocrVisibleDevices;
using hipr::ParseVisibleDevices;
using hipr::SelectVisible;
using hipr::VisibleDevices;

// In a session process of the hip device, before the runtime starts: sets
// HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES from `visible` (composed with
// the worker's own, CUDA_VISIBLE_DEVICES read as HIP's where it is unset).
// Returns what was set, for the log.
std::string ApplyVisibleToEnvironment(const VisibleDevices& visible);

}  // namespace hipr::worker
