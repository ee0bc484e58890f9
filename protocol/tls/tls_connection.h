// TLS over tcp (OpenSSL, TLS 1.3 only): a Connection whose bytes are
// encrypted and authenticated on the wire. The worker proves itself with a
// certificate the client checks against a CA file and the name or address
// it dialled; the worker may also require client certificates from a CA of
// its own (a second way to authenticate, beside the hello's challenge).
//
// I/O: the socket is non-blocking and one mutex serialises the calls into
// the SSL object (OpenSSL does not allow a read and a write on one SSL at
// once); a sender or receiver that must wait polls the socket with the
// mutex released, so one sender and one receiver may still use the
// connection at once, as transport.h promises. Small pieces of a send are
// gathered into one record; large ones are written from the caller's
// buffers. Kernel TLS is asked for (SSL_OP_ENABLE_KTLS): where the kernel
// offers the `tls` upper layer and OpenSSL agrees, records are sealed in
// the kernel; ktls_send()/ktls_recv() say whether that happened.
//
// Session tickets are off (a worker session is one connection), so no
// record but application data follows the handshake.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "protocol/tcp/tcp_connection.h"
#include "protocol/transport.h"

typedef struct ssl_ctx_st SSL_CTX;
typedef struct ssl_st SSL;

namespace hipr::tls {

struct ServerOptions {
  std::string cert_file;       // PEM: the worker's certificate (and its chain).
  std::string key_file;        // PEM: its private key.
  std::string client_ca_file;  // PEM; not empty: clients must present a certificate this CA signed.
  // TLS 1.3 ciphersuites the worker accepts, in its order of preference
  // (OpenSSL's syntax); the worker's order decides, not the client's.
  // Empty: kDefaultCiphersuites.
  std::string ciphersuites;
};

// AES-128-GCM first: the cipher TLS 1.3 requires every peer to have, and
// about a quarter faster than AES-256-GCM per core (fewer rounds), where a
// bulk copy's rate is the CPU's AES rate (docs/performance.md "TLS").
// AES-256-GCM and ChaCha20-Poly1305 stay accepted.
inline constexpr const char* kDefaultCiphersuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

struct ClientOptions {
  std::string ca_file;    // PEM: the CA(s) the worker's certificate must chain to.
  std::string cert_file;  // PEM, optional: a client certificate (with key_file).
  std::string key_file;
};

// An SSL_CTX: certificates, keys and settings loaded once, shared by every
// connection made with it (read-only after Make*).
class Context {
 public:
  static Status MakeServer(const ServerOptions& options, std::shared_ptr<Context>* out);
  static Status MakeClient(const ClientOptions& options, std::shared_ptr<Context>* out);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  bool requires_client_certificate() const { return requires_client_certificate_; }

 private:
  friend class TlsConnection;
  Context() = default;
  SSL_CTX* ctx_ = nullptr;
  bool requires_client_certificate_ = false;
};

struct RecordSink;  // tls_connection.cc: where records go when the kernel does not take them.

class TlsConnection final : public Connection {
 public:
  // Handshakes as the server over `tcp` within `timeout_ms`.
  static Status Accept(std::unique_ptr<tcp::TcpConnection> tcp, const Context& ctx, int timeout_ms,
                       std::unique_ptr<TlsConnection>* out);
  // Handshakes as the client; the worker's certificate must name `host` (a
  // DNS name, or an IP address in its subjectAltName).
  static Status Connect(std::unique_ptr<tcp::TcpConnection> tcp, const Context& ctx, const std::string& host,
                        int timeout_ms, std::unique_ptr<TlsConnection>* out);
  ~TlsConnection() override;

  Status SendV(const iovec* iov, int count) override;
  Status RecvV(const iovec* iov, int count) override;
  // Exact: a ResumableLink may run over TLS (bytes OpenSSL decrypted and
  // did not deliver count as not received).
  Status RecvVCounted(const iovec* iov, int count, size_t* filled) override;
  Status WaitReadable(int timeout_ms) override;
  bool Unread() const override;
  bool Hung() const override;
  void Shutdown() override;
  std::string PeerName() const override;
  void Abandon() override;
  bool PeerIsLocal() const override { return tcp_->PeerIsLocal(); }

  // Reads what has arrived, at least one byte and at most `cap` (*got),
  // waiting as RecvV does: for a relay that does not know frames.
  Status RecvSome(void* buf, size_t cap, size_t* got);

  // A receive that waits longer than this for bytes fails with kLinkDown,
  // as SO_RCVTIMEO makes a tcp receive fail (-1: never).
  void set_recv_timeout_ms(int ms) { recv_timeout_ms_ = ms; }
  // Spin this long for bytes before sleeping in a receive or a wait, as
  // tcp::TcpConnection::set_spin_us (0: sleep at once).
  void set_spin_us(int us) { spin_us_ = us; }

  // The subject of the certificate the peer presented and the handshake
  // verified ("" when none), e.g. "CN=tenant-a".
  const std::string& peer_subject() const { return peer_subject_; }
  // The peer certificate's common name ("" when none).
  const std::string& peer_common_name() const { return peer_common_name_; }
  // "TLSv1.3 TLS_AES_256_GCM_SHA384, kernel TLS send off, receive off".
  std::string Describe() const;
  bool ktls_send() const;
  bool ktls_recv() const;

  // How a client's connections made from now on write (tests): as the
  // kernel allows (kAuto: OpenSSL's socket BIO under a SIGPIPE guard where
  // the kernel offers kernel TLS, a MSG_NOSIGNAL BIO elsewhere), or one of
  // the two.
  enum class ClientWritePath { kAuto = 0, kSocketBio = 1, kNoSignalBio = 2 };
  static void set_client_write_path_for_testing(ClientWritePath path);

  // Connections made from now on update their sending keys after this many
  // records (tests; kKeyUpdateRecords otherwise).
  static void set_key_update_records_for_testing(uint64_t records);
  // KeyUpdate messages this end sent and received since the handshake.
  uint64_t key_updates_sent() const { return key_updates_sent_.load(std::memory_order_relaxed); }
  uint64_t key_updates_received() const { return key_updates_received_.load(std::memory_order_relaxed); }

  // Records sealed under one key before the sender updates it: 2^23 (at
  // most 128 GiB), well inside RFC 8446's 2^24.5 for AES-GCM.
  static constexpr uint64_t kKeyUpdateRecords = uint64_t{1} << 23;
  static constexpr size_t kGatherBytes = 16u << 10;  // One TLS record's worth of plaintext.
  static constexpr size_t kCorkBytes = 64u << 10;    // Sends this large are held or corked (SendV).

 private:
  TlsConnection(std::unique_ptr<tcp::TcpConnection> tcp, SSL* ssl);
  static Status Handshake(std::unique_ptr<tcp::TcpConnection> tcp, const Context& ctx, bool server,
                          const std::string& host, int timeout_ms, std::unique_ptr<TlsConnection>* out);
  Status SendPieces(const iovec* iov, int count);
  // Sends what sink_ holds, waiting for room, and stops holding.
  Status SendHeld();
  // One SSL_read into [p, p + n), waiting until it delivers (*got > 0).
  Status ReadOnce(uint8_t* p, size_t n, size_t* got);
  // Writes all of [p, p + n) as records.
  Status WriteAll(const uint8_t* p, size_t n);
  // Waits for the socket to be ready for `events` (POLLIN/POLLOUT).
  Status Await(short events, int timeout_ms, const char* what);

  std::unique_ptr<tcp::TcpConnection> tcp_;
  // The write BIO's state where the kernel does not take the records
  // (null where OpenSSL's socket BIO writes); ssl_, freed in the
  // destructor's body, never outlives it.
  std::unique_ptr<RecordSink> sink_;
  SSL* ssl_ = nullptr;
  mutable std::mutex ssl_mu_;  // Every call into ssl_.
  std::vector<uint8_t> gather_;  // The sender's: small pieces of one SendV.
  int recv_timeout_ms_ = -1;
  int spin_us_ = 0;
  // A client's that writes through OpenSSL's socket BIO: SSL calls that may
  // write run with SIGPIPE blocked (tls_connection.cc NoSigpipe).
  bool guard_sigpipe_ = false;
  // Key updates (WriteAll): off where kernel TLS seals the records.
  bool update_keys_ = false;
  uint64_t key_update_records_ = kKeyUpdateRecords;
  uint64_t records_since_update_ = 0;  // Under ssl_mu_; a partial record counts whole.
  std::atomic<uint64_t> key_updates_sent_{0};
  std::atomic<uint64_t> key_updates_received_{0};
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> abandoned_{false};
  std::string peer_subject_;
  std::string peer_common_name_;
};

}  // namespace hipr::tls
