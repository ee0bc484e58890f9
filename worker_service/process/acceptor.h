// Acceptor: listens (Asio, one thread) on tcp and, with --listen-unix, on a
// unix socket for clients on this node (which then use the shm transport),
// tunes each accepted socket and hands it to the zygote, which forks its
// session process. It keeps count of live
// sessions from the zygote's reports, refuses connections beyond
// --max-sessions with a kFatal frame, and on SIGINT/SIGTERM stops the zygote
// (which ends every session) and returns.
#pragma once

#include <asio.hpp>

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/status.h"
#include "protocol/thread_annotations.h"
#include "worker_service/process/accept_backoff.h"
#include "worker_service/process/config.h"
#include "worker_service/process/ledger.h"
#include "worker_service/process/metrics.h"
#include "worker_service/process/zygote.h"

namespace hipr::worker {

// Whether --listen's address admits only this host (127.0.0.0/8, ::1,
// localhost).
bool IsLoopbackListen(const std::string& listen);

class Acceptor {
 public:
  Acceptor(const WorkerConfig& config, Zygote zygote, Ledger* ledger);

  // Binds and listens; writes --port-file.
  Status Listen();
  // Serves until a signal or the zygote's death. Returns the exit code.
  int Run();

 private:
  void WaitSignal();
  Status ListenUnix();
  void Accept();
  void AcceptUnix();
  // Hands an accepted connection to a new session, or refuses it.
  // `peer_key` names the peer for --max-sessions-per-peer (an IP address,
  // or "uid N"); `peer` describes it in logs.
  void Admit(int fd, Transport transport, const std::string& peer, const std::string& peer_key);
  void ReadZygote();
  void Refuse(int fd, const std::string& why);
  // Live sessions still in their handshake (the ledger's slot state): all,
  // and those from `peer_key`.
  void CountHandshakes(const std::string& peer_key, int* all, int* from_peer) const;
  // Ends the oldest session still in its handshake (SIGKILL; the zygote
  // reaps it and tells its client).
  void EvictOldestHandshake();
  void Shutdown(const std::string& why);
  // Why a new client would not be served now; empty when it would (/readyz).
  std::string NotReady() const;
  // --probe-interval-s on the hip device: the start-up probe again, on a
  // thread of its own (it forks a child and waits for it), so /readyz says
  // when the GPU or its runtime went away.
  void ProbeLoop();
  void StopProbing();

  const WorkerConfig& config_;
  Zygote zygote_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::local::stream_protocol::acceptor unix_acceptor_;
  // Each listener's pause after a failed accept (accept_backoff.h).
  asio::steady_timer tcp_pause_, unix_pause_;
  AcceptBackoff tcp_backoff_, unix_backoff_;
  asio::posix::stream_descriptor zygote_channel_;
  asio::signal_set signals_;
  ZygoteMessage incoming_{};
  uint64_t next_session_id_ = 1;
  Ledger* ledger_;
  std::vector<bool> slot_busy_;  // Ledger slots handed to live sessions.
  std::map<uint64_t, int> live_;  // Session id -> pid (0 until started).
  std::map<uint64_t, int> slot_of_;  // Session id -> its ledger slot.
  std::set<uint64_t> evicted_;       // Ended by EvictOldestHandshake, not yet reaped.
  std::map<uint64_t, std::string> peer_of_;  // Session id -> its peer key (--max-sessions-per-peer).
  std::map<std::string, int> per_peer_;      // Peer key -> live sessions.
  int exit_code_ = 0;
  bool stopping_ = false;
  std::thread prober_;
  mutable Mutex probe_mu_;
  std::condition_variable probe_cv_;
  bool probe_stop_ HIPR_GUARDED_BY(probe_mu_) = false;
  std::string probe_failure_ HIPR_GUARDED_BY(probe_mu_);  // The last probe's error; empty when it passed.
  MetricsServer metrics_;
};

}  // namespace hipr::worker
