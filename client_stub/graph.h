// Graphs on the client: stream capture, the graph objects, instantiation.
//
// Capture happens here, not on the worker (docs/architecture.md "Graphs"
// says why): while a stream captures, its stream-ordered entry points hand
// the request they would have posted to CaptureNode(), which appends a node
// to the capture's graph instead; nothing is sent. hipGraphInstantiate
// orders the nodes (their edges allow it) and, when every node is device
// work or a host function, sends the whole executable graph once
// (kGraphCreate, fire-and-forget); hipGraphLaunch is then one kGraphLaunch
// frame. A graph with copies to or from host memory is replayed by the
// client node by node at each launch instead (the host bytes must be read
// and written at launch time, as natively), still without a round trip
// unless a node's own semantics need one (a pageable device-to-host copy).
//
// Handles: hipGraph_t, hipGraphNode_t and hipGraphExec_t are pointers to
// the records below, checked against the live sets before use.
//
// Thread-safety: every function may be called from any thread (one mutex).
// A capture belongs to whichever threads use its streams, as natively.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "protocol/messages.h"

namespace hipr::client {

// A copy with host memory on one side, replayed through the copy API.
struct HostCopyNode {
  void* dst = nullptr;
  size_t dpitch = 0;
  const void* src = nullptr;
  size_t spitch = 0;
  size_t width = 0;
  size_t height = 1;
  hipMemcpyKind kind = hipMemcpyDefault;
};

// A host function (hipGraphAddHostNode, or hipStreamAddCallback captured).
struct HostFnNode {
  hipHostFn_t fn = nullptr;
  void* user_data = nullptr;
  // hipStreamAddCallback's form, called as callback(stream, hipSuccess, data)
  // with the stream the graph is launched on.
  hipStreamCallback_t stream_callback = nullptr;
};

struct EmptyNode {};

// What a node does. Device requests keep device/stream of capture time;
// a launch replaces both.
using GraphOp = std::variant<EmptyNode, msg::LaunchRequest, msg::MemsetRequest, msg::CopyOnDeviceRequest,
                             HostCopyNode, HostFnNode>;

hipGraphNodeType NodeTypeOf(const GraphOp& op);

// While `stream` (a protocol stream id on `device`) captures: appends `op`
// after the stream's current dependencies and returns true with *result
// hipSuccess (or the capture's error). An operation on the legacy null
// stream while a blocking stream of its device captures is refused with
// hipErrorStreamCaptureImplicit (the null stream would wait for it) and
// invalidates that capture. Otherwise false: post as usual. Lock-free when
// nothing captures.
bool CaptureNode(int device, uint64_t stream, GraphOp op, hipError_t* result);

// Whether any stream captures now (a relaxed load): lets hot paths skip
// building a node.
bool AnyCapture();

// hipEventRecord/hipStreamWaitEvent during capture: an event recorded in a
// capturing stream carries that stream's dependencies, and a stream that
// waits on it joins the capture (fork/join across streams). True when the
// call was absorbed by a capture (*result says how it went); false: post
// as usual.
bool CaptureEventRecord(int device, uint64_t stream, uint64_t event, hipError_t* result);
bool CaptureStreamWaitEvent(int device, uint64_t stream, uint64_t event, hipError_t* result);

// Synchronizing calls on a capturing stream (or, for stream 0 and
// `any_capture`, while any capture runs on `device` in global mode) are not
// allowed: returns hipErrorStreamCaptureUnsupported and invalidates the
// capture; hipSuccess otherwise.
hipError_t CheckNotCapturing(int device, uint64_t stream, bool any_capture);

// hipStreamBeginCapture/EndCapture/IsCapturing/GetCaptureInfo(_v2) on a
// resolved stream id (stream 0 is refused by the caller).
hipError_t BeginCapture(int device, uint64_t stream, unsigned stream_flags, hipStreamCaptureMode mode);
hipError_t EndCapture(uint64_t stream, hipGraph_t* graph);
hipError_t CaptureInfo(uint64_t stream, hipStreamCaptureStatus* status, unsigned long long* id,
                       hipGraph_t* graph, const hipGraphNode_t** deps, size_t* dep_count);
// The calling thread's capture mode (hipThreadExchangeStreamCaptureMode).
hipStreamCaptureMode ExchangeThreadCaptureMode(hipStreamCaptureMode mode);

// Graph objects.
hipError_t GraphCreate(hipGraph_t* graph);
hipError_t GraphDestroy(hipGraph_t graph);
// Adds a node with `deps` (nodes of the same graph) to `graph`.
hipError_t GraphAddNode(hipGraph_t graph, const hipGraphNode_t* deps, size_t dep_count, int device, GraphOp op,
                        hipGraphNode_t* out);
hipError_t GraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                size_t count);
// Lists (the HIP convention: with `out` null, *count gets the number; else
// up to *count entries are written, the rest of the array nulled, and
// *count set to the number there are).
hipError_t GraphGetNodes(hipGraph_t graph, hipGraphNode_t* out, size_t* count, bool roots_only);
hipError_t GraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to, size_t* count);
hipError_t NodeGetType(hipGraphNode_t node, hipGraphNodeType* type);
hipError_t NodeGetDependencies(hipGraphNode_t node, hipGraphNode_t* out, size_t* count, bool dependents);
// A copy of a node's operation (for *GetParams).
hipError_t NodeGetOp(hipGraphNode_t node, GraphOp* op);

// Executable graphs.
hipError_t GraphInstantiate(hipGraph_t graph, hipGraphExec_t* exec, hipGraphNode_t* error_node);
hipError_t GraphExecDestroy(hipGraphExec_t exec);
// Launches `exec` on `stream` (the application's handle, for host copies and
// callbacks) resolved to (device, stream_id).
// `copy` performs a host copy node as hipMemcpy2DAsync on `stream` (the
// copy API lives above this layer).
using HostCopyFn = hipError_t (*)(const HostCopyNode& node, hipStream_t stream);
hipError_t GraphLaunch(hipGraphExec_t exec, hipStream_t stream, int device, uint64_t stream_id, HostCopyFn copy);

// fork() support (client.cc): the registry's lock is held across fork(); in
// the child it is re-created, captures in progress are dropped (their
// streams were the parent's) and executable graphs the parent's worker held
// are replayed by the client from then on (the child's session has none).
void GraphsLockForFork();
void GraphsUnlockInParent();
void GraphsResetInChild();

}  // namespace hipr::client
