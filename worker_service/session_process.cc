#include "worker_service/session_process.h"

#include <signal.h>
#include <sys/prctl.h>

#include <spdlog/spdlog.h>

#include <string>

#include "protocol/frame_io.h"
#include "protocol/shm/shm_connection.h"
#include "protocol/tcp/tcp_connection.h"
#include "worker_service/device_factory.h"
#include "worker_service/session.h"

namespace hipr::worker {
namespace {

// Answers the hello with `why` when no device could be created.
void RefuseHello(Connection& conn, const WorkerConfig& config, const Status& why) {
  if (!conn.WaitReadable(config.hello_timeout_ms).ok()) return;
  wire::FrameHeader h;
  std::vector<uint8_t> body;
  if (!ReadHeader(conn, &h).ok() || !ReadBody(conn, h, &body).ok()) return;
  msg::HelloReply reply;
  reply.status = StatusCode::kDeviceLost;
  reply.message = "the worker cannot open its device: " + why.message();
  codec::BodyWriter w;
  w.Encode(reply);
  (void)SendFrame(conn, wire::ReplyOp(wire::Op::kHello), h.request_id, w);
}

}  // namespace

int RunSessionProcess(const WorkerConfig& config, uint64_t session_id, int client_fd, Transport transport) {
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
  std::unique_ptr<Device> device;
  Status st = CreateDevice(config, &device);
  if (!st.ok()) {
    spdlog::error("session {}: cannot create the {} device: {}", session_id, config.device, st.ToString());
    RefuseHello(*conn, config, st);
    return kSessionExitReported;
  }
  Session session(session_id, std::move(conn), std::move(device), config);
  st = session.Run();
  return st.ok() ? 0 : kSessionExitReported;
}

}  // namespace hipr::worker
