// HipDevice: the Device on the real HIP runtime (Debian's libamdhip64 5.2;
// ROCm 6/7 where built against them). Lives in libhipr_device_hip.so, which
// only session processes and the start-up probe child load.
//
// Bulk copies from the network go through a pool of pinned staging buffers
// (hipHostMalloc), pipelined (staging_pipeline.h): the next piece is
// received while the last one is copied to the device with hipMemcpyAsync,
// and the reverse for reads. Copies to and from the shm host segment are
// one hipMemcpy2DAsync each: its ranges are registered (hipHostRegister)
// as the client places pinned memory there. No GPU exists on the team's
// machines: ctest runs this file on hipr's own stub as the runtime, over a
// sim worker (the chain, --hip-runtime; docs/operations.md), and its no-GPU
// probe as it is.
//
// The replay thread never waits for a stream: a stream may be held at a host
// callback until the client says it ran, in a frame the replay has yet to
// read. Waits go to waiter threads (waiters.h), copies on a busy stream run
// at their stream point (AtStreamPoint), hipFree and hipMemUnmap wait on a
// waiter thread while a stream is held.
#include <hip/hip_ext.h>
#include <hip/hip_runtime_api.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "worker_service/device/argument_checks.h"
#include "worker_service/device/device.h"
#include "worker_service/device/device_properties.h"
#include "worker_service/hip/hip_module.h"
#include "worker_service/device/launch_checks.h"
#include "worker_service/device/staging_pipeline.h"
#include "worker_service/device/texture_desc.h"
#include "worker_service/device/waiters.h"

namespace hipr::worker {
namespace {

constexpr size_t kStagingBytes = 8u << 20;  // One piece of the staging pipeline.
constexpr size_t kStagingBuffers = 4;        // Its pool: 32 MiB pinned per session.

Status FromHip(hipError_t err, const char* what) {
  if (err == hipSuccess) return Status::Ok();
  return Status(StatusCode::kInternal, std::string(what) + ": " + hipGetErrorName(err), static_cast<int>(err));
}

#define HIPR_HIP(call) HIPR_RETURN_IF_ERROR(FromHip((call), #call))

// Where a held stream (HoldStream) has got to: set once, from the runtime's
// callback thread, with the status of the work before the hold.
class Reached {
 public:
  void Set(Status st) {
    {
      MutexLock lock(mu_);
      status_ = std::move(st);
      set_ = true;
    }
    cv_.notify_all();
  }
  Status Wait() {
    MutexLock lock(mu_);
    while (!set_) cv_.wait(lock.native());
    return status_;
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  bool set_ HIPR_GUARDED_BY(mu_) = false;
  Status status_ HIPR_GUARDED_BY(mu_);
};

// The session process's stdout, where the runtime prints device printf
// output, read back and handed to the session's output sink, so the client
// sees it as it sees the sim's (kOutput frames before the next reply).
// Drain() moves everything written so far; a thread keeps the pipe from
// filling between synchronizations.
class StdoutCapture {
 public:
  ~StdoutCapture() { Stop(); }
  Status Start(OutputSink sink) {
    sink_ = std::move(sink);
    int fds[2];
    if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return Status(StatusCode::kInternal, "pipe for device output failed");
    std::fflush(stdout);
    if (dup2(fds[1], STDOUT_FILENO) < 0) {
      close(fds[0]);
      close(fds[1]);
      return Status(StatusCode::kInternal, "cannot capture stdout for device output");
    }
    close(fds[1]);
    read_fd_ = fds[0];
    thread_ = std::thread([this] {
      while (!stopping_.load()) {
        pollfd p{read_fd_, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) Drain();
      }
    });
    return Status::Ok();
  }
  void Drain() {
    if (read_fd_ < 0) return;
    std::fflush(stdout);
    MutexLock lock(mu_);
    char buf[16384];
    ssize_t n;
    while ((n = read(read_fd_, buf, sizeof buf)) > 0) sink_(std::string_view(buf, static_cast<size_t>(n)));
  }
  void Stop() {
    if (!thread_.joinable()) return;
    Drain();
    stopping_.store(true);
    thread_.join();
    int null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null_fd >= 0) {
      dup2(null_fd, STDOUT_FILENO);
      close(null_fd);
    }
    close(read_fd_);
    read_fd_ = -1;
  }

 private:
  OutputSink sink_;
  int read_fd_ = -1;
  Mutex mu_;  // One reader at a time, so output keeps its order.
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

msg::DeviceInfo InfoOf(const hipDeviceProp_t& p) {
  msg::DeviceInfo d;
  d.name = p.name;
  d.gcn_arch_name = p.gcnArchName;
#if HIP_VERSION_MAJOR >= 6
  d.gcn_arch = GcnArchNumber(p.gcnArchName);  // Gone from 6.x's struct; 5.x clients still read it.
#else
  d.gcn_arch = p.gcnArch;
#endif
  d.total_global_mem = p.totalGlobalMem;
  d.shared_mem_per_block = p.sharedMemPerBlock;
  d.regs_per_block = p.regsPerBlock;
  d.warp_size = p.warpSize;
  d.max_threads_per_block = p.maxThreadsPerBlock;
  for (int i = 0; i < 3; ++i) {
    d.max_threads_dim[i] = p.maxThreadsDim[i];
    d.max_grid_size[i] = p.maxGridSize[i];
  }
  d.clock_rate_khz = p.clockRate;
  d.memory_clock_rate_khz = p.memoryClockRate;
  d.memory_bus_width_bits = p.memoryBusWidth;
  d.total_const_mem = p.totalConstMem;
  d.major = p.major;
  d.minor = p.minor;
  d.multi_processor_count = p.multiProcessorCount;
  d.l2_cache_size = p.l2CacheSize;
  d.max_threads_per_multiprocessor = p.maxThreadsPerMultiProcessor;
  d.clock_instruction_rate_khz = p.clockInstructionRate;
  d.pci_domain_id = p.pciDomainID;
  d.pci_bus_id = p.pciBusID;
  d.pci_device_id = p.pciDeviceID;
  d.max_shared_memory_per_multiprocessor = p.maxSharedMemoryPerMultiProcessor;
  d.is_multi_gpu_board = p.isMultiGpuBoard != 0;
  d.integrated = p.integrated != 0;
  d.cooperative_launch = p.cooperativeLaunch != 0;
  d.ecc_enabled = p.ECCEnabled != 0;
  d.managed_memory = p.managedMemory != 0;
  d.large_bar = p.isLargeBar != 0;
  d.asic_revision = p.asicRevision;
  d.mem_pitch = p.memPitch;
  d.texture_alignment = p.textureAlignment;
  d.max_texture_1d = p.maxTexture1D;
  d.max_texture_2d = {p.maxTexture2D[0], p.maxTexture2D[1]};
  d.max_texture_3d = {p.maxTexture3D[0], p.maxTexture3D[1], p.maxTexture3D[2]};
  d.max_texture_1d_linear = p.maxTexture1DLinear;
  // The named properties: clr's constants and derivations, then what this
  // runtime's struct and attributes say (a 5.2 runtime answers fewer).
  FillRuntimeProperties(&d);
  using msg::DeviceProperty;
  msg::SetProperty(&d, DeviceProperty::kTexturePitchAlignment, static_cast<int64_t>(p.texturePitchAlignment));
  msg::SetProperty(&d, DeviceProperty::kDirectManagedMemAccessFromHost, p.directManagedMemAccessFromHost);
  msg::SetProperty(&d, DeviceProperty::kPageableMemoryAccess, p.pageableMemoryAccess);
  msg::SetProperty(&d, DeviceProperty::kPageableMemoryAccessUsesHostPageTables, p.pageableMemoryAccessUsesHostPageTables);
  msg::SetProperty(&d, DeviceProperty::kCooperativeMultiDeviceLaunch, p.cooperativeMultiDeviceLaunch);
  msg::SetProperty(&d, DeviceProperty::kCooperativeMultiDeviceUnmatchedFunc, p.cooperativeMultiDeviceUnmatchedFunc);
  msg::SetProperty(&d, DeviceProperty::kCooperativeMultiDeviceUnmatchedGridDim, p.cooperativeMultiDeviceUnmatchedGridDim);
  msg::SetProperty(&d, DeviceProperty::kCooperativeMultiDeviceUnmatchedBlockDim, p.cooperativeMultiDeviceUnmatchedBlockDim);
  msg::SetProperty(&d, DeviceProperty::kCooperativeMultiDeviceUnmatchedSharedMem, p.cooperativeMultiDeviceUnmatchedSharedMem);
  return d;
}

// The attribute answers that have no hipDeviceProp_t field, as this runtime
// gives them; one it refuses stays absent (the client refuses it too).
void ReadAttributeFacts(int device, msg::DeviceInfo* d) {
  using msg::DeviceProperty;
  struct Fact {
    hipDeviceAttribute_t attr;
    DeviceProperty property;
  };
  const Fact facts[] = {
      {hipDeviceAttributeImageSupport, DeviceProperty::kImageSupport},
      {hipDeviceAttributePhysicalMultiProcessorCount, DeviceProperty::kPhysicalMultiProcessorCount},
      {hipDeviceAttributeFineGrainSupport, DeviceProperty::kFineGrainSupport},
      {hipDeviceAttributeCanUseStreamWaitValue, DeviceProperty::kCanUseStreamWaitValue},
      {hipDeviceAttributeMaxBlocksPerMultiProcessor, DeviceProperty::kMaxBlocksPerMultiProcessor},
#if HIP_VERSION_MAJOR >= 6
      {hipDeviceAttributeWallClockRate, DeviceProperty::kWallClockRate},
      {hipDeviceAttributeVirtualMemoryManagementSupported, DeviceProperty::kVirtualMemoryManagementSupported},
      {hipDeviceAttributeAsyncEngineCount, DeviceProperty::kAsyncEngineCount},
      {hipDeviceAttributeMemoryPoolSupportedHandleTypes, DeviceProperty::kMemoryPoolSupportedHandleTypes},
#endif
#if HIP_VERSION_MAJOR >= 7
      {hipDeviceAttributeNumberOfXccs, DeviceProperty::kNumberOfXccs},
      {hipDeviceAttributePciChipId, DeviceProperty::kPciChipId},
#endif
#if HIP_VERSION_MAJOR > 7 || (HIP_VERSION_MAJOR == 7 && HIP_VERSION_MINOR >= 1)
      {hipDeviceAttributeMaxAvailableVgprsPerThread, DeviceProperty::kMaxAvailableVgprsPerThread},
#endif
  };
  for (const Fact& f : facts) {
    int v = 0;
    if (hipDeviceGetAttribute(&v, f.attr, device) == hipSuccess) msg::SetProperty(d, f.property, v);
  }
}

// Every facet but shareable memory: the runtime's shareable handles are
// file descriptors (dma-buf) that another session process cannot open by
// name, so hipMemExportToShareableHandle is refused (hipErrorNotSupported).
class HipDevice final : public Device,
                        public IpcFacet,
                        public VirtualMemoryFacet,
                        public TextureFacet,
                        public HostRegisterFacet,
                        public BulkMemoryFacet {
 public:
  Status Init() {
    int count = 0;
    HIPR_HIP(hipGetDeviceCount(&count));
    for (int i = 0; i < count; ++i) {
      hipDeviceProp_t p;
      HIPR_HIP(hipGetDeviceProperties(&p, i));
      infos_.push_back(InfoOf(p));
      ReadAttributeFacts(i, &infos_.back());
      hipUUID uuid;
      if (hipDeviceGetUuid(&uuid, i) == hipSuccess)
        infos_.back().uuid.assign(reinterpret_cast<const uint8_t*>(uuid.bytes),
                                  reinterpret_cast<const uint8_t*>(uuid.bytes) + sizeof uuid.bytes);
    }
    // The GPUs' own peer topology.
    for (int i = 0; i < count && i < 63; ++i) {
      int64_t mask = 0;
      for (int j = 0; j < count && j < 63; ++j) {
        int can = 0;
        if (i != j && hipDeviceCanAccessPeer(&can, i, j) == hipSuccess && can != 0) mask |= int64_t{1} << j;
      }
      msg::SetProperty(&infos_[static_cast<size_t>(i)], msg::DeviceProperty::kPeerAccessMask, mask);
      // Enabled here once, for every pair the topology allows: the client
      // answers hipDeviceEnablePeerAccess itself, and kernels then reach
      // the peer's memory.
      for (int j = 0; j < 63 && mask >> j != 0; ++j) {
        if ((mask >> j & 1) == 0) continue;
        HIPR_HIP(hipSetDevice(i));
        hipError_t e = hipDeviceEnablePeerAccess(j, 0);
        if (e != hipSuccess && e != hipErrorPeerAccessAlreadyEnabled) return FromHip(e, "hipDeviceEnablePeerAccess");
      }
    }
    if (count > 0) HIPR_HIP(hipSetDevice(0));
#if HIP_VERSION_MAJOR >= 6
    // Each device's limits as the session found them, which hipDeviceReset
    // restores (5.2 has no hipDeviceSetLimit to change them with).
    for (int i = 0; i < count; ++i) {
      HIPR_HIP(hipSetDevice(i));
      DefaultLimits& d = default_limits_.emplace_back();
      for (size_t k = 0; k < kResetLimits.size(); ++k)
        if (hipDeviceGetLimit(&d[k], kResetLimits[k]) != hipSuccess) d[k] = 0;
    }
    if (count > 0) HIPR_HIP(hipSetDevice(0));
#endif
    for (int i = 0; i < count; ++i) {
      hipMemAllocationProp prop{};
      prop.type = hipMemAllocationTypePinned;
      prop.location.type = hipMemLocationTypeDevice;
      prop.location.id = i;
      size_t granularity = 0;
      if (hipMemGetAllocationGranularity(&granularity, &prop, hipMemAllocationGranularityMinimum) == hipSuccess)
        infos_[static_cast<size_t>(i)].vmm_granularity = granularity;
    }
    HIPR_HIP(hipDriverGetVersion(&driver_));
    HIPR_HIP(hipRuntimeGetVersion(&runtime_));
    std::vector<uint8_t*> buffers;
    for (size_t i = 0; i < kStagingBuffers; ++i) {
      void* b = nullptr;
      HIPR_HIP(hipHostMalloc(&b, kStagingBytes, 0));
      staging_buffers_.push_back(b);
      buffers.push_back(static_cast<uint8_t*>(b));
    }
    staging_ = std::make_unique<StagingPipeline>(std::move(buffers), kStagingBytes);
    return Status::Ok();
  }
  ~HipDevice() override {
    waiters_.reset();  // Waits in flight end first: they use the streams and events.
    for (auto& [id, t] : textures_) (void)hipDestroyTextureObject(t);
    for (auto& [id, m] : modules_) (void)hipModuleUnload(m.module);
    for (auto& [id, s] : streams_) (void)hipStreamDestroy(s);
    for (auto& [id, s] : side_streams_) (void)hipStreamDestroy(s);
    output_.Stop();
    for (auto& [id, e] : events_) (void)hipEventDestroy(e.event);
    for (auto& [addr, a] : allocations_) {
      if (a.module != 0) continue;  // Unloaded with its module above.
      if (a.vmm)
        (void)hipMemUnmap(reinterpret_cast<void*>(addr), a.size);
      else if (a.ipc_opened != nullptr)
        (void)hipIpcCloseMemHandle(a.ipc_opened);
      else
        (void)hipFree(reinterpret_cast<void*>(addr));
    }
    for (auto& [id, p] : physical_) (void)hipMemRelease(p.handle);
    for (auto& [base, size] : reservations_) (void)hipMemAddressFree(reinterpret_cast<void*>(base), size);
    for (void* b : staging_buffers_) {
      if (forget_) forget_(b, kStagingBytes);
      (void)hipHostFree(b);
    }
    for (auto& [base, bytes] : host_ranges_) (void)hipHostUnregister(base);
  }

  std::string_view kind() const override { return "hip"; }
  void SetMemoryAccount(MemoryAccount* account) override { account_ = account; }
  IpcFacet* ipc() override { return this; }
  VirtualMemoryFacet* vmm() override { return this; }
  TextureFacet* textures() override { return this; }
  HostRegisterFacet* host_register() override { return this; }
  BulkMemoryFacet* bulk_memory() override { return this; }
  // Where the runtime has the call.
  bool cooperative_module_launch() const override { return CooperativeLaunch() != nullptr; }
  const std::vector<msg::DeviceInfo>& devices() const override { return infos_; }
  int32_t driver_version() const override { return driver_; }
  int32_t runtime_version() const override { return runtime_; }

  // The runtime picks device addresses itself; no window is mapped here and
  // the client reserves each allocation's range instead.
  Status AttachWindow(const msg::AddressWindow&, msg::AddressWindow* used) override {
    *used = msg::AddressWindow{};
    return Status::Ok();
  }

  Status Malloc(int device, uint64_t size, uint32_t flags, uint64_t* address) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_RETURN_IF_ERROR(Charge(size));
    void* p = nullptr;
    hipError_t e = (flags & msg::kMallocManaged) != 0 ? hipMallocManaged(&p, size, hipMemAttachGlobal)
                                                      : hipMalloc(&p, size);
    if (e != hipSuccess) {
      Refund(size);
      return FromHip(e, (flags & msg::kMallocManaged) != 0 ? "hipMallocManaged" : "hipMalloc");
    }
    *address = reinterpret_cast<uint64_t>(p);
    Allocation a{size, device};
    a.charged = true;
    allocations_[*address] = a;
    return Status::Ok();
  }
  Status Free(uint64_t address) override {
    auto it = allocations_.find(address);
    if (it == allocations_.end()) return Status(StatusCode::kInvalidDevicePointer, "not an allocation of this session");
    if (it->second.ipc_opened != nullptr)
      return Status(StatusCode::kInvalidDevicePointer, "memory opened from an IPC handle is closed, not freed");
    if (it->second.vmm)
      return Status(StatusCode::kInvalidDevicePointer, "mapped virtual memory is unmapped (hipMemUnmap), not freed");
    if (it->second.module != 0)
      return Status(StatusCode::kInvalidDevicePointer, "a module's global variable is not freed (hipModuleUnload)");
    const int device = it->second.device;
    const uint64_t size = it->second.size;
    if (it->second.charged) Refund(size);
    allocations_.erase(it);
    return ReleaseAfterWork(device, size, "hipFree", [address] { return hipFree(reinterpret_cast<void*>(address)); });
  }
  // Releases memory as hipFree does, and hipIpcCloseMemHandle, which
  // finishes the null stream first: once the work queued before has run.
  // That wait is this thread's, as natively, when no stream is held or only
  // by holds that end without this thread: a copy at its stream point
  // (AtStreamPoint), a host callback the client has run. The explicit
  // synchronize first is for a held copy, which reaches its memory from
  // another stream after this call: a runtime that orders the release behind
  // the work queued before it (hipr's own stub, in the chain) would release
  // the memory under the copy. `counted`: bytes MemInfo counts free while
  // the release waits.
  Status ReleaseAfterWork(int device, uint64_t counted, const char* what, std::function<hipError_t()> release) {
    if (!ClientCallbackPending()) {
      // On the memory's device (clr detaches an IPC mapping from the current
      // one), then back: a null stream named later is the current device's.
      const int was = current_;
      HIPR_RETURN_IF_ERROR(Use(device));
      Status st = holds_.load() != 0 ? FromHip(hipDeviceSynchronize(), "hipDeviceSynchronize before a release")
                                     : Status::Ok();
      if (st.ok()) st = FromHip(release(), what);
      HIPR_RETURN_IF_ERROR(Use(was));
      return st;
    }
    // A host callback the client has yet to run holds a stream: its gate
    // opens on this thread when the client says it ran, so the wait is taken
    // off the replay thread, as the sim's. The memory goes once the work
    // before the release has run; later calls already refuse the address,
    // and MemInfo counts it free meanwhile, as hipMemGetInfo shows it right
    // after a native hipFree.
    {
      MutexLock lock(frees_mu_);
      frees_pending_[device] += counted;
    }
    waiters_->Run([this, device, counted, what, release = std::move(release)] {
      hipError_t e = hipSetDevice(device);
      if (e == hipSuccess) e = hipDeviceSynchronize();
      {
        MutexLock lock(frees_mu_);
        ++frees_in_call_;
      }
      if (e == hipSuccess) e = release();
      {
        MutexLock lock(frees_mu_);
        --frees_in_call_;
        frees_pending_[device] -= counted;
      }
      frees_cv_.notify_all();
      if (e != hipSuccess) NoteLateError(FromHip(e, what));
    });
    return Status::Ok();
  }
  Status MemInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    size_t f = 0;
    size_t t = 0;
    // Free's frees left to a waiter count as free. The runtime's answer and
    // theirs are read so that none counts twice (freed by the runtime, not
    // yet by this count) or not at all: a free in its call is waited for
    // (the device was idle when it began, so briefly), and a free that ends
    // between the two reads makes them read again.
    uint64_t pending = 0;
    for (int attempt = 0;; ++attempt) {
      {
        MutexLock lock(frees_mu_);
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
        while (frees_in_call_ != 0 && frees_cv_.wait_until(lock.native(), until) == std::cv_status::no_timeout) {
        }
        pending = frees_pending_[device];
      }
      HIPR_HIP(hipMemGetInfo(&f, &t));
      MutexLock lock(frees_mu_);
      if ((frees_in_call_ == 0 && frees_pending_[device] == pending) || attempt == 3) break;
    }
    *free_bytes = std::min<uint64_t>(t, f + pending);
    *total_bytes = t;
    return Status::Ok();
  }
  Status CheckRegion(const msg::Region& r) const override {
    if (r.width == 0 || r.height == 0) return Status::Ok();
    uint64_t extent = (r.height - 1) * r.pitch + r.width;
    auto it = allocations_.upper_bound(r.address);
    if (it == allocations_.begin()) return Status(StatusCode::kInvalidDevicePointer, "not device memory of this session");
    --it;
    uint64_t end = it->first + it->second.size;
    // Virtual memory: on into the adjacent mappings.
    while (it->second.vmm && r.address + extent > end) {
      auto next = std::next(it);
      if (next == allocations_.end() || next->first != end || !next->second.vmm) break;
      it = next;
      end += it->second.size;
    }
    if (r.address + extent > end || r.address + extent < r.address)
      return Status(StatusCode::kInvalidDevicePointer, "region outside its allocation");
    return Status::Ok();
  }

  // Virtual memory: the runtime's own, with the session's records of what
  // it reserved, created and mapped (freed with the session).
  Status VmmReserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* address) override {
    void* p = nullptr;
    HIPR_HIP(hipMemAddressReserve(&p, size, alignment, reinterpret_cast<void*>(hint), 0));
    *address = reinterpret_cast<uint64_t>(p);
    reservations_[*address] = size;
    return Status::Ok();
  }
  Status VmmFree(uint64_t address, uint64_t size) override {
    auto it = reservations_.find(address);
    if (it == reservations_.end() || it->second != size)
      return InvalidArgument("not exactly an address reservation of this session");
    auto mapped = allocations_.lower_bound(address);
    if (mapped != allocations_.end() && mapped->first < address + size)
      return InvalidArgument("memory is still mapped in the reservation (hipMemUnmap first)");
    reservations_.erase(it);
    HIPR_HIP(hipMemAddressFree(reinterpret_cast<void*>(address), size));
    return Status::Ok();
  }
  Status VmmCreate(int device, uint64_t handle, uint64_t size) override {
    if (device < 0 || device >= static_cast<int>(infos_.size())) return Status(StatusCode::kInvalidDevice, "no such device");
    if (physical_.count(handle) != 0) return InvalidArgument("physical memory handle already in use");
    hipMemAllocationProp prop{};
    prop.type = hipMemAllocationTypePinned;
    prop.location.type = hipMemLocationTypeDevice;
    prop.location.id = device;
    hipMemGenericAllocationHandle_t h = nullptr;
    HIPR_RETURN_IF_ERROR(Charge(size));
    if (hipError_t e = hipMemCreate(&h, size, &prop, 0); e != hipSuccess) {
      Refund(size);
      return FromHip(e, "hipMemCreate");
    }
    physical_[handle] = Physical{h, device, size};
    return Status::Ok();
  }
  Status VmmRelease(uint64_t handle) override {
    auto it = physical_.find(handle);
    if (it == physical_.end()) return InvalidArgument("not physical memory of this session (or released already)");
    hipMemGenericAllocationHandle_t h = it->second.handle;
    Refund(it->second.size);
    physical_.erase(it);
    HIPR_HIP(hipMemRelease(h));  // The runtime keeps mapped memory until its unmap.
    return Status::Ok();
  }
  Status VmmMap(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle) override {
    auto it = physical_.find(handle);
    if (it == physical_.end()) return InvalidArgument("not physical memory of this session (or released already)");
    HIPR_HIP(hipMemMap(reinterpret_cast<void*>(address), size, offset, it->second.handle, 0));
    Allocation a{size, it->second.device};
    a.vmm = true;
    allocations_[address] = a;
    return Status::Ok();
  }
  // hipMemUnmap waits for the device; with a stream held (Free) that wait
  // is a waiter's, which synchronizes the mappings' devices first: a held
  // copy writes its memory from the side stream after this call, and a
  // runtime that orders the unmap behind work queued before it (hipr's stub,
  // in the chain) would unmap it under the copy. The mappings refuse copies
  // from now on.
  void VmmUnmapAsync(uint64_t address, uint64_t size, Completion done) override {
    std::vector<uint64_t> bases;
    if (Status st = WholeMappings(address, size, &bases); !st.ok()) return done(st);
    std::vector<std::pair<uint64_t, uint64_t>> mappings;
    std::vector<int> devices;
    for (uint64_t base : bases) {
      const Allocation& a = allocations_.at(base);
      mappings.emplace_back(base, a.size);
      if (std::find(devices.begin(), devices.end(), a.device) == devices.end()) devices.push_back(a.device);
      allocations_.erase(base);
    }
    auto unmap = [mappings] {
      for (const auto& [base, bytes] : mappings)
        HIPR_HIP(hipMemUnmap(reinterpret_cast<void*>(base), bytes));
      return Status::Ok();
    };
    if (holds_.load() == 0) return done(unmap());
    waiters_->Run([this, unmap, devices, done = std::move(done)] {
      for (int device : devices) {
        hipError_t e = hipSetDevice(device);
        if (e == hipSuccess) e = hipDeviceSynchronize();
        if (e != hipSuccess) NoteLateError(FromHip(e, "hipDeviceSynchronize before hipMemUnmap"));
      }
      done(unmap());
    });
  }
  Status VmmSetAccess(uint64_t address, uint64_t size, std::span<const msg::VmmAccess> access) override {
    std::vector<uint64_t> bases;
    HIPR_RETURN_IF_ERROR(WholeMappings(address, size, &bases));
    std::vector<hipMemAccessDesc> descs;
    for (const msg::VmmAccess& a : access) {
      hipMemAccessDesc d{};
      d.location.type = hipMemLocationTypeDevice;
      d.location.id = a.device;
      d.flags = static_cast<hipMemAccessFlags>(a.flags);
      descs.push_back(d);
    }
    HIPR_HIP(hipMemSetAccess(reinterpret_cast<void*>(address), size, descs.data(), descs.size()));
    return Status::Ok();
  }


  Status Memset(int device, uint64_t stream, const msg::Region& dst, uint32_t value, uint8_t element_size) override {
    HIPR_RETURN_IF_ERROR(CheckMemset(dst, element_size));
    HIPR_RETURN_IF_ERROR(CheckRegion(dst));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    for (uint64_t row = 0; row < dst.height; ++row) {
      void* p = reinterpret_cast<void*>(dst.address + row * dst.pitch);
      if (element_size == 1)
        HIPR_HIP(hipMemsetD8Async(reinterpret_cast<hipDeviceptr_t>(p), static_cast<unsigned char>(value), dst.width, s));
      else if (element_size == 2)
        HIPR_HIP(hipMemsetD16Async(reinterpret_cast<hipDeviceptr_t>(p), static_cast<unsigned short>(value), dst.width / 2, s));
      else
        HIPR_HIP(hipMemsetD32Async(reinterpret_cast<hipDeviceptr_t>(p), static_cast<int>(value), dst.width / 4, s));
    }
    return Status::Ok();
  }

  // Copies from the network: through the staging pipeline. When the stream
  // is busy (maybe held at a host callback the client has yet to run), the
  // bytes are taken now and copied when the stream gets here, holding it
  // meanwhile (AtStreamPoint), so the replay does not wait for the device.
  // Bounded (kMaxHeldBytes in flight); past the bound the replay waits.
  Status CopyToDevice(int device, uint64_t stream, const msg::Region& dst, const BulkIo& fill) override {
    HIPR_RETURN_IF_ERROR(CheckRegion(dst));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    const uint64_t bytes = dst.bytes();
    if (bytes != 0 && Busy(device, stream, s) && TakeHeldBytes(bytes)) {
      auto held = std::make_shared<std::vector<uint8_t>>(bytes);
      iovec all{held->data(), held->size()};
      Status st = fill(&all, 1);
      if (st.ok()) {
        st = AtStreamPoint(device, s, [this, device, dst, held](Status at, hipStream_t side) {
          if (at.ok()) {
            size_t from = 0;
            Status copied = StagedIn(device, side, dst, [&](const iovec* iov, int count) {
              for (int i = 0; i < count; ++i) {
                std::memcpy(iov[i].iov_base, held->data() + from, iov[i].iov_len);
                from += iov[i].iov_len;
              }
              return Status::Ok();
            });
            if (!copied.ok()) NoteLateError(copied);
          }
          held_bytes_.fetch_sub(held->size());
        });
      }
      if (!st.ok()) held_bytes_.fetch_sub(bytes);
      return st;
    }
    return StagedIn(device, s, dst, fill);
  }
  Status CopyFromDevice(int device, uint64_t stream, const msg::Region& src, const BulkIo& drain) override {
    HIPR_RETURN_IF_ERROR(CheckRegion(src));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    return StagedOut(device, s, src, drain);
  }
  // The replay goes on: the bytes are read, through the pipeline on the
  // device's side stream, while `stream` is held where the copy stands.
  void CopyFromDeviceAsync(int device, uint64_t stream, const msg::Region& src, CopyOutDone done) override {
    hipStream_t s = nullptr;
    Status st = CheckRegion(src);
    if (st.ok()) st = StreamOf(device, stream, &s);
    if (st.ok() && !Busy(device, stream, s)) {
      // Nothing before it: no hold.
      output_.Drain();
      return done(TakeLateError(), [&](const BulkIo& drain) { return StagedOut(device, s, src, drain); });
    }
    auto shared_done = std::make_shared<CopyOutDone>(std::move(done));
    if (st.ok())
      st = AtStreamPoint(device, s, [this, device, src, shared_done](Status at, hipStream_t side) {
        output_.Drain();
        if (at.ok()) at = TakeLateError();
        (*shared_done)(at, [&](const BulkIo& drain) { return StagedOut(device, side, src, drain); });
      });
    if (!st.ok()) (*shared_done)(st, nullptr);
  }
  Status StreamWaitValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint64_t mask,
                         uint32_t flags, uint8_t bytes) override {
    HIPR_RETURN_IF_ERROR(CheckStreamValue(address, bytes));
    HIPR_RETURN_IF_ERROR(CheckWaitCondition(flags));
    HIPR_RETURN_IF_ERROR(CheckRegion(msg::Region{address, bytes, bytes, 1}));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    void* p = reinterpret_cast<void*>(address);
    if (bytes == 4)
      HIPR_HIP(hipStreamWaitValue32(s, p, static_cast<uint32_t>(value), flags, static_cast<uint32_t>(mask)));
    else
      HIPR_HIP(hipStreamWaitValue64(s, p, value, flags, mask));
    return Status::Ok();
  }
  Status StreamWriteValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint8_t bytes) override {
    HIPR_RETURN_IF_ERROR(CheckStreamValue(address, bytes));
    HIPR_RETURN_IF_ERROR(CheckRegion(msg::Region{address, bytes, bytes, 1}));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    void* p = reinterpret_cast<void*>(address);
    if (bytes == 4)
      HIPR_HIP(hipStreamWriteValue32(s, p, static_cast<uint32_t>(value), 0));
    else
      HIPR_HIP(hipStreamWriteValue64(s, p, value, 0));
    return Status::Ok();
  }

  // IPC handles are the runtime's own; the opened mapping is recorded as an
  // allocation (base and size from hipMemGetAddressRange) so copies and
  // launches may use it.
  Status IpcGetMemHandle(uint64_t address, IpcHandle* handle) override {
    HIPR_RETURN_IF_ERROR(CheckRegion(msg::Region{address, 1, 1, 1}));
    hipIpcMemHandle_t h;
    static_assert(sizeof h == std::tuple_size_v<IpcHandle>);
    HIPR_HIP(hipIpcGetMemHandle(&h, reinterpret_cast<void*>(address)));
    std::memcpy(handle->data(), &h, sizeof h);
    return Status::Ok();
  }
  Status IpcOpenMemHandle(int device, const IpcHandle& handle, uint32_t flags, uint64_t* address, uint64_t* base,
                          uint64_t* size) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    hipIpcMemHandle_t h;
    std::memcpy(&h, handle.data(), sizeof h);
    void* p = nullptr;
    // The client's flag is 0 or 1, the lazy peer-access flag in 5.x's or in
    // 6.x's numbering; the runtime here gets its own (6.x refuses anything else).
    (void)flags;
    HIPR_HIP(hipIpcOpenMemHandle(&p, h, hipIpcMemLazyEnablePeerAccess));
    hipDeviceptr_t b = nullptr;
    size_t n = 0;
    if (hipError_t e = hipMemGetAddressRange(&b, &n, reinterpret_cast<hipDeviceptr_t>(p)); e != hipSuccess) {
      (void)hipIpcCloseMemHandle(p);
      return FromHip(e, "hipMemGetAddressRange");
    }
    // Counted against this session (its tenant, the worker's budget) while
    // mapped: the runtime keeps the exporter's memory alive for it.
    if (Status st = Charge(n); !st.ok()) {
      (void)hipIpcCloseMemHandle(p);
      return st;
    }
    *address = reinterpret_cast<uint64_t>(p);
    *base = reinterpret_cast<uint64_t>(b);
    *size = n;
    Allocation a{n, device, p};
    a.charged = true;
    allocations_[*base] = a;
    return Status::Ok();
  }
  Status IpcCloseMemHandle(uint64_t base) override {
    auto it = allocations_.find(base);
    if (it == allocations_.end() || it->second.ipc_opened == nullptr)
      return InvalidArgument("not memory opened from an IPC handle in this session");
    void* p = it->second.ipc_opened;
    const int device = it->second.device;
    if (it->second.charged) Refund(it->second.size);
    allocations_.erase(it);
    // The mapping uses none of this device's memory: MemInfo counts nothing.
    return ReleaseAfterWork(device, 0, "hipIpcCloseMemHandle", [p] { return hipIpcCloseMemHandle(p); });
  }

  // Texture objects: the runtime's own, over this session's memory, from
  // the descriptions the sim checks and samples the same way.
  Status CreateTexture(const msg::TextureCreateRequest& request, uint64_t* handle) override {
    TextureLayout layout;
    HIPR_RETURN_IF_ERROR(CheckTexture(request, &layout));
    const msg::Region& m = request.memory;
    HIPR_RETURN_IF_ERROR(CheckRegion(msg::Region{m.address, m.height > 1 ? m.pitch : m.width, m.width, m.height}));
    HIPR_RETURN_IF_ERROR(Use(request.device));
    hipResourceDesc res;
    hipTextureDesc tex;
    HipTextureDescs(request, layout, &res, &tex);
    hipTextureObject_t object = nullptr;
    HIPR_HIP(hipCreateTextureObject(&object, &res, &tex, nullptr));
    *handle = reinterpret_cast<uint64_t>(object);
    textures_[*handle] = object;
    return Status::Ok();
  }
  Status DestroyTexture(uint64_t handle) override {
    auto it = textures_.find(handle);
    if (it == textures_.end()) return UnknownTexture();
    hipTextureObject_t object = it->second;
    textures_.erase(it);
    HIPR_HIP(hipDestroyTextureObject(object));
    return Status::Ok();
  }

  // The client's pinned memory in the shm host segment: pinned here too,
  // for every device (portable), so copies to and from it are DMA.
  Status RegisterHost(uint8_t* base, uint64_t bytes) override {
    HIPR_HIP(hipHostRegister(base, bytes, hipHostRegisterPortable));
    host_ranges_[base] = bytes;
    return Status::Ok();
  }
  Status UnregisterHost(uint8_t* base, uint64_t) override {
    if (host_ranges_.erase(base) == 0) return InvalidArgument("host range not registered with this device");
    HIPR_HIP(hipHostUnregister(base));
    return Status::Ok();
  }
  Status CopyHostToDevice(int device, uint64_t stream, const msg::Region& dst, const uint8_t* src,
                          uint64_t src_pitch) override {
    HIPR_RETURN_IF_ERROR(CheckRegion(dst));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    if (dst.width == 0 || dst.height == 0) return Status::Ok();
    HIPR_HIP(hipMemcpy2DAsync(reinterpret_cast<void*>(dst.address), dst.pitch, src, src_pitch, dst.width, dst.height,
                              hipMemcpyHostToDevice, s));
    return Status::Ok();
  }
  Status CopyDeviceToHost(int device, uint64_t stream, uint8_t* dst, uint64_t dst_pitch,
                          const msg::Region& src) override {
    HIPR_RETURN_IF_ERROR(CheckRegion(src));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    if (src.width == 0 || src.height == 0) return Status::Ok();
    HIPR_HIP(hipMemcpy2DAsync(dst, dst_pitch, reinterpret_cast<const void*>(src.address), src.pitch, src.width,
                              src.height, hipMemcpyDeviceToHost, s));
    return Status::Ok();
  }

  Status CopyOnDevice(int device, uint64_t stream, const msg::Region& dst, const msg::Region& src) override {
    HIPR_RETURN_IF_ERROR(CheckCopyShapes(dst, src));  // Else the copy would read past the src checked.
    HIPR_RETURN_IF_ERROR(CheckRegion(dst));
    HIPR_RETURN_IF_ERROR(CheckRegion(src));
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    HIPR_HIP(hipMemcpy2DAsync(reinterpret_cast<void*>(dst.address), dst.pitch, reinterpret_cast<void*>(src.address),
                              src.pitch, dst.width, dst.height, hipMemcpyDeviceToDevice, s));
    return Status::Ok();
  }

  Status StreamCreate(int device, uint64_t stream, uint32_t flags, int32_t priority,
                      std::span<const uint32_t> cu_mask) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_RETURN_IF_ERROR(CheckNewId("stream", stream, streams_.count(stream) != 0));
    HIPR_RETURN_IF_ERROR(CheckStreamFlags(flags));
    hipStream_t s = nullptr;
    if (cu_mask.empty()) {
      HIPR_HIP(hipStreamCreateWithPriority(&s, flags, priority));
    } else {
      HIPR_HIP(hipExtStreamCreateWithCUMask(&s, static_cast<uint32_t>(cu_mask.size()), cu_mask.data()));
    }
    streams_[stream] = s;
    if ((flags & hipStreamNonBlocking) == 0) blocking_streams_[stream] = device;
    return Status::Ok();
  }
  Status StreamDestroy(uint64_t stream) override {
    auto it = streams_.find(stream);
    if (it == streams_.end()) return NoHandle("stream", stream);
    hipStream_t s = it->second;
    streams_.erase(it);
    blocking_streams_.erase(stream);
    HIPR_HIP(hipStreamDestroy(s));
    return Status::Ok();
  }
  Status StreamSynchronize(int device, uint64_t stream) override {
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device < 0 ? current_ : device, stream, &s));
    HIPR_HIP(hipStreamSynchronize(s));
    return Status::Ok();
  }
  // The waits on a thread of their own (waiters.h): the handle is looked up
  // here, on the replay thread; the runtime's device is per thread, so the
  // waiter selects it first. The null stream is `device`'s (the client's
  // current device), else the last one used here (an older client).
  void StreamSynchronizeAsync(int device, uint64_t stream, Completion done) override {
    hipStream_t s = nullptr;
    if (device < 0) device = current_;
    if (Status st = StreamOf(device, stream, &s); !st.ok()) return done(st);
    waiters_->Run([this, s, device, done = std::move(done)] {
      hipError_t e = hipSetDevice(device);
      if (e == hipSuccess) e = hipStreamSynchronize(s);
      Complete(done, FromHip(e, "hipStreamSynchronize"));
    });
  }
  void EventSynchronizeAsync(uint64_t event, Completion done) override {
    auto it = events_.find(event);
    if (it == events_.end()) return done(NoHandle("event", event));
    waiters_->Run([this, e = it->second.event, done = std::move(done)] {
      Complete(done, FromHip(hipEventSynchronize(e), "hipEventSynchronize"));
    });
  }
  void DeviceSynchronizeAsync(int device, Completion done) override {
    if (device < 0 || device >= static_cast<int>(infos_.size()))
      return done(Status(StatusCode::kInvalidDevice, "no such device"));
    waiters_->Run([this, device, done = std::move(done)] {
      hipError_t e = hipSetDevice(device);
      if (e == hipSuccess) e = hipDeviceSynchronize();
      Complete(done, FromHip(e, "hipDeviceSynchronize"));
    });
  }

  Status StreamQuery(int device, uint64_t stream) override {
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device < 0 ? current_ : device, stream, &s));
    hipError_t e = hipStreamQuery(s);
    if (e == hipErrorNotReady) return Status(StatusCode::kNotReady, "stream busy");
    return FromHip(e, "hipStreamQuery");
  }
  Status StreamWaitEvent(int device, uint64_t stream, uint64_t event, uint32_t flags) override {
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device < 0 ? current_ : device, stream, &s));
    auto it = events_.find(event);
    if (it == events_.end()) return NoHandle("event", event);
    HIPR_HIP(hipStreamWaitEvent(s, it->second.event, flags));
    return Status::Ok();
  }

  // The runtime runs stream callbacks on its own thread and holds the
  // stream until they return: the callback reports and then waits for the
  // gate there.
  Status StreamHostCallback(int device, uint64_t stream, std::function<void(Status)> reached,
                            std::shared_ptr<HostGate> gate) override {
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(device, stream, &s));
    struct Pending {
      std::function<void(Status)> reached;
      std::shared_ptr<HostGate> gate;
      std::atomic<int>* holds;
    };
    auto* p = new Pending{std::move(reached), gate, &holds_};
    holds_.fetch_add(1);
    hipError_t e = hipStreamAddCallback(
        s,
        [](hipStream_t, hipError_t status, void* arg) {
          std::unique_ptr<Pending> pending(static_cast<Pending*>(arg));
          pending->reached(FromHip(status, "stream work before a host callback"));
          pending->gate->Wait();
          pending->holds->fetch_sub(1);
        },
        p, 0);
    if (e != hipSuccess) {
      delete p;
      holds_.fetch_sub(1);
    }
    HIPR_HIP(e);
    client_gates_.push_back(std::move(gate));
    return Status::Ok();
  }

  Status EventCreate(int device, uint64_t event, uint32_t flags) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_RETURN_IF_ERROR(CheckNewId("event", event, events_.count(event) != 0));
    hipEvent_t e;
    HIPR_HIP(hipEventCreateWithFlags(&e, flags));
    events_[event] = EventEntry{e, device};
    return Status::Ok();
  }
  // IPC event handles are the runtime's own.
  Status IpcGetEventHandle(uint64_t event, IpcEventHandle* handle) override {
    auto it = events_.find(event);
    if (it == events_.end()) return NoHandle("event", event);
    hipIpcEventHandle_t h;
    static_assert(sizeof h == std::tuple_size_v<IpcEventHandle>);
    HIPR_HIP(hipIpcGetEventHandle(&h, it->second.event));
    std::memcpy(handle->data(), &h, sizeof h);
    return Status::Ok();
  }
  Status IpcOpenEventHandle(int device, uint64_t event, const IpcEventHandle& handle) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_RETURN_IF_ERROR(CheckNewId("event", event, events_.count(event) != 0));
    hipIpcEventHandle_t h;
    std::memcpy(&h, handle.data(), sizeof h);
    hipEvent_t e;
    HIPR_HIP(hipIpcOpenEventHandle(&e, h));
    events_[event] = EventEntry{e, device};
    return Status::Ok();
  }
  Status EventDestroy(uint64_t event) override {
    auto it = events_.find(event);
    if (it == events_.end()) return NoHandle("event", event);
    hipEvent_t e = it->second.event;
    events_.erase(it);
    HIPR_HIP(hipEventDestroy(e));
    return Status::Ok();
  }
  Status EventRecord(uint64_t event, uint64_t stream) override {
    auto it = events_.find(event);
    if (it == events_.end()) return NoHandle("event", event);
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(it->second.device, stream, &s));
    HIPR_HIP(hipEventRecord(it->second.event, s));
    return Status::Ok();
  }
  Status EventSynchronize(uint64_t event) override {
    auto it = events_.find(event);
    if (it == events_.end()) return NoHandle("event", event);
    HIPR_HIP(hipEventSynchronize(it->second.event));
    return Status::Ok();
  }
  Status EventQuery(uint64_t event) override {
    auto it = events_.find(event);
    if (it == events_.end()) return NoHandle("event", event);
    hipError_t e = hipEventQuery(it->second.event);
    if (e == hipErrorNotReady) return Status(StatusCode::kNotReady, "event not reached");
    return FromHip(e, "hipEventQuery");
  }
  Status EventElapsedTime(uint64_t start, uint64_t stop, float* ms) override {
    auto a = events_.find(start);
    auto b = events_.find(stop);
    if (a == events_.end() || b == events_.end()) return NoHandle("event", a == events_.end() ? start : stop);
    HIPR_HIP(hipEventElapsedTime(ms, a->second.event, b->second.event));
    return Status::Ok();
  }

  // The runtime loads the code object and resolves its globals; launches go
  // through hipExtModuleLaunchKernel with the packed buffer (`extra`), so the
  // runtime appends the hidden arguments itself.
  Status LoadModule(int device, uint64_t module, std::shared_ptr<const ModuleImage> image,
                    ModuleLoadResult* out) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    if (modules_.count(module) != 0) return InvalidArgument("module id in use");
    hipModule_t m = nullptr;
    if (hipError_t e = hipModuleLoadData(&m, image->code.data()); e != hipSuccess) {
      // Say what the runtime refused: which code object, for which target, on which GPU and runtime.
      // amdhsa.target is "amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-"; the target id follows "--".
      const std::string& triple = image->info.target;
      const size_t dashes = triple.find("--");
      const std::string target = dashes == std::string::npos ? triple : triple.substr(dashes + 2);
      return Status(StatusCode::kInternal,
                    "the worker's HIP " + std::to_string(runtime_ / 10000000) + "." +
                        std::to_string(runtime_ / 100000 % 100) + " runtime cannot load module '" + image->name +
                        "': code object " + image->info.version_name() + " for " + target + " on " +
                        infos_[static_cast<size_t>(device)].gcn_arch_name +
                        " (hipModuleLoadData: " + hipGetErrorName(e) + ")",
                    static_cast<int>(e));
    }
    for (const co::GlobalVariable& v : image->info.variables) {
      hipDeviceptr_t ptr = nullptr;
      size_t size = 0;
      if (hipModuleGetGlobal(&ptr, &size, m, v.name.c_str()) != hipSuccess) continue;
      out->globals.push_back(msg::ModuleGlobal{v.name, reinterpret_cast<uint64_t>(ptr), size});
      // Copies to and from it (hipMemcpyToSymbol) name its address.
      if (size != 0) {
        Allocation a{size, device};
        a.module = module;
        allocations_.emplace(reinterpret_cast<uint64_t>(ptr), a);
      }
    }
    modules_[module] = ModuleEntry{m, device, std::move(image), {}};
    return Status::Ok();
  }
  Status UnloadModule(uint64_t module) override {
    auto it = modules_.find(module);
    if (it == modules_.end()) return NoHandle("module", module);
    hipModule_t m = it->second.module;
    modules_.erase(it);
    std::erase_if(allocations_, [&](const auto& entry) { return entry.second.module == module; });
    HIPR_HIP(hipModuleUnload(m));
    return Status::Ok();
  }
  Status LaunchKernel(KernelLaunch l) override {
    auto it = modules_.find(l.module);
    if (it == modules_.end()) return NoHandle("module", l.module);
    ModuleEntry& mod = it->second;
    const bool cooperative = (l.flags & msg::kLaunchCooperative) != 0;
    if (cooperative && CooperativeLaunch() == nullptr)
      return Status(StatusCode::kNotSupported,
                    "cooperative launches of module kernels need a runtime with hipModuleLaunchCooperativeKernel "
                    "(ROCm 6 or later)",
                    hipErrorNotSupported);
    HIPR_RETURN_IF_ERROR(Use(mod.device));
    HIPR_RETURN_IF_ERROR(CheckLaunchShape(l, infos_[mod.device]));
    auto fn = mod.functions.find(l.kernel);
    if (fn == mod.functions.end()) {
      hipFunction_t f = nullptr;
      HIPR_HIP(hipModuleGetFunction(&f, mod.module, l.kernel.c_str()));
      fn = mod.functions.emplace(l.kernel, f).first;
    }
    hipStream_t s = nullptr;
    HIPR_RETURN_IF_ERROR(StreamOf(mod.device, l.stream, &s));
    hipEvent_t events[2] = {nullptr, nullptr};
    const uint64_t ids[2] = {l.start_event, l.stop_event};
    for (int i = 0; i < 2; ++i) {
      if (ids[i] == 0) continue;
      auto e = events_.find(ids[i]);
      if (e == events_.end()) return NoHandle("event", ids[i]);
      events[i] = e->second.event;
    }
    if (cooperative) return LaunchCooperative(mod, fn->second, l, s, events);
    size_t size = l.kernarg.size();
    void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, l.kernarg.data(), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                     HIP_LAUNCH_PARAM_END};
    // hipExtModuleLaunchKernel takes global sizes in work-items (a partial
    // last block included). The runtime copies the argument buffer before
    // returning.
    const std::array<uint32_t, 3> global = GlobalSize(l);
    HIPR_HIP(hipExtModuleLaunchKernel(fn->second, global[0], global[1], global[2], l.block[0], l.block[1], l.block[2],
                                      l.shared_bytes, s, nullptr, size == 0 ? nullptr : extra, events[0],
                                      events[1], 0));
    return Status::Ok();
  }
  // Device printf: the runtime prints it on this process's stdout, which
  // goes to the client (StdoutCapture); drained before every completion.
  void SetOutputSink(OutputSink sink) override {
    Status st = output_.Start(std::move(sink));
    if (!st.ok()) std::fprintf(stderr, "hipr hip device: %s; device printf goes to the worker's log\n", st.message().c_str());
  }

  // The staging pipeline's pinned buffers stay for the device's life: the
  // connection may register them (rdma) and move bulk with no copy.
  // Device memory never reaches a BulkIo here (GPUDirect would change that).
  bool BulkMemoryStays(const iovec* iov, int count) const override {
    for (int i = 0; i < count; ++i)
      if (staging_ == nullptr || !staging_->Owns(iov[i].iov_base, iov[i].iov_len)) return false;
    return true;
  }
  void SetForgetMemoryHook(ForgetMemoryHook hook) override { forget_ = std::move(hook); }

  // Generated (shim_gen/gen_remoting.py -> hip_api.cc).
  ApiDevice& api() override { return *api_; }

  Status DeviceSynchronize(int device) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_HIP(hipDeviceSynchronize());
    return Status::Ok();
  }
  Status DeviceReset(int device) override {
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_HIP(hipDeviceSynchronize());
    for (auto it = allocations_.begin(); it != allocations_.end();) {
      // Virtual memory outlives a reset; module globals go with their module.
      if (it->second.device == device && !it->second.vmm && it->second.module == 0) {
        if (it->second.ipc_opened != nullptr)
          (void)hipIpcCloseMemHandle(it->second.ipc_opened);
        else
          (void)hipFree(reinterpret_cast<void*>(it->first));
        if (it->second.charged) Refund(it->second.size);
        it = allocations_.erase(it);
      } else {
        ++it;
      }
    }
#if HIP_VERSION_MAJOR >= 6
    // The session's process lives on, so the runtime keeps the limits it
    // set: put the device's back as a fresh process would find them.
    const DefaultLimits& defaults = default_limits_.at(static_cast<size_t>(device));
    for (size_t k = 0; k < kResetLimits.size(); ++k)
      if (defaults[k] != 0) (void)hipDeviceSetLimit(kResetLimits[k], defaults[k]);
#endif
    return Status::Ok();
  }

 private:
#if HIP_VERSION_MAJOR >= 6
  static constexpr std::array<hipLimit_t, 3> kResetLimits = {hipLimitStackSize, hipLimitPrintfFifoSize,
                                                             hipLimitMallocHeapSize};
  using DefaultLimits = std::array<size_t, kResetLimits.size()>;
  std::vector<DefaultLimits> default_limits_;
#endif
  struct Allocation {
    uint64_t size;
    int device;
    void* ipc_opened = nullptr;  // hipIpcOpenMemHandle's pointer: closed, not freed.
    bool vmm = false;            // A hipMemMap mapping: unmapped, not freed.
    uint64_t module = 0;         // A global of this module: goes with its unload.
    bool charged = false;        // Charged to the memory account (hipMalloc's).
  };
  struct Physical {
    hipMemGenericAllocationHandle_t handle;
    int device;
    uint64_t size = 0;  // Charged to the memory account.
  };
  struct EventEntry {
    hipEvent_t event;
    int device;
  };
  struct ModuleEntry {
    hipModule_t module;
    int device;
    std::shared_ptr<const ModuleImage> image;  // The runtime may keep pointers into it.
    std::unordered_map<std::string, hipFunction_t> functions;
  };

  // Bytes of copies to the device taken from the network and not yet
  // copied (CopyToDevice on a busy stream).
  static constexpr uint64_t kMaxHeldBytes = 256ull << 20;

  // Whether work queued on stream `id` now would wait: for work already on
  // it, or, through the null stream's implicit synchronization, on the
  // device's blocking streams (for the null stream) or on the null stream
  // (for a blocking stream).
  bool Busy(int device, uint64_t id, hipStream_t s) {
    auto pending = [](hipStream_t x) { return hipStreamQuery(x) == hipErrorNotReady; };
    if (pending(s)) return true;
    if (id != 0) return blocking_streams_.count(id) != 0 && Use(device).ok() && pending(nullptr);
    for (const auto& [other, on] : blocking_streams_)
      if (on == device && pending(streams_.at(other))) return true;
    return false;
  }
  bool TakeHeldBytes(uint64_t bytes) {
    if (bytes > kMaxHeldBytes) return false;
    if (held_bytes_.fetch_add(bytes) + bytes <= kMaxHeldBytes) return true;
    held_bytes_.fetch_sub(bytes);
    return false;
  }
  // Pipelined (staging_pipeline.h): the network fills one pinned buffer
  // while the previous one is copied to the device on the pipeline's
  // thread (whose current device is its own to set), on stream `s`.
  Status StagedIn(int device, hipStream_t s, const msg::Region& dst, const BulkIo& fill) {
    return staging_->In(dst.bytes(), fill, [&](uint8_t* buffer, uint64_t offset, size_t len) -> Status {
      HIPR_HIP(hipSetDevice(device));
      HIPR_RETURN_IF_ERROR(ForPackedRange(dst, offset, len, [&](uint64_t address, uint64_t packed, uint64_t n) {
        return FromHip(hipMemcpyAsync(reinterpret_cast<void*>(address), buffer + (packed - offset), n,
                                      hipMemcpyHostToDevice, s),
                       "hipMemcpyAsync");
      }));
      HIPR_HIP(hipStreamSynchronize(s));
      return Status::Ok();
    });
  }
  Status StagedOut(int device, hipStream_t s, const msg::Region& src, const BulkIo& drain) {
    return staging_->Out(src.bytes(), [&](uint8_t* buffer, uint64_t offset, size_t len) -> Status {
      HIPR_HIP(hipSetDevice(device));
      HIPR_RETURN_IF_ERROR(ForPackedRange(src, offset, len, [&](uint64_t address, uint64_t packed, uint64_t n) {
        return FromHip(hipMemcpyAsync(buffer + (packed - offset), reinterpret_cast<const void*>(address), n,
                                      hipMemcpyDeviceToHost, s),
                       "hipMemcpyAsync");
      }));
      HIPR_HIP(hipStreamSynchronize(s));
      return Status::Ok();
    }, drain);
  }

  // Runs `fn` on a waiter thread once stream `s` gets here, and holds the
  // stream until `fn` returns: a runtime host callback that reports and
  // waits, as StreamHostCallback's. `fn` gets the status of the work before
  // and the device's side stream, which it may use meanwhile. Unverified on
  // an MI GPU: clr runs callbacks on one thread, which the hold occupies.
  Status AtStreamPoint(int device, hipStream_t s, std::function<void(Status, hipStream_t)> fn) {
    hipStream_t side = nullptr;
    HIPR_RETURN_IF_ERROR(SideStream(device, &side));
    struct Hold {
      std::shared_ptr<Reached> reached = std::make_shared<Reached>();
      std::shared_ptr<HostGate> gate = std::make_shared<HostGate>();
      std::atomic<int>* holds = nullptr;
    };
    auto* hold = new Hold;
    auto reached = hold->reached;
    auto gate = hold->gate;
    hold->holds = &holds_;
    holds_.fetch_add(1);
    hipError_t e = hipStreamAddCallback(
        s,
        [](hipStream_t, hipError_t status, void* arg) {
          std::unique_ptr<Hold> h(static_cast<Hold*>(arg));
          h->reached->Set(FromHip(status, "stream work before a copy"));
          h->gate->Wait();
          h->holds->fetch_sub(1);
        },
        hold, 0);
    if (e != hipSuccess) {
      delete hold;
      holds_.fetch_sub(1);
      return FromHip(e, "hipStreamAddCallback");
    }
    waiters_->Run([reached, gate, side, fn = std::move(fn)] {
      fn(reached->Wait(), side);
      gate->Open();
    });
    return Status::Ok();
  }
  // A non-blocking stream per device for work done while another is held.
  Status SideStream(int device, hipStream_t* out) {
    if (auto it = side_streams_.find(device); it != side_streams_.end()) {
      *out = it->second;
      return Status::Ok();
    }
    HIPR_RETURN_IF_ERROR(Use(device));
    HIPR_HIP(hipStreamCreateWithFlags(out, hipStreamNonBlocking));
    side_streams_[device] = *out;
    return Status::Ok();
  }

  // A copy that failed after the replay had moved on (a held CopyToDevice):
  // reported by the next completion, as a kernel's fault is.
  void NoteLateError(const Status& st) {
    MutexLock lock(late_mu_);
    if (late_error_.ok()) late_error_ = st;
  }
  Status TakeLateError() {
    MutexLock lock(late_mu_);
    return std::exchange(late_error_, Status::Ok());
  }
  // A synchronizing call's completion: device output first, then the reply.
  void Complete(const Completion& done, Status st) {
    output_.Drain();
    if (st.ok()) st = TakeLateError();
    done(st);
  }

  // hipModuleLaunchCooperativeKernel, where the runtime this module is
  // bound to has it (ROCm 6+, hipr's stub); Debian's 5.2 headers lack it.
  using CooperativeLaunchFn = hipError_t (*)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned,
                                             unsigned, unsigned, hipStream_t, void**);
  static CooperativeLaunchFn CooperativeLaunch() {
    static const CooperativeLaunchFn fn = [] {
      Dl_info info{};
      if (dladdr(reinterpret_cast<void*>(static_cast<hipError_t (*)(void**, size_t)>(&hipMalloc)), &info) == 0 || info.dli_fname == nullptr) return CooperativeLaunchFn{};
      void* runtime = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
      if (runtime == nullptr) return CooperativeLaunchFn{};
      return reinterpret_cast<CooperativeLaunchFn>(dlsym(runtime, "hipModuleLaunchCooperativeKernel"));
    }();
    return fn;
  }
  // That call takes one pointer per argument, not the packed buffer: they
  // point into it, at each explicit argument's offset in the metadata.
  Status LaunchCooperative(const ModuleEntry& mod, hipFunction_t f, KernelLaunch& l, hipStream_t s,
                           const hipEvent_t events[2]) {
    const co::KernelInfo* k = mod.image->info.FindKernel(l.kernel);
    if (k == nullptr) return InvalidArgument("no metadata for kernel " + l.kernel);
    std::vector<void*> params;
    for (const co::KernelArg& a : k->args) {
      if (a.hidden()) continue;
      if (uint64_t{a.offset} + a.size > l.kernarg.size())
        return InvalidArgument("the arguments of " + l.kernel + " are shorter than its metadata says");
      params.push_back(l.kernarg.data() + a.offset);
    }
    if (events[0] != nullptr) HIPR_HIP(hipEventRecord(events[0], s));
    HIPR_HIP(CooperativeLaunch()(f, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2],
                                 l.shared_bytes, s, params.data()));
    if (events[1] != nullptr) HIPR_HIP(hipEventRecord(events[1], s));
    return Status::Ok();
  }

  static Status NoHandle(const char* what, uint64_t id) {
    return Status(StatusCode::kInvalidHandle, std::string(what) + " " + std::to_string(id) + " does not belong to this session");
  }
  Status Use(int device) {
    if (device < 0 || device >= static_cast<int>(infos_.size())) return Status(StatusCode::kInvalidDevice, "no such device");
    if (device != current_) {
      HIPR_HIP(hipSetDevice(device));
      current_ = device;
    }
    return Status::Ok();
  }
  // [address, address + size) as a run of whole adjacent mappings.
  Status WholeMappings(uint64_t address, uint64_t size, std::vector<uint64_t>* bases) const {
    uint64_t at = address;
    for (auto it = allocations_.find(address); at < address + size; ++it) {
      if (it == allocations_.end() || it->first != at || !it->second.vmm)
        return InvalidArgument("the range is not whole mappings");
      bases->push_back(at);
      at += it->second.size;
    }
    if (size == 0 || at != address + size) return InvalidArgument("the range is not whole mappings");
    return Status::Ok();
  }
  Status StreamOf(int device, uint64_t id, hipStream_t* out) {
    if (id == 0) {
      HIPR_RETURN_IF_ERROR(Use(device));
      *out = nullptr;
      return Status::Ok();
    }
    auto it = streams_.find(id);
    if (it == streams_.end()) return NoHandle("stream", id);
    *out = it->second;
    return Status::Ok();
  }
  std::vector<msg::DeviceInfo> infos_;
  std::unique_ptr<ApiDevice> api_ = NewHipApi();
  int32_t driver_ = 0;
  int32_t runtime_ = 0;
  int current_ = 0;
  std::vector<void*> staging_buffers_;  // Pinned; the pipeline's pool.
  std::unique_ptr<StagingPipeline> staging_;
  ForgetMemoryHook forget_;  // Set once, before any copy.
  std::map<uint8_t*, uint64_t> host_ranges_;  // Registered shm host segment ranges.
  std::map<uint64_t, Allocation> allocations_;
  std::map<uint64_t, hipStream_t> streams_;
  std::map<uint64_t, EventEntry> events_;
  std::map<uint64_t, ModuleEntry> modules_;
  std::map<uint64_t, hipTextureObject_t> textures_;
  std::map<uint64_t, uint64_t> reservations_;                        // hipMemAddressReserve: base -> size.
  std::map<uint64_t, Physical> physical_;                            // hipMemCreate, by client id.
  MemoryAccount* account_ = nullptr;  // The worker's and the tenant's limits (memory_account.h).
  Status Charge(uint64_t bytes) { return account_ == nullptr ? Status::Ok() : account_->Charge(bytes); }
  void Refund(uint64_t bytes) {
    if (account_ != nullptr) account_->Refund(bytes);
  }
  std::map<uint64_t, int> blocking_streams_;  // Streams the null stream waits for, and their device.
  std::map<int, hipStream_t> side_streams_;  // SideStream, by device.
  std::atomic<uint64_t> held_bytes_{0};
  std::atomic<int> holds_{0};  // Streams held at a host callback (ours or the client's), queued or waiting.
  // Gates of host callbacks the client has yet to run (StreamHostCallback),
  // dropped once open; the replay thread's alone.
  std::vector<std::shared_ptr<HostGate>> client_gates_;
  bool ClientCallbackPending() {
    std::erase_if(client_gates_, [](const std::shared_ptr<HostGate>& g) { return g->is_open(); });
    return !client_gates_.empty();
  }
  // Free's frees left to a waiter: their bytes by device, and how many are
  // in their hipFree call (past their wait for the device).
  Mutex frees_mu_;
  std::condition_variable frees_cv_;
  std::map<int, uint64_t> frees_pending_ HIPR_GUARDED_BY(frees_mu_);
  int frees_in_call_ HIPR_GUARDED_BY(frees_mu_) = 0;
  Mutex late_mu_;
  Status late_error_ HIPR_GUARDED_BY(late_mu_);
  StdoutCapture output_;
  std::unique_ptr<Waiters> waiters_ = std::make_unique<Waiters>();
};

// What a node without a usable AMD GPU lacks, in the order to check it.
std::string Diagnose() {
  std::string why;
  bool amd_pci = false;
  std::error_code ec;
  for (const auto& dev : std::filesystem::directory_iterator("/sys/bus/pci/devices", ec)) {
    FILE* f = std::fopen((dev.path() / "vendor").c_str(), "r");
    if (f == nullptr) continue;
    char buf[16] = {};
    if (std::fgets(buf, sizeof buf, f) != nullptr && std::strncmp(buf, "0x1002", 6) == 0) amd_pci = true;
    std::fclose(f);
  }
  if (!amd_pci) why += " no PCI device with AMD's vendor id 0x1002;";
  if (!std::filesystem::exists("/sys/module/amdgpu")) why += " the amdgpu kernel module is not loaded;";
  if (!std::filesystem::exists("/dev/kfd"))
    why += " /dev/kfd is missing;";
  else if (access("/dev/kfd", R_OK | W_OK) != 0)
    why += " no read/write access to /dev/kfd (add the user to the 'render' group);";
  bool render = false;
  for (const auto& dev : std::filesystem::directory_iterator("/dev/dri", ec))
    if (dev.path().filename().string().rfind("renderD", 0) == 0) render = true;
  if (!render) why += " no /dev/dri/renderD* node;";
  return why;
}

}  // namespace
}  // namespace hipr::worker

extern "C" __attribute__((visibility("default"))) int hipr_hip_probe(char* message, size_t len) {
  int count = 0;
  hipError_t err = hipGetDeviceCount(&count);
  if (err != hipSuccess || count == 0) {
    std::snprintf(message, len, "no usable AMD GPU: hipGetDeviceCount returned %s (%d devices);%s use --device sim on machines without one",
                  hipGetErrorName(err), count, hipr::worker::Diagnose().c_str());
    return -1;
  }
  std::string names;
  for (int i = 0; i < count; ++i) {
    hipDeviceProp_t p;
    if (hipGetDeviceProperties(&p, i) == hipSuccess) names += std::string(i ? ", " : "") + p.name + " (" + p.gcnArchName + ")";
  }
  int runtime = 0;
  (void)hipRuntimeGetVersion(&runtime);
  // HIP versions are MAJOR * 10^7 + MINOR * 10^5 + PATCH.
  std::snprintf(message, len, "%d HIP device(s): %s; built for HIP %d.%d, runtime %d.%d.%d", count, names.c_str(),
                HIP_VERSION_MAJOR, HIP_VERSION_MINOR, runtime / 10000000, runtime / 100000 % 100, runtime % 100000);
  return count;
}

extern "C" __attribute__((visibility("default"))) hipr::worker::Device* hipr_hip_create_device(char* message, size_t len) {
  auto device = std::make_unique<hipr::worker::HipDevice>();
  hipr::Status st = device->Init();
  if (!st.ok()) {
    std::snprintf(message, len, "%s", st.message().c_str());
    return nullptr;
  }
  return device.release();
}
