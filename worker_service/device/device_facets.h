// The optional parts of a Device (device.h), each an interface of its own
// that a device offers through Device::ipc(), vmm(), ... (null: it has
// none). The session answers hipErrorNotSupported for a call whose facet is
// missing, and the hello lists only the capabilities (wire.h kCapability*)
// whose facets are present, so a device implements only what it has (the
// way UCX's transports leave optional operations unset and NCCL's plugins
// leave slots empty). Facets are called from the session's replay thread,
// as Device is, unless a method says otherwise.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::worker {

// What the asynchronous forms (VmmUnmapAsync, *SynchronizeAsync) call when
// done.
using Completion = std::function<void(Status)>;
using IpcHandle = std::array<uint8_t, msg::kIpcMemHandleBytes>;
using IpcEventHandle = std::array<uint8_t, msg::kIpcEventHandleBytes>;

// hipIpc*MemHandle and hipIpc*EventHandle (capabilities ipc-memory and
// ipc-events).
class IpcFacet {
 public:
  virtual ~IpcFacet() = default;
  // IPC memory handles between sessions of this worker (each a process of
  // its own, as IPC handles expect). IpcGetMemHandle names the allocation
  // holding `address` and where in it `address` lies; IpcOpenMemHandle maps
  // that allocation for this session (`base`, `size`; `address` is the
  // handle's pointer inside it), charged to this session's memory account
  // and device memory while mapped (it keeps the exporter's memory alive),
  // where copies and kernels may use it until IpcCloseMemHandle(base). hipFree refuses
  // an opened mapping. A handle of a freed allocation, of another worker,
  // or forged fails to open (kInvalidArgument).
  virtual Status IpcGetMemHandle(uint64_t address, IpcHandle* handle) = 0;
  virtual Status IpcOpenMemHandle(int device, const IpcHandle& handle, uint32_t flags, uint64_t* address,
                                  uint64_t* base, uint64_t* size) = 0;
  virtual Status IpcCloseMemHandle(uint64_t base) = 0;
  // IPC event handles: IpcGetEventHandle exports `event` (created with
  // hipEventInterprocess); IpcOpenEventHandle makes such a handle event
  // `event` of this session on `device`, to wait for, query and record as
  // any other; EventDestroy forgets it.
  virtual Status IpcGetEventHandle(uint64_t event, IpcEventHandle* handle) = 0;
  virtual Status IpcOpenEventHandle(int device, uint64_t event, const IpcEventHandle& handle) = 0;
};

// hipMemAddressReserve, hipMemCreate, hipMemMap and friends (capability
// virtual-memory).
class VirtualMemoryFacet {
 public:
  virtual ~VirtualMemoryFacet() = default;
  // Virtual memory management (msg::Vmm*; hipMemAddressReserve and
  // friends). VmmReserve takes a free address range of `size` bytes, aligned
  // to `alignment` (0: the granularity), at `hint` when that range is free;
  // VmmFree gives back exactly a reservation with nothing mapped in it.
  // VmmCreate makes physical memory `handle` (a client-chosen id) on
  // `device`, counted against its memory until VmmRelease and the last
  // unmap. VmmMap maps it (from `offset`) into part of one reservation, with
  // no access; VmmSetAccess grants per device (hipMemAccessFlags) over whole
  // mappings; VmmUnmapAsync removes whole mappings once the work queued
  // before it has run (as hipMemUnmap, which waits), then calls `done`
  // (maybe from another thread; the mappings refuse copies meanwhile). Copies and kernels may use a range
  // that adjacent accessible mappings cover. Bad ranges or handles:
  // kInvalidArgument; exhausted memory or addresses: kResourceExhausted.
  virtual Status VmmReserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* address) = 0;
  virtual Status VmmFree(uint64_t address, uint64_t size) = 0;
  virtual Status VmmCreate(int device, uint64_t handle, uint64_t size) = 0;
  virtual Status VmmRelease(uint64_t handle) = 0;
  virtual Status VmmMap(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle) = 0;
  virtual void VmmUnmapAsync(uint64_t address, uint64_t size, Completion done) = 0;
  virtual Status VmmSetAccess(uint64_t address, uint64_t size, std::span<const msg::VmmAccess> access) = 0;
};

// hipMemExportToShareableHandle and hipMemImportFromShareableHandle
// (capability shareable-memory); needs the virtual memory facet.
class ShareableMemoryFacet {
 public:
  virtual ~ShareableMemoryFacet() = default;
  // Shareable handles (hipMemExportToShareableHandle): VmmExport names
  // physical memory `handle` for another session of this worker;
  // VmmImport makes such a name physical memory `handle` of this session
  // on `device` (charged to this session while it holds it, as IPC
  // memory), mapped and released as any other. A stale, foreign or forged name fails (kInvalidArgument).
  virtual Status VmmExport(uint64_t handle, IpcHandle* out) = 0;
  virtual Status VmmImport(int device, uint64_t handle, const IpcHandle& token, uint64_t* size) = 0;
};

// Device memory taken for the session ahead of use, from which the client
// places hipMalloc's allocations itself with no round trip (capability
// memory-lease; msg::MemLeaseRequest). Lease takes one range of `device` of
// as many bytes of `want` as fit, at least `need` (else kResourceExhausted,
// nothing taken), charged as allocated memory and reachable by no copy or
// kernel; it first gives back the device's previous lease. PlaceInLease
// makes [address, address + size) of the lease a plain allocation, as
// Malloc's (hipFree frees it); kInvalidArgument where it is not all inside
// the lease. ReturnLease gives back the unplaced rest. A device reset
// returns its lease as well.
class MemoryLeaseFacet {
 public:
  virtual ~MemoryLeaseFacet() = default;
  virtual Status Lease(int device, uint64_t need, uint64_t want, uint64_t* base, uint64_t* size,
                       uint64_t* granularity) = 0;
  virtual Status PlaceInLease(int device, uint64_t address, uint64_t size) = 0;
  virtual Status ReturnLease(int device) = 0;
};

// hipCreateTextureObject and hipDestroyTextureObject (capability textures).
class TextureFacet {
 public:
  virtual ~TextureFacet() = default;
  // Texture objects over this session's device memory (a region inside one
  // allocation, msg::TextureCreateRequest): `handle` is what kernels
  // receive as the hipTextureObject_t. DestroyTexture forgets a handle
  // TextureCreate made (kInvalidArgument for any other).
  virtual Status CreateTexture(const msg::TextureCreateRequest& request, uint64_t* handle) = 0;
  virtual Status DestroyTexture(uint64_t handle) = 0;
};

// Pinned client memory in the shm host segment (capability host-register).
class HostRegisterFacet {
 public:
  virtual ~HostRegisterFacet() = default;
  // Host memory shared with the client (ranges of the shm host segment that
  // hold its pinned memory, SharedSegment): the `hip` device pins each range
  // (hipHostRegister) so copies to and from it are DMA with no staging; the
  // sim's device memory is host memory and needs nothing. The session
  // registers a range once, never overlapping another, and unregisters it
  // before the client reuses its pages; the device drops what is left when
  // it is destroyed.
  virtual Status RegisterHost(uint8_t* base, uint64_t bytes) = 0;
  virtual Status UnregisterHost(uint8_t* base, uint64_t bytes) = 0;
  // Copies between device memory and registered host rows (`pitch` apart,
  // as wide and as high as the region), queued in stream order without
  // waiting: the host rows are read (written) when the stream gets there,
  // as a GPU reads pinned memory. Completion is the stream's.
  virtual Status CopyHostToDevice(int device, uint64_t stream, const msg::Region& dst, const uint8_t* src,
                                  uint64_t src_pitch) = 0;
  virtual Status CopyDeviceToHost(int device, uint64_t stream, uint8_t* dst, uint64_t dst_pitch,
                                  const msg::Region& src) = 0;
};

// Device memory that a connection may register for zero-copy transfers
// (no capability: the client never sees it). Without it every bulk buffer
// is taken as transient.
class BulkMemoryFacet {
 public:
  virtual ~BulkMemoryFacet() = default;
  // Bulk memory that stays put. True when every buffer of iov[0..count),
  // as handed to a BulkIo, stays mapped at its address until the device
  // says otherwise through the hook below (device memory, the staging
  // pipeline's buffers); false for buffers that live only during the call.
  // The session then lets its connection keep state for that memory (rdma:
  // a memory registration, so the bytes move with no copy).
  virtual bool BulkMemoryStays(const iovec* iov, int count) const = 0;
  // Called (from any thread) before the device unmaps or remaps memory it
  // may have reported as staying. Set once before any copy; cleared
  // (nullptr) before the hook's owner goes.
  using ForgetMemoryHook = std::function<void(const void* addr, size_t bytes)>;
  virtual void SetForgetMemoryHook(ForgetMemoryHook hook) = 0;
};

// Which parts of managed memory were written (kCopyChangedFromDevice; no
// capability: a session asks whenever the device has it). Without it the
// session sends a managed read-back whole, which is always right.
class WriteWatchFacet {
 public:
  virtual ~WriteWatchFacet() = default;
  // The runs ([offset, length] relative to `address`, ascending) of
  // [address, address + size), inside one managed allocation of this
  // session, written since the last call over them or since the
  // allocation; from now on they count as unwritten. Fails when the device
  // cannot tell (never watched, or no longer: an IPC export, a fork); the
  // caller then takes all of it as written. Called from any thread once
  // the read-back's stream has got there.
  virtual Status TakeWritten(uint64_t address, uint64_t size, std::vector<std::pair<uint64_t, uint64_t>>* runs) = 0;
};

}  // namespace hipr::worker
