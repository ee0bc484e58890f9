// Graph entry points: stream capture, graph building and queries, and
// executable graphs. The work is in graph.h; this file resolves handles and
// checks arguments as the runtime does.
#include "client_stub/api_common.h"
#include "client_stub/graph.h"
#include "client_stub/kernel_launch.h"
#include "client_stub/kernel_registry.h"

using namespace hipr;
using namespace hipr::client;

namespace {

// A stream the application may capture: not the legacy null stream.
hipError_t CapturableStream(hipStream_t stream, StreamTarget* target, unsigned* flags) {
  if (stream == nullptr) return hipErrorStreamCaptureUnsupported;
  if (hipError_t e = ResolveStream(stream, target); e != hipSuccess) return e;
  *flags = hipStreamDefault;
  StreamRecord record;
  if (stream != hipStreamPerThread && Client::Get().handles().FindStream(stream, &record)) *flags = record.flags;
  return hipSuccess;
}

hipError_t CaptureInfoOf(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id,
                         hipGraph_t* graph, const hipGraphNode_t** deps, size_t* count) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (status == nullptr) return hipErrorInvalidValue;
  if (stream == nullptr) {
    *status = hipStreamCaptureStatusNone;  // The legacy null stream never captures.
    return hipSuccess;
  }
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  return CaptureInfo(target.id, status, id, graph, deps, count);
}

int CurrentDeviceOr0() {
  Session* s = LiveSession();
  int device = 0;
  if (s != nullptr) (void)CurrentDeviceOf(*s, &device);
  return device;
}

}  // namespace

HIPR_EXPORT hipError_t hipStreamBeginCapture(hipStream_t stream, hipStreamCaptureMode mode) {
  return ApiCall("hipStreamBeginCapture", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget target;
    unsigned flags = 0;
    if (hipError_t e = CapturableStream(stream, &target, &flags); e != hipSuccess) return e;
    return BeginCapture(target.device, target.id, flags, mode);
  });
}

HIPR_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph) {
  return ApiCall("hipStreamEndCapture", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget target;
    unsigned flags = 0;
    if (hipError_t e = CapturableStream(stream, &target, &flags); e != hipSuccess) return e;
    return EndCapture(target.id, graph);
  });
}

HIPR_EXPORT hipError_t hipStreamIsCapturing(hipStream_t stream, hipStreamCaptureStatus* status) {
  return ApiCall("hipStreamIsCapturing",
                 [&] { return CaptureInfoOf(stream, status, nullptr, nullptr, nullptr, nullptr); });
}

HIPR_EXPORT hipError_t hipStreamGetCaptureInfo(hipStream_t stream, hipStreamCaptureStatus* status,
                                               unsigned long long* id) {
  return ApiCall("hipStreamGetCaptureInfo", [&] { return CaptureInfoOf(stream, status, id, nullptr, nullptr, nullptr); });
}

HIPR_EXPORT hipError_t hipStreamGetCaptureInfo_v2(hipStream_t stream, hipStreamCaptureStatus* status,
                                                  unsigned long long* id, hipGraph_t* graph,
                                                  const hipGraphNode_t** deps, size_t* count) {
  return ApiCall("hipStreamGetCaptureInfo_v2", [&] { return CaptureInfoOf(stream, status, id, graph, deps, count); });
}

HIPR_EXPORT hipError_t hipThreadExchangeStreamCaptureMode(hipStreamCaptureMode* mode) {
  return ApiCall("hipThreadExchangeStreamCaptureMode", [&] {
    if (mode == nullptr || *mode < hipStreamCaptureModeGlobal || *mode > hipStreamCaptureModeRelaxed)
      return hipErrorInvalidValue;
    *mode = ExchangeThreadCaptureMode(*mode);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags) {
  return ApiCall("hipGraphCreate", [&] { return flags != 0 ? hipErrorInvalidValue : GraphCreate(graph); });
}

HIPR_EXPORT hipError_t hipGraphDestroy(hipGraph_t graph) {
  return ApiCall("hipGraphDestroy", [&] { return GraphDestroy(graph); });
}

HIPR_EXPORT hipError_t hipGraphAddKernelNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                             size_t dep_count, const hipKernelNodeParams* params) {
  return ApiCall("hipGraphAddKernelNode", [&] {
    Session* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (params == nullptr) return hipErrorInvalidValue;
    RegisteredKernel kernel;
    if (params->func == nullptr || !FindRegisteredKernel(params->func, &kernel)) return hipErrorInvalidDeviceFunction;
    LaunchSpec spec;
    if (hipError_t e = SetShape(params->gridDim, params->blockDim, &spec); e != hipSuccess) return e;
    if (hipError_t e = CurrentDeviceOf(*s, &spec.device); e != hipSuccess) return e;
    spec.shared_bytes = params->sharedMemBytes;
    KernelArgs args;
    if (params->kernelParams != nullptr && params->extra != nullptr) return hipErrorInvalidValue;
    if (params->extra != nullptr) {
      if (hipError_t e = ParseExtra(params->extra, &args); e != hipSuccess) return e;
    } else {
      args.pointers = params->kernelParams;
    }
    msg::LaunchRequest request;
    Status st = BuildKernelNode(*s, *kernel.module, *kernel.name, spec, args, &request);
    if (!st.ok()) {
      HIPR_LOG_INFO("hipGraphAddKernelNode: %s", st.message().c_str());
      return ToHipError(st);
    }
    return GraphAddNode(graph, deps, dep_count, spec.device, std::move(request), node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                             size_t dep_count, const hipMemsetParams* params) {
  return ApiCall("hipGraphAddMemsetNode", [&] {
    Session* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (params == nullptr || params->dst == nullptr || params->width == 0 || params->height == 0)
      return hipErrorInvalidValue;
    const unsigned es = params->elementSize;
    if (es != 1 && es != 2 && es != 4) return hipErrorInvalidValue;
    const uint64_t row = uint64_t{params->width} * es;
    if (params->height > 1 && params->pitch < row) return hipErrorInvalidValue;
    const uint64_t pitch = params->height > 1 ? params->pitch : row;
    const uint64_t extent = pitch * (params->height - 1) + row;
    DeviceAllocation a;
    if (!Client::Get().allocations().FindDevice(reinterpret_cast<uint64_t>(params->dst), extent, &a))
      return hipErrorInvalidValue;
    msg::MemsetRequest req;
    req.device = a.device;
    req.dst = msg::Region{reinterpret_cast<uint64_t>(params->dst), pitch, row, params->height};
    req.value = params->value;
    req.element_size = static_cast<uint8_t>(es);
    return GraphAddNode(graph, deps, dep_count, a.device, req, node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                               size_t dep_count, void* dst, const void* src, size_t count,
                                               hipMemcpyKind kind) {
  return ApiCall("hipGraphAddMemcpyNode1D", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (dst == nullptr || src == nullptr || count == 0) return hipErrorInvalidValue;
    if (kind < hipMemcpyHostToHost || kind > hipMemcpyDefault) return hipErrorInvalidMemcpyDirection;
    const AllocationMap& map = Client::Get().allocations();
    DeviceAllocation d;
    DeviceAllocation s;
    const bool dst_device = map.FindDevice(reinterpret_cast<uint64_t>(dst), count, &d);
    const bool src_device = map.FindDevice(reinterpret_cast<uint64_t>(src), count, &s);
    if (dst_device && src_device) {
      const msg::Region to{reinterpret_cast<uint64_t>(dst), count, count, 1};
      const msg::Region from{reinterpret_cast<uint64_t>(src), count, count, 1};
      return GraphAddNode(graph, deps, dep_count, d.device, msg::CopyOnDeviceRequest{d.device, 0, to, from, false},
                          node);
    }
    // Host memory on one side: checked like hipMemcpyAsync at each launch.
    const int device = dst_device ? d.device : src_device ? s.device : CurrentDeviceOr0();
    return GraphAddNode(graph, deps, dep_count, device, HostCopyNode{dst, count, src, count, count, 1, kind}, node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddHostNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                           size_t dep_count, const hipHostNodeParams* params) {
  return ApiCall("hipGraphAddHostNode", [&] {
    if (params == nullptr || params->fn == nullptr) return hipErrorInvalidValue;
    return GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(), HostFnNode{params->fn, params->userData, nullptr},
                        node);
  });
}

HIPR_EXPORT hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node, hipHostNodeParams* params) {
  return ApiCall("hipGraphHostNodeGetParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* h = std::get_if<HostFnNode>(&op);
    if (h == nullptr || h->fn == nullptr) return hipErrorInvalidValue;
    *params = hipHostNodeParams{h->fn, h->user_data};
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphAddEmptyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                            size_t dep_count) {
  return ApiCall("hipGraphAddEmptyNode",
                 [&] { return GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(), EmptyNode{}, node); });
}

HIPR_EXPORT hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                               size_t count) {
  return ApiCall("hipGraphAddDependencies", [&] { return GraphAddDependencies(graph, from, to, count); });
}

HIPR_EXPORT hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* count) {
  return ApiCall("hipGraphGetNodes", [&] { return GraphGetNodes(graph, nodes, count, false); });
}

HIPR_EXPORT hipError_t hipGraphGetRootNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* count) {
  return ApiCall("hipGraphGetRootNodes", [&] { return GraphGetNodes(graph, nodes, count, true); });
}

HIPR_EXPORT hipError_t hipGraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to, size_t* count) {
  return ApiCall("hipGraphGetEdges", [&] { return GraphGetEdges(graph, from, to, count); });
}

HIPR_EXPORT hipError_t hipGraphNodeGetType(hipGraphNode_t node, hipGraphNodeType* type) {
  return ApiCall("hipGraphNodeGetType", [&] { return NodeGetType(node, type); });
}

HIPR_EXPORT hipError_t hipGraphNodeGetDependencies(hipGraphNode_t node, hipGraphNode_t* deps, size_t* count) {
  return ApiCall("hipGraphNodeGetDependencies", [&] { return NodeGetDependencies(node, deps, count, false); });
}

HIPR_EXPORT hipError_t hipGraphNodeGetDependentNodes(hipGraphNode_t node, hipGraphNode_t* nodes, size_t* count) {
  return ApiCall("hipGraphNodeGetDependentNodes", [&] { return NodeGetDependencies(node, nodes, count, true); });
}

HIPR_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, hipGraphNode_t* error_node,
                                           char* log, size_t log_size) {
  return ApiCall("hipGraphInstantiate", [&] {
    hipError_t e = GraphInstantiate(graph, exec, error_node);
    if (log != nullptr && log_size > 0) {
      const char* text = e == hipSuccess ? "" : hipGetErrorString(e);
      std::snprintf(log, log_size, "%s", text);
    }
    return e;
  });
}

HIPR_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags) {
  return ApiCall("hipGraphInstantiateWithFlags", [&] {
    // AutoFreeOnLaunch concerns memory a graph allocates; graphs here
    // allocate none.
    if ((flags & ~static_cast<unsigned long long>(hipGraphInstantiateFlagAutoFreeOnLaunch)) != 0)
      return hipErrorInvalidValue;
    return GraphInstantiate(graph, exec, nullptr);
  });
}

HIPR_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream) {
  return ApiCall("hipGraphLaunch", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    return GraphLaunch(exec, stream, target.device, target.id, [](const HostCopyNode& n, hipStream_t on) {
      return CopyMemory2DAsync(n.dst, n.dpitch, n.src, n.spitch, n.width, n.height, n.kind, on);
    });
  });
}

HIPR_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
  return ApiCall("hipGraphExecDestroy", [&] { return GraphExecDestroy(exec); });
}
