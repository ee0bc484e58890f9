// ResumeDoor: how a resumed connection reaches the session process that
// holds its session (docs/protocol.md "Resuming sessions").
//
// A session whose hello agreed `resume` opens a door: a SOCK_SEQPACKET unix
// socket in the abstract namespace, named after the zygote (the parent of
// every session process of this worker) and the session id. A connection
// whose hello asks to resume that session is taken by a fresh session
// process like any other (the hello, authentication); that process knocks
// on the door with the tenant it authenticated, the secret the client
// presented, the client's byte count, the frame to answer and the
// connection's socket (SCM_RIGHTS), and ends once the door has answered.
// The door's thread checks the knock: the same uid (SO_PEERCRED), the same
// tenant, the current secret (compared in constant time). It answers the
// knocker with a verdict, and on success replaces the secret (a knock that
// replays it is refused), calls `on_admit` (the session shuts its link's
// connection down: the old one may still look alive here, half-open) and
// then hands the socket to Take().
//
// Thread-safety: every method from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "protocol/codec.h"
#include "protocol/status.h"
#include "protocol/thread_annotations.h"

namespace hipr::worker {

inline constexpr size_t kResumeSecretBytes = 32;

// What a knocker sends with the socket.
struct Knock {
  uint64_t session_id = 0;  // The session to resume.
  std::string tenant;       // Authenticated by the knocker; empty without --auth-file.
  std::vector<uint8_t> secret;
  uint64_t client_received = 0;  // Bytes of the worker's stream the client has.
  uint16_t reply_op = 0;         // The frame the resume's HelloReply answers.
  uint32_t reply_request_id = 0;
  uint16_t version = 0;  // The protocol version the knocker agreed.
  std::string peer;      // The client's address, for the log.
  std::vector<uint8_t> auth_proof;  // The knocker's proof for the client (HelloReply::auth_proof).
  HIPR_FIELDS(session_id, tenant, secret, client_received, reply_op, reply_request_id, version, peer, auth_proof)
};

// The door's answer to a knock.
struct KnockVerdict {
  StatusCode status = StatusCode::kOk;
  std::string message;
  HIPR_FIELDS(status, message)
};

class ResumeDoor {
 public:
  struct Admitted {
    int fd = -1;  // The client's socket; the taker owns it.
    Knock knock;
    std::vector<uint8_t> secret;  // The session's new secret, for the reply.
  };

  // Opens the door of session `session_id` for tenant `tenant` and starts
  // its thread.
  static Status Open(uint64_t session_id, std::string tenant, std::function<void()> on_admit,
                     std::unique_ptr<ResumeDoor>* out);
  ~ResumeDoor();
  ResumeDoor(const ResumeDoor&) = delete;
  ResumeDoor& operator=(const ResumeDoor&) = delete;

  // The secret that resumes the session now (for the first HelloReply).
  std::vector<uint8_t> secret() const;
  // Waits until `deadline` for an admitted connection; false at the
  // deadline or once `closed`.
  bool Take(std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& closed, Admitted* out);

 private:
  ResumeDoor(uint64_t session_id, std::string tenant, int fd, std::function<void()> on_admit);
  void Loop();
  void Serve(int fd);

  const uint64_t session_id_;
  const std::string tenant_;
  const int listen_fd_;
  const std::function<void()> on_admit_;
  mutable Mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t> secret_ HIPR_GUARDED_BY(mu_);
  std::optional<Admitted> admitted_ HIPR_GUARDED_BY(mu_);
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// In the process that took the resuming connection: hands `fd` and `knock`
// to the door of knock.session_id on this worker and returns its verdict
// (ok: the session has the socket; this process must not use it again).
Status KnockOnDoor(const Knock& knock, int fd);

}  // namespace hipr::worker
