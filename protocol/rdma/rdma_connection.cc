#include "protocol/rdma/rdma_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "protocol/rdma/rdma_connection_internal.h"

namespace hipr::rdma {
namespace {

std::string WcStatusName(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_LOC_LEN_ERR: return "IBV_WC_LOC_LEN_ERR";
    case IBV_WC_LOC_QP_OP_ERR: return "IBV_WC_LOC_QP_OP_ERR";
    case IBV_WC_LOC_PROT_ERR: return "IBV_WC_LOC_PROT_ERR";
    case IBV_WC_WR_FLUSH_ERR: return "IBV_WC_WR_FLUSH_ERR";
    case IBV_WC_LOC_ACCESS_ERR: return "IBV_WC_LOC_ACCESS_ERR";
    case IBV_WC_REM_INV_REQ_ERR: return "IBV_WC_REM_INV_REQ_ERR";
    case IBV_WC_REM_ACCESS_ERR: return "IBV_WC_REM_ACCESS_ERR";
    case IBV_WC_REM_OP_ERR: return "IBV_WC_REM_OP_ERR";
    case IBV_WC_RETRY_EXC_ERR: return "IBV_WC_RETRY_EXC_ERR";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "IBV_WC_RNR_RETRY_EXC_ERR";
    case IBV_WC_FATAL_ERR: return "IBV_WC_FATAL_ERR";
    case IBV_WC_GENERAL_ERR: return "IBV_WC_GENERAL_ERR";
    default: return "IBV_WC status " + std::to_string(static_cast<int>(s));
  }
}

std::string WcText(const ibv_wc& wc) {
  return WcStatusName(wc.status) + " (" + ibv_wc_status_str(wc.status) + ")";
}

const char* WrName(WrKind k) {
  switch (k) {
    case kWrRecv: return "a receive";
    case kWrStaging: return "an RDMA WRITE";
    case kWrRead: return "an RDMA READ";
    default: return "a SEND";
  }
}

}  // namespace

RdmaConnection::RdmaConnection(const Options& options) : options_(options) {}

RdmaConnection::~RdmaConnection() {
  if (abandoned_.load()) {
    // A forked child's copy: the verbs objects and registered memory belong
    // to the parent's device context; leave them untouched.
    return;
  }
  if (connected_ && !shut_down_.load()) {
    // Let what was posted reach the peer before it sees us go.
    MutexLock lock(mu_);
    closing_ = true;
    (void)WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return sq_outstanding_ == 0; }, options_.linger_ms);
  }
  if (sock_ >= 0) close(sock_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (qp_ != nullptr) ibv_destroy_qp(qp_);
  send_mrs_.reset();
  recv_mrs_.reset();
  {
    MutexLock lock(mu_);
    for (auto& b : pull_blocks_) {
      ibv_dereg_mr(b->mr);
      munmap(b->mem, b->bytes);
    }
    pull_blocks_.clear();
  }
  for (ibv_mr* mr : {recv_mr_, slot_mr_, ring_mr_, staging_mr_})
    if (mr != nullptr) ibv_dereg_mr(mr);
  if (cq_ != nullptr) ibv_destroy_cq(cq_);
  if (channel_ != nullptr) ibv_destroy_comp_channel(channel_);
  if (pd_ != nullptr) ibv_dealloc_pd(pd_);
  if (ctx_ != nullptr) ibv_close_device(ctx_);
  if (recv_mem_ != nullptr) munmap(recv_mem_, recv_mem_bytes_);
  if (slot_mem_ != nullptr) munmap(slot_mem_, slot_mem_bytes_);
  if (ring_ != nullptr) munmap(ring_, local_.ring_bytes);
  if (staging_ != nullptr) munmap(staging_, staging_bytes_);
}

Status RdmaConnection::Create(const Options& options, std::unique_ptr<RdmaConnection>* out) {
  if (options.recv_buffers < 8 || options.recv_buffers > 4096 || options.buffer_bytes < 256 ||
      options.buffer_bytes > (1u << 20) || options.chunk_bytes == 0 || options.chunk_bytes > options.ring_bytes / 4 ||
      options.ring_bytes > (uint64_t{1} << 32) || options.staging_slots == 0 || options.bulk_min_bytes == 0 ||
      options.max_inline < sizeof(MsgHeader) || options.idle_pull_ms < 0)
    return InvalidArgument("rdma: inconsistent options (buffers, ring, chunk, staging or inline sizes)");
  std::unique_ptr<RdmaConnection> c(new RdmaConnection(options));
  HIPR_RETURN_IF_ERROR(c->Init());
  *out = std::move(c);
  return Status::Ok();
}

Status RdmaConnection::Init() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr)
    return Status(StatusCode::kNotSupported, errno == ENOSYS ? "rdma: this kernel has no RDMA support"
                                                             : ErrnoText("rdma: ibv_get_device_list", errno));
  ibv_device* dev = nullptr;
  for (int i = 0; i < n && dev == nullptr; ++i)
    if (options_.device.empty() || options_.device == ibv_get_device_name(list[i])) dev = list[i];
  if (dev != nullptr) ctx_ = ibv_open_device(dev);
  const int open_errno = errno;
  ibv_free_device_list(list);
  if (dev == nullptr)
    return Status(StatusCode::kNotSupported, options_.device.empty() ? "rdma: no RDMA device"
                                                                     : "rdma: no RDMA device " + options_.device);
  if (ctx_ == nullptr) return Status(StatusCode::kNotSupported, ErrnoText("rdma: ibv_open_device", open_errno));
  ibv_port_attr port{};
  if (ibv_query_port(ctx_, options_.port, &port) != 0 || port.state != IBV_PORT_ACTIVE)
    return Status(StatusCode::kNotSupported, "rdma: port " + std::to_string(options_.port) + " of " +
                                                 ibv_get_device_name(ctx_->device) + " is not active");
  ibv_gid gid{};
  if (ibv_query_gid(ctx_, options_.port, options_.gid_index, &gid) != 0)
    return Status(StatusCode::kNotSupported, "rdma: no GID " + std::to_string(options_.gid_index));
  // Non-blocking: we poll these descriptors and read what is there.
  for (int fd : {ctx_->async_fd}) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  pd_ = ibv_alloc_pd(ctx_);
  channel_ = pd_ != nullptr ? ibv_create_comp_channel(ctx_) : nullptr;
  if (channel_ == nullptr) return Status(StatusCode::kResourceExhausted, ErrnoText("rdma: protection domain", errno));
  fcntl(channel_->fd, F_SETFL, fcntl(channel_->fd, F_GETFL) | O_NONBLOCK);
  // READs we serve (the peer learns it from local_info()) and issue at once.
  ibv_device_attr dev_attr{};
  if (ibv_query_device(ctx_, &dev_attr) != 0)
    return Status(StatusCode::kNotSupported, "rdma: cannot query " + std::string(ibv_get_device_name(ctx_->device)));
  local_.rd_atomic = static_cast<uint8_t>(std::clamp(dev_attr.max_qp_rd_atom, 1, 16));
  rd_init_ = static_cast<uint8_t>(std::clamp(dev_attr.max_qp_init_rd_atom, 1, 16));
  // Two WRs per bulk chunk, staging, notices and READs: far fewer than this in flight.
  sq_depth_ = 256;
  send_slots_ = 32;
  cq_ = ibv_create_cq(ctx_, static_cast<int>(sq_depth_ + options_.recv_buffers + 16), this, channel_, 0);
  if (cq_ == nullptr) return Status(StatusCode::kResourceExhausted, ErrnoText("rdma: ibv_create_cq", errno));
  ibv_qp_init_attr init{};
  init.send_cq = cq_;
  init.recv_cq = cq_;
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = sq_depth_;
  init.cap.max_recv_wr = options_.recv_buffers;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.cap.max_inline_data = options_.max_inline;
  qp_ = ibv_create_qp(pd_, &init);
  if (qp_ == nullptr) return Status(StatusCode::kResourceExhausted, ErrnoText("rdma: ibv_create_qp", errno));
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = options_.port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (int rc = ibv_modify_qp(qp_, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
    return Status(StatusCode::kInternal, ErrnoText("rdma: queue pair to INIT", rc));

  recv_mem_bytes_ = size_t{options_.recv_buffers} * options_.buffer_bytes;
  slot_mem_bytes_ = size_t{send_slots_} * options_.buffer_bytes;
  staging_bytes_ = size_t{options_.staging_slots} * options_.chunk_bytes;
  recv_mem_ = static_cast<uint8_t*>(MapBytes(recv_mem_bytes_));
  slot_mem_ = static_cast<uint8_t*>(MapBytes(slot_mem_bytes_));
  ring_ = static_cast<uint8_t*>(MapBytes(options_.ring_bytes));
  staging_ = static_cast<uint8_t*>(MapBytes(staging_bytes_));
  if (recv_mem_ == nullptr || slot_mem_ == nullptr || ring_ == nullptr || staging_ == nullptr)
    return Status(StatusCode::kResourceExhausted, "rdma: cannot allocate the connection's buffers");
  local_.ring_bytes = options_.ring_bytes;  // (The destructor unmaps by it.)
  recv_mr_ = ibv_reg_mr(pd_, recv_mem_, recv_mem_bytes_, kLocalWrite);
  slot_mr_ = ibv_reg_mr(pd_, slot_mem_, slot_mem_bytes_, kLocalWrite);
  ring_mr_ = ibv_reg_mr(pd_, ring_, options_.ring_bytes, kRemoteWrite);
  staging_mr_ = ibv_reg_mr(pd_, staging_, staging_bytes_, kLocalWrite);
  if (recv_mr_ == nullptr || slot_mr_ == nullptr || ring_mr_ == nullptr || staging_mr_ == nullptr)
    return Status(StatusCode::kResourceExhausted, ErrnoText("rdma: ibv_reg_mr", errno));
  send_mrs_ = std::make_unique<MrCache>(pd_, kRemoteRead);
  recv_mrs_ = std::make_unique<MrCache>(pd_, kLocalWrite);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) return Status(StatusCode::kResourceExhausted, ErrnoText("rdma: eventfd", errno));
  {
    MutexLock lock(mu_);
    for (uint32_t i = 0; i < send_slots_; ++i) free_slots_.push_back(send_slots_ - 1 - i);
    for (uint32_t i = 0; i < options_.recv_buffers; ++i) {
      Repost(i);
      if (!error_.ok()) return error_;
    }
    owed_ = 0;  // The initial receives are the peer's initial credits.
  }
  std::random_device rd;
  local_.qpn = qp_->qp_num;
  local_.psn = rd() & 0xFFFFFF;
  std::memcpy(local_.gid, gid.raw, 16);
  local_.ring_addr = reinterpret_cast<uintptr_t>(ring_);
  local_.ring_rkey = ring_mr_->rkey;
  local_.recv_buffers = options_.recv_buffers;
  local_.buffer_bytes = options_.buffer_bytes;
  return Status::Ok();
}

Status RdmaConnection::Connect(const QpInfo& peer, int liveness_fd) {
  sock_ = liveness_fd;
  if (connected_) return Status(StatusCode::kFailedPrecondition, "rdma: already connected");
  if (peer.buffer_bytes < sizeof(MsgHeader) + 1 || peer.recv_buffers < 8 ||
      peer.ring_bytes < 4 * options_.chunk_bytes || peer.rd_atomic == 0)
    return ProtocolError("rdma: the peer's buffers are too small for this connection's chunks");
  peer_ = peer;
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.dest_qp_num = peer.qpn;
  a.rq_psn = peer.psn;
  a.max_dest_rd_atomic = local_.rd_atomic;
  a.min_rnr_timer = options_.min_rnr_timer;
  a.ah_attr.is_global = 1;
  std::memcpy(a.ah_attr.grh.dgid.raw, peer.gid, 16);
  a.ah_attr.grh.sgid_index = static_cast<uint8_t>(options_.gid_index);
  a.ah_attr.grh.hop_limit = 64;
  a.ah_attr.port_num = options_.port;
  if (int rc = ibv_modify_qp(qp_, &a,
                             IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                                 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
    return LinkDown(ErrnoText("rdma: queue pair to RTR", rc));
  a = ibv_qp_attr{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = local_.psn;
  a.timeout = options_.timeout;
  a.retry_cnt = options_.retry_cnt;
  a.rnr_retry = options_.rnr_retry;
  a.max_rd_atomic = std::min(rd_init_, peer.rd_atomic);
  if (int rc = ibv_modify_qp(qp_, &a,
                             IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                                 IBV_QP_MAX_QP_RD_ATOMIC))
    return LinkDown(ErrnoText("rdma: queue pair to RTS", rc));
  MutexLock lock(mu_);
  credits_ = peer.recv_buffers;
  peer_granted_ = peer.recv_buffers;
  granted_total_ = options_.recv_buffers;
  connected_ = true;
  return Status::Ok();
}

Status RdmaConnection::ConnectOverSocket(int fd, const Options& options, int timeout_ms,
                                         std::unique_ptr<RdmaConnection>* out) {
  std::unique_ptr<RdmaConnection> c;
  Status st = Create(options, &c);
  uint8_t mine[kQpInfoBytes];
  uint8_t theirs[kQpInfoBytes];
  if (st.ok()) {
    EncodeQpInfo(c->local_info(), mine);
    size_t sent = 0;
    while (st.ok() && sent < sizeof mine) {
      ssize_t k = send(fd, mine + sent, sizeof mine - sent, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) st = LinkDown(ErrnoText("rdma set-up: send", errno));
      else sent += static_cast<size_t>(k);
    }
  }
  const int64_t deadline = NowMs() + timeout_ms;
  size_t got = 0;
  while (st.ok() && got < sizeof theirs) {
    pollfd pfd{fd, POLLIN, 0};
    int rc = poll(&pfd, 1, static_cast<int>(std::max<int64_t>(0, deadline - NowMs())));
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) {
      st = Status(StatusCode::kTimeout, "rdma set-up: no queue-pair information from the peer in time");
      break;
    }
    ssize_t k = recv(fd, theirs + got, sizeof theirs - got, MSG_DONTWAIT);
    if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (k <= 0) st = LinkDown(k == 0 ? "rdma set-up: the peer closed the connection" : ErrnoText("rdma set-up: receive", errno));
    else got += static_cast<size_t>(k);
  }
  QpInfo peer;
  if (st.ok()) st = DecodeQpInfo(theirs, sizeof theirs, &peer);
  if (st.ok()) {
    st = c->Connect(peer, fd);  // Owns fd from here.
    fd = -1;
  }
  if (!st.ok()) {
    if (fd >= 0) close(fd);
    return st;
  }
  *out = std::move(c);
  return Status::Ok();
}

void RdmaConnection::Fail(Status st) {
  if (!error_.ok()) return;
  error_ = std::move(st);
  cv_.notify_all();
  if (closing_) return;
  const std::string line = error_.message() + " [" + PeerName() + "]";
  if (options_.log)
    options_.log(line);
  else
    std::fprintf(stderr, "hipr: %s\n", line.c_str());
}

Status RdmaConnection::ErrorStateReason(int wait_ms) {
  ibv_async_event ev;
  Status st;
  // The event that says why may come after the flushed completions (verbs
  // does not order the two): give it a moment.
  pollfd pfd{ctx_->async_fd, POLLIN, 0};
  (void)poll(&pfd, 1, wait_ms);
  while (ibv_get_async_event(ctx_, &ev) == 0) {
    const ibv_event_type type = ev.event_type;
    ibv_ack_async_event(&ev);
    if (type == IBV_EVENT_QP_ACCESS_ERR)
      st = ProtocolError(
          "rdma: the peer's RDMA access to our memory broke its registration (wrong key or out of bounds; "
          "IBV_EVENT_QP_ACCESS_ERR): the queue pair is in the error state");
    else if (st.ok() && (type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR))
      st = LinkDown(std::string("rdma: queue pair error (") + ibv_event_type_str(type) + ")");
  }
  return st;
}

void RdmaConnection::Repost(uint32_t buffer) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(Buffer(buffer)), options_.buffer_bytes, recv_mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = WrId(kWrRecv, buffer);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int rc = ibv_post_recv(qp_, &wr, &bad)) {
    Fail(LinkDown(ErrnoText("rdma: ibv_post_recv", rc)));
    return;
  }
  ++owed_;
}

bool RdmaConnection::Progress() {
  ibv_wc wc[32];
  bool any = false;
  for (;;) {
    const int n = ibv_poll_cq(cq_, 32, wc);
    if (n < 0) {
      Fail(LinkDown("rdma: ibv_poll_cq failed (completion queue overrun)"));
      return true;
    }
    for (int i = 0; i < n; ++i) {
      const WrKind kind = KindOf(wc[i].wr_id);
      if (wc[i].status != IBV_WC_SUCCESS) {
        if (!error_.ok()) continue;
        // A flush has its reason elsewhere; a failed request carries its own.
        Status reason = ErrorStateReason(wc[i].status == IBV_WC_WR_FLUSH_ERR ? 100 : 0);
        if (kind == kWrRead && (wc[i].status == IBV_WC_REM_ACCESS_ERR || wc[i].status == IBV_WC_REM_INV_REQ_ERR))
          Fail(ProtocolError("rdma: the peer offered bytes its registration does not let us read (wrong key or out "
                             "of bounds): an RDMA READ failed: " +
                             WcText(wc[i])));
        else if (!reason.ok())
          Fail(std::move(reason));
        else if (wc[i].status == IBV_WC_WR_FLUSH_ERR)
          Fail(LinkDown("rdma: " + std::string(WrName(kind)) + " was flushed (" + WcText(wc[i]) +
                        "): the queue pair is in the error state"));
        else
          Fail(LinkDown("rdma: " + std::string(WrName(kind)) + " failed: " + WcText(wc[i])));
        continue;
      }
      switch (kind) {
        case kWrRecv:
          HandleMessage(ValueOf(wc[i].wr_id), wc[i].byte_len);
          break;
        case kWrSlot:
          free_slots_.push_back(ValueOf(wc[i].wr_id));
          --sq_outstanding_;
          break;
        case kWrInline:
          --sq_outstanding_;
          break;
        case kWrStaging:
          ++staging_tail_;
          --sq_outstanding_;
          break;
        case kWrRead:
          ++reads_done_;
          --sq_outstanding_;
          while (!offer_ends_.empty() && offer_ends_.front() <= reads_done_) {
            offer_ends_.pop_front();
            ++taken_;
          }
          break;
      }
    }
    if (n > 0) any = true;
    if (n < 32) break;
  }
  if (any) {
    if (error_.ok()) MaybeGrant();
    cv_.notify_all();
  }
  return any;
}

void RdmaConnection::HandleMessage(uint32_t buffer, uint32_t byte_len) {
  if (buffer >= options_.recv_buffers || byte_len < sizeof(MsgHeader) || byte_len > options_.buffer_bytes) {
    Fail(ProtocolError("rdma: a message of " + std::to_string(byte_len) + " bytes is not a stream message"));
    return;
  }
  MsgHeader h;
  std::memcpy(&h, Buffer(buffer), sizeof h);
  // The grant's count is cumulative mod 2^32: it is at most a few thousand
  // away from the count we hold (older when a record overtook it).
  const int32_t ahead = static_cast<int32_t>(h.granted - static_cast<uint32_t>(peer_granted_));
  const uint64_t granted = ahead > 0 ? peer_granted_ + static_cast<uint64_t>(ahead) : peer_granted_;
  if (!ApplyGrant(granted, h.ring_tail, h.taken)) return;
  ++received_total_;
  const uint64_t ring = local_.ring_bytes;
  switch (h.type) {
    case kInline:
      if (byte_len == sizeof(MsgHeader)) {
        Repost(buffer);
      } else {
        // The buffer is held until the bytes are read, then reposted.
        inbox_.push_back(MakeItem(Item::kBuffer, buffer, 0, byte_len - sizeof(MsgHeader)));
      }
      break;
    case kRing:
      if (h.pos != ring_expected_ || h.len == 0 || h.len > ring || h.pos % ring + h.len > ring ||
          h.pos + h.len - ring_tail_ > ring) {
        Fail(ProtocolError("rdma: the peer named bytes outside our receive ring"));
        return;
      }
      ring_expected_ += h.len;
      inbox_.push_back(MakeItem(Item::kRing, 0, h.pos, h.len));
      Repost(buffer);
      break;
    case kOffer:
      // In order, never empty, no longer than the peer's chunks (at most a
      // quarter of its ring), a range that exists, and not too many.
      if (h.pos != offers_received_ || h.len == 0 || h.len > peer_.ring_bytes / 4 || h.addr + h.len < h.addr ||
          offers_received_ - taken_ >= kMaxOffers) {
        Fail(ProtocolError("rdma: the peer's offer breaks the stream's rules (out of order, empty, too long or too "
                           "many outstanding)"));
        return;
      }
      ++offers_received_;
      {
        Item it = MakeItem(Item::kOffer, 0, h.addr, h.len);
        it.rkey = h.rkey;
        it.since_ms = NowMs();
        inbox_.push_back(it);
      }
      Repost(buffer);
      break;
    case kCredit:
      Repost(buffer);
      break;
    default:
      Fail(ProtocolError("rdma: unknown message type " + std::to_string(h.type)));
  }
}

bool RdmaConnection::ApplyGrant(uint64_t granted, uint64_t ring_tail, uint64_t taken) {
  // Never more receives than the peer has beyond the messages we sent, a
  // ring tail past what we wrote, or more offers taken than we made.
  if (granted > messages_sent_ + peer_.recv_buffers || ring_tail > peer_ring_head_ || taken > offered_) {
    Fail(ProtocolError("rdma: the peer granted credits, ring space or taken offers it cannot have"));
    return false;
  }
  // Messages and records take different paths: an older grant changes nothing.
  if (granted > peer_granted_) {
    credits_ += static_cast<uint32_t>(granted - peer_granted_);
    peer_granted_ = granted;
  }
  peer_ring_tail_ = std::max(peer_ring_tail_, ring_tail);
  peer_taken_ = std::max(peer_taken_, taken);
  cv_.notify_all();
  return true;
}

void RdmaConnection::GrantSent() {
  granted_total_ += owed_;
  owed_ = 0;
  ring_reported_ = ring_tail_;
  taken_reported_ = taken_;
}

void RdmaConnection::MaybeGrant() {
  if (!connected_) return;
  const uint32_t threshold = std::max<uint32_t>(2, options_.recv_buffers / 4);
  // A peer about to run dry gets what we have once it is worth a message
  // (not for a lone grant: two starved sides would trade grants for ever).
  const bool peer_starved = granted_total_ - received_total_ <= 1 && owed_ >= 2;
  if (owed_ < threshold && ring_tail_ - ring_reported_ < local_.ring_bytes / 4 && taken_ == taken_reported_ &&
      !peer_starved)
    return;
  if (credits_ == 0 || sq_outstanding_ >= sq_depth_) {
    // No SEND can carry it now, and this thread may be about to leave.
    SendGrantRecord();
    return;
  }
  if (PostMessage(kCredit, 0, 0, -1, 0, nullptr).ok()) ++stats_.credit_messages;
}

void RdmaConnection::SendGrantRecord() {
  if (sock_ < 0 || peer_gone_ || !error_.ok()) return;
  GrantRecord r{};
  r.marker = kGrantRecordMarker;
  r.granted = granted_total_ + owed_;
  r.ring_tail = ring_tail_;
  r.taken = taken_;
  const auto* p = reinterpret_cast<const uint8_t*>(&r);
  size_t sent = 0;
  const int64_t deadline = NowMs() + 1000;
  while (sent < sizeof r) {
    const ssize_t n = send(sock_, p + sent, sizeof r - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && sent == 0) return;  // The peer reads none: the next due grant tries again.
    if (n < 0 && errno == EAGAIN && NowMs() < deadline) {
      // Half a record is out: the rest must follow it.
      pollfd pfd{sock_, POLLOUT, 0};
      (void)poll(&pfd, 1, 10);
      continue;
    }
    // The peer is gone (its end shows on the socket) or stuck past reason.
    if (sent > 0) Fail(LinkDown("rdma: cannot send a grant on the set-up connection"));
    return;
  }
  GrantSent();
  ++stats_.socket_grants;
}

Status RdmaConnection::PostMessage(uint8_t type, uint64_t pos, uint64_t len, int slot, uint32_t body_len,
                                   ibv_send_wr* write, uint64_t addr, uint32_t rkey) {
  MsgHeader h{};
  h.type = type;
  h.granted = static_cast<uint32_t>(granted_total_ + owed_);
  h.ring_tail = ring_tail_;
  h.taken = taken_;
  h.pos = pos;
  h.addr = addr;
  h.len = static_cast<uint32_t>(len);
  h.rkey = rkey;
  const uint32_t total = static_cast<uint32_t>(sizeof h) + body_len;
  ibv_sge sge{};
  ibv_send_wr wr{};
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  uint8_t small[sizeof(MsgHeader)];
  if (slot >= 0) {
    uint8_t* base = Slot(static_cast<uint32_t>(slot));
    std::memcpy(base, &h, sizeof h);
    sge = {reinterpret_cast<uintptr_t>(base), total, slot_mr_->lkey};
    if (total <= options_.max_inline) {
      wr.send_flags |= IBV_SEND_INLINE;
      wr.wr_id = WrId(kWrInline, 0);
    } else {
      wr.wr_id = WrId(kWrSlot, static_cast<uint32_t>(slot));
    }
  } else {
    std::memcpy(small, &h, sizeof h);
    sge = {reinterpret_cast<uintptr_t>(small), total, 0};
    wr.send_flags |= IBV_SEND_INLINE;
    wr.wr_id = WrId(kWrInline, 0);
  }
  ibv_send_wr* first = &wr;
  if (write != nullptr) {
    write->next = &wr;
    first = write;
  }
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_, first, &bad)) {
    Status st = LinkDown(ErrnoText("rdma: ibv_post_send", rc));
    Fail(st);
    return st;
  }
  if (slot >= 0 && (wr.send_flags & IBV_SEND_INLINE)) free_slots_.push_back(static_cast<uint32_t>(slot));
  sq_outstanding_ += write != nullptr ? 2 : 1;
  --credits_;
  ++messages_sent_;
  GrantSent();
  ++stats_.messages;
  return Status::Ok();
}

void RdmaConnection::CheckPeerSocket() {
  for (;;) {
    if (record_have_ == 0) {
      // Only grant records are taken off the socket: anything else (the
      // client's verdict while the worker waits for the probe) stays there
      // for whoever reads the socket next.
      uint8_t first;
      const ssize_t n = recv(sock_, &first, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
      if (n <= 0) {
        // Whatever it sent before it went is in our CQ already (its sends
        // had completed), so the next Progress() still delivers it.
        peer_gone_ = true;
        return;
      }
      if (first != kGrantRecordMarker) {
        Fail(ProtocolError("rdma: unexpected bytes on the set-up connection"));
        return;
      }
    }
    const ssize_t n = recv(sock_, record_in_ + record_have_, sizeof(GrantRecord) - record_have_, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) {
      peer_gone_ = true;
      return;
    }
    record_have_ += static_cast<size_t>(n);
    if (record_have_ < sizeof(GrantRecord)) continue;
    record_have_ = 0;
    GrantRecord r;
    std::memcpy(&r, record_in_, sizeof r);
    static constexpr uint8_t kZero[sizeof r.reserved] = {};
    if (std::memcmp(r.reserved, kZero, sizeof kZero) != 0) {
      Fail(ProtocolError("rdma: a malformed grant record on the set-up connection"));
      return;
    }
    if (!ApplyGrant(r.granted, r.ring_tail, r.taken)) return;
    // What the grant allows may let us grant in turn.
    MaybeGrant();
  }
}

Status RdmaConnection::SendV(const iovec* iov, int count) { return SendImpl(iov, count, false); }

Status RdmaConnection::SendVZeroCopy(const iovec* iov, int count) { return SendImpl(iov, count, true); }

Status RdmaConnection::SendImpl(const iovec* iov, int count, bool zero_copy) {
  if (shut_down_.load()) return LinkDown("connection shut down");
  MutexLock lock(mu_);
  if (!connected_) return Status(StatusCode::kFailedPrecondition, "rdma: not connected");
  if (!error_.ok()) return error_;
  // Offered memory stays registered until the peer has taken it.
  std::vector<ibv_mr*> held;
  struct Unhold {
    RdmaConnection* c;
    std::vector<ibv_mr*>& mrs;
    ~Unhold() HIPR_NO_THREAD_SAFETY_ANALYSIS {
      // Failed with offers untaken: the caller may free that memory now.
      if (!mrs.empty() && c->offered_ > c->peer_taken_) c->StopQp();
      for (ibv_mr* mr : mrs) c->send_mrs_->Release(mr);
    }
  } unhold{this, held};
  const uint32_t room = options_.buffer_bytes - static_cast<uint32_t>(sizeof(MsgHeader));
  for (int i = 0; i < count; ++i) {
    const uint8_t* src = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    if (left >= options_.bulk_min_bytes) {
      HIPR_RETURN_IF_ERROR(FlushSmall(lock));
      ibv_mr* mr = nullptr;
      if (zero_copy && send_mrs_->Hold(src, left, &mr).ok()) {
        held.push_back(mr);
        HIPR_RETURN_IF_ERROR(OfferBulk(lock, src, left, mr));
      } else {
        HIPR_RETURN_IF_ERROR(WriteBulk(lock, src, left));  // Staged: not registrable.
      }
      continue;
    }
    while (left > 0) {
      if (fill_slot_ < 0) {
        HIPR_RETURN_IF_ERROR(WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return !free_slots_.empty(); }, -1));
        fill_slot_ = static_cast<int>(free_slots_.back());
        free_slots_.pop_back();
        fill_bytes_ = 0;
      }
      const size_t n = std::min<size_t>(left, room - fill_bytes_);
      std::memcpy(Slot(static_cast<uint32_t>(fill_slot_)) + sizeof(MsgHeader) + fill_bytes_, src, n);
      fill_bytes_ += static_cast<uint32_t>(n);
      src += n;
      left -= n;
      if (fill_bytes_ == room) HIPR_RETURN_IF_ERROR(FlushSmall(lock));
    }
  }
  HIPR_RETURN_IF_ERROR(FlushSmall(lock));
  if (!held.empty()) {
    // The caller may free its bytes once the peer has read every chunk.
    const uint64_t target = offered_;
    HIPR_RETURN_IF_ERROR(WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return peer_taken_ >= target; }, -1));
  }
  return Status::Ok();
}

Status RdmaConnection::FlushSmall(MutexLock& lock) {
  if (fill_slot_ < 0 || fill_bytes_ == 0) return Status::Ok();
  HIPR_RETURN_IF_ERROR(WaitFor(
      lock, [&]() HIPR_REQUIRES(mu_) { return credits_ >= 2 && sq_outstanding_ + 1 <= sq_depth_; }, -1));
  const int slot = fill_slot_;
  const uint32_t body = fill_bytes_;
  fill_slot_ = -1;
  fill_bytes_ = 0;
  Status st = PostMessage(kInline, 0, 0, slot, body, nullptr);
  if (!st.ok()) free_slots_.push_back(static_cast<uint32_t>(slot));
  return st;
}

Status RdmaConnection::WriteBulk(MutexLock& lock, const uint8_t* src, size_t len) {
  const uint64_t ring = peer_.ring_bytes;
  while (len > 0) {
    const uint64_t off = peer_ring_head_ % ring;
    const size_t n = static_cast<size_t>(std::min<uint64_t>({len, options_.chunk_bytes, ring - off}));
    HIPR_RETURN_IF_ERROR(WaitFor(
        lock, [&]() HIPR_REQUIRES(mu_) { return staging_head_ - staging_tail_ < options_.staging_slots; }, -1));
    uint8_t* dst = staging_ + (staging_head_ % options_.staging_slots) * options_.chunk_bytes;
    ++staging_head_;
    // Only this sender touches the slot it took; copy without the lock.
    mu_.unlock();  // (The scoped lock is held again before it ends.)
    std::memcpy(dst, src, n);
    mu_.lock();
    stats_.bulk_bytes_copied_on_send += n;
    ibv_sge sge{reinterpret_cast<uintptr_t>(dst), static_cast<uint32_t>(n), staging_mr_->lkey};
    ibv_send_wr write{};
    write.wr_id = WrId(kWrStaging, 0);
    Status st = WaitFor(
        lock,
        [&]() HIPR_REQUIRES(mu_) {
          return credits_ >= 2 && sq_outstanding_ + 2 <= sq_depth_ && ring - (peer_ring_head_ - peer_ring_tail_) >= n;
        },
        -1);
    if (!st.ok()) {
      --staging_head_;
      return st;
    }
    write.sg_list = &sge;
    write.num_sge = 1;
    write.opcode = IBV_WR_RDMA_WRITE;
    write.send_flags = IBV_SEND_SIGNALED;
    write.wr.rdma.remote_addr = peer_.ring_addr + off;
    write.wr.rdma.rkey = peer_.ring_rkey;
    HIPR_RETURN_IF_ERROR(PostMessage(kRing, peer_ring_head_, n, -1, 0, &write));
    peer_ring_head_ += n;
    ++stats_.writes;
    stats_.bulk_bytes += n;
    src += n;
    len -= n;
  }
  return Status::Ok();
}

Status RdmaConnection::OfferBulk(MutexLock& lock, const uint8_t* src, size_t len, ibv_mr* mr) {
  while (len > 0) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(len, options_.chunk_bytes));
    HIPR_RETURN_IF_ERROR(WaitFor(
        lock,
        [&]() HIPR_REQUIRES(mu_) {
          return credits_ >= 2 && sq_outstanding_ + 1 <= sq_depth_ && offered_ - peer_taken_ < kOfferWindow;
        },
        -1));
    HIPR_RETURN_IF_ERROR(PostMessage(kOffer, offered_, n, -1, 0, nullptr, reinterpret_cast<uintptr_t>(src), mr->rkey));
    ++offered_;
    ++stats_.offers;
    stats_.bulk_bytes_offered += n;
    src += n;
    len -= n;
  }
  return Status::Ok();
}

Status RdmaConnection::SendRawOffer(uint64_t addr, uint32_t rkey, uint32_t len) {
  MutexLock lock(mu_);
  HIPR_RETURN_IF_ERROR(WaitFor(
      lock, [&]() HIPR_REQUIRES(mu_) { return credits_ >= 2 && sq_outstanding_ + 1 <= sq_depth_; }, -1));
  HIPR_RETURN_IF_ERROR(PostMessage(kOffer, offered_, len, -1, 0, nullptr, addr, rkey));
  ++offered_;
  return Status::Ok();
}

void RdmaConnection::Shutdown() {
  if (shut_down_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof one);
  }
  // The peer sees the set-up connection end, as it would a tcp shutdown.
  if (sock_ >= 0) shutdown(sock_, SHUT_RDWR);
  MutexLock lock(mu_);
  cv_.notify_all();
}

void RdmaConnection::Abandon() {
  shut_down_.store(true);
  abandoned_.store(true);
  if (sock_ >= 0) close(sock_);
  sock_ = -1;
  if (wake_fd_ >= 0) close(wake_fd_);
  wake_fd_ = -1;
}

std::string RdmaConnection::PeerName() const {
  std::string where = "?";
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (sock_ >= 0 && getpeername(sock_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
    char host[INET6_ADDRSTRLEN] = "?";
    if (ss.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
      where = std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
    } else if (ss.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
      where = "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
    } else {
      where = "local";
    }
  }
  return "rdma:" + where + " qp " + std::to_string(peer_.qpn);
}

bool RdmaConnection::PeerIsLocal() const {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (sock_ < 0 || getpeername(sock_, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return false;
  if (ss.ss_family == AF_INET) return (ntohl(reinterpret_cast<const sockaddr_in*>(&ss)->sin_addr.s_addr) >> 24) == 127;
  if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr) || (IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127);
  }
  return true;
}

RdmaConnection::Stats RdmaConnection::stats() const {
  MutexLock lock(mu_);
  return stats_;
}

std::string RdmaConnection::BulkSummary() const {
  const Stats s = stats();
  return "rdma bulk: sent " + std::to_string(s.bulk_bytes) + " bytes by WRITE (" +
         std::to_string(s.bulk_bytes_copied_on_send) + " of them staged by a copy) and offered " +
         std::to_string(s.bulk_bytes_offered) + " for the peer to READ; read " + std::to_string(s.bulk_bytes_read) +
         " bytes by READ (" + std::to_string(s.bulk_bytes_read - s.bulk_bytes_pulled) + " straight into place, " +
         std::to_string(s.bulk_bytes_pulled) + " through the pull buffer); copied " +
         std::to_string(s.bytes_copied_on_receive) + " received bytes out of this side's buffers (small frames included)";
}

}  // namespace hipr::rdma
