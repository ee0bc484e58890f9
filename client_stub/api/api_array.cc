// HIP arrays and mipmapped arrays: pitched device memory with a description
// (hip_arrays.h). Allocation goes through hipMalloc's path; copies through
// the driver-API copy path (CopyBox), so they travel as any rectangular
// copy of device memory does.
#include <algorithm>

#include "client_stub/api/api_common.h"
#include "client_stub/api/copy_paths.h"
#include "client_stub/textures/hip_arrays.h"

using namespace hipr;
using namespace hipr::client;

namespace {

// Allocates the memory of a checked shape and registers the array.
hipError_t NewArray(ArrayInfo a, hipArray_t* out) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (out == nullptr) return hipErrorInvalidValue;
  if (hipError_t e = CheckArrayShape(&a); e != hipSuccess) return e;
  if (hipError_t e = CurrentDeviceOf(*s, &a.device); e != hipSuccess) return e;
  a.pitch = RowPitch(*s, a.device, a.row_bytes());
  void* data = nullptr;
  if (hipError_t e = AllocateDevice(Client::Get(), *s, a.device, a.bytes(), 0, AllocationRole::kArray, &data);
      e != hipSuccess)
    return e;
  a.data = data;
  *out = Arrays().AddArray(&a);
  HIPR_LOG_DEBUG("array %p: %zu x %zu x %zu of %zu-byte elements at %p, pitch %zu", static_cast<void*>(*out),
                 a.width, a.height, a.depth, a.element_bytes, data, a.pitch);
  return hipSuccess;
}

hipError_t FreeArray(hipArray_t array, bool level_ok) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  ArrayInfo a;
  if (array == nullptr || !Arrays().FindArray(array, &a)) return hipErrorInvalidValue;
  if (a.mipmap_level && !level_ok) return hipErrorInvalidValue;  // Freed with its mipmapped array.
  if (!Arrays().RemoveArray(array, &a)) return hipErrorInvalidValue;  // Another thread freed it first.
  return FreeDevice(a.data, true, AllocationRole::kArray);
}

ArrayInfo ShapeOf(const hipChannelFormatDesc& desc, size_t width, size_t height, size_t depth, unsigned flags,
                  bool driver) {
  ArrayInfo a;
  a.desc = desc;
  a.width = width;
  a.height = height;
  a.depth = depth;
  a.flags = flags;
  a.driver = driver;
  return a;
}

hipError_t DriverShape(const HIP_ARRAY3D_DESCRIPTOR* d, ArrayInfo* out) {
  if (d == nullptr) return hipErrorInvalidValue;
  hipChannelFormatDesc desc;
  if (!ChannelDescOf(d->Format, d->NumChannels, &desc)) return hipErrorInvalidValue;
  *out = ShapeOf(desc, d->Width, d->Height, d->Depth, d->Flags, true);
  return hipSuccess;
}

// The pieces of a copy of `count` bytes through the rows of arrays, from a
// byte position counted row after row (slice after slice): a part row up to
// the end of a row, or whole rows within one slice when every array side is
// at the start of a row (and both are as wide), so that a copy of whole
// rows is one rectangle.
struct LinearSide {
  hipArray_const_t array = nullptr;  // Else `ptr`.
  const void* ptr = nullptr;
  ArrayInfo info;
  size_t pos = 0;
};

hipError_t LinearCopy(const char* api, LinearSide src, LinearSide dst, size_t count, hipMemcpyKind kind,
                      hipStream_t stream, bool async) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  for (LinearSide* side : {&src, &dst}) {
    if (side->array == nullptr) {
      if (side->ptr == nullptr && count > 0) return hipErrorInvalidValue;
      continue;
    }
    if (!Arrays().FindArray(side->array, &side->info)) return hipErrorInvalidValue;
    const size_t total = side->info.row_bytes() * side->info.rows() * side->info.slices();
    if (side->pos > total || count > total - side->pos) return hipErrorInvalidValue;
  }
  size_t done = 0;
  while (done < count) {
    size_t run = count - done;
    size_t rows = 1;
    bool at_row_start = true;
    size_t width = 0;  // Of the array sides' rows (0: no array side yet).
    bool same_width = true;
    size_t rows_left = SIZE_MAX;
    for (const LinearSide* side : {&src, &dst}) {
      if (side->array == nullptr) continue;
      const size_t row = side->info.row_bytes();
      const size_t at = (side->pos + done) % row;
      if (at != 0) at_row_start = false;
      run = std::min(run, row - at);
      if (width != 0 && width != row) same_width = false;
      width = row;
      const size_t r = (side->pos + done) / row;
      rows_left = std::min(rows_left, side->info.rows() - r % side->info.rows());
    }
    if (at_row_start && same_width && width != 0 && count - done >= width) {
      rows = std::min((count - done) / width, rows_left);
      run = width;
    }
    CopySide sides[2];
    for (int i = 0; i < 2; ++i) {
      const LinearSide& side = i == 0 ? src : dst;
      CopySide& out = sides[i];
      if (side.array == nullptr) {
        out.ptr = static_cast<const char*>(side.ptr) + side.pos + done;
        out.pitch = run;
        continue;
      }
      const size_t row = side.info.row_bytes();
      const size_t r = (side.pos + done) / row;
      out.array = side.array;
      out.x = (side.pos + done) % row;
      out.y = r % side.info.rows();
      out.z = r / side.info.rows();
    }
    if (hipError_t e = CopyBox(api, sides[0], sides[1], run, rows, 1, kind, stream, async); e != hipSuccess) return e;
    done += run * rows;
  }
  return hipSuccess;
}

LinearSide ArraySide(hipArray_const_t array, size_t pos) { return LinearSide{array, nullptr, {}, pos}; }
LinearSide PointerSide(const void* ptr) { return LinearSide{nullptr, ptr, {}, 0}; }

// The byte position of (w_offset bytes, h_offset rows) in an array's rows.
hipError_t PositionOf(hipArray_const_t array, size_t w_offset, size_t h_offset, size_t* pos) {
  ArrayInfo a;
  if (array == nullptr || !Arrays().FindArray(array, &a)) return hipErrorInvalidValue;
  if (w_offset > a.row_bytes() || h_offset >= a.rows() * a.slices()) return hipErrorInvalidValue;
  *pos = h_offset * a.row_bytes() + w_offset;
  return hipSuccess;
}

hipError_t ToArray(const char* api, hipArray_t dst, size_t w_offset, size_t h_offset, const void* src, size_t count,
                   hipMemcpyKind kind, hipStream_t stream, bool async) {
  size_t pos = 0;
  if (hipError_t e = PositionOf(dst, w_offset, h_offset, &pos); e != hipSuccess) return e;
  return LinearCopy(api, PointerSide(src), ArraySide(dst, pos), count, kind, stream, async);
}

hipError_t FromArray(const char* api, void* dst, hipArray_const_t src, size_t w_offset, size_t h_offset, size_t count,
                     hipMemcpyKind kind, hipStream_t stream, bool async) {
  size_t pos = 0;
  if (hipError_t e = PositionOf(src, w_offset, h_offset, &pos); e != hipSuccess) return e;
  return LinearCopy(api, ArraySide(src, pos), PointerSide(dst), count, kind, stream, async);
}

hipError_t Copy2DToArray(const char* api, hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                         size_t spitch, size_t width, size_t height, hipMemcpyKind kind, hipStream_t stream,
                         bool async) {
  if (dst == nullptr) return hipErrorInvalidHandle;  // As clr's hipMemcpy2DValidateArray.
  return CopyBox(api, CopySide{nullptr, src, 0, 0, 0, spitch, 0}, CopySide{dst, nullptr, w_offset, h_offset, 0, 0, 0},
                 width, height, 1, kind, stream, async);
}

hipError_t Copy2DFromArray(const char* api, void* dst, size_t dpitch, hipArray_const_t src, size_t w_offset,
                           size_t h_offset, size_t width, size_t height, hipMemcpyKind kind, hipStream_t stream,
                           bool async) {
  if (src == nullptr) return hipErrorInvalidHandle;  // As clr's hipMemcpy2DValidateArray.
  return CopyBox(api, CopySide{src, nullptr, w_offset, h_offset, 0, 0, 0}, CopySide{nullptr, dst, 0, 0, 0, dpitch, 0},
                 width, height, 1, kind, stream, async);
}

}  // namespace

// ---- Arrays ------------------------------------------------------------------

HIPR_EXPORT hipError_t hipMallocArray(hipArray_t* array, const hipChannelFormatDesc* desc, size_t width,
                                      size_t height, unsigned int flags) {
  return ApiCall("hipMallocArray", [&] {
    if (desc == nullptr) return LiveSession() != nullptr ? hipErrorInvalidValue : hipErrorNoDevice;
    return NewArray(ShapeOf(*desc, width, height, 0, flags, false), array);
  });
}

HIPR_EXPORT hipError_t hipMalloc3DArray(hipArray_t* array, const hipChannelFormatDesc* desc, hipExtent extent,
                                        unsigned int flags) {
  return ApiCall("hipMalloc3DArray", [&] {
    if (desc == nullptr) return LiveSession() != nullptr ? hipErrorInvalidValue : hipErrorNoDevice;
    return NewArray(ShapeOf(*desc, extent.width, extent.height, extent.depth, flags, false), array);
  });
}

HIPR_EXPORT hipError_t hipArrayCreate(hipArray_t* array, const HIP_ARRAY_DESCRIPTOR* d) {
  return ApiCall("hipArrayCreate", [&] {
    if (d == nullptr) return LiveSession() != nullptr ? hipErrorInvalidValue : hipErrorNoDevice;
    const HIP_ARRAY3D_DESCRIPTOR d3{d->Width, d->Height, 0, d->Format, d->NumChannels, 0};
    ArrayInfo a;
    if (hipError_t e = DriverShape(&d3, &a); e != hipSuccess) return e;
    return NewArray(a, array);
  });
}

HIPR_EXPORT hipError_t hipArray3DCreate(hipArray_t* array, const HIP_ARRAY3D_DESCRIPTOR* d) {
  return ApiCall("hipArray3DCreate", [&] {
    ArrayInfo a;
    if (hipError_t e = DriverShape(d, &a); e != hipSuccess) return e;
    return NewArray(a, array);
  });
}

HIPR_EXPORT hipError_t hipFreeArray(hipArray_t array) {
  return ApiCall("hipFreeArray", [&] { return FreeArray(array, false); });
}

HIPR_EXPORT hipError_t hipArrayDestroy(hipArray_t array) {
  return ApiCall("hipArrayDestroy", [&] { return FreeArray(array, false); });
}

HIPR_EXPORT hipError_t hipArrayGetInfo(hipChannelFormatDesc* desc, hipExtent* extent, unsigned int* flags,
                                       hipArray_t array) {
  return ApiCall("hipArrayGetInfo", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    ArrayInfo a;
    if (array == nullptr || !Arrays().FindArray(array, &a)) return hipErrorInvalidHandle;
    if (desc != nullptr) *desc = a.desc;
    if (extent != nullptr) *extent = hipExtent{a.width, a.height, a.depth};
    if (flags != nullptr) *flags = a.flags;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipArrayGetDescriptor(HIP_ARRAY_DESCRIPTOR* d, hipArray_t array) {
  return ApiCall("hipArrayGetDescriptor", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    ArrayInfo a;
    if (array == nullptr || !Arrays().FindArray(array, &a)) return hipErrorInvalidHandle;
    if (d == nullptr || a.depth != 0) return hipErrorInvalidValue;  // 1-D and 2-D arrays only.
    *d = HIP_ARRAY_DESCRIPTOR{a.width, a.height, a.format, a.channels};
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipArray3DGetDescriptor(HIP_ARRAY3D_DESCRIPTOR* d, hipArray_t array) {
  return ApiCall("hipArray3DGetDescriptor", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    ArrayInfo a;
    if (array == nullptr || !Arrays().FindArray(array, &a)) return hipErrorInvalidHandle;
    if (d == nullptr) return hipErrorInvalidValue;
    *d = HIP_ARRAY3D_DESCRIPTOR{a.width, a.height, a.depth, a.format, a.channels, a.flags};
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGetChannelDesc(hipChannelFormatDesc* desc, hipArray_const_t array) {
  return ApiCall("hipGetChannelDesc", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    ArrayInfo a;
    if (array == nullptr || !Arrays().FindArray(array, &a)) return hipErrorInvalidHandle;
    if (desc == nullptr) return hipErrorInvalidValue;
    *desc = a.desc;
    return hipSuccess;
  });
}

// ---- Mipmapped arrays -----------------------------------------------------------

namespace {

hipError_t FreeMipmap(hipMipmappedArray_t m) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  MipmapInfo info;
  if (m == nullptr || !Arrays().RemoveMipmap(m, &info)) return hipErrorInvalidValue;
  hipError_t result = hipSuccess;
  for (unsigned i = 0; i < info.levels; ++i) {
    if (hipError_t e = FreeArray(info.level[i], true); e != hipSuccess && result == hipSuccess) result = e;
  }
  return result;
}

hipError_t NewMipmap(ArrayInfo shape, unsigned levels, hipMipmappedArray_t* out) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (out == nullptr) return hipErrorInvalidValue;
  if (hipError_t e = CheckArrayShape(&shape); e != hipSuccess) return e;
  const unsigned most = MaxMipLevels(shape);
  if (levels == 0) levels = most;  // As the runtime API: 0 asks for every level.
  if (levels > most || levels > 32) return hipErrorInvalidValue;
  MipmapInfo m;
  m.shape = shape;
  for (unsigned i = 0; i < levels; ++i) {
    ArrayInfo level = MipLevelShape(shape, i);
    level.mipmap_level = true;
    if (hipError_t e = NewArray(level, &m.level[i]); e != hipSuccess) {
      for (unsigned j = 0; j < i; ++j) (void)FreeArray(m.level[j], true);
      return e;
    }
    m.levels = i + 1;
  }
  *out = Arrays().AddMipmap(&m);
  return hipSuccess;
}

hipError_t MipmapLevel(hipArray_t* level_array, const void* m, unsigned level) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  MipmapInfo info;
  if (m == nullptr || !Arrays().FindMipmap(m, &info)) return hipErrorInvalidHandle;
  if (level_array == nullptr || level >= info.levels) return hipErrorInvalidValue;
  *level_array = info.level[level];
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipMallocMipmappedArray(hipMipmappedArray_t* m, const hipChannelFormatDesc* desc,
                                               hipExtent extent, unsigned int levels, unsigned int flags) {
  return ApiCall("hipMallocMipmappedArray", [&] {
    if (desc == nullptr) return LiveSession() != nullptr ? hipErrorInvalidValue : hipErrorNoDevice;
    return NewMipmap(ShapeOf(*desc, extent.width, extent.height, extent.depth, flags, false), levels, m);
  });
}

HIPR_EXPORT hipError_t hipMipmappedArrayCreate(hipMipmappedArray_t* m, HIP_ARRAY3D_DESCRIPTOR* d,
                                               unsigned int levels) {
  return ApiCall("hipMipmappedArrayCreate", [&] {
    ArrayInfo shape;
    if (hipError_t e = DriverShape(d, &shape); e != hipSuccess) return e;
    return NewMipmap(shape, levels, m);
  });
}

HIPR_EXPORT hipError_t hipFreeMipmappedArray(hipMipmappedArray_t m) {
  return ApiCall("hipFreeMipmappedArray", [&] { return FreeMipmap(m); });
}

HIPR_EXPORT hipError_t hipMipmappedArrayDestroy(hipMipmappedArray_t m) {
  return ApiCall("hipMipmappedArrayDestroy", [&] { return FreeMipmap(m); });
}

HIPR_EXPORT hipError_t hipGetMipmappedArrayLevel(hipArray_t* level_array, hipMipmappedArray_const_t m,
                                                 unsigned int level) {
  return ApiCall("hipGetMipmappedArrayLevel", [&] { return MipmapLevel(level_array, m, level); });
}

HIPR_EXPORT hipError_t hipMipmappedArrayGetLevel(hipArray_t* level_array, hipMipmappedArray_t m, unsigned int level) {
  return ApiCall("hipMipmappedArrayGetLevel", [&] { return MipmapLevel(level_array, m, level); });
}

// ---- Copies ---------------------------------------------------------------------
// Offsets and widths are in bytes (w_offset, width) and rows (h_offset,
// height). The 1-D forms copy `count` bytes row after row from the offset.

HIPR_EXPORT hipError_t hipMemcpy2DToArray(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                          size_t spitch, size_t width, size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2DToArray", [&] {
    return Copy2DToArray("hipMemcpy2DToArray", dst, w_offset, h_offset, src, spitch, width, height, kind, nullptr,
                         false);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DToArray_spt(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                              size_t spitch, size_t width, size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2DToArray_spt", [&] {
    return Copy2DToArray("hipMemcpy2DToArray_spt", dst, w_offset, h_offset, src, spitch, width, height, kind,
                         hipStreamPerThread, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DToArrayAsync(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                               size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                                               hipStream_t stream) {
  return ApiCall("hipMemcpy2DToArrayAsync", [&] {
    return Copy2DToArray("hipMemcpy2DToArrayAsync", dst, w_offset, h_offset, src, spitch, width, height, kind, stream,
                         true);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                                   size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                                                   hipStream_t stream) {
  return ApiCall("hipMemcpy2DToArrayAsync_spt", [&] {
    return Copy2DToArray("hipMemcpy2DToArrayAsync_spt", dst, w_offset, h_offset, src, spitch, width, height, kind,
                         stream != nullptr ? stream : hipStreamPerThread, true);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DFromArray(void* dst, size_t dpitch, hipArray_const_t src, size_t w_offset,
                                            size_t h_offset, size_t width, size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2DFromArray", [&] {
    return Copy2DFromArray("hipMemcpy2DFromArray", dst, dpitch, src, w_offset, h_offset, width, height, kind, nullptr,
                           false);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DFromArray_spt(void* dst, size_t dpitch, hipArray_const_t src, size_t w_offset,
                                                size_t h_offset, size_t width, size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2DFromArray_spt", [&] {
    return Copy2DFromArray("hipMemcpy2DFromArray_spt", dst, dpitch, src, w_offset, h_offset, width, height, kind,
                           hipStreamPerThread, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DFromArrayAsync(void* dst, size_t dpitch, hipArray_const_t src, size_t w_offset,
                                                 size_t h_offset, size_t width, size_t height, hipMemcpyKind kind,
                                                 hipStream_t stream) {
  return ApiCall("hipMemcpy2DFromArrayAsync", [&] {
    return Copy2DFromArray("hipMemcpy2DFromArrayAsync", dst, dpitch, src, w_offset, h_offset, width, height, kind,
                           stream, true);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DFromArrayAsync_spt(void* dst, size_t dpitch, hipArray_const_t src, size_t w_offset,
                                                     size_t h_offset, size_t width, size_t height, hipMemcpyKind kind,
                                                     hipStream_t stream) {
  return ApiCall("hipMemcpy2DFromArrayAsync_spt", [&] {
    return Copy2DFromArray("hipMemcpy2DFromArrayAsync_spt", dst, dpitch, src, w_offset, h_offset, width, height, kind,
                           stream != nullptr ? stream : hipStreamPerThread, true);
  });
}

HIPR_EXPORT hipError_t hipMemcpy2DArrayToArray(hipArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                               hipArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                               size_t width, size_t height, hipMemcpyKind kind) {
  return ApiCall("hipMemcpy2DArrayToArray", [&] {
    if (src == nullptr || dst == nullptr) return LiveSession() != nullptr ? hipErrorInvalidValue : hipErrorNoDevice;
    return CopyBox("hipMemcpy2DArrayToArray", CopySide{src, nullptr, w_offset_src, h_offset_src, 0, 0, 0},
                   CopySide{dst, nullptr, w_offset_dst, h_offset_dst, 0, 0, 0}, width, height, 1, kind, nullptr,
                   false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyToArray(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                        size_t count, hipMemcpyKind kind) {
  return ApiCall("hipMemcpyToArray", [&] {
    return ToArray("hipMemcpyToArray", dst, w_offset, h_offset, src, count, kind, nullptr, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyFromArray(void* dst, hipArray_const_t src, size_t w_offset, size_t h_offset,
                                          size_t count, hipMemcpyKind kind) {
  return ApiCall("hipMemcpyFromArray", [&] {
    return FromArray("hipMemcpyFromArray", dst, src, w_offset, h_offset, count, kind, nullptr, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyFromArray_spt(void* dst, hipArray_const_t src, size_t w_offset, size_t h_offset,
                                              size_t count, hipMemcpyKind kind) {
  return ApiCall("hipMemcpyFromArray_spt", [&] {
    return FromArray("hipMemcpyFromArray_spt", dst, src, w_offset, h_offset, count, kind, hipStreamPerThread, false);
  });
}

// The driver API's 1-D array copies: offsets in bytes from the array's start.
HIPR_EXPORT hipError_t hipMemcpyHtoA(hipArray_t dst, size_t dst_offset, const void* src, size_t count) {
  return ApiCall("hipMemcpyHtoA", [&] {
    return LinearCopy("hipMemcpyHtoA", PointerSide(src), ArraySide(dst, dst_offset), count, hipMemcpyHostToDevice,
                      nullptr, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyHtoAAsync(hipArray_t dst, size_t dst_offset, const void* src, size_t count,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyHtoAAsync", [&] {
    return LinearCopy("hipMemcpyHtoAAsync", PointerSide(src), ArraySide(dst, dst_offset), count,
                      hipMemcpyHostToDevice, stream, true);
  });
}

HIPR_EXPORT hipError_t hipMemcpyAtoH(void* dst, hipArray_t src, size_t src_offset, size_t count) {
  return ApiCall("hipMemcpyAtoH", [&] {
    return LinearCopy("hipMemcpyAtoH", ArraySide(src, src_offset), PointerSide(dst), count, hipMemcpyDeviceToHost,
                      nullptr, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyAtoHAsync(void* dst, hipArray_t src, size_t src_offset, size_t count,
                                          hipStream_t stream) {
  return ApiCall("hipMemcpyAtoHAsync", [&] {
    return LinearCopy("hipMemcpyAtoHAsync", ArraySide(src, src_offset), PointerSide(dst), count,
                      hipMemcpyDeviceToHost, stream, true);
  });
}

HIPR_EXPORT hipError_t hipMemcpyAtoD(hipDeviceptr_t dst, hipArray_t src, size_t src_offset, size_t count) {
  return ApiCall("hipMemcpyAtoD", [&] {
    return LinearCopy("hipMemcpyAtoD", ArraySide(src, src_offset), PointerSide(dst), count, hipMemcpyDeviceToDevice,
                      nullptr, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyDtoA(hipArray_t dst, size_t dst_offset, hipDeviceptr_t src, size_t count) {
  return ApiCall("hipMemcpyDtoA", [&] {
    return LinearCopy("hipMemcpyDtoA", PointerSide(src), ArraySide(dst, dst_offset), count, hipMemcpyDeviceToDevice,
                      nullptr, false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyAtoA(hipArray_t dst, size_t dst_offset, hipArray_t src, size_t src_offset,
                                     size_t count) {
  return ApiCall("hipMemcpyAtoA", [&] {
    return LinearCopy("hipMemcpyAtoA", ArraySide(src, src_offset), ArraySide(dst, dst_offset), count,
                      hipMemcpyDeviceToDevice, nullptr, false);
  });
}
