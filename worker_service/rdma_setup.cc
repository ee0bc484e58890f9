#include "worker_service/rdma_setup.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/rdma/rdma_connection.h"

namespace hipr::worker {
namespace {

using Clock = std::chrono::steady_clock;

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

}  // namespace

std::string DescribeRdma(const WorkerConfig& config, bool* usable) {
  *usable = false;
  if (config.rdma_device == kRdmaOff) return "rdma off (--rdma-device off): clients stay on tcp";
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    return errno == ENOSYS ? "no RDMA support in this kernel: clients stay on tcp"
                           : std::string("cannot list RDMA devices (") + std::strerror(errno) +
                                 "): clients stay on tcp";
  }
  std::string names;
  bool found = false;
  for (int i = 0; i < n; ++i) {
    const std::string name = ibv_get_device_name(list[i]);
    names += (i == 0 ? "" : ", ") + name;
    if (config.rdma_device.empty() || config.rdma_device == name) found = true;
  }
  const std::string first = n > 0 ? ibv_get_device_name(list[0]) : "";
  ibv_free_device_list(list);
  if (n == 0) return "no RDMA device: clients stay on tcp";
  if (!found)
    return "RDMA devices " + names + ", but no --rdma-device " + config.rdma_device + ": clients stay on tcp";
  *usable = true;
  return "RDMA devices " + names + "; sessions offered rdma use " +
         (config.rdma_device.empty() ? first + " (the first)" : config.rdma_device);
}

Status AcceptRdma(const WorkerConfig& config, int socket_fd, const std::vector<uint8_t>& offer,
                  std::unique_ptr<Connection>* conn, std::vector<uint8_t>* answer, std::string* device,
                  std::shared_ptr<std::atomic<bool>>* muted) {
  if (config.rdma_device == kRdmaOff) return Status(StatusCode::kNotSupported, "rdma is off (--rdma-device off)");
  if (socket_fd < 0) return Status(StatusCode::kNotSupported, "rdma only replaces plain tcp (not TLS or shm)");
  rdma::QpInfo peer;
  HIPR_RETURN_IF_ERROR(rdma::DecodeQpInfo(offer.data(), offer.size(), &peer));
  rdma::Options options;
  options.device = config.rdma_device;
  auto quiet = std::make_shared<std::atomic<bool>>(true);
  options.log = [quiet](const std::string& line) {
    if (!quiet->load()) spdlog::warn("{}", line);
  };
  std::unique_ptr<rdma::RdmaConnection> c;
  HIPR_RETURN_IF_ERROR(rdma::RdmaConnection::Create(options, &c));
  const int liveness = fcntl(socket_fd, F_DUPFD_CLOEXEC, 0);
  if (liveness < 0) return LinkDown(std::string("rdma: cannot keep the tcp socket: ") + std::strerror(errno));
  HIPR_RETURN_IF_ERROR(c->Connect(peer, liveness));
  answer->resize(rdma::kQpInfoBytes);
  rdma::EncodeQpInfo(c->local_info(), answer->data());
  *device = c->device_name();
  *conn = std::move(c);
  *muted = std::move(quiet);
  return Status::Ok();
}

Status AwaitRdmaVerdict(Connection& tcp, Connection& rdma, uint64_t session_id, bool* commit, std::string* why,
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
    if (!probe.ok())
      return ProtocolError("the client switched to rdma, but here: " + probe.message());
    *commit = true;
    return Status::Ok();
  }
  *why = "the client's probe over the queue pair failed: " +
         (verdict.reason.empty() ? std::string("(no reason given)") : Printable(verdict.reason)) +
         (probe.ok() ? "" : "; here: " + probe.message());
  return Status::Ok();
}

}  // namespace hipr::worker
