#include "client_stub/session/session.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "client_stub/abi/abi_major.h"
#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"
#include "protocol/auth.h"
#include "protocol/transports.h"

namespace hipr::client {
namespace {

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string OpName(uint16_t op) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", op);
  return buf;
}

// "<program>@<host>", for the worker's logs.
std::string ClientName() {
  char host[256] = "?";
  if (gethostname(host, sizeof host) != 0) std::strcpy(host, "?");
  host[sizeof host - 1] = '\0';
  return std::string(program_invocation_short_name) + "@" + host;
}

// The sessions that may resume, for LeaveAll at exit (a list, not owned:
// tests destroy sessions, which take themselves off it).
Mutex g_resumable_mu;
std::vector<Session*>& Resumable() {
  static auto* list = new std::vector<Session*>;  // Leaked: used at exit.
  return *list;
}

}  // namespace

void Session::LeaveAll() {
  MutexLock lock(g_resumable_mu);
  for (Session* s : Resumable()) s->Leave();
}

void Session::Leave() {
  if (dead() || link_ == nullptr || leaving_.exchange(true)) return;
  // A link being resumed now is not waited for at exit: the worker then
  // keeps the session its grace period.
  if (link_->down()) return;
  if (Post<wire::Op::kLinkAck>(msg::LinkAck{link_->received(), false, true}).ok()) (void)Flush();
}

Session::Session(const Config& config, std::string server)
    : config_(config), server_(std::move(server)), chunk_bytes_(config.chunk_bytes) {}

Session::~Session() {
  if (link_ != nullptr) {
    MutexLock lock(g_resumable_mu);
    std::erase(Resumable(), this);
  }
  if (conn_ != nullptr && !conn_->BulkSummary().empty()) stats::SetBulkSummary(nullptr);
  {
    MutexLock lock(batch_mu_);
    stopping_ = true;
  }
  batch_cv_.notify_all();
  {
    MutexLock lock(recv_mu_);
    stopping_callbacks_ = true;
  }
  recv_cv_.notify_all();
  if (conn_ != nullptr && !abandoned_.load()) conn_->Shutdown();
  if (flusher_.joinable()) flusher_.join();
  if (callback_thread_.joinable()) callback_thread_.join();
  for (auto& [id, p] : pending_)
    if (p->detached) delete p;  // Async copies that never landed.
}

Status Session::Start(AddressRange* window, const char** failed) {
  *failed = "cannot reach worker at";
  HIPR_RETURN_IF_ERROR(Connect());
  if (window->empty()) {
    Status st = ReserveAnywhere(config_.window_bytes, window);
    if (!st.ok()) {
      *failed = "cannot reserve the device address window (HIPR_WINDOW_BYTES) for";
      return st;
    }
  }
  *failed = "cannot start a session with worker at";
  return Hello(window);
}

std::unique_ptr<Session> Session::Open(const Config& config, AddressRange* window) {
  // A worker that is full or busy with hellos says so (kUnavailable): such
  // a refusal is retried, with jittered exponential backoff, for up to
  // HIPR_CONNECT_RETRY_S, so that a burst of clients (a job's ranks starting
  // at once) queues instead of failing. Any other failure is final.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(config.connect_retry_s);
  unsigned seed = static_cast<unsigned>(getpid()) ^ static_cast<unsigned>(
                      std::chrono::steady_clock::now().time_since_epoch().count());
  int backoff_ms = 20;
  int retries = 0;
  for (;;) {
    std::unique_ptr<Session> s(new Session(config, config.ServerForLog()));
    const char* failed = "";
    Status st = s->Start(window, &failed);
    if (st.ok()) {
      if (retries > 0)
        HIPR_LOG_INFO("worker %s took the session after %d retr%s", s->server_.c_str(), retries,
                      retries == 1 ? "y" : "ies");
      HIPR_LOG_INFO("session %llu with worker %s (%s, %d device%s, protocol v%u, window [%s, %s))",
                    static_cast<unsigned long long>(s->hello_.session_id), s->server_.c_str(),
                    s->hello_.device_kind.c_str(), s->device_count(), s->device_count() == 1 ? "" : "s",
                    s->hello_.version, Hex(window->base).c_str(), Hex(window->end()).c_str());
      NoteWorkerRuntime(s->server_, s->hello_.device_kind, s->hello_.runtime_version);
      s->opened_.store(true);
      s->StartFlusher();
      return s;
    }
    const auto now = std::chrono::steady_clock::now();
    const bool for_now = st.code() == StatusCode::kUnavailable || s->DeadCause() == StatusCode::kUnavailable;
    if (for_now && now < deadline) {
      if (retries == 0)
        HIPR_LOG_WARN("worker %s cannot take the session yet (%s); retrying for up to %d s (HIPR_CONNECT_RETRY_S)",
                      s->server_.c_str(), st.message().c_str(), config.connect_retry_s);
      ++retries;
      const int wait_ms = backoff_ms / 2 + static_cast<int>(rand_r(&seed) % static_cast<unsigned>(backoff_ms));
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      usleep(static_cast<useconds_t>(std::min<int64_t>(wait_ms, left)) * 1000);
      backoff_ms = std::min(backoff_ms * 2, 1000);
      continue;
    }
    // Dead already (a link failure in the hello): the message is the first reason, whole.
    std::string why = s->dead() ? st.message() : st.ToString();
    if (for_now && retries > 0)
      why += " (still, after " + std::to_string(retries) + " retries over HIPR_CONNECT_RETRY_S=" +
             std::to_string(config.connect_retry_s) + " s)";
    if (config.workers > 1)  // One line for the whole list (session/remote.h).
      HIPR_LOG_ERROR("%s %s (worker %d of %d in HIPR_SERVER: no device of any worker is served): %s", failed,
                     s->server_.c_str(), config.worker_index + 1, config.workers, why.c_str());
    else
      HIPR_LOG_ERROR("%s %s (HIPR_SERVER): %s", failed, s->server_.c_str(), why.c_str());
    (void)s->MarkDead(st, /*log=*/false);
    return s;
  }
}

Status Session::Connect() {
  transport::ClientOptions o = config_.TransportOptions();
  o.log = [](transport::LogLevel level, const std::string& line) {
    switch (level) {
      case transport::LogLevel::kDebug: HIPR_LOG_DEBUG("%s", line.c_str()); break;
      case transport::LogLevel::kInfo: HIPR_LOG_INFO("%s", line.c_str()); break;
      case transport::LogLevel::kWarn: HIPR_LOG_WARN("%s", line.c_str()); break;
    }
  };
  transport::ClientLink link;
  HIPR_RETURN_IF_ERROR(transport::Connect(o, &link));
  conn_ = std::move(link.conn);
  upgrade_ = std::move(link.upgrade);
  const Connection::SharedRegion host = conn_->SharedHostRegion();
  if (host.bytes > 0) host_segment_ = std::make_unique<HostSegment>(host.base, host.bytes);
  const std::string_view server = config_.server;
  transport_ = server.starts_with("unix:") ? "shm" : server.starts_with("rdma://") ? "rdma" : o.tls() ? "tls" : "tcp";
  return Status::Ok();
}

Status Session::AdoptTransport() {
  if (upgrade_ == nullptr) return Status::Ok();
  const Connection* before = conn_.get();
  Status st = upgrade_->Finish(hello_, chunk_bytes_, &conn_);
  upgrade_.reset();
  HIPR_RETURN_IF_ERROR(st);
  if (conn_.get() != before) transport_ = "rdma";  // Upgraded from tcp.
  if (conn_.get() != before) stats::SetBulkSummary([c = conn_.get()] { return c->BulkSummary(); });  // HIPR_STATS=1.
  return Status::Ok();
}

// The tenant's credential from HIPR_TOKEN or HIPR_TOKEN_FILE; `has` false
// when neither is set.
static Status LoadCredential(const Config& config, auth::Credential* out, bool* has) {
  *has = false;
  if (!config.token.empty()) {
    Status st = auth::ParseCredential(config.token, out);
    if (!st.ok()) return InvalidArgument("HIPR_TOKEN: " + st.message());
    *has = true;
    return Status::Ok();
  }
  if (config.token_file.empty()) return Status::Ok();
  FILE* f = std::fopen(config.token_file.c_str(), "re");
  if (f == nullptr)
    return InvalidArgument("HIPR_TOKEN_FILE: cannot read " + config.token_file + ": " + std::strerror(errno));
  char buf[2048];
  const size_t n = std::fread(buf, 1, sizeof buf, f);
  const bool more = std::fgetc(f) != EOF;
  std::fclose(f);
  if (more) return InvalidArgument("HIPR_TOKEN_FILE: " + config.token_file + " is larger than a credential");
  Status st = auth::ParseCredential(std::string_view(buf, n), out);
  if (!st.ok()) return InvalidArgument("HIPR_TOKEN_FILE " + config.token_file + ": " + st.message());
  *has = true;
  return Status::Ok();
}

Status Session::Handshake(wire::Op op, const Encoded& body, msg::HelloReply* reply) {
  Pending p;
  p.id = NextRequestId();
  p.reply_op = wire::ReplyOp(op);
  {
    MutexLock lock(recv_mu_);
    pending_[p.id] = &p;
  }
  std::vector<uint8_t> frame;
  AppendFrame(&frame, static_cast<uint16_t>(op), p.id, body.data(), body.size(), nullptr, 0, chunk_bytes_);
  HIPR_RETURN_IF_ERROR(conn_->SendAll(frame.data(), frame.size()));
  HIPR_RETURN_IF_ERROR(AwaitReply(&p));
  return codec::DecodeBody(p.body.data(), p.body.size(), reply);
}

Status Session::Hello(AddressRange* window) {
  auth::Credential credential;
  bool has_credential = false;
  HIPR_RETURN_IF_ERROR(LoadCredential(config_, &credential, &has_credential));
  msg::HelloRequest request;
  request.min_version = wire::kMinProtocolVersion;
  request.max_version = wire::kProtocolVersion;
  request.client_name = ClientName();
  request.client_pid = static_cast<uint32_t>(getpid());
  request.window = msg::AddressWindow{window->base, window->size};
  request.chunk_bytes = config_.chunk_bytes;
  const bool want_lz4 = WantLz4();
  request.features = {wire::kFeatureCopyChanged, wire::kFeatureWorkerStatus};
  if (want_lz4) {
    request.features.push_back(wire::kFeatureLz4ToDevice);
    request.features.push_back(wire::kFeatureLz4FromDevice);
  }
  request.visible_devices = config_.visible_devices;
  // Resume over tcp, plain or TLS (whose RecvVCounted is exact, as
  // ResumableLink needs); by default only where the worker is on another
  // host.
  const bool resumable_transport = transport_ == "tcp" || transport_ == "tls";
  const bool want_resume = resumable_transport && (config_.resume == Compress::kOn ||
                                                   (config_.resume == Compress::kAuto && !conn_->PeerIsLocal()));
  if (want_resume) request.features.push_back(wire::kFeatureResume);
  HIPR_RETURN_IF_ERROR(auth::RandomNonce(&request.client_nonce));
  if (upgrade_ != nullptr) upgrade_->Offer(&request);
  HIPR_RETURN_IF_ERROR(Handshake(wire::Op::kHello, Encoded(request), &hello_));
  const bool challenged = hello_.status == StatusCode::kUnauthenticated && !hello_.auth_challenge.empty();
  if (challenged) {
    const std::vector<uint8_t> challenge = hello_.auth_challenge;
    msg::AuthRequest answer;
    if (has_credential) {
      answer.tenant = credential.tenant;
      answer.mac = auth::Mac(auth::Role::kClient, credential.secret, challenge, request.client_nonce,
                             credential.tenant);
    }
    // Without a credential the empty answer lets the worker log why.
    HIPR_RETURN_IF_ERROR(Handshake(wire::Op::kAuth, Encoded(answer), &hello_));
    if (!has_credential)
      return Status(StatusCode::kUnauthenticated,
                    "the worker requires authentication: set HIPR_TOKEN=TENANT:SECRET or HIPR_TOKEN_FILE=PATH");
    if (hello_.status == StatusCode::kOk &&
        !auth::MacEquals(hello_.auth_proof, auth::Mac(auth::Role::kWorker, credential.secret, challenge,
                                                      request.client_nonce, credential.tenant)))
      return Status(StatusCode::kUnauthenticated,
                    "the worker accepted tenant '" + credential.tenant +
                        "' but could not prove it holds the same secret: it is not the worker HIPR_TOKEN is for");
  }
  if (hello_.status != StatusCode::kOk)
    return Status(hello_.status, "the worker refused the session: " + hello_.message);
  if (has_credential && !challenged)
    return Status(StatusCode::kUnauthenticated,
                  "HIPR_TOKEN/HIPR_TOKEN_FILE is set but the worker did not authenticate, so it cannot prove it is "
                  "the worker the credential is for; unset them to use a worker without --auth-file");
  if (hello_.version < wire::kMinProtocolVersion || hello_.version > wire::kProtocolVersion)
    return Status(StatusCode::kVersionMismatch,
                  "the worker chose protocol v" + std::to_string(hello_.version) + "; this stub speaks v" +
                      std::to_string(wire::kMinProtocolVersion) + "..v" +
                      std::to_string(wire::kProtocolVersion));
  if (hello_.chunk_bytes != 0) {
    if (hello_.chunk_bytes < wire::kMinChunkBytes || hello_.chunk_bytes > wire::kMaxChunkBytes)
      return ProtocolError("the worker chose a chunk size of " + std::to_string(hello_.chunk_bytes) +
                           " bytes, outside the protocol's limits");
    chunk_bytes_ = hello_.chunk_bytes;
  }
  // The window first: the worker chose a counter-offer from its free space
  // at the hello, and anything this process maps before reserving it (the
  // verbs library maps what a queue pair needs when it connects) may land
  // there.
  HIPR_RETURN_IF_ERROR(AdoptWindow(hello_.window, window));
  HIPR_RETURN_IF_ERROR(AdoptTransport());
  devices_ = hello_.devices;
  for (const msg::DeviceInfo& d : devices_) answers_.push_back(std::make_unique<const DeviceAnswers>(d));
  // Only what was offered counts.
  for (const std::string& f : hello_.features) {
    if (f == wire::kFeatureLz4ToDevice) lz4_to_device_ = want_lz4;
    if (f == wire::kFeatureLz4FromDevice) lz4_from_device_ = want_lz4;
    if (f == wire::kFeatureCopyChanged) copy_changed_ = true;
    if (f == wire::kFeatureWorkerStatus) worker_status_ = true;
  }
  const bool resume = want_resume && resumable_transport &&
                      std::find(hello_.features.begin(), hello_.features.end(), wire::kFeatureResume) !=
                          hello_.features.end();
  if (resume) {
    if (hello_.resume_secret.size() != auth::kNonceBytes || hello_.resume_grace_ms == 0)
      return ProtocolError("the worker agreed to resume without a secret and a grace period");
    {
      MutexLock lock(resume_mu_);
      resume_secret_ = hello_.resume_secret;
    }
    hello_.resume_secret.clear();
    resume_grace_ms_ = hello_.resume_grace_ms;
    auto link = std::make_unique<ResumableLink>(
        std::move(conn_), [this](uint64_t received, const Status& why, const std::atomic<bool>& closed,
                                 ResumableLink::Relinked* out) { return Relink(received, why, closed, out); });
    link_ = link.get();
    conn_ = std::move(link);
    {
      MutexLock lock(g_resumable_mu);
      static const bool armed = atexit(&Session::LeaveAll) == 0;
      if (!armed) HIPR_LOG_WARN("cannot arrange to tell the worker at exit: it keeps the session its grace period");
      Resumable().push_back(this);
    }
    HIPR_LOG_INFO("resumable: a dropped link is resumed within %u s (HIPR_RESUME=off: never)",
                  resume_grace_ms_ / 1000);
  }
  // "on" compresses whatever compresses; "auto" also asks whether the link
  // is slower than lz4 (ChunkCompressor's link guard).
  {
    MutexLock lock(send_mu_);  // No other thread yet; the rule holds anyway.
    compressor_.set_link_guard(config_.compress == Compress::kAuto);
  }
  stats::Get().lz4_directions.store((lz4_to_device_ ? 1 : 0) | (lz4_from_device_ ? 2 : 0));
  HIPR_LOG_INFO("bulk lz4: to the device %s, from the device %s (HIPR_COMPRESS: %s%s)", lz4_to_device_ ? "on" : "off",
                lz4_from_device_ ? "on" : "off",
                config_.compress == Compress::kOn ? "on" : config_.compress == Compress::kOff ? "off" : "auto",
                want_lz4 && !lz4_to_device_ && !lz4_from_device_ ? "; the worker declined" : "");
  if (hello_.heartbeat_ms != 0 && hello_.heartbeat_ms * uint64_t{2} > uint64_t(config_.peer_timeout_ms))
    HIPR_LOG_WARN("the worker sends heartbeats every %u ms but HIPR_PEER_TIMEOUT_MS is %d: long "
                  "calls may be taken for a dead link; raise HIPR_PEER_TIMEOUT_MS",
                  hello_.heartbeat_ms, config_.peer_timeout_ms);
  return Status::Ok();
}

namespace {

// Reads frames on `c` until the reply `op` to request `id` (heartbeats
// skipped), until `deadline` or `closed`.
Status ReadHandshakeReply(Connection& c, std::chrono::steady_clock::time_point deadline,
                          const std::atomic<bool>& closed, uint16_t op, uint32_t id, std::vector<uint8_t>* body) {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                           std::chrono::steady_clock::now());
    if (closed.load()) return LinkDown("the session is closing");
    if (left.count() <= 0) return Status(StatusCode::kTimeout, "no answer to the resuming hello in time");
    Status st = c.WaitReadable(static_cast<int>(std::min<int64_t>(left.count(), 200)));
    if (st.code() == StatusCode::kTimeout) continue;
    HIPR_RETURN_IF_ERROR(st);
    wire::FrameHeader h;
    HIPR_RETURN_IF_ERROR(ReadHeader(c, &h));
    if (h.op == static_cast<uint16_t>(wire::Op::kHeartbeat)) {
      HIPR_RETURN_IF_ERROR(SkipPayload(c, h.payload_length));
      continue;
    }
    HIPR_RETURN_IF_ERROR(ReadBody(c, h, body));
    if (h.op == static_cast<uint16_t>(wire::Op::kFatal)) {
      msg::Fatal fatal;
      HIPR_RETURN_IF_ERROR(codec::DecodeBody(body->data(), body->size(), &fatal));
      // A worker full for now (kUnavailable) is tried again.
      return Status(fatal.status == StatusCode::kUnavailable ? StatusCode::kUnavailable : StatusCode::kDeviceLost,
                    fatal.message);
    }
    if (h.op != op || h.request_id != id)
      return ProtocolError("expected the answer to the resuming hello, got op " + OpName(h.op));
    return Status::Ok();
  }
}

}  // namespace

Status Session::ResumeOnce(uint64_t received, std::chrono::steady_clock::time_point deadline,
                           const std::atomic<bool>& closed, std::unique_ptr<Connection>* conn,
                           uint64_t* peer_received) {
  transport::ClientOptions o = config_.TransportOptions();
  o.log = [](transport::LogLevel, const std::string& line) { HIPR_LOG_DEBUG("%s", line.c_str()); };
  transport::ClientLink link;
  HIPR_RETURN_IF_ERROR(transport::Connect(o, &link));
  Connection& c = *link.conn;
  msg::HelloRequest request;
  request.min_version = wire::kMinProtocolVersion;
  request.max_version = wire::kProtocolVersion;
  request.client_name = ClientName();
  request.client_pid = static_cast<uint32_t>(getpid());
  request.chunk_bytes = chunk_bytes_;
  request.features = {wire::kFeatureResume};
  HIPR_RETURN_IF_ERROR(auth::RandomNonce(&request.client_nonce));
  request.resume_session = hello_.session_id;
  {
    MutexLock lock(resume_mu_);
    request.resume_secret = resume_secret_;
  }
  request.resume_received = received;
  std::vector<uint8_t> frame;
  uint32_t id = NextRequestId();
  Encoded hello(request);
  AppendFrame(&frame, static_cast<uint16_t>(wire::Op::kHello), id, hello.data(), hello.size(), nullptr, 0,
              chunk_bytes_);
  HIPR_RETURN_IF_ERROR(c.SendAll(frame.data(), frame.size()));
  std::vector<uint8_t> body;
  HIPR_RETURN_IF_ERROR(ReadHandshakeReply(c, deadline, closed, wire::ReplyOp(wire::Op::kHello), id, &body));
  msg::HelloReply reply;
  HIPR_RETURN_IF_ERROR(codec::DecodeBody(body.data(), body.size(), &reply));
  if (reply.status == StatusCode::kUnauthenticated && !reply.auth_challenge.empty()) {
    // Authenticated again, as at the first hello.
    auth::Credential credential;
    bool has_credential = false;
    HIPR_RETURN_IF_ERROR(LoadCredential(config_, &credential, &has_credential));
    if (!has_credential) return Status(StatusCode::kUnauthenticated, "the worker asks for a credential (HIPR_TOKEN)");
    const std::vector<uint8_t> challenge = reply.auth_challenge;
    msg::AuthRequest answer;
    answer.tenant = credential.tenant;
    answer.mac = auth::Mac(auth::Role::kClient, credential.secret, challenge, request.client_nonce, credential.tenant);
    Encoded auth_body(answer);
    frame.clear();
    id = NextRequestId();
    AppendFrame(&frame, static_cast<uint16_t>(wire::Op::kAuth), id, auth_body.data(), auth_body.size(), nullptr, 0,
                chunk_bytes_);
    HIPR_RETURN_IF_ERROR(c.SendAll(frame.data(), frame.size()));
    HIPR_RETURN_IF_ERROR(ReadHandshakeReply(c, deadline, closed, wire::ReplyOp(wire::Op::kAuth), id, &body));
    reply = msg::HelloReply{};
    HIPR_RETURN_IF_ERROR(codec::DecodeBody(body.data(), body.size(), &reply));
    if (reply.status == StatusCode::kOk &&
        !auth::MacEquals(reply.auth_proof, auth::Mac(auth::Role::kWorker, credential.secret, challenge,
                                                     request.client_nonce, credential.tenant)))
      return Status(StatusCode::kUnauthenticated, "the worker could not prove it holds the tenant's secret");
  }
  if (reply.status != StatusCode::kOk) return Status(reply.status, reply.message);
  if (reply.session_id != hello_.session_id || reply.resume_secret.size() != auth::kNonceBytes)
    return ProtocolError("the worker answered the resume of session " + std::to_string(hello_.session_id) +
                         " for session " + std::to_string(reply.session_id) + " or without a new secret");
  {
    MutexLock lock(resume_mu_);
    resume_secret_ = reply.resume_secret;
  }
  *peer_received = reply.resume_received;
  *conn = std::move(link.conn);
  return Status::Ok();
}

Status Session::Relink(uint64_t received, const Status& why, const std::atomic<bool>& closed,
                       ResumableLink::Relinked* out) {
  if (leaving_.load()) return LinkDown(why.message() + " (at exit)");
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::milliseconds(resume_grace_ms_);
  HIPR_LOG_WARN("link to worker %s lost (%s); resuming session %llu (the worker keeps it %u s)", server_.c_str(),
                why.message().c_str(), static_cast<unsigned long long>(hello_.session_id), resume_grace_ms_ / 1000);
  int attempts = 0;
  int backoff_ms = 20;
  Status last;
  while (!closed.load()) {
    ++attempts;
    std::unique_ptr<Connection> conn;
    uint64_t peer_received = 0;
    last = ResumeOnce(received, deadline, closed, &conn, &peer_received);
    if (last.ok()) {
      const uint64_t again = link_->sent() - std::min(link_->sent(), peer_received);
      HIPR_LOG_WARN("session %llu resumed with worker %s after %.2f s (%d attempt%s); sending %llu bytes again",
                    static_cast<unsigned long long>(hello_.session_id), server_.c_str(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), attempts,
                    attempts == 1 ? "" : "s", static_cast<unsigned long long>(again));
      stats::Add(stats::Get().resumes);
      stats::Add(stats::Get().resent_bytes, again);
      out->conn = std::move(conn);
      out->peer_received = peer_received;
      return Status::Ok();
    }
    const bool again = last.code() == StatusCode::kLinkDown || last.code() == StatusCode::kTimeout ||
                       last.code() == StatusCode::kUnavailable;
    if (!again) break;  // The worker answered, and refused.
    HIPR_LOG_DEBUG("resume attempt %d: %s", attempts, last.ToString().c_str());
    if (std::chrono::steady_clock::now() + std::chrono::milliseconds(backoff_ms) >= deadline) break;
    usleep(static_cast<useconds_t>(backoff_ms) * 1000);
    backoff_ms = std::min(backoff_ms * 2, 1000);
  }
  if (closed.load()) return LinkDown("the session is closing");
  return LinkDown("the link dropped (" + why.message() + ") and session " + std::to_string(hello_.session_id) +
                  " could not be resumed in " + std::to_string(attempts) + " attempt" + (attempts == 1 ? "" : "s") +
                  ": " + last.message() +
                  (attempts > 1 && last.code() == StatusCode::kUnauthenticated
                       ? " (an attempt cut off before the worker's answer arrived spends the secret)"
                       : ""));
}

Status Session::BoundKept() {
  if (link_ == nullptr || link_->kept() <= kKeepLimitBytes) return Status::Ok();
  msg::CallReply reply;
  return Call<wire::Op::kLinkAck>(msg::LinkAck{link_->received(), true}, &reply);
}

bool Session::WantLz4() const {
  switch (config_.compress) {
    case Compress::kOn: return true;
    case Compress::kOff: return false;
    case Compress::kAuto: return !conn_->PeerIsLocal();
  }
  return false;
}

Status Session::AdoptWindow(const msg::AddressWindow& offered, AddressRange* window) {
  if (offered.base == window->base && offered.size == window->size) return Status::Ok();
  if (offered.size == 0) {
    // A device that places memory itself (`hip`): no window; the client
    // reserves each allocation's pages instead.
    HIPR_LOG_INFO("the worker places device memory itself; releasing the offered window");
    ReleaseRange(*window);
    *window = AddressRange{};
    return Status::Ok();
  }
  if (offered.base % PageSize() != 0 || offered.base + offered.size < offered.base)
    return ProtocolError("the worker counter-offered an invalid window [" + Hex(offered.base) + ", +" +
                         Hex(offered.size) + ")");
  // A worker's free space often overlaps our offer (both processes lay out
  // their mappings alike): then the offer must go first.
  const bool overlaps_offer = window->Overlaps(offered.base, offered.size);
  const AddressRange offer = *window;
  if (overlaps_offer) {
    ReleaseRange(*window);
    *window = AddressRange{};
  }
  AddressRange adopted;
  Status st = ReserveAt(offered.base, offered.size, &adopted);
  if (!st.ok())
    return Status(StatusCode::kFailedPrecondition,
                  "the worker counter-offered the device window [" + Hex(offered.base) + ", " +
                      Hex(offered.base + offered.size) + ") but this process cannot reserve it (" +
                      st.message() + "); try another HIPR_WINDOW_BYTES");
  HIPR_LOG_INFO("worker counter-offered window [%s, %s) instead of [%s, %s)", Hex(adopted.base).c_str(),
                Hex(adopted.end()).c_str(), Hex(offer.base).c_str(), Hex(offer.end()).c_str());
  if (!overlaps_offer) ReleaseRange(*window);
  *window = adopted;
  return Status::Ok();
}

void Session::StartFlusher() {
  if (config_.flush_us == 0) return;  // Every post flushes at once.
  // The flusher must not take signals meant for the application's threads.
  sigset_t all;
  sigset_t old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  try {
    flusher_ = std::thread([this] { FlusherLoop(); });
    has_flusher_ = true;
  } catch (const std::exception& e) {
    HIPR_LOG_WARN("cannot start the batch flusher thread (%s); fire-and-forget calls are sent at once",
                  e.what());
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void Session::FlusherLoop() {
  MutexLock lock(batch_mu_);
  const auto max_age = std::chrono::microseconds(config_.flush_us);
  for (;;) {
    while (!stopping_ && !dead() && batch_.empty()) {
      if (link_ == nullptr) {
        batch_cv_.wait(lock.native());
        continue;
      }
      // Now and then, a link nobody uses is checked: a worker that saw it
      // drop waits for this side to resume it.
      if (batch_cv_.wait_for(lock.native(), std::chrono::milliseconds(250)) == std::cv_status::timeout) {
        lock.Unlock();
        Status st = link_->CheckIdle();
        if (!st.ok()) (void)MarkDead(st);
        lock.Lock();
      }
    }
    if (stopping_ || dead()) return;
    const auto deadline = batch_.oldest() + max_age;
    if (SendBatch::Clock::now() < deadline) {
      batch_cv_.wait_until(lock.native(), deadline);
      continue;  // Re-check: a call may have taken the batch meanwhile.
    }
    lock.Unlock();
    (void)Flush();  // A failure has made the session dead and was logged.
    lock.Lock();
  }
}

Status Session::DeadStatus() const {
  MutexLock lock(dead_mu_);
  return Status(StatusCode::kDeviceLost, dead_reason_.empty() ? "session ended" : dead_reason_);
}

StatusCode Session::DeadCause() const {
  MutexLock lock(dead_mu_);
  return dead_cause_;
}

Status Session::MarkDead(const Status& why, bool log) {
  {
    MutexLock lock(dead_mu_);
    if (dead_.load(std::memory_order_relaxed)) {
      // Already dead: keep the first reason.
    } else {
      dead_reason_ = why.ToString();
      dead_cause_ = why.code();
      dead_.store(true, std::memory_order_release);
      if (log)
        HIPR_LOG_ERROR("session with worker %s ended: %s; every later HIP call %sreturns hipErrorNoDevice",
                       server_.c_str(), dead_reason_.c_str(),
                       config_.workers > 1 ? "on its devices (the other workers' go on) " : "");
    }
  }
  if (conn_ != nullptr && !abandoned_.load()) conn_->Shutdown();
  { MutexLock lock(batch_mu_); }
  batch_cv_.notify_all();
  { MutexLock lock(recv_mu_); }
  recv_cv_.notify_all();  // Waiters see the session dead.
  return DeadStatus();
}

Status Session::PostEncoded(uint16_t op, const uint8_t* body, size_t len, const iovec* bulk,
                            int count) {
  if (dead()) return DeadStatus();
  stats::Add(stats::Get().calls);
  const uint32_t id = NextRequestId();
  bool flush_now = false;
  bool was_empty = false;
  {
    MutexLock lock(batch_mu_);
    was_empty = batch_.empty();
    // The clock only for a frame that starts the batch (Append keeps no
    // other time): a burst of launches reads it once, not per launch.
    batch_.Append(op, id, body, len, bulk, count, chunk_bytes_,
                  was_empty ? SendBatch::Clock::now() : SendBatch::Clock::time_point{});
    flush_now = !has_flusher_ || batch_.bytes() > config_.batch_bytes;
  }
  if (flush_now) HIPR_RETURN_IF_ERROR(Flush());
  else if (was_empty) batch_cv_.notify_one();
  return BoundKept();
}

Status Session::PostCopy(const msg::CopyToDeviceRequest& request, const iovec* src, int src_count,
                         bool src_pinned) {
  Encoded body(request);
  const uint16_t op = static_cast<uint16_t>(wire::Op::kCopyToDevice);
  if (IovBytes(src, src_count) <= kInlineBulkBytes)
    return PostEncoded(op, body.data(), body.size(), src, src_count);
  if (dead()) return DeadStatus();
  stats::Add(stats::Get().calls);
  const uint32_t id = NextRequestId();
  {
    MutexLock send(send_mu_);
    HIPR_RETURN_IF_ERROR(SendLocked(op, id, body.data(), body.size(), src, src_count, src_pinned));
  }
  return BoundKept();
}

Status Session::Flush() {
  MutexLock send(send_mu_);
  return SendLocked(0, 0, nullptr, 0, nullptr, 0);
}

Status Session::SendLocked(uint16_t op, uint32_t id, const uint8_t* body, size_t len,
                           const iovec* bulk, int count, bool bulk_pinned) {
  if (dead()) return DeadStatus();
  {
    MutexLock lock(batch_mu_);
    batch_.TakeInto(&outgoing_);
  }
  if (link_ != nullptr && link_->received() - acked_to_worker_ >= kAckEveryBytes && (op != 0 || !outgoing_.empty())) {
    // What arrived since the last one, so that the worker drops its copies.
    acked_to_worker_ = link_->received();
    Encoded ack(msg::LinkAck{acked_to_worker_, false});
    AppendFrame(&outgoing_, static_cast<uint16_t>(wire::Op::kLinkAck), NextRequestId(), ack.data(), ack.size(),
                nullptr, 0, chunk_bytes_);
  }
  if (op != 0) AppendFrame(&outgoing_, op, id, body, len, nullptr, 0, chunk_bytes_);
  if (outgoing_.empty()) return Status::Ok();
  stats::Add(stats::Get().bytes_sent, outgoing_.size() + (op != 0 ? IovBytes(bulk, count) : 0));
  Status st = SendPrefixAndBulk(*conn_, outgoing_, id, bulk, op != 0 ? count : 0, chunk_bytes_,
                                bulk_pinned,
                                lz4_to_device_ ? &compressor_ : nullptr);
  outgoing_.clear();
  if (lz4_to_device_) {
    const ChunkCompressor::Counters c = compressor_.TakeCounters();
    stats::Counters& s = stats::Get();
    stats::Add(s.lz4_sent_chunks, c.compressed);
    stats::Add(s.lz4_sent_raw_bytes, c.raw_bytes);
    stats::Add(s.lz4_sent_wire_bytes, c.wire_bytes);
    stats::Add(s.lz4_raw_sampled, c.raw_sampled);
    stats::Add(s.lz4_raw_whole, c.raw_whole);
    stats::Add(s.lz4_raw_backoff, c.raw_backoff);
    stats::Add(s.lz4_raw_link, c.raw_link);
    stats::Add(s.lz4_ns, c.ns);
  }
  return Check(st);
}

Status Session::Exchange(uint16_t op, const uint8_t* body, size_t len, const iovec* bulk, int count,
                         Pending* p) {
  if (dead()) return DeadStatus();
  stats::Add(stats::Get().calls);
  stats::Add(stats::Get().round_trips);
  const uint64_t started_ns = stats::NowNs();
  p->id = NextRequestId();
  p->reply_op = wire::ReplyOp(static_cast<wire::Op>(op));
  {
    // Registered before it is sent: the reply may be read by another waiter
    // as soon as the request leaves.
    MutexLock lock(recv_mu_);
    pending_[p->id] = p;
  }
  Status st;
  uint64_t sent_end = 0;  // On a resumable link: where this request ends in the stream.
  {
    MutexLock send(send_mu_);
    // The bulk of a call stays the caller's, unchanged, until the reply,
    // which acknowledges it: the link keeps it by reference, not a copy.
    if (link_ != nullptr) link_->Lend(bulk, count);
    st = SendLocked(op, p->id, body, len, bulk, count, p->send_pinned);
    if (link_ != nullptr) {
      link_->Lend(nullptr, 0);
      sent_end = link_->sent();
    }
  }
  if (!st.ok()) {
    MutexLock lock(recv_mu_);
    pending_.erase(p->id);
    return st;
  }
  st = AwaitReply(p);
  stats::AddRoundTrip(stats::NowNs() - started_ns);
  // The worker replies only after reading the whole request: it has every
  // byte before it, which need not be kept for a resend any more.
  if (st.ok() && link_ != nullptr) (void)link_->Acknowledge(sent_end);
  return st;
}

Status Session::AwaitReply(Pending* p) {
  Status st = AwaitUntil([p] { return p->done; });
  if (!st.ok()) {
    MutexLock lock(recv_mu_);
    pending_.erase(p->id);
    return st;
  }
  return p->status;
}

Status Session::AwaitUntil(const std::function<bool()>& done) {
  MutexLock lock(recv_mu_);
  while (!done()) {
    if (dead() && !reading_) return DeadStatus();
    if (reading_) {
      recv_cv_.wait(lock.native());
      continue;
    }
    reading_ = true;
    lock.Unlock();
    Status st = ReadOneFrame();
    // In the hello, Open() says why, once.
    if (!st.ok()) (void)MarkDead(st, /*log=*/opened_.load());
    lock.Lock();
    reading_ = false;
    recv_cv_.notify_all();  // Another waiter takes over the socket, or sees its answer.
  }
  return Status::Ok();
}

Status Session::PostCopyFromDevice(const msg::CopyFromDeviceRequest& request, const iovec* dst, int dst_count) {
  if (dead()) return DeadStatus();
  StartCallbackThread();
  Encoded body(request);
  auto p = std::make_unique<Pending>();
  p->reply_op = wire::ReplyOp(wire::Op::kCopyFromDevice);
  p->id = NextRequestId();
  p->detached = true;
  p->recv_pinned = true;  // By this call's contract.
  p->detached_bulk.assign(dst, dst + dst_count);
  p->recv_bulk = p->detached_bulk.data();
  p->recv_count = dst_count;
  const uint32_t id = p->id;
  {
    // Registered before it is sent, as in Exchange.
    MutexLock lock(recv_mu_);
    pending_[id] = p.release();
    ++detached_copies_;
  }
  recv_cv_.notify_all();  // The callback thread reads while it is outstanding.
  stats::Add(stats::Get().calls);
  bool flush_now = false;
  {
    MutexLock lock(batch_mu_);
    batch_.Append(static_cast<uint16_t>(wire::Op::kCopyFromDevice), id, body.data(), body.size(), nullptr, 0,
                  chunk_bytes_, batch_.empty() ? SendBatch::Clock::now() : SendBatch::Clock::time_point{});
    flush_now = !has_flusher_ || batch_.bytes() > config_.batch_bytes;
  }
  batch_cv_.notify_one();
  return flush_now ? Flush() : Status::Ok();
}

Status Session::AwaitAsyncCopies() {
  {
    MutexLock lock(recv_mu_);
    if (detached_copies_ == 0) return Status::Ok();
  }
  HIPR_RETURN_IF_ERROR(Flush());
  return AwaitUntil([this]() HIPR_REQUIRES(recv_mu_) { return detached_copies_ == 0; });  // Run under recv_mu_.
}

void Session::ForgetMemory(const void* addr, size_t bytes) {
  // Connection::ForgetMemory may be called from any thread at any time.
  if (conn_ != nullptr) conn_->ForgetMemory(addr, bytes);
}

int32_t Session::TakeAsyncError() {
  MutexLock lock(recv_mu_);
  return std::exchange(async_error_, 0);
}

Status Session::ReadOneFrame() {
  if (dead()) return DeadStatus();
  Status st = conn_->WaitReadable(config_.peer_timeout_ms);
  if (st.code() == StatusCode::kTimeout) {
    const Status silent(StatusCode::kTimeout, "no reply and no heartbeat from the worker for " +
                                                  std::to_string(config_.peer_timeout_ms) +
                                                  " ms (HIPR_PEER_TIMEOUT_MS)");
    // A silent link is a dropped one: resumed where it can be.
    if (link_ == nullptr) return silent;
    return link_->Break(silent);
  }
  HIPR_RETURN_IF_ERROR(st);
  wire::FrameHeader h;
  HIPR_RETURN_IF_ERROR(ReadHeader(*conn_, &h));
  stats::Add(stats::Get().bytes_received, sizeof(wire::FrameHeader) + h.payload_length);
  if (h.op == static_cast<uint16_t>(wire::Op::kHeartbeat)) return SkipPayload(*conn_, h.payload_length);
  if (h.op == static_cast<uint16_t>(wire::Op::kOutput)) {
    HIPR_RETURN_IF_ERROR(ReadBody(*conn_, h, &scratch_));
    msg::Output output;
    HIPR_RETURN_IF_ERROR(codec::DecodeBody(scratch_.data(), scratch_.size(), &output));
    if (!output.text.empty()) {
      std::fwrite(output.text.data(), 1, output.text.size(), stdout);
      std::fflush(stdout);
    }
    return Status::Ok();
  }
  if (h.op == static_cast<uint16_t>(wire::Op::kHostCallbackReady)) {
    HIPR_RETURN_IF_ERROR(ReadBody(*conn_, h, &scratch_));
    msg::HostCallbackReady ready;
    HIPR_RETURN_IF_ERROR(codec::DecodeBody(scratch_.data(), scratch_.size(), &ready));
    MutexLock lock(recv_mu_);
    auto it = waiting_callbacks_.find(ready.callback);
    if (it == waiting_callbacks_.end())
      return ProtocolError("the worker announced host callback " + std::to_string(ready.callback) +
                           ", which is not waiting");
    it->second.error = ready.error;
    ready_callbacks_.push_back(std::move(it->second));
    waiting_callbacks_.erase(it);
    recv_cv_.notify_all();
    return Status::Ok();
  }
  if (h.op == static_cast<uint16_t>(wire::Op::kFatal)) {
    HIPR_RETURN_IF_ERROR(ReadBody(*conn_, h, &scratch_));
    msg::Fatal fatal;
    HIPR_RETURN_IF_ERROR(codec::DecodeBody(scratch_.data(), scratch_.size(), &fatal));
    // A refusal for now (the worker full or busy with hellos) stays
    // kUnavailable, so that Open retries it.
    if (fatal.status == StatusCode::kUnavailable)
      return Status(StatusCode::kUnavailable, "the worker refused the session for now: " + fatal.message);
    return Status(StatusCode::kDeviceLost, "the worker ended the session (" +
                                               std::string(StatusCodeName(fatal.status)) + "): " + fatal.message);
  }
  Pending* p = nullptr;
  {
    MutexLock lock(recv_mu_);
    auto it = pending_.find(h.request_id);
    if (it != pending_.end()) p = it->second;
  }
  if (p == nullptr)
    return ProtocolError("got op " + OpName(h.op) + " with request id " + std::to_string(h.request_id) +
                         ", which no call is waiting for");
  if (h.op != p->reply_op)
    return ProtocolError("expected the reply " + OpName(p->reply_op) + " to request " + std::to_string(p->id) +
                         ", got op " + OpName(h.op));
  // `p` stays valid: its owner waits until it is marked done (a detached
  // one is ours to delete).
  HIPR_RETURN_IF_ERROR(ReadBody(*conn_, h, &p->body));
  int32_t error = 0;
  if (p->changed_dst != nullptr) {
    HIPR_RETURN_IF_ERROR(ReadChanged(p));
  } else if (p->recv_count > 0 || p->detached) {
    // A detached copy's error is ours to keep; its bytes (if any) follow.
    msg::CallReply reply;
    HIPR_RETURN_IF_ERROR(codec::DecodeBody(p->body.data(), p->body.size(), &reply));
    error = reply.error;
    if (reply.error == 0 && p->recv_count > 0) {
      stats::Add(stats::Get().bytes_received, IovBytes(p->recv_bulk, p->recv_count));
      Status st = ReadBulk(*conn_, p->id, p->recv_bulk, p->recv_count, lz4_from_device_ ? &inflater_ : nullptr,
                           p->recv_pinned ? BulkMemory::kStays : BulkMemory::kTransient);
      if (lz4_from_device_) {
        const ChunkInflater::Counters c = inflater_.TakeCounters();
        stats::Add(stats::Get().lz4_received_chunks, c.chunks);
        stats::Add(stats::Get().lz4_received_raw_bytes, c.raw_bytes);
        stats::Add(stats::Get().lz4_received_wire_bytes, c.wire_bytes);
      }
      HIPR_RETURN_IF_ERROR(st);
    }
  }
  MutexLock lock(recv_mu_);
  pending_.erase(p->id);
  if (p->detached) {
    if (error != 0 && async_error_ == 0) async_error_ = error;
    --detached_copies_;
    delete p;
    return Status::Ok();
  }
  p->done = true;
  p->status = Status::Ok();
  return Status::Ok();
}

Status Session::ReadChanged(Pending* p) {
  msg::CopyChangedReply reply;
  HIPR_RETURN_IF_ERROR(codec::DecodeBody(p->body.data(), p->body.size(), &reply));
  p->changed_runs->clear();
  if (reply.error != 0) return Status::Ok();
  if (reply.runs.size() % 2 != 0) return ProtocolError("a managed read-back's runs come in pairs");
  std::vector<iovec> dst;
  uint64_t end = 0;
  for (size_t i = 0; i < reply.runs.size(); i += 2) {
    const uint64_t offset = reply.runs[i];
    const uint64_t length = reply.runs[i + 1];
    if (length == 0 || offset < end || offset > p->changed_size || length > p->changed_size - offset)
      return ProtocolError("a managed read-back's runs must be ascending, disjoint and inside the region");
    end = offset + length;
    p->changed_runs->emplace_back(offset, length);
    dst.push_back(iovec{p->changed_dst + offset, length});
  }
  if (dst.empty()) return Status::Ok();
  stats::Add(stats::Get().bytes_received, IovBytes(dst.data(), static_cast<int>(dst.size())));
  Status st = ReadBulk(*conn_, p->id, dst.data(), static_cast<int>(dst.size()),
                       lz4_from_device_ ? &inflater_ : nullptr, BulkMemory::kTransient);
  if (lz4_from_device_) {
    const ChunkInflater::Counters c = inflater_.TakeCounters();
    stats::Add(stats::Get().lz4_received_chunks, c.chunks);
    stats::Add(stats::Get().lz4_received_raw_bytes, c.raw_bytes);
    stats::Add(stats::Get().lz4_received_wire_bytes, c.wire_bytes);
  }
  return st;
}

Status Session::CopyChanged(const msg::CopyChangedRequest& request, uint8_t* dst,
                            std::vector<std::pair<uint64_t, uint64_t>>* runs, int32_t* error) {
  Encoded body(request);
  Pending p;
  p.changed_dst = dst;
  p.changed_size = request.src.width;
  p.changed_runs = runs;
  HIPR_RETURN_IF_ERROR(Exchange(static_cast<uint16_t>(wire::Op::kCopyChangedFromDevice), body.data(), body.size(),
                                nullptr, 0, &p));
  msg::CopyChangedReply reply;
  Status st = codec::DecodeBody(p.body.data(), p.body.size(), &reply);
  if (!st.ok()) return MarkDead(Status(StatusCode::kProtocolError, "bad reply body: " + st.message()));
  *error = reply.error;
  return Status::Ok();
}

void Session::StartCallbackThread() {
  std::call_once(callback_thread_once_, [this] {
    // Like the flusher: no signals meant for the application's threads.
    sigset_t all;
    sigset_t old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    callback_thread_ = std::thread([this] { CallbackLoop(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  });
}

uint64_t Session::AddHostCallback(std::function<void(int32_t error)> fn) {
  StartCallbackThread();
  uint64_t id = 0;
  {
    MutexLock lock(recv_mu_);
    id = next_callback_id_++;
    waiting_callbacks_[id] = HostCallback{id, std::move(fn), 0};
  }
  recv_cv_.notify_all();  // The callback thread now reads when no caller does.
  return id;
}

void Session::DropHostCallback(uint64_t id) {
  MutexLock lock(recv_mu_);
  waiting_callbacks_.erase(id);
}

Status Session::PostHostCallback(int device, uint64_t stream, std::function<void(int32_t error)> fn) {
  if (dead()) return DeadStatus();
  const uint64_t id = AddHostCallback(std::move(fn));
  Status st = Post<wire::Op::kStreamHostCallback>(msg::StreamHostCallbackRequest{device, stream, id});
  if (!st.ok()) DropHostCallback(id);
  return st;
}

void Session::CallbackLoop() {
  MutexLock lock(recv_mu_);
  for (;;) {
    if (stopping_callbacks_) return;
    if (!ready_callbacks_.empty()) {
      HostCallback cb = std::move(ready_callbacks_.front());
      ready_callbacks_.pop_front();
      lock.Unlock();
      cb.fn(cb.error);
      // The stream waits for this: send it now.
      if (Post<wire::Op::kHostCallbackDone>(msg::HostCallbackDone{cb.id}).ok()) (void)Flush();
      lock.Lock();
      continue;
    }
    if (dead()) {
      // Never announced now: they will not run (the session is gone).
      if (!waiting_callbacks_.empty())
        HIPR_LOG_WARN("%zu host callbacks will not run: the session ended", waiting_callbacks_.size());
      waiting_callbacks_.clear();
      while (!stopping_callbacks_) recv_cv_.wait(lock.native());
      return;
    }
    if ((!waiting_callbacks_.empty() || detached_copies_ > 0) && !reading_) {
      reading_ = true;
      lock.Unlock();
      Status st = ReadOneFrame();
      if (!st.ok()) (void)MarkDead(st);
      lock.Lock();
      reading_ = false;
      recv_cv_.notify_all();
      continue;
    }
    recv_cv_.wait(lock.native());
  }
}

void Session::AbandonInChild() {
  abandoned_.store(true);
  dead_.store(true);
  if (conn_ != nullptr) conn_->Abandon();
}

}  // namespace hipr::client
