#include "worker_service/process/handshake.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "protocol/auth.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"

namespace hipr::worker {
namespace {

using Clock = std::chrono::steady_clock;

// Reads the next frame within the deadline; it must be `op`.
Status ReadFrame(Connection& conn, Clock::time_point deadline, wire::Op op, const char* what,
                 wire::FrameHeader* h, std::vector<uint8_t>* body) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return ProtocolError(std::string("no ") + what + " within the time limit (--hello-timeout-ms)");
  Status st = conn.WaitReadable(static_cast<int>(left));
  if (st.code() == StatusCode::kTimeout)
    return ProtocolError(std::string("no ") + what + " within the time limit (--hello-timeout-ms)");
  HIPR_RETURN_IF_ERROR(st);
  HIPR_RETURN_IF_ERROR(ReadHeader(conn, h));
  if (h->op != static_cast<uint16_t>(op))
    return ProtocolError(std::string("expected the ") + what + ", got op " + std::to_string(h->op));
  return ReadBody(conn, *h, body);
}

Status SendReply(Connection& conn, const wire::FrameHeader& request, const msg::HelloReply& reply) {
  codec::BodyWriter w;
  w.Encode(reply);
  return SendFrame(conn, request.op | wire::kReplyBit, request.request_id, w);
}

// Tells the client why and returns the status to log.
Status Refuse(Connection& conn, const wire::FrameHeader& request, StatusCode code, const std::string& message,
              const std::string& log) {
  msg::HelloReply reply;
  reply.status = code;
  reply.message = message;
  (void)SendReply(conn, request, reply);
  return Status(code, log);
}

Status Authenticate(Connection& conn, const WorkerConfig& config, uint64_t session_id,
                    Clock::time_point deadline, Admission* a) {
  std::vector<uint8_t> challenge;
  HIPR_RETURN_IF_ERROR(auth::RandomNonce(&challenge));
  msg::HelloReply ask;
  ask.status = StatusCode::kUnauthenticated;
  ask.message =
      "this worker requires authentication: set HIPR_TOKEN=TENANT:SECRET or HIPR_TOKEN_FILE=PATH on the client";
  ask.version = a->version;
  ask.auth_challenge = challenge;
  HIPR_RETURN_IF_ERROR(SendReply(conn, a->reply_to, ask));

  wire::FrameHeader h;
  std::vector<uint8_t> body;
  HIPR_RETURN_IF_ERROR(ReadFrame(conn, deadline, wire::Op::kAuth, "answer to the authentication challenge", &h,
                                 &body));
  a->reply_to = h;
  msg::AuthRequest answer;
  HIPR_RETURN_IF_ERROR(codec::DecodeBody(body.data(), body.size(), &answer));
  const std::string refused = "authentication failed: the worker did not accept the credential";
  if (answer.tenant.empty() && answer.mac.empty())
    return Refuse(conn, h, StatusCode::kUnauthenticated, ask.message,
                  "authentication failed: the client has no credential (HIPR_TOKEN)");
  // Read at every hello: an edited file counts from the next session.
  std::vector<Tenant> tenants;
  Status loaded = LoadTenants(config.auth_file, &tenants);
  if (!loaded.ok()) {
    spdlog::error("session {}: {}", session_id, loaded.message());
    return Refuse(conn, h, StatusCode::kUnauthenticated, "the worker cannot read its credentials; see its log",
                  "authentication impossible: " + loaded.message());
  }
  // Every secret of the named tenant is tried, and an unknown name costs
  // one MAC too, so timing tells nothing about which names exist.
  const Tenant* match = nullptr;
  bool known = false;
  for (const Tenant& t : tenants) {
    if (t.name != answer.tenant) continue;
    known = true;
    if (auth::MacEquals(answer.mac,
                        auth::Mac(auth::Role::kClient, t.secret, challenge, a->hello.client_nonce, t.name)) &&
        match == nullptr)
      match = &t;
  }
  if (!known) (void)auth::Mac(auth::Role::kClient, "no such tenant, no such secret", challenge, {}, answer.tenant);
  const std::string shown = auth::ValidTenantName(answer.tenant) ? answer.tenant : "(invalid name)";
  if (match == nullptr)
    return Refuse(conn, h, StatusCode::kUnauthenticated,
                  refused + " for tenant '" + shown + "'; check HIPR_TOKEN or HIPR_TOKEN_FILE on the client",
                  "authentication failed for tenant '" + shown + "' (" + (known ? "wrong secret" : "unknown tenant") +
                      ")");
  a->tenant = *match;
  a->auth_proof =
      auth::Mac(auth::Role::kWorker, match->secret, challenge, a->hello.client_nonce, match->name);
  return Status::Ok();
}

}  // namespace

Status Handshake(Connection& conn, const WorkerConfig& config, uint64_t session_id, Admission* out) {
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(config.hello_timeout_ms);
  Admission a;
  std::vector<uint8_t> body;
  HIPR_RETURN_IF_ERROR(ReadFrame(conn, deadline, wire::Op::kHello, "hello", &a.reply_to, &body));
  HIPR_RETURN_IF_ERROR(codec::DecodeBody(body.data(), body.size(), &a.hello));
  const uint16_t lo = std::max(a.hello.min_version, wire::kMinProtocolVersion);
  const uint16_t hi = std::min(a.hello.max_version, wire::kProtocolVersion);
  if (lo > hi) {
    const std::string why = "client speaks protocol " + std::to_string(a.hello.min_version) + ".." +
                            std::to_string(a.hello.max_version) + ", worker speaks " +
                            std::to_string(wire::kMinProtocolVersion) + ".." +
                            std::to_string(wire::kProtocolVersion);
    return Refuse(conn, a.reply_to, StatusCode::kVersionMismatch, why, why);
  }
  a.version = hi;
  if (!config.auth_file.empty()) HIPR_RETURN_IF_ERROR(Authenticate(conn, config, session_id, deadline, &a));
  *out = std::move(a);
  return Status::Ok();
}

void SendFatalFrame(Connection& conn, const Status& why) {
  codec::BodyWriter w;
  w.Encode(msg::Fatal{why.code(), why.message()});
  (void)SendFrame(conn, static_cast<uint16_t>(wire::Op::kFatal), 0, w);
}

void RefuseAdmission(Connection& conn, const Admission& admission, msg::HelloReply reply) {
  reply.version = admission.version;
  (void)SendReply(conn, admission.reply_to, reply);
}

}  // namespace hipr::worker
