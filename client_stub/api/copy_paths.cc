#include "client_stub/api/copy_paths.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "client_stub/api/api_common.h"
#include "client_stub/copies/copy_engine.h"
#include "client_stub/copies/copy_kind.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/textures/hip_arrays.h"

namespace hipr::client {
namespace {


using Mode = CopyMode;
using Rect = CopyRect;

bool Extent(size_t pitch, size_t width, size_t height, uint64_t* out) { return CopyExtent(pitch, width, height, out); }

// ---- Driver-API copies: hip_Memcpy2D and HIP_MEMCPY3D ---------------------


// The driver API's 2-D copy (hip_Memcpy2D): host and device sides map onto
// the 2-D copy path above, an array side onto the pitched device memory
// hipr keeps the array in (hip_arrays.h). The memory type
// fields are hipMemoryType, numbered per major (docs/architecture.md, "ABI
// and majors"), so they are read in the caller's numbering. As clr
// (hip::getDrvMemcpy3DDesc), a pitch of 0 means the row is origin + width
// bytes; a unified side names its memory in the *Device field and its
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
  if (side->array == nullptr || !Arrays().FindArray(side->array, &a)) {
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

// Whether a row pitch reaches the device's maximum (memPitch): clr refuses
// such copies (hipErrorInvalidValue) before touching a row; here a host
// side's rows would run gigabytes past its buffer.
bool PitchTooLarge(const Remote& s, size_t pitch) {
  int device = 0;
  if (CurrentDeviceOf(s, &device) != hipSuccess) return false;
  const uint64_t max = s.devices()[device].mem_pitch;
  return max != 0 && pitch >= max;
}

// As clr (hip::getDrvMemcpy3DDesc): a pitch of 0 means the row is origin +
// width bytes, a slice height of 0 means the copy's height (plus origin).
// `short_pitch`: the answer to a row wider than its pitch
// (hipMemcpyParam2D and hipDrvMemcpy3D: hipErrorInvalidValue, as clr's
// BufferRect; the array copies: hipErrorInvalidPitchValue).
hipError_t DrvMemcpy(const char* api, DrvCopy c, hipStream_t stream, Mode mode, int major,
                     hipError_t short_pitch = hipErrorInvalidPitchValue) {
  Remote* s = LiveSession();
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
  if (c.src.x + c.width > spitch || c.dst.x + c.width > dpitch) return short_pitch;
  if (PitchTooLarge(*s, spitch) || PitchTooLarge(*s, dpitch)) return hipErrorInvalidValue;
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
  if (!Arrays().FindArray(p->srcArray != nullptr ? p->srcArray : p->dstArray, &a)) return hipErrorInvalidValue;
  const size_t element = a.element_bytes;
  if (p->extent.width > SIZE_MAX / element) return hipErrorInvalidValue;
  CopySide from{p->srcArray, p->srcPtr.ptr, p->srcPos.x, p->srcPos.y, p->srcPos.z, p->srcPtr.pitch,
                p->srcPtr.ysize};
  CopySide to{p->dstArray, p->dstPtr.ptr, p->dstPos.x, p->dstPos.y, p->dstPos.z, p->dstPtr.pitch, p->dstPtr.ysize};
  for (CopySide* side : {&from, &to}) {
    if (side->array == nullptr) continue;
    ArrayInfo s;
    if (!Arrays().FindArray(side->array, &s) || side->x > SIZE_MAX / s.element_bytes) return hipErrorInvalidValue;
    side->x *= s.element_bytes;
  }
  return CopyBox("hipMemcpy3D", from, to, p->extent.width * element, p->extent.height, p->extent.depth, p->kind,
                 stream, mode == Mode::kAsync);
}

}  // namespace

hipError_t Copy(Remote& s, const Rect& r, hipMemcpyKind kind, KindRule rule, hipStream_t stream, Mode mode) {
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  return CopyRows(Client::Get(), s, Managed(), Graphs(), r, kind, rule, target, mode);
}

hipError_t Memcpy(void* dst, const void* src, size_t size, hipMemcpyKind kind, hipStream_t stream,
                  Mode mode) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (mode == Mode::kAsync && !ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  // As clr's hipMemcpyAsync and hipMemcpyWithStream, before any other check.
  if (!IsStreamHandle(stream)) return hipErrorContextIsDestroyed;
  if (size == 0) return hipSuccess;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  if (!ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  if (src == dst && kind == hipMemcpyDefault) return hipSuccess;
  return Copy(*s, Rect{dst, size, src, size, size, 1}, kind, KindRule::kPointers, stream, mode);
}

hipError_t Memcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                    size_t height, hipMemcpyKind kind, hipStream_t stream, Mode mode) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (!ValidKind(kind)) return hipErrorInvalidMemcpyDirection;
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  if (width == 0 || height == 0) return hipSuccess;
  if (width > dpitch || width > spitch) return hipErrorInvalidPitchValue;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  if (PitchTooLarge(*s, dpitch) || PitchTooLarge(*s, spitch)) return hipErrorInvalidValue;
  return Copy(*s, Rect{dst, dpitch, src, spitch, width, height}, kind, KindRule::kClaimed, stream, mode);
}

// Whether a blocking memset of `a` may return before the worker ran it
// (Memset): a fill of memory only this process's later device work can read
// (PlainDeviceMemory), in a process without managed memory (a blocking
// memset refreshes its mirrors), while nothing queued can be seen by the
// host (session/stream_ledger.h: no kernel, host callback, copy into host
// memory or event record, on any stream, not seen complete).
bool MemsetReturnsAtOnce(const DeviceAllocation& a) {
  return PlainDeviceMemory(a) && Managed().empty() && Client::Get().ledger().Clean();
}

namespace {

// A memset of pinned host memory (hipHostMalloc'd or registered), which
// clr's device fills in place. Here the client fills it once the stream's
// earlier work is done and its copies into host memory have landed, async
// or not: host-to-device copies from pinned memory read their source when
// called (docs/architecture.md), so a copy queued behind an async fill
// must find it done. In a capture it is refused: a graph node cannot run it.
hipError_t MemsetPinned(Remote& s, uint8_t* dst, uint32_t value, uint8_t element_size, uint64_t bytes,
                        size_t pitch, size_t height, hipStream_t stream, Mode mode) {
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  if (hipError_t e = Graphs().CheckNotCapturing(target.device, target.id, mode == Mode::kBlocking); e != hipSuccess) {
    HIPR_LOG_ONCE(kWarn, "a memset of pinned host memory cannot be captured in a graph by hipr; the capture is "
                         "invalidated (hipErrorStreamCaptureUnsupported)");
    return e;
  }
  msg::CallReply reply;
  Status st = s.Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{target.id, target.device}, &reply);
  const hipError_t e =
      AfterSync(s, target.device, target.id, st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st));
  if (e != hipSuccess) return e;
  for (size_t y = 0; y < height; ++y) {
    uint8_t* row = dst + y * pitch;
    if (element_size == 1) {
      memset(row, static_cast<int>(value & 0xff), bytes);
    } else {
      for (uint64_t i = 0; i < bytes; i += element_size) memcpy(row + i, &value, element_size);  // Low bytes.
    }
  }
  return hipSuccess;
}

}  // namespace

hipError_t Memset(void* dst, uint32_t value, uint8_t element_size, size_t count, hipStream_t stream, Mode mode,
                  size_t pitch, size_t height) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (count > SIZE_MAX / element_size) return hipErrorInvalidValue;
  const uint64_t bytes = static_cast<uint64_t>(count) * element_size;
  if (bytes == 0 || height == 0) return hipSuccess;
  if (dst == nullptr) return hipErrorInvalidValue;
  if (height == 1) pitch = bytes;
  if (pitch < bytes) return hipErrorInvalidValue;  // As clr (hip-tests hipMemsetNegative), not InvalidPitchValue.
  uint64_t extent = 0;
  if (!Extent(pitch, bytes, height, &extent)) return hipErrorInvalidValue;
  DeviceAllocation a;
  if (!Client::Get().allocations().FindDevice(reinterpret_cast<uint64_t>(dst), extent, &a)) {
    PinnedAllocation h;
    if (!Client::Get().allocations().FindPinned(reinterpret_cast<uint64_t>(dst), extent, &h))
      return hipErrorInvalidValue;
    return MemsetPinned(*s, static_cast<uint8_t*>(dst), value, element_size, bytes, pitch, height, stream, mode);
  }
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
  if (!s->SameWorker(a.device, target.device)) {
    // Another worker's memory (HIPR_SERVER lists several): the stream's
    // earlier work finishes, then the fill runs as a blocking memset on the
    // null stream of the memory's device, before anything later on the
    // stream.
    if (hipError_t e = Graphs().CheckNotCapturing(target.device, target.id, true); e != hipSuccess) return e;
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{target.id, target.device}, &reply);
    if (!st.ok() || reply.error != hipSuccess) return st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
    const msg::MemsetRequest fill{a.device, 0, msg::Region{reinterpret_cast<uint64_t>(dst), pitch, bytes, height},
                                  value, element_size};
    if (Status posted = s->Post<wire::Op::kMemset>(fill); !posted.ok()) return ToHipError(posted);
    st = s->Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{0, a.device}, &reply);
    return AfterSync(*s, a.device, 0, st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st));
  }
  msg::MemsetRequest req;
  req.device = target.device;
  req.stream = target.id;
  req.dst = msg::Region{reinterpret_cast<uint64_t>(dst), pitch, bytes, height};
  req.value = value;
  req.element_size = element_size;
  if (hipError_t captured = hipSuccess;
      Graphs().AnyCapture() && Graphs().CaptureNode(target.device, target.id, req, &captured))
    return captured;
  if (mode == Mode::kBlocking)
    if (hipError_t e = Graphs().CheckNotCapturing(target.device, target.id, false); e != hipSuccess) return e;
  Managed().MarkWritten(*s, target.device, target.id, dst, extent);
  if (PlainDeviceMemory(a)) StreamLedger::Invisible();
  const bool at_once = mode == Mode::kBlocking && MemsetReturnsAtOnce(a);
  Status posted = s->Post<wire::Op::kMemset>(req);
  if (!posted.ok() || mode == Mode::kAsync) return ToHipError(posted);
  if (at_once) {
    // Nothing but later device work can see the fill or what it waits for:
    // it is queued, the stream fence orders every later call on any stream
    // after it (session/stream_fences.h), and its error comes back at the
    // next synchronizing call. No round trip.
    stats::Add(stats::Get().waits_skipped);
    return ToHipError(Client::Get().fences().Raise(*s, target.device, target.id));
  }
  // The fill's own error, if any, comes back with the synchronization.
  msg::CallReply reply;
  Status st = s->Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{target.id, target.device}, &reply);
  return AfterSync(*s, target.device, target.id, st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st));
}

hipError_t CopyMemory2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                           size_t height, hipMemcpyKind kind, hipStream_t stream) {
  return Memcpy2D(dst, dpitch, src, spitch, width, height, kind, stream, Mode::kAsync);
}

hipError_t CopyMemory(void* dst, const void* src, size_t size, hipMemcpyKind kind,
                                    hipStream_t stream, bool async) {
  return Memcpy(dst, src, size, kind, stream, async ? Mode::kAsync : Mode::kBlocking);
}

// 3-D copies between pitched pointers (hipMalloc3D memory or host memory
// described as hipPitchedPtr): one rectangular copy when the slices lie
// back to back in both, else one per slice. A copy with an array side
// (positions and width then in the array's elements) is a driver-API copy
// (ArrayMemcpy3D, below).
hipError_t Memcpy3D(const hipMemcpy3DParms* p, hipStream_t stream, Mode mode) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  // A side is an array or a pointer, not both (clr's ihipMemcpy3D_validate).
  if ((p->srcArray != nullptr && p->srcPtr.ptr != nullptr) || (p->dstArray != nullptr && p->dstPtr.ptr != nullptr))
    return hipErrorInvalidValue;
  if (p->srcArray != nullptr || p->dstArray != nullptr) return ArrayMemcpy3D(p, stream, mode);
  if (!ValidKind(p->kind)) return hipErrorInvalidMemcpyDirection;
  const hipExtent& e = p->extent;
  if (e.width == 0 || e.height == 0 || e.depth == 0) return hipSuccess;
  const hipPitchedPtr& from = p->srcPtr;
  const hipPitchedPtr& to = p->dstPtr;
  if (from.ptr == nullptr || to.ptr == nullptr) return hipErrorInvalidValue;
  if (p->srcPos.x + e.width > from.pitch || p->dstPos.x + e.width > to.pitch) return hipErrorInvalidPitchValue;
  if (PitchTooLarge(*s, from.pitch) || PitchTooLarge(*s, to.pitch)) return hipErrorInvalidValue;
  if (p->srcPos.y + e.height > from.ysize || p->dstPos.y + e.height > to.ysize) return hipErrorInvalidValue;
  auto at = [](const hipPitchedPtr& q, const hipPos& pos, size_t z) {
    return static_cast<char*>(q.ptr) + (pos.z + z) * q.pitch * q.ysize + pos.y * q.pitch + pos.x;
  };
  if (e.height == from.ysize && e.height == to.ysize) {
    // Whole slices, back to back in both: one copy of height * depth rows.
    return Copy(*s,
                Rect{at(to, p->dstPos, 0), to.pitch, at(from, p->srcPos, 0), from.pitch, e.width, e.height * e.depth},
                p->kind, KindRule::kClaimed, stream, mode);
  }
  for (size_t z = 0; z < e.depth; ++z) {
    const Rect r{at(to, p->dstPos, z), to.pitch, at(from, p->srcPos, z), from.pitch, e.width, e.height};
    if (hipError_t err = Copy(*s, r, p->kind, KindRule::kClaimed, stream, mode); err != hipSuccess) return err;
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
  return DrvMemcpy("hipMemcpyParam2D", c, stream, mode, major, hipErrorInvalidValue);
}

hipError_t DrvMemcpy3D(const char* api, const void* p, hipStream_t stream, Mode mode, int major) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (p == nullptr) return hipErrorInvalidValue;
  const DrvCopy c = major >= 6 ? DrvCopyOf(*static_cast<const Memcpy3DLayout<size_t>*>(p), major)
                               : DrvCopyOf(*static_cast<const Memcpy3DLayout<unsigned>*>(p), major);
  return DrvMemcpy(api, c, stream, mode, major, hipErrorInvalidValue);
}

hipError_t CopyBox(const char* api, const CopySide& src, const CopySide& dst, size_t width,
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

hipError_t DrvMemcpy3DToParms(const void* drv, int major, hipMemcpy3DParms* out) {
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

void ParmsToDrvMemcpy3D(const hipMemcpy3DParms& p, int major, void* drv) {
  if (major >= 6)
    WriteDrvCopy(p, major, static_cast<Memcpy3DLayout<size_t>*>(drv));
  else
    WriteDrvCopy(p, major, static_cast<Memcpy3DLayout<unsigned>*>(drv));
}

}  // namespace hipr::client
