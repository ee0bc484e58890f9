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
  for (auto& [start, r] : regions_) ibv_dereg_mr(r.mr);
  for (auto& [mr, holds] : retired_) ibv_dereg_mr(mr);
  regions_.clear();
  retired_.clear();
}

void MrCache::Drop(const Region& r) {
  if (r.holds > 0)
    retired_.emplace(r.mr, r.holds);
  else
    ibv_dereg_mr(r.mr);
}

Status MrCache::FindLocked(const void* addr, size_t len, Region** out) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  auto it = regions_.upper_bound(a);
  if (it != regions_.begin()) {
    --it;
    const uintptr_t start = it->first;
    const uint64_t length = it->second.mr->length;
    if (a >= start && a - start <= length && len <= length - (a - start)) {
      ++stats_.hits;
      *out = &it->second;
      return Status::Ok();
    }
  }
  // Whole pages: neighbours in the same pages hit later.
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  uintptr_t first = a & ~(page - 1);
  uintptr_t last = (a + len + page - 1) & ~(page - 1);
  // Regions it overlaps are merged into it.
  for (const auto& [start, r] : regions_) {
    if (start < last && start + r.mr->length > first) {
      first = std::min(first, start);
      last = std::max<uintptr_t>(last, start + r.mr->length);
    }
  }
  ibv_mr* mr = ibv_reg_mr(pd_, reinterpret_cast<void*>(first), last - first, access_);
  if (mr == nullptr)
    return Status(StatusCode::kResourceExhausted,
                  "rdma: cannot register " + std::to_string(last - first) + " bytes of pinned memory: " +
                      std::strerror(errno));
  for (auto o = regions_.begin(); o != regions_.end();) {
    if (o->first < last && o->first + o->second.mr->length > first) {
      Drop(o->second);
      o = regions_.erase(o);
    } else {
      ++o;
    }
  }
  auto [pos, inserted] = regions_.emplace(first, Region{mr, 0});
  ++stats_.misses;
  *out = &pos->second;
  return Status::Ok();
}

Status MrCache::Find(const void* addr, size_t len, ibv_mr** out) {
  MutexLock lock(mu_);
  Region* r = nullptr;
  HIPR_RETURN_IF_ERROR(FindLocked(addr, len, &r));
  *out = r->mr;
  return Status::Ok();
}

Status MrCache::Hold(const void* addr, size_t len, ibv_mr** out) {
  MutexLock lock(mu_);
  Region* r = nullptr;
  HIPR_RETURN_IF_ERROR(FindLocked(addr, len, &r));
  ++r->holds;
  *out = r->mr;
  return Status::Ok();
}

void MrCache::Release(ibv_mr* mr) {
  MutexLock lock(mu_);
  auto it = regions_.find(reinterpret_cast<uintptr_t>(mr->addr));
  if (it != regions_.end() && it->second.mr == mr) {
    --it->second.holds;
    return;
  }
  auto r = retired_.find(mr);
  if (r != retired_.end() && --r->second == 0) {
    ibv_dereg_mr(mr);
    retired_.erase(r);
  }
}

void MrCache::Invalidate(const void* addr, size_t len) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  MutexLock lock(mu_);
  for (auto o = regions_.begin(); o != regions_.end();) {
    if (o->first < a + len && o->first + o->second.mr->length > a) {
      Drop(o->second);
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
