#include "client_stub/session/host_segment.h"

#include <sys/mman.h>
#include <unistd.h>

namespace hipr::client {
namespace {

uint64_t PageBytes() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

uint64_t RoundUp(uint64_t n) { return (n + PageBytes() - 1) / PageBytes() * PageBytes(); }

}  // namespace

HostSegment::HostSegment(uint8_t* base, uint64_t bytes) : base_(base), bytes_(bytes / PageBytes() * PageBytes()) {
  if (bytes_ > 0) free_[0] = bytes_;
}

void* HostSegment::Allocate(uint64_t bytes) {
  if (bytes == 0 || bytes > bytes_) return nullptr;
  const uint64_t n = RoundUp(bytes);
  MutexLock lock(mu_);
  for (auto it = free_.begin(); it != free_.end(); ++it) {
    if (it->second < n) continue;
    const uint64_t offset = it->first;
    const uint64_t left = it->second - n;
    free_.erase(it);
    if (left > 0) free_[offset + n] = left;
    return base_ + offset;
  }
  return nullptr;
}

void HostSegment::Free(void* p, uint64_t bytes) {
  uint64_t offset = static_cast<uint64_t>(static_cast<uint8_t*>(p) - base_);
  uint64_t n = RoundUp(bytes);
  // The pages go back to the system now; the range reads as zeros if reused.
  (void)madvise(p, n, MADV_REMOVE);
  MutexLock lock(mu_);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + n == next->first) {
    n += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += n;
      return;
    }
  }
  free_[offset] = n;
}

bool HostSegment::Contains(const void* p, uint64_t extent, uint64_t* offset) const {
  const auto* a = static_cast<const uint8_t*>(p);
  if (a < base_ || a >= base_ + bytes_) return false;
  const uint64_t off = static_cast<uint64_t>(a - base_);
  if (extent > bytes_ - off) return false;
  *offset = off;
  return true;
}

}  // namespace hipr::client
