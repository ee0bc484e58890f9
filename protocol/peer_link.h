// Peer copies: bytes between two workers of one client (HIPR_SERVER lists
// several; client_stub/session/remote.h) move straight from the source
// worker to the destination worker, never through the client.
//
// The destination session opens a one-shot listener (PeerListener) on the
// address its client reached it at, port 0, with a fresh random token, and
// hands port and token to the client (kPeerListen). The client passes them
// to the source session (kPeerSend), which connects (PushToPeer) and proves
// it holds the token; nobody else can: the token travelled only over the
// client's own authenticated sessions. Wrong tokens are dropped and the
// listener waits on for the right one until its deadline.
//
// The link: the destination greets ("hiprpeer"; the source sends nothing
// to a port that does not, so a client cannot aim a worker's bytes at
// another service), the source sends the token (kPeerTokenBytes), the byte count
// (8 bytes, little-endian; kPeerCancel: the client calls the copy off), then
// the bytes; the destination answers a 4-byte status (little-endian: 0, or
// the HIP error it met), once the bytes are in device memory. The worker
// runs both ends (worker_service/session/); the client only ever calls a
// copy off.
//
// The link is plain tcp: a worker serving its clients over TLS offers no
// peer copies (its clients stage such copies through themselves, over TLS).
//
// Thread-safety: a PeerListener is used by one thread at a time;
// PushToPeer is reentrant.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <sys/uio.h>

#include "protocol/status.h"
#include "protocol/tcp/tcp_connection.h"

namespace hipr::peer {

// Where bytes go, as the worker's devices take and hand them
// (worker_service/device/device.h BulkIo).
using Sink = std::function<Status(const iovec* iov, int count)>;

inline constexpr size_t kPeerTokenBytes = 32;
inline constexpr uint64_t kPeerCancel = UINT64_MAX;

class PeerListener {
 public:
  // Listens on `bind_host` (an address of this node), on the first free
  // port of [first_port, last_port] (0, 0: any the kernel picks);
  // kResourceExhausted when every one is taken.
  static Status Open(const std::string& bind_host, uint16_t first_port, uint16_t last_port,
                     std::unique_ptr<PeerListener>* out);
  ~PeerListener();
  PeerListener(const PeerListener&) = delete;
  PeerListener& operator=(const PeerListener&) = delete;

  uint16_t port() const { return port_; }
  const std::vector<uint8_t>& token() const { return token_; }

  // Accepts until a connection proves the token or `timeout_ms` passes;
  // then *conn is that connection, past the token, and *bytes the count it
  // announced (kPeerCancel: called off). Closes the listening socket.
  Status AcceptPeer(int timeout_ms, std::unique_ptr<tcp::TcpConnection>* conn, uint64_t* bytes);

 private:
  PeerListener() = default;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::vector<uint8_t> token_;
};

// Receives exactly the bytes of `conn` into iov (each read waits at most
// `timeout_ms` for data).
Status RecvWithin(tcp::TcpConnection& conn, const iovec* iov, int count, int timeout_ms);

// Answers the source: `error` (0: the bytes are in place).
Status SendPeerStatus(tcp::TcpConnection& conn, int32_t error);

// The source's side: connects to `address` ("host:port"), sends `token`
// and `bytes`, then whatever `produce` hands to the BulkIo it is given
// (exactly `bytes`), and reads the destination's status into *peer_error.
// Not ok: the link failed (connect, send or receive), or `produce` did.
Status PushToPeer(const std::string& address, const std::vector<uint8_t>& token, uint64_t bytes,
                  const std::function<Status(const Sink& sink)>& produce, int timeout_ms, int32_t* peer_error);

// Calls a listening peer's copy off (kPeerCancel): for the client, whose
// source failed before it connected.
Status CancelPeer(const std::string& address, const std::vector<uint8_t>& token, int timeout_ms);

}  // namespace hipr::peer
