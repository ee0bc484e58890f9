// The zygote: a small process forked from the worker before it starts any
// thread or touches a GPU runtime. It forks one session process per accepted
// connection (a HIP context does not survive fork, and one tenant's fault
// must not end another's session), reaps them, and reports their end.
//
// Acceptor <-> zygote messages travel over a SOCK_SEQPACKET socketpair; a
// new session's socket rides along as SCM_RIGHTS.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "protocol/status.h"
#include "worker_service/process/config.h"
#include "worker_service/process/ledger.h"

namespace hipr::worker {

struct ZygoteMessage {
  enum Type : uint32_t { kNewSession = 1, kShutdown = 2, kSessionStarted = 3, kSessionEnded = 4 };
  uint32_t type = 0;
  int32_t pid = 0;          // Session process (started/ended).
  uint64_t session_id = 0;
  int32_t wait_status = 0;  // As from waitpid (ended).
  uint32_t transport = 0;   // Transport (new session).
  int32_t slot = -1;        // Its slot in the ledger (new session).
};

struct Zygote {
  pid_t pid = -1;
  int fd = -1;  // The acceptor's end of the socketpair.
};

// Forks the zygote, which closes each session's slot of `ledger` once it
// has reaped the session's process. REQUIRES: the caller has no other
// threads.
Status StartZygote(const WorkerConfig& config, Ledger* ledger, Zygote* out);

// Hands an accepted connection to the zygote (the caller keeps and closes
// its own copy of `client_fd`).
Status SendNewSession(const Zygote& zygote, uint64_t session_id, int slot, int client_fd, Transport transport);

// Describes a waitpid status: "exited with code 3", "killed by signal 9 (Killed)".
std::string DescribeWaitStatus(int wait_status);

}  // namespace hipr::worker
