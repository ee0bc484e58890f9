// The body of a session process: creates the device, runs the Session on
// the handed-over socket, and returns the process exit code.
#pragma once

#include <cstdint>

#include "worker_service/process/config.h"
#include "worker_service/process/ledger.h"

namespace hipr::worker {

// Exit code of a session that ended with an error its client was told of.
inline constexpr int kSessionExitReported = 3;

// `client_fd` is a tcp socket, or a unix socket on which the session sets up
// the shm transport. `slot` is the session's in `ledger` (opened by the
// acceptor, closed by the zygote).
int RunSessionProcess(const WorkerConfig& config, Ledger* ledger, int slot, uint64_t session_id, int client_fd,
                      Transport transport);

}  // namespace hipr::worker
