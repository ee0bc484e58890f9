#include "worker_service/process/zygote.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/wire.h"
#include "worker_service/process/session_process.h"

namespace hipr::worker {
namespace {

struct Child {
  uint64_t session_id;
  int client_fd;  // Our copy: tells the client why, should the process die.
  int slot;       // In the ledger.
};

Status SendMessage(int fd, const ZygoteMessage& m, int pass_fd) {
  iovec iov{const_cast<ZygoteMessage*>(&m), sizeof m};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (pass_fd >= 0) {
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  while (sendmsg(fd, &mh, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) return LinkDown(std::string("zygote channel: ") + std::strerror(errno));
  }
  return Status::Ok();
}

// Receives one message; *passed_fd is -1 unless one came along.
Status ReceiveMessage(int fd, ZygoteMessage* m, int* passed_fd) {
  iovec iov{m, sizeof *m};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n == 0) return LinkDown("zygote channel closed");
  if (n < 0) return LinkDown(std::string("zygote channel: ") + std::strerror(errno));
  *passed_fd = -1;
  for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) std::memcpy(passed_fd, CMSG_DATA(c), sizeof(int));
  if (n != sizeof *m) return ProtocolError("short zygote message");
  return Status::Ok();
}

// Best effort: a session process that died without a word leaves its client
// a kFatal frame saying how it died.
// `last_words`: what the process reported before it died (a twin's fault,
// Ledger::SetLastWords), empty when nothing.
// `in_hello`: the process was killed before its hello finished (the
// acceptor ends the oldest such to make room): the client had no session
// yet and may try again, so it is told kUnavailable.
void TellClient(int fd, uint64_t session_id, pid_t pid, int wait_status, const std::string& last_words = {},
                bool in_hello = false) {
  msg::Fatal fatal{StatusCode::kDeviceLost, "worker session " + std::to_string(session_id) + " (process " +
                                                std::to_string(pid) + ") " + DescribeWaitStatus(wait_status) +
                                                (last_words.empty() ? "" : ": " + last_words)};
  if (in_hello && WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL) {
    fatal.status = StatusCode::kUnavailable;
    fatal.message = "worker session " + std::to_string(session_id) +
                    " was ended before its hello finished, to make room for other connections";
  }
  codec::BodyWriter w;
  w.Encode(fatal);
  uint8_t header[sizeof(wire::FrameHeader)];
  wire::EncodeHeader(
      wire::MakeHeader(static_cast<uint16_t>(wire::Op::kFatal), 0, static_cast<uint32_t>(w.size())), header);
  iovec iov[2] = {{header, sizeof header}, {const_cast<uint8_t*>(w.data()), w.size()}};
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = 2;
  (void)sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

[[noreturn]] void ZygoteMain(const WorkerConfig& config, Ledger* ledger, int fd, pid_t worker_pid) {
  prctl(PR_SET_NAME, "hipr-zygote");
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != worker_pid) _exit(0);
  signal(SIGINT, SIG_IGN);  // Ctrl-C reaches the acceptor, which shuts us down.
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  std::map<pid_t, Child> children;
  bool shutting_down = false;
  // Sessions get SIGTERM and a grace period to end between frames; what is
  // left after it gets SIGKILL.
  std::chrono::steady_clock::time_point kill_at{};
  auto terminate_all = [&] {
    if (shutting_down) return;
    shutting_down = true;
    kill_at = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    for (auto& [pid, child] : children) kill(pid, SIGTERM);
  };
  // Client sockets of dead sessions, told why and half-closed, drained for
  // a moment before the close: closing a socket with unread bytes (the rest
  // of a request) sends a reset, and the client would never read the kFatal.
  std::map<int, std::chrono::steady_clock::time_point> lingering;
  bool control_open = true;
  for (;;) {
    if (shutting_down && children.empty()) _exit(0);
    std::vector<pollfd> pfds = {{sfd, POLLIN, 0}, {fd, POLLIN, 0}};
    int nfds = control_open ? 2 : 1;
    pfds.resize(static_cast<size_t>(nfds));
    int timeout_ms = -1;
    auto now = std::chrono::steady_clock::now();
    for (auto it = lingering.begin(); it != lingering.end();) {
      if (it->second <= now) {
        close(it->first);
        it = lingering.erase(it);
        continue;
      }
      pfds.push_back({it->first, POLLIN, 0});
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(it->second - now).count()) + 1;
      timeout_ms = timeout_ms < 0 ? left : std::min(timeout_ms, left);
      ++it;
    }
    if (shutting_down) {
      if (now >= kill_at) {
        for (auto& [pid, child] : children) kill(pid, SIGKILL);
        kill_at = now + std::chrono::hours(1);
      }
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - now).count()) + 1;
      timeout_ms = timeout_ms < 0 ? left : std::min(timeout_ms, left);
    }
    if (poll(pfds.data(), pfds.size(), timeout_ms) < 0) {
      if (errno == EINTR) continue;
      _exit(1);
    }
    for (size_t i = static_cast<size_t>(nfds); i < pfds.size(); ++i) {
      if (pfds[i].revents == 0) continue;
      char scratch[65536];
      ssize_t n;
      while ((n = read(pfds[i].fd, scratch, sizeof scratch)) > 0) {
      }
      if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(pfds[i].fd);
        lingering.erase(pfds[i].fd);
      }
    }
    if (pfds[0].revents & POLLIN) {
      signalfd_siginfo si;
      if (read(sfd, &si, sizeof si) == sizeof si && si.ssi_signo == SIGTERM) terminate_all();
      int ws = 0;
      pid_t pid;
      while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
        auto it = children.find(pid);
        if (it == children.end()) continue;
        bool clean = WIFEXITED(ws) && (WEXITSTATUS(ws) == 0 || WEXITSTATUS(ws) == kSessionExitReported);
        int cfd = it->second.client_fd;
        if (!clean) {
          const std::string last_words = ledger->LastWords(it->second.slot);
          if (!last_words.empty()) spdlog::error("session {}: {}", it->second.session_id, last_words);
          TellClient(cfd, it->second.session_id, pid, ws, last_words,
                     ledger->State(it->second.slot) == Ledger::kHandshake);
        }
        if (!clean && !shutting_down) {
          shutdown(cfd, SHUT_WR);
          fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) | O_NONBLOCK);
          lingering[cfd] = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        } else {
          close(cfd);
        }
        // What the session held goes back before the acceptor reuses the slot.
        ledger->CloseSlot(it->second.slot);
        ledger->Count(clean ? Ledger::kSessionsEndedClean : Ledger::kSessionsCrashed);
        ZygoteMessage m{ZygoteMessage::kSessionEnded, pid, it->second.session_id, ws};
        if (!shutting_down) (void)SendMessage(fd, m, -1);
        children.erase(it);
      }
    }
    if (nfds == 2 && (pfds[1].revents & (POLLIN | POLLHUP | POLLERR))) {
      ZygoteMessage m;
      int client_fd = -1;
      Status st = ReceiveMessage(fd, &m, &client_fd);
      if (!st.ok() || m.type == ZygoteMessage::kShutdown) {
        if (client_fd >= 0) close(client_fd);
        control_open = false;  // The worker is going away.
        terminate_all();
        continue;
      }
      if (m.type != ZygoteMessage::kNewSession || client_fd < 0 || shutting_down || m.slot < 0 ||
          m.slot >= ledger->slots()) {
        if (client_fd >= 0) close(client_fd);
        continue;
      }
      pid_t zygote_pid = getpid();
      pid_t pid = fork();
      if (pid == 0) {
        close(fd);
        close(sfd);
        for (auto& [p, child] : children) close(child.client_fd);
        for (auto& [lfd, deadline] : lingering) close(lfd);
        sigprocmask(SIG_UNBLOCK, &mask, nullptr);
        signal(SIGINT, SIG_DFL);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != zygote_pid) _exit(1);
        _exit(RunSessionProcess(config, ledger, m.slot, m.session_id, client_fd, static_cast<Transport>(m.transport)));
      }
      if (pid < 0) {
        spdlog::error("session {}: cannot fork a session process: {}", m.session_id, std::strerror(errno));
        TellClient(client_fd, m.session_id, 0, 0);
        close(client_fd);
        ledger->CloseSlot(m.slot);
        ZygoteMessage ended{ZygoteMessage::kSessionEnded, 0, m.session_id, 0};
        (void)SendMessage(fd, ended, -1);
        continue;
      }
      children[pid] = Child{m.session_id, client_fd, m.slot};
      (void)SendMessage(fd, ZygoteMessage{ZygoteMessage::kSessionStarted, pid, m.session_id, 0}, -1);
    }
  }
}

}  // namespace

std::string DescribeWaitStatus(int ws) {
  if (WIFSIGNALED(ws))
    return "was killed by signal " + std::to_string(WTERMSIG(ws)) + " (" + strsignal(WTERMSIG(ws)) + ")";
  if (WIFEXITED(ws)) return "exited with code " + std::to_string(WEXITSTATUS(ws));
  return "ended (status " + std::to_string(ws) + ")";
}

Status StartZygote(const WorkerConfig& config, Ledger* ledger, Zygote* out) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    return Status(StatusCode::kInternal, std::string("socketpair: ") + std::strerror(errno));
  pid_t worker_pid = getpid();
  pid_t pid = fork();
  if (pid < 0) return Status(StatusCode::kInternal, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    close(sv[0]);
    ZygoteMain(config, ledger, sv[1], worker_pid);
  }
  close(sv[1]);
  out->pid = pid;
  out->fd = sv[0];
  return Status::Ok();
}

Status SendNewSession(const Zygote& zygote, uint64_t session_id, int slot, int client_fd, Transport transport) {
  return SendMessage(
      zygote.fd, ZygoteMessage{ZygoteMessage::kNewSession, 0, session_id, 0, static_cast<uint32_t>(transport), slot},
      client_fd);
}

}  // namespace hipr::worker
