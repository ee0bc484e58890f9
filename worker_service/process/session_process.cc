#include "worker_service/process/session_process.h"

#include <arpa/inet.h>

#include <signal.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "protocol/frame_io.h"
#include "protocol/shm/shm_connection.h"
#include "protocol/tcp/tcp_connection.h"
#include "protocol/tls/tls_connection.h"
#include "worker_service/device/device_factory.h"
#include "worker_service/process/handshake.h"
#include "worker_service/process/resume_door.h"
#include "worker_service/process/tls_relay.h"
#include "worker_service/session/session.h"
#include "worker_service/sim/twin/twin_fault.h"

namespace hipr::worker {
namespace {

// The TLS handshake on a tcp client's connection, within the hello's time.
// A plain hipr client (its first bytes are a frame's magic, not a TLS
// record) is told in a kFatal what to set instead of getting a closed
// socket.
Status StartTls(const WorkerConfig& config, std::unique_ptr<tcp::TcpConnection> tcp,
                std::unique_ptr<tls::TlsConnection>* out) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config.hello_timeout_ms);
  pollfd p{tcp->fd(), POLLIN, 0};
  uint8_t first[4] = {};
  if (poll(&p, 1, config.hello_timeout_ms) == 1 && recv(tcp->fd(), first, sizeof first, MSG_PEEK) == sizeof first) {
    static_assert(sizeof wire::kMagic == sizeof first);
    if (std::memcmp(first, &wire::kMagic, sizeof first) == 0) {
      const Status why(StatusCode::kUnauthenticated,
                       "this worker speaks TLS on tcp: set HIPR_TLS_CA to the CA file of its certificate");
      SendFatalFrame(*tcp, why);
      return LinkDown("TLS handshake failed: a plain hipr client (told to set HIPR_TLS_CA)");
    }
  }
  std::shared_ptr<tls::Context> ctx;
  HIPR_RETURN_IF_ERROR(tls::Context::MakeServer(
      {config.tls_cert, config.tls_key, config.tls_client_ca, config.tls_ciphersuites}, &ctx));
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return tls::TlsConnection::Accept(std::move(tcp), *ctx, std::max<int>(1, static_cast<int>(left.count())), out);
}

// With client certificates, the certificate's common name is the tenant
// where no --auth-file names one, and must be the tenant's name where it
// does.
Status TenantFromCertificate(const tls::TlsConnection& conn, Admission* admission) {
  const std::string& cn = conn.peer_common_name();
  if (cn.empty()) return Status(StatusCode::kUnauthenticated, "the client certificate has no common name");
  if (admission->tenant.name.empty()) {
    admission->tenant.name = cn;
    return Status::Ok();
  }
  if (admission->tenant.name != cn)
    return Status(StatusCode::kUnauthenticated, "the client certificate names '" + cn + "', the credential tenant '" +
                                                    admission->tenant.name + "'");
  return Status::Ok();
}

// Where a fault in twin code is reported (twin_fault.h): the slot's last
// words, which the zygote logs and sends to the client when it reaps this
// process.
Ledger* g_fault_ledger = nullptr;
int g_fault_slot = -1;

void ReportTwinFault(const char* line, size_t size) {
  if (g_fault_ledger != nullptr) g_fault_ledger->SetLastWords(g_fault_slot, line, size);
}

// A hello that resumes another session of this worker: hands the
// connection to that session's process (resume_door.h) and ends, or tells
// the client why not. Over TLS (`tls` set) the session gets one end of a
// socket pair instead, and this process relays between it and the client
// (tls_relay.h) until either side ends.
int HandOver(const WorkerConfig& config, Ledger* ledger, int slot, uint64_t session_id, Connection& conn,
             int client_fd, tls::TlsConnection* tls, bool tcp, const Admission& admission) {
  const msg::HelloRequest& hello = admission.hello;
  const std::string peer = conn.PeerName();
  Status st;
  int pair[2] = {-1, -1};
  if (!tcp) {
    st = Status(StatusCode::kFailedPrecondition, "sessions resume over tcp and TLS only");
  } else if (tls != nullptr && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    st = Status(StatusCode::kUnavailable, std::string("cannot relay the resumed session: socketpair: ") +
                                              std::strerror(errno));
  } else if (config.resume_grace_s == 0) {
    st = Status(StatusCode::kFailedPrecondition, "this worker keeps no session after its link drops (--resume-grace-s 0)");
  } else {
    Knock knock;
    knock.session_id = hello.resume_session;
    knock.tenant = admission.tenant.name;
    knock.secret = hello.resume_secret;
    knock.client_received = hello.resume_received;
    knock.reply_op = admission.reply_to.op;
    knock.reply_request_id = admission.reply_to.request_id;
    knock.version = admission.version;
    knock.peer = peer;
    knock.auth_proof = admission.auth_proof;
    st = KnockOnDoor(knock, tls != nullptr ? pair[0] : client_fd);
  }
  if (pair[0] >= 0) close(pair[0]);  // Passed on, or refused.
  if (st.ok() && tls != nullptr) {
    spdlog::info("session {}: {} resumes session {} over TLS: relaying", session_id, peer, hello.resume_session);
    ledger->MarkRelay(slot);
    // The relay sleeps between bytes: its spinning would take a core from
    // the session it serves.
    tls->set_spin_us(0);
    const Status ended = RelayTls(*tls, pair[1]);
    close(pair[1]);
    spdlog::info("session {}: relay for session {} ended: {}", session_id, hello.resume_session, ended.message());
    return 0;
  }
  if (pair[1] >= 0) close(pair[1]);
  if (st.ok()) {
    spdlog::info("session {}: {} resumes session {}: connection handed over", session_id, peer, hello.resume_session);
    conn.Abandon();  // The resumed session's process owns the socket now.
    return 0;
  }
  spdlog::warn("session {}: {} cannot resume session {}: {}", session_id, peer, hello.resume_session, st.message());
  ledger->Count(Ledger::kResumesRefused);
  msg::HelloReply reply;
  reply.status = st.code();
  reply.message = st.message();
  RefuseAdmission(conn, admission, std::move(reply));
  return kSessionExitReported;
}

}  // namespace

int RunSessionProcess(const WorkerConfig& config, Ledger* ledger, int slot, uint64_t session_id, int client_fd,
                      Transport transport) {
  std::string name = "hipr-s" + std::to_string(session_id);
  prctl(PR_SET_NAME, name.c_str());
  signal(SIGPIPE, SIG_IGN);
  // Before any thread exists (devices start stream threads): SIGTERM stays
  // pending until the session takes it between frames (see session.h).
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, nullptr);
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] [session " + std::to_string(session_id) + " pid %P] %v");
  g_fault_ledger = ledger;
  g_fault_slot = slot;
  sim::InstallTwinFaultHandlers(&ReportTwinFault);
  std::unique_ptr<Connection> conn;
  tls::TlsConnection* tls_peer = nullptr;  // conn, when it is TLS.
  if (transport == Transport::kShm) {
    shm::Options options;
    options.ring_bytes = config.shm_ring_bytes;
    options.spin_us = config.spin_us;
    options.host_bytes = config.shm_host_bytes;
    std::unique_ptr<shm::ShmConnection> shm_conn;
    Status set_up = shm::ShmConnection::Accept(client_fd, options, &shm_conn);
    if (!set_up.ok()) {
      // The zygote's copy of the socket tells the client that we ended.
      spdlog::error("session {}: cannot set up shared memory: {}", session_id, set_up.ToString());
      return 1;
    }
    conn = std::move(shm_conn);
  } else {
    auto tcp_conn = std::make_unique<tcp::TcpConnection>(client_fd);
    tcp_conn->set_spin_us(config.spin_us);
    if (config.tls_cert.empty()) {
      conn = std::move(tcp_conn);
    } else {
      const std::string peer = tcp_conn->PeerName();
      std::unique_ptr<tls::TlsConnection> tls_conn;
      Status started = StartTls(config, std::move(tcp_conn), &tls_conn);
      if (!started.ok()) {
        spdlog::warn("session {}: refused {}: {}", session_id, peer, started.message());
        ledger->Count(Ledger::kTlsFailures);
        return kSessionExitReported;
      }
      spdlog::info("session {}: {}{}", session_id, tls_conn->Describe(),
                   tls_conn->peer_subject().empty() ? "" : ", client certificate " + tls_conn->peer_subject());
      tls_conn->set_spin_us(config.spin_us);
      tls_peer = tls_conn.get();
      conn = std::move(tls_conn);
    }
  }
  // No device work before the client is admitted (authenticated, where
  // the worker has tenants).
  Admission admission;
  Status st = Handshake(*conn, config, session_id, &admission);
  if (!st.ok()) {
    spdlog::warn("session {}: refused at the hello from {}: {}", session_id, conn->PeerName(), st.ToString());
    ledger->Count(st.code() == StatusCode::kUnauthenticated ? Ledger::kAuthFailures : Ledger::kRefusedHello);
    // A refused credential has had its answer; anything else ends with why.
    if (st.scope() == StatusScope::kSession && st.code() != StatusCode::kUnauthenticated) SendFatalFrame(*conn, st);
    return kSessionExitReported;
  }
  if (tls_peer != nullptr && !config.tls_client_ca.empty()) st = TenantFromCertificate(*tls_peer, &admission);
  if (!st.ok()) {
    spdlog::warn("session {}: refused: {}", session_id, st.message());
    ledger->Count(Ledger::kAuthFailures);
    msg::HelloReply reply;
    reply.status = st.code();
    reply.message = st.message();
    RefuseAdmission(*conn, admission, std::move(reply));
    return kSessionExitReported;
  }
  if (admission.hello.resume_session != 0)
    return HandOver(config, ledger, slot, session_id, *conn, client_fd, tls_peer, transport == Transport::kTcp,
                    admission);
  const Tenant& tenant = admission.tenant;
  st = ledger->Admit(slot, tenant.name, tenant.max_sessions != 0 ? tenant.max_sessions : config.max_sessions_per_tenant,
                     tenant.memory_bytes != 0 ? tenant.memory_bytes : config.tenant_memory_bytes);
  if (!st.ok()) {
    spdlog::warn("session {}: refused: {}", session_id, st.message());
    ledger->Count(Ledger::kRefusedTenantLimit);
    msg::HelloReply reply;
    reply.status = st.code();
    reply.message = st.message();
    RefuseAdmission(*conn, admission, std::move(reply));
    return kSessionExitReported;
  }
  SlotAccount account(ledger, slot);
  std::unique_ptr<Device> device;
  const VisibleDevices visible = ParseVisibleDevices(admission.hello.visible_devices);
  st = CreateDevice(config, visible, &device);
  if (!st.ok() && st.code() == StatusCode::kNotFound) {
    spdlog::warn("session {}: refused: {}", session_id, st.message());
    msg::HelloReply reply;
    reply.status = StatusCode::kNotFound;
    reply.message = st.message() + " (as ROCm would, the process gets no device)";
    RefuseAdmission(*conn, admission, std::move(reply));
    return kSessionExitReported;
  }
  if (!st.ok()) {
    spdlog::error("session {}: cannot create the {} device: {}", session_id, config.device, st.ToString());
    msg::HelloReply reply;
    reply.status = StatusCode::kDeviceLost;
    reply.message = "the worker cannot open its device: " + st.message();
    RefuseAdmission(*conn, admission, std::move(reply));
    return kSessionExitReported;
  }
  device->SetMemoryAccount(&account);
  Session session(session_id, std::move(conn), std::move(device), config);
  session.set_admission(std::move(admission));
  if (transport == Transport::kTcp && config.tls_cert.empty()) {
    // Plain tcp may move to rdma in the hello (TLS and shm stay as they are).
    session.set_upgrade(transport::TcpServerUpgrade(
        client_fd, config.rdma_device, session_id, [session_id](transport::LogLevel level, const std::string& line) {
          if (level == transport::LogLevel::kWarn)
            spdlog::warn("{}", line);
          else
            spdlog::info("session {}: {}", session_id, line);
        }));
  }
  if (transport == Transport::kTcp && config.tls_cert.empty() && !config.no_peer_copies) {
    // Peer copies listen on the address the client reached (plain tcp
    // only: with TLS the clients stage such copies, over TLS).
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char host[INET6_ADDRSTRLEN] = {};
    if (getsockname(client_fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        inet_ntop(local.ss_family,
                  local.ss_family == AF_INET6
                      ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&local)->sin6_addr)
                      : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&local)->sin_addr),
                  host, sizeof host) != nullptr)
      session.set_peer_host(host);
  }
  session.set_ledger(ledger, slot);
  session.set_resumable(transport == Transport::kTcp);  // Plain or TLS.
  st = session.Run();
  return st.ok() ? 0 : kSessionExitReported;
}

}  // namespace hipr::worker
