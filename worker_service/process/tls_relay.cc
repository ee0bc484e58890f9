#include "worker_service/process/tls_relay.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

namespace hipr::worker {
namespace {

constexpr size_t kRelayBytes = 256u << 10;

Status WriteAll(int fd, const uint8_t* p, size_t n) {
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return LinkDown(std::string("to the session: ") + std::strerror(errno));
    p += w;
    n -= static_cast<size_t>(w);
  }
  return Status::Ok();
}

}  // namespace

Status RelayTls(tls::TlsConnection& tls, int fd) {
  Status from_client;
  // Client to session. When the client's side ends, the session's link
  // reads what is left, then sees the drop and waits for a resume.
  std::thread up([&] {
    auto buf = std::make_unique<uint8_t[]>(kRelayBytes);
    for (;;) {
      size_t got = 0;
      from_client = tls.RecvSome(buf.get(), kRelayBytes, &got);
      if (!from_client.ok()) break;
      from_client = WriteAll(fd, buf.get(), got);
      if (!from_client.ok()) break;
    }
    shutdown(fd, SHUT_RDWR);
  });
  // Session to client, on this thread. The session closes its end when it
  // ends, or when a newer connection resumes it.
  Status from_session;
  auto buf = std::make_unique<uint8_t[]>(kRelayBytes);
  for (;;) {
    const ssize_t n = recv(fd, buf.get(), kRelayBytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      from_session = LinkDown(n == 0 ? "the session closed its side"
                                     : std::string("from the session: ") + std::strerror(errno));
      break;
    }
    iovec iov{buf.get(), static_cast<size_t>(n)};
    from_session = tls.SendV(&iov, 1);
    if (!from_session.ok()) break;
  }
  tls.Shutdown();
  shutdown(fd, SHUT_RDWR);
  up.join();
  // Whichever side failed first is the story; a side shut down by the
  // other says only that.
  return from_client.message() == "connection shut down" ? from_session : from_client;
}

}  // namespace hipr::worker
