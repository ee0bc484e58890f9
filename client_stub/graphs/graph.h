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
// Thread-safety: every method may be called from any thread (one mutex).
// A capture belongs to whichever threads use its streams, as natively.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <variant>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "client_stub/graphs/stream_memops.h"
#include "client_stub/session/managed_hooks.h"
#include "protocol/messages.h"

namespace hipr::client {

class Client;
class Remote;

// A copy with host memory on one side, replayed through the copy API.
struct HostCopyNode {
  void* dst = nullptr;
  size_t dpitch = 0;
  const void* src = nullptr;
  size_t spitch = 0;
  size_t width = 0;
  size_t height = 1;
  hipMemcpyKind kind = hipMemcpyDefault;
  // A 1-D copy's kind decides nothing once checked (copy_kind.h): at launch
  // the pointers alone give the direction.
  bool by_pointers = false;
  hipMemcpyKind launch_kind() const { return by_pointers ? hipMemcpyDefault : kind; }
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

// A kernel: the request LaunchKernel would post, and what the application
// named, for hipGraphKernelNodeGetParams.
struct KernelNode {
  msg::LaunchRequest request;
  const void* func = nullptr;         // The host stub or hipFunction_t given; null when unknown.
  std::vector<uint32_t> arg_offsets;  // Each explicit argument's offset in request.kernarg.
  // hipGraphKernelNodeSetAttribute's values, reported back as set.
  hipAccessPolicyWindow access_policy{};
};

// hipGraphAddEventRecordNode / hipGraphAddEventWaitNode.
struct EventRecordNode {
  hipEvent_t event = nullptr;
  uint64_t id = 0;  // Protocol event id.
};
struct EventWaitNode {
  hipEvent_t event = nullptr;
  uint64_t id = 0;
};

// A copy given as hipMemcpy3DParms (hipGraphAddMemcpyNode): the parameters
// as given and the rectangular copies they come to (one when the slices lie
// back to back, else one per slice), each device-to-device or through the
// copy API.
using CopyPiece = std::variant<msg::CopyOnDeviceRequest, HostCopyNode>;
struct Memcpy3DNode {
  hipMemcpy3DParms params{};
  std::vector<CopyPiece> pieces;
};

// A child graph node: the node owns its graph (a clone of the one given),
// which the application can query through hipGraphChildGraphNodeGetGraph.
struct ChildGraphNode {
  hipGraph_t graph = nullptr;
};

// Memory of a graph's allocation node (hipGraphAddMemAllocNode, or a
// hipMallocAsync captured): allocated when the node is made, at the address
// the node reports, and freed when the last graph, clone or executable
// graph holding the node goes (the worker frees it after the work queued
// before). Launches neither allocate nor free: the memory stays valid
// between the allocation and free nodes and beyond, which HIP allows, and
// a hipFree(Async) of it outside the graph ends only the application's use.
class GraphRegistry;
struct GraphMemory {
  // Counted in `graphs`' figures for hipDeviceGetGraphMemAttribute while it lives.
  GraphMemory(GraphRegistry* graphs, Client* client, const void* session, int device, uint64_t address, uint64_t size);
  ~GraphMemory();
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;
  GraphRegistry* graphs;  // Whose figures count it.
  Client* client;       // Whose allocation map and reservations hold it.
  const void* session;  // The Remote it came from (compared, never dereferenced).
  int device;
  uint64_t address;
  uint64_t size;
  // The parameters as given, for hipGraphMemAllocNodeGetParams (whose
  // accessDescs point here while the node lives).
  hipMemPoolProps pool{};
  std::vector<hipMemAccessDesc> access;
};

// hipGraphAddMemAllocNode's node.
struct MemAllocNode {
  std::shared_ptr<GraphMemory> memory;
};
// hipGraphAddMemFreeNode's node.
struct MemFreeNode {
  uint64_t address = 0;
};

// hipGraphAddBatchMemOpNode's node: the operations as given (shared, so
// hipGraphBatchMemOpNodeGetParams' array stays valid while the node lives)
// and the waits and writes they come to (stream_memops.h).
struct BatchMemOpNode {
  std::shared_ptr<const std::vector<HiprBatchMemOp>> given;
  std::vector<StreamMemOp> requests;
  hipCtx_t ctx = nullptr;
  unsigned flags = 0;
};

// What a node does. Device requests keep device/stream of capture time;
// a launch replaces both.
using GraphOp = std::variant<EmptyNode, KernelNode, msg::MemsetRequest, msg::CopyOnDeviceRequest, HostCopyNode,
                             HostFnNode, EventRecordNode, EventWaitNode, Memcpy3DNode, ChildGraphNode, MemAllocNode,
                             MemFreeNode, BatchMemOpNode, msg::StreamWaitValueRequest,
                             msg::StreamWriteValueRequest>;

// Node types past 5.x's hipGraphNodeType (which the graph layer numbers
// by): hipGraphNodeGetType turns them into 6.x's 10 and 11.
inline constexpr int kNodeTypeMemAlloc = 100;
inline constexpr int kNodeTypeMemFree = 101;
inline constexpr int kNodeTypeBatchMemOp = 102;  // 6.x's 14.

hipGraphNodeType NodeTypeOf(const GraphOp& op);

// User objects (hipUserObject*, hipGraphRetain/ReleaseUserObject): a
// reference-counted pointer whose destructor runs when the last reference
// goes, on the thread that drops it (a graph's, when the graph is
// destroyed; an executable graph's, once the launches made before its
// destruction have completed, on the session's callback thread). Graphs
// hold references, clones and child graph nodes copy them, and executable
// graphs take those of their graph (child graphs included). An object is a
// handle: `UserObject` is opaque.
struct UserObject;

// A copy with host memory performed as hipMemcpy2DAsync on the launch's
// stream (the copy API lives above this layer).
using HostCopyFn = hipError_t (*)(const HostCopyNode& node, hipStream_t stream);

// The graph registry: captures, graphs, nodes, executable graphs and user
// objects, behind one mutex. One per process, owned by the API edge
// (api/process_state.h) and handed to the engines that capture.
class GraphRegistry {
 public:
  GraphRegistry();
  ~GraphRegistry();
  GraphRegistry(const GraphRegistry&) = delete;
  GraphRegistry& operator=(const GraphRegistry&) = delete;

  // hipDeviceGetGraphMemAttribute's figures for `device`: the bytes graphs
  // hold now, and the most since the last ResetGraphMemoryHigh (graphs cache
  // nothing beyond their nodes' memory, so reserved is used).
  void GraphMemoryUse(int device, uint64_t* current, uint64_t* high);
  void ResetGraphMemoryHigh(int device);
  // Allocates `size` bytes on `device` in `c`'s session `s` for a memory
  // allocation node, now, at the address the node reports (pool properties
  // and access as given, for its GetParams).
  hipError_t NewGraphMemory(Client& c, Remote& s, int device, size_t size, const hipMemPoolProps* pool,
                            const hipMemAccessDesc* access, size_t access_count, std::shared_ptr<GraphMemory>* out);

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

  // hipEventQuery/hipEventSynchronize on an event last recorded in a stream
  // whose capture is active: invalidates that capture and returns
  // hipErrorCapturedEvent, as clr; hipSuccess otherwise.
  hipError_t CheckEventNotCaptured(uint64_t event);

  // hipDeviceSynchronize: not allowed while any stream captures, in any
  // mode, on any device (clr): invalidates every capture and returns
  // hipErrorStreamCaptureUnsupported; hipSuccess otherwise.
  hipError_t CheckNoCapture();

  // Whether a blocking stream (one the legacy null stream would wait for)
  // captures, on any device.
  bool AnyBlockingCapture();

  // hipStreamDestroy: a capture begun on `stream` ends (its graph is
  // dropped); a stream that joined one leaves it.
  void ForgetStream(uint64_t stream);

  // hipStreamBeginCapture/EndCapture/IsCapturing/GetCaptureInfo(_v2) on a
  // resolved stream id (stream 0 is refused by the caller). With `into` set
  // (hipStreamBeginCaptureToGraph), the capture adds its nodes to that live
  // graph after `deps` (nodes of it) instead of to a new one.
  hipError_t BeginCapture(int device, uint64_t stream, unsigned stream_flags, hipStreamCaptureMode mode,
                          hipGraph_t into = nullptr, const hipGraphNode_t* deps = nullptr, size_t dep_count = 0);
  hipError_t EndCapture(uint64_t stream, hipGraph_t* graph);
  hipError_t CaptureInfo(uint64_t stream, hipStreamCaptureStatus* status, unsigned long long* id, hipGraph_t* graph,
                         const hipGraphNode_t** deps, size_t* dep_count);
  // hipStreamUpdateCaptureDependencies: adds `nodes` (of the capture's graph)
  // to the stream's dependencies, or replaces them with `nodes`.
  hipError_t UpdateCaptureDependencies(uint64_t stream, const hipGraphNode_t* nodes, size_t count, bool replace);
  // The calling thread's capture mode (hipThreadExchangeStreamCaptureMode).
  static hipStreamCaptureMode ExchangeThreadCaptureMode(hipStreamCaptureMode mode);

  // Graph objects.
  hipError_t GraphCreate(hipGraph_t* graph);
  // A graph a child graph node owns is refused (hipErrorInvalidValue).
  hipError_t GraphDestroy(hipGraph_t graph);
  // Adds a node with `deps` (nodes of the same graph) to `graph`. A
  // ChildGraphNode's graph is cloned; the node owns the clone.
  hipError_t GraphAddNode(hipGraph_t graph, const hipGraphNode_t* deps, size_t dep_count, int device, GraphOp op,
                          hipGraphNode_t* out);
  hipError_t GraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to, size_t count);
  // Every edge must exist; none is removed otherwise.
  hipError_t GraphRemoveDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                     size_t count);
  // Removes a node and its edges (hipGraphDestroyNode).
  hipError_t DestroyNode(hipGraphNode_t node);
  // A copy of `graph` (child graphs copied too); NodeFindInClone maps a node
  // of the original to its copy.
  hipError_t GraphClone(hipGraph_t graph, hipGraph_t* clone);
  hipError_t NodeFindInClone(hipGraphNode_t node, hipGraph_t clone, hipGraphNode_t* out);
  // Lists (the HIP convention: with `out` null, *count gets the number; else
  // up to *count entries are written, the rest of the array nulled, and
  // *count set to the number there are).
  hipError_t GraphGetNodes(hipGraph_t graph, hipGraphNode_t* out, size_t* count, bool roots_only);
  hipError_t GraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to, size_t* count);
  hipError_t NodeGetType(hipGraphNode_t node, hipGraphNodeType* type);
  hipError_t NodeGetDependencies(hipGraphNode_t node, hipGraphNode_t* out, size_t* count, bool dependents);
  // A copy of a node's operation (for *GetParams).
  hipError_t NodeGetOp(hipGraphNode_t node, GraphOp* op);
  // Replaces a node's operation with one of the same node type (else
  // hipErrorInvalidValue). A kernel node keeps its attributes.
  hipError_t NodeSetOp(hipGraphNode_t node, GraphOp op);
  // A kernel node's parameters; kernelParams points at the node's own copy of
  // the arguments, valid until the node changes.
  hipError_t KernelNodeGetParams(hipGraphNode_t node, hipKernelNodeParams* params);
  hipError_t KernelNodeGetAttribute(hipGraphNode_t node, hipKernelNodeAttrID attr, hipKernelNodeAttrValue* value);
  hipError_t KernelNodeSetAttribute(hipGraphNode_t node, hipKernelNodeAttrID attr, const hipKernelNodeAttrValue& value);
  hipError_t KernelNodeCopyAttributes(hipGraphNode_t from, hipGraphNode_t to);
  // Writes `graph` as a Graphviz digraph to `path` (hipGraphDebugDotPrint).
  hipError_t GraphDebugDot(hipGraph_t graph, const char* path);

  // Executable graphs. `s`: the live session the API edge found (nullptr:
  // none; calls that must reach the worker then return hipErrorNoDevice).
  hipError_t GraphInstantiate(Remote* s, hipGraph_t graph, hipGraphExec_t* exec, hipGraphNode_t* error_node,
                              unsigned long long flags = 0);
  hipError_t GraphExecDestroy(Remote* s, hipGraphExec_t exec);
  hipError_t GraphExecGetFlags(hipGraphExec_t exec, unsigned long long* flags);
  // Launches `exec` on `stream` (the application's handle, for host copies and
  // callbacks) resolved to (device, stream_id), in `c`'s session `s` (c's
  // handle table counts its event records; its managed memory is pushed).
  // `copy` performs a host copy node as hipMemcpy2DAsync on `stream` (the
  // copy API lives above this layer).
  hipError_t GraphLaunch(Client& c, Remote* s, ManagedHooks& managed, hipGraphExec_t exec, hipStream_t stream,
                         int device, uint64_t stream_id, HostCopyFn copy);
  // hipGraphUpload: the executable graph is on the worker from instantiation;
  // checks the pair.
  hipError_t GraphUpload(hipGraphExec_t exec, int device);
  // hipGraphExec*SetParams: replaces what `node` (a node of the graph `exec`
  // was instantiated from) does in `exec`, with an operation of the same node
  // type. A ChildGraphNode must have the child's topology.
  hipError_t ExecSetNodeOp(Remote* s, hipGraphExec_t exec, hipGraphNode_t node, GraphOp op);
  hipError_t ExecSetEnabled(Remote* s, hipGraphExec_t exec, hipGraphNode_t node, bool enabled);
  hipError_t ExecGetEnabled(hipGraphExec_t exec, hipGraphNode_t node, bool* enabled);
  // hipGraphExecUpdate: takes every node's operation from `graph` when its
  // topology and node types match the exec's.
  hipError_t ExecUpdate(Remote* s, hipGraphExec_t exec, hipGraph_t graph, hipGraphNode_t* error_node,
                        hipGraphExecUpdateResult* result);

  hipError_t UserObjectCreate(UserObject** out, void* ptr, hipHostFn_t destroy, unsigned refs);
  hipError_t UserObjectRetain(UserObject* object, unsigned count);
  hipError_t UserObjectRelease(UserObject* object, unsigned count);
  // `move`: the caller's references pass to the graph (none are added).
  hipError_t GraphRetainUserObject(hipGraph_t graph, UserObject* object, unsigned count, bool move);
  hipError_t GraphReleaseUserObject(hipGraph_t graph, UserObject* object, unsigned count);

  // fork() support, for pthread_atfork (the owner installs it): the lock is
  // held across fork(); in the child it is re-created, captures in progress
  // are dropped (their streams were the parent's) and executable graphs the
  // parent's worker held are replayed by the client from then on (the
  // child's session has none).
  void LockForFork();
  void UnlockInParent();
  void ResetInChild();

  struct Impl;  // graph.cc

 private:
  friend struct GraphMemory;
  Impl* const impl_;  // Never freed while the process may call HIP.
};

}  // namespace hipr::client
