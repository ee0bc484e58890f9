// The worker's side of the rdma transport's selection (docs/protocol.md,
// "RDMA transport"): what it reports at start-up, and the answer to a
// client's offer in the hello. The transport itself is protocol/rdma/.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "protocol/transport.h"
#include "protocol/wire.h"
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
// The connection's own error lines are held back while `*muted` (set true
// here) is true: until AwaitRdmaVerdict's outcome, which is logged once with
// its reason, a failure of the path is not news of its own.
Status AcceptRdma(const WorkerConfig& config, int socket_fd, const std::vector<uint8_t>& offer,
                  std::unique_ptr<Connection>* conn, std::vector<uint8_t>* answer, std::string* device,
                  std::shared_ptr<std::atomic<bool>>* muted);

// The reachability check, after the HelloReply that carried AcceptRdma's
// answer (docs/protocol.md "RDMA transport"): waits for the client's
// kRdmaProbe over `rdma` and answers it there, then reads the client's
// kRdmaVerdict over `tcp`, all within `timeout_ms`. Blocks.
// Ok with *commit: switch to `rdma` now. Ok without: stay on `tcp`; *why
// says why (the client's reason, and what this side saw). An error (the
// client broke the protocol: a malformed probe, a commit after a probe that
// never arrived, no verdict in time) ends the session; `tcp` is still the
// session's connection then.
Status AwaitRdmaVerdict(Connection& tcp, Connection& rdma, uint64_t session_id, bool* commit, std::string* why,
                        int timeout_ms = wire::kRdmaVerdictTimeoutMs);

}  // namespace hipr::worker
