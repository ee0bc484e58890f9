// Properties of the MI-series GPUs the sim device can pretend to be. Figures
// are the vendors' published ones for one GCD (MI250X has two per package).
#pragma once

#include <string>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::worker::sim {

// Names accepted by --sim-model ("mi250x", "mi210", "mi100", "mi300x").
std::vector<std::string> ModelNames();

// Fills `out` for model `name` with total memory `memory_bytes` and PCI bus
// `ordinal` (so several sim devices differ).
Status ModelInfo(const std::string& name, uint64_t memory_bytes, int ordinal, msg::DeviceInfo* out);

}  // namespace hipr::worker::sim
