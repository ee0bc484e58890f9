// Session: this process's conversation with one hipr-worker session.
//
// Open() connects, says hello (version range, token, program, pid, the
// offered address window, chunk size) and keeps what the worker answered:
// devices, versions, chunk size, the window in use. A session is alive or
// dead. Any link error, protocol error, kFatal frame or peer silence longer
// than HIPR_PEER_TIMEOUT_MS makes it dead for good: the reason is logged
// once, the socket is shut down, and every later call fails at once with a
// session-scope status (the API edge turns that into hipErrorNoDevice)
// without touching the socket.
//
// Calls:
//  * Post(): fire-and-forget. The frame is encoded into the send batch
//    (bodies and small bulk copied in) and leaves with the next synchronous
//    call, when the batch exceeds HIPR_BATCH_BYTES, or when the flusher
//    thread finds its oldest frame older than HIPR_FLUSH_US.
//  * PostCopy(): a fire-and-forget copy to the device. Bulk up to
//    kInlineBulkBytes is copied into the batch; larger bulk is sent straight
//    from the caller's buffers (behind the flushed batch) before returning.
//    Either way the source is consumed when the call returns.
//  * PostCopyFromDevice(): fire-and-forget with a reply: the bytes arrive
//    later, read by whoever reads the socket (async copies into pinned
//    memory).
//  * Call(): synchronous. The batch and the request leave in one writev,
//    then the reply is awaited. Many threads may wait at once: replies are
//    matched to their callers by request id (the worker answers waits when
//    the device gets there, not in request order). One waiting thread at a
//    time reads the socket (leader/follower: no reader thread, no thread
//    hop for a lone caller) and hands each reply to its caller, reading
//    reply bulk (D2H) straight into that caller's buffers when the reply's
//    error is 0. Heartbeats restart the peer timeout, kOutput frames (text
//    device code printed) are written to stdout, kFatal ends the session, a
//    reply nobody waits for or with the wrong op is a protocol error.
//
// Thread-safety: every public method may be called from any thread. Locks
// (HIPR_GUARDED_BY, checked by clang: ctest thread_safety), in acquisition
// order: send_mu_ (writes to the socket), batch_mu_ (the
// batch); recv_mu_ (the waiting calls and the reader role) is never held
// with another. The flusher takes send_mu_ then batch_mu_; Post takes
// batch_mu_ alone.
//
// Lifetime: sessions are never destroyed (the client leaks them: the process
// may exit or fork at any moment). After fork() the child must only call
// AbandonInChild() on its copy.
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <msgpack/sbuffer.hpp>

#include "client_stub/memory/address_window.h"
#include "client_stub/base/config.h"
#include "client_stub/abi/device_props.h"
#include "client_stub/session/send_batch.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/op_traits.h"
#include "protocol/resumable_link.h"
#include "client_stub/session/host_segment.h"
#include "protocol/thread_annotations.h"
#include "protocol/transport.h"
#include "protocol/transports.h"


namespace hipr::client {

class Session {
 public:
  // Bulk of a fire-and-forget copy up to this size is copied into the batch.
  static constexpr uint64_t kInlineBulkBytes = 64u << 10;

  // Connects to config.server and says hello, offering `*window`: a range the
  // caller holds, or, when *window is empty, config.window_bytes that Open
  // reserves into *window. On a counter-offer, reserves the worker's window
  // (MAP_FIXED_NOREPLACE), releases the offer and updates *window; if that
  // reservation fails the session is dead and *window is the offer, or empty
  // when the counter-offer overlapped it (released first). An empty
  // window in the reply (a device that places memory itself) releases the
  // offer and leaves *window empty.
  // Never returns null: on any failure the session is dead (reason logged).
  // Blocks up to connect timeout + peer timeout, and while the worker
  // refuses for now (kUnavailable), up to HIPR_CONNECT_RETRY_S more.
  static std::unique_ptr<Session> Open(const Config& config, AddressRange* window);

  // Stops the flusher and closes the socket. Production code never destroys
  // a session (tests do); batched frames not yet sent are dropped.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool dead() const { return dead_.load(std::memory_order_acquire); }
  // The status every call returns once dead (kDeviceLost and the reason).
  Status DeadStatus() const;
  // The code of what first ended the session (kOk while alive): kUnavailable
  // when the worker refused it for now.
  StatusCode DeadCause() const;

  // What the hello established; immutable while alive.
  const std::vector<msg::DeviceInfo>& devices() const { return devices_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  // The property and attribute answers of each device (device_props.h).
  const DeviceAnswers& answers(int device) const { return *answers_[static_cast<size_t>(device)]; }
  // The shm transport's host segment, where hipHostMalloc places pinned
  // memory; null over tcp (or when the worker offers none).
  HostSegment* host_segment() const { return host_segment_.get(); }
  int32_t driver_version() const { return hello_.driver_version; }
  int32_t runtime_version() const { return hello_.runtime_version; }
  uint32_t chunk_bytes() const { return chunk_bytes_; }
  // Bulk lz4 agreed in the hello (HIPR_COMPRESS and the worker's --compress).
  bool lz4_to_device() const { return lz4_to_device_; }
  bool lz4_from_device() const { return lz4_from_device_; }
  uint64_t session_id() const { return hello_.session_id; }
  const std::string& device_kind() const { return hello_.device_kind; }
  // Whether the worker's device has optional capability `name` (wire.h
  // kCapability*); a worker that reports none (older) is taken to have all.
  bool HasCapability(std::string_view name) const {
    if (hello_.capabilities.empty()) return true;
    for (const std::string& c : hello_.capabilities)
      if (c == name) return true;
    return false;
  }
  // Whether the worker listed capability `name`: for what is an
  // optimisation rather than a call (memory-lease), which an older worker
  // that lists nothing is not taken to have.
  bool ListsCapability(std::string_view name) const {
    for (const std::string& c : hello_.capabilities)
      if (c == name) return true;
    return false;
  }

  // Fire-and-forget. Ok means queued (or sent), not executed.
  // The op comes with its message type (protocol/ops.h): a request that is
  // not the op's, or an op that is never fire-and-forget, does not compile.
  template <wire::Op op, class Req>
  Status Post(const Req& request) {
    static_assert(ops::kRequestFits<op, Req>, "this is not the request type of op (protocol/ops.h)");
    static_assert(ops::kModeOf<op> == ops::Mode::kPost || ops::kModeOf<op> == ops::Mode::kCallOrPost,
                  "op is not fire-and-forget (protocol/ops.h)");
    Encoded body(request);
    return PostEncoded(static_cast<uint16_t>(op), body.data(), body.size(), nullptr, 0);
  }

  // Fire-and-forget copy to the device: `src` is consumed before returning.
  Status PostCopy(const msg::CopyToDeviceRequest& request, const iovec* src, int src_count,
                  bool src_pinned = false);

  // Fire-and-forget copy from the device into `dst` (memory that stays
  // valid until then: pinned host memory): the worker sends the bytes when
  // the stream gets there and whichever thread reads the socket writes them
  // into `dst`; the callback thread reads while such copies are
  // outstanding, so they land even if no call waits. They land before the
  // reply of any later call that synchronizes with that stream. A failed
  // copy leaves `dst` alone and its error is TakeAsyncError()'s.
  Status PostCopyFromDevice(const msg::CopyFromDeviceRequest& request, const iovec* dst, int dst_count);
  // Waits until every PostCopyFromDevice has landed (or the session died).
  Status AwaitAsyncCopies();
  // Pinned host memory [addr, addr + bytes) is about to be freed or
  // unregistered: the connection drops what it keeps for it (rdma: the
  // memory registration that pins its pages). Call it after
  // AwaitAsyncCopies and before the pages go.
  void ForgetMemory(const void* addr, size_t bytes);
  // The first error of a PostCopyFromDevice since the last call, or 0.
  int32_t TakeAsyncError();

  // Synchronous call: sends `request` (+ `send_bulk` as kData frames, straight
  // from the caller's buffers), waits for the reply of `op` and decodes it
  // into *reply; when reply->error == 0, reads the reply's bulk (recv_bulk
  // sizes summed) straight into recv_bulk. Not ok => session-scope failure
  // (the session is dead).
  // `Rep` must be msg::CallReply when recv_bulk is given (the reader
  // decides from its error whether bulk follows).
  // `send_pinned`: send_bulk is pinned memory (it stays put), which a large
  // send over tcp may hand to the kernel without a copy (MSG_ZEROCOPY), and
  // rdma lets the worker read straight from. `recv_pinned`: recv_bulk is
  // pinned memory, which rdma fills straight (an RDMA READ into it).
  // Pinned memory must be forgotten (ForgetMemory) before it is freed.
  // As Post, the request and reply types must be the op's.
  template <wire::Op op, class Req, class Rep>
  Status Call(const Req& request, Rep* reply, const iovec* send_bulk = nullptr, int send_count = 0,
              const iovec* recv_bulk = nullptr, int recv_count = 0, bool send_pinned = false,
              bool recv_pinned = false) {
    static_assert(ops::kRequestFits<op, Req>, "this is not the request type of op (protocol/ops.h)");
    static_assert(ops::kReplyFits<op, Rep>, "this is not the reply type of op (protocol/ops.h)");
    static_assert(ops::kModeOf<op> == ops::Mode::kCall || ops::kModeOf<op> == ops::Mode::kCallOrPost,
                  "op has no reply (protocol/ops.h)");
    Encoded body(request);
    Pending p;
    p.recv_bulk = recv_bulk;
    p.recv_count = recv_count;
    p.send_pinned = send_pinned;
    p.recv_pinned = recv_pinned;
    HIPR_RETURN_IF_ERROR(Exchange(static_cast<uint16_t>(op), body.data(), body.size(), send_bulk, send_count, &p));
    Status st = codec::DecodeBody(p.body.data(), p.body.size(), reply);
    if (!st.ok()) return MarkDead(Status(StatusCode::kProtocolError, "bad reply body: " + st.message()));
    return Status::Ok();
  }

  // Whether the worker reads managed memory back by its changes
  // (wire::kFeatureCopyChanged, agreed in the hello).
  bool copy_changed() const { return copy_changed_; }
  // Whether the worker answers kWorkerStatus (wire::kFeatureWorkerStatus;
  // hipr-smi).
  bool worker_status() const { return worker_status_; }
  // The transport the session runs on: "tcp", "tls", "shm" or "rdma".
  const std::string& transport() const { return transport_; }
  // The hello's answer as it came (hipr-smi shows the worker's version).
  const msg::HelloReply& hello() const { return hello_; }
  // kCopyChangedFromDevice (only where copy_changed()): reads back the
  // runs of request.src the worker reports written since it was last
  // asked, each into `dst` (request.src.width bytes) at its offset;
  // `*runs` lists them ([offset, length], ascending). `*error` is the
  // reply's (then nothing was read). Not ok: the session is dead.
  Status CopyChanged(const msg::CopyChangedRequest& request, uint8_t* dst,
                     std::vector<std::pair<uint64_t, uint64_t>>* runs, int32_t* error);

  // Sends everything batched now (e.g. before a long local wait).
  Status Flush();

  // hipStreamAddCallback: posts a host callback on (device, stream). When
  // the stream gets there the worker says so and holds the stream; this
  // session's callback thread (started at the first one) runs `fn` with the
  // stream's status and then lets the stream go on. Fire-and-forget.
  Status PostHostCallback(int device, uint64_t stream, std::function<void(int32_t error)> fn);
  // The two halves of PostHostCallback, for frames that carry several
  // callback ids (kGraphLaunch): registers `fn` under a fresh id to run when
  // the worker announces it; DropHostCallback forgets one never posted.
  uint64_t AddHostCallback(std::function<void(int32_t error)> fn);
  void DropHostCallback(uint64_t id);

  // In a forked child: closes this copy of the socket (the parent's stays
  // open) and never touches the session again. Async-signal-safe: takes no
  // lock.
  void AbandonInChild();

 private:
  // A msgpack body encoded once; small bodies stay in a short buffer.
  class Encoded {
   public:
    template <class T>
    explicit Encoded(const T& msg) : buffer_(256), packer_(buffer_) {
      codec::Pack(packer_, msg);
    }
    const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(buffer_.data()); }
    size_t size() const { return buffer_.size(); }

   private:
    msgpack::sbuffer buffer_;
    codec::Packer packer_;
  };

  Session(const Config& config, std::string server);

  // One attempt: Connect, reserve the window where *window is empty, Hello.
  // `failed` says which stage failed, for the log.
  Status Start(AddressRange* window, const char** failed);
  // Connects by HIPR_SERVER's scheme (protocol/transports.h): conn_, and
  // the upgrade the hello offers (upgrade_) where the transport has one.
  Status Connect();
  Status Hello(AddressRange* window);
  // After the hello (and after AdoptWindow: nothing new may be mapped
  // before the worker's window is reserved): finishes upgrade_, which may
  // replace conn_ (an error where the scheme demands the upgrade, or where
  // the worker broke the protocol).
  Status AdoptTransport();
  // One round trip of the hello or of the authentication answer (kAuth).
  Status Handshake(wire::Op op, const Encoded& body, msg::HelloReply* reply);
  // Whether this side wants bulk lz4 (HIPR_COMPRESS; auto: a remote worker).
  bool WantLz4() const;
  // Resume (wire.h kFeatureResume; docs/operations.md "Resuming
  // sessions"). The link's relink: new connections to the worker until one
  // resumes the session or the grace period ends (every attempt logged).
  Status Relink(uint64_t received, const Status& why, const std::atomic<bool>& closed,
                ResumableLink::Relinked* out);
  // One attempt: connect, the resuming hello (and authentication), the
  // worker's count. Not ok and not kLinkDown/kTimeout/kUnavailable: the
  // worker refused, for good.
  Status ResumeOnce(uint64_t received, std::chrono::steady_clock::time_point deadline,
                    const std::atomic<bool>& closed, std::unique_ptr<Connection>* conn, uint64_t* peer_received);
  // Past kKeepLimitBytes kept for a resend: a kLinkAck round trip, whose
  // reply tells that the worker has them all.
  Status BoundKept();
  // At exit (atexit, for every resumable session): tells the worker that
  // this process is leaving, so that the drop of its link ends the session
  // at once rather than after the grace period.
  void Leave();
  static void LeaveAll();
  Status AdoptWindow(const msg::AddressWindow& offered, AddressRange* window);
  void StartFlusher();
  void FlusherLoop();

  // A call waiting for its reply. Owned by the waiting thread; the reader
  // fills it in.
  struct Pending {
    uint16_t reply_op = 0;
    uint32_t id = 0;
    const iovec* recv_bulk = nullptr;  // Filled when the reply's error is 0.
    int recv_count = 0;
    // A PostCopyFromDevice: nobody waits; owned by pending_ (the reader
    // deletes it) and recv_bulk points into `detached_bulk`.
    bool detached = false;
    bool send_pinned = false;  // The request's bulk is pinned memory.
    bool recv_pinned = false;  // recv_bulk is pinned memory (detached copies' always is).
    std::vector<iovec> detached_bulk;
    // A CopyChanged: the reply names its runs, read into changed_dst at
    // their offsets.
    uint8_t* changed_dst = nullptr;
    uint64_t changed_size = 0;
    std::vector<std::pair<uint64_t, uint64_t>>* changed_runs = nullptr;
    std::vector<uint8_t> body;  // The reply's body.
    bool done = false;          // Under the session's recv_mu_.
    Status status;              // Under the session's recv_mu_.
  };

  Status PostEncoded(uint16_t op, const uint8_t* body, size_t len, const iovec* bulk, int count);
  // Sends the batch and then `op` (if op != 0) with its bulk, in as few
  // writevs as possible.
  Status SendLocked(uint16_t op, uint32_t id, const uint8_t* body, size_t len, const iovec* bulk,
                    int count, bool bulk_pinned = false) HIPR_REQUIRES(send_mu_);
  // Registers `p`, sends the batch and the request, and waits for the reply.
  Status Exchange(uint16_t op, const uint8_t* body, size_t len, const iovec* bulk, int count, Pending* p);
  // Waits until `p` is answered, reading the socket whenever no other waiter
  // does. Returns its status (the session's, once dead).
  Status AwaitReply(Pending* p);
  // The loop of AwaitReply: until `done()` (called with recv_mu_ held).
  Status AwaitUntil(const std::function<bool()>& done);
  void StartCallbackThread();
  // REQUIRES: the reader role. Reads one frame and deals with it: a reply
  // goes to its waiter, heartbeats restart the peer timeout, kOutput frames
  // (device printf) are written to this process's stdout.
  Status ReadOneFrame();
  // REQUIRES: the reader role. The reply of a CopyChanged and its bulk.
  Status ReadChanged(Pending* p);
  // The callback thread: runs host callbacks the worker announced, and reads
  // the socket while callbacks wait and no caller does.
  void CallbackLoop();
  uint32_t NextRequestId() { return next_id_.fetch_add(1, std::memory_order_relaxed); }

  // Makes the session dead (first reason wins and is logged), wakes every
  // waiter and returns DeadStatus().
  Status MarkDead(const Status& why, bool log = true);
  // Fails fast once dead; otherwise passes `st` through, killing the session
  // if `st` is not ok.
  Status Check(const Status& st) { return st.ok() ? st : MarkDead(st); }

  // Resume: the client tells the worker what it received (kLinkAck, in
  // the next batch) once this much more has arrived; and past this much
  // kept for a resend, waits for the worker to have it.
  static constexpr uint64_t kAckEveryBytes = ResumableLink::kBlockBytes;
  static constexpr uint64_t kKeepLimitBytes = uint64_t{64} << 20;

  const Config config_;
  const std::string server_;  // For messages.
  ResumableLink* link_ = nullptr;  // conn_, where the hello agreed resume; immutable after Open.
  uint32_t resume_grace_ms_ = 0;   // Immutable after Open.
  std::atomic<bool> leaving_{false};  // Leave() ran: no more resumes.
  Mutex resume_mu_;
  std::vector<uint8_t> resume_secret_ HIPR_GUARDED_BY(resume_mu_);  // Spent by each resume, renewed by its reply.
  std::atomic<bool> opened_{false};  // Past the hello: a link failure is logged where it is seen.
  std::unique_ptr<Connection> conn_;  // What the transport registry connected (and upgraded).
  std::unique_ptr<transport::ClientUpgrade> upgrade_;  // Offered in the hello; gone after AdoptTransport.
  std::unique_ptr<HostSegment> host_segment_;
  msg::HelloReply hello_;  // Immutable after Open.
  std::vector<msg::DeviceInfo> devices_;
  std::vector<std::unique_ptr<const DeviceAnswers>> answers_;  // One per device; immutable after Open.
  uint32_t chunk_bytes_ = wire::kDefaultChunkBytes;
  bool lz4_to_device_ = false;    // Immutable after Open.
  bool lz4_from_device_ = false;  // Immutable after Open.
  bool copy_changed_ = false;     // Immutable after Open.
  bool worker_status_ = false;    // Immutable after Open.
  std::string transport_;         // Immutable after Open.
  ChunkInflater inflater_;        // Used by the reader role alone.

  std::atomic<bool> dead_{false};
  std::atomic<bool> abandoned_{false};
  mutable Mutex dead_mu_;
  std::string dead_reason_ HIPR_GUARDED_BY(dead_mu_);
  StatusCode dead_cause_ HIPR_GUARDED_BY(dead_mu_) = StatusCode::kOk;  // The first reason's code.

  std::atomic<uint32_t> next_id_{1};

  Mutex recv_mu_;
  std::condition_variable recv_cv_;  // A call was answered, the reader role freed, or the session died.
  std::unordered_map<uint32_t, Pending*> pending_ HIPR_GUARDED_BY(recv_mu_);
  bool reading_ HIPR_GUARDED_BY(recv_mu_) = false;  // A waiter reads the socket.
  std::vector<uint8_t> scratch_;  // Used by the reader alone: bodies of frames that are not replies.

  struct HostCallback {
    uint64_t id = 0;
    std::function<void(int32_t)> fn;
    int32_t error = 0;
  };
  std::unordered_map<uint64_t, HostCallback> waiting_callbacks_ HIPR_GUARDED_BY(recv_mu_);  // Not announced yet.
  std::deque<HostCallback> ready_callbacks_ HIPR_GUARDED_BY(recv_mu_);  // Announced, to run.
  uint64_t next_callback_id_ HIPR_GUARDED_BY(recv_mu_) = 1;
  bool stopping_callbacks_ HIPR_GUARDED_BY(recv_mu_) = false;  // Only ~Session.
  int detached_copies_ HIPR_GUARDED_BY(recv_mu_) = 0;  // PostCopyFromDevice not landed yet.
  int32_t async_error_ HIPR_GUARDED_BY(recv_mu_) = 0;  // First error of one, not yet taken.
  std::once_flag callback_thread_once_;
  std::thread callback_thread_;  // Joined only by ~Session.

  Mutex send_mu_;
  std::vector<uint8_t> outgoing_ HIPR_GUARDED_BY(send_mu_);  // The batch being sent.
  uint64_t acked_to_worker_ HIPR_GUARDED_BY(send_mu_) = 0;  // The last kLinkAck's count.
  ChunkCompressor compressor_ HIPR_GUARDED_BY(send_mu_);  // Bulk to the device, when lz4_to_device_.

  Mutex batch_mu_;
  std::condition_variable batch_cv_;  // Batch became non-empty, dead, or stopping.
  SendBatch batch_ HIPR_GUARDED_BY(batch_mu_);
  bool stopping_ HIPR_GUARDED_BY(batch_mu_) = false;  // Only ~Session (tests).
  bool has_flusher_ = false;          // Set once before any Post.
  std::thread flusher_;  // Joined only by ~Session: production sessions are leaked.
};

}  // namespace hipr::client
