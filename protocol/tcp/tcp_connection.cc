#include "protocol/tcp/tcp_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/errqueue.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

namespace hipr::tcp {
namespace {

// Keepalive: first probe after 2 s idle, then every 1 s, give up after 3;
// unacknowledged data for 10 s also ends the connection.
constexpr int kKeepIdleS = 2;
constexpr int kKeepIntervalS = 1;
constexpr int kKeepCount = 3;
constexpr unsigned kUserTimeoutMs = 10000;
constexpr int kIovBatch = 1024;  // IOV_MAX on Linux.

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// Advances iov past `n` consumed bytes; returns the first unfinished index.
int Advance(std::span<iovec> iov, int first, size_t n) {
  while (n > 0 && first < static_cast<int>(iov.size())) {
    if (n >= iov[first].iov_len) {
      n -= iov[first].iov_len;
      iov[first].iov_len = 0;
      ++first;
    } else {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + n;
      iov[first].iov_len -= n;
      n = 0;
    }
  }
  while (first < static_cast<int>(iov.size()) && iov[first].iov_len == 0) ++first;
  return first;
}

}  // namespace

Status ParseEndpoint(const std::string& text, Endpoint* out) {
  std::string host;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return InvalidArgument("bad endpoint '" + text + "': expected [v6addr]:port");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) return InvalidArgument("bad endpoint '" + text + "': expected host:port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty()) return InvalidArgument("bad endpoint '" + text + "': empty host");
  char* end = nullptr;
  long p = std::strtol(port.c_str(), &end, 10);
  if (port.empty() || *end != '\0' || p < 0 || p > 65535)
    return InvalidArgument("bad endpoint '" + text + "': port must be 0..65535");
  out->host = host;
  out->port = static_cast<uint16_t>(p);
  return Status::Ok();
}

Status TuneSocket(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) return LinkDown(ErrnoText("TCP_NODELAY"));
  if (setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one) != 0) return LinkDown(ErrnoText("SO_KEEPALIVE"));
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &kKeepIdleS, sizeof kKeepIdleS);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kKeepIntervalS, sizeof kKeepIntervalS);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kKeepCount, sizeof kKeepCount);
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &kUserTimeoutMs, sizeof kUserTimeoutMs);
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags | FD_CLOEXEC) != 0) return LinkDown(ErrnoText("FD_CLOEXEC"));
  return Status::Ok();
}

TcpConnection::TcpConnection(int fd) : fd_(fd) {}

TcpConnection::~TcpConnection() {
  if (fd_ >= 0) close(fd_);
}

Status TcpConnection::Connect(const Endpoint& ep, int timeout_ms, std::unique_ptr<TcpConnection>* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(ep.port);
  int rc = getaddrinfo(ep.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) return LinkDown("cannot resolve '" + ep.host + "': " + gai_strerror(rc));
  std::string last_error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last_error = ErrnoText("socket");
      continue;
    }
    rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd pfd{fd, POLLOUT, 0};
      rc = poll(&pfd, 1, timeout_ms);
      if (rc == 0) {
        errno = ETIMEDOUT;
        rc = -1;
      } else if (rc > 0) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        errno = err;
        rc = err == 0 ? 0 : -1;
      }
    }
    if (rc == 0) {
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
      Status st = TuneSocket(fd);
      if (!st.ok()) {
        close(fd);
        freeaddrinfo(res);
        return st;
      }
      freeaddrinfo(res);
      *out = std::make_unique<TcpConnection>(fd);
      return Status::Ok();
    }
    last_error = ErrnoText("connect");
    close(fd);
  }
  freeaddrinfo(res);
  return LinkDown("cannot connect to " + ep.host + ":" + port + ": " + last_error);
}

Status TcpConnection::SendV(const iovec* iov, int count) {
  std::vector<iovec> v(iov, iov + count);
  int first = Advance(v, 0, 0);
  while (first < count) {
    msghdr mh{};
    mh.msg_iov = v.data() + first;
    mh.msg_iovlen = static_cast<size_t>(std::min(count - first, kIovBatch));
    ssize_t n = sendmsg(fd_, &mh, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LinkDown(ErrnoText("send"));
    }
    first = Advance(v, first, static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status TcpConnection::SendVZeroCopy(const iovec* iov, int count) {
  uint64_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  if (zero_copy_min_bytes_ == 0 || total < zero_copy_min_bytes_ || zc_.off) return SendV(iov, count);
  if (!zc_enabled_) {
    int one = 1;
    if (setsockopt(fd_, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof one) != 0) {
      zc_.off = true;  // Kernel without it: plain sends.
      return SendV(iov, count);
    }
    zc_enabled_ = true;
  }
  std::vector<iovec> v(iov, iov + count);
  int first = Advance(v, 0, 0);
  while (first < count) {
    msghdr mh{};
    mh.msg_iov = v.data() + first;
    mh.msg_iovlen = static_cast<size_t>(std::min(count - first, kIovBatch));
    ssize_t n = sendmsg(fd_, &mh, MSG_NOSIGNAL | MSG_ZEROCOPY);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ENOBUFS) {
      // Out of optmem for notices: this piece goes the plain way.
      n = sendmsg(fd_, &mh, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return LinkDown(ErrnoText("send"));
    } else if (n < 0) {
      return LinkDown(ErrnoText("send"));
    } else {
      ++zc_next_id_;
      ++zc_.sends;
    }
    first = Advance(v, first, static_cast<size_t>(n));
  }
  // The kernel still refers to the caller's pages until it says otherwise.
  return AwaitZeroCopy(zc_next_id_);
}

Status TcpConnection::AwaitZeroCopy(uint32_t upto) {
  while (zc_done_ != upto) {
    pollfd pfd{fd_, 0, 0};  // POLLERR is always reported.
    int rc = poll(&pfd, 1, static_cast<int>(kUserTimeoutMs));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return LinkDown("no completion notice for a zero-copy send");
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(sock_extended_err) + sizeof(sockaddr_in6))];
    msghdr mh{};
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    ssize_t n = recvmsg(fd_, &mh, MSG_ERRQUEUE | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (pfd.revents & (POLLHUP | POLLNVAL)) return LinkDown("connection closed during a zero-copy send");
      continue;
    }
    if (n < 0) return LinkDown(ErrnoText("zero-copy completion"));
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
      const bool ip = (c->cmsg_level == SOL_IP && c->cmsg_type == IP_RECVERR) ||
                      (c->cmsg_level == SOL_IPV6 && c->cmsg_type == IPV6_RECVERR);
      if (!ip) continue;
      sock_extended_err e;
      std::memcpy(&e, CMSG_DATA(c), sizeof e);
      if (e.ee_origin != SO_EE_ORIGIN_ZEROCOPY) {
        if (e.ee_errno != 0) return LinkDown(std::string("send failed: ") + std::strerror(static_cast<int>(e.ee_errno)));
        continue;
      }
      // Sends ee_info..ee_data (inclusive) have completed.
      zc_done_ = e.ee_data + 1;
      if (e.ee_code & SO_EE_CODE_ZEROCOPY_COPIED) {
        zc_.copied += e.ee_data - e.ee_info + 1;
        if (!keep_when_copied_) zc_.off = true;  // No gain here: plain sends from now on.
      }
    }
  }
  return Status::Ok();
}

size_t TcpConnection::TakeBuffered(iovec* v, int count, int* first) {
  size_t wanted = 0;
  for (int i = *first; i < count; ++i) wanted += v[i].iov_len;
  while (*first < count && rpos_ < rend_) {
    iovec& cur = v[*first];
    const size_t n = std::min(cur.iov_len, rend_ - rpos_);
    std::memcpy(cur.iov_base, rbuf_.get() + rpos_, n);
    rpos_ += n;
    wanted -= n;
    cur.iov_base = static_cast<char*>(cur.iov_base) + n;
    cur.iov_len -= n;
    while (*first < count && v[*first].iov_len == 0) ++*first;
  }
  return wanted;
}

Status TcpConnection::RecvDirect(iovec* v, int count, int* first_slice) {
  int& first = *first_slice;
  while (first < count) {
    msghdr mh{};
    mh.msg_iov = v + first;
    mh.msg_iovlen = static_cast<size_t>(std::min(count - first, kIovBatch));
    ssize_t n = recvmsg(fd_, &mh, MSG_WAITALL);
    if (n < 0) {
      if (errno == EINTR) continue;
      return LinkDown(ErrnoText("receive"));
    }
    if (n == 0) return LinkDown("connection closed by peer");
    first = Advance(std::span<iovec>(v, static_cast<size_t>(count)), first, static_cast<size_t>(n));
  }
  return Status::Ok();
}

bool TcpConnection::SpinUntilReadable() {
  if (spin_us_ <= 0) return false;
  if (rbuf_ == nullptr) rbuf_ = std::make_unique<uint8_t[]>(kReadAheadBytes);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
  do {
    // Straight into the read-ahead buffer: what arrives costs no further
    // call to read.
    ssize_t n = recv(fd_, rbuf_.get(), kReadAheadBytes, MSG_DONTWAIT);
    if (n > 0) {
      rpos_ = 0;
      rend_ = static_cast<size_t>(n);
      return true;
    }
    // End of stream or an error: the caller's next call reports it.
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return true;
    if (shut_down_.load(std::memory_order_relaxed)) return true;
  } while (std::chrono::steady_clock::now() < deadline);
  return false;
}

Status TcpConnection::RecvV(const iovec* iov, int count) {
  size_t filled = 0;
  return RecvVCounted(iov, count, &filled);
}

Status TcpConnection::RecvVCounted(const iovec* iov, int count, size_t* filled) {
  // A short, stack-held copy for the usual one or two slices.
  iovec small[4];
  std::vector<iovec> large;
  iovec* v = small;
  if (count > 4) {
    large.assign(iov, iov + count);
    v = large.data();
  } else {
    std::copy(iov, iov + count, small);
  }
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  int first = 0;
  while (first < count && v[first].iov_len == 0) ++first;
  // What is left in v[first..count) is what did not arrive.
  auto done = [&](Status st) {
    size_t left = 0;
    for (int i = first; i < count; ++i) left += v[i].iov_len;
    *filled = total - left;
    return st;
  };
  size_t wanted = TakeBuffered(v, count, &first);
  if (wanted >= kDirectBytes) return done(RecvDirect(v, count, &first));
  if (wanted > 0 && rbuf_ == nullptr) rbuf_ = std::make_unique<uint8_t[]>(kReadAheadBytes);
  if (wanted > 0 && SpinUntilReadable()) wanted = TakeBuffered(v, count, &first);
  while (wanted > 0) {
    ssize_t n = recv(fd_, rbuf_.get(), kReadAheadBytes, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return done(LinkDown(ErrnoText("receive")));
    }
    if (n == 0) return done(LinkDown("connection closed by peer"));
    rpos_ = 0;
    rend_ = static_cast<size_t>(n);
    wanted = TakeBuffered(v, count, &first);
  }
  return done(Status::Ok());
}

bool TcpConnection::Unread() const {
  int queued = 0;
  return rpos_ < rend_ || (ioctl(fd_, FIONREAD, &queued) == 0 && queued > 0);
}

bool TcpConnection::Hung() const {
  if (shut_down_.load()) return true;
  // Bytes still to read (a frame the peer sent before it went, such as why
  // it ended the session) are the reader's first.
  if (rpos_ < rend_) return false;
  pollfd pfd{fd_, POLLIN | POLLRDHUP, 0};
  if (poll(&pfd, 1, 0) != 1) return false;
  int unread = 0;
  if ((pfd.revents & POLLIN) != 0 && ioctl(fd_, FIONREAD, &unread) == 0 && unread > 0) return false;
  return (pfd.revents & (POLLHUP | POLLERR | POLLRDHUP)) != 0;
}

Status TcpConnection::WaitReadable(int timeout_ms) {
  if (rpos_ < rend_ && !shut_down_.load()) return Status::Ok();  // Read ahead already.
  if (timeout_ms != 0 && SpinUntilReadable() && rpos_ < rend_ && !shut_down_.load()) return Status::Ok();
  pollfd pfd{fd_, POLLIN, 0};
  for (;;) {
    int rc = poll(&pfd, 1, timeout_ms);
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return LinkDown(ErrnoText("poll"));
    if (rc == 0) return Status(StatusCode::kTimeout, "no data");
    if (pfd.revents & POLLIN) return Status::Ok();
    if ((pfd.revents & (POLLERR | POLLHUP | POLLNVAL)) == POLLERR) {
      // POLLERR alone with no socket error: a zero-copy completion notice
      // the sending thread is about to read, not a failure.
      int err = 0;
      socklen_t len = sizeof err;
      if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        continue;
      }
    }
    return LinkDown("connection closed or failed");
  }
}

void TcpConnection::Shutdown() {
  shut_down_.store(true);
  if (fd_ >= 0) shutdown(fd_, SHUT_RDWR);
}

void TcpConnection::Abandon() {
  shut_down_.store(true);
  if (fd_ >= 0) close(fd_);  // Only our copy: the parent's socket stays open.
  fd_ = -1;
}

bool TcpConnection::PeerIsLocal() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
  }
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr)) return true;
    return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
  }
  return true;
}

std::string TcpConnection::PeerName() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "tcp:?";
  if (ss.ss_family == AF_UNIX) return "unix:(socket pair)";  // A relay's (worker_service/process/tls_relay.h).
  char host[INET6_ADDRSTRLEN] = "?";
  uint16_t port = 0;
  if (ss.ss_family == AF_INET) {
    auto* a = reinterpret_cast<sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    port = ntohs(a->sin6_port);
  }
  return std::string("tcp:") + host + ":" + std::to_string(port);
}

}  // namespace hipr::tcp
