// The device properties (protocol/device_properties.h) that ROCm's runtime
// (clr's ihipGetDeviceProperties and hipDeviceGetAttribute, ROCm 6.2 and
// later) sets to a constant or derives from the typed DeviceInfo fields.
// Shared by both devices: the sim then sets its model's facts, the hip device
// what its runtime reports.
//
// Pure functions; thread-safe.
#pragma once

#include "protocol/device_properties.h"
#include "protocol/messages.h"

namespace hipr::worker {

// Sets every derived or constant property of `d` from its typed fields
// (which must be filled first). Facts only a device knows (image support,
// wall clock rate, chip id, ...) are left for the device to set.
void FillRuntimeProperties(msg::DeviceInfo* d);

}  // namespace hipr::worker
