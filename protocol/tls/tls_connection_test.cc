// What TLS adds to a connection: the worker's certificate checked against
// the client's CA and the address it dialled, client certificates where the
// worker asks for them, TLS 1.3 only, clear errors for each refusal, and
// bytes that arrive exact.
#include "protocol/tls/tls_connection.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <thread>
#include <vector>

#include "protocol/tls/tls_test_util.h"

namespace hipr::test {
namespace {

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed + (i >> 12));
  return v;
}

TEST(TlsConnectionTest, VerifiedHandshakeIsTls13AndNamesThePeer) {
  auto server = ServerContext(Pki().ca);
  auto client = ClientContext(Pki().ca, Pki().client_cert, Pki().client_key);
  TlsHandshakes h = Handshake(*client, *server);
  ASSERT_TRUE(h.client.ok()) << h.client.ToString();
  ASSERT_TRUE(h.server.ok()) << h.server.ToString();
  EXPECT_EQ(h.a->Describe().rfind("TLSv1.3 ", 0), 0u) << h.a->Describe();
  EXPECT_EQ(h.b->peer_common_name(), "tenant-a");
  EXPECT_NE(h.b->peer_subject().find("CN=tenant-a"), std::string::npos) << h.b->peer_subject();
  EXPECT_EQ(h.a->peer_common_name(), "hipr-worker");
  EXPECT_EQ(h.a->PeerName().rfind("tls:127.0.0.1:", 0), 0u) << h.a->PeerName();
  EXPECT_TRUE(h.a->PeerIsLocal());
}

TEST(TlsConnectionTest, AWorkerFromAnotherCaIsRefused) {
  auto server = ServerContext();
  auto client = ClientContext(Pki().other_ca);
  TlsHandshakes h = Handshake(*client, *server);
  ASSERT_FALSE(h.client.ok());
  EXPECT_EQ(h.client.code(), StatusCode::kLinkDown);
  EXPECT_NE(h.client.message().find("certificate verify failed"), std::string::npos) << h.client.ToString();
  EXPECT_FALSE(h.server.ok());
}

TEST(TlsConnectionTest, TheCertificateMustNameTheAddressDialled) {
  auto server = ServerContext();
  auto client = ClientContext(Pki().ca);
  TlsHandshakes by_name = Handshake(*client, *server, "localhost");
  EXPECT_TRUE(by_name.client.ok()) << by_name.client.ToString();
  TlsHandshakes wrong = Handshake(*client, *server, "gpu-node-7.example");
  ASSERT_FALSE(wrong.client.ok());
  EXPECT_NE(wrong.client.message().find("hostname mismatch"), std::string::npos) << wrong.client.ToString();
  TlsHandshakes wrong_ip = Handshake(*client, *server, "10.1.2.3");
  ASSERT_FALSE(wrong_ip.client.ok());
  EXPECT_NE(wrong_ip.client.message().find("IP address mismatch"), std::string::npos) << wrong_ip.client.ToString();
}

TEST(TlsConnectionTest, ClientCertificatesWhereTheWorkerAsks) {
  auto server = ServerContext(Pki().ca);
  ASSERT_TRUE(server->requires_client_certificate());
  // None: the worker refuses (TLS 1.3 reports it to the client at its first read).
  TlsHandshakes none = Handshake(*ClientContext(Pki().ca), *server);
  ASSERT_FALSE(none.server.ok());
  EXPECT_NE(none.server.message().find("certificate"), std::string::npos) << none.server.ToString();
  // One from another CA: refused too.
  TlsHandshakes stranger = Handshake(*ClientContext(Pki().ca, Pki().stranger_cert, Pki().stranger_key), *server);
  ASSERT_FALSE(stranger.server.ok());
  EXPECT_NE(stranger.server.message().find("certificate"), std::string::npos) << stranger.server.ToString();
}

TEST(TlsConnectionTest, APlainPeerFailsTheHandshakeClearly) {
  auto server = ServerContext();
  std::unique_ptr<tcp::TcpConnection> c, s;
  TcpPair(&c, &s);
  std::unique_ptr<tls::TlsConnection> b;
  Status server_st;
  std::thread t([&] { server_st = tls::TlsConnection::Accept(std::move(s), *server, 5000, &b); });
  // What a plain hipr client sends first: a frame header.
  const uint8_t header[16] = {'H', 'I', 'P', 'R', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(c->SendAll(header, sizeof header).ok());
  t.join();
  ASSERT_FALSE(server_st.ok());
  EXPECT_NE(server_st.message().find("TLS handshake failed"), std::string::npos) << server_st.ToString();

  // And a silent one runs into the handshake's deadline.
  TcpPair(&c, &s);
  const auto start = std::chrono::steady_clock::now();
  Status silent = tls::TlsConnection::Accept(std::move(s), *server, 200, &b);
  EXPECT_EQ(silent.code(), StatusCode::kLinkDown);
  EXPECT_NE(silent.message().find("no answer within 200 ms"), std::string::npos) << silent.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(TlsConnectionTest, BadFilesAreRefusedWithTheSettingsName) {
  std::shared_ptr<tls::Context> ctx;
  Status st = tls::Context::MakeServer({"/nonexistent/cert.pem", Pki().server_key, ""}, &ctx);
  EXPECT_NE(st.message().find("--tls-cert /nonexistent/cert.pem"), std::string::npos) << st.ToString();
  st = tls::Context::MakeServer({Pki().server_cert, Pki().client_key, ""}, &ctx);
  EXPECT_NE(st.message().find("is not the key of --tls-cert"), std::string::npos) << st.ToString();
  st = tls::Context::MakeServer({Pki().server_key, Pki().server_key, ""}, &ctx);
  EXPECT_NE(st.message().find("not a PEM certificate"), std::string::npos) << st.ToString();
  st = tls::Context::MakeClient({"/nonexistent/ca.pem", "", ""}, &ctx);
  EXPECT_NE(st.message().find("HIPR_TLS_CA /nonexistent/ca.pem"), std::string::npos) << st.ToString();
  st = tls::Context::MakeClient({Pki().ca, Pki().client_cert, ""}, &ctx);
  EXPECT_NE(st.message().find("go together"), std::string::npos) << st.ToString();
}

TEST(TlsConnectionTest, ReceiveTimeoutEndsTheLink) {
  TlsHandshakes h = Handshake(*ClientContext(Pki().ca), *ServerContext());
  ASSERT_TRUE(h.client.ok()) << h.client.ToString();
  h.a->set_recv_timeout_ms(100);
  uint8_t byte = 0;
  Status st = h.a->RecvExact(&byte, 1);
  EXPECT_EQ(st.code(), StatusCode::kLinkDown);
  EXPECT_NE(st.message().find("no bytes for 100 ms"), std::string::npos) << st.ToString();
}

TEST(TlsConnectionTest, BulkAndSmallPiecesArriveExact) {
  TlsHandshakes h = Handshake(*ClientContext(Pki().ca), *ServerContext());
  ASSERT_TRUE(h.client.ok()) << h.client.ToString();
  // A frame-like mix: small header and body gathered, then 64 MiB of bulk.
  const std::vector<uint8_t> head = Bytes(16, 1), body = Bytes(300, 2), bulk = Bytes(64u << 20, 3);
  std::thread sender([&] {
    iovec iov[3] = {{const_cast<uint8_t*>(head.data()), head.size()},
                    {const_cast<uint8_t*>(body.data()), body.size()},
                    {const_cast<uint8_t*>(bulk.data()), bulk.size()}};
    EXPECT_TRUE(h.a->SendV(iov, 3).ok());
  });
  std::vector<uint8_t> got_head(16), got_body(300), got_bulk(bulk.size());
  ASSERT_TRUE(h.b->RecvExact(got_head.data(), got_head.size()).ok());
  ASSERT_TRUE(h.b->RecvExact(got_body.data(), got_body.size()).ok());
  ASSERT_TRUE(h.b->RecvExact(got_bulk.data(), got_bulk.size()).ok());
  sender.join();
  EXPECT_EQ(got_head, head);
  EXPECT_EQ(got_body, body);
  EXPECT_TRUE(got_bulk == bulk);
}

}  // namespace
}  // namespace hipr::test
