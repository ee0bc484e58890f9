// The device properties (protocol/device_properties.h) that ROCm's runtime
// (clr's ihipGetDeviceProperties and hipDeviceGetAttribute, ROCm 6.2 and
// later) sets to a constant or derives from the typed DeviceInfo fields.
// Shared by both devices: the sim then sets its model's facts, the hip device
// what its runtime reports.
//
// Pure functions; thread-safe.
#pragma once

#include <string_view>

#include "protocol/device_properties.h"
#include "protocol/messages.h"

namespace hipr::worker {

// Sets every derived or constant property of `d` from its typed fields
// (which must be filled first). Facts only a device knows (image support,
// wall clock rate, chip id, ...) are left for the device to set.
void FillRuntimeProperties(msg::DeviceInfo* d);

// The deprecated numeric architecture (hipDeviceProp_t::gcnArch, 5.x) from
// the architecture name, as ROCm 5 derived it: "gfx" MAJOR MINOR STEPPING,
// the last two one hex digit each, giving MAJOR*100 + MINOR*10 + STEPPING
// (gfx90a:sramecc+:xnack- -> 910, gfx942 -> 942, gfx1100 -> 1100). ROCm 6
// removed the field, so the hip device built for 6.x or 7.x derives it for
// its 5.x clients. 0 for a name that is not of that form.
int GcnArchNumber(std::string_view gcn_arch_name);

}  // namespace hipr::worker
