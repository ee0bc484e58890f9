// Shared by the TLS tests: a test PKI made once per process, and a
// handshaken pair of TLS connections over loopback.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "protocol/tls/tls_connection.h"
#include "tests/support/test_pki.h"

namespace hipr::test {

inline const TestPki& Pki() {
  static const TestPki pki = [] {
    char dir[] = "/tmp/hipr-tls-test-XXXXXX";
    TestPki p;
    if (mkdtemp(dir) == nullptr) return p;
    Status st = MakeTestPki(dir, &p);
    if (!st.ok()) std::abort();
    return p;
  }();
  return pki;
}

// A connected tcp pair over loopback: (client, accepted).
inline void TcpPair(std::unique_ptr<tcp::TcpConnection>* client, std::unique_ptr<tcp::TcpConnection>* server) {
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  Status st = tcp::TcpConnection::Connect(tcp::Endpoint{"127.0.0.1", ntohs(addr.sin_port)}, 2000, client);
  ASSERT_TRUE(st.ok()) << st.ToString();
  int fd = accept(listener, nullptr, nullptr);
  close(listener);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(tcp::TuneSocket(fd).ok());
  *server = std::make_unique<tcp::TcpConnection>(fd);
}

struct TlsHandshakes {
  Status client;
  Status server;
  std::unique_ptr<tls::TlsConnection> a;  // The client's end.
  std::unique_ptr<tls::TlsConnection> b;  // The server's end.
};

// Both handshakes at once (the server's on a thread).
inline TlsHandshakes Handshake(const tls::Context& client_ctx, const tls::Context& server_ctx,
                               const std::string& host = "127.0.0.1") {
  TlsHandshakes h;
  std::unique_ptr<tcp::TcpConnection> c, s;
  TcpPair(&c, &s);
  if (c == nullptr || s == nullptr) return h;
  std::thread server([&] { h.server = tls::TlsConnection::Accept(std::move(s), server_ctx, 5000, &h.b); });
  h.client = tls::TlsConnection::Connect(std::move(c), client_ctx, host, 5000, &h.a);
  if (!h.client.ok()) h.a.reset();  // Closes the socket: the server's handshake ends too.
  server.join();
  return h;
}

inline std::shared_ptr<tls::Context> ServerContext(const std::string& client_ca = "") {
  std::shared_ptr<tls::Context> ctx;
  Status st = tls::Context::MakeServer({Pki().server_cert, Pki().server_key, client_ca}, &ctx);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return ctx;
}

inline std::shared_ptr<tls::Context> ClientContext(const std::string& ca, const std::string& cert = "",
                                                   const std::string& key = "") {
  std::shared_ptr<tls::Context> ctx;
  Status st = tls::Context::MakeClient({ca, cert, key}, &ctx);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return ctx;
}

}  // namespace hipr::test
