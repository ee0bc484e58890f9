#include "client_stub/client.h"

#include <pthread.h>

#include <algorithm>
#include <new>

#include "client_stub/abi/runtime_names.h"
#include "client_stub/base/stats.h"

namespace hipr::client {
namespace {

// Set once the client exists; read by the fork handlers (which may run before
// any HIP call was made, when it is still null).
constinit std::atomic<Client*> g_client{nullptr};

constinit thread_local int t_current_device = 0;

// HIP's initial device flags (ROCm/clr hip::Device::flags_).
constexpr unsigned kDefaultDeviceFlags = hipDeviceScheduleSpin;

}  // namespace

int CurrentDevice() { return t_current_device; }
void SetCurrentDevice(int device) { t_current_device = device; }

Client& Client::Get() {
  // Guarded, lazily run initialiser: safe from any thread and from other
  // libraries' constructors; the object is leaked on purpose.
  static Client* const client = new Client();
  return *client;
}

Client::Client() : config_(ConfigFromEnvironment()) {
  for (auto& flags : device_flags_) flags.store(kDefaultDeviceFlags, std::memory_order_relaxed);
  g_client.store(this, std::memory_order_release);
  if (config_.stats != 0) stats::PrintAtExit();
  if (int rc = pthread_atfork(&PrepareFork, &ParentAfterFork, &ChildAfterFork); rc != 0)
    HIPR_LOG_WARN("pthread_atfork failed (%d): a forked child would share the parent's session", rc);
}

Remote* Client::LiveSession() {
  Remote* s = session_.load(std::memory_order_acquire);
  if (s == nullptr) {
    MutexLock lock(open_mu_);
    s = session_.load(std::memory_order_relaxed);
    if (s == nullptr) {
      // A runtime loaded since the stub claimed its names would serve some
      // calls itself: say so once, where the first HIP work starts.
      ReportForeignRuntimes();
      s = Remote::Open(config_, &reserved_).release();  // Leaked on purpose.
      if (!s->dead()) {
        const int n = static_cast<int>(std::min<size_t>(reserved_.size(), Remote::kMaxWorkers));
        for (int i = 0; i < n; ++i) {
          window_base_[i].store(reserved_[static_cast<size_t>(i)].base, std::memory_order_relaxed);
          window_size_[i].store(reserved_[static_cast<size_t>(i)].size, std::memory_order_relaxed);
        }
        window_count_.store(n, std::memory_order_release);
      }
      session_.store(s, std::memory_order_release);
    }
  }
  return s->dead() ? nullptr : s;
}

Windows Client::windows() const {
  Windows w;
  w.count = window_count_.load(std::memory_order_acquire);
  for (int i = 0; i < w.count; ++i)
    w.at[i] = AddressRange{window_base_[i].load(std::memory_order_relaxed),
                           window_size_[i].load(std::memory_order_relaxed)};
  return w;
}

bool Windows::empty() const {
  for (int i = 0; i < count; ++i)
    if (!at[i].empty()) return false;
  return true;
}

bool Windows::Contains(uint64_t address) const {
  for (int i = 0; i < count; ++i)
    if (at[i].Contains(address)) return true;
  return false;
}

bool Windows::Holds(uint64_t address, uint64_t size) const {
  for (int i = 0; i < count; ++i)
    if (at[i].Contains(address) && size <= at[i].end() - address) return true;
  return false;
}

bool Windows::Overlaps(uint64_t address, uint64_t size) const {
  for (int i = 0; i < count; ++i)
    if (at[i].Overlaps(address, size)) return true;
  return false;
}

unsigned Client::device_flags(int device) const {
  if (device < 0 || device >= kMaxDevices) return kDefaultDeviceFlags;
  return device_flags_[device].load(std::memory_order_relaxed);
}

Client::SyncTicket Client::BeginSync(int device, uint64_t stream) {
  SyncTicket t;
  t.begun = true;
  t.device = device;
  t.stream = stream;
  t.fence = fences_.Ticket(device);
  t.ledger = ledger_.Ticket();
  t.whole = stream == kWholeDevice || (stream == 0 && !handles_.EverNonBlockingStream(device));
  if (t.whole) t.ticket = free_blocks_.BeginSync(device);
  return t;
}

void Client::EndSync(const SyncTicket& t, hipError_t result) {
  if (!t.begun || result != hipSuccess) return;
  if (t.whole) free_blocks_.EndSync(t.device, t.ticket);
  if (t.stream == kWholeDevice) handles_.SettledDevice(t.device);
  fences_.Settled(t.device, t.stream, t.fence);
  ledger_.Completed(t.device, t.stream, t.ledger);
}

void Client::ForgetDeviceState(int device) {
  for (const DeviceAllocation& a : allocations_.RemoveDevicesOf(device))
    if (a.outside_window) reservations_.Release(a.base, a.size);
  (void)free_blocks_.TakeAll(device);  // The worker freed the kept blocks with the rest.
  (void)leases_.Forget(device, nullptr);  // And returned the lease.
  fences_.Forget(device);  // Its event went with the rest.
  ledger_.Forget(device);
  handles_.RemoveAllOf(device);
}

void Client::set_device_flags(int device, unsigned flags) {
  if (device >= 0 && device < kMaxDevices) device_flags_[device].store(flags, std::memory_order_relaxed);
}

// Every lock a child could need is taken before fork() so that no other
// thread is in the middle of changing what it guards at the instant of the
// fork; the parent then releases them and the child re-creates them. No code
// path holds two of these at once, so the order here cannot deadlock.
void Client::PrepareFork() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  Client* c = g_client.load(std::memory_order_acquire);
  if (c == nullptr) return;
  c->open_mu_.lock();
  c->allocations_.LockForFork();
  c->reservations_.LockForFork();
  c->handles_.LockForFork();
  c->free_blocks_.LockForFork();
  c->leases_.LockForFork();
  c->fences_.LockForFork();
  c->ledger_.LockForFork();
}

void Client::ParentAfterFork() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  Client* c = g_client.load(std::memory_order_acquire);
  if (c == nullptr) return;
  c->ledger_.UnlockInParent();
  c->fences_.UnlockInParent();
  c->handles_.UnlockInParent();
  c->leases_.UnlockInParent();
  c->free_blocks_.UnlockInParent();
  c->reservations_.UnlockInParent();
  c->allocations_.UnlockInParent();
  c->open_mu_.unlock();
}

void Client::ChildAfterFork() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  Client* c = g_client.load(std::memory_order_acquire);
  if (c == nullptr) return;
  // The locks were taken by the parent's thread; re-create them (see
  // AllocationMap::ResetLockInChild). Only this thread exists here.
  c->handles_.ResetLockInChild();
  c->free_blocks_.ResetInChild();
  c->leases_.ResetInChild();
  c->fences_.ResetInChild();
  c->ledger_.ResetInChild();
  c->reservations_.ResetLockInChild();
  c->allocations_.ResetLockInChild();
  new (&c->open_mu_) Mutex();
  // The parent's session is the parent's: close our copy of its socket, leak
  // the object (its locks may be held by threads that do not exist here) and
  // never write to it. The child's first call opens its own session.
  if (Remote* old = c->session_.exchange(nullptr, std::memory_order_acq_rel); old != nullptr)
    old->AbandonInChild();
  // The parent's device memory, streams and events belong to its session.
  c->ForgetDeviceState(-1);
  // The windows stay reserved in the child and are offered again.
}

}  // namespace hipr::client
