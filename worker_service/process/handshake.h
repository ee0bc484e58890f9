// The handshake: a session's first frames, before its device exists. Reads
// the hello, agrees the protocol version and, when the worker has tenants
// (--auth-file), authenticates the client by challenge and response
// (protocol/auth.h). Nothing touches a device until it succeeds: a client
// that fails gets a HelloReply saying why (naming HIPR_TOKEN) and the
// session ends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/transport.h"
#include "protocol/wire.h"
#include "worker_service/process/config.h"
#include "worker_service/process/tenants.h"

namespace hipr::worker {

struct Admission {
  msg::HelloRequest hello;
  // The frame the session's HelloReply answers: the hello, or the kAuth.
  wire::FrameHeader reply_to{};
  uint16_t version = 0;  // Agreed protocol version.
  // The authenticated tenant and its limits; empty name without --auth-file.
  Tenant tenant;
  std::vector<uint8_t> auth_proof;  // For HelloReply::auth_proof.
};

// Runs the handshake on `conn`, within config.hello_timeout_ms in all. On
// failure the client has been told why (where it can still be told) and the
// status says what to log.
Status Handshake(Connection& conn, const WorkerConfig& config, uint64_t session_id, Admission* out);

// Sends kFatal with `why` (best effort): the session ends.
void SendFatalFrame(Connection& conn, const Status& why);

// Answers the handshake's frame with `reply` (its status not ok): for a
// session that cannot start after a successful handshake.
void RefuseAdmission(Connection& conn, const Admission& admission, msg::HelloReply reply);

}  // namespace hipr::worker
