// The transports in one place, as ops.h is for operations: the schemes a
// client's HIPR_SERVER may name and how each connects (kSchemes), and the
// upgrade a session may make during its hello (rdma over a plain tcp
// connection: docs/protocol.md "RDMA transport"). Both sessions hold a
// Connection and an upgrade and never name a transport: adding one touches
// protocol/ and a row here.
//
// An upgrade runs in two steps around the hello. The client offers in its
// HelloRequest (Offer); the worker answers in its HelloReply (Answer), then
// both finish after the reply (Finish): each side either swaps its
// connection for the upgraded one or keeps the one the hello went over.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/transport.h"

namespace hipr::transport {

enum class LogLevel { kDebug, kInfo, kWarn };
// Where a transport's lines go (the stub's log, the worker's spdlog); the
// caller prefixes them (worker, session).
using Log = std::function<void(LogLevel level, const std::string& line)>;

// ---- Client ------------------------------------------------------------------

// What the client's settings say about its transport (client_stub/base/config.h).
struct ClientOptions {
  std::string server;  // HIPR_SERVER.
  int connect_timeout_ms = 3000;
  int peer_timeout_ms = 10000;
  int spin_us = 50;
  uint64_t zero_copy_bytes = uint64_t{1} << 20;
  std::string tls_ca, tls_cert, tls_key, tls_server_name;  // HIPR_TLS_*.
  bool rdma = true;  // HIPR_RDMA.
  std::string rdma_device;  // HIPR_RDMA_DEVICE.
  Log log;
  bool tls() const { return !tls_ca.empty() || !tls_cert.empty() || !tls_key.empty(); }
};

// What a client's connection may still become.
class ClientUpgrade {
 public:
  virtual ~ClientUpgrade() = default;
  // Adds the offer to the hello.
  virtual void Offer(msg::HelloRequest* hello) = 0;
  // Once the worker's HelloReply is in (`reply`; frames of `chunk_bytes`),
  // over *conn: replaces *conn with the upgraded connection or leaves it.
  // An error ends the session (where the scheme demands the upgrade, or the
  // worker broke the protocol).
  virtual Status Finish(const msg::HelloReply& reply, uint32_t chunk_bytes, std::unique_ptr<Connection>* conn) = 0;
};

// A connected client: the connection the hello goes over, and the upgrade
// it may make (null: none).
struct ClientLink {
  std::unique_ptr<Connection> conn;
  std::unique_ptr<ClientUpgrade> upgrade;
};

// One scheme of HIPR_SERVER: its prefix and how it connects to `address`
// (what follows the prefix).
struct Scheme {
  std::string_view prefix;
  Status (*connect)(const ClientOptions& options, std::string_view address, ClientLink* out);
  std::string_view summary;
};

Status ConnectShm(const ClientOptions& options, std::string_view address, ClientLink* out);
Status ConnectRdma(const ClientOptions& options, std::string_view address, ClientLink* out);
Status ConnectTcp(const ClientOptions& options, std::string_view address, ClientLink* out);

// The first whose prefix starts HIPR_SERVER is used; the last has none.
inline constexpr std::array<Scheme, 3> kSchemes = {{
    {"unix:", ConnectShm, "unix:PATH: shared memory with a worker on this node (--listen-unix PATH)"},
    {"rdma://", ConnectRdma, "rdma://HOST:PORT: tcp, then rdma or the session fails"},
    {"", ConnectTcp, "HOST:PORT: tcp (TLS 1.3 with HIPR_TLS_*), moving to rdma where both ends can"},
}};

// Connects by the scheme of options.server.
Status Connect(const ClientOptions& options, ClientLink* out);

// ---- Worker ------------------------------------------------------------------

// The worker's side of an upgrade, for one session.
class ServerUpgrade {
 public:
  virtual ~ServerUpgrade() = default;
  // Before the reply goes out: answers the client's offer in `hello`
  // (fields of *reply), or declines (and says why in the log).
  virtual void Answer(const msg::HelloRequest& hello, msg::HelloReply* reply) = 0;
  // After the reply went out over *conn: replaces *conn with the upgraded
  // connection or leaves it. An error (the client broke the protocol) ends
  // the session; *conn is then the one the hello went over.
  virtual Status Finish(std::unique_ptr<Connection>* conn) = 0;
};

// The upgrade a session on a plain tcp connection (socket `fd`, borrowed)
// offers: rdma on `rdma_device` ("" the first, "off" none).
std::unique_ptr<ServerUpgrade> TcpServerUpgrade(int fd, std::string rdma_device, uint64_t session_id, Log log);

}  // namespace hipr::transport
