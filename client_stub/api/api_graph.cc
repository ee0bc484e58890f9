// Graph entry points: stream capture, graph building and queries, and
// executable graphs. The work is in graph.h; this file resolves handles and
// checks arguments as the runtime does.
#include <cstddef>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/api/copy_paths.h"
#include "client_stub/copies/copy_kind.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/kernels/kernel_launch.h"
#include "client_stub/kernels/kernel_registry.h"

using namespace hipr;
using namespace hipr::client;

namespace {

// A stream the application may capture: not the legacy null stream
// (`null_answer`: hipErrorStreamCaptureUnsupported to begin, as clr,
// hipErrorIllegalState to end); a handle that is no live stream is
// hipErrorContextIsDestroyed.
hipError_t CapturableStream(hipStream_t stream, StreamTarget* target, unsigned* flags,
                            hipError_t null_answer = hipErrorStreamCaptureUnsupported) {
  if (IsLegacyNullStream(stream)) return null_answer;
  if (hipError_t e = ResolveStream(stream, target); e != hipSuccess) return AsDestroyedStream(e);
  StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
  *flags = hipStreamDefault;
  StreamRecord record;
  if (stream != hipStreamPerThread && Client::Get().handles().FindStream(stream, &record)) *flags = record.flags;
  return hipSuccess;
}

hipError_t CaptureInfoOf(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id,
                         hipGraph_t* graph, const hipGraphNode_t** deps, size_t* count) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (status == nullptr) return hipErrorInvalidValue;
  if (IsLegacyNullStream(stream)) {
    // The legacy null stream never captures; while a blocking stream does,
    // naming it is refused, as clr.
    if (Graphs().AnyBlockingCapture()) return hipErrorStreamCaptureImplicit;
    *status = hipStreamCaptureStatusNone;
    return hipSuccess;
  }
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return AsDestroyedStream(e);
  StreamLedger::Invisible();  // Queues no work (session/stream_ledger.h).
  return Graphs().CaptureInfo(target.id, status, id, graph, deps, count);
}

int CurrentDeviceOr0() {
  Remote* s = LiveSession();
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
    return Graphs().BeginCapture(target.device, target.id, flags, mode);
  });
}

HIPR_EXPORT hipError_t hipStreamEndCapture(hipStream_t stream, hipGraph_t* graph) {
  return ApiCall("hipStreamEndCapture", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (graph == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    unsigned flags = 0;
    if (hipError_t e = CapturableStream(stream, &target, &flags, hipErrorIllegalState); e != hipSuccess) return e;
    return Graphs().EndCapture(target.id, graph);
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
    *mode = GraphRegistry::ExchangeThreadCaptureMode(*mode);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphCreate(hipGraph_t* graph, unsigned int flags) {
  return ApiCall("hipGraphCreate", [&] { return flags != 0 ? hipErrorInvalidValue : Graphs().GraphCreate(graph); });
}

HIPR_EXPORT hipError_t hipGraphDestroy(hipGraph_t graph) {
  return ApiCall("hipGraphDestroy", [&] { return Graphs().GraphDestroy(graph); });
}

namespace {

// The kernel node `params` describe: func is a registered kernel's host stub
// or a hipFunction_t from hipModuleGetFunction.
hipError_t KernelNodeOf(const hipKernelNodeParams* params, KernelNode* node, int* device) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (params == nullptr) return hipErrorInvalidValue;
  CodeModule* module = nullptr;
  const std::string* name = nullptr;
  RegisteredKernel kernel;
  ModuleFunction mf;
  if (params->func != nullptr && Kernels().FindRegisteredKernel(params->func, &kernel)) {
    module = kernel.module;
    name = kernel.name;
  } else if (params->func != nullptr && Kernels().FindModuleFunction(static_cast<hipFunction_t>(params->func), &mf)) {
    module = mf.module;
    name = mf.name;
  } else {
    return hipErrorInvalidDeviceFunction;
  }
  LaunchSpec spec;
  if (hipError_t e = SetShape(params->gridDim, params->blockDim, &spec); e != hipSuccess) return e;
  if (hipError_t e = CurrentDeviceOf(*s, &spec.device); e != hipSuccess) return e;
  spec.shared_bytes = params->sharedMemBytes;
  spec.func = params->func;
  KernelArgs args;
  if (params->kernelParams != nullptr && params->extra != nullptr) return hipErrorInvalidValue;
  if (params->extra != nullptr) {
    if (hipError_t e = ParseExtra(params->extra, &args); e != hipSuccess) return e;
  } else {
    args.pointers = params->kernelParams;
  }
  Status st = BuildKernelNode(*s, *module, *name, spec, args, node);
  if (!st.ok()) {
    HIPR_LOG_INFO("graph kernel node: %s", st.message().c_str());
    return ToHipError(st);
  }
  *device = spec.device;
  return hipSuccess;
}

// hipMemsetParams' layouts: 5.x and 6.x {dst, elementSize, height, pitch,
// value, width}; 7.0 reordered it to CUDA's {dst, pitch, value,
// elementSize, width, height} (AMD's "HIP API 7.0 changes"), which is also
// 6.x's HIP_MEMSET_NODE_PARAMS, what the driver-API memset node calls take
// in every major. The graph layer reads Debian's (5.x) struct.
struct MemsetParamsCuda {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};
static_assert(sizeof(MemsetParamsCuda) == 40 && sizeof(hipMemsetParams) == 48);

// The caller's struct at `p` (null stays null) as Debian's, in *storage.
const hipMemsetParams* MemsetParamsFrom(const void* p, bool cuda_order, hipMemsetParams* storage) {
  if (p == nullptr || !cuda_order) return static_cast<const hipMemsetParams*>(p);
  const auto* c = static_cast<const MemsetParamsCuda*>(p);
  *storage = hipMemsetParams{};
  storage->dst = c->dst;
  storage->elementSize = c->elementSize;
  storage->height = c->height;
  storage->pitch = c->pitch;
  storage->value = c->value;
  storage->width = c->width;
  return storage;
}

void MemsetParamsTo(const hipMemsetParams& params, bool cuda_order, void* out) {
  if (!cuda_order) {
    *static_cast<hipMemsetParams*>(out) = params;
    return;
  }
  *static_cast<MemsetParamsCuda*>(out) =
      MemsetParamsCuda{params.dst, params.pitch, params.value, params.elementSize, params.width, params.height};
}

hipError_t MemsetNodeOf(const hipMemsetParams* params, msg::MemsetRequest* req) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
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
  *req = msg::MemsetRequest{};
  req->device = a.device;
  req->dst = msg::Region{reinterpret_cast<uint64_t>(params->dst), pitch, row, params->height};
  req->value = params->value;
  req->element_size = static_cast<uint8_t>(es);
  return hipSuccess;
}

// One rectangular copy of a graph: device-to-device when both sides are
// device memory, else through the copy API at each launch (checked then,
// like hipMemcpy2DAsync).
CopyPiece CopyPieceOf(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                      hipMemcpyKind kind, int* device) {
  const AllocationMap& map = Client::Get().allocations();
  DeviceAllocation d;
  DeviceAllocation s;
  const uint64_t dst_extent = dpitch * (height - 1) + width;
  const uint64_t src_extent = spitch * (height - 1) + width;
  const bool dst_device = map.FindDevice(reinterpret_cast<uint64_t>(dst), dst_extent, &d);
  const bool src_device = map.FindDevice(reinterpret_cast<uint64_t>(src), src_extent, &s);
  *device = dst_device ? d.device : src_device ? s.device : CurrentDeviceOr0();
  if (dst_device && src_device) {
    const msg::Region to{reinterpret_cast<uint64_t>(dst), dpitch, width, height};
    const msg::Region from{reinterpret_cast<uint64_t>(src), spitch, width, height};
    return msg::CopyOnDeviceRequest{d.device, 0, to, from, false};
  }
  return HostCopyNode{dst, dpitch, src, spitch, width, height, kind};
}

// How the allocation map sees [p, p + n) for copy_kind.h.
CopySideClass ClassOf(const void* p, size_t n) {
  const AllocationMap& map = Client::Get().allocations();
  DeviceAllocation d;
  PinnedAllocation h;
  if (map.FindDevice(reinterpret_cast<uint64_t>(p), n, &d)) return CopySideClass::kDevice;
  if (map.FindPinned(reinterpret_cast<uint64_t>(p), n, &h)) return CopySideClass::kPinned;
  return CopySideClass::kPageable;
}

// Whether [p, p + n) starts in device or pinned memory and runs past the
// end of its allocation.
bool OverrunsAllocation(const void* p, size_t n) {
  const AllocationMap& map = Client::Get().allocations();
  const uint64_t a = reinterpret_cast<uint64_t>(p);
  DeviceAllocation d;
  PinnedAllocation h;
  if (map.FindDevice(a, 0, &d)) return !map.FindDevice(a, n, &d);
  if (map.FindPinned(a, 0, &h)) return !map.FindPinned(a, n, &h);
  return false;
}

hipError_t Memcpy1DNodeOf(void* dst, const void* src, size_t count, hipMemcpyKind kind, GraphOp* op, int* device) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (dst == nullptr || src == nullptr || count == 0) return hipErrorInvalidValue;
  // More than the allocation holds (clr's ihipMemcpy_validate).
  if (OverrunsAllocation(dst, count) || OverrunsAllocation(src, count)) return hipErrorInvalidValue;
  if (!ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  if (hipError_t e = CheckCopyKind(kind, KindRule::kPointers, ClassOf(dst, count), ClassOf(src, count));
      e != hipSuccess)
    return e;
  CopyPiece piece = CopyPieceOf(dst, count, src, count, count, 1, kind, device);
  if (auto* h = std::get_if<HostCopyNode>(&piece)) h->by_pointers = true;
  std::visit([&](auto&& p) { *op = std::move(p); }, std::move(piece));
  return hipSuccess;
}

// hipGraphAddMemcpyNode's parameters: pitched pointers only (HIP arrays in
// graph nodes are not supported), whole slices as one copy, else one per slice.
hipError_t Memcpy3DNodeOf(const hipMemcpy3DParms* p, GraphOp* op, int* device) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  if (p->srcArray != nullptr || p->dstArray != nullptr) {
    HIPR_LOG_ONCE(kWarn, "graph memcpy node: HIP arrays are not supported by hipr; returning hipErrorNotSupported");
    return hipErrorNotSupported;
  }
  if (!ValidKind(p->kind)) return hipErrorInvalidMemcpyDirection;
  const hipExtent& e = p->extent;
  const hipPitchedPtr& from = p->srcPtr;
  const hipPitchedPtr& to = p->dstPtr;
  if (e.width == 0 || e.height == 0 || e.depth == 0 || from.ptr == nullptr || to.ptr == nullptr)
    return hipErrorInvalidValue;
  if (p->srcPos.x + e.width > from.pitch || p->dstPos.x + e.width > to.pitch) return hipErrorInvalidPitchValue;
  if (p->srcPos.y + e.height > from.ysize || p->dstPos.y + e.height > to.ysize) return hipErrorInvalidValue;
  auto at = [](const hipPitchedPtr& q, const hipPos& pos, size_t z) {
    return static_cast<char*>(q.ptr) + (pos.z + z) * q.pitch * q.ysize + pos.y * q.pitch + pos.x;
  };
  const size_t src_extent = ((e.depth - 1) * from.ysize + e.height - 1) * from.pitch + e.width;
  const size_t dst_extent = ((e.depth - 1) * to.ysize + e.height - 1) * to.pitch + e.width;
  if (hipError_t err = CheckCopyKind(p->kind, KindRule::kClaimed, ClassOf(at(to, p->dstPos, 0), dst_extent),
                                     ClassOf(at(from, p->srcPos, 0), src_extent));
      err != hipSuccess)
    return err;
  Memcpy3DNode node;
  node.params = *p;
  const bool whole_slices = e.height == from.ysize && e.height == to.ysize;
  const size_t pieces = whole_slices ? 1 : e.depth;
  const size_t rows = whole_slices ? e.height * e.depth : e.height;
  for (size_t z = 0; z < pieces; ++z)
    node.pieces.push_back(CopyPieceOf(at(to, p->dstPos, z), to.pitch, at(from, p->srcPos, z), from.pitch, e.width,
                                      rows, p->kind, device));
  *op = std::move(node);
  return hipSuccess;
}

// A memcpy node's parameters as hipMemcpy3DParms, however it was made.
hipError_t Memcpy3DParamsOf(const GraphOp& op, hipMemcpy3DParms* p) {
  *p = hipMemcpy3DParms{};
  if (const auto* c = std::get_if<Memcpy3DNode>(&op)) {
    *p = c->params;
  } else if (const auto* d = std::get_if<msg::CopyOnDeviceRequest>(&op)) {
    p->srcPtr = hipPitchedPtr{reinterpret_cast<void*>(d->src.address), d->src.pitch, d->src.width, d->src.height};
    p->dstPtr = hipPitchedPtr{reinterpret_cast<void*>(d->dst.address), d->dst.pitch, d->dst.width, d->dst.height};
    p->extent = hipExtent{d->dst.width, d->dst.height, 1};
    p->kind = hipMemcpyDeviceToDevice;
  } else if (const auto* h = std::get_if<HostCopyNode>(&op)) {
    p->srcPtr = hipPitchedPtr{const_cast<void*>(h->src), h->spitch, h->width, h->height};
    p->dstPtr = hipPitchedPtr{h->dst, h->dpitch, h->width, h->height};
    p->extent = hipExtent{h->width, h->height, 1};
    p->kind = h->kind;
  } else {
    return hipErrorInvalidValue;
  }
  return hipSuccess;
}

// The device address of `offset` in a registered __device__ variable, with
// `count` bytes there.
hipError_t SymbolAt(const void* symbol, size_t offset, size_t count, char** address) {
  void* base = nullptr;
  size_t size = 0;
  if (hipError_t e = hipGetSymbolAddress(&base, symbol); e != hipSuccess) return e;
  if (hipError_t e = hipGetSymbolSize(&size, symbol); e != hipSuccess) return e;
  if (offset > size || count > size - offset) return hipErrorInvalidValue;
  *address = static_cast<char*>(base) + offset;
  return hipSuccess;
}

hipError_t ToSymbolNodeOf(const void* symbol, const void* src, size_t count, size_t offset, hipMemcpyKind kind,
                          GraphOp* op, int* device) {
  if (hipError_t e = CheckSymbolKind(kind, /*to_symbol=*/true); e != hipSuccess) return e;
  char* address = nullptr;
  if (hipError_t e = SymbolAt(symbol, offset, count, &address); e != hipSuccess) return e;
  return Memcpy1DNodeOf(address, src, count, kind, op, device);
}

hipError_t FromSymbolNodeOf(void* dst, const void* symbol, size_t count, size_t offset, hipMemcpyKind kind,
                            GraphOp* op, int* device) {
  if (hipError_t e = CheckSymbolKind(kind, /*to_symbol=*/false); e != hipSuccess) return e;
  char* address = nullptr;
  if (hipError_t e = SymbolAt(symbol, offset, count, &address); e != hipSuccess) return e;
  return Memcpy1DNodeOf(dst, address, count, kind, op, device);
}

// An event node's event.
template <class EventNode>
hipError_t EventNodeOf(hipEvent_t event, GraphOp* op) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  EventRecord e;
  if (event == nullptr || !Client::Get().handles().FindEvent(event, &e)) return hipErrorInvalidValue;
  *op = EventNode{event, e.id};
  return hipSuccess;
}

template <class EventNode>
hipError_t EventNodeGetEvent(hipGraphNode_t node, hipEvent_t* event) {
  if (event == nullptr) return hipErrorInvalidValue;
  GraphOp op;
  if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
  const auto* n = std::get_if<EventNode>(&op);
  if (n == nullptr) return hipErrorInvalidValue;
  *event = n->event;
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipGraphAddKernelNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                             size_t dep_count, const hipKernelNodeParams* params) {
  return ApiCall("hipGraphAddKernelNode", [&] {
    KernelNode k;
    int device = 0;
    if (hipError_t e = KernelNodeOf(params, &k, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(k), node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                             size_t dep_count, const hipMemsetParams* caller_params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphAddMemsetNode", [&] {
    hipMemsetParams storage;
    const hipMemsetParams* params = MemsetParamsFrom(caller_params, major >= 7, &storage);
    msg::MemsetRequest req;
    if (hipError_t e = MemsetNodeOf(params, &req); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, req.device, req, node);
  });
}

// ---- Memory nodes (graph.h GraphMemory) ---------------------------------------

namespace {

// hipMemAllocNodeParams, by layout (not in Debian's 5.2 header).
struct HiprMemAllocNodeParams {
  hipMemPoolProps poolProps;
  const hipMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
};

}  // namespace

HIPR_EXPORT hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                               size_t dep_count, HiprMemAllocNodeParams* params) {
  return ApiCall("hipGraphAddMemAllocNode", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (node == nullptr || params == nullptr || params->bytesize == 0 ||
        params->poolProps.allocType != hipMemAllocationTypePinned ||
        params->poolProps.location.type != hipMemLocationTypeDevice ||
        params->accessDescCount > s->devices().size() || (params->accessDescCount > 0 && params->accessDescs == nullptr))
      return hipErrorInvalidValue;
    const int device = params->poolProps.location.id;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return hipErrorInvalidValue;
    for (size_t i = 0; i < params->accessDescCount; ++i)
      if (params->accessDescs[i].location.type != hipMemLocationTypeDevice ||
          CheckDevice(*s, params->accessDescs[i].location.id) != hipSuccess)
        return hipErrorInvalidValue;
    std::shared_ptr<GraphMemory> memory;
    if (hipError_t e = Graphs().NewGraphMemory(Client::Get(), *s, device, params->bytesize, &params->poolProps,
                                               params->accessDescs, params->accessDescCount, &memory);
        e != hipSuccess)
      return e;
    void* dptr = reinterpret_cast<void*>(memory->address);
    // On failure the node's memory goes with it.
    if (hipError_t e = Graphs().GraphAddNode(graph, deps, dep_count, device, MemAllocNode{std::move(memory)}, node);
        e != hipSuccess)
      return e;
    params->dptr = dptr;
    return hipSuccess;
  });
}

namespace {

hipError_t AddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t dep_count,
                          void* ptr) {
  if (node == nullptr) return hipErrorInvalidValue;
  DeviceAllocation a;
  // Only a graph's own allocation (a free of other memory has no node form).
  if (!Client::Get().allocations().FindDevice(reinterpret_cast<uint64_t>(ptr), 0, &a) || !a.graph ||
      a.base != reinterpret_cast<uint64_t>(ptr))
    return hipErrorInvalidValue;
  return Graphs().GraphAddNode(graph, deps, dep_count, a.device, MemFreeNode{a.base}, node);
}

}  // namespace

HIPR_EXPORT hipError_t hipGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                              size_t dep_count, void* ptr) {
  return ApiCall("hipGraphAddMemFreeNode", [&] { return AddMemFreeNode(node, graph, deps, dep_count, ptr); });
}

HIPR_EXPORT hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                 size_t dep_count, hipDeviceptr_t ptr) {
  return ApiCall("hipDrvGraphAddMemFreeNode", [&] { return AddMemFreeNode(node, graph, deps, dep_count, ptr); });
}

HIPR_EXPORT hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t node, HiprMemAllocNodeParams* params) {
  return ApiCall("hipGraphMemAllocNodeGetParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* a = std::get_if<MemAllocNode>(&op);
    if (a == nullptr) return hipErrorInvalidValue;
    params->poolProps = a->memory->pool;
    params->accessDescs = a->memory->access.empty() ? nullptr : a->memory->access.data();
    params->accessDescCount = a->memory->access.size();
    params->bytesize = a->memory->size;
    params->dptr = reinterpret_cast<void*>(a->memory->address);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t node, void* ptr_out) {
  return ApiCall("hipGraphMemFreeNodeGetParams", [&] {
    if (ptr_out == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* f = std::get_if<MemFreeNode>(&op);
    if (f == nullptr) return hipErrorInvalidValue;
    *static_cast<void**>(ptr_out) = reinterpret_cast<void*>(f->address);
    return hipSuccess;
  });
}

// ---- Batched memory-operation nodes (ROCm 6.4; stream_memops.h) --------------

namespace {

// hipBatchMemOpNodeParams, by layout.
struct HiprBatchMemOpNodeParams {
  hipCtx_t ctx;
  unsigned int count;
  HiprBatchMemOp* paramArray;
  unsigned int flags;
};

hipError_t BatchNodeOf(const HiprBatchMemOpNodeParams* p, BatchMemOpNode* node, int* device) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (p == nullptr || p->flags != 0) return hipErrorInvalidValue;
  if (hipError_t e = BatchMemOps(Client::Get(), p->paramArray, p->count, &node->requests, device); e != hipSuccess)
    return e;
  if (*device < 0) *device = CurrentDeviceOr0();  // Only barriers and flushes.
  node->given = std::make_shared<const std::vector<HiprBatchMemOp>>(p->paramArray, p->paramArray + p->count);
  node->ctx = p->ctx;
  node->flags = p->flags;
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                 size_t dep_count, const HiprBatchMemOpNodeParams* params) {
  return ApiCall("hipGraphAddBatchMemOpNode", [&] {
    BatchMemOpNode op;
    int device = 0;
    if (hipError_t e = BatchNodeOf(params, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

// The operations come back as the node's own copy, valid while it lives.
HIPR_EXPORT hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t node, HiprBatchMemOpNodeParams* params) {
  return ApiCall("hipGraphBatchMemOpNodeGetParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* b = std::get_if<BatchMemOpNode>(&op);
    if (b == nullptr) return hipErrorInvalidValue;
    params->ctx = b->ctx;
    params->count = static_cast<unsigned>(b->given->size());
    params->paramArray = const_cast<HiprBatchMemOp*>(b->given->data());
    params->flags = b->flags;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t node, HiprBatchMemOpNodeParams* params) {
  return ApiCall("hipGraphBatchMemOpNodeSetParams", [&] {
    BatchMemOpNode op;
    int device = 0;
    if (hipError_t e = BatchNodeOf(params, &op, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                           const HiprBatchMemOpNodeParams* params) {
  return ApiCall("hipGraphExecBatchMemOpNodeSetParams", [&] {
    BatchMemOpNode op;
    int device = 0;
    if (hipError_t e = BatchNodeOf(params, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

// hipGraphMemAttributeType (ROCm 5.3+; not in Debian's 5.2 header).
enum : int { kGraphMemUsedCurrent = 0, kGraphMemUsedHigh = 1, kGraphMemReservedCurrent = 2, kGraphMemReservedHigh = 3 };

HIPR_EXPORT hipError_t hipDeviceGetGraphMemAttribute(int device, int attr, void* value) {
  return ApiCall("hipDeviceGetGraphMemAttribute", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    if (value == nullptr) return hipErrorInvalidValue;
    uint64_t current = 0;
    uint64_t high = 0;
    Graphs().GraphMemoryUse(device, &current, &high);
    switch (attr) {
      case kGraphMemUsedCurrent:
      case kGraphMemReservedCurrent: *static_cast<uint64_t*>(value) = current; return hipSuccess;
      case kGraphMemUsedHigh:
      case kGraphMemReservedHigh: *static_cast<uint64_t*>(value) = high; return hipSuccess;
      default: return hipErrorInvalidValue;
    }
  });
}

// Only the high watermarks can be set, and only to 0 (back to what graphs
// hold now), as natively.
HIPR_EXPORT hipError_t hipDeviceSetGraphMemAttribute(int device, int attr, void* value) {
  return ApiCall("hipDeviceSetGraphMemAttribute", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    if (value == nullptr || (attr != kGraphMemUsedHigh && attr != kGraphMemReservedHigh) ||
        *static_cast<const uint64_t*>(value) != 0)
      return hipErrorInvalidValue;
    Graphs().ResetGraphMemoryHigh(device);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemcpyNode1D(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                               size_t dep_count, void* dst, const void* src, size_t count,
                                               hipMemcpyKind kind) {
  return ApiCall("hipGraphAddMemcpyNode1D", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = Memcpy1DNodeOf(dst, src, count, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddHostNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                           size_t dep_count, const hipHostNodeParams* params) {
  return ApiCall("hipGraphAddHostNode", [&] {
    if (params == nullptr || params->fn == nullptr) return hipErrorInvalidValue;
    return Graphs().GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(),
                                 HostFnNode{params->fn, params->userData, nullptr}, node);
  });
}

HIPR_EXPORT hipError_t hipGraphHostNodeGetParams(hipGraphNode_t node, hipHostNodeParams* params) {
  return ApiCall("hipGraphHostNodeGetParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* h = std::get_if<HostFnNode>(&op);
    if (h == nullptr || h->fn == nullptr) return hipErrorInvalidValue;
    *params = hipHostNodeParams{h->fn, h->user_data};
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphAddEmptyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                            size_t dep_count) {
  return ApiCall("hipGraphAddEmptyNode",
                 [&] { return Graphs().GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(), EmptyNode{}, node); });
}

HIPR_EXPORT hipError_t hipGraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                               size_t count) {
  return ApiCall("hipGraphAddDependencies", [&] { return Graphs().GraphAddDependencies(graph, from, to, count); });
}

HIPR_EXPORT hipError_t hipGraphGetNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* count) {
  return ApiCall("hipGraphGetNodes", [&] { return Graphs().GraphGetNodes(graph, nodes, count, false); });
}

HIPR_EXPORT hipError_t hipGraphGetRootNodes(hipGraph_t graph, hipGraphNode_t* nodes, size_t* count) {
  return ApiCall("hipGraphGetRootNodes", [&] { return Graphs().GraphGetNodes(graph, nodes, count, true); });
}

HIPR_EXPORT hipError_t hipGraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to, size_t* count) {
  return ApiCall("hipGraphGetEdges", [&] { return Graphs().GraphGetEdges(graph, from, to, count); });
}

// hipGraphNodeType's numbering changed with 6.0: 5.x counts from 1 (kernel
// 1, memcpy 2, memset 3, host 4, graph 5, empty 6, wait event 7, event
// record 8), 6.x/7.x from 0 (kernel 0 ... event record 7, then external
// semaphores 8-9, memory alloc and free 10-11, symbol copies 12-13, batch
// memory operations 14). The graph layer keeps the 5.x values (Debian's
// header); callers get and give their own major's.
HIPR_EXPORT hipError_t hipGraphNodeGetType(hipGraphNode_t node, hipGraphNodeType* type) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphNodeGetType", [&] {
    hipGraphNodeType internal = hipGraphNodeTypeEmpty;
    if (type == nullptr) return Graphs().NodeGetType(node, type);
    if (hipError_t e = Graphs().NodeGetType(node, &internal); e != hipSuccess) return e;
    // Memory and batch nodes have no 5.x number: every caller gets 6.x's
    // 10, 11 and 14.
    if (internal == kNodeTypeMemAlloc || internal == kNodeTypeMemFree || internal == kNodeTypeBatchMemOp)
      *type = static_cast<hipGraphNodeType>(internal == kNodeTypeMemAlloc  ? 10
                                            : internal == kNodeTypeMemFree ? 11
                                                                           : 14);
    else
      *type = static_cast<hipGraphNodeType>(major >= 6 ? internal - 1 : internal);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphNodeGetDependencies(hipGraphNode_t node, hipGraphNode_t* deps, size_t* count) {
  return ApiCall("hipGraphNodeGetDependencies", [&] { return Graphs().NodeGetDependencies(node, deps, count, false); });
}

HIPR_EXPORT hipError_t hipGraphNodeGetDependentNodes(hipGraphNode_t node, hipGraphNode_t* nodes, size_t* count) {
  return ApiCall("hipGraphNodeGetDependentNodes",
                 [&] { return Graphs().NodeGetDependencies(node, nodes, count, true); });
}

HIPR_EXPORT hipError_t hipGraphInstantiate(hipGraphExec_t* exec, hipGraph_t graph, hipGraphNode_t* error_node,
                                           char* log, size_t log_size) {
  return ApiCall("hipGraphInstantiate", [&] {
    hipError_t e = Graphs().GraphInstantiate(LiveSession(), graph, exec, error_node);
    if (log != nullptr && log_size > 0) {
      const char* text = e == hipSuccess ? "" : hipGetErrorString(e);
      std::snprintf(log, log_size, "%s", text);
    }
    return e;
  });
}

namespace {

// ROCm 5.3+'s instantiate flags (5.2 names only AutoFreeOnLaunch).
constexpr unsigned long long kInstantiateAutoFree = 1;
constexpr unsigned long long kInstantiateUpload = 2;
constexpr unsigned long long kInstantiateDeviceLaunch = 4;
constexpr unsigned long long kInstantiateNodePriority = 8;

// AutoFreeOnLaunch concerns memory a graph allocates (graphs here allocate
// none); Upload is what instantiation does anyway; node priorities have no
// effect, since an executable graph runs its nodes on the launch's stream in
// order. Graphs launched from the device are not supported.
hipError_t CheckInstantiateFlags(unsigned long long flags) {
  if (flags & kInstantiateDeviceLaunch) {
    HIPR_LOG_ONCE(kWarn, "hipGraphInstantiate: device-launched graphs are not supported by hipr; "
                         "returning hipErrorNotSupported");
    return hipErrorNotSupported;
  }
  if ((flags & ~(kInstantiateAutoFree | kInstantiateUpload | kInstantiateNodePriority)) != 0)
    return hipErrorInvalidValue;
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipGraphInstantiateWithFlags(hipGraphExec_t* exec, hipGraph_t graph, unsigned long long flags) {
  return ApiCall("hipGraphInstantiateWithFlags", [&] {
    if (hipError_t e = CheckInstantiateFlags(flags); e != hipSuccess) return e;
    return Graphs().GraphInstantiate(LiveSession(), graph, exec, nullptr, flags);
  });
}

// ROCm 6.1's hipGraphInstantiateParams (result_out a hipGraphInstantiateResult).
struct HiprGraphInstantiateParams {
  hipGraphNode_t error_node;
  unsigned long long flags;
  int result;
  hipStream_t upload_stream;
};

HIPR_EXPORT hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph,
                                                     HiprGraphInstantiateParams* params) {
  return ApiCall("hipGraphInstantiateWithParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    // hipGraphInstantiateSuccess, Error, InvalidStructure,
    // NodeOperationNotSupported, MultipleDevicesNotSupported.
    enum { kSuccess = 0, kError = 1, kInvalidStructure = 2, kNotSupported = 3, kMultipleDevices = 4 };
    params->error_node = nullptr;
    params->result = kError;
    if (hipError_t e = CheckInstantiateFlags(params->flags); e != hipSuccess) {
      if (e == hipErrorNotSupported) params->result = kNotSupported;
      return e;
    }
    if (params->flags & kInstantiateUpload) {
      StreamTarget target;
      if (hipError_t e = ResolveStream(params->upload_stream, &target); e != hipSuccess) return e;
    }
    hipError_t e = Graphs().GraphInstantiate(LiveSession(), graph, exec, &params->error_node, params->flags);
    params->result = e == hipSuccess                      ? kSuccess
                     : params->error_node != nullptr     ? kMultipleDevices
                     : e == hipErrorInvalidValue && graph != nullptr ? kInvalidStructure
                                                                      : kError;
    return e;
  });
}

HIPR_EXPORT hipError_t hipGraphLaunch(hipGraphExec_t exec, hipStream_t stream) {
  return ApiCall("hipGraphLaunch", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    return Graphs().GraphLaunch(Client::Get(), LiveSession(), Managed(), exec, stream, target.device, target.id,
                                [](const HostCopyNode& n, hipStream_t on) {
                                  return CopyMemory2DAsync(n.dst, n.dpitch, n.src, n.spitch, n.width, n.height,
                                                           n.launch_kind(), on);
                                });
  });
}

HIPR_EXPORT hipError_t hipGraphExecDestroy(hipGraphExec_t exec) {
  return ApiCall("hipGraphExecDestroy", [&] { return Graphs().GraphExecDestroy(LiveSession(), exec); });
}

HIPR_EXPORT hipError_t hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t stream) {
  return hipGraphLaunch(exec, stream == nullptr ? hipStreamPerThread : stream);
}

HIPR_EXPORT hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode) {
  return hipStreamBeginCapture(stream == nullptr ? hipStreamPerThread : stream, mode);
}

HIPR_EXPORT hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph) {
  return hipStreamEndCapture(stream == nullptr ? hipStreamPerThread : stream, graph);
}

HIPR_EXPORT hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus* status) {
  return hipStreamIsCapturing(stream == nullptr ? hipStreamPerThread : stream, status);
}

HIPR_EXPORT hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus* status,
                                                   unsigned long long* id) {
  return hipStreamGetCaptureInfo(stream == nullptr ? hipStreamPerThread : stream, status, id);
}

HIPR_EXPORT hipError_t hipStreamGetCaptureInfo_v2_spt(hipStream_t stream, hipStreamCaptureStatus* status,
                                                      unsigned long long* id, hipGraph_t* graph,
                                                      const hipGraphNode_t** deps, size_t* count) {
  return hipStreamGetCaptureInfo_v2(stream == nullptr ? hipStreamPerThread : stream, status, id, graph, deps, count);
}

// ROCm 6.1's hipGraphEdgeData: ports and a type per edge. hipr's edges are
// plain (all zero); anything else is refused.
struct HiprGraphEdgeData {
  unsigned char bytes[8];
};

HIPR_EXPORT hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph,
                                                    const hipGraphNode_t* deps, const HiprGraphEdgeData* edges,
                                                    size_t dep_count, hipStreamCaptureMode mode) {
  return ApiCall("hipStreamBeginCaptureToGraph", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (graph == nullptr) return hipErrorInvalidValue;
    for (size_t i = 0; edges != nullptr && i < dep_count; ++i)
      for (unsigned char b : edges[i].bytes)
        if (b != 0) {
          HIPR_LOG_ONCE(kWarn, "hipStreamBeginCaptureToGraph: edge ports and types are not supported by hipr; "
                               "returning hipErrorNotSupported");
          return hipErrorNotSupported;
        }
    StreamTarget target;
    unsigned flags = 0;
    if (hipError_t e = CapturableStream(stream, &target, &flags); e != hipSuccess) return e;
    return Graphs().BeginCapture(target.device, target.id, flags, mode, graph, deps, dep_count);
  });
}

HIPR_EXPORT hipError_t hipStreamUpdateCaptureDependencies(hipStream_t stream, hipGraphNode_t* deps, size_t count,
                                                          unsigned int flags) {
  return ApiCall("hipStreamUpdateCaptureDependencies", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (flags != hipStreamAddCaptureDependencies && flags != hipStreamSetCaptureDependencies)
      return hipErrorInvalidValue;
    StreamTarget target;
    unsigned stream_flags = 0;
    if (hipError_t e = CapturableStream(stream, &target, &stream_flags); e != hipSuccess) return e;
    return Graphs().UpdateCaptureDependencies(target.id, deps, count, flags == hipStreamSetCaptureDependencies);
  });
}

// ---- Node parameters -------------------------------------------------------------------------

HIPR_EXPORT hipError_t hipGraphKernelNodeGetParams(hipGraphNode_t node, hipKernelNodeParams* params) {
  return ApiCall("hipGraphKernelNodeGetParams", [&] { return Graphs().KernelNodeGetParams(node, params); });
}

HIPR_EXPORT hipError_t hipGraphKernelNodeSetParams(hipGraphNode_t node, const hipKernelNodeParams* params) {
  return ApiCall("hipGraphKernelNodeSetParams", [&] {
    KernelNode k;
    int device = 0;
    if (hipError_t e = KernelNodeOf(params, &k, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(k));
  });
}

HIPR_EXPORT hipError_t hipGraphKernelNodeGetAttribute(hipGraphNode_t node, hipKernelNodeAttrID attr,
                                                      hipKernelNodeAttrValue* value) {
  return ApiCall("hipGraphKernelNodeGetAttribute", [&] { return Graphs().KernelNodeGetAttribute(node, attr, value); });
}

HIPR_EXPORT hipError_t hipGraphKernelNodeSetAttribute(hipGraphNode_t node, hipKernelNodeAttrID attr,
                                                      const hipKernelNodeAttrValue* value) {
  return ApiCall("hipGraphKernelNodeSetAttribute", [&] {
    if (value == nullptr) return hipErrorInvalidValue;
    return Graphs().KernelNodeSetAttribute(node, attr, *value);
  });
}

HIPR_EXPORT hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t src, hipGraphNode_t dst) {
  return ApiCall("hipGraphKernelNodeCopyAttributes", [&] { return Graphs().KernelNodeCopyAttributes(src, dst); });
}

HIPR_EXPORT hipError_t hipGraphMemsetNodeGetParams(hipGraphNode_t node, hipMemsetParams* caller_params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphMemsetNodeGetParams", [&] {
    if (caller_params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* m = std::get_if<msg::MemsetRequest>(&op);
    if (m == nullptr) return hipErrorInvalidValue;
    hipMemsetParams params{};
    params.dst = reinterpret_cast<void*>(m->dst.address);
    params.elementSize = m->element_size;
    params.width = m->dst.width / m->element_size;
    params.height = m->dst.height;
    params.pitch = m->dst.pitch;
    params.value = m->value;
    MemsetParamsTo(params, major >= 7, caller_params);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphMemsetNodeSetParams(hipGraphNode_t node, const hipMemsetParams* caller_params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphMemsetNodeSetParams", [&] {
    hipMemsetParams storage;
    const hipMemsetParams* params = MemsetParamsFrom(caller_params, major >= 7, &storage);
    msg::MemsetRequest req;
    if (hipError_t e = MemsetNodeOf(params, &req); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, req);
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                             size_t dep_count, const hipMemcpy3DParms* params) {
  return ApiCall("hipGraphAddMemcpyNode", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = Memcpy3DNodeOf(params, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphMemcpyNodeGetParams(hipGraphNode_t node, hipMemcpy3DParms* params) {
  return ApiCall("hipGraphMemcpyNodeGetParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    hipMemcpy3DParms p;
    if (hipError_t e = Memcpy3DParamsOf(op, &p); e != hipSuccess) return e;
    *params = p;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphMemcpyNodeSetParams(hipGraphNode_t node, const hipMemcpy3DParms* params) {
  return ApiCall("hipGraphMemcpyNodeSetParams", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = Memcpy3DNodeOf(params, &op, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphMemcpyNodeSetParams1D(hipGraphNode_t node, void* dst, const void* src, size_t count,
                                                     hipMemcpyKind kind) {
  return ApiCall("hipGraphMemcpyNodeSetParams1D", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = Memcpy1DNodeOf(dst, src, count, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemcpyNodeToSymbol(hipGraphNode_t* node, hipGraph_t graph,
                                                     const hipGraphNode_t* deps, size_t dep_count,
                                                     const void* symbol, const void* src, size_t count,
                                                     size_t offset, hipMemcpyKind kind) {
  return ApiCall("hipGraphAddMemcpyNodeToSymbol", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = ToSymbolNodeOf(symbol, src, count, offset, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddMemcpyNodeFromSymbol(hipGraphNode_t* node, hipGraph_t graph,
                                                       const hipGraphNode_t* deps, size_t dep_count, void* dst,
                                                       const void* symbol, size_t count, size_t offset,
                                                       hipMemcpyKind kind) {
  return ApiCall("hipGraphAddMemcpyNodeFromSymbol", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = FromSymbolNodeOf(dst, symbol, count, offset, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphMemcpyNodeSetParamsToSymbol(hipGraphNode_t node, const void* symbol, const void* src,
                                                           size_t count, size_t offset, hipMemcpyKind kind) {
  return ApiCall("hipGraphMemcpyNodeSetParamsToSymbol", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = ToSymbolNodeOf(symbol, src, count, offset, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphMemcpyNodeSetParamsFromSymbol(hipGraphNode_t node, void* dst, const void* symbol,
                                                             size_t count, size_t offset, hipMemcpyKind kind) {
  return ApiCall("hipGraphMemcpyNodeSetParamsFromSymbol", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = FromSymbolNodeOf(dst, symbol, count, offset, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphHostNodeSetParams(hipGraphNode_t node, const hipHostNodeParams* params) {
  return ApiCall("hipGraphHostNodeSetParams", [&] {
    if (params == nullptr || params->fn == nullptr) return hipErrorInvalidValue;
    return Graphs().NodeSetOp(node, HostFnNode{params->fn, params->userData, nullptr});
  });
}

HIPR_EXPORT hipError_t hipGraphAddEventRecordNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                  size_t dep_count, hipEvent_t event) {
  return ApiCall("hipGraphAddEventRecordNode", [&] {
    GraphOp op;
    if (hipError_t e = EventNodeOf<EventRecordNode>(event, &op); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(), std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphAddEventWaitNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                size_t dep_count, hipEvent_t event) {
  return ApiCall("hipGraphAddEventWaitNode", [&] {
    GraphOp op;
    if (hipError_t e = EventNodeOf<EventWaitNode>(event, &op); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(), std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphEventRecordNodeGetEvent(hipGraphNode_t node, hipEvent_t* event) {
  return ApiCall("hipGraphEventRecordNodeGetEvent", [&] { return EventNodeGetEvent<EventRecordNode>(node, event); });
}

HIPR_EXPORT hipError_t hipGraphEventWaitNodeGetEvent(hipGraphNode_t node, hipEvent_t* event) {
  return ApiCall("hipGraphEventWaitNodeGetEvent", [&] { return EventNodeGetEvent<EventWaitNode>(node, event); });
}

HIPR_EXPORT hipError_t hipGraphEventRecordNodeSetEvent(hipGraphNode_t node, hipEvent_t event) {
  return ApiCall("hipGraphEventRecordNodeSetEvent", [&] {
    GraphOp op;
    if (hipError_t e = EventNodeOf<EventRecordNode>(event, &op); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphEventWaitNodeSetEvent(hipGraphNode_t node, hipEvent_t event) {
  return ApiCall("hipGraphEventWaitNodeSetEvent", [&] {
    GraphOp op;
    if (hipError_t e = EventNodeOf<EventWaitNode>(event, &op); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphAddChildGraphNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                 size_t dep_count, hipGraph_t child) {
  return ApiCall("hipGraphAddChildGraphNode", [&] {
    if (child == nullptr) return hipErrorInvalidValue;
    return Graphs().GraphAddNode(graph, deps, dep_count, CurrentDeviceOr0(), ChildGraphNode{child}, node);
  });
}

HIPR_EXPORT hipError_t hipGraphChildGraphNodeGetGraph(hipGraphNode_t node, hipGraph_t* graph) {
  return ApiCall("hipGraphChildGraphNodeGetGraph", [&] {
    if (graph == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    const auto* c = std::get_if<ChildGraphNode>(&op);
    if (c == nullptr) return hipErrorInvalidValue;
    *graph = c->graph;
    return hipSuccess;
  });
}

// ---- Graph structure -------------------------------------------------------------------------

HIPR_EXPORT hipError_t hipGraphRemoveDependencies(hipGraph_t graph, const hipGraphNode_t* from,
                                                  const hipGraphNode_t* to, size_t count) {
  return ApiCall("hipGraphRemoveDependencies",
                 [&] { return Graphs().GraphRemoveDependencies(graph, from, to, count); });
}

HIPR_EXPORT hipError_t hipGraphDestroyNode(hipGraphNode_t node) {
  return ApiCall("hipGraphDestroyNode", [&] { return Graphs().DestroyNode(node); });
}

HIPR_EXPORT hipError_t hipGraphClone(hipGraph_t* clone, hipGraph_t graph) {
  return ApiCall("hipGraphClone", [&] { return Graphs().GraphClone(graph, clone); });
}

HIPR_EXPORT hipError_t hipGraphNodeFindInClone(hipGraphNode_t* out, hipGraphNode_t node, hipGraph_t clone) {
  return ApiCall("hipGraphNodeFindInClone", [&] { return Graphs().NodeFindInClone(node, clone, out); });
}

HIPR_EXPORT hipError_t hipGraphDebugDotPrint(hipGraph_t graph, const char* path, unsigned int flags) {
  // Every flag only asks for more detail; the file always has each node's
  // kind and main parameters.
  (void)flags;
  return ApiCall("hipGraphDebugDotPrint", [&] { return Graphs().GraphDebugDot(graph, path); });
}

// ---- Executable graphs ------------------------------------------------------------------------

HIPR_EXPORT hipError_t hipGraphExecGetFlags(hipGraphExec_t exec, unsigned long long* flags) {
  return ApiCall("hipGraphExecGetFlags", [&] { return Graphs().GraphExecGetFlags(exec, flags); });
}

HIPR_EXPORT hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream) {
  return ApiCall("hipGraphUpload", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    return Graphs().GraphUpload(exec, target.device);
  });
}

HIPR_EXPORT hipError_t hipGraphExecKernelNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                       const hipKernelNodeParams* params) {
  return ApiCall("hipGraphExecKernelNodeSetParams", [&] {
    KernelNode k;
    int device = 0;
    if (hipError_t e = KernelNodeOf(params, &k, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(k));
  });
}

HIPR_EXPORT hipError_t hipGraphExecMemsetNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                       const hipMemsetParams* caller_params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphExecMemsetNodeSetParams", [&] {
    hipMemsetParams storage;
    const hipMemsetParams* params = MemsetParamsFrom(caller_params, major >= 7, &storage);
    msg::MemsetRequest req;
    if (hipError_t e = MemsetNodeOf(params, &req); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, req);
  });
}

HIPR_EXPORT hipError_t hipGraphExecMemcpyNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                       hipMemcpy3DParms* params) {
  return ApiCall("hipGraphExecMemcpyNodeSetParams", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = Memcpy3DNodeOf(params, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecMemcpyNodeSetParams1D(hipGraphExec_t exec, hipGraphNode_t node, void* dst,
                                                         const void* src, size_t count, hipMemcpyKind kind) {
  return ApiCall("hipGraphExecMemcpyNodeSetParams1D", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = Memcpy1DNodeOf(dst, src, count, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecMemcpyNodeSetParamsToSymbol(hipGraphExec_t exec, hipGraphNode_t node,
                                                               const void* symbol, const void* src, size_t count,
                                                               size_t offset, hipMemcpyKind kind) {
  return ApiCall("hipGraphExecMemcpyNodeSetParamsToSymbol", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = ToSymbolNodeOf(symbol, src, count, offset, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecMemcpyNodeSetParamsFromSymbol(hipGraphExec_t exec, hipGraphNode_t node, void* dst,
                                                                 const void* symbol, size_t count, size_t offset,
                                                                 hipMemcpyKind kind) {
  return ApiCall("hipGraphExecMemcpyNodeSetParamsFromSymbol", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = FromSymbolNodeOf(dst, symbol, count, offset, kind, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecHostNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                     const hipHostNodeParams* params) {
  return ApiCall("hipGraphExecHostNodeSetParams", [&] {
    if (params == nullptr || params->fn == nullptr) return hipErrorInvalidValue;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, HostFnNode{params->fn, params->userData, nullptr});
  });
}

HIPR_EXPORT hipError_t hipGraphExecEventRecordNodeSetEvent(hipGraphExec_t exec, hipGraphNode_t node,
                                                           hipEvent_t event) {
  return ApiCall("hipGraphExecEventRecordNodeSetEvent", [&] {
    GraphOp op;
    if (hipError_t e = EventNodeOf<EventRecordNode>(event, &op); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecEventWaitNodeSetEvent(hipGraphExec_t exec, hipGraphNode_t node, hipEvent_t event) {
  return ApiCall("hipGraphExecEventWaitNodeSetEvent", [&] {
    GraphOp op;
    if (hipError_t e = EventNodeOf<EventWaitNode>(event, &op); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecChildGraphNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                           hipGraph_t child) {
  return ApiCall("hipGraphExecChildGraphNodeSetParams", [&] {
    if (child == nullptr) return hipErrorInvalidValue;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, ChildGraphNode{child});
  });
}

HIPR_EXPORT hipError_t hipGraphNodeSetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int enabled) {
  return ApiCall("hipGraphNodeSetEnabled",
                 [&] { return Graphs().ExecSetEnabled(LiveSession(), exec, node, enabled != 0); });
}

HIPR_EXPORT hipError_t hipGraphNodeGetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int* enabled) {
  return ApiCall("hipGraphNodeGetEnabled", [&] {
    if (enabled == nullptr) return hipErrorInvalidValue;
    bool on = false;
    if (hipError_t e = Graphs().ExecGetEnabled(exec, node, &on); e != hipSuccess) return e;
    *enabled = on ? 1 : 0;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGraphExecUpdate(hipGraphExec_t exec, hipGraph_t graph, hipGraphNode_t* error_node,
                                          hipGraphExecUpdateResult* result) {
  return ApiCall("hipGraphExecUpdate",
                 [&] { return Graphs().ExecUpdate(LiveSession(), exec, graph, error_node, result); });
}

// ---- Driver-API graph nodes (ROCm 6.x): HIP_MEMCPY3D in the caller's
// layout (per_major.txt) and memsets; the context names the current device.

namespace {

hipError_t DrvMemcpyNodeOf(const HIP_MEMCPY3D* drv, int major, GraphOp* op, int* device) {
  hipMemcpy3DParms p;
  if (hipError_t e = DrvMemcpy3DToParms(drv, major, &p); e != hipSuccess) return e;
  return Memcpy3DNodeOf(&p, op, device);
}

}  // namespace

HIPR_EXPORT hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                size_t dep_count, const HIP_MEMCPY3D* params, hipCtx_t) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvGraphAddMemcpyNode", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = DrvMemcpyNodeOf(params, major, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t node, HIP_MEMCPY3D* params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvGraphMemcpyNodeGetParams", [&] {
    if (params == nullptr) return hipErrorInvalidValue;
    GraphOp op;
    if (hipError_t e = Graphs().NodeGetOp(node, &op); e != hipSuccess) return e;
    hipMemcpy3DParms p;
    if (hipError_t e = Memcpy3DParamsOf(op, &p); e != hipSuccess) return e;
    ParmsToDrvMemcpy3D(p, major, params);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t node, const HIP_MEMCPY3D* params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvGraphMemcpyNodeSetParams", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = DrvMemcpyNodeOf(params, major, &op, &device); e != hipSuccess) return e;
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                          const HIP_MEMCPY3D* params, hipCtx_t) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvGraphExecMemcpyNodeSetParams", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = DrvMemcpyNodeOf(params, major, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                                size_t dep_count, const void* caller_params, hipCtx_t) {
  return ApiCall("hipDrvGraphAddMemsetNode", [&] {
    hipMemsetParams storage;
    const hipMemsetParams* params = MemsetParamsFrom(caller_params, true, &storage);
    msg::MemsetRequest req;
    if (hipError_t e = MemsetNodeOf(params, &req); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, req.device, req, node);
  });
}

HIPR_EXPORT hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                          const void* caller_params, hipCtx_t) {
  return ApiCall("hipDrvGraphExecMemsetNodeSetParams", [&] {
    hipMemsetParams storage;
    const hipMemsetParams* params = MemsetParamsFrom(caller_params, true, &storage);
    msg::MemsetRequest req;
    if (hipError_t e = MemsetNodeOf(params, &req); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, req);
  });
}

// ---- ROCm 6.2's generic node parameters (hipGraphAddNode & co.) ----------

namespace {

// hipGraphNodeParams and hipMemcpyNodeParams, declared by layout (Debian's
// 5.2 header has neither): a node type, then a union of each kind's
// parameters in 29 long longs, then a reserved long long.
struct HiprMemcpyNodeParams {
  int flags;  // Must be zero.
  int reserved[3];
  hipMemcpy3DParms copy;
};
struct HiprGraphNodeParams {
  int type;  // hipGraphNodeType, in the caller's numbering (see hipGraphNodeGetType).
  int reserved0[3];
  union {
    long long reserved1[29];
    hipKernelNodeParams kernel;
    HiprMemcpyNodeParams memcpy;
    hipMemsetParams memset;
    hipHostNodeParams host;
    hipGraph_t graph;
    hipEvent_t event;
  };
  long long reserved2;
};
static_assert(sizeof(HiprGraphNodeParams) == 256);
static_assert(offsetof(HiprGraphNodeParams, kernel) == 16);

// The operation `p` describes, its type numbered for `major` (see
// hipGraphNodeGetType): kernels, copies, memsets, host functions, child
// graphs, empty nodes and events. External semaphores, memory allocation
// and free, symbol copies and batch memory operations have no generic form
// here.
hipError_t GenericNodeOf(const HiprGraphNodeParams* p, int major, GraphOp* op, int* device) {
  if (p == nullptr) return hipErrorInvalidValue;
  *device = CurrentDeviceOr0();
  const int first_other = major >= 6 ? 8 : 9;  // The first type past event record.
  const int type = major >= 6 && p->type >= 0 && p->type < first_other ? p->type + 1 : p->type;
  switch (type) {
    case hipGraphNodeTypeKernel: {
      KernelNode k;
      if (hipError_t e = KernelNodeOf(&p->kernel, &k, device); e != hipSuccess) return e;
      *op = std::move(k);
      return hipSuccess;
    }
    case hipGraphNodeTypeMemcpy:
      if (p->memcpy.flags != 0) return hipErrorInvalidValue;
      return Memcpy3DNodeOf(&p->memcpy.copy, op, device);
    case hipGraphNodeTypeMemset: {
      msg::MemsetRequest req;
      hipMemsetParams storage;
      if (hipError_t e = MemsetNodeOf(MemsetParamsFrom(&p->memset, major >= 7, &storage), &req); e != hipSuccess)
        return e;
      *device = req.device;
      *op = req;
      return hipSuccess;
    }
    case hipGraphNodeTypeHost:
      if (p->host.fn == nullptr) return hipErrorInvalidValue;
      *op = HostFnNode{p->host.fn, p->host.userData, nullptr};
      return hipSuccess;
    case hipGraphNodeTypeGraph:
      if (p->graph == nullptr) return hipErrorInvalidValue;
      *op = ChildGraphNode{p->graph};
      return hipSuccess;
    case hipGraphNodeTypeEmpty: *op = EmptyNode{}; return hipSuccess;
    case hipGraphNodeTypeWaitEvent: return EventNodeOf<EventWaitNode>(p->event, op);
    case hipGraphNodeTypeEventRecord: return EventNodeOf<EventRecordNode>(p->event, op);
    default:
      if (p->type >= first_other && p->type <= (major >= 6 ? 14 : 15)) {
        HIPR_LOG_ONCE(kWarn, "hipGraphAddNode: node type %d (external semaphores, memory allocation, symbol "
                             "copies or batch memory operations) is not supported by hipr in this form; "
                             "returning hipErrorNotSupported", p->type);
        return hipErrorNotSupported;
      }
      return hipErrorInvalidValue;
  }
}

}  // namespace

HIPR_EXPORT hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                       size_t dep_count, HiprGraphNodeParams* params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphAddNode", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = GenericNodeOf(params, major, &op, &device); e != hipSuccess) return e;
    return Graphs().GraphAddNode(graph, deps, dep_count, device, std::move(op), node);
  });
}

HIPR_EXPORT hipError_t hipGraphNodeSetParams(hipGraphNode_t node, HiprGraphNodeParams* params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphNodeSetParams", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = GenericNodeOf(params, major, &op, &device); e != hipSuccess) return e;
    if (std::holds_alternative<ChildGraphNode>(op)) return hipErrorInvalidValue;  // As natively: not in place.
    return Graphs().NodeSetOp(node, std::move(op));
  });
}

HIPR_EXPORT hipError_t hipGraphExecNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                 HiprGraphNodeParams* params) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGraphExecNodeSetParams", [&] {
    GraphOp op;
    int device = 0;
    if (hipError_t e = GenericNodeOf(params, major, &op, &device); e != hipSuccess) return e;
    return Graphs().ExecSetNodeOp(LiveSession(), exec, node, std::move(op));
  });
}

// ---- User objects (ROCm 5.3; graph.h says when destructors run) -------------

HIPR_EXPORT hipError_t hipUserObjectCreate(UserObject** object, void* ptr, hipHostFn_t destroy,
                                           unsigned int initial_refcount, unsigned int flags) {
  return ApiCall("hipUserObjectCreate", [&] {
    // hipUserObjectNoDestructorSync, the only flag, is required (as natively).
    if (flags != 1) return hipErrorInvalidValue;
    return Graphs().UserObjectCreate(object, ptr, destroy, initial_refcount);
  });
}

HIPR_EXPORT hipError_t hipUserObjectRetain(UserObject* object, unsigned int count) {
  return ApiCall("hipUserObjectRetain", [&] { return Graphs().UserObjectRetain(object, count); });
}

HIPR_EXPORT hipError_t hipUserObjectRelease(UserObject* object, unsigned int count) {
  return ApiCall("hipUserObjectRelease", [&] { return Graphs().UserObjectRelease(object, count); });
}

HIPR_EXPORT hipError_t hipGraphRetainUserObject(hipGraph_t graph, UserObject* object, unsigned int count,
                                                unsigned int flags) {
  return ApiCall("hipGraphRetainUserObject", [&] {
    if (flags > 1) return hipErrorInvalidValue;  // 0, or hipGraphUserObjectMove.
    return Graphs().GraphRetainUserObject(graph, object, count, flags == 1);
  });
}

HIPR_EXPORT hipError_t hipGraphReleaseUserObject(hipGraph_t graph, UserObject* object, unsigned int count) {
  return ApiCall("hipGraphReleaseUserObject", [&] { return Graphs().GraphReleaseUserObject(graph, object, count); });
}
