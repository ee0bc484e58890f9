// Acceptor: listens (Asio, one thread), tunes each accepted socket and hands
// it to the zygote, which forks its session process. It keeps count of live
// sessions from the zygote's reports, refuses connections beyond
// --max-sessions with a kFatal frame, and on SIGINT/SIGTERM stops the zygote
// (which ends every session) and returns.
#pragma once

#include <asio.hpp>

#include <cstdint>
#include <map>

#include "protocol/status.h"
#include "worker_service/config.h"
#include "worker_service/zygote.h"

namespace hipr::worker {

class Acceptor {
 public:
  Acceptor(const WorkerConfig& config, Zygote zygote);

  // Binds and listens; writes --port-file.
  Status Listen();
  // Serves until a signal or the zygote's death. Returns the exit code.
  int Run();

 private:
  void WaitSignal();
  void Accept();
  void ReadZygote();
  void Refuse(asio::ip::tcp::socket& socket, const std::string& why);
  void Shutdown(const std::string& why);

  const WorkerConfig& config_;
  Zygote zygote_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  asio::posix::stream_descriptor zygote_channel_;
  asio::signal_set signals_;
  ZygoteMessage incoming_{};
  uint64_t next_session_id_ = 1;
  std::map<uint64_t, int> live_;  // Session id -> pid (0 until started).
  int exit_code_ = 0;
};

}  // namespace hipr::worker
