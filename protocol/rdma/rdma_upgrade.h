// The rdma upgrade of a plain tcp session (transports.h; docs/protocol.md
// "RDMA transport"), both ends: the client offers a queue pair in its hello,
// the worker connects one and answers, the client proves the path with a
// probe that must cross the queue pair both ways, and its verdict (over
// tcp) says whether both switch. Either end stays on tcp when the path does
// not work, unless the client's HIPR_SERVER is rdma://.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "protocol/transport.h"
#include "protocol/transports.h"
#include "protocol/wire.h"

namespace hipr::rdma {

// --rdma-device's value that turns rdma off.
inline constexpr char kDeviceOff[] = "off";

// Client: the offer for a plain tcp connection on socket `tcp_fd`
// (borrowed; the rdma connection keeps a duplicate as its liveness socket),
// or null with the reason logged when this client cannot offer. An error
// only where `forced` (HIPR_SERVER=rdma://) and it cannot.
Status PrepareClientUpgrade(const transport::ClientOptions& options, int tcp_fd, bool forced, int read_timeout_ms,
                            std::unique_ptr<transport::ClientUpgrade>* out);

// Worker: answers a client's offer (`offer`: its encoded QpInfo) on a
// session whose plain-tcp socket is `socket_fd` (borrowed; the connection
// keeps a duplicate as its liveness socket), on `device` ("" the first,
// kDeviceOff none). On success *conn is connected (RTR/RTS, receives posted:
// the client may send once it has the reply) and *answer holds this side's
// QpInfo for the HelloReply. Otherwise returns why and leaves both empty.
// The connection's own error lines go to `warn` only once `*muted` (set
// true here) is false: until AwaitVerdict's outcome, logged once with its
// reason, a failure of the path is not news of its own.
Status AcceptOffer(const std::string& device, int socket_fd, const std::vector<uint8_t>& offer,
                   std::function<void(const std::string&)> warn, std::unique_ptr<Connection>* conn,
                   std::vector<uint8_t>* answer, std::string* device_name, std::shared_ptr<std::atomic<bool>>* muted);

// Worker, after the HelloReply that carried AcceptOffer's answer: waits for
// the client's kRdmaProbe over `rdma` and answers it there, then reads the
// client's kRdmaVerdict over `tcp`, all within `timeout_ms`. Blocks.
// Ok with *commit: switch to `rdma` now. Ok without: stay on `tcp`; *why
// says why (the client's reason, and what this side saw). An error (the
// client broke the protocol: a malformed probe, a commit after a probe that
// never arrived, no verdict in time) ends the session.
Status AwaitVerdict(Connection& tcp, Connection& rdma, uint64_t session_id, bool* commit, std::string* why,
                    int timeout_ms = wire::kRdmaVerdictTimeoutMs);

// Worker: the ServerUpgrade of transports.h for rdma.
std::unique_ptr<transport::ServerUpgrade> MakeServerUpgrade(int fd, std::string device, uint64_t session_id,
                                                            transport::Log log);

}  // namespace hipr::rdma
