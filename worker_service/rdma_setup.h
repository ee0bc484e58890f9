// The worker's side of the rdma transport's selection (docs/protocol.md,
// "RDMA transport"): what it reports at start-up, and the answer to a
// client's offer in the hello. The transport itself is protocol/rdma/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "protocol/transport.h"
#include "worker_service/config.h"

namespace hipr::worker {

// --rdma-device's value that turns rdma off.
inline constexpr char kRdmaOff[] = "off";

// One line for the start-up log: the RDMA devices libibverbs sees and which
// one sessions use (--rdma-device), or why clients stay on tcp. `usable`:
// a device is there to try.
std::string DescribeRdma(const WorkerConfig& config, bool* usable);

// Answers a client's rdma offer (`offer`: its encoded QpInfo) on a session
// whose plain-tcp socket is `socket_fd` (borrowed; the connection keeps a
// duplicate as its liveness socket). On success *conn is connected (RTR/RTS,
// receives posted: the client may send once it has the reply) and *answer
// holds this side's QpInfo for the HelloReply. Otherwise returns why (for
// the log) and leaves both empty: the session stays on tcp.
Status AcceptRdma(const WorkerConfig& config, int socket_fd, const std::vector<uint8_t>& offer,
                  std::unique_ptr<Connection>* conn, std::vector<uint8_t>* answer, std::string* device);

}  // namespace hipr::worker
