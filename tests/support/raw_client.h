// RawClient: speaks HIPR straight to a worker, without the stub and its
// client-side checks, so tests can send what a hostile or broken client
// would. Also WorkerProcess: starts a real hipr-worker on an ephemeral port.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "protocol/auth.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/tls/tls_connection.h"
#include "protocol/transport.h"

namespace hipr::test {

// A hipr-worker child process listening on 127.0.0.1:<ephemeral> (or on
// the --listen among `args`, with port 0).
class WorkerProcess {
 public:
  // `args` are extra flags, e.g. {"--sim-memory", "1G"}.
  explicit WorkerProcess(std::vector<std::string> args = {});
  ~WorkerProcess();  // SIGTERM, then SIGKILL after 5 s.
  uint16_t port() const { return port_; }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  bool Alive() const;
  // Sends `signo` and waits up to `timeout_ms` for the worker to exit.
  // Returns its waitpid status, or -1 if it did not exit in time (it is
  // then left to the destructor).
  int Stop(int signo, int timeout_ms = 5000);
  // Pids of this worker's session processes (children of its zygote).
  std::vector<pid_t> SessionPids() const;

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string dir_;
};

// Path of the hipr-worker binary under test (set by CMake).
std::string WorkerBinary();

// Runs hipr-worker with `args` until it exits (30 s at most; killed then);
// its exit status and everything it printed. `hipr_server`, when given, is
// its HIPR_SERVER.
struct WorkerRun {
  int status = -1;  // Exit code; -1: killed or still running after 30 s.
  std::string text;
};
// `binary`, when given, is the hipr-worker to run instead of the build's.
WorkerRun RunWorkerToExit(std::vector<std::string> args, const char* hipr_server = nullptr,
                          const std::string& binary = {});

class RawClient {
 public:
  // `endpoint` is host:port (tcp), or unix:PATH for the shm transport of a
  // worker started with --listen-unix PATH.
  // Connects and says hello, reserving an address window of `window_bytes`
  // and offering `features`. Where the worker agrees to bulk lz4, copies
  // send and accept kDataLz4 chunks (counted by lz4_sent() / lz4_received()).
  static Status Connect(const std::string& endpoint, std::unique_ptr<RawClient>* out,
                        uint64_t window_bytes = 16ull << 30, std::vector<std::string> features = {});
  // As Connect, answering a worker's authentication challenge with
  // `credential` (protocol/auth.h) and checking the worker's proof.
  static Status ConnectAs(const std::string& endpoint, const auth::Credential& credential,
                          std::unique_ptr<RawClient>* out, uint64_t window_bytes = 16ull << 30,
                          std::vector<std::string> features = {});
  // Connects without a hello.
  static Status ConnectBare(const std::string& endpoint, std::unique_ptr<RawClient>* out);
  // From now on, tcp connections of this process speak TLS with `ctx`
  // (its CA, and its client certificate if any) to a worker whose
  // certificate names 127.0.0.1; nullptr: plain tcp again.
  static void UseTls(std::shared_ptr<tls::Context> ctx);
  ~RawClient();

  const msg::HelloReply& hello() const { return hello_; }
  Connection& conn() { return *conn_; }

  uint32_t NextId() { return next_id_++; }
  // Sends one request (with optional bulk) and returns its request id.
  template <class T>
  Status Send(wire::Op op, const T& body, uint32_t* request_id = nullptr, const iovec* bulk = nullptr,
              int bulk_count = 0) {
    codec::BodyWriter w;
    w.Encode(body);
    uint32_t id = NextId();
    if (request_id) *request_id = id;
    if (lz4_to_device_ && bulk_count > 0) {
      HIPR_RETURN_IF_ERROR(SendFrame(*conn_, static_cast<uint16_t>(op), id, w));
      compressor_.BeginTransfer();
      return SendBulkLz4(*conn_, nullptr, 0, id, bulk, bulk_count, chunk_bytes(), compressor_);
    }
    return SendFrame(*conn_, static_cast<uint16_t>(op), id, w, bulk, bulk_count, chunk_bytes());
  }
  // Reads the next non-heartbeat frame; it must be the reply to `request_id`
  // of `op` (kFatal gives its message as a session error).
  template <class T>
  Status Receive(wire::Op op, uint32_t request_id, T* reply) {
    std::vector<uint8_t> body;
    HIPR_RETURN_IF_ERROR(ReceiveBody(op, request_id, &body));
    return codec::DecodeBody(body.data(), body.size(), reply);
  }
  template <class Req, class Rep>
  Status Call(wire::Op op, const Req& req, Rep* reply) {
    uint32_t id = 0;
    HIPR_RETURN_IF_ERROR(Send(op, req, &id));
    return Receive(op, id, reply);
  }

  // Conveniences returning the HIP error of the reply (or -1 on a transport
  // or protocol failure, with the status in last_status()).
  int Malloc(uint64_t size, uint64_t* address, int device = 0);
  int Write(uint64_t address, const void* data, uint64_t size, uint64_t stream = 0);
  int Read(uint64_t address, void* data, uint64_t size, uint64_t stream = 0);
  int Memset(uint64_t address, uint8_t value, uint64_t size);  // Then synchronizes.
  int Free(uint64_t address);                                   // Then synchronizes.
  int Synchronize(int device = 0);
  int MemInfo(uint64_t* free_bytes, uint64_t* total_bytes);
  // Pitched copies of a region from/to packed host bytes (region.bytes()).
  int WriteRegion(const msg::Region& dst, const void* data, uint64_t stream = 0, bool want_reply = true);
  int ReadRegion(const msg::Region& src, void* data, uint64_t stream = 0);
  const Status& last_status() const { return last_; }

  // Reads the next frame that is not a heartbeat, waiting at most
  // `timeout_ms` for it: its header and (for payloads up to kMaxBodyBytes)
  // its payload. kLinkDown once the worker has closed the connection.
  Status ReceiveAny(wire::FrameHeader* header, std::vector<uint8_t>* body, int timeout_ms = 15000);
  // Heartbeat frames skipped so far while waiting for replies.
  int heartbeats() const { return heartbeats_; }

  uint32_t chunk_bytes() const { return hello_.chunk_bytes ? hello_.chunk_bytes : wire::kDefaultChunkBytes; }
  bool lz4_to_device() const { return lz4_to_device_; }
  bool lz4_from_device() const { return lz4_from_device_; }
  const ChunkCompressor::Counters& lz4_sent() const { return compressor_.counters(); }
  const ChunkInflater::Counters& lz4_received() const { return inflater_.counters(); }

 private:
  static std::shared_ptr<tls::Context>& TlsContext();
  static Status ConnectImpl(const std::string& endpoint, std::unique_ptr<RawClient>* out, uint64_t window_bytes,
                            std::vector<std::string> features, const auth::Credential* credential);
  Status ReceiveBody(wire::Op op, uint32_t request_id, std::vector<uint8_t>* body);
  int Fail(const Status& st);

  std::unique_ptr<Connection> conn_;
  msg::HelloReply hello_;
  void* window_ = nullptr;
  uint64_t window_bytes_ = 0;
  uint32_t next_id_ = 1;
  int heartbeats_ = 0;
  bool lz4_to_device_ = false;
  bool lz4_from_device_ = false;
  ChunkCompressor compressor_;
  ChunkInflater inflater_;
  Status last_;
};

}  // namespace hipr::test
