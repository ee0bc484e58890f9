// Stream and event entry points. Streams and events are named by the client
// (HandleTable), so creating, destroying, recording and waiting cost no round
// trip: they are fire-and-forget frames. Synchronize, query and elapsed time
// are round trips. Handles are validated locally: an unknown or destroyed
// handle is hipErrorInvalidHandle before anything is sent.
#include <algorithm>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "client_stub/api/api_common.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/kernels/launch_attributes.h"
#include "client_stub/managed/managed_vars.h"
#include "client_stub/graphs/stream_memops.h"

using namespace hipr;
using namespace hipr::client;

namespace {

// ROCm/clr hip::Stream::Priority: High = -1, Normal = 0, Low = 1.
constexpr int kGreatestPriority = -1;
constexpr int kLeastPriority = 1;

// hipEventDisableSystemFence (6.x and 7.x headers; clr since 5.6): a third
// release flag.
constexpr unsigned kEventDisableSystemFence = 0x20000000;
constexpr unsigned kEventReleaseFlags = hipEventReleaseToDevice | hipEventReleaseToSystem | kEventDisableSystemFence;
constexpr unsigned kEventFlags = hipEventDefault | hipEventBlockingSync | hipEventDisableTiming |
                                 hipEventInterprocess | kEventReleaseFlags;

// Client-side stream state beyond StreamRecord, under StreamStateMutex():
// synchronization policies set with hipStreamSetAttribute and CU masks, by
// (device, protocol stream id), since the null stream and per-thread streams
// have no StreamRecord. Streams not listed have the default policy, Auto.
std::mutex& StreamStateMutex() {
  static std::mutex mu;
  return mu;
}
std::map<std::pair<int, uint64_t>, int>& Policies() {
  static auto* policies = new std::map<std::pair<int, uint64_t>, int>;  // Never destroyed: used at exit.
  return *policies;
}
int SyncPolicyOf(const StreamTarget& t) {
  std::lock_guard lock(StreamStateMutex());
  auto it = Policies().find({t.device, t.id});
  return it == Policies().end() ? kSyncPolicyAuto : it->second;
}
void SetSyncPolicy(const StreamTarget& t, int policy) {
  std::lock_guard lock(StreamStateMutex());
  if (policy == kSyncPolicyAuto)
    Policies().erase({t.device, t.id});
  else
    Policies()[{t.device, t.id}] = policy;
}
// CU masks of streams made by hipExtStreamCreateWithCUMask, by (device,
// protocol stream id); other streams use every compute unit.
std::map<std::pair<int, uint64_t>, std::vector<uint32_t>>& CuMasks() {
  static auto* masks = new std::map<std::pair<int, uint64_t>, std::vector<uint32_t>>;  // Never destroyed.
  return *masks;
}

void ForgetStreamState(const StreamTarget& t) {
  SetSyncPolicy(t, kSyncPolicyAuto);
  std::lock_guard lock(StreamStateMutex());
  CuMasks().erase({t.device, t.id});
}

hipError_t CreateStream(hipStream_t* stream, unsigned flags, int priority, std::vector<uint32_t> cu_mask = {}) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (stream == nullptr) return hipErrorInvalidValue;
  if (flags != hipStreamDefault && flags != hipStreamNonBlocking) return hipErrorInvalidValue;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  priority = std::clamp(priority, kGreatestPriority, kLeastPriority);
  StreamRecord record;
  hipStream_t handle = Client::Get().handles().NewStream(device, flags, priority, &record);
  msg::StreamCreateRequest request{device, record.id, flags, priority, {}};
  request.cu_mask = cu_mask;
  Status st = s->Post<wire::Op::kStreamCreate>(request);
  if (!st.ok()) {
    Client::Get().handles().RemoveStream(handle, &record);
    return ToHipError(st);
  }
  if (!cu_mask.empty()) {
    std::lock_guard lock(StreamStateMutex());
    CuMasks()[{device, record.id}] = std::move(cu_mask);
  }
  *stream = handle;
  return hipSuccess;
}

// A synchronous stream call (synchronize, query): the worker's error.
template <wire::Op op>
hipError_t StreamCall(hipStream_t stream) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return AsDestroyedStream(e);
  StreamLedger::Invisible();  // It queues no work.
  if (hipError_t e = Graphs().CheckNotCapturing(target.device, target.id, false); e != hipSuccess) return e;
  Client& c = Client::Get();
  if (op == wire::Op::kStreamSynchronize && Managed().empty() && c.ledger().Clean()) {
    // Nothing the host can observe is queued (no kernel, host callback,
    // copy into host memory or event record, on any stream, not seen
    // complete): later work on any stream is ordered after this stream's
    // by a fence instead, and an error of its work comes back at the next
    // synchronizing call. No round trip.
    stats::Add(stats::Get().waits_skipped);
    return ToHipError(c.fences().Raise(*s, target.device, target.id));
  }
  msg::CallReply reply;
  const Client::SyncTicket ticket = c.BeginSync(target.device, target.id);
  Status st = s->Call<op>(msg::StreamRequest{target.id, target.device}, &reply);
  // A query answering hipSuccess is a synchronisation point too.
  const hipError_t result =
      AfterSync(*s, target.device, target.id, st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st));
  c.EndSync(ticket, result);
  return result;
}

hipError_t CreateEvent(hipEvent_t* event, unsigned flags) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (event == nullptr) return hipErrorInvalidValue;
  // As the runtime: known flags only, at most one release flag, and an
  // interprocess event must not time.
  const unsigned release = flags & kEventReleaseFlags;
  if ((flags & ~kEventFlags) != 0 || (release & (release - 1)) != 0 ||
      ((flags & hipEventInterprocess) != 0 && (flags & hipEventDisableTiming) == 0))
    return hipErrorInvalidValue;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  EventRecord record;
  hipEvent_t handle = Client::Get().handles().NewEvent(device, flags, &record);
  Status st = s->Post<wire::Op::kEventCreate>(msg::EventCreateRequest{device, record.id, flags});
  if (!st.ok()) {
    Client::Get().handles().RemoveEvent(handle, &record);
    return ToHipError(st);
  }
  *event = handle;
  return hipSuccess;
}

// A synchronous event call (synchronize, query): the worker's error.
template <wire::Op op>
hipError_t EventCall(hipEvent_t event) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  HandleTable& handles = Client::Get().handles();
  EventRecord record;
  if (!handles.FindEvent(event, &record)) return hipErrorInvalidHandle;
  // Last recorded in a stream that still captures: nothing to wait for or
  // query (clr invalidates the capture and refuses).
  if (hipError_t e = Graphs().CheckEventNotCaptured(record.id); e != hipSuccess) return e;
  // Known complete (never recorded, or seen complete since its last
  // record): answered here. Such an answer collects no deferred error; the
  // next call that reaches the worker does.
  // Not for an interprocess event: other processes record it too.
  if (record.known_done == record.recorded && (record.flags & hipEventInterprocess) == 0) return hipSuccess;
  msg::CallReply reply;
  Status st = s->Call<op>(record.device, msg::EventRequest{record.id}, &reply);
  const hipError_t result = st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
  if (result == hipSuccess) handles.NoteEventDone(event, record.recorded);
  // The event's stream is not tracked here: read back on its device's null
  // stream (which the completed event precedes).
  return AfterSync(*s, record.device, 0, result);
}

}  // namespace

HIPR_EXPORT hipError_t hipStreamCreate(hipStream_t* stream) {
  return ApiCall("hipStreamCreate", [&] { return CreateStream(stream, hipStreamDefault, 0); });
}

HIPR_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned int flags) {
  return ApiCall("hipStreamCreateWithFlags", [&] { return CreateStream(stream, flags, 0); });
}

HIPR_EXPORT hipError_t hipStreamCreateWithPriority(hipStream_t* stream, unsigned int flags,
                                                   int priority) {
  return ApiCall("hipStreamCreateWithPriority",
                 [&] { return CreateStream(stream, flags, priority); });
}

HIPR_EXPORT hipError_t hipStreamDestroy(hipStream_t stream) {
  return ApiCall("hipStreamDestroy", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (IsLegacyNullStream(stream) || stream == hipStreamPerThread) return hipErrorInvalidHandle;
    StreamRecord record;
    if (!Client::Get().handles().RemoveStream(stream, &record)) return hipErrorContextIsDestroyed;
    ForgetStreamState(StreamTarget{record.id, record.device});
    Graphs().ForgetStream(record.id);  // Its capture ends, as clr's hipStreamDestroy.
    return ToHipError(s->Post<wire::Op::kStreamDestroy>(msg::StreamRequest{record.id, record.device}));
  });
}

HIPR_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  return ApiCall("hipStreamSynchronize", [&] { return StreamCall<wire::Op::kStreamSynchronize>(stream); });
}

HIPR_EXPORT hipError_t hipStreamQuery(hipStream_t stream) {
  return ApiCall("hipStreamQuery", [&] { return StreamCall<wire::Op::kStreamQuery>(stream); });
}

// The _spt forms: the null stream means the calling thread's per-thread
// stream.
HIPR_EXPORT hipError_t hipStreamSynchronize_spt(hipStream_t stream) {
  return ApiCall("hipStreamSynchronize_spt", [&] {
    return StreamCall<wire::Op::kStreamSynchronize>(stream == nullptr ? hipStreamPerThread : stream);
  });
}

HIPR_EXPORT hipError_t hipStreamQuery_spt(hipStream_t stream) {
  return ApiCall("hipStreamQuery_spt", [&] {
    return StreamCall<wire::Op::kStreamQuery>(stream == nullptr ? hipStreamPerThread : stream);
  });
}

HIPR_EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event, unsigned int flags) {
  return ApiCall("hipStreamWaitEvent", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    EventRecord e;
    if (event == nullptr || !Client::Get().handles().FindEvent(event, &e)) return hipErrorInvalidHandle;
    StreamTarget target;
    if (hipError_t err = ResolveStream(stream, &target); err != hipSuccess) return err;
    if (flags != 0) return hipErrorInvalidValue;
    if (hipError_t captured = hipSuccess; Graphs().CaptureStreamWaitEvent(target.device, target.id, e.id, &captured))
      return captured;
    if (!s->SameWorker(target.device, e.device)) {
      // Another worker's event (HIPR_SERVER lists several): no stream here
      // can wait for it, so the host does, which orders everything queued
      // on the stream from now on after it.
      if (e.known_done == e.recorded) return hipSuccess;
      msg::CallReply reply;
      Status st = s->Call<wire::Op::kEventSynchronize>(e.device, msg::EventRequest{e.id}, &reply);
      if (!st.ok()) return ToHipError(st);
      if (reply.error == hipSuccess) Client::Get().handles().NoteEventDone(event, e.recorded);
      return static_cast<hipError_t>(reply.error);
    }
    return ToHipError(
        s->Post<wire::Op::kStreamWaitEvent>(msg::StreamWaitEventRequest{target.id, e.id, flags, target.device}));
  });
}

HIPR_EXPORT hipError_t hipStreamWaitEvent_spt(hipStream_t stream, hipEvent_t event, unsigned int flags) {
  return hipStreamWaitEvent(stream == nullptr ? hipStreamPerThread : stream, event, flags);
}

HIPR_EXPORT hipError_t hipStreamGetFlags_spt(hipStream_t stream, unsigned int* flags) {
  return hipStreamGetFlags(stream == nullptr ? hipStreamPerThread : stream, flags);
}

HIPR_EXPORT hipError_t hipStreamGetPriority_spt(hipStream_t stream, int* priority) {
  return hipStreamGetPriority(stream == nullptr ? hipStreamPerThread : stream, priority);
}

// Runs on the client, in stream order: the worker holds the stream at this
// point until the session's callback thread has run `callback` with the
// stream's status (Remote::PostHostCallback).
HIPR_EXPORT hipError_t hipStreamAddCallback(hipStream_t stream, hipStreamCallback_t callback, void* user_data,
                                            unsigned int flags) {
  return ApiCall("hipStreamAddCallback", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (callback == nullptr || flags != 0) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return AsDestroyedStream(e);
    // Captured: a host node that calls back with the stream the graph is
    // launched on.
    if (hipError_t captured = hipSuccess;
        Graphs().AnyCapture() &&
        Graphs().CaptureNode(target.device, target.id, HostFnNode{nullptr, user_data, callback}, &captured))
      return captured;
    return ToHipError(s->PostHostCallback(target.device, target.id, [stream, callback, user_data](int32_t error) {
      callback(stream, static_cast<hipError_t>(error), user_data);
    }));
  });
}

// hipLaunchHostFunc (exported by ROCm >= 5.3, not by 5.2's library; its
// header declares it): a host function in stream order, run on the client
// like a stream callback; in a capture it becomes a host node.
HIPR_EXPORT hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* user_data) {
  return ApiCall("hipLaunchHostFunc", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (fn == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return AsDestroyedStream(e);
    if (hipError_t captured = hipSuccess;
        Graphs().AnyCapture() &&
        Graphs().CaptureNode(target.device, target.id, HostFnNode{fn, user_data, nullptr}, &captured))
      return captured;
    return ToHipError(s->PostHostCallback(target.device, target.id, [fn, user_data](int32_t) { fn(user_data); }));
  });
}

HIPR_EXPORT hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void* user_data) {
  return hipLaunchHostFunc(stream == nullptr ? hipStreamPerThread : stream, fn, user_data);
}

HIPR_EXPORT hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback, void* user_data,
                                                unsigned int flags) {
  return hipStreamAddCallback(stream == nullptr ? hipStreamPerThread : stream, callback, user_data, flags);
}

// ROCm 7.1: a stream's id, unique in the process: the protocol's stream id
// (0 for the legacy null stream; the calling thread's per-thread stream has
// one of its own).
HIPR_EXPORT hipError_t hipStreamGetId(hipStream_t stream, unsigned long long* id) {
  return ApiCall("hipStreamGetId", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (id == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
    *id = target.id;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream) {
  return hipEventRecord(event, stream == nullptr ? hipStreamPerThread : stream);
}

// ROCm 6.x: the device a stream belongs to (the null stream: the calling
// thread's current device). Answered locally.
HIPR_EXPORT hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device) {
  return ApiCall("hipStreamGetDevice", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (device == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return AsDestroyedStream(e);
    StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
    *device = target.device;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int* flags) {
  return ApiCall("hipStreamGetFlags", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    // As the runtime: the null stream has no flags to report.
    if (flags == nullptr || IsLegacyNullStream(stream)) return hipErrorInvalidValue;
    if (stream == hipStreamPerThread) {
      *flags = hipStreamDefault;
      return hipSuccess;
    }
    StreamRecord record;
    if (!Client::Get().handles().FindStream(stream, &record)) return hipErrorContextIsDestroyed;
    *flags = record.flags;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipStreamGetPriority(hipStream_t stream, int* priority) {
  return ApiCall("hipStreamGetPriority", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (priority == nullptr) return hipErrorInvalidValue;
    if (IsLegacyNullStream(stream) || stream == hipStreamPerThread) {
      *priority = 0;
      return hipSuccess;
    }
    StreamRecord record;
    if (!Client::Get().handles().FindStream(stream, &record)) return hipErrorContextIsDestroyed;
    *priority = record.priority;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDeviceGetStreamPriorityRange(int* least_priority, int* greatest_priority) {
  return ApiCall("hipDeviceGetStreamPriorityRange", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (least_priority != nullptr) *least_priority = kLeastPriority;
    if (greatest_priority != nullptr) *greatest_priority = kGreatestPriority;
    return hipSuccess;
  });
}

// --- Stream attributes (ROCm 7.1+), answered locally -------------------------
// As ROCm's runtime: the synchronization policy can be set, read and copied;
// the priority (fixed at creation) read. Any other attribute is
// hipErrorInvalidValue. The policy is kept and reported, but it does not
// change how this process waits: a synchronizing call waits for the
// worker's reply in a blocking socket read whatever the policy (the
// worker's own wait on the GPU is its runtime's default).
HIPR_EXPORT hipError_t hipStreamGetAttribute(hipStream_t stream, int attr, HiprLaunchAttributeValue* value) {
  return ApiCall("hipStreamGetAttribute", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (value == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
    switch (attr) {
      case kLaunchAttributeSynchronizationPolicy:
        value->sync_policy = SyncPolicyOf(target);
        return hipSuccess;
      case kLaunchAttributePriority: {
        StreamRecord record;
        value->priority = Client::Get().handles().FindStream(stream, &record) ? record.priority : 0;
        return hipSuccess;
      }
      default:
        return hipErrorInvalidValue;
    }
  });
}

HIPR_EXPORT hipError_t hipStreamSetAttribute(hipStream_t stream, int attr, const HiprLaunchAttributeValue* value) {
  return ApiCall("hipStreamSetAttribute", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (value == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    hipStreamCaptureStatus capture = hipStreamCaptureStatusNone;
    if (target.id != 0 && Graphs().CaptureInfo(target.id, &capture, nullptr, nullptr, nullptr, nullptr) == hipSuccess &&
        capture != hipStreamCaptureStatusNone)
      return hipErrorStreamCaptureUnsupported;
    if (attr != kLaunchAttributeSynchronizationPolicy) return hipErrorInvalidValue;
    if (value->sync_policy < kSyncPolicyAuto || value->sync_policy > kSyncPolicyBlockingSync)
      return hipErrorInvalidValue;
    SetSyncPolicy(target, value->sync_policy);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src) {
  return ApiCall("hipStreamCopyAttributes", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget from;
    StreamTarget to;
    if (hipError_t e = ResolveStream(src, &from); e != hipSuccess) return e;
    StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
    if (hipError_t e = ResolveStream(dst, &to); e != hipSuccess) return e;
    StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
    SetSyncPolicy(to, SyncPolicyOf(from));
    return hipSuccess;
  });
}

// --- CU-masked streams (hip_ext) ------------------------------------------
// A stream restricted to the compute units whose bits are set (bit i of
// word i / 32: unit i). The worker's `hip` device creates it with the
// runtime's hipExtStreamCreateWithCUMask; the sim, which has no compute
// units, runs it as any stream. A mask that selects none of the device's
// units is hipErrorInvalidValue.
HIPR_EXPORT hipError_t hipExtStreamCreateWithCUMask(hipStream_t* stream, uint32_t size, const uint32_t* mask) {
  return ApiCall("hipExtStreamCreateWithCUMask", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (stream == nullptr || mask == nullptr || size == 0) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    const auto units = static_cast<uint32_t>(s->devices()[device].multi_processor_count);
    std::vector<uint32_t> kept(std::min(size, (units + 31) / 32));
    bool any = false;
    for (uint32_t w = 0; w < kept.size(); ++w) {
      const uint32_t valid = units - 32 * w >= 32 ? ~0u : (1u << (units - 32 * w)) - 1;
      kept[w] = mask[w] & valid;
      any = any || kept[w] != 0;
    }
    if (!any) return hipErrorInvalidValue;
    return CreateStream(stream, hipStreamDefault, 0, std::move(kept));
  });
}

// The stream's mask in `size` words (units past the device's are 0); a
// stream without one (and the null stream) uses every unit.
HIPR_EXPORT hipError_t hipExtStreamGetCUMask(hipStream_t stream, uint32_t size, uint32_t* out) {
  return ApiCall("hipExtStreamGetCUMask", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (out == nullptr || size == 0) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
    const auto units = static_cast<uint32_t>(s->devices()[target.device].multi_processor_count);
    std::vector<uint32_t> mask((units + 31) / 32);
    for (uint32_t u = 0; u < units; ++u) mask[u / 32] |= 1u << (u % 32);
    {
      std::lock_guard lock(StreamStateMutex());
      auto it = CuMasks().find({target.device, target.id});
      if (it != CuMasks().end()) mask = it->second;
    }
    for (uint32_t w = 0; w < size; ++w) out[w] = w < mask.size() ? mask[w] : 0;
    return hipSuccess;
  });
}

HIPR_EXPORT int hipGetStreamDeviceId(hipStream_t stream) {
  // Not a hipError_t function: does not touch the last error.
  try {
    if (IsLegacyNullStream(stream) || stream == hipStreamPerThread) return CurrentDevice();
    StreamRecord record;
    return Client::Get().handles().FindStream(stream, &record) ? record.device : -1;
  } catch (...) {
    return -1;
  }
}

HIPR_EXPORT hipError_t hipEventCreate(hipEvent_t* event) {
  return ApiCall("hipEventCreate", [&] { return CreateEvent(event, hipEventDefault); });
}

HIPR_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned flags) {
  return ApiCall("hipEventCreateWithFlags", [&] { return CreateEvent(event, flags); });
}

HIPR_EXPORT hipError_t hipEventDestroy(hipEvent_t event) {
  return ApiCall("hipEventDestroy", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (event == nullptr) return hipErrorInvalidHandle;
    EventRecord record;
    // As clr: a handle that is no live event (destroyed already).
    if (!Client::Get().handles().RemoveEvent(event, &record)) return hipErrorContextIsDestroyed;
    return ToHipError(s->Post<wire::Op::kEventDestroy>(record.device, msg::EventRequest{record.id}));
  });
}

HIPR_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  return ApiCall("hipEventRecord", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    EventRecord e;
    if (!Client::Get().handles().FindEvent(event, &e)) return hipErrorInvalidHandle;
    StreamTarget target;
    if (hipError_t err = ResolveStream(stream, &target); err != hipSuccess) return AsDestroyedStream(err);
    if (e.device != target.device) return hipErrorInvalidHandle;  // As the runtime.
    if (hipError_t captured = hipSuccess; Graphs().CaptureEventRecord(target.device, target.id, e.id, &captured))
      return captured;
    // Counted before it is posted: a query racing with this record must not
    // be answered from an older completion.
    Client::Get().handles().NoteEventRecorded(event);
    return ToHipError(s->Post<wire::Op::kEventRecord>(target.device, msg::EventRecordRequest{e.id, target.id}));
  });
}

// ROCm 6.4: hipEventRecordDefault (0) or hipEventRecordExternal (1). An
// external record in a capturing stream becomes an event record node of the
// capture's graph (a plain record there only orders the capture's streams).
HIPR_EXPORT hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags) {
  if (flags == 1 && Graphs().AnyCapture()) {
    hipError_t result = hipSuccess;
    bool captured = false;
    (void)ApiCall("hipEventRecordWithFlags", [&] {
      if (LiveSession() == nullptr) return hipErrorNoDevice;
      EventRecord e;
      if (!Client::Get().handles().FindEvent(event, &e)) return hipErrorInvalidHandle;
      StreamTarget target;
      if (hipError_t err = ResolveStream(stream, &target); err != hipSuccess) return AsDestroyedStream(err);
      captured = Graphs().CaptureNode(target.device, target.id, EventRecordNode{event, e.id}, &result);
      return captured ? result : hipSuccess;
    });
    if (captured || result != hipSuccess) return result;
  }
  if (flags > 1) return ApiCall("hipEventRecordWithFlags", [] { return hipErrorInvalidValue; });
  return hipEventRecord(event, stream);
}

HIPR_EXPORT hipError_t hipEventSynchronize(hipEvent_t event) {
  return ApiCall("hipEventSynchronize", [&] { return EventCall<wire::Op::kEventSynchronize>(event); });
}

HIPR_EXPORT hipError_t hipEventQuery(hipEvent_t event) {
  return ApiCall("hipEventQuery", [&] { return EventCall<wire::Op::kEventQuery>(event); });
}

HIPR_EXPORT hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  return ApiCall("hipEventElapsedTime", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ms == nullptr) return hipErrorInvalidValue;
    EventRecord a;
    EventRecord b;
    HandleTable& handles = Client::Get().handles();
    if (!handles.FindEvent(start, &a) || !handles.FindEvent(stop, &b)) return hipErrorInvalidHandle;
    // As the runtime: both on one device, and both timing.
    if (a.device != b.device || ((a.flags | b.flags) & hipEventDisableTiming) != 0)
      return hipErrorInvalidHandle;
    msg::EventElapsedReply reply;
    Status st = s->Call<wire::Op::kEventElapsedTime>(a.device, msg::EventElapsedRequest{a.id, b.id}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error == hipSuccess) *ms = reply.milliseconds;
    return static_cast<hipError_t>(reply.error);
  });
}

// Stream memory operations on device memory (4 or 8 bytes, aligned). A
// write is one store of the value in stream order (kStreamWriteValue); a wait holds the stream on
// the worker until the value meets its condition. Host memory (signal
// memory in pinned host allocations) is refused: the worker cannot watch
// this process's memory. Not capturable here: refused during capture.
namespace {

hipError_t StreamValueTarget(hipStream_t stream, void* ptr, size_t bytes, StreamTarget* target) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (hipError_t e = ResolveStream(stream, target); e != hipSuccess) return e;
  DeviceAllocation a;
  const uint64_t p = reinterpret_cast<uint64_t>(ptr);
  if (ptr == nullptr || p % bytes != 0 || !Client::Get().allocations().FindDevice(p, bytes, &a))
    return hipErrorInvalidValue;
  return Graphs().CheckNotCapturing(target->device, target->id, false);
}

hipError_t WriteValue(hipStream_t stream, void* ptr, uint64_t value, size_t bytes, unsigned flags) {
  StreamTarget target;
  if (hipError_t e = StreamValueTarget(stream, ptr, bytes, &target); e != hipSuccess) return e;
  (void)flags;  // Reserved; HIP ignores them.
  if (bytes == 4) value = static_cast<uint32_t>(value);
  msg::StreamWriteValueRequest req{target.device, target.id, reinterpret_cast<uint64_t>(ptr), value,
                                   static_cast<uint8_t>(bytes)};
  Managed().MarkWritten(*LiveSession(), target.device, target.id, ptr, bytes);
  return ToHipError(LiveSession()->Post<wire::Op::kStreamWriteValue>(req));
}

hipError_t WaitValue(hipStream_t stream, void* ptr, uint64_t value, unsigned flags, uint64_t mask, size_t bytes) {
  StreamTarget target;
  if (hipError_t e = StreamValueTarget(stream, ptr, bytes, &target); e != hipSuccess) return e;
  if (flags > hipStreamWaitValueNor) return hipErrorInvalidValue;
  msg::StreamWaitValueRequest req{target.device, target.id, reinterpret_cast<uint64_t>(ptr), value, mask, flags,
                                  static_cast<uint8_t>(bytes)};
  // A flag the host wrote into managed memory must be on the device first.
  if (Status st = Managed().Push(Client::Get(), *LiveSession(), target.device, target.id, ptr, bytes); !st.ok())
    return ToHipError(st);
  return ToHipError(LiveSession()->Post<wire::Op::kStreamWaitValue>(req));
}

}  // namespace

HIPR_EXPORT hipError_t hipStreamWriteValue32(hipStream_t stream, void* ptr, uint32_t value, unsigned int flags) {
  return ApiCall("hipStreamWriteValue32", [&] { return WriteValue(stream, ptr, value, 4, flags); });
}

HIPR_EXPORT hipError_t hipStreamWriteValue64(hipStream_t stream, void* ptr, uint64_t value, unsigned int flags) {
  return ApiCall("hipStreamWriteValue64", [&] { return WriteValue(stream, ptr, value, 8, flags); });
}

HIPR_EXPORT hipError_t hipStreamWaitValue32(hipStream_t stream, void* ptr, uint32_t value, unsigned int flags,
                                            uint32_t mask) {
  return ApiCall("hipStreamWaitValue32", [&] { return WaitValue(stream, ptr, value, flags, mask, 4); });
}

HIPR_EXPORT hipError_t hipStreamWaitValue64(hipStream_t stream, void* ptr, uint64_t value, unsigned int flags,
                                            uint64_t mask) {
  return ApiCall("hipStreamWaitValue64", [&] { return WaitValue(stream, ptr, value, flags, mask, 8); });
}

// The operations in array order on the stream, as the writes and waits
// above. Every operation is checked before any is queued.
HIPR_EXPORT hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count, HiprBatchMemOp* ops,
                                           unsigned int flags) {
  return ApiCall("hipStreamBatchMemOp", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (flags != 0) return hipErrorInvalidValue;
    std::vector<StreamMemOp> requests;
    int device = 0;
    if (hipError_t e = BatchMemOps(Client::Get(), ops, count, &requests, &device); e != hipSuccess) return e;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    if (hipError_t e = Graphs().CheckNotCapturing(target.device, target.id, false); e != hipSuccess) return e;
    for (StreamMemOp& op : requests) {
      Status st;
      if (auto* w = std::get_if<msg::StreamWaitValueRequest>(&op)) {
        w->device = target.device;
        w->stream = target.id;
        st = s->Post<wire::Op::kStreamWaitValue>(*w);
      } else if (auto* r = std::get_if<msg::StreamWriteValueRequest>(&op)) {
        r->device = target.device;
        r->stream = target.id;
        st = s->Post<wire::Op::kStreamWriteValue>(*r);
      }
      if (!st.ok()) return ToHipError(st);
    }
    return hipSuccess;
  });
}
