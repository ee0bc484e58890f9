// The one table of HIPR operations. Each row is
//
//   X(Name, code, Request, Reply, Mode, Flags, "note")
//
// - Name: the op (wire::Op::kName), code its 16-bit op code, grouped by
//   family in the high byte. Codes are the wire: never reuse or renumber.
// - Request: the body's message type in messages.h (msg::Request), or
//   NoBody (no payload) or RawBytes (the payload is bulk bytes, not msgpack).
// - Reply: the reply's body type, or NoReply.
// - Mode: who sends it and whether a reply follows:
//     Call        client -> worker; the client waits for the reply.
//     Post        client -> worker, fire-and-forget: an error is deferred
//                 to the next synchronizing call's reply.
//     CallOrPost  client -> worker; the body's want_reply decides.
//     Handshake   client -> worker before the session (handshake.cc).
//     ToClient    worker -> client, unsolicited.
//     Link        either way, below calls: heartbeats and bulk chunks.
// - Flags (or'ed, kPlain for none):
//     kSynchronizing  the reply waits for queued device work.
//     kStreamOrdered  it runs in the order of its stream.
//     kGraphNode      an executable graph may replay it (a node is its
//                     encoded Request; docs/protocol.md "Graphs").
//     kBulkIn         kData frames with the request's bytes follow it.
//     kBulkOut        kData frames with the reply's bytes follow the reply.
//
// Everything else derives from this table: the Op enum and OpName
// (wire.h), the typed sends of the client (the op comes with its message
// type, so a mismatch does not compile), the worker's dispatch (one handler
// per op, checked at compile time), the graph node types the worker
// replays, the codec round-trip tests and the op table of docs/protocol.md
// (`hipr-op-table --check`, a ctest).
//
// The macro names types only as tokens: this header includes nothing, so
// wire.h can expand it without the messages (op_traits.h gives the types).
#pragma once

// clang-format off
#define HIPR_OPS(X)                                                                                                   \
  /* Device 0x00xx. */                                                                                                \
  X(DeviceSynchronize, 0x0001, DeviceRequest, CallReply, Call, kSynchronizing, "")                                     \
  X(DeviceReset, 0x0002, DeviceRequest, CallReply, Call, kSynchronizing, "destroys the device's streams, events, modules and memory") \
  X(MemGetInfo, 0x0003, DeviceRequest, MemInfoReply, Call, kPlain, "")                                                 \
  X(WorkerStatus, 0x0004, WorkerStatusRequest, WorkerStatusReply, Call, kPlain,                                        \
    "hipr-smi: the devices' health and the sessions of the caller's tenant; offered as feature `worker-status`")    \
  /* Memory 0x01xx. */                                                                                                \
  X(Malloc, 0x0101, MallocRequest, MallocReply, Call, kPlain, "size 0 gives a null address")                           \
  X(Free, 0x0102, FreeRequest, NoReply, Post, kPlain, "")                                                              \
  X(Memset, 0x0103, MemsetRequest, NoReply, Post, kStreamOrdered | kGraphNode,                                          \
    "blocking forms (`hipMemset`, `hipMemsetD32`, ...) are followed by `StreamSynchronize`: clr waits for the fill")   \
  X(HostRegister, 0x0104, HostRangeRequest, CallReply, Call, kPlain, "shm only: a range of the host segment now holds pinned memory") \
  X(HostUnregister, 0x0105, HostRangeRequest, CallReply, Call, kPlain, "shm only: ...and no longer does")              \
  X(IpcGetMemHandle, 0x0106, IpcGetMemHandleRequest, IpcGetMemHandleReply, Call, kPlain, "64 opaque bytes, the device's") \
  X(IpcOpenMemHandle, 0x0107, IpcOpenMemHandleRequest, IpcOpenMemHandleReply, Call, kPlain, "maps another session's exported allocation") \
  X(IpcCloseMemHandle, 0x0108, IpcCloseMemHandleRequest, CallReply, Call, kPlain, "")                                  \
  X(TextureCreate, 0x0109, TextureCreateRequest, TextureCreateReply, Call, kPlain, "a texture object over linear (1) or pitched 2-D (2) device memory") \
  X(TextureDestroy, 0x010A, TextureDestroyRequest, NoReply, Post, kPlain, "")                                          \
  /* Virtual memory management (hipMemAddressReserve, hipMemCreate, hipMemMap...). */                                \
  X(VmmReserve, 0x010B, VmmReserveRequest, VmmReserveReply, Call, kPlain, "the worker chooses the address")            \
  X(VmmFree, 0x010C, VmmRangeRequest, CallReply, Call, kPlain, "exactly a reservation, nothing mapped in it")          \
  X(VmmCreate, 0x010D, VmmCreateRequest, CallReply, Call, kPlain, "physical memory named by a fresh client id")        \
  X(VmmRelease, 0x010E, VmmHandleRequest, CallReply, Call, kPlain, "mapped memory lives on until unmapped")            \
  X(VmmMap, 0x010F, VmmMapRequest, CallReply, Call, kPlain, "inside one reservation, offset 0; no access yet")         \
  X(VmmUnmap, 0x0110, VmmRangeRequest, CallReply, Call, kSynchronizing, "whole adjacent mappings, once queued work has run") \
  X(VmmSetAccess, 0x0111, VmmSetAccessRequest, CallReply, Call, kPlain, "whole mappings")                              \
  X(VmmExport, 0x0112, VmmHandleRequest, IpcGetMemHandleReply, Call, kPlain, "a token another session of this worker can import") \
  X(VmmImport, 0x0113, VmmImportRequest, VmmImportReply, Call, kPlain, "names another session's export with a fresh client id") \
  X(MemLease, 0x0114, MemLeaseRequest, MemLeaseReply, Call, kPlain, "memory-lease: up to want bytes (at least need) taken ahead; replaces the device's lease") \
  X(MemLeasePlace, 0x0115, MemLeasePlaceRequest, NoReply, Post, kPlain, "memory-lease: part of the lease becomes an allocation") \
  X(MemLeaseReturn, 0x0116, DeviceRequest, NoReply, Post, kPlain, "memory-lease: the unplaced rest goes back") \
  /* Copies 0x02xx: every copy names a rectangular device region (1-D: height 1). */                                  \
  X(CopyToDevice, 0x0201, CopyToDeviceRequest, CallReply, CallOrPost, kStreamOrdered | kBulkIn | kSynchronizing, "bulk: width*height bytes, packed; synchronizing when want_reply") \
  X(CopyFromDevice, 0x0202, CopyFromDeviceRequest, CallReply, Call, kStreamOrdered | kBulkOut | kSynchronizing, "reply bulk (when error is 0): width*height bytes, packed") \
  X(CopyChangedFromDevice, 0x0204, CopyChangedRequest, CopyChangedReply, Call, kStreamOrdered | kBulkOut | kSynchronizing, "managed memory's read-back: only what was written since the last one; offered as feature `copy-changed`") \
  X(CopyOnDevice, 0x0203, CopyOnDeviceRequest, CallReply, CallOrPost, kStreamOrdered | kGraphNode, "synchronizing when want_reply") \
  X(PeerListen, 0x0205, PeerListenRequest, PeerListenReply, Call, kPlain, "peer-copy: a one-shot port and token for bytes from another worker") \
  X(PeerAccept, 0x0206, PeerAcceptRequest, NoReply, Post, kPlain, "peer-copy: takes those bytes into dst (blocks the session until they land)") \
  X(PeerSend, 0x0207, PeerSendRequest, CallReply, Call, kStreamOrdered | kSynchronizing, "peer-copy: src's bytes straight to another worker's port, in stream order") \
  /* Modules and kernels 0x03xx: modules and functions are ids the client names. */                                  \
  X(ModuleLoad, 0x0301, ModuleLoadRequest, ModuleLoadReply, Call, kBulkIn, "bulk when bulk_bytes > 0: the code object, maybe lz4") \
  X(ModuleUnload, 0x0302, ModuleUnloadRequest, NoReply, Post, kPlain, "")                                              \
  X(LaunchKernel, 0x0311, LaunchRequest, NoReply, Post, kStreamOrdered | kGraphNode, "")                               \
  /* Streams and events 0x04xx: handles are ids the client names. */                                                  \
  X(StreamCreate, 0x0401, StreamCreateRequest, NoReply, Post, kPlain, "cu_mask: hipExtStreamCreateWithCUMask's words, empty for none") \
  X(StreamDestroy, 0x0402, StreamRequest, NoReply, Post, kPlain, "")                                                   \
  X(StreamSynchronize, 0x0403, StreamRequest, CallReply, Call, kSynchronizing, "")                                     \
  X(StreamQuery, 0x0404, StreamRequest, CallReply, Call, kPlain, "hipErrorNotReady while busy")                        \
  X(StreamWaitEvent, 0x0405, StreamWaitEventRequest, NoReply, Post, kStreamOrdered | kGraphNode, "a graph node has flags 0") \
  X(StreamHostCallback, 0x0406, StreamHostCallbackRequest, NoReply, Post, kStreamOrdered | kGraphNode, "HostCallbackReady when the stream gets there; a graph's host node has an empty body") \
  X(HostCallbackDone, 0x0407, HostCallbackDone, NoReply, Post, kPlain, "the client ran it; the stream goes on")         \
  X(StreamWaitValue, 0x0408, StreamWaitValueRequest, NoReply, Post, kStreamOrdered | kGraphNode, "later work waits until the value meets the condition") \
  X(StreamWriteValue, 0x0409, StreamWriteValueRequest, NoReply, Post, kStreamOrdered | kGraphNode, "4 or 8 bytes, aligned, one store") \
  X(EventCreate, 0x0411, EventCreateRequest, NoReply, Post, kPlain, "")                                                \
  X(EventDestroy, 0x0412, EventRequest, NoReply, Post, kPlain, "")                                                     \
  X(EventRecord, 0x0413, EventRecordRequest, NoReply, Post, kStreamOrdered | kGraphNode, "")                           \
  X(EventSynchronize, 0x0414, EventRequest, CallReply, Call, kSynchronizing, "")                                       \
  X(EventQuery, 0x0415, EventRequest, CallReply, Call, kPlain, "")                                                     \
  X(EventElapsedTime, 0x0416, EventElapsedRequest, EventElapsedReply, Call, kPlain, "")                                \
  X(IpcGetEventHandle, 0x0417, EventRequest, IpcGetMemHandleReply, Call, kPlain, "an event made with hipEventInterprocess") \
  X(IpcOpenEventHandle, 0x0418, IpcOpenEventHandleRequest, CallReply, Call, kPlain, "event: a fresh client id")        \
  /* Graphs 0x042x: executable graphs named by the client. */                                                         \
  X(GraphCreate, 0x0421, GraphCreateRequest, NoReply, Post, kPlain, "the nodes, in an order their edges allow")        \
  X(GraphLaunch, 0x0422, GraphLaunchRequest, NoReply, Post, kStreamOrdered, "every node on the launch's stream; HostCallbackReady per host node") \
  X(GraphDestroy, 0x0423, GraphRequest, NoReply, Post, kPlain, "")                                                     \
  /* Generated calls 0x05xx (shim_gen/annotations.txt): one op for all, the body names the function. */               \
  X(ApiCall, 0x0501, ApiCallHead, CallReply, CallOrPost, kPlain, "[fn, device, want_reply, args]; reply [error] or [0, outputs]") \
  /* Session 0x0Fxx. */                                                                                               \
  X(Hello, 0x0F01, HelloRequest, HelloReply, Handshake, kPlain, "the first frame")                                     \
  X(Goodbye, 0x0F02, NoBody, NoReply, Post, kPlain, "the client leaves")                                               \
  X(Heartbeat, 0x0F03, NoBody, NoReply, Link, kPlain, "proves the sender is alive")                                    \
  X(Data, 0x0F04, RawBytes, NoReply, Link, kPlain, "a chunk of bulk bytes")                                            \
  X(Fatal, 0x0F05, Fatal, NoReply, ToClient, kPlain, "the session ends; says why")                                     \
  X(Output, 0x0F06, Output, NoReply, ToClient, kPlain, "text device code printed")                                     \
  X(HostCallbackReady, 0x0F07, HostCallbackReady, NoReply, ToClient, kPlain, "a stream reached a host callback")       \
  X(ShmSetup, 0x0F08, ShmSetup, NoReply, ToClient, kPlain, "first on a unix socket: the shm segment (SCM_RIGHTS)")      \
  X(DataLz4, 0x0F09, RawBytes, NoReply, Link, kPlain, "a chunk of bulk bytes, lz4; only where agreed")                 \
  X(Auth, 0x0F0A, AuthRequest, HelloReply, Handshake, kPlain, "the answer to the hello's challenge")                 \
  X(RdmaProbe, 0x0F0B, RdmaProbe, RdmaProbe, Handshake, kPlain, "over the queue pair the hello agreed, before the switch") \
  X(RdmaVerdict, 0x0F0C, RdmaVerdict, NoReply, Link, kPlain, "client to worker over tcp after the probe: switch to rdma or stay") \
  X(LinkAck, 0x0F0D, LinkAck, CallReply, CallOrPost, kPlain, "resumable links: the bytes the client has received; a reply when want_reply")
// clang-format on
