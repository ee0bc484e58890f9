#include "protocol/rdma/mr_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>

namespace hipr::rdma {

MrCache::~MrCache() {
  MutexLock lock(mu_);
  for (auto& [start, mr] : regions_) ibv_dereg_mr(mr);
  regions_.clear();
}

Status MrCache::Find(const void* addr, size_t len, ibv_mr** out) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  MutexLock lock(mu_);
  auto it = regions_.upper_bound(a);
  if (it != regions_.begin()) {
    --it;
    const uintptr_t start = it->first;
    const uint64_t length = it->second->length;
    if (a >= start && a - start <= length && len <= length - (a - start)) {
      ++stats_.hits;
      *out = it->second;
      return Status::Ok();
    }
  }
  // Whole pages: neighbours in the same pages hit later.
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = a & ~(page - 1);
  uintptr_t last = (a + len + page - 1) & ~(page - 1);
  // Regions it overlaps are merged into it.
  for (const auto& [start, r] : regions_) {
    if (start < last && start + r->length > first) {
      first = std::min(first, start);
      last = std::max<uintptr_t>(last, start + r->length);
    }
  }
  ibv_mr* mr = ibv_reg_mr(pd_, reinterpret_cast<void*>(first), last - first, access_);
  if (mr == nullptr)
    return Status(StatusCode::kResourceExhausted,
                  "rdma: cannot register " + std::to_string(last - first) + " bytes of pinned memory: " +
                      std::strerror(errno));
  for (auto o = regions_.begin(); o != regions_.end();) {
    if (o->first < last && o->first + o->second->length > first) {
      ibv_dereg_mr(o->second);
      o = regions_.erase(o);
    } else {
      ++o;
    }
  }
  regions_.emplace(first, mr);
  ++stats_.misses;
  *out = mr;
  return Status::Ok();
}

void MrCache::Invalidate(const void* addr, size_t len) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  MutexLock lock(mu_);
  for (auto o = regions_.begin(); o != regions_.end();) {
    if (o->first < a + len && o->first + o->second->length > a) {
      ibv_dereg_mr(o->second);
      o = regions_.erase(o);
      ++stats_.invalidations;
    } else {
      ++o;
    }
  }
}

MrCache::Stats MrCache::stats() const {
  MutexLock lock(mu_);
  Stats s = stats_;
  s.regions = regions_.size();
  return s;
}

}  // namespace hipr::rdma
