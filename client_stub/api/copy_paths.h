// The copy and memset paths behind the entry points (api_copy.cc) and the
// other callers of copies (arrays, symbols, texture references, graphs).
//
// Direction comes from the allocation map, as the HIP runtime (clr) takes it
// from its memory objects, never from the kind (copy_kind.h has ROCm's rules
// for when a kind is refused). Host-to-host copies are done locally.
//
// Semantics per direction:
//  * host -> device, blocking: a 1-D copy (the hipMemcpy family) from
//    pageable memory into plain device memory
//    (not a virtual-memory mapping, IPC-opened memory or a SYNC_MEMOPS
//    pointer) in a process without managed memory, as async below: it
//    returns once its source is consumed, as ROCm's does (copy_engine.cc
//    CopyRows); otherwise sent with want_reply and awaited. Async: a
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
//    (Remote::PostCopyFromDevice). hipHostFree waits for them.
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
#pragma once

#include <cstddef>
#include <cstdint>

#include <hip/hip_runtime_api.h>

#include "client_stub/copies/copy_engine.h"
#include "client_stub/session/remote.h"

namespace hipr::client {

// A validated rectangular copy (copy_engine.h) on the application's `stream`.
hipError_t Copy(Remote& s, const CopyRect& r, hipMemcpyKind kind, KindRule rule, hipStream_t stream, CopyMode mode);

// hipMemcpy's checks, then Copy. As HIP, the size is checked before the
// direction for blocking copies and the direction first for async ones.
hipError_t Memcpy(void* dst, const void* src, size_t size, hipMemcpyKind kind, hipStream_t stream, CopyMode mode);
// hipMemcpy2D's checks, then Copy.
hipError_t Memcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                    hipMemcpyKind kind, hipStream_t stream, CopyMode mode);
// Fills `height` rows, `pitch` bytes apart, of `count` elements of
// `element_size` bytes at `dst` with `value`. kBlocking (hipMemset,
// hipMemset2D, hipMemsetD8...): as clr, which waits for the fill to
// complete, the call returns once the stream has done it, so work on any
// other stream (a non-blocking one included) sees the bytes.
hipError_t Memset(void* dst, uint32_t value, uint8_t element_size, size_t count, hipStream_t stream, CopyMode mode,
                  size_t pitch = 0, size_t height = 1);
// hipMemcpy3D: pitched pointers, or an array side (then a box copy in the
// array's elements).
hipError_t Memcpy3D(const hipMemcpy3DParms* p, hipStream_t stream, CopyMode mode);
// The driver API's copies: hip_Memcpy2D and HIP_MEMCPY3D (in `major`'s
// layout and memory-type numbering), `api` naming the entry point in logs.
hipError_t MemcpyParam2D(const hip_Memcpy2D* p, hipStream_t stream, CopyMode mode, int major);
hipError_t DrvMemcpy3D(const char* api, const void* p, hipStream_t stream, CopyMode mode, int major);

// hipMemcpy's path (async: hipMemcpyAsync's), for entry points that work
// out their addresses first (hipMemcpyToSymbol...).
hipError_t CopyMemory(void* dst, const void* src, size_t size, hipMemcpyKind kind, hipStream_t stream,
                      bool async);

// hipMemcpy2DAsync's path (graph replay of host copies).
hipError_t CopyMemory2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                             hipMemcpyKind kind, hipStream_t stream);

// One side of a box copy (CopyBox): a HIP array (hip_arrays.h; x in
// bytes), or host or device memory at `ptr` with rows `pitch` apart and
// slices `height` rows high (0: as clr, origin plus the copy's extent).
struct CopySide {
  hipArray_const_t array = nullptr;
  const void* ptr = nullptr;
  size_t x = 0, y = 0, z = 0;
  size_t pitch = 0, height = 0;
};

// Copies a box of `width` bytes by `height` rows by `depth` slices; `kind`
// says which pointer sides are host memory (hipMemcpyDefault: inferred).
// The array copies' path.
hipError_t CopyBox(const char* api, const CopySide& src, const CopySide& dst, size_t width, size_t height,
                   size_t depth, hipMemcpyKind kind, hipStream_t stream, bool async);

// HIP_MEMCPY3D (in the layout and hipMemoryType numbering of `major`, see
// per_major.txt) as hipMemcpy3DParms and back, for the driver-API graph
// memcpy nodes. Arrays are hipErrorNotSupported; an unknown memory type
// hipErrorInvalidValue.
hipError_t DrvMemcpy3DToParms(const void* drv, int major, hipMemcpy3DParms* out);
void ParmsToDrvMemcpy3D(const hipMemcpy3DParms& p, int major, void* drv);

}  // namespace hipr::client
