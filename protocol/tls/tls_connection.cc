#include "protocol/tls/tls_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace hipr::tls {
namespace {

// OpenSSL's queued errors, oldest first, then cleared.
std::string ErrorQueue() {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    if (!text.empty()) text += "; ";
    text += buf;
  }
  return text;
}

Status Failed(const std::string& what) {
  std::string detail = ErrorQueue();
  return Status(StatusCode::kInvalidArgument, detail.empty() ? what : what + ": " + detail);
}

// A private key OpenSSL would not take: not one, or not the certificate's.
Status KeyFailed(const std::string& key, const std::string& cert) {
  const unsigned long e = ERR_peek_last_error();
  if (ERR_GET_REASON(e) == X509_R_KEY_VALUES_MISMATCH) {
    ERR_clear_error();
    return Status(StatusCode::kInvalidArgument, key + " is not the key of " + cert);
  }
  return Failed(key + ": not a PEM private key");
}

Status CheckReadable(const std::string& path, const char* flag) {
  if (path.empty()) return Status(StatusCode::kInvalidArgument, std::string(flag) + " is empty");
  FILE* f = std::fopen(path.c_str(), "re");
  if (f == nullptr)
    return Status(StatusCode::kInvalidArgument, std::string(flag) + " " + path + ": " + std::strerror(errno));
  std::fclose(f);
  return Status::Ok();
}

// TLS 1.3 only, no tickets, kernel TLS where offered.
SSL_CTX* NewContext(bool server) {
  SSL_CTX* ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
  if (ctx == nullptr) return nullptr;
  SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_ENABLE_KTLS);
  SSL_CTX_set_num_tickets(ctx, 0);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Read what has arrived in one go, not a record header then its body.
  SSL_CTX_set_read_ahead(ctx, 1);
  SSL_CTX_set_default_read_buffer_len(ctx, 256u << 10);
  return ctx;
}

std::string NameText(X509_NAME* name) {
  if (name == nullptr) return "";
  BIO* bio = BIO_new(BIO_s_mem());
  if (bio == nullptr) return "";
  X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string text(data, n > 0 ? static_cast<size_t>(n) : 0);
  BIO_free(bio);
  return text;
}

// The subject's one common name, whole (it names a tenant, so it is never
// cut); empty when there is none, more than one, or one holding a NUL.
std::string CommonName(X509_NAME* name) {
  if (name == nullptr) return "";
  const int at = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (at < 0 || X509_NAME_get_index_by_NID(name, NID_commonName, at) >= 0) return "";
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at)));
  std::string cn = n > 0 ? std::string(reinterpret_cast<const char*>(utf8), static_cast<size_t>(n)) : "";
  OPENSSL_free(utf8);
  return cn.find('\0') == std::string::npos ? cn : "";
}

// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE on a
// connection the peer has reset or closed (a record, or the alert a failed
// read sends); a library must not end its host program for that (tcp
// sends with MSG_NOSIGNAL). While one lives (and `on`), SIGPIPE is blocked
// in this thread; after a failed call (Failed()), one that call raised is
// taken back before it is unblocked. errno is kept. It costs two system
// calls, so only a client's connections that write through the socket BIO
// use it (Handshake); the worker's processes ignore SIGPIPE.
class NoSigpipe {
 public:
  explicit NoSigpipe(bool on) {
    if (!on) return;
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    blocked_ = pthread_sigmask(SIG_BLOCK, &pipe_, &old_) == 0 && sigismember(&old_, SIGPIPE) == 0;
  }
  ~NoSigpipe() {
    if (!blocked_) return;
    const int saved = errno;
    sigset_t pending;
    if (failed_ && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
      const timespec now{0, 0};
      (void)sigtimedwait(&pipe_, nullptr, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    errno = saved;
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;
  void Failed() { failed_ = true; }

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool blocked_ = false;
  bool failed_ = false;
};

}  // namespace

// The state of a connection's write BIO (SinkWrite) where the kernel does
// not take the records over. Guarded by the connection's ssl_mu_.
struct RecordSink {
  static constexpr size_t kHeldBytes = 256u << 10;
  int fd = -1;
  bool holding = false;       // A large SendV is under way.
  std::vector<uint8_t> held;  // Sealed records not sent yet...
  size_t sent = 0;            // ...of which these bytes went out.
};

namespace {

// Sends all of held[sent..] it can: 1 when nothing is left, 0 when the
// socket is full (the rest stays), -1 on an error (errno says which).
int DrainHeld(RecordSink& s) {
  while (s.sent < s.held.size()) {
    const ssize_t w = send(s.fd, s.held.data() + s.sent, s.held.size() - s.sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (w < 0) return -1;
    s.sent += static_cast<size_t>(w);
  }
  s.held.clear();
  s.sent = 0;
  return 1;
}

// The write side of a connection whose records the kernel does not take
// over (RecordSink): sends with MSG_NOSIGNAL, so no write raises SIGPIPE,
// and while a large send holds records (RecordSink::holding) keeps them
// and sends them kHeldBytes at a time. It declines kernel TLS
// (BIO_CTRL_SET_KTLS answers 0).
int SinkWrite(BIO* b, const char* data, int n) {
  auto& s = *static_cast<RecordSink*>(BIO_get_data(b));
  BIO_clear_retry_flags(b);
  const auto len = static_cast<size_t>(n);
  if (!s.held.empty() && (!s.holding || s.held.size() + len > RecordSink::kHeldBytes)) {
    // Full, or no longer holding: what is held goes first. A socket that
    // takes no more makes OpenSSL offer the same record again later.
    const int rc = DrainHeld(s);
    if (rc < 0) return -1;
    if (rc == 0) {
      BIO_set_retry_write(b);
      return -1;
    }
  }
  if (s.holding) {
    const size_t at = s.held.size();
    s.held.resize(at + len);
    std::memcpy(s.held.data() + at, data, len);
    return n;
  }
  ssize_t w;
  do {
    w = send(s.fd, data, len, MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
  if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(b);
  return static_cast<int>(w);
}

long SinkCtrl(BIO* b, int cmd, long, void*) {
  auto& s = *static_cast<RecordSink*>(BIO_get_data(b));
  if (cmd == BIO_CTRL_WPENDING) return static_cast<long>(s.held.size() - s.sent);
  if (cmd != BIO_CTRL_FLUSH) return 0;
  BIO_clear_retry_flags(b);
  const int rc = DrainHeld(s);
  if (rc == 0) BIO_set_retry_write(b);
  return rc;
}

int SinkCreate(BIO* b) {
  BIO_set_init(b, 1);
  return 1;
}

BIO* NewSinkBio(RecordSink* sink) {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "hipr socket, MSG_NOSIGNAL, held");
    if (m == nullptr) return m;
    BIO_meth_set_write(m, SinkWrite);
    BIO_meth_set_ctrl(m, SinkCtrl);
    BIO_meth_set_create(m, SinkCreate);
    return m;
  }();
  if (method == nullptr) return nullptr;
  BIO* b = BIO_new(method);
  if (b != nullptr) BIO_set_data(b, sink);
  return b;
}

// Whether this kernel offers the `tls` upper layer (kernel TLS), read once.
bool KernelOffersTls() {
  static const bool offered = [] {
    FILE* f = std::fopen("/proc/sys/net/ipv4/tcp_available_ulp", "re");
    if (f == nullptr) return false;
    char line[256] = {};
    const bool ok = std::fgets(line, sizeof line, f) != nullptr;
    std::fclose(f);
    if (!ok) return false;
    for (const char* p = line; (p = std::strstr(p, "tls")) != nullptr; p += 3) {
      const bool starts = p == line || p[-1] == ' ';
      const bool ends = p[3] == '\0' || p[3] == ' ' || p[3] == '\n';
      if (starts && ends) return true;
    }
    return false;
  }();
  return offered;
}

std::atomic<int> g_client_write_path{0};  // TlsConnection::ClientWritePath, for tests.
std::atomic<uint64_t> g_key_update_records{TlsConnection::kKeyUpdateRecords};

// Counts the KeyUpdate messages a connection receives (OpenSSL hands each
// handshake message it reads to this callback, after decryption).
void CountKeyUpdates(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
  if (write_p == 0 && content_type == SSL3_RT_HANDSHAKE && len > 0 &&
      static_cast<const uint8_t*>(buf)[0] == SSL3_MT_KEY_UPDATE)
    static_cast<std::atomic<uint64_t>*>(arg)->fetch_add(1, std::memory_order_relaxed);
}

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

}  // namespace

Context::~Context() { SSL_CTX_free(ctx_); }

Status Context::MakeServer(const ServerOptions& o, std::shared_ptr<Context>* out) {
  HIPR_RETURN_IF_ERROR(CheckReadable(o.cert_file, "--tls-cert"));
  HIPR_RETURN_IF_ERROR(CheckReadable(o.key_file, "--tls-key"));
  std::shared_ptr<Context> c(new Context);
  c->ctx_ = NewContext(true);
  if (c->ctx_ == nullptr) return Failed("cannot make a TLS context");
  if (SSL_CTX_use_certificate_chain_file(c->ctx_, o.cert_file.c_str()) != 1)
    return Failed("--tls-cert " + o.cert_file + ": not a PEM certificate");
  if (SSL_CTX_use_PrivateKey_file(c->ctx_, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
    return KeyFailed("--tls-key " + o.key_file, "--tls-cert " + o.cert_file);
  if (SSL_CTX_check_private_key(c->ctx_) != 1)
    return Failed("--tls-key " + o.key_file + " is not the key of --tls-cert " + o.cert_file);
  const std::string suites = o.ciphersuites.empty() ? kDefaultCiphersuites : o.ciphersuites;
  if (SSL_CTX_set_ciphersuites(c->ctx_, suites.c_str()) != 1)
    return Failed("--tls-ciphersuites " + suites + ": no TLS 1.3 ciphersuite OpenSSL knows (e.g. " +
                  kDefaultCiphersuites + ")");
  SSL_CTX_set_options(c->ctx_, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (!o.client_ca_file.empty()) {
    HIPR_RETURN_IF_ERROR(CheckReadable(o.client_ca_file, "--tls-client-ca"));
    if (SSL_CTX_load_verify_locations(c->ctx_, o.client_ca_file.c_str(), nullptr) != 1)
      return Failed("--tls-client-ca " + o.client_ca_file + ": no PEM certificate");
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.client_ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(c->ctx_, names);
    SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    c->requires_client_certificate_ = true;
  }
  *out = std::move(c);
  return Status::Ok();
}

Status Context::MakeClient(const ClientOptions& o, std::shared_ptr<Context>* out) {
  HIPR_RETURN_IF_ERROR(CheckReadable(o.ca_file, "HIPR_TLS_CA"));
  std::shared_ptr<Context> c(new Context);
  c->ctx_ = NewContext(false);
  if (c->ctx_ == nullptr) return Failed("cannot make a TLS context");
  if (SSL_CTX_load_verify_locations(c->ctx_, o.ca_file.c_str(), nullptr) != 1)
    return Failed("HIPR_TLS_CA " + o.ca_file + ": no PEM certificate");
  SSL_CTX_set_verify(c->ctx_, SSL_VERIFY_PEER, nullptr);
  if (o.cert_file.empty() != o.key_file.empty())
    return Status(StatusCode::kInvalidArgument, "HIPR_TLS_CERT and HIPR_TLS_KEY go together");
  if (!o.cert_file.empty()) {
    HIPR_RETURN_IF_ERROR(CheckReadable(o.cert_file, "HIPR_TLS_CERT"));
    HIPR_RETURN_IF_ERROR(CheckReadable(o.key_file, "HIPR_TLS_KEY"));
    if (SSL_CTX_use_certificate_chain_file(c->ctx_, o.cert_file.c_str()) != 1)
      return Failed("HIPR_TLS_CERT " + o.cert_file + ": not a PEM certificate");
    if (SSL_CTX_use_PrivateKey_file(c->ctx_, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1)
      return KeyFailed("HIPR_TLS_KEY " + o.key_file, "HIPR_TLS_CERT " + o.cert_file);
    if (SSL_CTX_check_private_key(c->ctx_) != 1)
      return Failed("HIPR_TLS_KEY " + o.key_file + " is not the key of HIPR_TLS_CERT " + o.cert_file);
  }
  *out = std::move(c);
  return Status::Ok();
}

TlsConnection::TlsConnection(std::unique_ptr<tcp::TcpConnection> tcp, SSL* ssl) : tcp_(std::move(tcp)), ssl_(ssl) {
  gather_.reserve(kGatherBytes);
}

TlsConnection::~TlsConnection() { SSL_free(ssl_); }

Status TlsConnection::Accept(std::unique_ptr<tcp::TcpConnection> tcp, const Context& ctx, int timeout_ms,
                             std::unique_ptr<TlsConnection>* out) {
  return Handshake(std::move(tcp), ctx, true, "", timeout_ms, out);
}

Status TlsConnection::Connect(std::unique_ptr<tcp::TcpConnection> tcp, const Context& ctx, const std::string& host,
                              int timeout_ms, std::unique_ptr<TlsConnection>* out) {
  return Handshake(std::move(tcp), ctx, false, host, timeout_ms, out);
}

Status TlsConnection::Handshake(std::unique_ptr<tcp::TcpConnection> tcp, const Context& ctx, bool server,
                                const std::string& host, int timeout_ms, std::unique_ptr<TlsConnection>* out) {
  ERR_clear_error();
  const int fd = tcp->fd();
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    return LinkDown(std::string("TLS: O_NONBLOCK: ") + std::strerror(errno));
  SSL* ssl = SSL_new(ctx.ctx_);
  if (ssl == nullptr) return LinkDown("TLS: " + ErrorQueue());
  std::unique_ptr<TlsConnection> conn(new TlsConnection(std::move(tcp), ssl));
  if (SSL_set_fd(ssl, fd) != 1) return LinkDown("TLS: " + ErrorQueue());
  if (!server) {
    // A client's writes must not raise SIGPIPE in a program that did not
    // ignore it (a server's process does). Where the kernel may take the
    // records over (kernel TLS), OpenSSL's own socket BIO writes them and
    // each SSL call runs under NoSigpipe; elsewhere the writes go through
    // hipr's BIO (SinkWrite), which sends with MSG_NOSIGNAL at no cost. A
    // server writes through it too where the kernel offers no kernel TLS:
    // it holds a large send's records and sends them together.
    const int path = g_client_write_path.load();
    const bool socket_bio = path == 1 || (path == 0 && KernelOffersTls());
    if (socket_bio) {
      conn->guard_sigpipe_ = true;
    } else {
      conn->sink_ = std::make_unique<RecordSink>();
    }
  } else if (!KernelOffersTls()) {
    conn->sink_ = std::make_unique<RecordSink>();
  }
  if (conn->sink_ != nullptr) {
    conn->sink_->fd = fd;
    BIO* w = NewSinkBio(conn->sink_.get());
    if (w == nullptr) return LinkDown("TLS: " + ErrorQueue());
    SSL_set0_wbio(ssl, w);
  }
  if (!server) {
    in6_addr ip6;
    in_addr ip4;
    const bool is_ip = inet_pton(AF_INET, host.c_str(), &ip4) == 1 || inet_pton(AF_INET6, host.c_str(), &ip6) == 1;
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    if (is_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    } else {
      SSL_set_tlsext_host_name(ssl, host.c_str());
      SSL_set1_host(ssl, host.c_str());
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int rc;
    {
      NoSigpipe guard(conn->guard_sigpipe_);
      rc = server ? SSL_accept(ssl) : SSL_connect(ssl);
      if (rc != 1) guard.Failed();
    }
    if (rc == 1) break;
    const int err = SSL_get_error(ssl, rc);
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      const int left = RemainingMs(deadline);
      if (left == 0) return LinkDown("TLS handshake: no answer within " + std::to_string(timeout_ms) + " ms");
      Status waited = conn->Await(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, left, "TLS handshake");
      if (waited.code() == StatusCode::kTimeout)
        return LinkDown("TLS handshake: no answer within " + std::to_string(timeout_ms) + " ms");
      HIPR_RETURN_IF_ERROR(waited);
      continue;
    }
    std::string why;
    const long verify = SSL_get_verify_result(ssl);
    if (verify != X509_V_OK) why = std::string("certificate verify failed: ") + X509_verify_cert_error_string(verify);
    const std::string queue = ErrorQueue();
    if (why.empty()) why = queue;
    if (why.empty() && err == SSL_ERROR_SYSCALL)
      why = errno != 0 ? std::strerror(errno) : "the peer closed the connection (does it speak TLS?)";
    if (why.empty()) why = "OpenSSL error " + std::to_string(err);
    return LinkDown("TLS handshake failed: " + why);
  }
  // Sending keys are updated in WriteAll, but not where kernel TLS seals
  // the records: no kernel here offers it, so that path stays untested and
  // untouched.
  conn->update_keys_ = !conn->ktls_send();
  conn->key_update_records_ = g_key_update_records.load();
  SSL_set_msg_callback_arg(ssl, &conn->key_updates_received_);
  SSL_set_msg_callback(ssl, CountKeyUpdates);
  if (X509* cert = SSL_get1_peer_certificate(ssl)) {
    conn->peer_subject_ = NameText(X509_get_subject_name(cert));
    conn->peer_common_name_ = CommonName(X509_get_subject_name(cert));
    X509_free(cert);
  }
  *out = std::move(conn);
  return Status::Ok();
}

Status TlsConnection::Await(short events, int timeout_ms, const char* what) {
  pollfd p{tcp_->fd(), events, 0};
  if (events == POLLIN && spin_us_ > 0 && timeout_ms != 0) {
    // As tcp's receive: a reply that comes within spin_us costs no wake-up.
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us_);
    do {
      if (shut_down_.load()) return LinkDown("connection shut down");
      if (poll(&p, 1, 0) > 0) return Status::Ok();
    } while (std::chrono::steady_clock::now() < until);
  }
  for (;;) {
    if (shut_down_.load()) return LinkDown("connection shut down");
    const int rc = poll(&p, 1, timeout_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return LinkDown(std::string(what) + ": poll: " + std::strerror(errno));
    if (rc == 0) return Status(StatusCode::kTimeout, std::string(what) + ": timed out");
    if (shut_down_.load()) return LinkDown("connection shut down");
    return Status::Ok();
  }
}

Status TlsConnection::WriteAll(const uint8_t* p, size_t n) {
  while (n > 0) {
    size_t written = 0;
    int rc;
    int err = SSL_ERROR_NONE;
    {
      std::lock_guard<std::mutex> lock(ssl_mu_);
      if (abandoned_.load()) return LinkDown("connection abandoned");
      ERR_clear_error();
      errno = 0;
      NoSigpipe guard(guard_sigpipe_);
      // RFC 8446 5.5: an AES-GCM key seals at most 2^24.5 full records
      // safely, and OpenSSL does not count them. The update is sent ahead
      // of this write's records, in order with them.
      if (update_keys_ && records_since_update_ >= key_update_records_ &&
          SSL_key_update(ssl_, SSL_KEY_UPDATE_NOT_REQUESTED) == 1) {
        records_since_update_ = 0;
        key_updates_sent_.fetch_add(1, std::memory_order_relaxed);
      }
      rc = SSL_write_ex(ssl_, p, n, &written);
      if (rc == 1) records_since_update_ += (written + kGatherBytes - 1) / kGatherBytes;
      if (rc != 1) {
        err = SSL_get_error(ssl_, rc);
        guard.Failed();
      }
    }
    if (rc == 1) {
      p += written;
      n -= written;
      continue;
    }
    if (err == SSL_ERROR_WANT_WRITE || err == SSL_ERROR_WANT_READ) {
      Status st = Await(err == SSL_ERROR_WANT_WRITE ? POLLOUT : POLLIN, -1, "send");
      if (!st.ok()) return st;
      continue;
    }
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (err == SSL_ERROR_SYSCALL && errno != 0) return LinkDown(std::string("send: ") + std::strerror(errno));
    const std::string queue = ErrorQueue();
    return LinkDown("send: TLS: " + (queue.empty() ? "OpenSSL error " + std::to_string(err) : queue));
  }
  return Status::Ok();
}

Status TlsConnection::SendV(const iovec* iov, int count) {
  // A large send's records are held and sent kHeldBytes at a time
  // (RecordSink); through OpenSSL's socket BIO (where kernel TLS may take
  // the records over) the socket is corked instead. Either way each 16 KiB
  // record does not travel, and wake the receiver, alone.
  size_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  const bool large = total >= kCorkBytes;
  if (!large) return SendPieces(iov, count);
  if (sink_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(ssl_mu_);
      sink_->holding = true;
    }
    Status st = SendPieces(iov, count);
    Status flushed = SendHeld();
    return st.ok() ? flushed : st;
  }
  const int on = 1;
  (void)setsockopt(tcp_->fd(), IPPROTO_TCP, TCP_CORK, &on, sizeof on);
  Status st = SendPieces(iov, count);
  const int off = 0;
  (void)setsockopt(tcp_->fd(), IPPROTO_TCP, TCP_CORK, &off, sizeof off);
  return st;
}

Status TlsConnection::SendHeld() {
  for (;;) {
    int rc;
    {
      std::lock_guard<std::mutex> lock(ssl_mu_);
      if (abandoned_.load()) return LinkDown("connection abandoned");
      sink_->holding = false;
      rc = DrainHeld(*sink_);
    }
    if (rc > 0) return Status::Ok();
    if (rc < 0) {
      if (shut_down_.load()) return LinkDown("connection shut down");
      return LinkDown(std::string("send: ") + std::strerror(errno));
    }
    HIPR_RETURN_IF_ERROR(Await(POLLOUT, -1, "send"));
  }
}

Status TlsConnection::SendPieces(const iovec* iov, int count) {
  // Gathers small pieces (a frame header, a body) into one record; a piece
  // of a record's size or more goes out from the caller's buffer.
  gather_.clear();
  for (int i = 0; i < count; ++i) {
    const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
    const size_t n = iov[i].iov_len;
    if (n == 0) continue;
    if (gather_.size() + n <= kGatherBytes) {
      gather_.insert(gather_.end(), p, p + n);
      continue;
    }
    if (!gather_.empty()) {
      HIPR_RETURN_IF_ERROR(WriteAll(gather_.data(), gather_.size()));
      gather_.clear();
    }
    if (n < kGatherBytes) {
      gather_.insert(gather_.end(), p, p + n);
      continue;
    }
    HIPR_RETURN_IF_ERROR(WriteAll(p, n));
  }
  if (!gather_.empty()) HIPR_RETURN_IF_ERROR(WriteAll(gather_.data(), gather_.size()));
  return Status::Ok();
}

Status TlsConnection::ReadOnce(uint8_t* p, size_t n, size_t* got) {
  for (;;) {
    int rc;
    int err = SSL_ERROR_NONE;
    {
      std::lock_guard<std::mutex> lock(ssl_mu_);
      if (abandoned_.load()) return LinkDown("connection abandoned");
      ERR_clear_error();
      errno = 0;
      // Decrypted bytes waiting are delivered with no I/O, so no guard.
      NoSigpipe guard(guard_sigpipe_ && SSL_pending(ssl_) == 0);
      rc = SSL_read_ex(ssl_, p, n, got);
      if (rc != 1) {
        err = SSL_get_error(ssl_, rc);
        guard.Failed();
      }
    }
    if (rc == 1) return Status::Ok();
    if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
      Status st = Await(err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, recv_timeout_ms_, "receive");
      if (st.code() == StatusCode::kTimeout)
        return LinkDown("receive: no bytes for " + std::to_string(recv_timeout_ms_) + " ms");
      if (!st.ok()) return st;
      continue;
    }
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (err == SSL_ERROR_ZERO_RETURN) return LinkDown("connection closed by peer");
    if (err == SSL_ERROR_SYSCALL)
      return LinkDown(errno != 0 ? std::string("receive: ") + std::strerror(errno) : "connection closed by peer");
    const std::string queue = ErrorQueue();
    return LinkDown("receive: TLS: " + (queue.empty() ? "OpenSSL error " + std::to_string(err) : queue));
  }
}

Status TlsConnection::RecvV(const iovec* iov, int count) {
  size_t filled = 0;
  return RecvVCounted(iov, count, &filled);
}

Status TlsConnection::RecvVCounted(const iovec* iov, int count, size_t* filled) {
  *filled = 0;
  for (int i = 0; i < count; ++i) {
    auto* p = static_cast<uint8_t*>(iov[i].iov_base);
    size_t n = iov[i].iov_len;
    while (n > 0) {
      size_t got = 0;
      HIPR_RETURN_IF_ERROR(ReadOnce(p, n, &got));
      p += got;
      n -= got;
      *filled += got;
    }
  }
  return Status::Ok();
}

Status TlsConnection::RecvSome(void* buf, size_t cap, size_t* got) {
  *got = 0;
  if (cap == 0) return Status::Ok();
  return ReadOnce(static_cast<uint8_t*>(buf), cap, got);
}

bool TlsConnection::Unread() const {
  {
    std::lock_guard<std::mutex> lock(ssl_mu_);
    if (SSL_has_pending(ssl_) == 1) return true;
  }
  return tcp_->Unread();
}

bool TlsConnection::Hung() const {
  {
    std::lock_guard<std::mutex> lock(ssl_mu_);
    if (SSL_has_pending(ssl_) == 1) return false;  // Records read ahead: the reader's first.
  }
  return tcp_->Hung();
}

Status TlsConnection::WaitReadable(int timeout_ms) {
  {
    std::lock_guard<std::mutex> lock(ssl_mu_);
    if (abandoned_.load()) return LinkDown("connection abandoned");
    if (SSL_has_pending(ssl_) == 1) return Status::Ok();
  }
  return Await(POLLIN, timeout_ms, "wait");
}

void TlsConnection::Shutdown() {
  shut_down_.store(true);
  tcp_->Shutdown();
}

std::string TlsConnection::PeerName() const {
  std::string name = tcp_->PeerName();
  if (name.rfind("tcp:", 0) == 0) name.replace(0, 3, "tls");
  return name;
}

void TlsConnection::Abandon() {
  // In a forked child: the parent's session state stays the parent's, and
  // nothing is sent. No lock: a parent thread may have held it at the fork,
  // and only this thread exists here.
  abandoned_.store(true);
  tcp_->Abandon();
}

void TlsConnection::set_key_update_records_for_testing(uint64_t records) { g_key_update_records.store(records); }

void TlsConnection::set_client_write_path_for_testing(ClientWritePath path) {
  g_client_write_path.store(static_cast<int>(path));
}

bool TlsConnection::ktls_send() const { return BIO_get_ktls_send(SSL_get_wbio(ssl_)) != 0; }
bool TlsConnection::ktls_recv() const { return BIO_get_ktls_recv(SSL_get_rbio(ssl_)) != 0; }

std::string TlsConnection::Describe() const {
  return std::string(SSL_get_version(ssl_)) + " " + SSL_CIPHER_get_name(SSL_get_current_cipher(ssl_)) +
         ", kernel TLS send " + (ktls_send() ? "on" : "off") + ", receive " + (ktls_recv() ? "on" : "off");
}

}  // namespace hipr::tls
