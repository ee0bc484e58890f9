// What the worker reports at start-up about the rdma transport
// (docs/protocol.md, "RDMA transport"). The answer to a client's offer in
// the hello is the transport's upgrade (protocol/rdma/rdma_upgrade.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "protocol/rdma/rdma_upgrade.h"
#include "protocol/wire.h"
#include "worker_service/process/config.h"

namespace hipr::worker {

// --rdma-device's value that turns rdma off.
inline constexpr const char* kRdmaOff = rdma::kDeviceOff;

// One line for the start-up log: the RDMA devices libibverbs sees and which
// one sessions use (--rdma-device), or why clients stay on tcp. `usable`:
// a device is there to try.
std::string DescribeRdma(const WorkerConfig& config, bool* usable);

}  // namespace hipr::worker
