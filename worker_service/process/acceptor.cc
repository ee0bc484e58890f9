#include "worker_service/process/acceptor.h"

#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>
#include <fstream>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/tcp/tcp_connection.h"
#include "protocol/wire.h"
#include "worker_service/device/device_factory.h"

namespace hipr::worker {

bool IsLoopbackListen(const std::string& listen) {
  tcp::Endpoint ep;
  if (!tcp::ParseEndpoint(listen, &ep).ok()) return false;
  if (ep.host == "localhost") return true;
  asio::error_code ec;
  const asio::ip::address address = asio::ip::make_address(ep.host, ec);
  return !ec && address.is_loopback();
}

Acceptor::Acceptor(const WorkerConfig& config, Zygote zygote, Ledger* ledger)
    : config_(config),
      zygote_(zygote),
      acceptor_(io_),
      unix_acceptor_(io_),
      tcp_pause_(io_),
      unix_pause_(io_),
      tcp_backoff_("--listen " + config.listen),
      unix_backoff_("--listen-unix " + config.listen_unix),
      zygote_channel_(io_, zygote.fd),
      signals_(io_, SIGINT, SIGTERM, SIGCHLD),
      ledger_(ledger),
      slot_busy_(static_cast<size_t>(ledger->slots()), false),
      metrics_(io_, config, *ledger, [this] { return NotReady(); }) {}

std::string Acceptor::NotReady() const {
  if (stopping_) return "the worker is shutting down";
  {
    MutexLock lock(probe_mu_);
    if (!probe_failure_.empty()) return "the device probe failed: " + probe_failure_;
  }
  if (zygote_.pid <= 0) return "the zygote is gone; no session can start";
  if (static_cast<int>(live_.size()) >= config_.max_sessions)
    return "at --max-sessions (" + std::to_string(config_.max_sessions) + ")";
  return "";
}

Status Acceptor::Listen() {
  tcp::Endpoint ep;
  HIPR_RETURN_IF_ERROR(tcp::ParseEndpoint(config_.listen, &ep));
  asio::error_code ec;
  asio::ip::address address = asio::ip::make_address(ep.host == "localhost" ? "127.0.0.1" : ep.host, ec);
  if (ec) return InvalidArgument("--listen: '" + ep.host + "' is not an IP address");
  asio::ip::tcp::endpoint endpoint(address, ep.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(StatusCode::kFailedPrecondition, "cannot listen on " + config_.listen + ": " + ec.message());
  uint16_t port = acceptor_.local_endpoint().port();
  spdlog::info("listening on {}:{}", ep.host, port);
  // The port file says the worker is ready: every listener is up first.
  HIPR_RETURN_IF_ERROR(ListenUnix());
  if (!config_.metrics_listen.empty()) HIPR_RETURN_IF_ERROR(metrics_.Listen());
  if (!config_.port_file.empty()) {
    std::string tmp = config_.port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    if (std::rename(tmp.c_str(), config_.port_file.c_str()) != 0)
      return Status(StatusCode::kFailedPrecondition, "cannot write --port-file " + config_.port_file);
  }
  return Status::Ok();
}

Status Acceptor::ListenUnix() {
  const std::string& path = config_.listen_unix;
  if (path.empty()) return Status::Ok();
  struct stat sb{};
  if (lstat(path.c_str(), &sb) == 0) {
    if (!S_ISSOCK(sb.st_mode))
      return Status(StatusCode::kFailedPrecondition, "--listen-unix " + path + " exists and is not a socket");
    // A socket file left by a worker that died can go; one that answers
    // belongs to a live worker.
    asio::local::stream_protocol::socket probe(io_);
    asio::error_code ec;
    probe.connect(asio::local::stream_protocol::endpoint(path), ec);
    if (!ec) return Status(StatusCode::kFailedPrecondition, "another worker listens on --listen-unix " + path);
    spdlog::info("removing the stale socket {}", path);
    unlink(path.c_str());
  }
  asio::error_code ec;
  asio::local::stream_protocol::endpoint endpoint(path);
  unix_acceptor_.open(endpoint.protocol(), ec);
  if (!ec) unix_acceptor_.bind(endpoint, ec);
  // Only the worker's user and group may connect (never every user): the
  // socket's permissions are what guards the shm transport without
  // --auth-file. Set before listen, so no connection sees it open.
  if (!ec && chmod(path.c_str(), 0660) != 0)
    return Status(StatusCode::kFailedPrecondition, "cannot restrict unix:" + path + " to mode 0660: " +
                                                       std::strerror(errno));
  if (!ec) unix_acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(StatusCode::kFailedPrecondition, "cannot listen on unix:" + path + ": " + ec.message());
  spdlog::info("listening on unix:{} (shared-memory transport)", path);
  return Status::Ok();
}

int Acceptor::Run() {
  WaitSignal();
  Accept();
  if (unix_acceptor_.is_open()) AcceptUnix();
  ReadZygote();
  if (config_.device == "hip" && config_.probe_interval_s > 0) prober_ = std::thread([this] { ProbeLoop(); });
  io_.run();
  StopProbing();
  if (zygote_.pid > 0) {
    int ws = 0;
    waitpid(zygote_.pid, &ws, 0);
  }
  spdlog::info("worker stopped");
  return exit_code_;
}

void Acceptor::WaitSignal() {
  signals_.async_wait([this](const asio::error_code& ec, int signo) {
    if (ec) return;
    if (signo != SIGCHLD) {
      Shutdown(std::string("received ") + strsignal(signo));
      return;
    }
    int ws = 0;
    if (zygote_.pid > 0 && waitpid(zygote_.pid, &ws, WNOHANG) == zygote_.pid) {
      zygote_.pid = -1;
      exit_code_ = 1;
      Shutdown("the zygote " + DescribeWaitStatus(ws) + "; no session can start");
      return;
    }
    WaitSignal();
  });
}

void Acceptor::ProbeLoop() {
  MutexLock lock(probe_mu_);
  for (;;) {
    const auto next = std::chrono::steady_clock::now() + std::chrono::seconds(config_.probe_interval_s);
    while (!probe_stop_ && probe_cv_.wait_until(lock.native(), next) == std::cv_status::no_timeout) {
    }
    if (probe_stop_) return;
    lock.Unlock();
    DeviceProbe probe;
    const Status st = ProbeDevice(config_, &probe);
    lock.Lock();
    const std::string failure = st.ok() ? "" : st.message();
    if (failure != probe_failure_) {
      if (failure.empty()) spdlog::info("device probe passes again: {}", probe.summary);
      else spdlog::error("device probe failed: {}; /readyz says not ready until it passes", failure);
    }
    probe_failure_ = failure;
  }
}

void Acceptor::StopProbing() {
  {
    MutexLock lock(probe_mu_);
    probe_stop_ = true;
  }
  probe_cv_.notify_all();
  if (prober_.joinable()) prober_.join();
}

void Acceptor::Shutdown(const std::string& why) {
  spdlog::info("shutting down: {}", why);
  stopping_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  tcp_pause_.cancel();
  unix_pause_.cancel();
  metrics_.Close();
  if (unix_acceptor_.is_open()) {
    unix_acceptor_.close(ignored);
    unlink(config_.listen_unix.c_str());
  }
  if (zygote_.pid > 0) {
    ZygoteMessage m{ZygoteMessage::kShutdown, 0, 0, 0};
    (void)!write(zygote_.fd, &m, sizeof m);
  }
  io_.stop();
}

void Acceptor::Accept() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      tcp_pause_.expires_after(tcp_backoff_.Failed(ec));
      tcp_pause_.async_wait([this](const asio::error_code& e) {
        if (!e && acceptor_.is_open()) Accept();
      });
      return;
    }
    tcp_backoff_.Succeeded();
    {
      asio::error_code e;
      std::string peer = socket.remote_endpoint(e).address().to_string();
      Status st = tcp::TuneSocket(socket.native_handle());
      if (st.ok())
        Admit(socket.native_handle(), Transport::kTcp, peer, peer);
      else
        Refuse(socket.native_handle(), "the worker cannot start a session");
    }
    Accept();  // The socket's destructor closes our copy.
  });
}

void Acceptor::AcceptUnix() {
  unix_acceptor_.async_accept([this](const asio::error_code& ec, asio::local::stream_protocol::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      unix_pause_.expires_after(unix_backoff_.Failed(ec));
      unix_pause_.async_wait([this](const asio::error_code& e) {
        if (!e && unix_acceptor_.is_open()) AcceptUnix();
      });
      return;
    }
    unix_backoff_.Succeeded();
    {
      ucred cred{};
      socklen_t len = sizeof cred;
      std::string peer = "unix:" + config_.listen_unix;
      std::string key = "unix peer";
      if (getsockopt(socket.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
        peer = "pid " + std::to_string(cred.pid) + " uid " + std::to_string(cred.uid) + " on " + peer;
        key = "uid " + std::to_string(cred.uid);
      }
      Admit(socket.native_handle(), Transport::kShm, peer, key);
    }
    AcceptUnix();
  });
}

void Acceptor::Admit(int fd, Transport transport, const std::string& peer, const std::string& peer_key) {
  if (static_cast<int>(live_.size()) >= config_.max_sessions) {
    ledger_->Count(Ledger::kRefusedAtLimit);
    Refuse(fd, "the worker is at its limit of " + std::to_string(config_.max_sessions) + " sessions");
    return;
  }
  if (per_peer_[peer_key] >= config_.max_sessions_per_peer) {
    ledger_->Count(Ledger::kRefusedPerPeer);
    spdlog::warn("refused a connection from {}: {} already holds {} sessions (--max-sessions-per-peer)", peer,
                 peer_key, per_peer_[peer_key]);
    Refuse(fd, "the worker is at its limit of " + std::to_string(config_.max_sessions_per_peer) +
                   " sessions from " + peer_key);
    return;
  }
  // Connections that have not finished their hello may hold only so many
  // slots: a few per peer (refused beyond), and half of all; beyond that
  // the oldest makes room, so silent connections cannot keep out a client
  // that says hello.
  int handshakes = 0, from_peer = 0;
  CountHandshakes(peer_key, &handshakes, &from_peer);
  if (from_peer >= config_.max_handshakes_per_peer) {
    ledger_->Count(Ledger::kRefusedHandshakes);
    spdlog::warn("refused a connection from {}: {} connections from {} have not finished their hello "
                 "(--max-handshakes-per-peer)",
                 peer, from_peer, peer_key);
    Refuse(fd, "the worker is at its limit of " + std::to_string(config_.max_handshakes_per_peer) +
                   " connections from " + peer_key + " that have not finished their hello");
    return;
  }
  if (handshakes >= std::max(1, config_.max_sessions / 2)) EvictOldestHandshake();
  int slot = 0;
  while (slot < static_cast<int>(slot_busy_.size()) && slot_busy_[static_cast<size_t>(slot)]) ++slot;
  if (slot == static_cast<int>(slot_busy_.size())) {  // Cannot happen: one slot per session below --max-sessions.
    Refuse(fd, "the worker is at its limit of " + std::to_string(config_.max_sessions) + " sessions");
    return;
  }
  uint64_t id = next_session_id_++;
  ledger_->OpenSlot(slot, id);
  Status st = SendNewSession(zygote_, id, slot, fd, transport);
  if (st.ok()) {
    live_[id] = 0;
    slot_busy_[static_cast<size_t>(slot)] = true;
    slot_of_[id] = slot;
    peer_of_[id] = peer_key;
    ledger_->Count(Ledger::kSessionsStarted);
    ++per_peer_[peer_key];
    spdlog::info("session {}: accepted {} ({})", id, peer, transport == Transport::kShm ? "shm" : "tcp");
  } else {
    spdlog::error("session {}: cannot hand over the connection: {}", id, st.ToString());
    Refuse(fd, "the worker cannot start a session");
  }
}

void Acceptor::EvictOldestHandshake() {
  for (const auto& [id, slot] : slot_of_) {  // Oldest first.
    if (ledger_->State(slot) != Ledger::kHandshake || evicted_.count(id) != 0) continue;
    const int pid = live_[id];
    if (pid <= 0) continue;  // Not started yet: not the one that stalls.
    spdlog::warn("session {}: ended before its hello finished, to make room (half of --max-sessions may wait "
                 "in the hello)",
                 id);
    kill(pid, SIGKILL);
    evicted_.insert(id);
    ledger_->Count(Ledger::kEvictedHandshakes);
    return;
  }
}

void Acceptor::CountHandshakes(const std::string& peer_key, int* all, int* from_peer) const {
  *all = 0;
  *from_peer = 0;
  for (const auto& [id, slot] : slot_of_) {
    if (ledger_->State(slot) != Ledger::kHandshake || evicted_.count(id) != 0) continue;
    ++*all;
    if (auto it = peer_of_.find(id); it != peer_of_.end() && it->second == peer_key) ++*from_peer;
  }
}

void Acceptor::Refuse(int fd, const std::string& why) {
  spdlog::warn("refusing a connection for now: {}", why);
  // Every refusal here may pass on a later try (a slot or a hello may end):
  // kUnavailable, which a client retries (HIPR_CONNECT_RETRY_S).
  codec::BodyWriter w;
  w.Encode(msg::Fatal{StatusCode::kUnavailable, why});
  uint8_t header[sizeof(wire::FrameHeader)];
  wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(wire::Op::kFatal), 0, static_cast<uint32_t>(w.size())),
                     header);
  // A fresh socket's buffer takes a frame this small whole: never blocks.
  iovec iov[2] = {{header, sizeof header}, {const_cast<uint8_t*>(w.data()), w.size()}};
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = 2;
  (void)sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

void Acceptor::ReadZygote() {
  zygote_channel_.async_read_some(asio::buffer(&incoming_, sizeof incoming_),
                                  [this](const asio::error_code& ec, size_t n) {
    if (ec) {
      if (ec != asio::error::operation_aborted) {
        exit_code_ = 1;
        Shutdown("lost the zygote: " + ec.message());
      }
      return;
    }
    if (n == sizeof incoming_) {
      const ZygoteMessage& m = incoming_;
      if (m.type == ZygoteMessage::kSessionStarted) {
        live_[m.session_id] = m.pid;
        spdlog::debug("session {}: process {} started", m.session_id, m.pid);
      } else if (m.type == ZygoteMessage::kSessionEnded) {
        live_.erase(m.session_id);
        evicted_.erase(m.session_id);
        if (auto it = slot_of_.find(m.session_id); it != slot_of_.end()) {
          slot_busy_[static_cast<size_t>(it->second)] = false;
          slot_of_.erase(it);
        }
        if (auto it = peer_of_.find(m.session_id); it != peer_of_.end()) {
          if (--per_peer_[it->second] <= 0) per_peer_.erase(it->second);
          peer_of_.erase(it);
        }
        bool clean = WIFEXITED(m.wait_status) && WEXITSTATUS(m.wait_status) == 0;
        if (clean)
          spdlog::info("session {}: process {} ended", m.session_id, m.pid);
        else
          spdlog::warn("session {}: process {} {}", m.session_id, m.pid, DescribeWaitStatus(m.wait_status));
      }
    }
    ReadZygote();
  });
}

}  // namespace hipr::worker
