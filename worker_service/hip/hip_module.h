// The C entry points of libhipr_device_hip.so, resolved with dlsym.
#pragma once

#include <cstddef>

namespace hipr::worker {
class Device;
}

extern "C" {
// Counts usable HIP devices. Returns the count, or -1 with `message` (a
// NUL-terminated diagnosis of at most `len` bytes) set.
typedef int (*HiprHipProbeFn)(char* message, size_t len);
// Creates the device for one session, or returns null with `message` set.
typedef hipr::worker::Device* (*HiprHipCreateFn)(char* message, size_t len);
}

inline constexpr const char* kHipProbeSymbol = "hipr_hip_probe";
inline constexpr const char* kHipCreateSymbol = "hipr_hip_create_device";
