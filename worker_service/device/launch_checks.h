// Checks every device applies to a kernel launch before queuing it. The
// client checks the same from what it knows; the worker checks again
// because a client is not trusted.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "worker_service/device/device.h"

namespace hipr::worker {

// Whether a launch names no global size (all zero). Compared field by field:
// operator== on the arrays is a call to memcmp, a tenth of the replay
// thread's time in a burst of launches.
inline bool NoGlobalSize(const KernelLaunch& l) { return (l.global[0] | l.global[1] | l.global[2]) == 0; }

// The launch's size in work-items: `global`, or grid * block when unset.
// REQUIRES: CheckLaunchShape passed.
inline std::array<uint32_t, 3> GlobalSize(const KernelLaunch& l) {
  if (!NoGlobalSize(l)) return l.global;
  return {l.grid[0] * l.block[0], l.grid[1] * l.block[1], l.grid[2] * l.block[2]};
}

inline Status CheckLaunchShape(const KernelLaunch& l, const msg::DeviceInfo& d) {
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (l.grid[i] == 0 || l.block[i] == 0) return InvalidArgument("launch with a zero grid or block dimension");
    if (d.max_threads_dim[i] > 0 && l.block[i] > static_cast<uint32_t>(d.max_threads_dim[i]))
      return InvalidArgument("block dimension " + std::to_string(i) + " exceeds the device limit");
    // Global sizes in work-items must fit 32 bits (the AQL packet's field);
    // an explicit global size does by its type.
    if (NoGlobalSize(l) && uint64_t{l.grid[i]} * l.block[i] > UINT32_MAX)
      return InvalidArgument("grid dimension " + std::to_string(i) + " times block size exceeds 2^32-1");
    threads *= l.block[i];
  }
  if (!NoGlobalSize(l)) {
    for (int i = 0; i < 3; ++i) {
      const uint64_t whole = uint64_t{l.grid[i]} * l.block[i];
      if (l.global[i] == 0 || l.global[i] > whole || l.global[i] <= whole - l.block[i])
        return InvalidArgument("global size " + std::to_string(l.global[i]) + " in dimension " + std::to_string(i) +
                               " does not end in the last of " + std::to_string(l.grid[i]) + " blocks of " +
                               std::to_string(l.block[i]));
    }
  }
  if (d.max_threads_per_block > 0 && threads > static_cast<uint64_t>(d.max_threads_per_block))
    return InvalidArgument("block of " + std::to_string(threads) + " threads exceeds the device limit");
  if (d.shared_mem_per_block > 0 && l.shared_bytes > d.shared_mem_per_block)
    return InvalidArgument("dynamic shared memory exceeds the device limit");
  return Status::Ok();
}

}  // namespace hipr::worker
