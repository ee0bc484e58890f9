#include "protocol/shm/shm_connection.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/wire.h"

namespace hipr::shm {
namespace {

constexpr uint32_t kSegmentMagic = 0x48505348;  // "HSPH"
// 2: each side's last CPU in the header. 3: host segment ranges are
// registered (kHostRegister) before copies may name them.
constexpr uint32_t kLayoutVersion = 3;
constexpr uint64_t kHeaderBytes = 4096;
// A sender publishes at least this often (and at least four times per ring),
// so a large send is consumed while it is still being written (the two
// copies overlap on two cores).
constexpr size_t kPublishBytes = 256u << 10;
size_t PublishBytes(uint64_t ring_bytes) { return static_cast<size_t>(std::min<uint64_t>(kPublishBytes, ring_bytes / 4)); }
constexpr int64_t kMinSpinNs = 2000;
// The set-up frame carries the segment, the four doorbells and the host
// segment.
constexpr int kSetupFds = 6;

struct SegmentHeader {
  uint32_t magic;
  uint32_t version;
  uint64_t ring_bytes;
  alignas(64) RingControl rings[2];
  // The CPU each side (worker 0, client 1) last ran on when it waited or
  // published, or -1: a waiter whose peer shares its CPU yields instead of
  // spinning, since its spin would only delay the peer it waits for.
  alignas(64) std::atomic<int32_t> cpu[2];
};
static_assert(sizeof(SegmentHeader) <= kHeaderBytes);

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// sched_getcpu reads the kernel's rseq area (glibc 2.35+): no system call.
inline int32_t ThisCpu() { return sched_getcpu(); }

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Sends a whole frame with `fds` attached to its first byte.
Status SendWithFds(int sock, const std::vector<uint8_t>& frame, const int* fds, int nfds) {
  iovec iov{const_cast<uint8_t*>(frame.data()), frame.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kSetupFds)];
  if (nfds > kSetupFds) return InvalidArgument("too many descriptors");
  mh.msg_control = control;
  mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
  std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
  size_t sent = 0;
  while (sent < frame.size()) {
    ssize_t n = sendmsg(sock, &mh, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return LinkDown(ErrnoText("shm set-up: send"));
    sent += static_cast<size_t>(n);
    iov.iov_base = const_cast<uint8_t*>(frame.data()) + sent;
    iov.iov_len = frame.size() - sent;
    mh.msg_control = nullptr;  // The descriptors went with the first byte.
    mh.msg_controllen = 0;
  }
  return Status::Ok();
}

// Reads exactly `len` bytes within the deadline, collecting any descriptors
// that come along (closing extras beyond `max_fds`).
Status RecvWithFds(int sock, uint8_t* buf, size_t len, int64_t deadline_ns, std::vector<int>* fds,
                   size_t max_fds) {
  size_t got = 0;
  while (got < len) {
    int left_ms = static_cast<int>(std::max<int64_t>(0, (deadline_ns - NowNs()) / 1000000));
    pollfd pfd{sock, POLLIN, 0};
    int rc = poll(&pfd, 1, left_ms);
    if (rc < 0 && errno == EINTR) continue;
    if (rc == 0) return Status(StatusCode::kTimeout, "no shm set-up from the worker in time");
    if (rc < 0) return LinkDown(ErrnoText("shm set-up: poll"));
    iovec iov{buf + got, len - got};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n < 0) return LinkDown(ErrnoText("shm set-up: receive"));
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        if (fds->size() < max_fds)
          fds->push_back(fd);
        else
          close(fd);
      }
    }
    if (n == 0) return LinkDown("the worker closed the connection during the shm set-up");
    got += static_cast<size_t>(n);
  }
  return Status::Ok();
}

}  // namespace

ShmConnection::ShmConnection(Side side, int sock, const Options& options)
    : side_(side), sock_(sock), options_(options) {
  tx_spin_ns_ = rx_spin_ns_ = int64_t{options_.spin_us} * 1000;
}

ShmConnection::~ShmConnection() {
  if (base_ != nullptr) munmap(base_, map_bytes_);
  if (host_base_ != nullptr) munmap(host_base_, host_bytes_);
  for (int fd : bells_)
    if (fd >= 0) close(fd);
  if (sock_ >= 0) close(sock_);
}

RingControl* ShmConnection::control(int ring) const {
  return &reinterpret_cast<SegmentHeader*>(base_)->rings[ring];
}

Status ShmConnection::Map(int memfd, uint64_t ring_bytes, bool create) {
  map_bytes_ = kHeaderBytes + 2 * ring_bytes;
  void* p = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (p == MAP_FAILED) return Status(StatusCode::kResourceExhausted, ErrnoText("shm: mmap"));
  base_ = static_cast<uint8_t*>(p);
  ring_bytes_ = ring_bytes;
  auto* header = reinterpret_cast<SegmentHeader*>(base_);
  if (create) {
    header->magic = kSegmentMagic;
    header->version = kLayoutVersion;
    header->ring_bytes = ring_bytes;
    for (auto& c : header->cpu) c.store(-1);
    for (RingControl& r : header->rings) {
      r.head.store(0);
      r.tail.store(0);
      r.consumer_waiting.store(0);
      r.producer_waiting.store(0);
    }
  } else if (header->magic != kSegmentMagic || header->version != kLayoutVersion ||
             header->ring_bytes != ring_bytes) {
    return ProtocolError("the shm segment's header does not match its set-up frame");
  }
  uint8_t* ring0 = base_ + kHeaderBytes;
  uint8_t* ring1 = ring0 + ring_bytes;
  if (side_ == kClient) {
    tx_ = &header->rings[0];
    rx_ = &header->rings[1];
    tx_data_ = ring0;
    rx_data_ = ring1;
    tx_data_bell_ = bells_[kDataBell0];
    tx_space_bell_ = bells_[kSpaceBell0];
    rx_data_bell_ = bells_[kDataBell1];
    rx_space_bell_ = bells_[kSpaceBell1];
  } else {
    tx_ = &header->rings[1];
    rx_ = &header->rings[0];
    tx_data_ = ring1;
    rx_data_ = ring0;
    tx_data_bell_ = bells_[kDataBell1];
    tx_space_bell_ = bells_[kSpaceBell1];
    rx_data_bell_ = bells_[kDataBell0];
    rx_space_bell_ = bells_[kSpaceBell0];
  }
  my_cpu_ = &header->cpu[side_];
  peer_cpu_ = &header->cpu[side_ == kClient ? kWorker : kClient];
  tx_head_ = tx_->head.load(std::memory_order_acquire);
  rx_tail_ = rx_->tail.load(std::memory_order_acquire);
  return Status::Ok();
}

Status ShmConnection::MapHost(int memfd, uint64_t bytes) {
  if (bytes == 0) return Status::Ok();
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, memfd, 0);
  if (p == MAP_FAILED) return Status(StatusCode::kResourceExhausted, ErrnoText("shm: mmap of the host segment"));
  host_base_ = static_cast<uint8_t*>(p);
  host_bytes_ = bytes;
  return Status::Ok();
}

namespace {

// A sealed memfd of `bytes`: the peer can neither shrink it under our
// mapping (SIGBUS) nor grow it.
Status SealedMemfd(const char* name, uint64_t bytes, int* out) {
  int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Status(StatusCode::kResourceExhausted, ErrnoText("shm: memfd_create"));
  Status st;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    st = Status(StatusCode::kResourceExhausted, ErrnoText("shm: ftruncate"));
  if (st.ok() && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
    st = Status(StatusCode::kInternal, ErrnoText("shm: seal"));
  if (!st.ok()) {
    close(fd);
    return st;
  }
  *out = fd;
  return Status::Ok();
}

}  // namespace

Status ShmConnection::Accept(int fd, const Options& options, std::unique_ptr<ShmConnection>* out) {
  std::unique_ptr<ShmConnection> c(new ShmConnection(kWorker, fd, options));
  if (!ValidRingBytes(options.ring_bytes))
    return InvalidArgument("shm ring size " + std::to_string(options.ring_bytes) +
                           " is not a power of two between 64 KiB and 256 MiB");
  if (options.host_bytes % 4096 != 0) return InvalidArgument("shm host segment size is not a multiple of 4 KiB");
  int memfd = -1;
  int hostfd = -1;
  // The client gets these descriptors: sealed so it cannot resize them.
  Status st = SealedMemfd("hipr-shm", kHeaderBytes + 2 * options.ring_bytes, &memfd);
  if (!st.ok()) return st;
  st = SealedMemfd("hipr-shm-host", options.host_bytes, &hostfd);
  if (!st.ok()) {
    close(memfd);
    return st;
  }
  if (st.ok()) st = c->MapHost(hostfd, options.host_bytes);
  for (int i = 0; st.ok() && i < kBellCount; ++i) {
    c->bells_[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (c->bells_[i] < 0) st = Status(StatusCode::kResourceExhausted, ErrnoText("shm: eventfd"));
  }
  if (st.ok()) st = c->Map(memfd, options.ring_bytes, /*create=*/true);
  if (st.ok()) {
    msg::ShmSetup setup{kLayoutVersion, options.ring_bytes, kHeaderBytes, options.host_bytes};
    codec::BodyWriter w;
    w.Encode(setup);
    std::vector<uint8_t> frame(sizeof(wire::FrameHeader) + w.size());
    wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(wire::Op::kShmSetup), 0,
                                        static_cast<uint32_t>(w.size())),
                       frame.data());
    std::memcpy(frame.data() + sizeof(wire::FrameHeader), w.data(), w.size());
    int fds[kSetupFds] = {memfd, c->bells_[0], c->bells_[1], c->bells_[2], c->bells_[3], hostfd};
    st = SendWithFds(fd, frame, fds, kSetupFds);
  }
  close(memfd);  // The mappings keep the segments.
  close(hostfd);
  if (!st.ok()) return st;
  *out = std::move(c);
  return Status::Ok();
}

Status ShmConnection::Connect(const std::string& path, int timeout_ms, const Options& options,
                              std::unique_ptr<ShmConnection>* out) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path)
    return InvalidArgument("'" + path + "' is not a usable unix socket path");
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return LinkDown(ErrnoText("socket"));
  int rc;
  do {
    rc = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    Status st = LinkDown("cannot connect to unix:" + path + ": " + std::strerror(errno));
    close(fd);
    return st;
  }
  return ConnectOnSocket(fd, timeout_ms, options, out);
}

Status ShmConnection::ConnectOnSocket(int fd, int timeout_ms, const Options& options,
                                      std::unique_ptr<ShmConnection>* out) {
  std::unique_ptr<ShmConnection> c(new ShmConnection(kClient, fd, options));
  const int64_t deadline = NowNs() + int64_t{timeout_ms} * 1000000;
  std::vector<int> fds;
  uint8_t raw[sizeof(wire::FrameHeader)];
  Status st = RecvWithFds(fd, raw, sizeof raw, deadline, &fds, kSetupFds);
  wire::FrameHeader h{};
  if (st.ok()) {
    h = wire::DecodeHeader(raw);
    if (h.magic != wire::kMagic || h.payload_length > wire::kMaxBodyBytes)
      st = ProtocolError("the worker's first frame on the unix socket is not a HIPR frame");
  }
  std::vector<uint8_t> body(st.ok() ? h.payload_length : 0);
  if (st.ok()) st = RecvWithFds(fd, body.data(), body.size(), deadline, &fds, kSetupFds);
  if (st.ok() && h.op == static_cast<uint16_t>(wire::Op::kFatal)) {
    msg::Fatal fatal;
    st = codec::DecodeBody(body.data(), body.size(), &fatal);
    if (st.ok()) st = Status(fatal.status, "the worker refused the connection: " + fatal.message);
  } else if (st.ok() && h.op != static_cast<uint16_t>(wire::Op::kShmSetup)) {
    st = ProtocolError("expected the shm set-up frame, got op " + std::to_string(h.op));
  }
  msg::ShmSetup setup;
  if (st.ok()) st = codec::DecodeBody(body.data(), body.size(), &setup);
  if (st.ok() && (setup.layout_version != kLayoutVersion || setup.header_bytes != kHeaderBytes ||
                  !ValidRingBytes(setup.ring_bytes)))
    st = ProtocolError("unsupported shm layout (version " + std::to_string(setup.layout_version) + ", ring " +
                       std::to_string(setup.ring_bytes) + " bytes)");
  if (st.ok() && fds.size() != kSetupFds) st = ProtocolError("the shm set-up frame did not carry its six descriptors");
  if (st.ok()) {
    struct stat sb{};
    if (fstat(fds[0], &sb) != 0 || static_cast<uint64_t>(sb.st_size) < kHeaderBytes + 2 * setup.ring_bytes)
      st = ProtocolError("the shm segment is smaller than its set-up frame says");
    if (st.ok() && (fstat(fds[5], &sb) != 0 || static_cast<uint64_t>(sb.st_size) < setup.host_bytes))
      st = ProtocolError("the shm host segment is smaller than its set-up frame says");
  }
  if (st.ok()) st = c->MapHost(fds[5], setup.host_bytes);
  if (st.ok()) {
    for (int i = 0; i < kBellCount; ++i) {
      c->bells_[i] = fds[static_cast<size_t>(i) + 1];
      fds[static_cast<size_t>(i) + 1] = -1;
    }
    st = c->Map(fds[0], setup.ring_bytes, /*create=*/false);
  }
  for (int f : fds)
    if (f >= 0) close(f);
  if (!st.ok()) return st;
  *out = std::move(c);
  return Status::Ok();
}

void ShmConnection::Ring(int bell) {
  const uint64_t one = 1;
  // EAGAIN: the counter is saturated, so the peer will wake anyway.
  (void)!write(bell, &one, sizeof one);
}

int32_t ShmConnection::NoteCpu() {
  const int32_t cpu = ThisCpu();
  // Written only when it changed: the line stays shared with a spinning peer.
  if (my_cpu_->load(std::memory_order_relaxed) != cpu) my_cpu_->store(cpu, std::memory_order_relaxed);
  return cpu;
}

Status ShmConnection::PeerGone() {
  peer_gone_.store(true);
  return LinkDown(side_ == kClient ? "the worker closed the shm connection" : "the client closed the shm connection");
}

template <class Ready>
Status ShmConnection::Wait(Ready ready, std::atomic<uint32_t>& flag, int bell, int timeout_ms) {
  int64_t& spin_ns = (&flag == &rx_->consumer_waiting) ? rx_spin_ns_ : tx_spin_ns_;
  const int64_t max_spin_ns = int64_t{options_.spin_us} * 1000;
  if (spin_ns > 0) {
    const int64_t until = NowNs() + spin_ns;
    int n = 0;
    do {
      // A peer on our CPU cannot make progress while we spin: let it run.
      if (NoteCpu() == peer_cpu_->load(std::memory_order_relaxed)) {
        sched_yield();
        if (ready()) return Status::Ok();
        continue;
      }
      for (int i = 0; i < 64; ++i) {
        if (ready()) {
          spin_ns = std::min(max_spin_ns, std::max(spin_ns * 2, kMinSpinNs));
          return Status::Ok();
        }
        CpuRelax();
      }
      if (shut_down_.load(std::memory_order_relaxed)) return LinkDown("connection shut down");
    } while (++n < 1 << 20 && NowNs() < until);
    spin_ns /= 2;  // Spinning did not pay this time.
  } else if (max_spin_ns > 0 && ready()) {
    return Status::Ok();
  } else if (max_spin_ns > 0) {
    spin_ns = kMinSpinNs;  // Try spinning again next time.
  }
  const int64_t deadline = timeout_ms < 0 ? -1 : NowNs() + int64_t{timeout_ms} * 1000000;
  for (;;) {
    // Tell the peer we are about to sleep, then look once more: the peer
    // either sees the flag (and rings) or made its change visible before we
    // looked (seq_cst on both sides orders flag and index).
    flag.store(1, std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (ready()) {
      flag.store(0, std::memory_order_relaxed);
      return Status::Ok();
    }
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (peer_gone_.load()) return LinkDown("the peer closed the shm connection");
    pollfd pfds[2] = {{bell, POLLIN, 0}, {sock_, POLLIN | POLLRDHUP, 0}};
    int wait_ms = -1;
    if (deadline >= 0) wait_ms = static_cast<int>(std::max<int64_t>(0, (deadline - NowNs() + 999999) / 1000000));
    int rc = poll(pfds, 2, wait_ms);
    if (rc < 0 && errno != EINTR) return LinkDown(ErrnoText("poll"));
    if (pfds[0].revents & POLLIN) {
      uint64_t drained;
      (void)!read(bell, &drained, sizeof drained);
    }
    if (ready()) {
      flag.store(0, std::memory_order_relaxed);
      return Status::Ok();
    }
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (pfds[1].revents != 0) return PeerGone();
    if (rc == 0 && deadline >= 0 && NowNs() >= deadline) {
      flag.store(0, std::memory_order_relaxed);
      return Status(StatusCode::kTimeout, "no progress for " + std::to_string(timeout_ms) + " ms");
    }
  }
}

Status ShmConnection::SendV(const iovec* iov, int count) {
  if (shut_down_.load()) return LinkDown("connection shut down");
  if (peer_gone_.load()) return LinkDown("the peer closed the shm connection");
  const uint64_t cap = ring_bytes_;
  const uint64_t mask = cap - 1;
  Status violation;
  auto space = [&]() -> uint64_t {
    const uint64_t used = tx_head_ - tx_->tail.load(std::memory_order_acquire);
    if (used > cap) {
      violation = ProtocolError("the peer moved the shm ring's tail past its head");
      return 1;  // Wakes the caller, which reports the violation.
    }
    return cap - used;
  };
  const size_t publish_bytes = PublishBytes(cap);
  size_t unpublished = 0;
  auto publish = [&] {
    NoteCpu();
    tx_->head.store(tx_head_, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (tx_->consumer_waiting.load(std::memory_order_relaxed) != 0 && tx_->consumer_waiting.exchange(0) != 0)
      Ring(tx_data_bell_);
    unpublished = 0;
  };
  for (int i = 0; i < count; ++i) {
    const uint8_t* src = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      uint64_t free_bytes = space();
      if (!violation.ok()) return violation;
      if (free_bytes == 0) {
        if (unpublished > 0) publish();
        // Silence both ways for send_timeout_ms means a frozen peer; bytes
        // it sends meanwhile (heartbeats) prove it alive.
        uint64_t sign_of_life = rx_->head.load(std::memory_order_acquire);
        Status st;
        for (;;) {
          st = Wait([&] { return space() > 0 || !violation.ok(); }, tx_->producer_waiting, tx_space_bell_,
                    options_.send_timeout_ms);
          if (st.code() != StatusCode::kTimeout) break;
          const uint64_t now = rx_->head.load(std::memory_order_acquire);
          if (now == sign_of_life)
            return LinkDown("the peer took no byte and sent none for " + std::to_string(options_.send_timeout_ms) +
                            " ms");
          sign_of_life = now;
        }
        HIPR_RETURN_IF_ERROR(st);
        if (!violation.ok()) return violation;
        continue;
      }
      const size_t n = static_cast<size_t>(std::min<uint64_t>({free_bytes, left, publish_bytes - unpublished}));
      const size_t at = static_cast<size_t>(tx_head_ & mask);
      const size_t first = std::min(n, static_cast<size_t>(cap) - at);
      std::memcpy(tx_data_ + at, src, first);
      if (first < n) std::memcpy(tx_data_, src + first, n - first);
      tx_head_ += n;
      src += n;
      left -= n;
      unpublished += n;
      if (unpublished >= publish_bytes) publish();
    }
  }
  if (unpublished > 0 || count == 0) publish();
  return Status::Ok();
}

Status ShmConnection::RecvFromSocket(const iovec* iov, int count, size_t skip) {
  for (int i = 0; i < count; ++i) {
    size_t off = 0;
    if (skip >= iov[i].iov_len) {
      skip -= iov[i].iov_len;
      continue;
    }
    off = skip;
    skip = 0;
    while (off < iov[i].iov_len) {
      ssize_t n = recv(sock_, static_cast<uint8_t*>(iov[i].iov_base) + off, iov[i].iov_len - off, MSG_WAITALL);
      if (n < 0 && errno == EINTR) continue;
      if (shut_down_.load()) return LinkDown("connection shut down");
      if (n < 0) return LinkDown(ErrnoText("receive"));
      if (n == 0) return PeerGone();
      off += static_cast<size_t>(n);
    }
  }
  return Status::Ok();
}

Status ShmConnection::RecvV(const iovec* iov, int count) {
  if (shut_down_.load()) return LinkDown("connection shut down");
  const uint64_t cap = ring_bytes_;
  const uint64_t mask = cap - 1;
  Status violation;
  auto avail = [&]() -> uint64_t {
    const uint64_t n = rx_->head.load(std::memory_order_acquire) - rx_tail_;
    if (n > cap) {
      violation = ProtocolError("the peer moved the shm ring's head more than a ring ahead");
      return 1;
    }
    return n;
  };
  auto release = [&] {
    rx_->tail.store(rx_tail_, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (rx_->producer_waiting.load(std::memory_order_relaxed) != 0 && rx_->producer_waiting.exchange(0) != 0)
      Ring(rx_space_bell_);
  };
  size_t done_total = 0;
  for (int i = 0; i < count; ++i) {
    uint8_t* dst = static_cast<uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    while (left > 0) {
      if (socket_stream_.load(std::memory_order_relaxed)) return RecvFromSocket(iov, count, done_total);
      uint64_t ready_bytes = avail();
      if (!violation.ok()) return violation;
      if (ready_bytes == 0) {
        Status st = Wait([&] { return avail() > 0; }, rx_->consumer_waiting, rx_data_bell_,
                         options_.recv_timeout_ms);
        if (st.code() == StatusCode::kLinkDown && peer_gone_.load() && side_ == kClient && avail() == 0 &&
            violation.ok()) {
          // The worker's side is gone and its ring is drained: what the
          // zygote has to say about it comes on the socket.
          socket_stream_.store(true);
          continue;
        }
        if (st.code() == StatusCode::kTimeout) return LinkDown("the peer sent nothing for " + st.message());
        HIPR_RETURN_IF_ERROR(st);
        continue;
      }
      const size_t n = static_cast<size_t>(std::min<uint64_t>({ready_bytes, left, PublishBytes(cap)}));
      const size_t at = static_cast<size_t>(rx_tail_ & mask);
      const size_t first = std::min(n, static_cast<size_t>(cap) - at);
      std::memcpy(dst, rx_data_ + at, first);
      if (first < n) std::memcpy(dst + first, rx_data_, n - first);
      rx_tail_ += n;
      dst += n;
      left -= n;
      done_total += n;
      release();
    }
  }
  return Status::Ok();
}

Status ShmConnection::WaitReadable(int timeout_ms) {
  if (shut_down_.load()) return LinkDown("connection shut down");
  if (socket_stream_.load()) {
    pollfd pfd{sock_, POLLIN, 0};
    int rc;
    do {
      rc = poll(&pfd, 1, timeout_ms);
    } while (rc < 0 && errno == EINTR);
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (rc == 0) return Status(StatusCode::kTimeout, "no data");
    if (rc < 0) return LinkDown(ErrnoText("poll"));
    return Status::Ok();  // Data, or an end the next receive reports.
  }
  auto has_data = [&] { return rx_->head.load(std::memory_order_acquire) != rx_tail_; };
  Status st = Wait(has_data, rx_->consumer_waiting, rx_data_bell_, timeout_ms);
  if (st.code() == StatusCode::kTimeout) return Status(StatusCode::kTimeout, "no data");
  if (st.code() == StatusCode::kLinkDown && peer_gone_.load() && side_ == kClient && !has_data() &&
      !shut_down_.load()) {
    socket_stream_.store(true);
    return Status::Ok();  // The next receive reads what the socket holds.
  }
  return st;
}

void ShmConnection::Shutdown() {
  if (shut_down_.exchange(true)) return;
  // Wake our own waiters, and let the peer see end-of-stream.
  if (rx_data_bell_ >= 0) Ring(rx_data_bell_);
  if (tx_space_bell_ >= 0) Ring(tx_space_bell_);
  if (sock_ >= 0) shutdown(sock_, SHUT_RDWR);
}

void ShmConnection::Abandon() {
  // A forked child's copy: drop our descriptors and mapping without a word
  // to the peer (the parent still uses the connection).
  shut_down_.store(true);
  if (sock_ >= 0) close(sock_);
  sock_ = -1;
  for (int& fd : bells_) {
    if (fd >= 0) close(fd);
    fd = -1;
  }
  // The mapping stays (a private copy's worth of nothing): every entry point
  // returns kLinkDown from now on, before touching it.
}

std::string ShmConnection::PeerName() const {
  ucred cred{};
  socklen_t len = sizeof cred;
  if (sock_ >= 0 && getsockopt(sock_, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
    return "shm:pid " + std::to_string(cred.pid) + " uid " + std::to_string(cred.uid);
  return "shm:?";
}

}  // namespace hipr::shm
