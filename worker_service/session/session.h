// Session: one client connection, replayed in its own process on one thread.
// It answers the hello (attaching the device address window before it
// replies), then reads frames and replays each call on the Device, with no
// thread hop on the request path. A heartbeat thread tells a waiting client
// that a long call is still running.
//
// Errors: a call's own error goes back in its reply. A fire-and-forget call
// has no reply; its first error is kept and returned by the next
// synchronizing call (as native HIP reports deferred errors). A protocol
// violation ends the session with a kFatal frame.
//
// Waits: stream, event and device synchronization (and blocking
// device-to-device copies) are handed to the device with a completion that
// sends the reply from whichever thread the device finishes on, so the
// replay goes on reading and replaying while a client thread waits; the
// heartbeat thread keeps the client's peer timeout at bay meanwhile.
//
// Worker shutdown: the session process keeps SIGTERM blocked; the heartbeat
// thread takes it between frames, sends a kFatal "the worker is shutting
// down" and closes the connection, and the session ends cleanly.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "protocol/chunk_lz4.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/op_traits.h"
#include "protocol/thread_annotations.h"
#include "protocol/transport.h"
#include "protocol/transports.h"
#include "protocol/peer_link.h"
#include "protocol/resumable_link.h"
#include "worker_service/process/code_cache.h"
#include "worker_service/process/config.h"
#include "worker_service/device/device.h"
#include "worker_service/process/gpu_health.h"
#include "worker_service/process/handshake.h"
#include "worker_service/process/ledger.h"
#include "worker_service/process/resume_door.h"
#include "worker_service/session/graph_plan.h"
#include "worker_service/session/shared_segment.h"

namespace hipr::worker {

// std::variant of the requests of the ops a graph may hold.
template <size_t... I>
auto GraphNodeVariant(std::index_sequence<I...>) -> std::variant<ops::Request<ops::kGraphNodeOps[I]>...>;

class Session {
 public:
  Session(uint64_t id, std::unique_ptr<Connection> conn, std::unique_ptr<Device> device,
          const WorkerConfig& config);
  ~Session();

  // Runs until the client leaves or the session fails. Returns the status
  // that ended it (Ok for a goodbye or a clean close).
  Status Run();
  // The handshake already done by the session process (handshake.h);
  // without it, Run() does it first.
  void set_admission(Admission admission) { admission_ = std::move(admission); }
  // The upgrade the session's transport may make in the hello
  // (protocol/transports.h; none: it stays on the connection it has).
  void set_upgrade(std::unique_ptr<transport::ServerUpgrade> upgrade) { upgrade_ = std::move(upgrade); }
  // The worker's ledger and this session's slot (worker-wide stream
  // count); without it only the per-session limits apply.
  void set_ledger(Ledger* ledger, int slot) {
    ledger_ = ledger;
    slot_ = slot;
    code_cache_.set_ledger(ledger);
  }
  // The address of this node the client reached the session at: peer
  // copies (protocol/peer_link.h) listen there. Empty (shm, TLS): the
  // session offers none.
  void set_peer_host(std::string host) { peer_host_ = std::move(host); }
  // The connection is tcp, plain or TLS: a client that offers `resume`
  // gets a resumable link (protocol/resumable_link.h) and a door
  // (process/resume_door.h), where --resume-grace-s is above 0. A later
  // connection of a TLS session arrives through a relay (process/tls_relay.h).
  void set_resumable(bool resumable) { resumable_ = resumable; }

 private:
  Status Hello();
  // Wraps conn_ in a ResumableLink and opens the door (after the hello).
  void StartResumable();
  // The link's relink (resumable_link.h): waits up to --resume-grace-s for
  // a resuming connection at the door and answers its hello.
  Status Relink(uint64_t received, const Status& why, const std::atomic<bool>& closed,
                ResumableLink::Relinked* out);
  // Logs what bulk lz4 did in this session (when it was agreed).
  void LogLz4();
  Status Dispatch(const wire::FrameHeader& header);
  // Reads and decodes the body of `op` and calls its handler.
  template <wire::Op op>
  Status Serve(const wire::FrameHeader& header);

  // One handler per op the session serves, with its decoded request: the
  // rows of protocol/ops.h whose mode is Call, Post or CallOrPost. Ops with
  // bulk read it from the connection (session.cc, session_modules.cc).
#define HIPR_SESSION_ON_Call(name, request) \
  Status On(ops::Tag<wire::Op::k##name>, const wire::FrameHeader& h, msg::request& m);
#define HIPR_SESSION_ON_Post HIPR_SESSION_ON_Call
#define HIPR_SESSION_ON_CallOrPost HIPR_SESSION_ON_Call
#define HIPR_SESSION_ON_Handshake(name, request)
#define HIPR_SESSION_ON_ToClient(name, request)
#define HIPR_SESSION_ON_Link(name, request)
#define HIPR_SESSION_ON(name, code, request, reply, mode, flags, note) HIPR_SESSION_ON_##mode(name, request)
  HIPR_OPS(HIPR_SESSION_ON)
#undef HIPR_SESSION_ON
#undef HIPR_SESSION_ON_Call
#undef HIPR_SESSION_ON_Post
#undef HIPR_SESSION_ON_CallOrPost
#undef HIPR_SESSION_ON_Handshake
#undef HIPR_SESSION_ON_ToClient
#undef HIPR_SESSION_ON_Link
  // kApiCall reads its head and its function's arguments in one pass, so
  // it has no On() (session_api.cc).
  Status ServeApiCall(const wire::FrameHeader& header);
  // The admitted tenant's name (empty without tenants).
  const std::string& TenantName() const;
  // IPC (session_ipc.cc): the reply to an export, the registry's token for
  // the device's `handle` when `st` (the device's export) succeeded (`what`
  // names it in the log); and a token back to the device's handle once this
  // tenant may open it.
  msg::IpcGetMemHandleReply ExportIpc(Status st, IpcRegistry::Kind kind, const IpcRegistry::DeviceHandle& handle,
                                      const std::string& what);
  Status OpenIpc(IpcRegistry::Kind kind, const std::vector<uint8_t>& token, IpcRegistry::DeviceHandle* out);
  // What a call answers when the device lacks its facet (device_facets.h):
  // kNotSupported, logged once per session and facet.
  Status NoFacet(std::string_view facet);
  // Whether bulk buffers stay mapped (BulkMemoryFacet): transient when the
  // device has no such facet.
  BulkMemory BulkMemoryOf(const iovec* iov, int count) const;
  // The reply of a copy out of the device (kCopyFromDevice, or with `runs`
  // kCopyChangedFromDevice) and then, when `st` is ok, its bytes (only
  // those of `runs`), sent from whichever thread the stream's completion
  // runs on. A broken link mid-transfer ends the session.
  using Runs = std::vector<std::pair<uint64_t, uint64_t>>;
  void SendCopyOut(const wire::FrameHeader& h, Status st, const Device::RegionReader& read, const Runs* runs);
  // kHostRegister / kHostUnregister.
  Status HostRange(const wire::FrameHeader& header, const msg::HostRangeRequest& m, bool add);
  // Reads the module's bulk (maybe lz4) and checks it against its name.
  Status ReceiveModule(const wire::FrameHeader& header, const msg::ModuleLoadRequest& m,
                       std::vector<uint8_t>* code, Status* call_error);

  // Stream work: the ops a graph may hold (kGraphNode in protocol/ops.h).
  // The same function runs a frame's request and a graph's node, so each
  // such op needs one, or graph replay (session_graphs.cc) does not compile.
  Status Replay(msg::LaunchRequest m);
  Status Replay(const msg::MemsetRequest& m);
  Status Replay(const msg::CopyOnDeviceRequest& m);
  Status Replay(const msg::StreamWaitEventRequest& m);
  Status Replay(const msg::StreamHostCallbackRequest& m);
  Status Replay(const msg::StreamWaitValueRequest& m);
  Status Replay(const msg::StreamWriteValueRequest& m);
  Status Replay(const msg::EventRecordRequest& m);
  // A kernel launch (kLaunchKernel, or a graph's kernel node).
  Status Launch(msg::LaunchRequest m);
  // A host callback (kStreamHostCallback, or a graph's host node).
  Status AddHostCallback(const msg::StreamHostCallbackRequest& m);
  // Executable graphs (session_graphs.cc).
  Status CreateGraph(msg::GraphCreateRequest m);
  Status LaunchGraph(const msg::GraphLaunchRequest& m);
  Status DestroyGraph(uint64_t graph);
  // Sends output, then writer_'s body as the reply.
  Status SendReplyLocked(const wire::FrameHeader& request) HIPR_REQUIRES(send_mu_);
  // Sends device output gathered so far.
  Status FlushOutputLocked() HIPR_REQUIRES(send_mu_);

  template <class T>
  Status Decode(T* msg);
  template <class T>
  Status Reply(const wire::FrameHeader& request, const T& msg);
  // Replies to a synchronizing call: its own error, else the oldest deferred.
  Status ReplySync(const wire::FrameHeader& request, const Status& own);
  // ReplySync from any thread, once the device says the wait is over.
  Device::Completion ReplyLater(const wire::FrameHeader& request);
  // `own`, or (when ok) the oldest deferred error, which is then cleared.
  Status TakeDeferred(const Status& own);
  // Records the error of a call that has no reply.
  void Defer(const wire::FrameHeader& request, const Status& st);
  void SendFatal(const Status& why);
  void HeartbeatLoop();

  const uint64_t id_;
  std::unique_ptr<Connection> conn_;  // What the worker accepted, or its upgrade after the hello.
  std::unique_ptr<transport::ServerUpgrade> upgrade_;  // Until the hello.
  bool resumable_ = false;
  std::unique_ptr<ResumeDoor> door_;  // Where the hello agreed resume.
  std::atomic<ResumableLink*> link_{nullptr};  // conn_, where the hello agreed resume.
  std::atomic<bool> client_leaving_{false};  // kLinkAck said so: a drop ends the session.
  std::unique_ptr<Device> device_;
  BulkMemoryFacet* bulk_ = nullptr;  // device_'s, or null; set in the constructor.
  std::set<std::string> facets_refused_;  // Replay thread only: NoFacet has logged these.
  const WorkerConfig& config_;
  SharedSegment segment_;  // Replay thread only: the shm host segment's registered ranges.
  uint32_t chunk_bytes_ = wire::kDefaultChunkBytes;
  bool lz4_to_device_ = false;    // Agreed in the hello; immutable after.
  bool lz4_from_device_ = false;  // Agreed in the hello; immutable after.
  bool copy_changed_ = false;     // wire::kFeatureCopyChanged offered (agreed once, never twice).
  bool worker_status_ = false;    // wire::kFeatureWorkerStatus offered (agreed once, never twice).
  // kWorkerStatus on the hip device: librocm-smi, opened at the first ask
  // (health_why_ says why not). Replay thread only.
  std::unique_ptr<GpuHealth> health_;
  std::string health_why_;
  bool health_tried_ = false;
  ChunkInflater inflater_;        // Replay thread only: bulk to the device.

  std::vector<uint8_t> body_;  // The current request's body.
  std::optional<Admission> admission_;  // The handshake's outcome (handshake.h).
  Ledger* ledger_ = nullptr;
  int slot_ = -1;
  // What the client holds, by id, with its device: bounded by the
  // --max-*-per-session flags, dropped with a device reset.
  std::unordered_map<uint64_t, int> streams_, events_, modules_;
  // A create beyond a per-session limit: the HIP error a GPU out of
  // resources gives, logged once per kind.
  Status OverLimit(const char* what, size_t held, int limit, const char* flag);
  // Drops what a reset of `device` destroyed.
  void ForgetDevice(int device);
  codec::BodyWriter writer_;
  bool goodbye_ = false;
  Mutex deferred_mu_;
  Status deferred_ HIPR_GUARDED_BY(deferred_mu_);  // first error of fire-and-forget work not yet reported.
  std::atomic<int> pending_replies_{0};        // ReplyLater completions not yet run.
  std::atomic<int64_t> pending_since_ns_{0};   // When pending_replies_ last left 0.

  CodeCache code_cache_;
  // Code objects this session has seen, by SHA-256 (the in-memory cache).
  std::unordered_map<std::string, std::shared_ptr<const ModuleImage>> images_;
  uint64_t image_bytes_ = 0;  // Bytes of code in images_.
  struct Function {
    uint64_t module = 0;
    std::string kernel;
  };
  std::unordered_map<uint64_t, Function> functions_;  // Client-named function ids.
  // Executable graphs by client-named id: the nodes, decoded once, in the
  // order a launch replays them.
  // A node is the request of one of the ops a graph may hold (a host
  // node: a StreamHostCallbackRequest whose callback the launch names).
  using GraphNodeOp = decltype(GraphNodeVariant(std::make_index_sequence<ops::kGraphNodeCount>{}));
  struct Graph {
    int32_t device = 0;
    std::vector<GraphNodeOp> nodes;
    size_t host_nodes = 0;
    // Its edges (msg::GraphNode::deps), when the client sent them; the
    // branch plan and the session's own streams and events it runs on,
    // made at the first launch that needs them (session_graphs.cc).
    bool has_deps = false;
    std::vector<std::vector<uint32_t>> deps;
    bool planned = false;
    GraphPlan plan;
    std::vector<uint64_t> lane_streams;  // Lanes 1...
    std::vector<uint64_t> node_events;   // Per node that records one (0: none).
    uint64_t fork_event = 0;
  };
  // The branch plan of `g` and what it runs on; false: replay serially.
  bool PrepareBranches(Graph& g);
  // Gives back the streams and events of `g`'s branches (on the device too,
  // unless a device reset dropped them already).
  void ReleaseBranches(Graph& g, bool on_device = true);
  uint64_t next_hidden_id_ = 0;
  std::unordered_map<uint64_t, Graph> graphs_;
  size_t graph_nodes_ = 0;  // In graphs_, against a limit.
  // Peer copies: where their ports listen, and the ports opened for the
  // client and not yet used (replay thread only; at most kMaxPeerPorts).
  static constexpr size_t kMaxPeerPorts = 4;
  std::string peer_host_;
  std::vector<std::unique_ptr<peer::PeerListener>> peer_ports_;
  // Host callbacks whose stream waits for the client (replay thread only).
  std::unordered_map<uint64_t, std::shared_ptr<HostGate>> host_gates_;

  Mutex output_mu_;
  std::string output_ HIPR_GUARDED_BY(output_mu_);  // printed by device code, not yet sent.

  Mutex send_mu_;  // Serializes frames from the replay and heartbeat threads.
  ChunkCompressor compressor_ HIPR_GUARDED_BY(send_mu_);  // bulk from the device, when lz4_from_device_.
  ChunkCompressor::Counters lz4_sent_ HIPR_GUARDED_BY(send_mu_);  // totals, for the log at the end.
  std::atomic<int64_t> busy_since_ns_{0};  // 0 while waiting for a request.
  std::atomic<int64_t> last_send_ns_{0};
  std::atomic<bool> worker_stopping_{false};  // SIGTERM seen: end quietly.
  Mutex hb_mu_;
  std::condition_variable hb_cv_;
  bool stopping_ HIPR_GUARDED_BY(hb_mu_) = false;
  std::thread heartbeat_;
};

template <class T>
Status Session::Decode(T* msg) {
  return codec::DecodeBody(body_.data(), body_.size(), msg);
}

template <class T>
Status Session::Reply(const wire::FrameHeader& request, const T& msg) {
  writer_.Encode(msg);
  MutexLock lock(send_mu_);
  return SendReplyLocked(request);
}

}  // namespace hipr::worker
