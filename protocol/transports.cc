#include "protocol/transports.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>

#include "protocol/rdma/rdma_upgrade.h"
#include "protocol/shm/shm_connection.h"
#include "protocol/tcp/tcp_connection.h"
#include "protocol/tls/tls_connection.h"

namespace hipr::transport {
namespace {

void Say(const ClientOptions& options, LogLevel level, const std::string& line) {
  if (options.log) options.log(level, line);
}

// Blocking reads (reply bodies, bulk chunks) must give up within the peer
// timeout too. SO_RCVTIMEO bounds one recvmsg: a read that got part of a
// chunk returns it at the timeout and the next one starts a new timeout, so
// a stall can cost two timeouts. Half the peer timeout each: silence of
// HIPR_PEER_TIMEOUT_MS always ends the session, silence shorter than half
// of it never does. The shm transport bounds its receives the same way.
int ReadTimeoutMs(const ClientOptions& options) { return std::max(options.peer_timeout_ms / 2, 50); }

// tcp to `address`, then TLS where HIPR_TLS_* asks for it, else the rdma
// offer (which `forced` demands).
Status ConnectTcpOrRdma(const ClientOptions& options, std::string_view address, bool forced, ClientLink* out) {
  tcp::Endpoint endpoint;
  HIPR_RETURN_IF_ERROR(tcp::ParseEndpoint(std::string(address), &endpoint));
  std::unique_ptr<tcp::TcpConnection> tcp_conn;
  HIPR_RETURN_IF_ERROR(tcp::TcpConnection::Connect(endpoint, options.connect_timeout_ms, &tcp_conn));
  const int read_timeout_ms = ReadTimeoutMs(options);
  timeval tv{};
  tv.tv_sec = read_timeout_ms / 1000;
  tv.tv_usec = (read_timeout_ms % 1000) * 1000;
  setsockopt(tcp_conn->fd(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  tcp_conn->set_spin_us(options.spin_us);
  tcp_conn->set_zero_copy_min_bytes(options.zero_copy_bytes);
  if (!options.tls()) {
    const int fd = tcp_conn->fd();
    out->conn = std::move(tcp_conn);
    return rdma::PrepareClientUpgrade(options, fd, forced, read_timeout_ms, &out->upgrade);
  }
  Say(options, LogLevel::kDebug, "transport: no rdma under TLS (rdma carries no TLS), staying on tcp");
  std::shared_ptr<tls::Context> ctx;
  Status made = tls::Context::MakeClient({options.tls_ca, options.tls_cert, options.tls_key}, &ctx);
  if (!made.ok()) return Status(StatusCode::kInvalidArgument, made.message());
  const std::string name = options.tls_server_name.empty() ? endpoint.host : options.tls_server_name;
  std::unique_ptr<tls::TlsConnection> tls_conn;
  Status st = tls::TlsConnection::Connect(std::move(tcp_conn), *ctx, name, options.connect_timeout_ms, &tls_conn);
  if (!st.ok()) {
    return LinkDown(st.message() + " (HIPR_TLS_CA " + options.tls_ca + ", name '" + name + "'" +
                    (options.tls_server_name.empty() ? "" : " from HIPR_TLS_SERVER_NAME") + ")");
  }
  tls_conn->set_recv_timeout_ms(read_timeout_ms);
  tls_conn->set_spin_us(options.spin_us);
  Say(options, LogLevel::kInfo, "TLS with worker " + options.server + ": " + tls_conn->Describe());
  out->conn = std::move(tls_conn);
  return Status::Ok();
}

}  // namespace

Status ConnectShm(const ClientOptions& options, std::string_view address, ClientLink* out) {
  shm::Options o;
  o.spin_us = options.spin_us;
  o.recv_timeout_ms = ReadTimeoutMs(options);
  o.send_timeout_ms = options.peer_timeout_ms;
  std::unique_ptr<shm::ShmConnection> conn;
  HIPR_RETURN_IF_ERROR(shm::ShmConnection::Connect(std::string(address), options.connect_timeout_ms, o, &conn));
  Say(options, LogLevel::kDebug, "transport shm: no rdma to a worker on this node's unix socket");
  out->conn = std::move(conn);
  return Status::Ok();
}

Status ConnectRdma(const ClientOptions& options, std::string_view address, ClientLink* out) {
  if (options.tls())
    return InvalidArgument("HIPR_SERVER=rdma:// cannot be combined with TLS (HIPR_TLS_*): rdma carries no TLS");
  if (!options.rdma) return InvalidArgument("HIPR_SERVER=rdma:// contradicts HIPR_RDMA=0");
  return ConnectTcpOrRdma(options, address, /*forced=*/true, out);
}

Status ConnectTcp(const ClientOptions& options, std::string_view address, ClientLink* out) {
  return ConnectTcpOrRdma(options, address, /*forced=*/false, out);
}

Status Connect(const ClientOptions& options, ClientLink* out) {
  if (options.server.empty()) return LinkDown("HIPR_SERVER is not set; set it to host:port of a hipr-worker");
  for (const Scheme& s : kSchemes) {
    if (options.server.rfind(s.prefix, 0) != 0) continue;
    return s.connect(options, std::string_view(options.server).substr(s.prefix.size()), out);
  }
  return InvalidArgument("HIPR_SERVER '" + options.server + "' names no transport");  // The last row takes any.
}

std::unique_ptr<ServerUpgrade> TcpServerUpgrade(int fd, std::string rdma_device, uint64_t session_id, Log log) {
  return rdma::MakeServerUpgrade(fd, std::move(rdma_device), session_id, std::move(log));
}

}  // namespace hipr::transport
