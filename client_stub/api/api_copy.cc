// Copy and memset entry points.
//
// Direction comes from the allocation map, as the HIP runtime (clr) takes it
// from its memory objects, never from the kind (copy_kind.h has ROCm's rules
// for when a kind is refused). Host-to-host copies are done locally.
//
// Semantics per direction:
//  * host -> device, blocking: sent with want_reply and awaited. Async: a
//    fire-and-forget frame; bulk up to 64 KiB is copied into the send batch,
//    larger bulk is written to the socket straight from the caller's memory
//    before the call returns. Pageable or pinned alike, the source has been
//    consumed when the call returns (pinned sources are not read at flush
//    time yet).
//  * device -> host: blocking, or async into pageable memory: a round trip;
//    the reply's bulk is read straight into the caller's rows, so the call
//    has completed when it returns (as native HIP's pageable copies). Async
//    into pinned memory (wholly inside one hipHostMalloc allocation):
//    fire-and-forget; the bytes are written into the caller's rows by
//    whichever thread reads the socket when the worker sends them, before
//    the reply of any later call that synchronizes with the stream
//    (Session::PostCopyFromDevice). hipHostFree waits for them.
//  * over shm, host memory in the session's host segment (hipHostMalloc
//    places it there): no bytes cross; the worker copies between the
//    segment and device memory in stream order. Async copies from it are
//    read when the stream gets there, as a GPU reads pinned memory; async
//    copies into it have landed when the stream's next synchronization
//    reports completion.
//  * device -> device: blocking forms wait for the reply, async forms are
//    fire-and-forget.
//  * memsets (hipMemsetAsync and the other Async forms) are fire-and-forget
//    on their stream; the blocking forms (hipMemset, hipMemset2D/3D,
//    hipMemsetD8/16/32, hipMemsetD2D*) then synchronize with the stream, as
//    clr waits for the fill, so any stream sees the bytes afterwards.
//  * while the stream captures (graph.h), async copies and memsets become
//    graph nodes and blocking copies are hipErrorStreamCaptureUnsupported.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/copies/copy_engine.h"
#include "client_stub/copies/copy_kind.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/textures/hip_arrays.h"
#include "client_stub/managed/managed_vars.h"

using namespace hipr;
using namespace hipr::client;

namespace {

using Mode = CopyMode;
using Rect = CopyRect;

bool Extent(size_t pitch, size_t width, size_t height, uint64_t* out) { return CopyExtent(pitch, width, height, out); }

// A validated copy (copy_engine.h) on the application's `stream`.
hipError_t Copy(Session& s, const Rect& r, hipMemcpyKind kind, KindRule rule, hipStream_t stream, Mode mode) {
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  return CopyRows(Client::Get(), s, ManagedVars::Get(), r, kind, rule, target, mode);
}

// hipMemcpy and friends. HIP checks the size before the direction for
// blocking copies and the direction first for async ones.
hipError_t Memcpy(void* dst, const void* src, size_t size, hipMemcpyKind kind, hipStream_t stream,
                  Mode mode) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (mode == Mode::kAsync && !ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  if (size == 0) return hipSuccess;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  if (!ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  if (src == dst && kind == hipMemcpyDefault) return hipSuccess;
  return Copy(*s, Rect{dst, size, src, size, size, 1}, kind, KindRule::kPointers, stream, mode);
}

hipError_t Memcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, hipMemcpyKind kind, hipStream_t stream, Mode mode) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (!ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  if (width == 0 || height == 0) return hipSuccess;
  if (width > dpitch || width > spitch) return hipErrorInvalidPitchValue;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  return Copy(*s, Rect{dst, dpitch, src, spitch, width, height}, kind, KindRule::kClaimed, stream, mode);
}

// Fills `height` rows, `pitch` bytes apart, of `count` elements of
// `element_size` bytes at `dst` with `value`. kBlocking (hipMemset,
// hipMemset2D, hipMemsetD8...): as clr, which waits for the fill to
// complete, the call returns once the stream has done it, so work on any
// other stream (a non-blocking one included) sees the bytes.
hipError_t Memset(void* dst, uint32_t value, uint8_t element_size, size_t count, hipStream_t stream, Mode mode,
                  size_t pitch = 0, size_t height = 1) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (count > SIZE_MAX / element_size) return hipErrorInvalidValue;
  const uint64_t bytes = static_cast<uint64_t>(count) * element_size;
  if (bytes == 0 || height == 0) return hipSuccess;
  if (dst == nullptr) return hipErrorInvalidValue;
  if (height == 1) pitch = bytes;
  if (pitch < bytes) return hipErrorInvalidPitchValue;
  uint64_t extent = 0;
  if (!Extent(pitch, bytes, height, &extent)) return hipErrorInvalidValue;
  DeviceAllocation a;
  if (!Client::Get().allocations().FindDevice(reinterpret_cast<uint64_t>(dst), extent, &a))
    return hipErrorInvalidValue;
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  msg::MemsetRequest req;
  req.device = target.device;
  req.stream = target.id;
  req.dst = msg::Region{reinterpret_cast<uint64_t>(dst), pitch, bytes, height};
  req.value = value;
  req.element_size = element_size;
  if (hipError_t captured = hipSuccess; AnyCapture() && CaptureNode(target.device, target.id, req, &captured))
    return captured;
  if (mode == Mode::kBlocking)
    if (hipError_t e = CheckNotCapturing(target.device, target.id, false); e != hipSuccess) return e;
  ManagedVars::Get().MarkWritten(*s, target.device, target.id, dst, extent);
  Status posted = s->Post<wire::Op::kMemset>(req);
  if (!posted.ok() || mode == Mode::kAsync) return ToHipError(posted);
  // The fill's own error, if any, comes back with the synchronization.
  msg::CallReply reply;
  Status st = s->Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{target.id}, &reply);
  return AfterSync(*s, target.device, target.id, st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st));
}

}  // namespace

hipError_t hipr::client::CopyMemory2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                           size_t height, hipMemcpyKind kind, hipStream_t stream) {
  return Memcpy2D(dst, dpitch, src, spitch, width, height, kind, stream, Mode::kAsync);
}

hipError_t hipr::client::CopyMemory(void* dst, const void* src, size_t size, hipMemcpyKind kind,
                                    hipStream_t stream, bool async) {
  return Memcpy(dst, src, size, kind, stream, async ? Mode::kAsync : Mode::kBlocking);
}

HIPR_EXPORT hipError_t hipMemcpy(void* dst, const void* src, size_t size, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy", [&] { return Memcpy(dst, src, size, kind, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpyWithStream(void* dst, const void* src, size_t size,
                                           hipMemcpyKind kind, hipStream_t stream) {
  return ApiCall("hipMemcpyWithStream",
                 [&] { return Memcpy(dst, src, size, kind, stream, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpyAsync(void* dst, const void* src, size_t size, hipMemcpyKind kind,
                                      hipStream_t stream) {
  return ApiCall("hipMemcpyAsync", [&] { return Memcpy(dst, src, size, kind, stream, Mode::kAsync); });
}

// The _spt forms (code built with -fgpu-default-stream=per-thread): the
// null stream means the calling thread's per-thread stream.
namespace {
hipStream_t PerThread(hipStream_t stream) { return stream == nullptr ? hipStreamPerThread : stream; }
}  // namespace

HIPR_EXPORT hipError_t hipMemcpy_spt(void* dst, const void* src, size_t size, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy_spt",
                 [&] { return Memcpy(dst, src, size, kind, hipStreamPerThread, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpyAsync_spt(void* dst, const void* src, size_t size, hipMemcpyKind kind,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyAsync_spt",
                 [&] { return Memcpy(dst, src, size, kind, PerThread(stream), Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t size) {
  return ApiCall("hipMemcpyHtoD",
                 [&] { return Memcpy(dst, src, size, hipMemcpyHostToDevice, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t size) {
  return ApiCall("hipMemcpyDtoH",
                 [&] { return Memcpy(dst, src, size, hipMemcpyDeviceToHost, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpyDtoD(hipDeviceptr_t dst, hipDeviceptr_t src, size_t size) {
  return ApiCall("hipMemcpyDtoD", [&] {
    return Memcpy(dst, src, size, hipMemcpyDeviceToDevice, nullptr, Mode::kBlocking);
  });
}

HIPR_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t size,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyHtoDAsync",
                 [&] { return Memcpy(dst, src, size, hipMemcpyHostToDevice, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t size,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyDtoHAsync",
                 [&] { return Memcpy(dst, src, size, hipMemcpyDeviceToHost, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src, size_t size,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyDtoDAsync",
                 [&] { return Memcpy(dst, src, size, hipMemcpyDeviceToDevice, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                                   size_t width, size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2D", [&] {
    return Memcpy2D(dst, dpitch, src, spitch, width, height, kind, nullptr, Mode::kBlocking);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2D_spt(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                       size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2D_spt", [&] {
    return Memcpy2D(dst, dpitch, src, spitch, width, height, kind, hipStreamPerThread, Mode::kBlocking);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                        size_t width, size_t height, hipMemcpyKind kind,
                                        hipStream_t stream) {
  return ApiCall("hipMemcpy2DAsync", [&] {
    return Memcpy2D(dst, dpitch, src, spitch, width, height, kind, stream, Mode::kAsync);
  });
}

// hipMemset's value is a byte (HIP keeps the low 8 bits of the int).
HIPR_EXPORT hipError_t hipMemset(void* dst, int value, size_t size) {
  return ApiCall("hipMemset",
                 [&] { return Memset(dst, static_cast<uint8_t>(value), 1, size, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemset_spt(void* dst, int value, size_t size) {
  return ApiCall("hipMemset_spt",
                 [&] { return Memset(dst, static_cast<uint8_t>(value), 1, size, hipStreamPerThread,
                                     Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemsetAsync(void* dst, int value, size_t size, hipStream_t stream) {
  return ApiCall("hipMemsetAsync",
                 [&] { return Memset(dst, static_cast<uint8_t>(value), 1, size, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemset2D(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return ApiCall("hipMemset2D", [&] {
    return Memset(dst, static_cast<uint8_t>(value), 1, width, nullptr, Mode::kBlocking, pitch, height);
  });
}

HIPR_EXPORT hipError_t hipMemset2DAsync(void* dst, size_t pitch, int value, size_t width, size_t height,
                                        hipStream_t stream) {
  return ApiCall("hipMemset2DAsync", [&] {
    return Memset(dst, static_cast<uint8_t>(value), 1, width, stream, Mode::kAsync, pitch, height);
  });
}

HIPR_EXPORT hipError_t hipMemset2D_spt(void* dst, size_t pitch, int value, size_t width, size_t height) {
  return ApiCall("hipMemset2D_spt", [&] {
    return Memset(dst, static_cast<uint8_t>(value), 1, width, hipStreamPerThread, Mode::kBlocking, pitch, height);
  });
}

// 3-D copies between pitched pointers (hipMalloc3D memory or host memory
// described as hipPitchedPtr): one rectangular copy when the slices lie
// back to back in both, else one per slice. A copy with an array side
// (positions and width then in the array's elements) is a driver-API copy
// (ArrayMemcpy3D, below).
namespace {
hipError_t ArrayMemcpy3D(const hipMemcpy3DParms* p, hipStream_t stream, Mode mode);

hipError_t Memcpy3D(const hipMemcpy3DParms* p, hipStream_t stream, Mode mode) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  if (p->srcArray != nullptr || p->dstArray != nullptr) return ArrayMemcpy3D(p, stream, mode);
  if (!ValidKind(p->kind)) return hipErrorInvalidMemcpyDirection;
  const hipExtent& e = p->extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0) return hipSuccess;
  const hipPitchedPtr& from = p->srcPtr;
  const hipPitchedPtr& to = p->dstPtr;
  if (from.ptr == nullptr || to.ptr == nullptr) return hipErrorInvalidValue;
  if (p->srcPos.x + e.width > from.pitch || p->dstPos.x + e.width > to.pitch) return hipErrorInvalidPitchValue;
  if (p->srcPos.y + e.height > from.ysize || p->dstPos.y + e.height > to.ysize) return hipErrorInvalidValue;
  auto at = [](const hipPitchedPtr& q, const hipPos& pos, size_t z) {
    return static_cast<char*>(q.ptr) + (pos.z + z) * q.pitch * q.ysize + pos.y * q.pitch + pos.x;
  };
  if (e.height == from.ysize && e.height == to.ysize) {
    // Whole slices, back to back in both: one copy of height * depth rows.
    return Copy(*s, Rect{at(to, p->dstPos, 0), to.pitch, at(from, p->srcPos, 0), from.pitch, e.width, e.height * e.depth},
                p->kind, KindRule::kClaimed, stream, mode);
  }
  for (size_t z = 0; z < e.depth; ++z) {
    const Rect r{at(to, p->dstPos, z), to.pitch, at(from, p->srcPos, z), from.pitch, e.width, e.height};
    if (hipError_t err = Copy(*s, r, p->kind, KindRule::kClaimed, stream, mode); err != hipSuccess) return err;
  }
  return hipSuccess;
}
}  // namespace

HIPR_EXPORT hipError_t hipMemcpy3D(const hipMemcpy3DParms* p) {
  return ApiCall("hipMemcpy3D", [&] { return Memcpy3D(p, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpy3DAsync(const hipMemcpy3DParms* p, hipStream_t stream) {
  return ApiCall("hipMemcpy3DAsync", [&] { return Memcpy3D(p, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemcpy3D_spt(const hipMemcpy3DParms* p) {
  return ApiCall("hipMemcpy3D_spt", [&] { return Memcpy3D(p, hipStreamPerThread, Mode::kBlocking); });
}

// hipMemset3D: the box's bytes in every row of every slice of a pitched
// pointer (whole slices: one 2-D memset of height * depth rows).
namespace {
hipError_t Memset3D(hipPitchedPtr p, int value, hipExtent e, hipStream_t stream, Mode mode) {
  if (e.width == 0 || e.height == 0 || e.depth == 0) return LiveSession() != nullptr ? hipSuccess : hipErrorNoDevice;
  if (p.ptr == nullptr || e.height > p.ysize) return hipErrorInvalidValue;
  if (e.height == p.ysize)
    return Memset(p.ptr, static_cast<uint8_t>(value), 1, e.width, stream, mode, p.pitch, e.height * e.depth);
  for (size_t z = 0; z < e.depth; ++z) {
    void* slice = static_cast<char*>(p.ptr) + z * p.pitch * p.ysize;
    if (hipError_t err = Memset(slice, static_cast<uint8_t>(value), 1, e.width, stream, mode, p.pitch, e.height);
        err != hipSuccess)
      return err;
  }
  return hipSuccess;
}
}  // namespace

HIPR_EXPORT hipError_t hipMemset3D(hipPitchedPtr p, int value, hipExtent extent) {
  return ApiCall("hipMemset3D", [&] { return Memset3D(p, value, extent, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemset3DAsync(hipPitchedPtr p, int value, hipExtent extent, hipStream_t stream) {
  return ApiCall("hipMemset3DAsync", [&] { return Memset3D(p, value, extent, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemset3D_spt(hipPitchedPtr p, int value, hipExtent extent) {
  return ApiCall("hipMemset3D_spt", [&] { return Memset3D(p, value, extent, hipStreamPerThread, Mode::kBlocking); });
}

// The driver API's 2-D copy (hip_Memcpy2D): host and device sides map onto
// the 2-D copy path above, an array side onto the pitched device memory
// hipr keeps the array in (hip_arrays.h). The memory type
// fields are hipMemoryType, numbered per major (docs/architecture.md, "ABI
// and majors"), so they are read in the caller's numbering. As clr
// (hip::getDrvMemcpy3DDesc), a pitch of 0 means the row is origin + width
// bytes; a unified side names its memory in the *Device field and its
// direction is inferred.
namespace {
enum class Side { kHost, kDevice, kUnified, kArray, kInvalid };

Side SideOf(int type, int major) {
  if (major >= 6) {
    switch (type) {
      case 1: return Side::kHost;
      case 2: return Side::kDevice;
      case 3: return Side::kUnified;  // Managed: addressed the same everywhere.
      case 10: return Side::kArray;
      case 11: return Side::kUnified;
      default: return Side::kInvalid;
    }
  }
  switch (type) {
    case 0: return Side::kHost;
    case 1: return Side::kDevice;
    case 2: return Side::kArray;
    case 3: return Side::kUnified;
    default: return Side::kInvalid;
  }
}

// A driver-API copy (hip_Memcpy2D or HIP_MEMCPY3D) with its fields widened
// to size_t and its memory types still in the caller's numbering.
struct DrvCopy {
  struct Side3D {
    size_t x = 0, y = 0, z = 0;
    int type = 0;
    const void* host = nullptr;
    const void* device = nullptr;
    hipArray_const_t array = nullptr;  // Read when `type` says array.
    size_t pitch = 0, height = 0;
  } src, dst;
  size_t width = 0, height = 0, depth = 1;
};

int TypeNumber(Side side, int major);

// An array side becomes the device memory its array lives in, once the box
// (x in bytes) is known to lie inside the array. An unknown or freed array
// is hipErrorInvalidValue.
hipError_t ResolveArraySide(const char* api, DrvCopy::Side3D* side, const DrvCopy& c, int major) {
  ArrayInfo a;
  if (side->array == nullptr || !FindArray(side->array, &a)) {
    HIPR_LOG_DEBUG("%s: %p is not a live HIP array", api, static_cast<const void*>(side->array));
    return hipErrorInvalidValue;
  }
  if (side->x > a.row_bytes() || c.width > a.row_bytes() - side->x || side->y > a.rows() ||
      c.height > a.rows() - side->y || side->z > a.slices() || c.depth > a.slices() - side->z)
    return hipErrorInvalidValue;
  side->type = TypeNumber(Side::kDevice, major);
  side->device = a.data;
  side->pitch = a.pitch;
  side->height = a.rows();
  return hipSuccess;
}

// As clr (hip::getDrvMemcpy3DDesc): a pitch of 0 means the row is origin +
// width bytes, a slice height of 0 means the copy's height (plus origin).
hipError_t DrvMemcpy(const char* api, DrvCopy c, hipStream_t stream, Mode mode, int major) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  for (DrvCopy::Side3D* side : {&c.src, &c.dst}) {
    if (SideOf(side->type, major) != Side::kArray) continue;
    if (hipError_t e = ResolveArraySide(api, side, c, major); e != hipSuccess) return e;
  }
  const Side from = SideOf(c.src.type, major);
  const Side to = SideOf(c.dst.type, major);
  if (from == Side::kInvalid || to == Side::kInvalid) return hipErrorInvalidValue;
  hipMemcpyKind kind = hipMemcpyDefault;
  if (from != Side::kUnified && to != Side::kUnified) {
    kind = from == Side::kHost ? (to == Side::kHost ? hipMemcpyHostToHost : hipMemcpyHostToDevice)
                               : (to == Side::kHost ? hipMemcpyDeviceToHost : hipMemcpyDeviceToDevice);
  }
  const void* src_base = from == Side::kHost ? c.src.host : c.src.device;
  void* dst_base = const_cast<void*>(to == Side::kHost ? c.dst.host : c.dst.device);
  const size_t limit = SIZE_MAX / 4;  // Keeps every product below from overflowing.
  for (size_t v : {c.src.x, c.src.y, c.src.z, c.src.pitch, c.src.height, c.dst.x, c.dst.y, c.dst.z, c.dst.pitch,
                   c.dst.height, c.width, c.height, c.depth})
    if (v > limit) return hipErrorInvalidValue;
  const size_t spitch = c.src.pitch != 0 ? c.src.pitch : c.src.x + c.width;
  const size_t dpitch = c.dst.pitch != 0 ? c.dst.pitch : c.dst.x + c.width;
  const size_t sheight = c.src.height != 0 ? c.src.height : c.src.y + c.height;
  const size_t dheight = c.dst.height != 0 ? c.dst.height : c.dst.y + c.height;
  if (c.width == 0 || c.height == 0 || c.depth == 0) return hipSuccess;
  if (src_base == nullptr || dst_base == nullptr) return hipErrorInvalidValue;
  // The origin's bytes: x < pitch (width fits after it), y rows down.
  if (c.src.x + c.width > spitch || c.dst.x + c.width > dpitch) return hipErrorInvalidPitchValue;
  if (c.depth > 1 && (c.src.y + c.height > sheight || c.dst.y + c.height > dheight)) return hipErrorInvalidValue;
  const unsigned __int128 s_end = (unsigned __int128)(c.src.z + c.depth) * sheight * spitch;
  const unsigned __int128 d_end = (unsigned __int128)(c.dst.z + c.depth) * dheight * dpitch;
  if (s_end > SIZE_MAX || d_end > SIZE_MAX) return hipErrorInvalidValue;
  auto at = [](const void* base, const DrvCopy::Side3D& side, size_t pitch, size_t height, size_t z) {
    return static_cast<char*>(const_cast<void*>(base)) + (side.z + z) * height * pitch + side.y * pitch + side.x;
  };
  // A side typed as device memory must be memory the runtime knows (the
  // copy path checks, KindRule::kClaimed); one typed as host memory that is
  // device memory is copied as device memory, as clr does.
  if (c.depth == 1 || (c.height == sheight && c.height == dheight)) {
    // One rectangle: a 2-D copy, or whole slices back to back in both.
    return Memcpy2D(at(dst_base, c.dst, dpitch, dheight, 0), dpitch, at(src_base, c.src, spitch, sheight, 0), spitch,
                    c.width, c.height * c.depth, kind, stream, mode);
  }
  for (size_t z = 0; z < c.depth; ++z) {
    hipError_t e = Memcpy2D(at(dst_base, c.dst, dpitch, dheight, z), dpitch, at(src_base, c.src, spitch, sheight, z),
                            spitch, c.width, c.height, kind, stream, mode);
    if (e != hipSuccess) return e;
  }
  return hipSuccess;
}

hipError_t MemcpyParam2D(const hip_Memcpy2D* p, hipStream_t stream, Mode mode, int major) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  DrvCopy c;
  // Only the field a memory type names is read (an array pointer left in an
  // unused field is ignored, as natively).
  c.src = {p->srcXInBytes, p->srcY, 0, static_cast<int>(p->srcMemoryType), p->srcHost, p->srcDevice,
           p->srcArray, p->srcPitch, 0};
  c.dst = {p->dstXInBytes, p->dstY, 0, static_cast<int>(p->dstMemoryType), p->dstHost, p->dstDevice,
           p->dstArray, p->dstPitch, 0};
  c.width = p->WidthInBytes;
  c.height = p->Height;
  return DrvMemcpy("hipMemcpyParam2D", c, stream, mode, major);
}

// HIP_MEMCPY3D: 5.x has unsigned int offsets, pitches and sizes (Debian's
// header); 6.x/7.x widened them to size_t (ROCm 6.0 driver_types.h). The
// rest of the layout is the same.
template <class Index>
struct Memcpy3DLayout {
  Index srcXInBytes, srcY, srcZ, srcLOD;
  hipMemoryType srcMemoryType;
  const void* srcHost;
  hipDeviceptr_t srcDevice;
  hipArray_t srcArray;
  Index srcPitch, srcHeight;
  Index dstXInBytes, dstY, dstZ, dstLOD;
  hipMemoryType dstMemoryType;
  void* dstHost;
  hipDeviceptr_t dstDevice;
  hipArray_t dstArray;
  Index dstPitch, dstHeight;
  Index WidthInBytes, Height, Depth;
};
static_assert(sizeof(Memcpy3DLayout<unsigned>) == sizeof(HIP_MEMCPY3D));
static_assert(offsetof(Memcpy3DLayout<unsigned>, Depth) == offsetof(HIP_MEMCPY3D, Depth));

template <class Index>
DrvCopy DrvCopyOf(const Memcpy3DLayout<Index>& p, int major) {
  DrvCopy c;
  c.src = {p.srcXInBytes, p.srcY, p.srcZ, static_cast<int>(p.srcMemoryType), p.srcHost, p.srcDevice,
           p.srcArray, p.srcPitch, p.srcHeight};
  c.dst = {p.dstXInBytes, p.dstY, p.dstZ, static_cast<int>(p.dstMemoryType), p.dstHost, p.dstDevice,
           p.dstArray, p.dstPitch, p.dstHeight};
  (void)major;
  c.width = p.WidthInBytes;
  c.height = p.Height;
  c.depth = p.Depth;
  return c;
}

// The memory type `side` has in `major`'s numbering.
int TypeNumber(Side side, int major) {
  switch (side) {
    case Side::kHost: return major >= 6 ? 1 : 0;
    case Side::kDevice: return major >= 6 ? 2 : 1;
    case Side::kArray: return major >= 6 ? 10 : 2;
    default: return major >= 6 ? 11 : 3;  // Unified.
  }
}

template <class Index>
void WriteDrvCopy(const hipMemcpy3DParms& p, int major, Memcpy3DLayout<Index>* out) {
  const bool src_host = p.kind == hipMemcpyHostToDevice || p.kind == hipMemcpyHostToHost;
  const bool dst_host = p.kind == hipMemcpyDeviceToHost || p.kind == hipMemcpyHostToHost;
  const bool unified = p.kind == hipMemcpyDefault;
  *out = Memcpy3DLayout<Index>{};
  out->srcXInBytes = static_cast<Index>(p.srcPos.x);
  out->srcY = static_cast<Index>(p.srcPos.y);
  out->srcZ = static_cast<Index>(p.srcPos.z);
  out->srcMemoryType =
      static_cast<hipMemoryType>(TypeNumber(unified ? Side::kUnified : src_host ? Side::kHost : Side::kDevice, major));
  if (src_host)
    out->srcHost = p.srcPtr.ptr;
  else
    out->srcDevice = p.srcPtr.ptr;
  out->srcPitch = static_cast<Index>(p.srcPtr.pitch);
  out->srcHeight = static_cast<Index>(p.srcPtr.ysize);
  out->dstXInBytes = static_cast<Index>(p.dstPos.x);
  out->dstY = static_cast<Index>(p.dstPos.y);
  out->dstZ = static_cast<Index>(p.dstPos.z);
  out->dstMemoryType =
      static_cast<hipMemoryType>(TypeNumber(unified ? Side::kUnified : dst_host ? Side::kHost : Side::kDevice, major));
  if (dst_host)
    out->dstHost = p.dstPtr.ptr;
  else
    out->dstDevice = p.dstPtr.ptr;
  out->dstPitch = static_cast<Index>(p.dstPtr.pitch);
  out->dstHeight = static_cast<Index>(p.dstPtr.ysize);
  out->WidthInBytes = static_cast<Index>(p.extent.width);
  out->Height = static_cast<Index>(p.extent.height);
  out->Depth = static_cast<Index>(p.extent.depth);
}

hipError_t DrvMemcpy3D(const char* api, const void* p, hipStream_t stream, Mode mode, int major) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  const DrvCopy c = major >= 6 ? DrvCopyOf(*static_cast<const Memcpy3DLayout<size_t>*>(p), major)
                               : DrvCopyOf(*static_cast<const Memcpy3DLayout<unsigned>*>(p), major);
  return DrvMemcpy(api, c, stream, mode, major);
}

// A box copy whose non-array sides are typed by `kind` (hipMemcpyDefault:
// unified, the direction inferred), in 5.x's numbering.
DrvCopy::Side3D BoxSide(const CopySide& side, hipMemcpyKind kind, bool source) {
  DrvCopy::Side3D out;
  out.x = side.x;
  out.y = side.y;
  out.z = side.z;
  if (side.array != nullptr) {
    out.type = TypeNumber(Side::kArray, 5);
    out.array = side.array;
    return out;
  }
  const bool host = source ? (kind == hipMemcpyHostToDevice || kind == hipMemcpyHostToHost)
                           : (kind == hipMemcpyDeviceToHost || kind == hipMemcpyHostToHost);
  const Side type = kind == hipMemcpyDefault ? Side::kUnified : host ? Side::kHost : Side::kDevice;
  out.type = TypeNumber(type, 5);
  (host ? out.host : out.device) = side.ptr;
  out.pitch = side.pitch;
  out.height = side.height;
  return out;
}

// hipMemcpy3D with an array side: positions and width are in the array's
// elements (the source array's when both are arrays), as the runtime API
// defines them; a pointer side's position is in bytes.
hipError_t ArrayMemcpy3D(const hipMemcpy3DParms* p, hipStream_t stream, Mode mode) {
  ArrayInfo a;
  if (!FindArray(p->srcArray != nullptr ? p->srcArray : p->dstArray, &a)) return hipErrorInvalidValue;
  const size_t element = a.element_bytes;
  if (p->extent.width > SIZE_MAX / element) return hipErrorInvalidValue;
  CopySide from{p->srcArray, p->srcPtr.ptr, p->srcPos.x, p->srcPos.y, p->srcPos.z, p->srcPtr.pitch,
                p->srcPtr.ysize};
  CopySide to{p->dstArray, p->dstPtr.ptr, p->dstPos.x, p->dstPos.y, p->dstPos.z, p->dstPtr.pitch, p->dstPtr.ysize};
  for (CopySide* side : {&from, &to}) {
    if (side->array == nullptr) continue;
    ArrayInfo s;
    if (!FindArray(side->array, &s) || side->x > SIZE_MAX / s.element_bytes) return hipErrorInvalidValue;
    side->x *= s.element_bytes;
  }
  return CopyBox("hipMemcpy3D", from, to, p->extent.width * element, p->extent.height, p->extent.depth, p->kind,
                 stream, mode == Mode::kAsync);
}
}  // namespace

hipError_t hipr::client::CopyBox(const char* api, const CopySide& src, const CopySide& dst, size_t width,
                                 size_t height, size_t depth, hipMemcpyKind kind, hipStream_t stream, bool async) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (!ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  DrvCopy c;
  c.src = BoxSide(src, kind, true);
  c.dst = BoxSide(dst, kind, false);
  c.width = width;
  c.height = height;
  c.depth = depth;
  return DrvMemcpy(api, c, stream, async ? Mode::kAsync : Mode::kBlocking, 5);
}

HIPR_EXPORT hipError_t hipMemcpyParam2D(const hip_Memcpy2D* p) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipMemcpyParam2D", [&] { return MemcpyParam2D(p, nullptr, Mode::kBlocking, major); });
}

HIPR_EXPORT hipError_t hipMemcpyParam2DAsync(const hip_Memcpy2D* p, hipStream_t stream) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipMemcpyParam2DAsync", [&] { return MemcpyParam2D(p, stream, Mode::kAsync, major); });
}

HIPR_EXPORT hipError_t hipDrvMemcpy3D(const HIP_MEMCPY3D* p) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvMemcpy3D",
                 [&] { return DrvMemcpy3D("hipDrvMemcpy3D", p, nullptr, Mode::kBlocking, major); });
}

HIPR_EXPORT hipError_t hipDrvMemcpy3DAsync(const HIP_MEMCPY3D* p, hipStream_t stream) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvMemcpy3DAsync",
                 [&] { return DrvMemcpy3D("hipDrvMemcpy3DAsync", p, stream, Mode::kAsync, major); });
}

// The driver API's 2-D copy without alignment requirements: hipr has none.
HIPR_EXPORT hipError_t hipDrvMemcpy2DUnaligned(const hip_Memcpy2D* p) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvMemcpy2DUnaligned", [&] { return MemcpyParam2D(p, nullptr, Mode::kBlocking, major); });
}

// ROCm 7.1's 2-D memsets of 1-, 2- and 4-byte elements: `height` rows of
// `width` elements, `pitch` bytes apart.
HIPR_EXPORT hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width,
                                     size_t height) {
  return ApiCall("hipMemsetD2D8",
                 [&] { return Memset(dst, value, 1, width, nullptr, Mode::kBlocking, pitch, height); });
}
HIPR_EXPORT hipError_t hipMemsetD2D8Async(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width,
                                          size_t height, hipStream_t stream) {
  return ApiCall("hipMemsetD2D8Async",
                 [&] { return Memset(dst, value, 1, width, stream, Mode::kAsync, pitch, height); });
}
HIPR_EXPORT hipError_t hipMemsetD2D16(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width,
                                      size_t height) {
  return ApiCall("hipMemsetD2D16",
                 [&] { return Memset(dst, value, 2, width, nullptr, Mode::kBlocking, pitch, height); });
}
HIPR_EXPORT hipError_t hipMemsetD2D16Async(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width,
                                           size_t height, hipStream_t stream) {
  return ApiCall("hipMemsetD2D16Async",
                 [&] { return Memset(dst, value, 2, width, stream, Mode::kAsync, pitch, height); });
}
HIPR_EXPORT hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width,
                                      size_t height) {
  return ApiCall("hipMemsetD2D32",
                 [&] { return Memset(dst, value, 4, width, nullptr, Mode::kBlocking, pitch, height); });
}
HIPR_EXPORT hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width,
                                           size_t height, hipStream_t stream) {
  return ApiCall("hipMemsetD2D32Async",
                 [&] { return Memset(dst, value, 4, width, stream, Mode::kAsync, pitch, height); });
}

hipError_t hipr::client::DrvMemcpy3DToParms(const void* drv, int major, hipMemcpy3DParms* out) {
  if (drv == nullptr || out == nullptr) return hipErrorInvalidValue;
  const DrvCopy c = major >= 6 ? DrvCopyOf(*static_cast<const Memcpy3DLayout<size_t>*>(drv), major)
                               : DrvCopyOf(*static_cast<const Memcpy3DLayout<unsigned>*>(drv), major);
  const Side from = SideOf(c.src.type, major);
  const Side to = SideOf(c.dst.type, major);
  if (from == Side::kArray || to == Side::kArray) {
    HIPR_LOG_ONCE(kWarn, "graph memcpy node: HIP arrays in graph nodes are not supported by hipr; "
                         "returning hipErrorNotSupported");
    return hipErrorNotSupported;
  }
  if (from == Side::kInvalid || to == Side::kInvalid) return hipErrorInvalidValue;
  hipMemcpy3DParms p{};
  p.kind = hipMemcpyDefault;
  if (from != Side::kUnified && to != Side::kUnified)
    p.kind = from == Side::kHost ? (to == Side::kHost ? hipMemcpyHostToHost : hipMemcpyHostToDevice)
                                 : (to == Side::kHost ? hipMemcpyDeviceToHost : hipMemcpyDeviceToDevice);
  // As DrvMemcpy: a pitch of 0 is origin + width, a slice height of 0 the
  // copy's height (plus origin).
  p.srcPtr = hipPitchedPtr{const_cast<void*>(from == Side::kHost ? c.src.host : c.src.device),
                           c.src.pitch != 0 ? c.src.pitch : c.src.x + c.width, c.width,
                           c.src.height != 0 ? c.src.height : c.src.y + c.height};
  p.dstPtr = hipPitchedPtr{const_cast<void*>(to == Side::kHost ? c.dst.host : c.dst.device),
                           c.dst.pitch != 0 ? c.dst.pitch : c.dst.x + c.width, c.width,
                           c.dst.height != 0 ? c.dst.height : c.dst.y + c.height};
  p.srcPos = hipPos{c.src.x, c.src.y, c.src.z};
  p.dstPos = hipPos{c.dst.x, c.dst.y, c.dst.z};
  p.extent = hipExtent{c.width, c.height, c.depth};
  *out = p;
  return hipSuccess;
}

void hipr::client::ParmsToDrvMemcpy3D(const hipMemcpy3DParms& p, int major, void* drv) {
  if (major >= 6)
    WriteDrvCopy(p, major, static_cast<Memcpy3DLayout<size_t>*>(drv));
  else
    WriteDrvCopy(p, major, static_cast<Memcpy3DLayout<unsigned>*>(drv));
}

// ROCm 7.1's peer 3-D copy: hipMemcpy3DParms with each side's device
// (hipMemcpy3DPeerParms, declared by layout), pitched device memory only.
namespace {

struct HiprMemcpy3DPeerParms {
  hipArray_t srcArray;
  hipPos srcPos;
  hipPitchedPtr srcPtr;
  int srcDevice;
  hipArray_t dstArray;
  hipPos dstPos;
  hipPitchedPtr dstPtr;
  int dstDevice;
  hipExtent extent;
};

hipError_t Memcpy3DPeer(const HiprMemcpy3DPeerParms* p, hipStream_t stream, Mode mode) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  if (CheckDevice(*s, p->srcDevice) != hipSuccess || CheckDevice(*s, p->dstDevice) != hipSuccess)
    return hipErrorInvalidDevice;
  // Each side must be memory of the device it names.
  const AllocationMap& map = Client::Get().allocations();
  DeviceAllocation a;
  if (p->srcArray == nullptr && p->dstArray == nullptr &&
      ((p->srcPtr.ptr != nullptr &&
        (!map.FindDevice(reinterpret_cast<uint64_t>(p->srcPtr.ptr), 1, &a) || a.device != p->srcDevice)) ||
       (p->dstPtr.ptr != nullptr &&
        (!map.FindDevice(reinterpret_cast<uint64_t>(p->dstPtr.ptr), 1, &a) || a.device != p->dstDevice))))
    return hipErrorInvalidValue;
  hipMemcpy3DParms q{};
  q.srcArray = p->srcArray;
  q.srcPos = p->srcPos;
  q.srcPtr = p->srcPtr;
  q.dstArray = p->dstArray;
  q.dstPos = p->dstPos;
  q.dstPtr = p->dstPtr;
  q.extent = p->extent;
  q.kind = hipMemcpyDeviceToDevice;
  return Memcpy3D(&q, stream, mode);
}

// ROCm 7.1's hipMemcpyAttributes, by layout.
struct HiprMemcpyAttributes {
  int src_access_order;  // hipMemcpySrcAccessOrder: Stream 1, DuringApiCall 2, Any 3.
  hipMemLocation src_hint;
  hipMemLocation dst_hint;
  unsigned int flags;
};

// hipMemcpyBatchAsync: each copy as hipMemcpyAsync on `stream`, in order.
// Every access order is met: hipr consumes an async copy's host source
// before the call returns. Location hints do not change where the worker
// copies; hipMemcpyFlagPreferOverlapWithCompute (1) is the only flag.
hipError_t MemcpyBatch(void** dsts, void** srcs, const size_t* sizes, size_t count,
                       const HiprMemcpyAttributes* attrs, const size_t* attr_indices, size_t attr_count,
                       size_t* fail_index, hipStream_t stream) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (fail_index != nullptr) *fail_index = SIZE_MAX;
  if (dsts == nullptr || srcs == nullptr || sizes == nullptr || count == 0 || attrs == nullptr ||
      attr_indices == nullptr || attr_count == 0 || attr_count > count || attr_indices[0] != 0)
    return hipErrorInvalidValue;
  for (size_t i = 0; i < attr_count; ++i) {
    if (i > 0 && attr_indices[i] <= attr_indices[i - 1]) return hipErrorInvalidValue;
    if (attr_indices[i] >= count || attrs[i].src_access_order < 1 || attrs[i].src_access_order > 3 ||
        (attrs[i].flags & ~1u) != 0)
      return hipErrorInvalidValue;
  }
  for (size_t i = 0; i < count; ++i) {
    if (hipError_t e = Memcpy(dsts[i], srcs[i], sizes[i], hipMemcpyDefault, stream, Mode::kAsync); e != hipSuccess) {
      if (fail_index != nullptr) *fail_index = i;
      return e;
    }
  }
  return hipSuccess;
}

// ROCm 7.1's batched 3-D copies, by layout: an operand is a pointer (row
// length and layer height in elements, 0 meaning the extent's) or an array
// and an offset in it.
struct HiprMemcpy3DOperand {
  int type;  // hipMemcpy3DOperandType: 1 pointer, 2 array.
  union {
    struct {
      void* ptr;
      size_t row_length;
      size_t layer_height;
      hipMemLocation hint;
    } ptr;
    struct {
      hipArray_t array;
      size_t offset[3];
    } array;
  } op;
};
struct HiprMemcpy3DBatchOp {
  HiprMemcpy3DOperand src;
  HiprMemcpy3DOperand dst;
  hipExtent extent;
  int src_access_order;
  unsigned int flags;
};
static_assert(sizeof(HiprMemcpy3DBatchOp) == 112);

// One batch operation as the hipMemcpy3DParms it stands for. The extent is
// in elements: an array side's element size, or bytes when both sides are
// pointers.
hipError_t BatchOpParms(const HiprMemcpy3DBatchOp& op, hipMemcpy3DParms* p) {
  if (op.src_access_order < 1 || op.src_access_order > 3 || (op.flags & ~1u) != 0) return hipErrorInvalidValue;
  size_t element = 1;
  for (const HiprMemcpy3DOperand* side : {&op.src, &op.dst}) {
    if (side->type != 1 && side->type != 2) return hipErrorInvalidValue;
    if (side->type != 2) continue;
    ArrayInfo a;
    if (!FindArray(side->op.array.array, &a)) return hipErrorInvalidValue;
    element = a.element_bytes;
  }
  *p = hipMemcpy3DParms{};
  p->extent = op.extent;
  p->kind = hipMemcpyDefault;
  auto set = [&](const HiprMemcpy3DOperand& side, hipArray_t* array, hipPos* pos, hipPitchedPtr* ptr) {
    if (side.type == 2) {
      *array = side.op.array.array;
      *pos = make_hipPos(side.op.array.offset[0], side.op.array.offset[1], side.op.array.offset[2]);
      return;
    }
    const size_t row = side.op.ptr.row_length != 0 ? side.op.ptr.row_length : op.extent.width;
    const size_t layer = side.op.ptr.layer_height != 0 ? side.op.ptr.layer_height : op.extent.height;
    *ptr = make_hipPitchedPtr(side.op.ptr.ptr, row * element, row, layer);
  };
  set(op.src, &p->srcArray, &p->srcPos, &p->srcPtr);
  set(op.dst, &p->dstArray, &p->dstPos, &p->dstPtr);
  for (const HiprMemcpy3DOperand* side : {&op.src, &op.dst})
    if (side->type == 1 && side->op.ptr.row_length > SIZE_MAX / element) return hipErrorInvalidValue;
  return hipSuccess;
}

// hipMemcpy3DBatchAsync: each operation as hipMemcpy3DAsync on `stream`, in
// order, stopping at the first that fails (its index in *fail_index).
// Access orders are met as for hipMemcpyBatchAsync; flags must be 0.
hipError_t Memcpy3DBatch(size_t count, const HiprMemcpy3DBatchOp* ops, size_t* fail_index, unsigned long long flags,
                         hipStream_t stream) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (fail_index != nullptr) *fail_index = SIZE_MAX;
  if (count == 0 || ops == nullptr || flags != 0) return hipErrorInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    hipMemcpy3DParms p;
    hipError_t e = BatchOpParms(ops[i], &p);
    if (e == hipSuccess) e = Memcpy3D(&p, stream, Mode::kAsync);
    if (e != hipSuccess) {
      if (fail_index != nullptr) *fail_index = i;
      return e;
    }
  }
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipMemcpy3DPeer(HiprMemcpy3DPeerParms* p) {
  return ApiCall("hipMemcpy3DPeer", [&] { return Memcpy3DPeer(p, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpy3DPeerAsync(HiprMemcpy3DPeerParms* p, hipStream_t stream) {
  return ApiCall("hipMemcpy3DPeerAsync", [&] { return Memcpy3DPeer(p, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count,
                                           HiprMemcpyAttributes* attrs, size_t* attr_indices, size_t attr_count,
                                           size_t* fail_index, hipStream_t stream) {
  return ApiCall("hipMemcpyBatchAsync", [&] {
    return MemcpyBatch(dsts, srcs, sizes, count, attrs, attr_indices, attr_count, fail_index, stream);
  });
}

HIPR_EXPORT hipError_t hipMemcpy3DBatchAsync(size_t count, HiprMemcpy3DBatchOp* ops, size_t* fail_index,
                                             unsigned long long flags, hipStream_t stream) {
  return ApiCall("hipMemcpy3DBatchAsync", [&] { return Memcpy3DBatch(count, ops, fail_index, flags, stream); });
}

// The per-thread forms of the async copies and memsets.
HIPR_EXPORT hipError_t hipMemcpy2DAsync_spt(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                            size_t height, hipMemcpyKind kind, hipStream_t stream) {
  return hipMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind,
                          stream == nullptr ? hipStreamPerThread : stream);
}

HIPR_EXPORT hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms* p, hipStream_t stream) {
  return hipMemcpy3DAsync(p, stream == nullptr ? hipStreamPerThread : stream);
}

HIPR_EXPORT hipError_t hipMemsetAsync_spt(void* dst, int value, size_t size, hipStream_t stream) {
  return hipMemsetAsync(dst, value, size, stream == nullptr ? hipStreamPerThread : stream);
}

HIPR_EXPORT hipError_t hipMemset2DAsync_spt(void* dst, size_t pitch, int value, size_t width, size_t height,
                                            hipStream_t stream) {
  return hipMemset2DAsync(dst, pitch, value, width, height, stream == nullptr ? hipStreamPerThread : stream);
}

HIPR_EXPORT hipError_t hipMemset3DAsync_spt(hipPitchedPtr p, int value, hipExtent extent, hipStream_t stream) {
  return hipMemset3DAsync(p, value, extent, stream == nullptr ? hipStreamPerThread : stream);
}

// Peer copies: device memory of any device of the session, on the calling
// thread's device's stream (the worker reaches every device's memory).
namespace {
hipError_t PeerCopy(void* dst, int dst_device, const void* src, int src_device, size_t size, hipStream_t stream,
                    Mode mode) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (CheckDevice(*s, dst_device) != hipSuccess || CheckDevice(*s, src_device) != hipSuccess)
    return hipErrorInvalidDevice;
  if (size == 0) return hipSuccess;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  // As clr: the device numbers are only range-checked; the pointers decide
  // where the bytes go (a copy between two devices' memory crosses devices).
  return Copy(*s, Rect{dst, size, src, size, size, 1}, hipMemcpyDeviceToDevice, KindRule::kPointers, stream, mode);
}
}  // namespace

HIPR_EXPORT hipError_t hipMemcpyPeer(void* dst, int dst_device, const void* src, int src_device, size_t size) {
  return ApiCall("hipMemcpyPeer",
                 [&] { return PeerCopy(dst, dst_device, src, src_device, size, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t size,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyPeerAsync",
                 [&] { return PeerCopy(dst, dst_device, src, src_device, size, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t count) {
  return ApiCall("hipMemsetD8", [&] { return Memset(dst, value, 1, count, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value, size_t count,
                                        hipStream_t stream) {
  return ApiCall("hipMemsetD8Async", [&] { return Memset(dst, value, 1, count, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemsetD16(hipDeviceptr_t dst, unsigned short value, size_t count) {
  return ApiCall("hipMemsetD16", [&] { return Memset(dst, value, 2, count, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemsetD16Async(hipDeviceptr_t dst, unsigned short value, size_t count,
                                         hipStream_t stream) {
  return ApiCall("hipMemsetD16Async", [&] { return Memset(dst, value, 2, count, stream, Mode::kAsync); });
}

HIPR_EXPORT hipError_t hipMemsetD32(hipDeviceptr_t dst, int value, size_t count) {
  return ApiCall("hipMemsetD32",
                 [&] { return Memset(dst, static_cast<uint32_t>(value), 4, count, nullptr, Mode::kBlocking); });
}

HIPR_EXPORT hipError_t hipMemsetD32Async(hipDeviceptr_t dst, int value, size_t count,
                                         hipStream_t stream) {
  return ApiCall("hipMemsetD32Async",
                 [&] { return Memset(dst, static_cast<uint32_t>(value), 4, count, stream, Mode::kAsync); });
}
