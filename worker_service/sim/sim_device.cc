#include "worker_service/sim/sim_device.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string>
#include <thread>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <atomic>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "protocol/device_properties.h"
#include "worker_service/sim/models.h"
#include "worker_service/device/argument_checks.h"
#include "worker_service/device/texture_desc.h"

namespace hipr::worker::sim {
namespace {

constexpr uint32_t kStreamNonBlocking = 0x1;
constexpr uint32_t kEventDisableTiming = 0x2;
constexpr uint32_t kEventInterprocess = 0x4;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Row i of a region starts at address + i * pitch and is width bytes long.
uint8_t* Row(const msg::Region& r, uint64_t i) { return reinterpret_cast<uint8_t*>(r.address + i * r.pitch); }

// Hands `io` the rows of a region in bounded batches, so a region of
// billions of tiny rows costs no more memory than one of a few.
Status ForRowBatches(const msg::Region& r, const BulkIo& io) {
  constexpr uint64_t kBatch = 1024;
  if (r.width == 0) return Status::Ok();
  iovec rows[kBatch];
  for (uint64_t first = 0; first < r.height; first += kBatch) {
    int n = static_cast<int>(std::min(kBatch, r.height - first));
    for (int i = 0; i < n; ++i) rows[i] = {Row(r, first + static_cast<uint64_t>(i)), r.width};
    HIPR_RETURN_IF_ERROR(io(rows, n));
  }
  return Status::Ok();
}

Status NoStream(uint64_t id) {
  return Status(StatusCode::kInvalidHandle, "stream " + std::to_string(id) + " does not belong to this session");
}
Status NoEvent(uint64_t id) {
  return Status(StatusCode::kInvalidHandle, "event " + std::to_string(id) + " does not belong to this session");
}

// An IPC event's state, in a memfd page that the exporting session and
// every session that opened the handle map: records are numbered across
// all of them, and each record marks its slot when its stream reaches it.
// A slot holds the newest record of its residue, so a wait for record g is
// over once the slot shows g or a later one (255 records later, in practice
// never still pending).
struct SharedEventPage {
  static constexpr size_t kSlots = 255;
  std::atomic<uint64_t> recorded;
  std::atomic<uint64_t> reached[kSlots];

  bool Reached(uint64_t g) const { return g == 0 || reached[g % kSlots].load(std::memory_order_acquire) >= g; }
  void MarkReached(uint64_t g) {
    std::atomic<uint64_t>& slot = reached[g % kSlots];
    uint64_t now = slot.load(std::memory_order_relaxed);
    while (now < g && !slot.compare_exchange_weak(now, g, std::memory_order_release)) {
    }
  }
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");
constexpr size_t kSharedEventBytes = 4096;
static_assert(sizeof(SharedEventPage) <= kSharedEventBytes);

// Polls `reached` (a short spin, then every 100 us, as a GPU's wait costs the
// host nothing) until it holds or `stopping` is set; false when stopped.
template <class Pred>
bool PollUntil(const std::atomic<bool>& stopping, Pred reached) {
  for (unsigned polls = 0; !stopping.load(std::memory_order_relaxed); ++polls) {
    if (reached()) return true;
    if (polls < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return false;
}

}  // namespace

struct SimDevice::Event {
  ~Event() {
    if (shared != nullptr) munmap(shared, kSharedEventBytes);
    if (shared_fd >= 0) close(shared_fd);
  }

  int device = 0;
  uint32_t flags = 0;
  Mutex mu;
  std::condition_variable cv;
  // IPC: set (GUARDED_BY(mu)) when exported or opened; then records are
  // numbered and marked reached in the page, which other sessions see too.
  SharedEventPage* shared = nullptr;
  int shared_fd = -1;  // The exporter's memfd, which importers open through /proc.
  std::array<uint8_t, 16> secret{};
  uint64_t recorded HIPR_GUARDED_BY(mu) = 0;  // records submitted; the latest is `recorded`.
  // Records not reached by their stream yet. Records on different streams
  // complete in any order, so "reached" is per record.
  std::set<uint64_t> pending HIPR_GUARDED_BY(mu);
  uint64_t stamped HIPR_GUARDED_BY(mu) = 0;  // the record timestamp_ns belongs to.
  int64_t timestamp_ns HIPR_GUARDED_BY(mu) = 0;

  // EventSynchronizeAsync completions, by the record they wait for.
  std::multimap<uint64_t, Device::Completion> waiters HIPR_GUARDED_BY(mu);

  bool Reached(uint64_t generation) const HIPR_REQUIRES(mu) {
    return shared != nullptr ? shared->Reached(generation) : pending.count(generation) == 0;
  }
  // The record a wait or query made now concerns.
  uint64_t Latest() const HIPR_REQUIRES(mu) {
    return shared != nullptr ? shared->recorded.load(std::memory_order_acquire) : recorded;
  }
  void WaitFor(uint64_t generation) {
    MutexLock lock(mu);
    while (!Reached(generation)) cv.wait(lock.native());
  }
  // The time of the latest record: kInvalidHandle if never recorded,
  // kNotReady until its stream has got there.
  Status LatestTime(int64_t* ns) {
    MutexLock lock(mu);
    if (recorded == 0) return Status(StatusCode::kInvalidHandle, "event was never recorded");
    if (!Reached(recorded)) return Status(StatusCode::kNotReady, "event not reached yet");
    *ns = timestamp_ns;
    return Status::Ok();
  }
};

uint64_t DefaultSimMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  uint64_t ram = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : (8ull << 30);
  uint64_t quarter = ram / 4 / SimMemory::kGranularity * SimMemory::kGranularity;
  return std::min<uint64_t>(quarter, 16ull << 30);
}

Status SimDevice::Create(const SimOptions& options, std::unique_ptr<SimDevice>* out) {
  if (options.device_count < 1 || options.device_count > 16) return InvalidArgument("sim device count must be 1..16");
  if (options.memory_bytes < (1u << 20)) return InvalidArgument("sim memory must be at least 1 MiB");
  std::vector<int> ordinals = options.ordinals;
  if (ordinals.empty())
    for (int i = 0; i < options.device_count; ++i) ordinals.push_back(i);
  for (int o : ordinals)
    if (o < 0 || o >= options.device_count) return InvalidArgument("sim device ordinal out of range");
  const int count = static_cast<int>(ordinals.size());
  std::vector<msg::DeviceInfo> infos(ordinals.size());
  for (int i = 0; i < count; ++i)
    HIPR_RETURN_IF_ERROR(ModelInfo(options.model, options.memory_bytes, ordinals[static_cast<size_t>(i)],
                                   &infos[static_cast<size_t>(i)]));
  // Every device's memory lives in this one process: each reaches the others.
  const int64_t all = count >= 63 ? -1 : (int64_t{1} << count) - 1;
  for (int i = 0; i < count; ++i)
    msg::SetProperty(&infos[static_cast<size_t>(i)], msg::DeviceProperty::kPeerAccessMask, all & ~(int64_t{1} << i));
  out->reset(new SimDevice(std::move(infos), options.memory_bytes, options.kernel_dirs));
  (*out)->fail_kernels_ = options.fail_kernels;
  if (options.force_staging) {
    std::vector<uint8_t*> buffers;
    for (size_t i = 0; i < kStagingBuffers; ++i) {
      (*out)->staging_buffers_.push_back(std::make_unique<uint8_t[]>(kStagingPieceBytes));
      buffers.push_back((*out)->staging_buffers_.back().get());
    }
    (*out)->staging_ = std::make_unique<StagingPipeline>(std::move(buffers), kStagingPieceBytes);
  }
  return Status::Ok();
}

SimDevice::SimDevice(std::vector<msg::DeviceInfo> infos, uint64_t budget, std::vector<std::string> kernel_dirs)
    : infos_(std::move(infos)),
      api_(static_cast<int>(infos_.size())),
      memory_(static_cast<int>(infos_.size()), budget), twins_(std::move(kernel_dirs)) {
  for (size_t i = 0; i < infos_.size(); ++i)
    null_streams_.push_back(std::make_unique<SimStream>(static_cast<int>(i), 0, 0));
  memory_.set_forget_hook([this](const void* p, size_t n) {
    ForgetWatched(p, n);
    if (forget_) forget_(p, n);
  });
}

SimDevice::~SimDevice() {
  stopping_ = true;  // A value wait nobody will satisfy must not hold the join below.
  ipc_waits_.reset();
  // Drain and join while everything queued work refers to (memory, events,
  // completions) is still alive.
  streams_.clear();
  retired_.clear();
  null_streams_.clear();
  DeleteQueuedLaunches();  // Every stream has run its launches and returned them.
  modules_.clear();
  if (forget_)
    for (const auto& b : staging_buffers_) forget_(b.get(), kStagingPieceBytes);
  // memory_ unmaps the window when it goes, after the watch's members
  // (declared after it) are gone: from here on only forget_ hears of it.
  memory_.set_forget_hook(forget_);
}

bool SimDevice::BulkMemoryStays(const iovec* iov, int count) const {
  for (int i = 0; i < count; ++i) {
    const bool stays = (staging_ != nullptr && staging_->Owns(iov[i].iov_base, iov[i].iov_len)) ||
                       memory_.InWindow(iov[i].iov_base, iov[i].iov_len);
    if (!stays) return false;
  }
  return true;
}

void SimDevice::SetForgetMemoryHook(ForgetMemoryHook hook) { forget_ = std::move(hook); }

void SimDevice::WatchManaged(uint64_t address, uint64_t size) {
  MutexLock lock(watch_mu_);
  if (!watch_tried_) {
    watch_tried_ = true;
    std::string why;
    watch_ = WriteWatch::Open(&why);
    if (watch_ == nullptr)
      spdlog::warn("sim: managed memory is read back whole: the kernel offers no write tracking ({})", why);
  }
  if (watch_ == nullptr) return;
  Status st = watch_->Watch(reinterpret_cast<void*>(address), size);
  if (!st.ok()) {
    spdlog::info("sim: managed allocation at {:#x} ({} bytes) is read back whole: {}", address, size, st.ToString());
    return;
  }
  watched_[address] = size;
}

void SimDevice::ForgetWatched(const void* p, size_t n) {
  const auto a = reinterpret_cast<uint64_t>(p);
  MutexLock lock(watch_mu_);
  auto it = watched_.upper_bound(a);
  if (it != watched_.begin()) --it;
  while (it != watched_.end() && it->first < a + n) {
    if (it->first + it->second > a)
      it = watched_.erase(it);
    else
      ++it;
  }
}

Status SimDevice::TakeWritten(uint64_t address, uint64_t size, std::vector<std::pair<uint64_t, uint64_t>>* runs) {
  runs->clear();
  MutexLock lock(watch_mu_);
  auto it = watched_.upper_bound(address);
  if (watch_ == nullptr || it == watched_.begin())
    return Status(StatusCode::kUnavailable, "not a watched managed allocation");
  --it;
  if (address + size > it->first + it->second || address + size < address)
    return Status(StatusCode::kUnavailable, "not a watched managed allocation");
  // Whole pages around the region; the runs are then made relative to it.
  const uint64_t page = WriteWatch::PageSize();
  const uint64_t start = address / page * page;
  std::vector<WriteWatch::Run> pages;
  HIPR_RETURN_IF_ERROR(watch_->TakeWritten(reinterpret_cast<const void*>(start), address + size - start, &pages));
  for (const auto& [offset, length] : pages) {
    const uint64_t from = std::max(start + offset, address) - address;
    const uint64_t to = std::min(start + offset + length, address + size) - address;
    if (from < to) runs->emplace_back(from, to - from);
  }
  return Status::Ok();
}

// The sim reports the HIP 5.2 runtime it stands in for.
int32_t SimDevice::driver_version() const { return 50221153; }
int32_t SimDevice::runtime_version() const { return 50221153; }

Status SimDevice::AttachWindow(const msg::AddressWindow& offer, msg::AddressWindow* used) {
  return memory_.Attach(offer, used);
}

Status SimDevice::CheckDevice(int device) const {
  if (device < 0 || device >= static_cast<int>(infos_.size()))
    return Status(StatusCode::kInvalidDevice, "device " + std::to_string(device) + " does not exist");
  return Status::Ok();
}

Status SimDevice::Prepare(int device, uint64_t stream, SimStream** out) {
  // The legacy null stream's implicit synchronization, as work queued on the
  // target stream (the replay thread never waits for it): the null stream
  // waits for all blocking streams of its device, and blocking streams wait
  // for the null stream.
  std::vector<std::shared_ptr<Latch>> waits;
  SimStream* target = nullptr;
  if (stream == 0) {
    HIPR_RETURN_IF_ERROR(CheckDevice(device));
    for (auto& [id, s] : streams_)
      if (s->device() == device && !s->non_blocking())
        if (auto latch = s->Mark()) waits.push_back(std::move(latch));
    target = null_streams_[static_cast<size_t>(device)].get();
  } else {
    auto it = streams_.find(stream);
    if (it == streams_.end()) return NoStream(stream);
    target = it->second.get();
    if (!target->non_blocking())
      if (auto latch = null_streams_[static_cast<size_t>(target->device())]->Mark()) waits.push_back(std::move(latch));
  }
  if (!waits.empty())
    target->SubmitMarker(
        [waits = std::move(waits)] {
          for (const auto& latch : waits) latch->Wait();
        },
        /*parks=*/true);
  *out = target;
  return Status::Ok();
}

void SimDevice::WhenReached(const std::vector<SimStream*>& streams, std::function<void()> then) {
  // Nothing to wait for (the common case of a synchronization): run `then`
  // here, with no hop to a stream thread. Only the replay thread submits
  // work, so an idle stream stays idle meanwhile.
  if (std::all_of(streams.begin(), streams.end(), [](SimStream* s) { return s->Idle(); })) return then();
  // Each stream counts down when it reaches this point; the last one (or
  // this call, when there is none) runs `then`.
  struct Join {
    std::atomic<size_t> left;
    std::function<void()> then;
  };
  auto join = std::make_shared<Join>();
  join->left = streams.size() + 1;
  join->then = std::move(then);
  auto arrive = [join] {
    if (join->left.fetch_sub(1) == 1) join->then();
  };
  for (SimStream* s : streams) s->SubmitMarker(arrive);
  arrive();
}

std::vector<SimStream*> SimDevice::StreamsOf(int device, bool blocking_only) const {
  std::vector<SimStream*> out;
  for (const auto& s : null_streams_)
    if (device < 0 || s->device() == device) out.push_back(s.get());
  for (const auto& [id, s] : streams_)
    if ((device < 0 || s->device() == device) && !(blocking_only && s->non_blocking())) out.push_back(s.get());
  for (const auto& s : retired_)  // Destroyed, maybe still running their work.
    if ((device < 0 || s->device() == device) && !(blocking_only && s->non_blocking())) out.push_back(s.get());
  return out;
}

void SimDevice::SynchronizeAll(int device) {
  for (SimStream* s : StreamsOf(device, false)) s->WaitIdle();
}

Status SimDevice::Malloc(int device, uint64_t size, uint32_t flags, uint64_t* address) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  HIPR_RETURN_IF_ERROR(memory_.Allocate(device, size, address));
  if ((flags & msg::kMallocManaged) != 0 && size != 0) WatchManaged(*address, size);
  return Status::Ok();
}

Status SimDevice::Free(uint64_t address) {
  // hipFree synchronizes the device before releasing memory: the memory goes
  // once every stream has finished the work queued before it (and is not
  // handed out again before that), while the replay goes on.
  HIPR_RETURN_IF_ERROR(memory_.Retire(address));
  WhenReached(StreamsOf(-1, false), [this, address] {
    int device = 0;
    (void)memory_.Release(address, &device);  // Checked above; only this free releases it.
  });
  return Status::Ok();
}

namespace {

// A sim IPC memory handle: the exporting session process, its memfd's
// descriptor there, and the secret in the memfd's name, which the opener
// checks on the file it got (a stale or forged handle names no such file).
struct SimIpcHandle {
  char magic[8];
  uint32_t pid;
  int32_t fd;
  uint64_t size;    // Of the exported allocation.
  uint64_t offset;  // Of the handle's pointer in it.
  std::array<uint8_t, 16> secret;
  uint8_t reserved[16];
};
static_assert(sizeof(SimIpcHandle) == msg::kIpcMemHandleBytes);
constexpr char kIpcMagic[8] = {'h', 'i', 'p', 'r', '-', 'i', 'p', 'c'};
// The same layout names exported physical memory (shareable handles; offset 0).
constexpr char kVmmMagic[8] = {'h', 'i', 'p', 'r', '-', 'v', 'm', 'm'};

// Opens memfd `fd` of worker session process `pid` through /proc, checking
// it is the memfd named `name` before it is opened (no other file of any
// process is opened for a forged handle) and after (the descriptor may have
// been reused meanwhile). `gone` says why when it is not.
Status OpenExport(uint32_t pid, int32_t fd, const std::string& name, int* out, const char* gone) {
  const std::string want = "/memfd:" + name + " (deleted)";
  auto names_export = [&](const std::string& link) {
    char target[128] = {};
    const ssize_t n = readlink(link.c_str(), target, sizeof target - 1);
    return n > 0 && std::string(target, static_cast<size_t>(n)) == want;
  };
  const std::string path = "/proc/" + std::to_string(pid) + "/fd/" + std::to_string(fd);
  if (!names_export(path)) return InvalidArgument(gone);
  const int opened = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (opened < 0) return InvalidArgument(std::string(gone) + ": " + std::strerror(errno));
  if (!names_export("/proc/self/fd/" + std::to_string(opened))) {
    close(opened);
    return InvalidArgument(gone);
  }
  *out = opened;
  return Status::Ok();
}

// An IPC event handle of the sim: the exporting session's memfd holding the
// event's SharedEventPage.
struct SimIpcEventHandle {
  char magic[8];
  uint32_t pid;
  int32_t fd;
  std::array<uint8_t, 16> secret;
  uint8_t reserved[32];
};
static_assert(sizeof(SimIpcEventHandle) == msg::kIpcEventHandleBytes);
constexpr char kIpcEventMagic[8] = {'h', 'i', 'p', 'r', '-', 'i', 'e', 'v'};

// "hipr-ipc-event-" and the secret in hex (a memory export's name with
// "event-" inserted).
std::string IpcEventName(const std::array<uint8_t, 16>& secret) {
  std::string name = SimMemory::IpcName(secret);
  return name.insert(std::strlen("hipr-ipc-"), "event-");
}

}  // namespace

Status SimDevice::StreamWaitValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint64_t mask,
                                  uint32_t flags, uint8_t bytes) {
  HIPR_RETURN_IF_ERROR(CheckStreamValue(address, bytes));
  HIPR_RETURN_IF_ERROR(CheckWaitCondition(flags));
  HIPR_RETURN_IF_ERROR(memory_.Check(msg::Region{address, bytes, bytes, 1}, nullptr));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  const uint64_t width_mask = bytes == 4 ? 0xffffffffull : ~uint64_t{0};
  s->SubmitParking([this, address, value, mask, flags, bytes, width_mask] {
    for (unsigned polls = 0; !stopping_.load(std::memory_order_relaxed); ++polls) {
      const uint64_t now = bytes == 4 ? __atomic_load_n(reinterpret_cast<const uint32_t*>(address), __ATOMIC_ACQUIRE)
                                      : __atomic_load_n(reinterpret_cast<const uint64_t*>(address), __ATOMIC_ACQUIRE);
      const uint64_t masked = now & mask;
      bool met = false;
      switch (flags) {
        case 0: met = masked >= value; break;                                    // hipStreamWaitValueGte
        case 1: met = masked == value; break;                                    // hipStreamWaitValueEq
        case 2: met = (masked & value) != 0; break;                              // hipStreamWaitValueAnd
        default: met = (~(masked | (value & mask)) & width_mask) != 0; break;  // hipStreamWaitValueNor
      }
      if (met) return;
      // A short spin, then a light poll: a GPU's wait costs the host nothing.
      if (polls < 64)
        std::this_thread::yield();
      else
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  return Status::Ok();
}

Status SimDevice::StreamWriteValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint8_t bytes) {
  HIPR_RETURN_IF_ERROR(CheckStreamValue(address, bytes));
  HIPR_RETURN_IF_ERROR(memory_.Check(msg::Region{address, bytes, bytes, 1}, nullptr, true));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  s->Submit([address, value, bytes] {
    if (bytes == 4)
      __atomic_store_n(reinterpret_cast<uint32_t*>(address), static_cast<uint32_t>(value), __ATOMIC_RELEASE);
    else
      __atomic_store_n(reinterpret_cast<uint64_t*>(address), value, __ATOMIC_RELEASE);
  });
  return Status::Ok();
}

Status SimDevice::IpcGetMemHandle(uint64_t address, IpcHandle* handle) {
  // The export moves the allocation's bytes into a memfd: nothing may touch
  // them meanwhile (rare, so the replay simply waits for the streams). A
  // stream parked at a value wait or a host callback touches nothing until
  // released, and what releases it (another stream, a later frame) cannot
  // run meanwhile: waiting for it would hold the session for good. (Memory
  // another session opened by IPC could release a value wait here; the
  // move is a remap of the same bytes, so what it then reads is the same.)
  // A stream parked on another's progress stays parked only while that one
  // is still too: passes until two in a row saw every stream idle or
  // parked with nothing run in between.
  const std::vector<SimStream*> streams = StreamsOf(-1, false);
  std::vector<uint64_t> before;
  for (;;) {
    for (SimStream* s : streams) s->WaitIdleOrParked();
    std::vector<uint64_t> now;
    for (SimStream* s : streams) now.push_back(s->Completed());
    if (now == before) break;
    before = std::move(now);
  }
  SimMemory::Exported e;
  HIPR_RETURN_IF_ERROR(memory_.Export(address, &e));
  SimIpcHandle h{};
  std::memcpy(h.magic, kIpcMagic, sizeof h.magic);
  h.pid = static_cast<uint32_t>(getpid());
  h.fd = e.fd;
  h.size = e.size;
  h.offset = address - e.base;
  h.secret = e.secret;
  std::memcpy(handle->data(), &h, sizeof h);
  return Status::Ok();
}

Status SimDevice::IpcOpenMemHandle(int device, const IpcHandle& handle, uint32_t flags, uint64_t* address,
                                   uint64_t* base, uint64_t* size) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  if ((flags & ~1u) != 0) return InvalidArgument("unknown IPC open flags");  // hipIpcMemLazyEnablePeerAccess.
  SimIpcHandle h;
  std::memcpy(&h, handle.data(), sizeof h);
  if (std::memcmp(h.magic, kIpcMagic, sizeof h.magic) != 0)
    return InvalidArgument("not an IPC memory handle of a hipr sim worker");
  int fd = -1;
  HIPR_RETURN_IF_ERROR(OpenExport(h.pid, h.fd, SimMemory::IpcName(h.secret), &fd,
                                  "the IPC handle's memory is gone (its allocation was freed or its session "
                                  "ended), or the handle is another worker's or forged"));
  struct stat st {};
  Status result = Status::Ok();
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != h.size || h.offset >= h.size) {
    result = InvalidArgument("the IPC handle's memory is gone (its allocation was freed) or the handle is forged");
  } else {
    result = memory_.Import(device, fd, h.size, base);
  }
  close(fd);  // The mapping keeps the memory.
  HIPR_RETURN_IF_ERROR(result);
  *size = h.size;
  *address = *base + h.offset;
  return Status::Ok();
}

Status SimDevice::Lease(int device, uint64_t need, uint64_t want, uint64_t* base, uint64_t* size,
                        uint64_t* granularity) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  HIPR_RETURN_IF_ERROR(memory_.Lease(device, need, want, base, size));
  *granularity = SimMemory::kGranularity;
  return Status::Ok();
}

Status SimDevice::PlaceInLease(int device, uint64_t address, uint64_t size) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  return memory_.Place(device, address, size);
}

Status SimDevice::ReturnLease(int device) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  memory_.ReturnLease(device);
  return Status::Ok();
}

Status SimDevice::VmmReserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* address) {
  return memory_.Reserve(size, alignment, hint, address);
}

Status SimDevice::VmmFree(uint64_t address, uint64_t size) { return memory_.FreeReservation(address, size); }

Status SimDevice::VmmCreate(int device, uint64_t handle, uint64_t size) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  return memory_.CreatePhysical(device, handle, size);
}

Status SimDevice::VmmRelease(uint64_t handle) { return memory_.ReleasePhysical(handle); }

Status SimDevice::VmmMap(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle) {
  return memory_.Map(address, size, offset, handle);
}

void SimDevice::VmmUnmapAsync(uint64_t address, uint64_t size, Completion done) {
  // hipMemUnmap waits for the device (clr queues it on the null stream and
  // awaits it); here every stream, so that nothing queued still touches the
  // pages when they go. Copies are refused from now on.
  if (Status st = memory_.RetireMappings(address, size); !st.ok()) return done(st);
  WhenReached(StreamsOf(-1, false),
              [this, address, size, done = std::move(done)] { done(memory_.Unmap(address, size)); });
}

Status SimDevice::VmmSetAccess(uint64_t address, uint64_t size, std::span<const msg::VmmAccess> access) {
  // As clr, at once: work queued on the memory meets the new access.
  return memory_.SetAccess(address, size, access);
}

Status SimDevice::VmmExport(uint64_t handle, IpcHandle* out) {
  SimMemory::Exported e;
  HIPR_RETURN_IF_ERROR(memory_.ExportPhysical(handle, &e));
  SimIpcHandle h{};
  std::memcpy(h.magic, kVmmMagic, sizeof h.magic);
  h.pid = static_cast<uint32_t>(getpid());
  h.fd = e.fd;
  h.size = e.size;
  h.secret = e.secret;
  std::memcpy(out->data(), &h, sizeof h);
  return Status::Ok();
}

Status SimDevice::VmmImport(int device, uint64_t handle, const IpcHandle& token, uint64_t* size) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  SimIpcHandle h;
  std::memcpy(&h, token.data(), sizeof h);
  if (std::memcmp(h.magic, kVmmMagic, sizeof h.magic) != 0)
    return InvalidArgument("not a shareable memory handle of a hipr sim worker");
  int fd = -1;
  HIPR_RETURN_IF_ERROR(OpenExport(h.pid, h.fd, SimMemory::IpcName(h.secret), &fd,
                                  "the shareable handle's memory is gone (released and unmapped, or its session "
                                  "ended), or the handle is another worker's or forged"));
  struct stat st {};
  Status result = fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_size) == h.size
                      ? memory_.ImportPhysical(device, handle, fd, h.size)
                      : InvalidArgument("the shareable handle's memory is not what the handle says");
  if (!result.ok()) close(fd);
  HIPR_RETURN_IF_ERROR(result);
  *size = h.size;
  return Status::Ok();
}

Status SimDevice::IpcCloseMemHandle(uint64_t base) {
  HIPR_RETURN_IF_ERROR(memory_.CloseImport(base));
  // As hipFree: unmapped once the work queued before the close has run.
  WhenReached(StreamsOf(-1, false), [this, base] {
    int device = 0;
    (void)memory_.Release(base, &device);
  });
  return Status::Ok();
}

// A texture object: its HiprTwinTexture in device memory of its own (so the
// handle is a device address, as on a GPU), filled from the HIP
// descriptions the `hip` device would pass to hipCreateTextureObject.
Status SimDevice::CreateTexture(const msg::TextureCreateRequest& request, uint64_t* handle) {
  HIPR_RETURN_IF_ERROR(CheckDevice(request.device));
  TextureLayout layout;
  HIPR_RETURN_IF_ERROR(CheckTexture(request, &layout));
  const msg::Region& m = request.memory;  // Linear: one row (pitch unused).
  HIPR_RETURN_IF_ERROR(memory_.Check(msg::Region{m.address, m.height > 1 ? m.pitch : m.width, m.width, m.height}, nullptr));
  hipResourceDesc res;
  hipTextureDesc tex;
  HipTextureDescs(request, layout, &res, &tex);
  HiprTwinTexture t{};
  t.magic = HIPR_TWIN_TEXTURE_MAGIC;
  const hipChannelFormatDesc& desc = res.resType == hipResourceTypeLinear ? res.res.linear.desc : res.res.pitch2D.desc;
  t.channels = layout.channels;
  t.channel_bits = static_cast<uint32_t>(desc.x);
  t.channel_kind = desc.f;
  if (res.resType == hipResourceTypeLinear) {
    t.address = reinterpret_cast<uint64_t>(res.res.linear.devPtr);
    t.pitch = res.res.linear.sizeInBytes;
    t.width = res.res.linear.sizeInBytes / layout.element_bytes;
    t.height = 1;
  } else {
    t.address = reinterpret_cast<uint64_t>(res.res.pitch2D.devPtr);
    t.pitch = res.res.pitch2D.pitchInBytes;
    t.width = res.res.pitch2D.width;
    t.height = res.res.pitch2D.height;
  }
  for (int i = 0; i < 3; ++i) t.address_mode[i] = tex.addressMode[i];
  t.filter_mode = tex.filterMode;
  t.read_mode = tex.readMode;
  t.normalized_coords = tex.normalizedCoords;
  for (int i = 0; i < 4; ++i) t.border_color[i] = tex.borderColor[i];
  uint64_t address = 0;
  HIPR_RETURN_IF_ERROR(memory_.Allocate(request.device, sizeof t, &address));
  std::memcpy(reinterpret_cast<void*>(address), &t, sizeof t);
  textures_.insert(address);
  *handle = address;
  return Status::Ok();
}

Status SimDevice::DestroyTexture(uint64_t handle) {
  if (textures_.erase(handle) == 0) return UnknownTexture();
  return Free(handle);  // Once the work queued before has run, as hipFree.
}

Status SimDevice::IpcGetEventHandle(uint64_t event, IpcEventHandle* handle) {
  std::shared_ptr<Event> ev;
  HIPR_RETURN_IF_ERROR(FindEvent(event, &ev));
  if ((ev->flags & kEventInterprocess) == 0)
    return InvalidArgument("event " + std::to_string(event) + " was not created with hipEventInterprocess");
  MutexLock lock(ev->mu);
  if (ev->shared != nullptr && ev->shared_fd < 0)
    return InvalidArgument("event " + std::to_string(event) + " was opened from another session's handle");
  if (ev->shared == nullptr) {
    // First export: the event's state moves into a memfd page.
    std::array<uint8_t, 16> secret{};
    if (getrandom(secret.data(), secret.size(), 0) != static_cast<ssize_t>(secret.size()))
      return Status(StatusCode::kInternal, std::string("getrandom: ") + std::strerror(errno));
    const int fd = memfd_create(IpcEventName(secret).c_str(), MFD_CLOEXEC);
    if (fd < 0) return Status(StatusCode::kResourceExhausted, std::string("memfd_create: ") + std::strerror(errno));
    void* page = MAP_FAILED;
    if (ftruncate(fd, kSharedEventBytes) == 0)
      page = mmap(nullptr, kSharedEventBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (page == MAP_FAILED) {
      const int err = errno;
      close(fd);
      return Status(StatusCode::kResourceExhausted, std::string("IPC event page: ") + std::strerror(err));
    }
    auto* shared = new (page) SharedEventPage{};
    shared->recorded.store(ev->recorded, std::memory_order_relaxed);
    // Records already reached stay reached; pending ones mark themselves.
    const uint64_t first = ev->recorded > SharedEventPage::kSlots ? ev->recorded - SharedEventPage::kSlots + 1 : 1;
    for (uint64_t g = first; g <= ev->recorded; ++g)
      if (ev->pending.count(g) == 0) shared->MarkReached(g);
    ev->shared = shared;
    ev->shared_fd = fd;
    ev->secret = secret;
  }
  SimIpcEventHandle h{};
  std::memcpy(h.magic, kIpcEventMagic, sizeof h.magic);
  h.pid = static_cast<uint32_t>(getpid());
  h.fd = ev->shared_fd;
  h.secret = ev->secret;
  std::memcpy(handle->data(), &h, sizeof h);
  return Status::Ok();
}

Status SimDevice::IpcOpenEventHandle(int device, uint64_t event, const IpcEventHandle& handle) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  HIPR_RETURN_IF_ERROR(CheckNewId("event", event, events_.count(event) != 0));
  SimIpcEventHandle h;
  std::memcpy(&h, handle.data(), sizeof h);
  if (std::memcmp(h.magic, kIpcEventMagic, sizeof h.magic) != 0)
    return InvalidArgument("not an IPC event handle of a hipr sim worker");
  int fd = -1;
  HIPR_RETURN_IF_ERROR(OpenExport(h.pid, h.fd, IpcEventName(h.secret), &fd,
                                  "the IPC handle's event is gone (destroyed, or its session ended), or the "
                                  "handle is another worker's or forged"));
  struct stat st {};
  void* page = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == kSharedEventBytes)
    page = mmap(nullptr, kSharedEventBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);  // The mapping keeps the page.
  if (page == MAP_FAILED) return InvalidArgument("the IPC handle's event page cannot be mapped");
  auto ev = std::make_shared<Event>();
  ev->device = device;
  ev->flags = kEventDisableTiming | kEventInterprocess;
  ev->shared = static_cast<SharedEventPage*>(page);
  {
    MutexLock lock(ev->mu);
    ev->recorded = ev->shared->recorded.load(std::memory_order_acquire);
  }
  events_[event] = std::move(ev);
  return Status::Ok();
}

Status SimDevice::MemInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  *total_bytes = memory_.budget();
  *free_bytes = memory_.budget() - memory_.Used(device);
  return Status::Ok();
}

Status SimDevice::CheckRegion(const msg::Region& region) const { return memory_.Check(region, nullptr); }

Status SimDevice::Memset(int device, uint64_t stream, const msg::Region& dst, uint32_t value,
                         uint8_t element_size) {
  HIPR_RETURN_IF_ERROR(CheckMemset(dst, element_size));
  HIPR_RETURN_IF_ERROR(memory_.Check(dst, nullptr, true));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  s->Submit([dst, value, element_size] {
    if (dst.width == 0) return;  // However many rows (unchecked then: nothing is written).
    for (uint64_t i = 0; i < dst.height; ++i) {
      uint8_t* p = Row(dst, i);
      if (element_size == 1) {
        std::memset(p, static_cast<int>(value & 0xff), dst.width);
        continue;
      }
      for (uint64_t off = 0; off < dst.width; off += element_size) std::memcpy(p + off, &value, element_size);
    }
  });
  return Status::Ok();
}

SimDevice::StageBuffer::~StageBuffer() {
  if (mapped)
    munmap(data, size);
  else
    delete[] data;
}

std::shared_ptr<SimDevice::StageBuffer> SimDevice::TakeStageBuffer(uint64_t bytes) {
  auto b = std::make_shared<StageBuffer>();
  if (bytes < kKeptStageBytes) {
    b->data = new (std::nothrow) uint8_t[bytes + 1];  // Not zeroed: the copy fills it.
    b->size = bytes;
    return b->data != nullptr ? b : nullptr;
  }
  {
    MutexLock lock(stages_mu_);
    auto best = kept_stages_.end();
    for (auto it = kept_stages_.begin(); it != kept_stages_.end(); ++it)
      if ((*it)->size >= bytes && (best == kept_stages_.end() || (*it)->size < (*best)->size)) best = it;
    if (best != kept_stages_.end()) {
      std::shared_ptr<StageBuffer> kept = std::move(*best);
      kept_stages_.erase(best);
      kept_stage_bytes_ -= kept->size;
      return kept;
    }
  }
  const uint64_t size = (bytes + (2u << 20) - 1) & ~uint64_t{(2u << 20) - 1};
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  (void)madvise(p, size, MADV_HUGEPAGE);  // As device memory: a fault per 2 MiB. Advice only.
  b->data = static_cast<uint8_t*>(p);
  b->size = size;
  b->mapped = true;
  return b;
}

void SimDevice::GiveStageBuffer(std::shared_ptr<StageBuffer> buffer) {
  if (!buffer->mapped) return;
  std::vector<std::shared_ptr<StageBuffer>> dropped;  // Unmapped after the lock.
  MutexLock lock(stages_mu_);
  kept_stages_.push_back(std::move(buffer));
  kept_stage_bytes_ += kept_stages_.back()->size;
  while (kept_stage_bytes_ > kMaxStagedBytes) {  // The smallest go first: the large cost most to make.
    auto smallest = std::min_element(kept_stages_.begin(), kept_stages_.end(),
                                     [](const auto& a, const auto& b) { return a->size < b->size; });
    kept_stage_bytes_ -= (*smallest)->size;
    dropped.push_back(std::move(*smallest));
    kept_stages_.erase(smallest);
  }
}

Status SimDevice::CopyToDevice(int device, uint64_t stream, const msg::Region& dst, const BulkIo& fill) {
  HIPR_RETURN_IF_ERROR(memory_.Check(dst, nullptr, true));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  const uint64_t bytes = dst.bytes();
  bool stage = false;
  if (!s->Empty() && bytes <= kMaxStagedBytes) {
    stage = staged_bytes_.fetch_add(bytes) + bytes <= kMaxStagedBytes;
    if (!stage) staged_bytes_.fetch_sub(bytes);  // Over the bound: wait instead.
  }
  if (stage) {
    // The stream is busy (earlier work must see the old bytes): take the
    // bytes now and let the stream write them when it gets there, so the
    // replay never waits for the device. Bounded; past the bound it waits.
    std::shared_ptr<StageBuffer> staged = TakeStageBuffer(bytes);
    if (staged != nullptr) {
      iovec all{staged->data, bytes};
      Status st = bytes == 0 ? Status::Ok() : fill(&all, 1);
      if (!st.ok()) {
        staged_bytes_.fetch_sub(bytes);
        GiveStageBuffer(std::move(staged));
        return st;
      }
      s->Submit([this, dst, staged, bytes] {
        const uint8_t* from = staged->data;
        for (uint64_t i = 0; i < dst.height && dst.width != 0; ++i, from += dst.width)
          std::memcpy(Row(dst, i), from, dst.width);
        staged_bytes_.fetch_sub(bytes);
        GiveStageBuffer(staged);
      });
      return Status::Ok();
    }
    staged_bytes_.fetch_sub(bytes);  // No memory to stage in: wait instead.
  }
  s->WaitIdle();  // Earlier work on the stream sees the old bytes.
  if (staging_ != nullptr) {
    return staging_->In(bytes, fill, [&](uint8_t* buffer, uint64_t offset, size_t len) {
      return ForPackedRange(dst, offset, len, [&](uint64_t address, uint64_t packed, uint64_t n) {
        std::memcpy(reinterpret_cast<void*>(address), buffer + (packed - offset), n);
        return Status::Ok();
      });
    });
  }
  return ForRowBatches(dst, fill);  // Straight into device memory.
}

Status SimDevice::ReadRegion(const msg::Region& src, const BulkIo& drain) {
  if (staging_ == nullptr) return ForRowBatches(src, drain);  // Straight from device memory.
  return staging_->Out(src.bytes(), [&](uint8_t* buffer, uint64_t offset, size_t len) {
    return ForPackedRange(src, offset, len, [&](uint64_t address, uint64_t packed, uint64_t n) {
      std::memcpy(buffer + (packed - offset), reinterpret_cast<const void*>(address), n);
      return Status::Ok();
    });
  }, drain);
}

Status SimDevice::CopyFromDevice(int device, uint64_t stream, const msg::Region& src, const BulkIo& drain) {
  HIPR_RETURN_IF_ERROR(memory_.Check(src, nullptr));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  s->WaitIdle();
  return ReadRegion(src, drain);
}

void SimDevice::CopyFromDeviceAsync(int device, uint64_t stream, const msg::Region& src, CopyOutDone done) {
  SimStream* s = nullptr;
  Status st = memory_.Check(src, nullptr);
  if (st.ok()) st = Prepare(device, stream, &s);
  if (!st.ok()) return done(st, nullptr);
  const RegionReader read = [this, src](const BulkIo& drain) { return ReadRegion(src, drain); };
  if (s->Empty()) return done(TakeFault(), read);  // Nothing before it: no hop.
  // The stream's thread sends the bytes when it gets there (straight from
  // device memory); the replay goes on.
  s->Submit([this, read, done = std::move(done)] { done(TakeFault(), read); });
}

Status SimDevice::CopyHostToDevice(int device, uint64_t stream, const msg::Region& dst, const uint8_t* src,
                                   uint64_t src_pitch) {
  HIPR_RETURN_IF_ERROR(memory_.Check(dst, nullptr, true));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  auto copy = [dst, src, src_pitch] {
    for (uint64_t i = 0; i < dst.height && dst.width != 0; ++i) std::memcpy(Row(dst, i), src + i * src_pitch, dst.width);
  };
  if (s->Empty()) {
    copy();  // Nothing before it on the stream: no hop to its thread.
  } else {
    s->Submit(copy);
  }
  return Status::Ok();
}

Status SimDevice::CopyDeviceToHost(int device, uint64_t stream, uint8_t* dst, uint64_t dst_pitch,
                                   const msg::Region& src) {
  HIPR_RETURN_IF_ERROR(memory_.Check(src, nullptr));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  auto copy = [dst, dst_pitch, src] {
    for (uint64_t i = 0; i < src.height && src.width != 0; ++i) std::memcpy(dst + i * dst_pitch, Row(src, i), src.width);
  };
  if (s->Empty()) {
    copy();
  } else {
    s->Submit(copy);
  }
  return Status::Ok();
}

Status SimDevice::CopyOnDevice(int device, uint64_t stream, const msg::Region& dst, const msg::Region& src) {
  HIPR_RETURN_IF_ERROR(CheckCopyShapes(dst, src));
  HIPR_RETURN_IF_ERROR(memory_.Check(dst, nullptr, true));
  HIPR_RETURN_IF_ERROR(memory_.Check(src, nullptr));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  s->Submit([dst, src] {
    if (dst.width == 0) return;
    for (uint64_t i = 0; i < dst.height; ++i) std::memmove(Row(dst, i), Row(src, i), dst.width);
  });
  return Status::Ok();
}

Status SimDevice::StreamCreate(int device, uint64_t stream, uint32_t flags, int32_t priority,
                               std::span<const uint32_t> /*cu_mask*/) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  HIPR_RETURN_IF_ERROR(CheckNewId("stream", stream, streams_.count(stream) != 0));
  HIPR_RETURN_IF_ERROR(CheckStreamFlags(flags));
  streams_[stream] = std::make_unique<SimStream>(device, flags, priority);
  return Status::Ok();
}

Status SimDevice::StreamDestroy(uint64_t stream) {
  auto it = streams_.find(stream);
  if (it == streams_.end()) return NoStream(stream);
  // Its queued work still runs (as in HIP); joining its thread waits for
  // that, so that happens later, off the replay thread's path.
  std::erase_if(retired_, [](const std::unique_ptr<SimStream>& s) { return s->Idle(); });
  retired_.push_back(std::move(it->second));
  streams_.erase(it);
  return Status::Ok();
}

void SimDevice::StreamSynchronizeAsync(int device, uint64_t stream, Completion done) {
  std::vector<SimStream*> streams;
  if (stream == 0) {
    // The device's null stream and its blocking streams; an older client's
    // (device -1): every device's.
    if (Status st = device >= 0 ? CheckDevice(device) : Status::Ok(); !st.ok()) return done(st);
    streams = StreamsOf(device, true);
  } else {
    auto it = streams_.find(stream);
    if (it == streams_.end()) return done(NoStream(stream));
    streams.push_back(it->second.get());
  }
  WhenReached(streams, [this, done = std::move(done)] { done(TakeFault()); });
}

Status SimDevice::StreamSynchronize(int device, uint64_t stream) {
  return Wait(&SimDevice::StreamSynchronizeAsync, device, stream);
}

Status SimDevice::StreamQuery(int device, uint64_t stream) {
  bool idle = true;
  if (stream == 0) {
    if (device >= 0) HIPR_RETURN_IF_ERROR(CheckDevice(device));
    for (auto& s : null_streams_)
      if (device < 0 || s->device() == device) idle = idle && s->IdleForQuery();
  } else {
    auto it = streams_.find(stream);
    if (it == streams_.end()) return NoStream(stream);
    idle = it->second->IdleForQuery();
  }
  return idle ? Status::Ok() : Status(StatusCode::kNotReady, "stream has pending work");
}

Status SimDevice::StreamWaitEvent(int device, uint64_t stream, uint64_t event, uint32_t flags) {
  std::shared_ptr<Event> ev;
  HIPR_RETURN_IF_ERROR(FindEvent(event, &ev));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device < 0 ? ev->device : device, stream, &s));
  uint64_t generation;
  bool shared;
  {
    MutexLock lock(ev->mu);
    generation = ev->Latest();  // Never recorded: nothing to wait for.
    shared = ev->shared != nullptr;
  }
  if (generation == 0) return Status::Ok();
  if (shared) {
    // Another session's record completes no stream item here: poll.
    s->SubmitParking([this, ev, generation] {
      (void)PollUntil(stopping_, [&] {
        MutexLock lock(ev->mu);
        return ev->Reached(generation);
      });
    });
  } else {
    s->SubmitParking([ev, generation] { ev->WaitFor(generation); });
  }
  return Status::Ok();
}

Status SimDevice::StreamHostCallback(int device, uint64_t stream, std::function<void(Status)> reached,
                                     std::shared_ptr<HostGate> gate) {
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(device, stream, &s));
  // Work, not a marker: the stream is busy until the client has run it.
  s->SubmitParking([this, reached = std::move(reached), gate = std::move(gate)] {
    reached(PeekFault());
    gate->Wait();
  });
  return Status::Ok();
}

Status SimDevice::FindEvent(uint64_t id, std::shared_ptr<Event>* out) const {
  auto it = events_.find(id);
  if (it == events_.end()) return NoEvent(id);
  *out = it->second;
  return Status::Ok();
}

Status SimDevice::EventCreate(int device, uint64_t event, uint32_t flags) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  HIPR_RETURN_IF_ERROR(CheckNewId("event", event, events_.count(event) != 0));
  auto ev = std::make_shared<Event>();
  ev->device = device;
  ev->flags = flags;
  events_[event] = std::move(ev);
  return Status::Ok();
}

Status SimDevice::EventDestroy(uint64_t event) {
  // Pending records still hold the event; it goes when they have run.
  return events_.erase(event) == 1 ? Status::Ok() : NoEvent(event);
}

Status SimDevice::EventRecord(uint64_t event, uint64_t stream) {
  std::shared_ptr<Event> ev;
  HIPR_RETURN_IF_ERROR(FindEvent(event, &ev));
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(ev->device, stream, &s));
  uint64_t generation;
  {
    MutexLock lock(ev->mu);
    generation = ev->shared != nullptr ? ev->shared->recorded.fetch_add(1, std::memory_order_acq_rel) + 1
                                       : ev->recorded + 1;
    ev->recorded = generation;
    ev->pending.insert(generation);
  }
  // Not busy work: a query right after a wait for this event says idle (the
  // device conformance suite caught that race when it was).
  s->SubmitRecord([ev, generation] {
    std::vector<Completion> reached;
    {
      MutexLock lock(ev->mu);
      ev->pending.erase(generation);
      if (ev->shared != nullptr) ev->shared->MarkReached(generation);
      if (generation > ev->stamped) {  // An older record finishing late keeps the newer time.
        ev->stamped = generation;
        ev->timestamp_ns = NowNs();
      }
      for (auto it = ev->waiters.begin(); it != ev->waiters.end();) {
        if (ev->Reached(it->first)) {
          reached.push_back(std::move(it->second));
          it = ev->waiters.erase(it);
        } else {
          ++it;
        }
      }
    }
    ev->cv.notify_all();
    for (Completion& done : reached) done(Status::Ok());
  });
  return Status::Ok();
}

void SimDevice::EventSynchronizeAsync(uint64_t event, Completion done) {
  std::shared_ptr<Event> ev;
  if (Status st = FindEvent(event, &ev); !st.ok()) return done(st);
  {
    MutexLock lock(ev->mu);
    const uint64_t latest = ev->Latest();
    if (!ev->Reached(latest)) {
      if (ev->shared != nullptr) {
        // Maybe another session's record: polled on ipc_waits_.
        if (!ipc_waits_) ipc_waits_ = std::make_unique<SimStream>(ev->device, kStreamNonBlocking, 0);
        ipc_waits_->Submit([this, ev, latest, done = std::move(done)]() mutable {
          const bool reached = PollUntil(stopping_, [&] {
            MutexLock lock(ev->mu);
            return ev->Reached(latest);
          });
          ev.reset();  // Before the caller goes on: a destroy right after frees the event.
          done(reached ? TakeFault() : Status(StatusCode::kInternal, "the device is shutting down"));
        });
        return;
      }
      // The record's stream item completes it (EventRecord).
      ev->waiters.emplace(latest, [this, done = std::move(done)](Status) { done(TakeFault()); });
      return;
    }
  }
  done(TakeFault());
}

Status SimDevice::EventSynchronize(uint64_t event) { return Wait(&SimDevice::EventSynchronizeAsync, event); }

Status SimDevice::EventQuery(uint64_t event) {
  std::shared_ptr<Event> ev;
  HIPR_RETURN_IF_ERROR(FindEvent(event, &ev));
  MutexLock lock(ev->mu);
  return ev->Reached(ev->Latest()) ? Status::Ok() : Status(StatusCode::kNotReady, "event not reached yet");
}

Status SimDevice::EventElapsedTime(uint64_t start, uint64_t stop, float* milliseconds) {
  std::shared_ptr<Event> a;
  std::shared_ptr<Event> b;
  HIPR_RETURN_IF_ERROR(FindEvent(start, &a));
  HIPR_RETURN_IF_ERROR(FindEvent(stop, &b));
  if (((a->flags | b->flags) & kEventDisableTiming) != 0)
    return Status(StatusCode::kInvalidHandle, "event created with hipEventDisableTiming");
  int64_t t0 = 0;
  int64_t t1 = 0;
  // Each event under its own lock (start and stop may be one event).
  const Status sa = a->LatestTime(&t0);
  const Status sb = b->LatestTime(&t1);
  for (StatusCode worst : {StatusCode::kInvalidHandle, StatusCode::kNotReady}) {
    if (sa.code() == worst) return sa;
    if (sb.code() == worst) return sb;
  }
  *milliseconds = static_cast<float>(static_cast<double>(t1 - t0) / 1e6);
  return Status::Ok();
}

void SimDevice::DeviceSynchronizeAsync(int device, Completion done) {
  if (Status st = CheckDevice(device); !st.ok()) return done(st);
  WhenReached(StreamsOf(device, false), [this, done = std::move(done)] { done(TakeFault()); });
}

Status SimDevice::DeviceSynchronize(int device) { return Wait(&SimDevice::DeviceSynchronizeAsync, device); }

template <class Async, class... Args>
Status SimDevice::Wait(Async async, Args... args) {
  Mutex mu;
  std::condition_variable cv;
  bool finished = false;
  Status result;
  (this->*async)(args..., [&](Status st) {
    MutexLock lock(mu);
    result = std::move(st);
    finished = true;
    cv.notify_all();
  });
  MutexLock lock(mu);
  while (!finished) cv.wait(lock.native());
  return result;
}

Status SimDevice::DeviceReset(int device) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  // The device's streams, events and modules go now, in order with the
  // calls around this one (later calls refuse them; ones made after are
  // untouched); its memory is retired now (refused, counted free, not
  // handed out again) and released once every stream, of every device, has
  // finished the work queued before this: a peer copy on another device may
  // still use it. The replay does not wait: a stream may be held at a value
  // wait or a host callback that only a later frame, or nothing, releases.
  std::erase_if(retired_, [](const std::unique_ptr<SimStream>& s) { return s->Idle(); });
  for (auto it = streams_.begin(); it != streams_.end();) {
    if (it->second->device() != device) {
      ++it;
      continue;
    }
    retired_.push_back(std::move(it->second));  // Its queued work still runs, as a destroyed stream's.
    it = streams_.erase(it);
  }
  for (auto it = events_.begin(); it != events_.end();)
    it = it->second->device == device ? events_.erase(it) : std::next(it);
  for (auto it = modules_.begin(); it != modules_.end();)
    it = it->second.device == device ? modules_.erase(it) : std::next(it);
  std::vector<uint64_t> retired = memory_.RetireAll(device);
  WhenReached(StreamsOf(-1, false), [this, retired = std::move(retired)] {
    for (uint64_t a : retired) ReleaseQuietly(a);
  });
  api_.DeviceReset(device);
  return Status::Ok();
}

}  // namespace hipr::worker::sim
