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
#include "worker_service/device/device_facets.h"
#include "worker_service/device/memory_account.h"

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
  bool is_open() const {
    MutexLock lock(mu_);
    return open_;
  }

 private:
  mutable Mutex mu_;
  std::condition_variable cv_;
  bool open_ HIPR_GUARDED_BY(mu_) = false;
};

// The core every device implements; the optional parts are facets
// (device_facets.h) a device returns from ipc(), vmm(), ... or leaves null.
class Device {
 public:
  using Completion = worker::Completion;
  using IpcHandle = worker::IpcHandle;
  using IpcEventHandle = worker::IpcEventHandle;

  virtual ~Device() = default;

  virtual std::string_view kind() const = 0;
  // The optional capabilities this device has (wire.h kCapability*), which
  // the hello reports: one per facet present, and cooperative module
  // launches where the device has them. What is not listed fails with
  // hipErrorNotSupported.
  std::vector<std::string> capabilities();

  // The facets (device_facets.h): null where the device has none. Each
  // lives as long as the device.
  virtual IpcFacet* ipc() { return nullptr; }
  virtual VirtualMemoryFacet* vmm() { return nullptr; }
  virtual ShareableMemoryFacet* shareable() { return nullptr; }
  virtual TextureFacet* textures() { return nullptr; }
  virtual MemoryLeaseFacet* memory_lease() { return nullptr; }
  virtual HostRegisterFacet* host_register() { return nullptr; }
  virtual BulkMemoryFacet* bulk_memory() { return nullptr; }
  virtual WriteWatchFacet* write_watch() { return nullptr; }
  // hipModuleLaunchCooperativeKernel and its multi-device form.
  virtual bool cooperative_module_launch() const { return false; }
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

  // `cu_mask` (empty: none) restricts the stream to those compute units
  // (hipExtStreamCreateWithCUMask); the client checked it selects one.
  virtual Status StreamCreate(int device, uint64_t stream, uint32_t flags, int32_t priority,
                              std::span<const uint32_t> cu_mask) = 0;
  virtual Status StreamDestroy(uint64_t stream) = 0;
  // `device` names whose null stream stream 0 is (-1: the device's choice);
  // other streams are their own device's.
  virtual Status StreamSynchronize(int device, uint64_t stream) = 0;
  virtual Status StreamQuery(int device, uint64_t stream) = 0;  // Ok or kNotReady.
  virtual Status StreamWaitEvent(int device, uint64_t stream, uint64_t event, uint32_t flags) = 0;
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
  virtual void StreamSynchronizeAsync(int device, uint64_t stream, Completion done) {
    done(StreamSynchronize(device, stream));
  }
  virtual void EventSynchronizeAsync(uint64_t event, Completion done) { done(EventSynchronize(event)); }
  virtual void DeviceSynchronizeAsync(int device, Completion done) { done(DeviceSynchronize(device)); }
};

}  // namespace hipr::worker
