// TCP implementation of Connection: blocking I/O on the calling thread.
// Every socket is CLOEXEC, TCP_NODELAY, with keepalive and a user timeout
// tuned so that a vanished peer is noticed within seconds.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "protocol/transport.h"

namespace hipr::tcp {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

// Parses "host:port" or "[v6]:port".
Status ParseEndpoint(const std::string& text, Endpoint* out);

// Tunes an accepted or connected socket as described above.
Status TuneSocket(int fd);

class TcpConnection final : public Connection {
 public:
  // Takes ownership of a connected socket.
  explicit TcpConnection(int fd);
  ~TcpConnection() override;

  // Connects within `timeout_ms`.
  static Status Connect(const Endpoint& ep, int timeout_ms, std::unique_ptr<TcpConnection>* out);

  Status SendV(const iovec* iov, int count) override;
  Status RecvV(const iovec* iov, int count) override;
  Status WaitReadable(int timeout_ms) override;
  void Shutdown() override;
  std::string PeerName() const override;

  int fd() const { return fd_; }

 private:
  int fd_;
  // Set by Shutdown(): after it, WaitReadable() reports kLinkDown even though
  // poll() sees the shut-down socket as readable.
  std::atomic<bool> shut_down_{false};
};

}  // namespace hipr::tcp
