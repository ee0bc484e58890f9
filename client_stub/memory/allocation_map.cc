#include "client_stub/memory/allocation_map.h"

#include <iterator>
#include <mutex>

namespace hipr::client {
namespace {

// End of the address range an allocation occupies.
uint64_t ExtentEnd(const DeviceAllocation& a) { return a.base + a.size; }
uint64_t ExtentEnd(const PinnedAllocation& a) { return a.base + a.mapped_size; }

// The entry whose [base, base + size) contains p, or end().
template <class Map>
typename Map::const_iterator Containing(const Map& m, uint64_t p) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  --it;
  return p - it->second.base < it->second.size ? it : m.end();
}

template <class Map>
typename Map::iterator Containing(Map& m, uint64_t p) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  --it;
  return p - it->second.base < it->second.size ? it : m.end();
}

// True when every byte of [p, p + n) lies in `a` (p itself for n == 0).
template <class A>
bool Holds(const A& a, uint64_t p, uint64_t n) {
  uint64_t offset = p - a.base;
  return p >= a.base && offset < a.size && n <= a.size - offset;
}

// True when [base, base + size) shares an address with any entry's extent.
template <class Map>
bool OverlapsAny(const Map& m, uint64_t base, uint64_t size) {
  uint64_t len = size == 0 ? 1 : size;
  uint64_t last = base + (len - 1);
  if (last < base) last = UINT64_MAX;
  auto it = m.lower_bound(base);
  if (it != m.end() && it->second.base <= last) return true;
  if (it == m.begin()) return false;
  --it;
  return ExtentEnd(it->second) > base;
}

}  // namespace

bool AllocationMap::AddDevice(const DeviceAllocation& a) {
  if (a.size == 0 || a.base + a.size < a.base) return false;
  WriterLock lock(mu_);
  if (OverlapsAny(device_, a.base, a.size))
    return false;
  device_.emplace(a.base, a);
  return true;
}

bool AllocationMap::FindDevice(uint64_t p, uint64_t n, DeviceAllocation* out) const {
  ReaderLock lock(mu_);
  auto it = Containing(device_, p);
  if (it == device_.end()) return false;
  DeviceAllocation run = it->second;
  // Virtual memory: on through adjacent mappings while the range goes on.
  for (auto next = std::next(it); !Holds(run, p, n); ++next) {
    if (!run.vmm || next == device_.end() || next->first != run.base + run.size || !next->second.vmm) return false;
    run.size += next->second.size;
  }
  *out = run;
  return true;
}

bool AllocationMap::RemoveDevice(uint64_t p, DeviceAllocation* removed) {
  WriterLock lock(mu_);
  auto it = Containing(device_, p);
  if (it == device_.end()) return false;
  *removed = it->second;
  device_.erase(it);
  return true;
}

bool AllocationMap::TouchesDevice(uint64_t p, uint64_t n) const {
  ReaderLock lock(mu_);
  return OverlapsAny(device_, p, n);
}

std::vector<DeviceAllocation> AllocationMap::RemoveDevicesOf(int device) {
  std::vector<DeviceAllocation> out;
  WriterLock lock(mu_);
  for (auto it = device_.begin(); it != device_.end();) {
    if (device < 0 || (it->second.device == device && !it->second.vmm)) {
      out.push_back(it->second);
      it = device_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

bool AllocationMap::AddPinned(const PinnedAllocation& a) {
  if (a.size == 0 || a.mapped_size < a.size) return false;
  WriterLock lock(mu_);
  if (OverlapsAny(pinned_, a.base, a.mapped_size)) return false;
  pinned_.emplace(a.base, a);
  return true;
}

bool AllocationMap::FindPinned(uint64_t p, uint64_t n, PinnedAllocation* out) const {
  ReaderLock lock(mu_);
  auto it = Containing(pinned_, p);
  if (it == pinned_.end() || !Holds(it->second, p, n)) return false;
  *out = it->second;
  return true;
}

bool AllocationMap::RemovePinned(uint64_t p, PinnedAllocation* removed) {
  WriterLock lock(mu_);
  auto it = Containing(pinned_, p);
  if (it == pinned_.end()) return false;
  *removed = it->second;
  pinned_.erase(it);
  return true;
}

bool AllocationMap::MarkIpcExported(uint64_t p) {
  WriterLock lock(mu_);
  auto it = Containing(device_, p);
  if (it == device_.end()) return false;
  it->second.ipc_exported = true;
  return true;
}

bool AllocationMap::SetSyncMemops(uint64_t p, bool value) {
  WriterLock lock(mu_);
  if (auto it = Containing(device_, p); it != device_.end()) {
    it->second.sync_memops = value;
    return true;
  }
  if (auto it = Containing(pinned_, p); it != pinned_.end()) {
    it->second.sync_memops = value;
    return true;
  }
  return false;
}

size_t AllocationMap::device_count() const {
  ReaderLock lock(mu_);
  return device_.size();
}

size_t AllocationMap::pinned_count() const {
  ReaderLock lock(mu_);
  return pinned_.size();
}

}  // namespace hipr::client
