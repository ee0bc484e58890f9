// Device: the one interface between a session's replay and a GPU runtime.
// `hip` drives the real HIP runtime; `sim` emulates an MI-series GPU for
// machines without one. Nothing above this interface knows which one runs.
//
// One Device instance lives in each session process and holds all of that
// session's device state; its methods are called from the session's replay
// thread only. Stream and event handles are ids chosen by the client (stream
// 0 is the legacy null stream); a device rejects ids it does not hold.
#pragma once

#include <sys/uio.h>

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <condition_variable>
#include <string>
#include <string_view>
#include <vector>

#include "api_device.h"  // Generated: build/worker_service/gen (shim_gen/gen_remoting.py).
#include "protocol/code_object/code_object.h"
#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/thread_annotations.h"
#include "protocol/wire.h"
#include "worker_service/memory_account.h"

namespace hipr::worker {

// Moves the next bytes of a bulk transfer between the connection and host
// buffers the device chooses (its memory, or staging). Each call moves
// exactly the bytes `iov` describes.
using BulkIo = std::function<Status(const iovec* iov, int count)>;

// Receives text that device code printed. May be called from any thread.
using OutputSink = std::function<void(std::string_view text)>;

// A code object to load, already verified: `code` hashes to `sha256` and
// `info` is its parsed metadata.
struct ModuleImage {
  co::Sha256Digest sha256{};
  std::vector<uint8_t> code;
  co::CodeObjectInfo info;
  std::string name;  // Where the client found it, for messages.
};

// What a loaded module offers.
struct ModuleLoadResult {
  std::vector<msg::ModuleGlobal> globals;
  // Kernels this device cannot launch, and why (`message`); `all_unavailable`
  // when none can run (the list is then left empty).
  std::vector<std::string> unavailable_kernels;
  bool all_unavailable = false;
  std::string message;
};

struct KernelLaunch {
  int device = 0;
  uint64_t stream = 0;
  uint64_t module = 0;
  std::string kernel;  // Mangled name, as in the metadata.
  std::array<uint32_t, 3> grid{};
  std::array<uint32_t, 3> block{};
  // Work-items per dimension, for a partial last block (checked by
  // CheckLaunchShape); all zero: grid * block.
  std::array<uint32_t, 3> global{};
  uint32_t shared_bytes = 0;
  uint32_t flags = 0;  // msg::LaunchFlags.
  std::vector<uint8_t> kernarg;  // Explicit arguments only.
  uint64_t start_event = 0;
  uint64_t stop_event = 0;
};

// Holds a stream at a host callback until the client has run it: the
// stream's own thread (or the runtime's callback thread) waits in Wait();
// the session opens it when the client says so, or when the session ends.
class HostGate {
 public:
  void Open() {
    {
      MutexLock lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    MutexLock lock(mu_);
    while (!open_) cv_.wait(lock.native());
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  bool open_ HIPR_GUARDED_BY(mu_) = false;
};

class Device {
 public:
  // What the asynchronous forms (VmmUnmapAsync, *SynchronizeAsync) call
  // when done.
  using Completion = std::function<void(Status)>;

  virtual ~Device() = default;

  virtual std::string_view kind() const = 0;
  // The optional capabilities this device has (wire.h kCapability*), which
  // the hello reports: what is not listed fails with kNotSupported.
  virtual std::vector<std::string> capabilities() const = 0;
  virtual const std::vector<msg::DeviceInfo>& devices() const = 0;
  virtual int32_t driver_version() const = 0;
  virtual int32_t runtime_version() const = 0;
  // Where the device charges the memory it allocates for the session
  // beyond its own capacity: the worker-wide budget and the tenant's cap
  // (memory_account.h; null: nowhere). Set before the hello; outlives the
  // device.
  virtual void SetMemoryAccount(MemoryAccount* account) = 0;

  // Agrees on the device address window: `offer` is reserved in the client.
  // On success `used` is the window device addresses will come from (the
  // offer, or a counter-offer the client must reserve in turn).
  virtual Status AttachWindow(const msg::AddressWindow& offer, msg::AddressWindow* used) = 0;

  virtual Status Malloc(int device, uint64_t size, uint32_t flags, uint64_t* address) = 0;
  virtual Status Free(uint64_t address) = 0;
  virtual Status MemInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) = 0;

  // Fails with kInvalidDevicePointer unless the whole region lies inside one
  // allocation of this session.
  virtual Status CheckRegion(const msg::Region& region) const = 0;

  virtual Status Memset(int device, uint64_t stream, const msg::Region& dst, uint32_t value,
                        uint8_t element_size) = 0;
  // Receives dst.bytes() through `fill` in stream order. If it fails before
  // calling `fill`, the caller discards the bulk.
  virtual Status CopyToDevice(int device, uint64_t stream, const msg::Region& dst,
                              const BulkIo& fill) = 0;
  // Sends src.bytes() through `drain` in stream order; `drain` is not called
  // when the copy fails validation.
  virtual Status CopyFromDevice(int device, uint64_t stream, const msg::Region& src,
                                const BulkIo& drain) = 0;
  virtual Status CopyOnDevice(int device, uint64_t stream, const msg::Region& dst,
                              const msg::Region& src) = 0;
  // CopyFromDevice without waiting: `done` runs once the stream has got
  // there (on any thread, maybe before this returns) with the status a
  // synchronizing call would report and, when that is ok, a reader that
  // hands the region's bytes to a BulkIo (valid during `done`); on a
  // validation error the reader is null. The default is the blocking form.
  using RegionReader = std::function<Status(const BulkIo& drain)>;
  using CopyOutDone = std::function<void(Status, const RegionReader& read)>;
  virtual void CopyFromDeviceAsync(int device, uint64_t stream, const msg::Region& src, CopyOutDone done) {
    done(Status::Ok(), [&](const BulkIo& drain) { return CopyFromDevice(device, stream, src, drain); });
  }

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

  // IPC memory handles between sessions of this worker (each a process of
  // its own, as IPC handles expect). IpcGetMemHandle names the allocation
  // holding `address` and where in it `address` lies; IpcOpenMemHandle maps
  // that allocation for this session (`base`, `size`; `address` is the
  // handle's pointer inside it), charged to this session's memory account
  // and device memory while mapped (it keeps the exporter's memory alive),
  // where copies and kernels may use it until IpcCloseMemHandle(base). hipFree refuses
  // an opened mapping. A handle of a freed allocation, of another worker,
  // or forged fails to open (kInvalidArgument).
  using IpcHandle = std::array<uint8_t, msg::kIpcMemHandleBytes>;
  virtual Status IpcGetMemHandle(uint64_t address, IpcHandle* handle) = 0;
  virtual Status IpcOpenMemHandle(int device, const IpcHandle& handle, uint32_t flags, uint64_t* address,
                                  uint64_t* base, uint64_t* size) = 0;
  virtual Status IpcCloseMemHandle(uint64_t base) = 0;
  // IPC event handles: IpcGetEventHandle exports `event` (created with
  // hipEventInterprocess); IpcOpenEventHandle makes such a handle event
  // `event` of this session on `device`, to wait for, query and record as
  // any other; EventDestroy forgets it.
  // Texture objects over this session's device memory (a region inside one
  // allocation, msg::TextureCreateRequest): `handle` is what kernels
  // receive as the hipTextureObject_t. DestroyTexture forgets a handle
  // TextureCreate made (kInvalidArgument for any other).
  virtual Status CreateTexture(const msg::TextureCreateRequest& request, uint64_t* handle) = 0;
  virtual Status DestroyTexture(uint64_t handle) = 0;
  using IpcEventHandle = std::array<uint8_t, msg::kIpcEventHandleBytes>;
  virtual Status IpcGetEventHandle(uint64_t event, IpcEventHandle* handle) = 0;
  virtual Status IpcOpenEventHandle(int device, uint64_t event, const IpcEventHandle& handle) = 0;

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
  // Shareable handles (hipMemExportToShareableHandle): VmmExport names
  // physical memory `handle` for another session of this worker;
  // VmmImport makes such a name physical memory `handle` of this session
  // on `device` (charged to this session while it holds it, as IPC
  // memory), mapped and released as any other. A stale, foreign or forged name fails (kInvalidArgument).
  virtual Status VmmExport(uint64_t handle, IpcHandle* out) = 0;
  virtual Status VmmImport(int device, uint64_t handle, const IpcHandle& token, uint64_t* size) = 0;

  // `cu_mask` (empty: none) restricts the stream to those compute units
  // (hipExtStreamCreateWithCUMask); the client checked it selects one.
  virtual Status StreamCreate(int device, uint64_t stream, uint32_t flags, int32_t priority,
                              std::span<const uint32_t> cu_mask) = 0;
  virtual Status StreamDestroy(uint64_t stream) = 0;
  virtual Status StreamSynchronize(uint64_t stream) = 0;
  virtual Status StreamQuery(uint64_t stream) = 0;  // Ok or kNotReady.
  virtual Status StreamWaitEvent(uint64_t stream, uint64_t event, uint32_t flags) = 0;
  // Work queued on the stream after this waits until the value at `address`
  // meets the condition (msg::StreamWaitValueRequest). A wait that is never
  // met holds its stream, as on a GPU, until the session ends.
  virtual Status StreamWaitValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint64_t mask,
                                 uint32_t flags, uint8_t bytes) = 0;
  // Work queued after this sees `value` (4 or 8 bytes, aligned) at
  // `address`, written in one store (msg::StreamWriteValueRequest).
  virtual Status StreamWriteValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint8_t bytes) = 0;
  // A host callback in stream order: when `stream` gets there, `reached`
  // runs (on any thread) with the stream's status (ok, or the error of
  // earlier work), then the stream waits until `gate` opens. Never blocks
  // the caller.
  virtual Status StreamHostCallback(int device, uint64_t stream, std::function<void(Status)> reached,
                                    std::shared_ptr<HostGate> gate) = 0;

  virtual Status EventCreate(int device, uint64_t event, uint32_t flags) = 0;
  virtual Status EventDestroy(uint64_t event) = 0;
  virtual Status EventRecord(uint64_t event, uint64_t stream) = 0;
  virtual Status EventSynchronize(uint64_t event) = 0;
  virtual Status EventQuery(uint64_t event) = 0;  // Ok or kNotReady.
  virtual Status EventElapsedTime(uint64_t start, uint64_t stop, float* milliseconds) = 0;

  // Loads a module under the client's id `module` (unique in the session).
  virtual Status LoadModule(int device, uint64_t module, std::shared_ptr<const ModuleImage> image,
                            ModuleLoadResult* out) = 0;
  virtual Status UnloadModule(uint64_t module) = 0;
  // Validates the launch and queues it on its stream; errors of the kernel
  // itself surface at the next synchronizing call.
  virtual Status LaunchKernel(KernelLaunch launch) = 0;
  // Where printf output of device code goes; set once before any launch.
  virtual void SetOutputSink(OutputSink sink) = 0;

  // Bulk memory that stays put. True when every buffer of iov[0..count),
  // as handed to a BulkIo, stays mapped at its address until the device
  // says otherwise through the hook below (device memory, the staging
  // pipeline's buffers); false for buffers that live only during the call.
  // The session then lets its connection keep state for that memory (rdma:
  // a memory registration, so the bytes move with no copy).
  virtual bool BulkMemoryStays(const iovec* iov, int count) const {
    (void)iov;
    (void)count;
    return false;
  }
  // Called (from any thread) before the device unmaps or remaps memory it
  // may have reported as staying. Set once before any copy; cleared
  // (nullptr) before the hook's owner goes.
  using ForgetMemoryHook = std::function<void(const void* addr, size_t bytes)>;
  virtual void SetForgetMemoryHook(ForgetMemoryHook hook) { (void)hook; }

  virtual Status DeviceSynchronize(int device) = 0;
  // Also returns the device's generated-call state (limits, pools) to its
  // defaults.
  virtual Status DeviceReset(int device) = 0;

  // The generated calls (kApiCall; shim_gen/annotations.txt): hand-written
  // for the sim, generated for the hip device. Lives as long as the device.
  virtual ApiDevice& api() = 0;

  // The synchronizing calls as the session replays them: without waiting.
  // `done` runs exactly once, on any thread (possibly before the call
  // returns), with what the blocking form would return; the session sends
  // the reply from there, so a wait for one client thread never stops the
  // replay of another's work. The defaults run the blocking form; the sim
  // completes from its stream threads, the `hip` device waits on threads of
  // its own (waiters.h).
  virtual void StreamSynchronizeAsync(uint64_t stream, Completion done) { done(StreamSynchronize(stream)); }
  virtual void EventSynchronizeAsync(uint64_t event, Completion done) { done(EventSynchronize(event)); }
  virtual void DeviceSynchronizeAsync(int device, Completion done) { done(DeviceSynchronize(device)); }
};

}  // namespace hipr::worker
