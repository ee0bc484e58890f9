#include "client_stub/memory/free_blocks.h"

#include <algorithm>
#include <new>

namespace hipr::client {

bool FreeBlocks::Keep(int device, const KeptBlock& block) {
  MutexLock lock(mu_);
  if (disabled_ || block.size == 0) return false;
  Device& d = devices_[device];
  if (block.size > limit_ || d.bytes > limit_ - block.size) return false;
  KeptBlock kept = block;
  kept.device = device;
  d.by_size.emplace(block.size, Kept{kept, ++d.frees});
  d.bytes += block.size;
  return true;
}

bool FreeBlocks::Take(int device, uint64_t size, KeptBlock* out) {
  MutexLock lock(mu_);
  auto dev = devices_.find(device);
  if (dev == devices_.end()) return false;
  Device& d = dev->second;
  auto [first, last] = d.by_size.equal_range(size);
  for (auto it = first; it != last; ++it) {
    if (it->second.ticket > d.settled) continue;  // Work queued before its free may still run.
    *out = it->second.block;
    d.bytes -= size;
    d.by_size.erase(it);
    return true;
  }
  return false;
}

uint64_t FreeBlocks::BeginSync(int device) {
  MutexLock lock(mu_);
  auto dev = devices_.find(device);
  return dev == devices_.end() ? 0 : dev->second.frees;
}

void FreeBlocks::EndSync(int device, uint64_t ticket) {
  MutexLock lock(mu_);
  auto dev = devices_.find(device);
  if (dev != devices_.end()) dev->second.settled = std::max(dev->second.settled, ticket);
}

std::vector<KeptBlock> FreeBlocks::TakeAll(int device) {
  std::vector<KeptBlock> all;
  MutexLock lock(mu_);
  for (auto& [id, d] : devices_) {
    if (device >= 0 && id != device) continue;
    for (const auto& [size, kept] : d.by_size) all.push_back(kept.block);
    d.by_size.clear();
    d.bytes = 0;
  }
  return all;
}

void FreeBlocks::ResetInChild() {
  new (&mu_) Mutex();
  devices_.clear();
  disabled_ = true;
}

}  // namespace hipr::client
