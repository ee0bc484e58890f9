#include "worker_service/session_process.h"

#include <signal.h>
#include <sys/prctl.h>

#include <spdlog/spdlog.h>

#include <string>

#include "protocol/frame_io.h"
#include "protocol/shm/shm_connection.h"
#include "protocol/tcp/tcp_connection.h"
#include "worker_service/device_factory.h"
#include "worker_service/handshake.h"
#include "worker_service/session.h"

namespace hipr::worker {

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
  std::unique_ptr<Connection> conn;
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
    conn = std::move(tcp_conn);
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
  const Tenant& tenant = admission.tenant;
  st = ledger->Admit(slot, tenant.name, tenant.max_sessions != 0 ? tenant.max_sessions : config.max_sessions_per_tenant,
                     tenant.memory_bytes != 0 ? tenant.memory_bytes : config.tenant_memory_bytes);
  if (!st.ok()) {
    spdlog::warn("session {}: refused: {}", session_id, st.message());
    ledger->Count(Ledger::kRefusedTenantLimit);
    msg::HelloReply reply;
    reply.status = st.code();
    reply.message = "the worker refused the session: " + st.message();
    RefuseAdmission(*conn, admission, std::move(reply));
    return kSessionExitReported;
  }
  SlotAccount account(ledger, slot);
  std::unique_ptr<Device> device;
  st = CreateDevice(config, &device);
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
  session.set_ledger(ledger, slot);
  st = session.Run();
  return st.ok() ? 0 : kSessionExitReported;
}

}  // namespace hipr::worker
