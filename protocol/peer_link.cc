#include "protocol/peer_link.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>

#include "protocol/auth.h"

namespace hipr::peer {

namespace {

Status Errno(const std::string& what) { return Status(StatusCode::kLinkDown, what + ": " + std::strerror(errno)); }

void PutLe64(uint64_t v, uint8_t* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetLe64(const uint8_t* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{in[i]} << (8 * i);
  return v;
}

int MillisLeft(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count());
}

// Sends the token and the count.
Status SendHead(tcp::TcpConnection& conn, const std::vector<uint8_t>& token, uint64_t bytes) {
  if (token.size() != kPeerTokenBytes) return InvalidArgument("a peer token is " + std::to_string(kPeerTokenBytes) + " bytes");
  uint8_t count[8];
  PutLe64(bytes, count);
  const iovec iov[2] = {{const_cast<uint8_t*>(token.data()), token.size()}, {count, sizeof count}};
  return conn.SendV(iov, 2);
}

constexpr uint8_t kGreeting[8] = {'h', 'i', 'p', 'r', 'p', 'e', 'e', 'r'};

// Connects, and sends nothing before the other end proved to be a peer
// port (its greeting): a client cannot aim a worker's bytes at any other
// service.
Status Connect(const std::string& address, int timeout_ms, std::unique_ptr<tcp::TcpConnection>* out) {
  tcp::Endpoint ep;
  HIPR_RETURN_IF_ERROR(tcp::ParseEndpoint(address, &ep));
  std::unique_ptr<tcp::TcpConnection> conn;
  HIPR_RETURN_IF_ERROR(tcp::TcpConnection::Connect(ep, timeout_ms, &conn));
  uint8_t greeting[sizeof kGreeting];
  const iovec iov{greeting, sizeof greeting};
  Status st = RecvWithin(*conn, &iov, 1, timeout_ms);
  if (!st.ok() || std::memcmp(greeting, kGreeting, sizeof kGreeting) != 0)
    return Status(StatusCode::kLinkDown, address + " is not a hipr peer copy port" +
                                             (st.ok() ? std::string() : ": " + st.message()));
  *out = std::move(conn);
  return Status::Ok();
}

}  // namespace

Status PeerListener::Open(const std::string& bind_host, uint16_t first_port, uint16_t last_port,
                          std::unique_ptr<PeerListener>* out) {
  if (first_port > last_port) return InvalidArgument("peer copies: an empty port range");
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_PASSIVE;
  addrinfo* found = nullptr;
  if (int rc = getaddrinfo(bind_host.c_str(), "0", &hints, &found); rc != 0)
    return InvalidArgument("peer copies: cannot listen on '" + bind_host + "': " + gai_strerror(rc));
  std::unique_ptr<PeerListener> l(new PeerListener());
  Status st(StatusCode::kResourceExhausted, "peer copies: every port of " + std::to_string(first_port) + "-" +
                                                std::to_string(last_port) + " is in use (--peer-ports)");
  for (uint32_t port = first_port; port <= last_port; ++port) {
    const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      st = Errno("peer copies: socket");
      break;
    }
    sockaddr_storage at{};
    std::memcpy(&at, found->ai_addr, found->ai_addrlen);
    if (at.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&at)->sin6_port = htons(static_cast<uint16_t>(port));
    else reinterpret_cast<sockaddr_in*>(&at)->sin_port = htons(static_cast<uint16_t>(port));
    if (bind(fd, reinterpret_cast<sockaddr*>(&at), found->ai_addrlen) == 0 && listen(fd, 4) == 0) {
      l->fd_ = fd;
      st = Status::Ok();
      break;
    }
    const int e = errno;
    close(fd);
    if (e != EADDRINUSE) {
      errno = e;
      st = Errno("peer copies: bind " + bind_host + " port " + std::to_string(port));
      break;
    }
  }
  freeaddrinfo(found);
  HIPR_RETURN_IF_ERROR(st);
  sockaddr_storage local{};
  socklen_t len = sizeof local;
  if (getsockname(l->fd_, reinterpret_cast<sockaddr*>(&local), &len) != 0) return Errno("peer copies: getsockname");
  l->port_ = ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                               : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
  static_assert(auth::kNonceBytes == kPeerTokenBytes);
  HIPR_RETURN_IF_ERROR(auth::RandomNonce(&l->token_));
  *out = std::move(l);
  return Status::Ok();
}

PeerListener::~PeerListener() {
  if (fd_ >= 0) close(fd_);
}

Status PeerListener::AcceptPeer(int timeout_ms, std::unique_ptr<tcp::TcpConnection>* conn, uint64_t* bytes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  Status why(StatusCode::kTimeout, "no peer worker connected within " + std::to_string(timeout_ms) + " ms");
  while (fd_ >= 0) {
    pollfd p{fd_, POLLIN, 0};
    const int left = MillisLeft(deadline);
    const int rc = poll(&p, 1, left);
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) break;
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      why = Errno("peer copies: accept");
      break;
    }
    (void)tcp::TuneSocket(fd);
    auto c = std::make_unique<tcp::TcpConnection>(fd);
    const iovec hello{const_cast<uint8_t*>(kGreeting), sizeof kGreeting};
    if (!c->SendV(&hello, 1).ok()) continue;
    uint8_t head[kPeerTokenBytes + 8];
    const iovec iov{head, sizeof head};
    // A connection that does not prove the token is dropped; the right one
    // may still come.
    if (!RecvWithin(*c, &iov, 1, std::max(MillisLeft(deadline), 1)).ok()) {
      why = Status(StatusCode::kUnauthenticated, "a connection to the peer port sent no token");
      continue;
    }
    if (!auth::MacEquals(std::vector<uint8_t>(head, head + kPeerTokenBytes), token_)) {
      why = Status(StatusCode::kUnauthenticated, "a connection to the peer port sent the wrong token");
      continue;
    }
    *bytes = GetLe64(head + kPeerTokenBytes);
    *conn = std::move(c);
    close(fd_);
    fd_ = -1;
    return Status::Ok();
  }
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  return why;
}

Status RecvWithin(tcp::TcpConnection& conn, const iovec* iov, int count, int timeout_ms) {
  // One RecvV at a time, each after the data began to arrive: the whole
  // may take longer than `timeout_ms`, a silence may not.
  for (int i = 0; i < count; ++i) {
    uint8_t* at = static_cast<uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      Status ready = conn.WaitReadable(timeout_ms);
      if (!ready.ok()) return ready;
      const size_t piece = std::min<size_t>(left, size_t{1} << 20);
      const iovec one{at, piece};
      HIPR_RETURN_IF_ERROR(conn.RecvV(&one, 1));
      at += piece;
      left -= piece;
    }
  }
  return Status::Ok();
}

Status SendPeerStatus(tcp::TcpConnection& conn, int32_t error) {
  uint8_t out[4];
  for (int i = 0; i < 4; ++i) out[i] = static_cast<uint8_t>(static_cast<uint32_t>(error) >> (8 * i));
  const iovec iov{out, sizeof out};
  return conn.SendV(&iov, 1);
}

Status PushToPeer(const std::string& address, const std::vector<uint8_t>& token, uint64_t bytes,
                  const std::function<Status(const Sink& sink)>& produce, int timeout_ms, int32_t* peer_error) {
  std::unique_ptr<tcp::TcpConnection> conn;
  HIPR_RETURN_IF_ERROR(Connect(address, timeout_ms, &conn));
  HIPR_RETURN_IF_ERROR(SendHead(*conn, token, bytes));
  uint64_t sent = 0;
  Sink sink = [&](const iovec* iov, int count) {
    for (int i = 0; i < count; ++i) sent += iov[i].iov_len;
    if (sent > bytes) return Status(StatusCode::kInternal, "more bytes than the copy announced");
    return conn->SendV(iov, count);
  };
  HIPR_RETURN_IF_ERROR(produce(sink));
  if (sent != bytes) return Status(StatusCode::kInternal, "fewer bytes than the copy announced");
  uint8_t in[4];
  const iovec iov{in, sizeof in};
  HIPR_RETURN_IF_ERROR(RecvWithin(*conn, &iov, 1, timeout_ms));
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{in[i]} << (8 * i);
  *peer_error = static_cast<int32_t>(v);
  return Status::Ok();
}

Status CancelPeer(const std::string& address, const std::vector<uint8_t>& token, int timeout_ms) {
  std::unique_ptr<tcp::TcpConnection> conn;
  HIPR_RETURN_IF_ERROR(Connect(address, timeout_ms, &conn));
  return SendHead(*conn, token, kPeerCancel);
}

}  // namespace hipr::peer
