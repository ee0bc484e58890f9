// Copy and memset entry points: each resolves its arguments the way ROCm's
// does and takes one of the paths in copy_paths.h, which says how each
// direction behaves.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/api/copy_paths.h"
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
}  // namespace

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
  Remote* s = LiveSession();
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
    if (!Arrays().FindArray(side->op.array.array, &a)) return hipErrorInvalidValue;
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
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (CheckDevice(*s, dst_device) != hipSuccess || CheckDevice(*s, src_device) != hipSuccess)
    return hipErrorInvalidDevice;
  if (!IsStreamHandle(stream)) return hipErrorContextIsDestroyed;  // As clr's hipMemcpyPeerAsync.
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
