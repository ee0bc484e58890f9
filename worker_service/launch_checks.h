// Checks every device applies to a kernel launch before queuing it. The
// client checks the same from what it knows; the worker checks again
// because a client is not trusted.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "worker_service/device.h"

namespace hipr::worker {

inline Status CheckLaunchShape(const KernelLaunch& l, const msg::DeviceInfo& d) {
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (l.grid[i] == 0 || l.block[i] == 0) return InvalidArgument("launch with a zero grid or block dimension");
    if (d.max_threads_dim[i] > 0 && l.block[i] > static_cast<uint32_t>(d.max_threads_dim[i]))
      return InvalidArgument("block dimension " + std::to_string(i) + " exceeds the device limit");
    // Global sizes in work-items must fit 32 bits (the AQL packet's field).
    if (uint64_t{l.grid[i]} * l.block[i] > UINT32_MAX)
      return InvalidArgument("grid dimension " + std::to_string(i) + " times block size exceeds 2^32-1");
    threads *= l.block[i];
  }
  if (d.max_threads_per_block > 0 && threads > static_cast<uint64_t>(d.max_threads_per_block))
    return InvalidArgument("block of " + std::to_string(threads) + " threads exceeds the device limit");
  if (d.shared_mem_per_block > 0 && l.shared_bytes > d.shared_mem_per_block)
    return InvalidArgument("dynamic shared memory exceeds the device limit");
  return Status::Ok();
}

}  // namespace hipr::worker
