// SimDevice: a Device for machines without a GPU. Device memory lives in the
// session process at the agreed window addresses (SimMemory); streams are
// in-order queues on their own threads (SimStream); events carry host
// timestamps taken when the stream reaches them. Kernels run through
// host-compiled twins of their source (twin/), found by the SHA-256 of the
// code object the client shipped.
#pragma once

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/write_watch.h"
#include "worker_service/device/device.h"
#include "worker_service/device/staging_pipeline.h"
#include "worker_service/sim/sim_api.h"
#include "worker_service/sim/sim_memory.h"
#include "worker_service/sim/sim_stream.h"
#include "worker_service/sim/twin/twin_catalog.h"
#include "worker_service/sim/twin/kernel_runner.h"

namespace hipr::worker::sim {

struct SimOptions {
  std::string model = "mi250x";
  uint64_t memory_bytes = 0;  // Per device; must be > 0.
  int device_count = 1;
  // The client's selection (visible_devices.h): of the device_count
  // devices, these ordinals, in this order; empty: all of them.
  std::vector<int> ordinals;
  std::vector<std::string> kernel_dirs;  // Where kernel twins are found.
  // Fault injection for tests: a kernel whose mangled name contains one of
  // these fails when it runs (hipErrorLaunchFailure, a deferred error), as
  // a kernel that faults on a GPU does.
  std::vector<std::string> fail_kernels;
  // Copies go through the staging pipeline (staging_pipeline.h) the `hip`
  // device uses, with plain buffers, instead of straight into device
  // memory: so that path runs and is measured without a GPU.
  bool force_staging = false;
};

// Budget used when --sim-memory is not given: a quarter of host RAM, at most
// 16 GiB.
uint64_t DefaultSimMemoryBytes();

// Has every facet.
class SimDevice final : public Device,
                        public IpcFacet,
                        public VirtualMemoryFacet,
                        public ShareableMemoryFacet,
                        public TextureFacet,
                        public MemoryLeaseFacet,
                        public HostRegisterFacet,
                        public BulkMemoryFacet,
                        public WriteWatchFacet {
 public:
  static Status Create(const SimOptions& options, std::unique_ptr<SimDevice>* out);
  ~SimDevice() override;

  std::string_view kind() const override { return "sim"; }
  void SetMemoryAccount(MemoryAccount* account) override { memory_.set_account(account); }
  IpcFacet* ipc() override { return this; }
  VirtualMemoryFacet* vmm() override { return this; }
  MemoryLeaseFacet* memory_lease() override { return this; }
  ShareableMemoryFacet* shareable() override { return this; }
  TextureFacet* textures() override { return this; }
  HostRegisterFacet* host_register() override { return this; }
  BulkMemoryFacet* bulk_memory() override { return this; }
  WriteWatchFacet* write_watch() override { return this; }
  bool cooperative_module_launch() const override { return true; }
  const std::vector<msg::DeviceInfo>& devices() const override { return infos_; }
  int32_t driver_version() const override;
  int32_t runtime_version() const override;
  Status AttachWindow(const msg::AddressWindow& offer, msg::AddressWindow* used) override;

  Status Malloc(int device, uint64_t size, uint32_t flags, uint64_t* address) override;
  Status Free(uint64_t address) override;
  Status MemInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) override;
  Status CheckRegion(const msg::Region& region) const override;

  Status Memset(int device, uint64_t stream, const msg::Region& dst, uint32_t value,
                uint8_t element_size) override;
  Status CopyToDevice(int device, uint64_t stream, const msg::Region& dst, const BulkIo& fill) override;
  Status CopyFromDevice(int device, uint64_t stream, const msg::Region& src, const BulkIo& drain) override;
  void CopyFromDeviceAsync(int device, uint64_t stream, const msg::Region& src, CopyOutDone done) override;

  // --sim-force-staging's pool: 8 buffers of 512 KiB. The sim's "DMA" is a
  // CPU memcpy, which runs best from a piece still in cache; 4 MiB pieces
  // measured 73% of raw TCP + memcpy for H2D, 512 KiB 92-103% (the hip
  // device keeps 8 MiB pieces, where the DMA engine copies).
  static constexpr size_t kStagingBuffers = 8;
  static constexpr size_t kStagingPieceBytes = 512u << 10;
  Status CopyOnDevice(int device, uint64_t stream, const msg::Region& dst, const msg::Region& src) override;
  // Device memory is host memory here: registering host memory pins
  // nothing, and a copy is one memcpy per row.
  Status RegisterHost(uint8_t*, uint64_t) override { return Status::Ok(); }
  Status UnregisterHost(uint8_t*, uint64_t) override { return Status::Ok(); }
  Status StreamWaitValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint64_t mask,
                         uint32_t flags, uint8_t bytes) override;
  Status StreamWriteValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint8_t bytes) override;
  Status IpcGetMemHandle(uint64_t address, IpcHandle* handle) override;
  Status IpcOpenMemHandle(int device, const IpcHandle& handle, uint32_t flags, uint64_t* address, uint64_t* base,
                          uint64_t* size) override;
  Status IpcCloseMemHandle(uint64_t base) override;
  Status Lease(int device, uint64_t need, uint64_t want, uint64_t* base, uint64_t* size,
               uint64_t* granularity) override;
  Status PlaceInLease(int device, uint64_t address, uint64_t size) override;
  Status ReturnLease(int device) override;
  Status VmmReserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* address) override;
  Status VmmFree(uint64_t address, uint64_t size) override;
  Status VmmCreate(int device, uint64_t handle, uint64_t size) override;
  Status VmmRelease(uint64_t handle) override;
  Status VmmMap(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle) override;
  void VmmUnmapAsync(uint64_t address, uint64_t size, Completion done) override;
  Status VmmSetAccess(uint64_t address, uint64_t size, std::span<const msg::VmmAccess> access) override;
  Status VmmExport(uint64_t handle, IpcHandle* out) override;
  Status VmmImport(int device, uint64_t handle, const IpcHandle& token, uint64_t* size) override;
  Status IpcGetEventHandle(uint64_t event, IpcEventHandle* handle) override;
  Status CreateTexture(const msg::TextureCreateRequest& request, uint64_t* handle) override;
  Status DestroyTexture(uint64_t handle) override;
  Status IpcOpenEventHandle(int device, uint64_t event, const IpcEventHandle& handle) override;
  Status CopyHostToDevice(int device, uint64_t stream, const msg::Region& dst, const uint8_t* src,
                          uint64_t src_pitch) override;
  Status CopyDeviceToHost(int device, uint64_t stream, uint8_t* dst, uint64_t dst_pitch,
                          const msg::Region& src) override;

  // The sim runs blocks on host threads and has no compute units to mask:
  // a CU mask is accepted and has no effect.
  Status StreamCreate(int device, uint64_t stream, uint32_t flags, int32_t priority,
                      std::span<const uint32_t> cu_mask) override;
  Status StreamDestroy(uint64_t stream) override;
  Status StreamSynchronize(int device, uint64_t stream) override;
  Status StreamQuery(int device, uint64_t stream) override;
  Status StreamWaitEvent(int device, uint64_t stream, uint64_t event, uint32_t flags) override;
  Status StreamHostCallback(int device, uint64_t stream, std::function<void(Status)> reached,
                            std::shared_ptr<HostGate> gate) override;

  Status EventCreate(int device, uint64_t event, uint32_t flags) override;
  Status EventDestroy(uint64_t event) override;
  Status EventRecord(uint64_t event, uint64_t stream) override;
  Status EventSynchronize(uint64_t event) override;
  Status EventQuery(uint64_t event) override;
  Status EventElapsedTime(uint64_t start, uint64_t stop, float* milliseconds) override;

  Status LoadModule(int device, uint64_t module, std::shared_ptr<const ModuleImage> image,
                    ModuleLoadResult* out) override;
  Status UnloadModule(uint64_t module) override;
  Status LaunchKernel(KernelLaunch launch) override;
  void SetOutputSink(OutputSink sink) override;
  // Device memory (the window) and the staging pipeline's buffers stay;
  // the window tells the hook before its pages change.
  bool BulkMemoryStays(const iovec* iov, int count) const override;
  void SetForgetMemoryHook(ForgetMemoryHook hook) override;

  Status DeviceSynchronize(int device) override;
  Status DeviceReset(int device) override;
  ApiDevice& api() override { return api_; }

  // Completions run on the stream thread that reaches the point waited for
  // (or at once, on the caller's thread).
  // WriteWatchFacet: managed allocations are watched by the kernel
  // (protocol/write_watch.h) from their allocation until they are freed or
  // exported for IPC (whose importers write through mappings of their own).
  Status TakeWritten(uint64_t address, uint64_t size, std::vector<std::pair<uint64_t, uint64_t>>* runs) override;

  void StreamSynchronizeAsync(int device, uint64_t stream, Completion done) override;
  void EventSynchronizeAsync(uint64_t event, Completion done) override;
  void DeviceSynchronizeAsync(int device, Completion done) override;

 private:
  struct Event;
  struct Module {
    int device = 0;
    std::shared_ptr<const ModuleImage> image;
    std::shared_ptr<TwinModule> twin;  // Null when none could be used.
    std::string twin_problem;          // Why there is no twin.
    std::vector<uint64_t> variables;   // Device memory of its variables.
    // Kernels launched so far, by the name launches give: found once by the
    // linear searches of the metadata and the twin (a framework's module
    // holds thousands of kernels), then by one hash.
    struct Launchable {
      const co::KernelInfo* info;
      const TwinKernel* kernel;
    };
    struct NameHash {
      using is_transparent = void;
      size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, Launchable, NameHash, std::equal_to<>> launchable;
  };
  SimDevice(std::vector<msg::DeviceInfo> infos, uint64_t budget, std::vector<std::string> kernel_dirs);
  // Errors of queued work (a failed kernel), reported by the next
  // synchronizing call, first one wins.
  void RecordFault(const Status& st);
  // Device memory of `src` to `drain`: straight, or through staging_.
  Status ReadRegion(const msg::Region& src, const BulkIo& drain);
  Status TakeFault();
  Status PeekFault();
  void ReleaseQuietly(uint64_t address);
  Status CheckDevice(int device) const;
  // Resolves a stream id for work submitted by a thread whose current device
  // is `device`, applying the legacy null stream's implicit synchronization.
  Status Prepare(int device, uint64_t stream, SimStream** out);
  Status FindEvent(uint64_t id, std::shared_ptr<Event>* out) const;
  void SynchronizeAll(int device);
  // The null streams and created streams of `device` (every device when
  // < 0), without the non-blocking ones when `blocking_only`.
  std::vector<SimStream*> StreamsOf(int device, bool blocking_only) const;
  // Runs `then` once every stream in `streams` has run what is queued now.
  void WhenReached(const std::vector<SimStream*>& streams, std::function<void()> then);
  // A blocking form from its async one.
  // `async`: a member taking `args` and a Completion.
  template <class Async, class... Args>
  Status Wait(Async async, Args... args);

  std::vector<msg::DeviceInfo> infos_;
  SimApi api_;
  SimMemory memory_;
  std::vector<std::unique_ptr<SimStream>> null_streams_;  // One per device.
  std::map<uint64_t, std::unique_ptr<SimStream>> streams_;
  // Destroyed streams still running their queued work; joined once idle.
  std::vector<std::unique_ptr<SimStream>> retired_;
  // Bytes of host-to-device copies taken from the network for busy streams
  // and not yet written (bounded by kMaxStagedBytes).
  static constexpr uint64_t kMaxStagedBytes = 256ull << 20;
  std::atomic<uint64_t> staged_bytes_{0};
  // Where those bytes wait (CopyToDevice). A buffer of kKeptStageBytes or
  // more is a mapping kept for the next staged copy, up to kMaxStagedBytes
  // of them: a fresh 256 MiB one costs 65,536 page faults, the kernel's
  // zeroing and an unmap for every copy.
  struct StageBuffer {
    uint8_t* data = nullptr;
    uint64_t size = 0;
    bool mapped = false;
    ~StageBuffer();
  };
  static constexpr uint64_t kKeptStageBytes = 1ull << 20;
  std::shared_ptr<StageBuffer> TakeStageBuffer(uint64_t bytes);
  void GiveStageBuffer(std::shared_ptr<StageBuffer> buffer);
  Mutex stages_mu_;
  std::vector<std::shared_ptr<StageBuffer>> kept_stages_ HIPR_GUARDED_BY(stages_mu_);
  uint64_t kept_stage_bytes_ HIPR_GUARDED_BY(stages_mu_) = 0;
  std::atomic<bool> stopping_{false};  // The device is going: stream value waits give up.
  std::map<uint64_t, std::shared_ptr<Event>> events_;
  // Runs waits for events another session records (IPC events), which no
  // stream item of this session completes: created at the first one.
  std::unique_ptr<SimStream> ipc_waits_;
  std::map<uint64_t, Module> modules_;
  // A launch waiting in a stream: what its item needs. Recycled, so a
  // launch allocates nothing once warm: memory the replay thread allocates
  // and a stream's thread frees goes back through glibc's arena lock, which
  // the replay thread's own allocations then contend for (a futex wait and
  // a wake per launch). A stream's thread returns a run launch to
  // returned_launches_ without a lock; the replay thread takes that list
  // whole when its own free list is empty, and frees (itself) what is over
  // kMaxFreeLaunches.
  struct QueuedLaunch {
    std::shared_ptr<TwinModule> twin;
    const TwinKernel* kernel = nullptr;
    std::string name;
    std::array<uint32_t, 3> grid{};
    std::array<uint32_t, 3> block{};
    std::array<uint32_t, 3> global{};
    uint32_t shared_bytes = 0;
    std::vector<uint8_t> kernarg;
    bool cooperative = false;
    bool inject_failure = false;
    QueuedLaunch* next = nullptr;  // In a free list.
  };
  std::unique_ptr<QueuedLaunch> TakeQueuedLaunch();
  // Runs a queued launch on its stream's thread, then returns it.
  void RunQueuedLaunch(QueuedLaunch* q);
  void DeleteQueuedLaunches();
  static constexpr size_t kMaxFreeLaunches = 1024;
  std::atomic<QueuedLaunch*> returned_launches_{nullptr};
  Mutex launches_mu_;
  QueuedLaunch* free_launches_ HIPR_GUARDED_BY(launches_mu_) = nullptr;
  // Texture objects: the device memory holding each one's HiprTwinTexture.
  std::set<uint64_t> textures_;
  TwinCatalog twins_;
  KernelRunner runner_;
  std::vector<std::string> fail_kernels_;  // SimOptions::fail_kernels.
  // SimOptions::force_staging: the pool and its buffers.
  std::vector<std::unique_ptr<uint8_t[]>> staging_buffers_;
  std::unique_ptr<StagingPipeline> staging_;
  ForgetMemoryHook forget_;  // Set once, before any copy.
  // Starts watching a new managed allocation (best effort: unwatched ones
  // are read back whole).
  void WatchManaged(uint64_t address, uint64_t size);
  // The pages of [p, p + n) are about to be replaced: what was watched
  // there is no longer.
  void ForgetWatched(const void* p, size_t n);
  Mutex watch_mu_;
  std::unique_ptr<WriteWatch> watch_ HIPR_GUARDED_BY(watch_mu_);  // Opened at the first managed allocation.
  bool watch_tried_ HIPR_GUARDED_BY(watch_mu_) = false;
  std::map<uint64_t, uint64_t> watched_ HIPR_GUARDED_BY(watch_mu_);  // base -> size.
  OutputSink sink_;  // Set before any launch; called from stream threads.
  Mutex fault_mu_;
  Status fault_ HIPR_GUARDED_BY(fault_mu_);
};

}  // namespace hipr::worker::sim
