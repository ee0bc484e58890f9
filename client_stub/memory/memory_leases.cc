#include "client_stub/memory/memory_leases.h"

#include <new>

namespace hipr::client {

bool MemoryLeases::Carve(Lease& l, uint64_t size, uint64_t* address, uint64_t* rounded) {
  const uint64_t g = l.granularity;
  if (size > UINT64_MAX - g) return false;
  const uint64_t r = (size + g - 1) / g * g;
  if (l.next >= l.end || r > l.end - l.next) return false;
  *address = l.next;
  *rounded = r;
  return true;
}

bool MemoryLeases::Allocate(int device, uint64_t size, const Ask& ask, const Place& place, uint64_t* address) {
  MutexLock lock(mu_);
  if (disabled_ || lease_bytes_ == 0 || size == 0 || size >= lease_bytes_) return false;
  if (++asked_[device] == 1) return false;  // The first: no lease yet.
  uint64_t rounded = 0;
  auto it = leases_.find(device);
  if (it == leases_.end() || !Carve(it->second, size, address, &rounded)) {
    // A new lease; the worker gives back the rest of the old one first.
    if (it != leases_.end()) leases_.erase(it);
    LeaseGrant g;
    if (!ask(size, lease_bytes_, &g) || g.granularity == 0 || g.size < size || g.base > UINT64_MAX - g.size)
      return false;
    it = leases_.emplace(device, Lease{g.base, g.base + g.size, g.granularity}).first;
    if (!Carve(it->second, size, address, &rounded)) return false;
  }
  if (!place(*address, size)) {
    leases_.erase(it);
    return false;
  }
  it->second.next += rounded;
  return true;
}

uint64_t MemoryLeases::Forget(int device, const std::function<void(int device)>& give_back) {
  MutexLock lock(mu_);
  uint64_t bytes = 0;
  for (auto it = leases_.begin(); it != leases_.end();) {
    if (device >= 0 && it->first != device) {
      ++it;
      continue;
    }
    const uint64_t rest = it->second.end > it->second.next ? it->second.end - it->second.next : 0;
    if (rest > 0 && give_back) give_back(it->first);
    bytes += rest;
    it = leases_.erase(it);
  }
  return bytes;
}

bool MemoryLeases::Holds(uint64_t address, uint64_t size) const {
  MutexLock lock(mu_);
  const uint64_t end = size > UINT64_MAX - address ? UINT64_MAX : address + size;
  for (const auto& [device, l] : leases_)
    if (l.next < l.end && address < l.end && l.next < end) return true;
  return false;
}

void MemoryLeases::ResetInChild() {
  new (&mu_) Mutex();
  leases_.clear();
  asked_.clear();
  disabled_ = true;
}

}  // namespace hipr::client
