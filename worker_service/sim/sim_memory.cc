#include "worker_service/sim/sim_memory.h"

#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>

namespace hipr::worker::sim {
namespace {

uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }
uint64_t RoundDown(uint64_t v, uint64_t to) { return v / to * to; }

}  // namespace

std::string SimMemory::IpcName(const std::array<uint8_t, 16>& secret) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name = "hipr-ipc-";
  for (uint8_t b : secret) {
    name += kHex[b >> 4];
    name += kHex[b & 15];
  }
  return name;
}

SimMemory::SimMemory(int device_count, uint64_t budget_per_device)
    : budget_(budget_per_device), used_(static_cast<size_t>(device_count), 0) {}

SimMemory::~SimMemory() {
  for (const auto& [base, a] : allocations_)
    if (a.ipc_fd >= 0) close(a.ipc_fd);
  for (const auto& [handle, p] : physical_) close(p.fd);
  if (window_.size != 0) {
    Remapping(window_.base, window_.size);
    munmap(reinterpret_cast<void*>(window_.base), window_.size);
  }
}

Status SimMemory::Attach(const msg::AddressWindow& offer, msg::AddressWindow* used) {
  MutexLock lock(mu_);
  if (window_.size != 0) return Status(StatusCode::kFailedPrecondition, "window already attached");
  if (offer.size == 0 || offer.size % kGranularity != 0 || offer.base % kGranularity != 0 ||
      offer.base + offer.size < offer.base)
    return InvalidArgument("malformed address window");
  // An offer at or near address 0 (where a null pointer plus an offset
  // lands) or past the user address range is never taken: counter-offer.
  const bool placeable = offer.base >= kMinWindowBase && offer.base + offer.size <= kMaxWindowEnd;
  void* want = reinterpret_cast<void*>(offer.base);
  void* got = placeable ? mmap(want, offer.size, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0)
                        : MAP_FAILED;
  if (got == MAP_FAILED || got != want) {
    if (got != MAP_FAILED) munmap(got, offer.size);  // Old kernels treat the flag as a hint.
    got = mmap(nullptr, offer.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (got != MAP_FAILED && reinterpret_cast<uint64_t>(got) < kMinWindowBase) {
      munmap(got, offer.size);  // The kernel's choice is never that low either.
      got = MAP_FAILED;
      errno = ENOMEM;
    }
    if (got == MAP_FAILED)
      return Status(StatusCode::kResourceExhausted,
                    std::string("cannot reserve the device address window: ") + std::strerror(errno));
  }
  window_ = {reinterpret_cast<uint64_t>(got), offer.size};
  free_.clear();
  free_[window_.base] = window_.size;
  *used = window_;
  return Status::Ok();
}

bool SimMemory::InWindow(const void* p, size_t n) const {
  const auto address = reinterpret_cast<uint64_t>(p);
  MutexLock lock(mu_);
  return window_.size != 0 && address >= window_.base && n <= window_.size &&
         address - window_.base <= window_.size - n;
}

void SimMemory::Remapping(uint64_t address, uint64_t size) const {
  if (forget_) forget_(reinterpret_cast<const void*>(address), size);
}

Status SimMemory::MapRange(uint64_t address, uint64_t size, bool accessible) {
  Remapping(address, size);
  void* p = mmap(reinterpret_cast<void*>(address), size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
  if (p == MAP_FAILED) return Status(StatusCode::kResourceExhausted, std::string("mmap: ") + std::strerror(errno));
  // Transparent huge pages where the kernel allows them: the first write to
  // fresh device memory (a copy straight from the socket) then faults once
  // per 2 MiB instead of once per 4 KiB. Advice only; failure is harmless.
  if (accessible && size >= (2u << 20)) (void)madvise(p, size, MADV_HUGEPAGE);
  return Status::Ok();
}

bool SimMemory::TakeRange(uint64_t size, uint64_t* base, uint64_t alignment, uint64_t hint) {
  auto carve = [&](std::map<uint64_t, uint64_t>::iterator it, uint64_t start) HIPR_REQUIRES(mu_) {
    const uint64_t free_base = it->first;
    const uint64_t free_end = it->first + it->second;
    free_.erase(it);
    if (start > free_base) free_[free_base] = start - free_base;
    if (start + size < free_end) free_[start + size] = free_end - (start + size);
    *base = start;
    return true;
  };
  if (hint != 0 && hint % alignment == 0 && hint + size > hint) {
    auto it = free_.upper_bound(hint);
    if (it != free_.begin() && hint + size <= std::prev(it)->first + std::prev(it)->second)
      return carve(std::prev(it), hint);
  }
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    const uint64_t start = RoundUp(it->first, alignment);
    const uint64_t skipped = start - it->first;
    if (skipped > it->second || it->second - skipped < size) continue;
    return carve(it, start);
  }
  return false;
}

void SimMemory::ReturnRange(uint64_t address, uint64_t size) {
  uint64_t base = address;
  uint64_t end = address + size;
  auto next = free_.lower_bound(address);
  if (next != free_.end() && next->first == end) {
    end += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == address) {
      base = prev->first;
      free_.erase(prev);
    }
  }
  free_[base] = end - base;
}

Status SimMemory::Allocate(int device, uint64_t size, uint64_t* address) {
  MutexLock lock(mu_);
  if (window_.size == 0) return Status(StatusCode::kFailedPrecondition, "no address window");
  if (device < 0 || device >= static_cast<int>(used_.size())) return Status(StatusCode::kInvalidDevice, "bad device");
  if (size == 0 || size > budget_) return Status(StatusCode::kResourceExhausted, "allocation exceeds device memory");
  uint64_t rounded = RoundUp(size, kGranularity);
  if (used_[device] + rounded > budget_)
    return Status(StatusCode::kResourceExhausted, "device memory budget exhausted");
  uint64_t base = 0;
  if (!TakeRange(rounded, &base)) return Status(StatusCode::kResourceExhausted, "device address window exhausted");
  if (Status st = ChargeLocked(rounded); !st.ok()) {
    ReturnRange(base, rounded);
    return st;
  }
  if (Status st = MapRange(base, rounded, true); !st.ok()) {
    ReturnRange(base, rounded);
    RefundLocked(rounded);
    return st;
  }
  allocations_[base] = Allocation::Of(rounded, device);
  used_[device] += rounded;
  *address = base;
  return Status::Ok();
}

Status SimMemory::Lease(int device, uint64_t need, uint64_t want, uint64_t* base, uint64_t* size) {
  MutexLock lock(mu_);
  if (window_.size == 0) return Status(StatusCode::kFailedPrecondition, "no address window");
  if (device < 0 || device >= static_cast<int>(used_.size())) return Status(StatusCode::kInvalidDevice, "bad device");
  ReturnLeaseLocked(device);
  if (need == 0 || need > budget_) return Status(StatusCode::kResourceExhausted, "lease exceeds device memory");
  want = std::min(want, budget_);
  need = RoundUp(need, kGranularity);
  want = std::max(RoundUp(want, kGranularity), need);
  if (used_[device] + need > budget_) return Status(StatusCode::kResourceExhausted, "device memory budget exhausted");
  uint64_t grant = std::min(want, RoundDown(budget_ - used_[device], kGranularity));
  // As much as the account (the worker's and the tenant's limits) allows,
  // halving down to what is needed.
  for (;;) {
    Status st = ChargeLocked(grant);
    if (st.ok()) break;
    if (grant == need) return st;
    grant = std::max(RoundUp(grant / 2, kGranularity), need);
  }
  uint64_t start = 0;
  while (!TakeRange(grant, &start)) {
    RefundLocked(grant);
    if (grant == need) return Status(StatusCode::kResourceExhausted, "device address window exhausted");
    grant = std::max(RoundUp(grant / 2, kGranularity), need);
    if (Status st = ChargeLocked(grant); !st.ok()) return st;
  }
  used_[device] += grant;
  leased_[start] = LeaseRange{grant, device};
  if (account_ != nullptr) account_->Leased(static_cast<int64_t>(grant));
  *base = start;
  *size = grant;
  return Status::Ok();
}

Status SimMemory::Place(int device, uint64_t address, uint64_t size) {
  MutexLock lock(mu_);
  const uint64_t rounded = RoundUp(size, kGranularity);
  auto it = leased_.upper_bound(address);
  if (size == 0 || rounded < size || it == leased_.begin())
    return InvalidArgument("not inside this session's memory lease");
  --it;
  const uint64_t lease_base = it->first;
  const LeaseRange range = it->second;
  // (address >= lease_base here; compared without overflow, as a hostile
  // client may name any address.)
  if (range.device != device || address % kGranularity != 0 || address - lease_base >= range.size ||
      rounded > range.size - (address - lease_base))
    return InvalidArgument("not inside this session's memory lease of that device");
  if (Status st = MapRange(address, rounded, true); !st.ok()) return st;
  leased_.erase(it);
  if (address > lease_base) leased_[lease_base] = LeaseRange{address - lease_base, device};
  if (address + rounded < lease_base + range.size)
    leased_[address + rounded] = LeaseRange{lease_base + range.size - (address + rounded), device};
  allocations_[address] = Allocation::Of(rounded, device);  // Charged and counted when leased.
  if (account_ != nullptr) account_->Leased(-static_cast<int64_t>(rounded));
  return Status::Ok();
}

void SimMemory::ReturnLease(int device) {
  MutexLock lock(mu_);
  ReturnLeaseLocked(device);
}

void SimMemory::ReturnLeaseLocked(int device) {
  for (auto it = leased_.begin(); it != leased_.end();) {
    if (it->second.device != device) {
      ++it;
      continue;
    }
    used_[device] -= it->second.size;
    RefundLocked(it->second.size);
    if (account_ != nullptr) account_->Leased(-static_cast<int64_t>(it->second.size));
    ReturnRange(it->first, it->second.size);  // Never mapped: PROT_NONE as the rest of the window.
    it = leased_.erase(it);
  }
}

Status SimMemory::Export(uint64_t address, Exported* out) {
  MutexLock lock(mu_);
  auto it = allocations_.upper_bound(address);
  if (it == allocations_.begin() || address >= std::prev(it)->first + std::prev(it)->second.size)
    return Status(StatusCode::kInvalidDevicePointer, "not device memory of this session");
  --it;
  Allocation& a = it->second;
  if (a.retired) return Status(StatusCode::kInvalidDevicePointer, "the allocation has been freed");
  if (a.imported) return InvalidArgument("memory opened from an IPC handle cannot be exported again");
  if (a.vmm) return InvalidArgument("mapped virtual memory is shared through its physical memory's handle");
  if (a.ipc_fd < 0) {
    std::array<uint8_t, 16> secret{};
    if (getrandom(secret.data(), secret.size(), 0) != static_cast<ssize_t>(secret.size()))
      return Status(StatusCode::kInternal, std::string("getrandom: ") + std::strerror(errno));
    const std::string name = IpcName(secret);
    int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
    if (fd < 0) return Status(StatusCode::kResourceExhausted, std::string("memfd_create: ") + std::strerror(errno));
    void* copy = MAP_FAILED;
    if (ftruncate(fd, static_cast<off_t>(a.size)) == 0)
      copy = mmap(nullptr, a.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (copy == MAP_FAILED) {
      const int err = errno;
      close(fd);
      return Status(StatusCode::kResourceExhausted, std::string("IPC export: ") + std::strerror(err));
    }
    std::memcpy(copy, reinterpret_cast<void*>(it->first), a.size);
    munmap(copy, a.size);
    Remapping(it->first, a.size);
    if (mmap(reinterpret_cast<void*>(it->first), a.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
        MAP_FAILED) {
      // The old pages are still mapped (MAP_FIXED failed before replacing them).
      const int err = errno;
      close(fd);
      return Status(StatusCode::kResourceExhausted, std::string("IPC export: mmap: ") + std::strerror(err));
    }
    a.ipc_fd = fd;
    a.secret = secret;
  }
  *out = Exported{a.ipc_fd, it->first, a.size, a.secret};
  return Status::Ok();
}

Status SimMemory::Import(int device, int fd, uint64_t size, uint64_t* address) {
  MutexLock lock(mu_);
  if (window_.size == 0) return Status(StatusCode::kFailedPrecondition, "no address window");
  if (device < 0 || device >= static_cast<int>(used_.size())) return Status(StatusCode::kInvalidDevice, "bad device");
  if (size == 0 || size % kGranularity != 0) return InvalidArgument("IPC memory of a size no allocation has");
  // Opened memory is this session's while mapped: it keeps the exporter's
  // pages alive, so it counts against this device, tenant and worker.
  if (size > budget_ || used_[device] + size > budget_)
    return Status(StatusCode::kResourceExhausted, "device memory budget exhausted");
  uint64_t base = 0;
  if (!TakeRange(size, &base)) return Status(StatusCode::kResourceExhausted, "device address window exhausted");
  if (Status st = ChargeLocked(size); !st.ok()) {
    ReturnRange(base, size);
    return st;
  }
  Remapping(base, size);
  if (mmap(reinterpret_cast<void*>(base), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    const int err = errno;
    ReturnRange(base, size);
    RefundLocked(size);
    return Status(StatusCode::kResourceExhausted, std::string("IPC open: mmap: ") + std::strerror(err));
  }
  Allocation a = Allocation::Of(size, device);
  a.imported = true;
  allocations_[base] = a;
  used_[device] += size;
  *address = base;
  return Status::Ok();
}

Status SimMemory::CloseImport(uint64_t base) {
  MutexLock lock(mu_);
  auto it = allocations_.find(base);
  if (it == allocations_.end() || !it->second.imported || it->second.retired)
    return InvalidArgument("not memory opened from an IPC handle in this session");
  it->second.retired = true;  // Release() unmaps it; free from now on, as after hipFree.
  used_[it->second.device] -= it->second.size;
  RefundLocked(it->second.size);
  return Status::Ok();
}

Status SimMemory::Retire(uint64_t address) {
  MutexLock lock(mu_);
  auto it = allocations_.find(address);
  if (it == allocations_.end() || it->second.retired)
    return Status(StatusCode::kInvalidDevicePointer, "not the start of an allocation of this session");
  if (it->second.imported)
    return Status(StatusCode::kInvalidDevicePointer, "memory opened from an IPC handle is closed, not freed");
  if (it->second.vmm)
    return Status(StatusCode::kInvalidDevicePointer, "mapped virtual memory is unmapped (hipMemUnmap), not freed");
  it->second.retired = true;
  // Counted as free from now on, as hipMemGetInfo right after hipFree shows
  // it natively; the pages go at Release().
  used_[it->second.device] -= it->second.size;
  RefundLocked(it->second.size);
  return Status::Ok();
}

Status SimMemory::Release(uint64_t address, int* device) {
  MutexLock lock(mu_);
  auto it = allocations_.find(address);
  if (it == allocations_.end() || it->second.vmm)
    return Status(StatusCode::kInvalidDevicePointer, "not the start of an allocation of this session");
  const uint64_t size = it->second.size;
  *device = it->second.device;
  if (!it->second.retired) {
    used_[it->second.device] -= size;
    RefundLocked(size);
  }
  const int fd = it->second.ipc_fd;
  allocations_.erase(it);
  // Sessions that opened an exported allocation keep its pages (their own
  // mapping of the memfd); this one lets go of them.
  Status st = MapRange(address, size, false);
  if (fd >= 0) close(fd);
  HIPR_RETURN_IF_ERROR(st);
  ReturnRange(address, size);
  return Status::Ok();
}

std::vector<uint64_t> SimMemory::RetireAll(int device) {
  MutexLock lock(mu_);
  ReturnLeaseLocked(device);
  std::vector<uint64_t> bases;
  for (auto& [base, a] : allocations_) {
    if (a.device != device || a.vmm || a.retired) continue;
    used_[a.device] -= a.size;
    RefundLocked(a.size);
    a.retired = true;
    bases.push_back(base);
  }
  return bases;
}

void SimMemory::ReleaseAll(int device) {
  std::vector<uint64_t> mine;
  {
    MutexLock lock(mu_);
    ReturnLeaseLocked(device);
    // Virtual memory outlives a device reset (its reservations and physical
    // memory are the process's, as in HIP); it goes with the session.
    for (const auto& [base, a] : allocations_)
      if (a.device == device && !a.vmm) mine.push_back(base);
  }
  int ignored;
  for (uint64_t base : mine) (void)Release(base, &ignored);
}

Status SimMemory::ChargeLocked(uint64_t bytes) {
  return account_ == nullptr ? Status::Ok() : account_->Charge(bytes);
}

void SimMemory::RefundLocked(uint64_t bytes) {
  if (account_ != nullptr) account_->Refund(bytes);
}

uint64_t SimMemory::Used(int device) const {
  MutexLock lock(mu_);
  return used_.at(device);
}

Status SimMemory::Check(const msg::Region& r, int* device, bool write) const {
  if (r.height == 0 || r.width == 0) return Status::Ok();
  if (r.height > 1 && r.pitch < r.width) return InvalidArgument("pitch smaller than width");
  // extent = (height-1)*pitch + width, and address + extent, all without
  // wrapping (a wrapped extent would look small and pass the bounds test).
  if (r.height > 1 && (r.height - 1) > (UINT64_MAX - r.width) / r.pitch)
    return Status(StatusCode::kInvalidDevicePointer, "region wraps around");
  uint64_t extent = r.height > 1 ? (r.height - 1) * r.pitch + r.width : r.width;
  if (r.address + extent < r.address) return Status(StatusCode::kInvalidDevicePointer, "region wraps around");
  const uint64_t last = r.address + extent;
  MutexLock lock(mu_);
  auto it = allocations_.upper_bound(r.address);
  if (it == allocations_.begin() || r.address >= std::prev(it)->first + std::prev(it)->second.size)
    return Status(StatusCode::kInvalidDevicePointer, "address is not device memory of this session");
  --it;
  if (it->second.retired) return Status(StatusCode::kInvalidDevicePointer, "the allocation has been freed");
  const int owner = it->second.device;
  uint64_t end = it->first + it->second.size;
  // Virtual memory: the region may go on into adjacent mappings, each of
  // which must grant the access.
  while (it->second.vmm) {
    if ((it->second.prot & (write ? PROT_WRITE : PROT_READ)) == 0)
      return Status(StatusCode::kInvalidDevicePointer,
                    write ? "mapped memory without write access (hipMemSetAccess)"
                          : "mapped memory without access (hipMemSetAccess)");
    if (last <= end) break;
    auto next = std::next(it);
    // A retired mapping (an unmap waiting for queued work) takes no more.
    if (next == allocations_.end() || next->first != end || !next->second.vmm || next->second.retired) break;
    it = next;
    end += it->second.size;
  }
  if (last > end) return Status(StatusCode::kInvalidDevicePointer, "region runs past the end of its allocation");
  if (device != nullptr) *device = owner;
  return Status::Ok();
}

const std::pair<const uint64_t, uint64_t>* SimMemory::ReservationOf(uint64_t address, uint64_t size) const {
  auto it = reservations_.upper_bound(address);
  if (it == reservations_.begin()) return nullptr;
  --it;
  if (address + size < address || address + size > it->first + it->second) return nullptr;
  return &*it;
}

bool SimMemory::WholeMappings(uint64_t address, uint64_t size, std::vector<uint64_t>* bases, bool retired_too) const {
  if (size == 0 || address + size < address) return false;
  uint64_t at = address;
  for (auto it = allocations_.find(address); at < address + size; ++it) {
    if (it == allocations_.end() || it->first != at || !it->second.vmm) return false;
    if (it->second.retired && !retired_too) return false;
    bases->push_back(at);
    at += it->second.size;
  }
  return at == address + size;
}

void SimMemory::MaybeDropPhysical(uint64_t handle) {
  auto it = physical_.find(handle);
  if (it == physical_.end() || !it->second.released || it->second.maps > 0) return;
  close(it->second.fd);
  used_[it->second.device] -= it->second.size;
  RefundLocked(it->second.size);
  physical_.erase(it);
}

Status SimMemory::Reserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* base) {
  MutexLock lock(mu_);
  if (window_.size == 0) return Status(StatusCode::kFailedPrecondition, "no address window");
  if (size == 0 || size % kGranularity != 0)
    return InvalidArgument("a reservation is a whole number of granules (" + std::to_string(kGranularity) + " bytes)");
  if ((alignment & (alignment - 1)) != 0) return InvalidArgument("alignment is not a power of two");
  alignment = std::max(alignment, kGranularity);
  if (alignment > window_.size || !TakeRange(size, base, alignment, hint))
    return Status(StatusCode::kResourceExhausted, "device address window exhausted");
  reservations_[*base] = size;
  return Status::Ok();
}

Status SimMemory::FreeReservation(uint64_t base, uint64_t size) {
  MutexLock lock(mu_);
  auto it = reservations_.find(base);
  if (it == reservations_.end()) return InvalidArgument("not the start of an address reservation of this session");
  if (it->second != size) return InvalidArgument("a reservation is freed whole (" + std::to_string(it->second) + " bytes)");
  auto mapped = allocations_.lower_bound(base);
  if (mapped != allocations_.end() && mapped->first < base + size)
    return InvalidArgument("memory is still mapped in the reservation (hipMemUnmap first)");
  reservations_.erase(it);
  ReturnRange(base, size);
  return Status::Ok();
}

Status SimMemory::CreatePhysical(int device, uint64_t handle, uint64_t size) {
  MutexLock lock(mu_);
  if (device < 0 || device >= static_cast<int>(used_.size())) return Status(StatusCode::kInvalidDevice, "bad device");
  if (physical_.count(handle) != 0) return InvalidArgument("physical memory handle already in use");
  if (size == 0 || size % kGranularity != 0)
    return InvalidArgument("physical memory is a whole number of granules (" + std::to_string(kGranularity) + " bytes)");
  if (size > budget_ || used_[device] + size > budget_)
    return Status(StatusCode::kResourceExhausted, "device memory budget exhausted");
  HIPR_RETURN_IF_ERROR(ChargeLocked(size));
  Physical p;
  p.size = size;
  p.device = device;
  if (getrandom(p.secret.data(), p.secret.size(), 0) != static_cast<ssize_t>(p.secret.size())) {
    RefundLocked(size);
    return Status(StatusCode::kInternal, std::string("getrandom: ") + std::strerror(errno));
  }
  p.fd = memfd_create(IpcName(p.secret).c_str(), MFD_CLOEXEC);
  if (p.fd < 0) {
    RefundLocked(size);
    return Status(StatusCode::kResourceExhausted, std::string("memfd_create: ") + std::strerror(errno));
  }
  if (ftruncate(p.fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    close(p.fd);
    RefundLocked(size);
    return Status(StatusCode::kResourceExhausted, std::string("physical memory: ") + std::strerror(err));
  }
  physical_[handle] = p;
  used_[device] += size;
  return Status::Ok();
}

Status SimMemory::ReleasePhysical(uint64_t handle) {
  MutexLock lock(mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end() || it->second.released)
    return InvalidArgument("not physical memory of this session (or released already)");
  it->second.released = true;
  MaybeDropPhysical(handle);
  return Status::Ok();
}

Status SimMemory::ExportPhysical(uint64_t handle, Exported* out) {
  MutexLock lock(mu_);
  auto it = physical_.find(handle);
  if (it == physical_.end() || it->second.released)
    return InvalidArgument("not physical memory of this session (or released already)");
  if (it->second.imported) return InvalidArgument("imported physical memory cannot be exported again");
  *out = Exported{it->second.fd, 0, it->second.size, it->second.secret};
  return Status::Ok();
}

Status SimMemory::ImportPhysical(int device, uint64_t handle, int fd, uint64_t size) {
  MutexLock lock(mu_);
  if (device < 0 || device >= static_cast<int>(used_.size())) return Status(StatusCode::kInvalidDevice, "bad device");
  if (physical_.count(handle) != 0) return InvalidArgument("physical memory handle already in use");
  if (size == 0 || size % kGranularity != 0) return InvalidArgument("physical memory of a size none has");
  // As opened IPC memory: this session's while it holds the handle.
  if (size > budget_ || used_[device] + size > budget_)
    return Status(StatusCode::kResourceExhausted, "device memory budget exhausted");
  HIPR_RETURN_IF_ERROR(ChargeLocked(size));
  Physical p;
  p.fd = fd;
  p.size = size;
  p.device = device;
  p.imported = true;
  physical_[handle] = p;
  used_[device] += size;
  return Status::Ok();
}

Status SimMemory::Map(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle) {
  MutexLock lock(mu_);
  auto p = physical_.find(handle);
  if (p == physical_.end() || p->second.released)
    return InvalidArgument("not physical memory of this session (or released already)");
  if (offset != 0) return InvalidArgument("physical memory is mapped from offset 0");
  if (size == 0 || size % kGranularity != 0 || address % kGranularity != 0)
    return InvalidArgument("a mapping is a whole number of granules at a granule boundary");
  if (size > p->second.size) return InvalidArgument("the mapping is larger than the physical memory");
  if (ReservationOf(address, size) == nullptr) return InvalidArgument("the range is not inside one address reservation");
  auto after = allocations_.lower_bound(address);
  const bool overlaps = (after != allocations_.end() && after->first < address + size) ||
                        (after != allocations_.begin() &&
                         std::prev(after)->first + std::prev(after)->second.size > address);
  if (overlaps) return InvalidArgument("part of the range is mapped already");
  Remapping(address, size);
  if (mmap(reinterpret_cast<void*>(address), size, PROT_NONE, MAP_SHARED | MAP_FIXED, p->second.fd, 0) == MAP_FAILED)
    return Status(StatusCode::kResourceExhausted, std::string("map: mmap: ") + std::strerror(errno));
  Allocation a = Allocation::Of(size, p->second.device);
  a.vmm = true;
  a.physical = handle;
  a.prot = PROT_NONE;
  a.access.assign(used_.size(), 0);
  allocations_[address] = a;
  ++p->second.maps;
  return Status::Ok();
}

Status SimMemory::RetireMappings(uint64_t address, uint64_t size) {
  MutexLock lock(mu_);
  std::vector<uint64_t> bases;
  if (!WholeMappings(address, size, &bases)) return InvalidArgument("the range is not whole mappings");
  for (uint64_t base : bases) allocations_.at(base).retired = true;
  return Status::Ok();
}

Status SimMemory::Unmap(uint64_t address, uint64_t size) {
  MutexLock lock(mu_);
  std::vector<uint64_t> bases;
  if (!WholeMappings(address, size, &bases, true)) return InvalidArgument("the range is not whole mappings");
  Status result = Status::Ok();
  for (uint64_t base : bases) {
    auto it = allocations_.find(base);
    const uint64_t physical = it->second.physical;
    // Back to reserved, PROT_NONE pages of the window.
    if (Status st = MapRange(base, it->second.size, false); !st.ok()) result = st;
    allocations_.erase(it);
    auto p = physical_.find(physical);
    if (p != physical_.end()) --p->second.maps;
    MaybeDropPhysical(physical);
  }
  return result;
}

Status SimMemory::SetAccess(uint64_t address, uint64_t size, std::span<const msg::VmmAccess> access) {
  MutexLock lock(mu_);
  if (access.empty()) return InvalidArgument("no access descriptor");
  for (const msg::VmmAccess& d : access) {
    if (d.device < 0 || d.device >= static_cast<int>(used_.size()))
      return Status(StatusCode::kInvalidDevice, "access for a device that does not exist");
    if (d.flags != 0 && d.flags != 1 && d.flags != 3) return InvalidArgument("unknown access flags");
  }
  std::vector<uint64_t> bases;
  if (!WholeMappings(address, size, &bases)) return InvalidArgument("the range is not whole mappings");
  for (uint64_t base : bases) {
    Allocation& a = allocations_.at(base);
    for (const msg::VmmAccess& d : access) a.access[static_cast<size_t>(d.device)] = static_cast<uint8_t>(d.flags);
    const uint8_t widest = *std::max_element(a.access.begin(), a.access.end());
    const int prot = widest == 3 ? PROT_READ | PROT_WRITE : widest == 1 ? PROT_READ : PROT_NONE;
    if (prot != a.prot) Remapping(base, a.size);
    if (mprotect(reinterpret_cast<void*>(base), a.size, prot) != 0)
      return Status(StatusCode::kInternal, std::string("mprotect: ") + std::strerror(errno));
    a.prot = prot;
  }
  return Status::Ok();
}

}  // namespace hipr::worker::sim
