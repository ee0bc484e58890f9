#include "protocol/rdma/rdma_upgrade.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "protocol/auth.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/rdma/rdma_connection.h"

namespace hipr::rdma {
namespace {

using Clock = std::chrono::steady_clock;
using transport::LogLevel;

int MsLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

// A peer's text for our log: printable, and not a page of it.
std::string Printable(const std::string& text) {
  std::string out = text.substr(0, 300);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '?';
  return out.size() < text.size() ? out + "..." : out;
}

std::string HexOp(uint16_t op) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", op);
  return buf;
}

// Reads a frame of `op` whose body is at most wire::kMaxRdmaProbeBytes.
template <class M>
Status ReadSmallFrame(Connection& conn, wire::Op op, const char* what, wire::FrameHeader* h, M* out) {
  HIPR_RETURN_IF_ERROR(ReadHeader(conn, h));
  if (h->op != static_cast<uint16_t>(op))
    return ProtocolError(std::string("expected the client's ") + what + ", got op " + std::to_string(h->op));
  if (h->payload_length > wire::kMaxRdmaProbeBytes)
    return ProtocolError(std::string("the client's ") + what + " is " + std::to_string(h->payload_length) +
                         " bytes, more than its limit");
  std::vector<uint8_t> body;
  HIPR_RETURN_IF_ERROR(ReadBody(conn, *h, &body));
  Status st = codec::DecodeBody(body.data(), body.size(), out);
  if (!st.ok()) return ProtocolError(std::string("the client's ") + what + ": " + st.message());
  return Status::Ok();
}

// ---- Client ------------------------------------------------------------------

class ClientUpgrade final : public transport::ClientUpgrade {
 public:
  ClientUpgrade(const transport::ClientOptions& options, int tcp_fd, bool forced)
      : server_(options.server), log_(options.log), tcp_fd_(tcp_fd), forced_(forced) {}

  Status Prepare(const transport::ClientOptions& options, int read_timeout_ms) {
    Options o;
    o.device = options.rdma_device;
    o.recv_timeout_ms = read_timeout_ms;
    muted_ = std::make_shared<std::atomic<bool>>(true);
    o.log = [muted = muted_, log = log_](const std::string& line) {
      if (!muted->load() && log) log(LogLevel::kWarn, line);
    };
    // A lost SEND fails after the RC retries: 4.096 us * 2^timeout, retry_cnt + 1 times.
    const double retry_ms = 4.096e-3 * static_cast<double>(uint64_t{1} << o.timeout) * (o.retry_cnt + 1);
    probe_ms_ = static_cast<int>(retry_ms) + 1000;
    return RdmaConnection::Create(o, &offer_);
  }

  void Offer(msg::HelloRequest* hello) override {
    hello->rdma_qp.resize(kQpInfoBytes);
    EncodeQpInfo(offer_->local_info(), hello->rdma_qp.data());
    hello->features.push_back(wire::kFeatureRdmaProbe);
  }

  Status Finish(const msg::HelloReply& reply, uint32_t chunk_bytes, std::unique_ptr<Connection>* conn) override {
    (void)chunk_bytes;
    std::unique_ptr<RdmaConnection> offer = std::move(offer_);
    if (offer == nullptr) return Status::Ok();
    if (reply.rdma_qp.empty()) {
      const char* why =
          "the worker declined rdma (it has no RDMA device, runs with --rdma-device off, or its device failed; "
          "its log says which)";
      if (forced_) return LinkDown(std::string("HIPR_SERVER=rdma://: ") + why);
      Say(LogLevel::kInfo, "transport tcp with worker " + server_ + ": " + why);
      return Status::Ok();
    }
    QpInfo peer;
    Status st = DecodeQpInfo(reply.rdma_qp.data(), reply.rdma_qp.size(), &peer);
    if (!st.ok()) return ProtocolError("the worker's rdma queue pair: " + st.message());
    const bool checked =
        std::find(reply.features.begin(), reply.features.end(), wire::kFeatureRdmaProbe) != reply.features.end();
    // The tcp socket stays open as the rdma connection's liveness socket.
    const int liveness = fcntl(tcp_fd_, F_DUPFD_CLOEXEC, 0);
    if (liveness < 0) return LinkDown(std::string("rdma: cannot keep the tcp socket: ") + std::strerror(errno));
    st = offer->Connect(peer, liveness);
    if (!st.ok()) st = LinkDown("cannot connect the rdma queue pair: " + st.message());
    const std::string device = offer->device_name();
    if (!checked) {
      // A worker from before the probe has moved to rdma already: a failure
      // here ends the session.
      HIPR_RETURN_IF_ERROR(st);
      Say(LogLevel::kInfo, "transport rdma (device " + device + ") with worker " + server_ +
                               "; path not checked (the worker predates the probe)");
    } else {
      if (st.ok()) st = Probe(*offer, reply.session_id);
      // The worker waits for this before it switches, whatever happened.
      msg::RdmaVerdict verdict{st.ok(), st.message().substr(0, wire::kMaxRdmaProbeBytes / 2)};
      codec::BodyWriter w;
      w.Encode(verdict);
      HIPR_RETURN_IF_ERROR(SendFrame(**conn, static_cast<uint16_t>(wire::Op::kRdmaVerdict), 0, w));
      if (!st.ok()) {
        offer.reset();
        if (st.code() == StatusCode::kProtocolError) return st;
        if (forced_)
          return LinkDown("HIPR_SERVER=rdma://: the worker's RDMA device cannot be reached from this one (" + device +
                          "): " + st.message());
        Say(LogLevel::kInfo, "transport tcp with worker " + server_ +
                                 ": its RDMA device cannot be reached from this one (" + device + "): " +
                                 st.message());
        return Status::Ok();
      }
      Say(LogLevel::kInfo,
          "transport rdma (device " + device + ") with worker " + server_ + "; the probe crossed it both ways");
    }
    muted_->store(false);
    *conn = std::move(offer);
    return Status::Ok();
  }

 private:
  void Say(LogLevel level, const std::string& line) const {
    if (log_) log_(level, line);
  }

  // One kRdmaProbe round trip over `rdma`, within probe_ms_. kLinkDown or
  // kTimeout when the path fails; kProtocolError when the answer is not the
  // probe's echo.
  Status Probe(Connection& rdma, uint64_t session_id) {
    msg::RdmaProbe probe;
    probe.session_id = session_id;
    std::vector<uint8_t> nonce;
    HIPR_RETURN_IF_ERROR(auth::RandomNonce(&nonce));
    probe.nonce.assign(nonce.begin(), nonce.begin() + msg::kRdmaProbeNonceBytes);
    codec::BodyWriter w;
    w.Encode(probe);
    constexpr uint32_t kProbeId = 1;
    HIPR_RETURN_IF_ERROR(SendFrame(rdma, static_cast<uint16_t>(wire::Op::kRdmaProbe), kProbeId, w));
    // Until the first byte of the answer, a failure is the path's (a lost
    // SEND fails with the verbs status once the RC retries are spent);
    // after it, a fault is the worker's.
    Status st = rdma.WaitReadable(probe_ms_);
    if (st.code() == StatusCode::kTimeout)
      return Status(StatusCode::kTimeout,
                    "no answer to the probe over the queue pair within " + std::to_string(probe_ms_) + " ms");
    HIPR_RETURN_IF_ERROR(st);
    auto malformed = [](const std::string& why) {
      return ProtocolError("the worker's answer to the rdma probe is malformed: " + why);
    };
    wire::FrameHeader h;
    st = ReadHeader(rdma, &h);
    if (!st.ok()) return malformed(st.message());
    if (h.op != wire::ReplyOp(wire::Op::kRdmaProbe) || h.request_id != kProbeId ||
        h.payload_length > wire::kMaxRdmaProbeBytes)
      return malformed("op " + HexOp(h.op) + ", request " + std::to_string(h.request_id) + ", " +
                       std::to_string(h.payload_length) + " bytes");
    std::vector<uint8_t> reply;
    st = ReadBody(rdma, h, &reply);
    msg::RdmaProbe echo;
    if (st.ok()) st = codec::DecodeBody(reply.data(), reply.size(), &echo);
    if (!st.ok()) return malformed(st.message());
    if (echo.session_id != probe.session_id || echo.nonce != probe.nonce) return malformed("not the probe sent");
    return Status::Ok();
  }

  std::string server_;
  transport::Log log_;
  int tcp_fd_;
  bool forced_;
  std::unique_ptr<RdmaConnection> offer_;
  // offer_'s own error lines wait for the probe's outcome (logged once).
  std::shared_ptr<std::atomic<bool>> muted_;
  int probe_ms_ = 0;  // Its RC retry time and a second: a lost probe fails within it.
};

// ---- Worker ------------------------------------------------------------------

class ServerUpgrade final : public transport::ServerUpgrade {
 public:
  ServerUpgrade(int fd, std::string device, uint64_t session_id, transport::Log log)
      : fd_(fd), device_(std::move(device)), session_id_(session_id), log_(std::move(log)) {}

  void Answer(const msg::HelloRequest& hello, msg::HelloReply* reply) override {
    if (hello.rdma_qp.empty()) return;
    const bool probes =
        std::find(hello.features.begin(), hello.features.end(), wire::kFeatureRdmaProbe) != hello.features.end();
    auto warn = [log = log_](const std::string& line) {
      if (log) log(LogLevel::kWarn, line);
    };
    Status st = probes ? AcceptOffer(device_, fd_, hello.rdma_qp, warn, &rdma_, &reply->rdma_qp, &device_name_,
                                     &muted_)
                       : Status(StatusCode::kNotSupported,
                                "the client would not check the path first (a stub without the rdma probe)");
    if (!st.ok()) {
      Say("the client offered rdma; staying on tcp: " + st.message());
      return;
    }
    reply->features.push_back(wire::kFeatureRdmaProbe);
  }

  Status Finish(std::unique_ptr<Connection>* conn) override {
    if (rdma_ == nullptr) return Status::Ok();
    bool commit = false;
    std::string why;
    HIPR_RETURN_IF_ERROR(AwaitVerdict(**conn, *rdma_, session_id_, &commit, &why));
    if (!commit) {
      rdma_.reset();
      Say("the client offered rdma; staying on tcp: " + why);
      return Status::Ok();
    }
    muted_->store(false);
    *conn = std::move(rdma_);  // The tcp socket lives on as its liveness socket.
    Say("transport rdma (device " + device_name_ + "; the client's probe crossed it both ways)");
    return Status::Ok();
  }

 private:
  void Say(const std::string& line) const {
    if (log_) log_(LogLevel::kInfo, line);
  }

  int fd_;
  std::string device_;
  uint64_t session_id_;
  transport::Log log_;
  std::unique_ptr<Connection> rdma_;  // Connected by Answer, awaiting the verdict.
  std::string device_name_;
  std::shared_ptr<std::atomic<bool>> muted_;
};

}  // namespace

Status PrepareClientUpgrade(const transport::ClientOptions& options, int tcp_fd, bool forced, int read_timeout_ms,
                            std::unique_ptr<transport::ClientUpgrade>* out) {
  out->reset();
  auto say = [&](const std::string& line) {
    if (options.log) options.log(LogLevel::kInfo, line);
  };
  if (!options.rdma) {
    say("transport tcp with worker " + options.server + ": rdma is off (HIPR_RDMA=0)");
    return Status::Ok();
  }
  auto upgrade = std::make_unique<ClientUpgrade>(options, tcp_fd, forced);
  Status made = upgrade->Prepare(options, read_timeout_ms);
  if (made.ok()) {
    *out = std::move(upgrade);
    return Status::Ok();
  }
  const std::string device = options.rdma_device.empty() ? "" : " (HIPR_RDMA_DEVICE " + options.rdma_device + ")";
  if (forced) return LinkDown("HIPR_SERVER=rdma:// but this client cannot use rdma" + device + ": " + made.message());
  say("transport tcp with worker " + options.server + ": no usable rdma here" + device + ": " + made.message());
  return Status::Ok();
}

Status AcceptOffer(const std::string& device, int socket_fd, const std::vector<uint8_t>& offer,
                   std::function<void(const std::string&)> warn, std::unique_ptr<Connection>* conn,
                   std::vector<uint8_t>* answer, std::string* device_name, std::shared_ptr<std::atomic<bool>>* muted) {
  if (device == kDeviceOff) return Status(StatusCode::kNotSupported, "rdma is off (--rdma-device off)");
  if (socket_fd < 0) return Status(StatusCode::kNotSupported, "rdma only replaces plain tcp (not TLS or shm)");
  QpInfo peer;
  HIPR_RETURN_IF_ERROR(DecodeQpInfo(offer.data(), offer.size(), &peer));
  Options options;
  options.device = device;
  auto quiet = std::make_shared<std::atomic<bool>>(true);
  options.log = [quiet, warn = std::move(warn)](const std::string& line) {
    if (!quiet->load() && warn) warn(line);
  };
  std::unique_ptr<RdmaConnection> c;
  HIPR_RETURN_IF_ERROR(RdmaConnection::Create(options, &c));
  const int liveness = fcntl(socket_fd, F_DUPFD_CLOEXEC, 0);
  if (liveness < 0) return LinkDown(std::string("rdma: cannot keep the tcp socket: ") + std::strerror(errno));
  HIPR_RETURN_IF_ERROR(c->Connect(peer, liveness));
  answer->resize(kQpInfoBytes);
  EncodeQpInfo(c->local_info(), answer->data());
  *device_name = c->device_name();
  *conn = std::move(c);
  *muted = std::move(quiet);
  return Status::Ok();
}

Status AwaitVerdict(Connection& tcp, Connection& rdma, uint64_t session_id, bool* commit, std::string* why,
                    int timeout_ms) {
  *commit = false;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  // The probe, over the queue pair. A client whose probe failed sends its
  // verdict over tcp meanwhile, which ends this wait (the connection takes
  // bytes on its set-up socket for an error): then no probe came.
  Status probe = rdma.WaitReadable(MsLeft(deadline));
  if (!probe.ok()) {
    const bool verdict_waiting = tcp.WaitReadable(0).ok();
    probe = LinkDown(verdict_waiting ? "no probe arrived over the queue pair"
                                     : "no probe arrived over the queue pair (" + probe.message() + ")");
  } else {
    // Bytes came over the queue pair: from here on a fault is the client's.
    wire::FrameHeader h;
    msg::RdmaProbe p;
    HIPR_RETURN_IF_ERROR(ReadSmallFrame(rdma, wire::Op::kRdmaProbe, "rdma probe", &h, &p));
    if (p.session_id != session_id || p.nonce.size() != msg::kRdmaProbeNonceBytes)
      return ProtocolError("the client's rdma probe names session " + std::to_string(p.session_id) +
                           " or has a nonce of " + std::to_string(p.nonce.size()) + " bytes");
    codec::BodyWriter w;
    w.Encode(p);
    probe = SendFrame(rdma, wire::ReplyOp(wire::Op::kRdmaProbe), h.request_id, w);
  }
  // The verdict, over tcp, whatever the probe did here.
  Status st = tcp.WaitReadable(MsLeft(deadline));
  if (st.code() == StatusCode::kTimeout)
    return ProtocolError("no rdma verdict from the client within " + std::to_string(timeout_ms) +
                         " ms of the hello's reply");
  HIPR_RETURN_IF_ERROR(st);
  wire::FrameHeader h;
  msg::RdmaVerdict verdict;
  HIPR_RETURN_IF_ERROR(ReadSmallFrame(tcp, wire::Op::kRdmaVerdict, "rdma verdict", &h, &verdict));
  if (verdict.commit) {
    if (!probe.ok()) return ProtocolError("the client switched to rdma, but here: " + probe.message());
    *commit = true;
    return Status::Ok();
  }
  *why = "the client's probe over the queue pair failed: " +
         (verdict.reason.empty() ? std::string("(no reason given)") : Printable(verdict.reason)) +
         (probe.ok() ? "" : "; here: " + probe.message());
  return Status::Ok();
}

std::unique_ptr<transport::ServerUpgrade> MakeServerUpgrade(int fd, std::string device, uint64_t session_id,
                                                            transport::Log log) {
  return std::make_unique<ServerUpgrade>(fd, std::move(device), session_id, std::move(log));
}

}  // namespace hipr::rdma
