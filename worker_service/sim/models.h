// Properties of the MI-series GPUs the sim device can pretend to be. Figures
// are the vendors' published ones for one GCD (MI250X has two per package).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::worker::sim {

// Names accepted by --sim-model ("mi250x", "mi210", "mi100", "mi300x").
std::vector<std::string> ModelNames();

// Fills `out` for model `name` with total memory `memory_bytes` and PCI bus
// `ordinal` (so several sim devices differ).
Status ModelInfo(const std::string& name, uint64_t memory_bytes, int ordinal, msg::DeviceInfo* out);

// The most blocks of `block_threads` threads (> 0) of `kernel`, each with
// `dynamic_shared` bytes of dynamic shared memory, that `device` holds at
// once: a cooperative launch of more is hipErrorCooperativeLaunchTooLarge.
// As ROCm's clr (hip_module.cpp: blocks per CU by
// hipOccupancyMaxActiveBlocksPerMultiprocessor's model, times the CUs),
// with the occupancy model the client answers that call with
// (client_stub/kernels/kernel_launch.h, MaxActiveBlocksPerCu; keep the two
// alike): waves per CU (8 per SIMD on gfx9, 16 on gfx10+, fewer when the
// kernel's VGPRs, rounded up to 8, exhaust the SIMD's 512 (gfx90a, gfx94x)
// or 256 registers per lane), divided by the block's waves, limited by LDS
// (static group segment plus dynamic shared memory against the CU's). 0
// when the block exceeds the device's or the kernel's limit.
uint64_t CooperativeBlockLimit(const msg::DeviceInfo& device, const co::KernelInfo& kernel, uint32_t block_threads,
                               uint64_t dynamic_shared);

}  // namespace hipr::worker::sim
