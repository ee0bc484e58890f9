#include "worker_service/process/resume_door.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cstring>

#include "protocol/auth.h"

namespace hipr::worker {
namespace {

// The door's address: abstract, named after this worker's zygote (the
// parent of every session process) and the session.
socklen_t DoorAddress(uint64_t session_id, sockaddr_un* addr) {
  std::memset(addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  const std::string name =
      "hipr-resume-" + std::to_string(getppid()) + "-" + std::to_string(session_id);
  std::memcpy(addr->sun_path + 1, name.data(), name.size());  // sun_path[0] = 0: abstract.
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
}

constexpr size_t kMaxKnockBytes = 4096;
constexpr int kKnockTimeoutMs = 2000;

void SetTimeouts(int fd) {
  timeval tv{kKnockTimeoutMs / 1000, (kKnockTimeoutMs % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

void SendVerdict(int fd, StatusCode status, const std::string& message) {
  codec::BodyWriter w;
  w.Encode(KnockVerdict{status, message});
  (void)send(fd, w.data(), w.size(), MSG_NOSIGNAL);
}

}  // namespace

Status ResumeDoor::Open(uint64_t session_id, std::string tenant, std::function<void()> on_admit,
                        std::unique_ptr<ResumeDoor>* out) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(StatusCode::kInternal, std::string("resume door: socket: ") + std::strerror(errno));
  sockaddr_un addr;
  const socklen_t len = DoorAddress(session_id, &addr);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0 || listen(fd, 8) != 0) {
    const int e = errno;
    close(fd);
    return Status(StatusCode::kInternal, std::string("resume door: bind: ") + std::strerror(e));
  }
  std::unique_ptr<ResumeDoor> door(new ResumeDoor(session_id, std::move(tenant), fd, std::move(on_admit)));
  {
    MutexLock lock(door->mu_);
    HIPR_RETURN_IF_ERROR(auth::RandomNonce(&door->secret_));
  }
  door->thread_ = std::thread([d = door.get()] { d->Loop(); });
  *out = std::move(door);
  return Status::Ok();
}

ResumeDoor::ResumeDoor(uint64_t session_id, std::string tenant, int fd, std::function<void()> on_admit)
    : session_id_(session_id), tenant_(std::move(tenant)), listen_fd_(fd), on_admit_(std::move(on_admit)) {}

ResumeDoor::~ResumeDoor() {
  stopping_.store(true);
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  MutexLock lock(mu_);
  if (admitted_.has_value()) close(admitted_->fd);
}

std::vector<uint8_t> ResumeDoor::secret() const {
  MutexLock lock(mu_);
  return secret_;
}

bool ResumeDoor::Take(std::chrono::steady_clock::time_point deadline, const std::atomic<bool>& closed,
                      Admitted* out) {
  MutexLock lock(mu_);
  while (!admitted_.has_value()) {
    if (closed.load() || std::chrono::steady_clock::now() >= deadline) return false;
    // Short waits: `closed` has no way to wake us.
    cv_.wait_for(lock.native(), std::chrono::milliseconds(50));
  }
  *out = std::move(*admitted_);
  admitted_.reset();
  return true;
}

void ResumeDoor::Loop() {
  while (!stopping_.load()) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, 100) != 1) continue;
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    SetTimeouts(fd);
    Serve(fd);
    close(fd);
  }
}

void ResumeDoor::Serve(int fd) {
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.uid != getuid()) {
    spdlog::warn("session {}: resume door: a knock from uid {} refused (not this worker's)", session_id_, cred.uid);
    SendVerdict(fd, StatusCode::kUnauthenticated, "not this worker's process");
    return;
  }
  std::vector<uint8_t> buf(kMaxKnockBytes);
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  iovec iov{buf.data(), buf.size()};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  const ssize_t n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
  int client_fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)))
      std::memcpy(&client_fd, CMSG_DATA(c), sizeof(int));
  Knock knock;
  Status st = n > 0 && (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) == 0 && client_fd >= 0
                  ? codec::DecodeBody(buf.data(), static_cast<size_t>(n), &knock)
                  : ProtocolError("a knock must be one message with one socket");
  if (!st.ok()) {
    if (client_fd >= 0) close(client_fd);
    spdlog::warn("session {}: resume door: a malformed knock refused: {}", session_id_, st.message());
    SendVerdict(fd, StatusCode::kProtocolError, st.message());
    return;
  }
  MutexLock lock(mu_);
  std::string refused;
  if (knock.session_id != session_id_)
    refused = "the knock names another session";
  else if (knock.tenant != tenant_)
    refused = "the session belongs to another tenant";
  else if (!auth::MacEquals(knock.secret, secret_))
    refused = "the resume secret is not this session's current one (used already, or never issued)";
  if (!refused.empty()) {
    lock.Unlock();
    close(client_fd);
    spdlog::warn("session {}: resume from {} refused: {}", session_id_, knock.peer, refused);
    SendVerdict(fd, StatusCode::kUnauthenticated, "the worker refused to resume session " +
                                                      std::to_string(session_id_) + ": " + refused);
    return;
  }
  std::vector<uint8_t> next;
  if (Status fresh = auth::RandomNonce(&next); !fresh.ok()) {
    lock.Unlock();
    close(client_fd);
    SendVerdict(fd, fresh.code(), fresh.message());
    return;
  }
  secret_ = next;  // The presented secret is spent.
  lock.Unlock();
  // The connection in use goes first (it may still look alive: half-open);
  // only then may the link take the new one, which this must not touch.
  if (on_admit_) on_admit_();
  lock.Lock();
  if (admitted_.has_value()) close(admitted_->fd);  // An earlier resume nobody took.
  admitted_ = Admitted{client_fd, std::move(knock), std::move(next)};
  cv_.notify_all();
  lock.Unlock();
  SendVerdict(fd, StatusCode::kOk, "");
}

Status KnockOnDoor(const Knock& knock, int client_fd) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(StatusCode::kInternal, std::string("socket: ") + std::strerror(errno));
  sockaddr_un addr;
  const socklen_t len = DoorAddress(knock.session_id, &addr);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), len) != 0) {
    close(fd);
    return Status(StatusCode::kNotFound, "this worker has no session " + std::to_string(knock.session_id) +
                                             " (it ended, or its grace period passed)");
  }
  SetTimeouts(fd);
  codec::BodyWriter w;
  w.Encode(knock);
  iovec iov{const_cast<uint8_t*>(w.data()), w.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &client_fd, sizeof(int));
  if (sendmsg(fd, &mh, MSG_NOSIGNAL) != static_cast<ssize_t>(w.size())) {
    const int e = errno;
    close(fd);
    return Status(StatusCode::kUnavailable, std::string("cannot reach the session: ") + std::strerror(e));
  }
  std::vector<uint8_t> buf(kMaxKnockBytes);
  const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
  close(fd);
  KnockVerdict verdict;
  if (n <= 0 || !codec::DecodeBody(buf.data(), static_cast<size_t>(n), &verdict).ok())
    return Status(StatusCode::kUnavailable, "the session did not answer the resume");
  if (verdict.status != StatusCode::kOk) return Status(verdict.status, verdict.message);
  return Status::Ok();
}

}  // namespace hipr::worker
