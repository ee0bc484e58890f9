#include "client_stub/memory/device_reservations.h"

#include "client_stub/memory/address_window.h"

namespace hipr::client {

DeviceReservations::Span DeviceReservations::SpanOf(uint64_t addr, uint64_t size) {
  const uint64_t page = PageSize();
  Span s;
  s.first_page = addr & ~(page - 1);
  s.last_page = (addr + (size == 0 ? 0 : size - 1)) & ~(page - 1);
  if (s.last_page > s.first_page + page) {
    s.interior_begin = s.first_page + page;
    s.interior_end = s.last_page;
  }
  return s;
}

Status DeviceReservations::Reserve(uint64_t addr, uint64_t size) {
  if (size == 0 || addr + size < addr) return InvalidArgument("bad device range");
  const uint64_t page = PageSize();
  const Span s = SpanOf(addr, size);
  MutexLock lock(mu_);
  // Edge pages first (shared ones just gain a user), then the interior.
  uint64_t edges[2] = {s.first_page, s.last_page};
  const int edge_count = s.last_page == s.first_page ? 1 : 2;
  int taken = 0;
  Status st;
  for (; taken < edge_count; ++taken) {
    auto it = edge_pages_.find(edges[taken]);
    if (it != edge_pages_.end()) {
      ++it->second;
      continue;
    }
    AddressRange r;
    st = ReserveAt(edges[taken], page, &r);
    if (!st.ok()) break;
    edge_pages_.emplace(edges[taken], 1);
  }
  if (st.ok() && s.interior_end > s.interior_begin) {
    AddressRange r;
    st = ReserveAt(s.interior_begin, s.interior_end - s.interior_begin, &r);
    if (st.ok()) interiors_.emplace(s.interior_begin, s.interior_end);
  }
  if (!st.ok()) {
    for (int i = 0; i < taken; ++i) UnrefPageLocked(edges[i]);
  }
  return st;
}

void DeviceReservations::Release(uint64_t addr, uint64_t size) {
  if (size == 0) return;
  const Span s = SpanOf(addr, size);
  MutexLock lock(mu_);
  UnrefPageLocked(s.first_page);
  if (s.last_page != s.first_page) UnrefPageLocked(s.last_page);
  if (s.interior_end > s.interior_begin && interiors_.erase(s.interior_begin) != 0)
    ReleaseRange(AddressRange{s.interior_begin, s.interior_end - s.interior_begin});
}

void DeviceReservations::UnrefPageLocked(uint64_t page) {
  auto it = edge_pages_.find(page);
  if (it == edge_pages_.end()) return;
  if (--it->second == 0) {
    ReleaseRange(AddressRange{page, PageSize()});
    edge_pages_.erase(it);
  }
}

bool DeviceReservations::Overlaps(uint64_t addr, uint64_t len) const {
  if (len == 0) len = 1;
  uint64_t last = addr + (len - 1);
  if (last < addr) last = UINT64_MAX;
  const uint64_t page = PageSize();
  MutexLock lock(mu_);
  // Edge pages: any page in [floor(addr), floor(last)].
  auto e = edge_pages_.lower_bound(addr & ~(page - 1));
  if (e != edge_pages_.end() && e->first <= last) return true;
  // Interiors: the one starting at or before `last` whose end is past addr.
  auto i = interiors_.upper_bound(last);
  if (i == interiors_.begin()) return false;
  --i;
  return i->second > addr;
}

size_t DeviceReservations::shared_page_count() const {
  MutexLock lock(mu_);
  return edge_pages_.size();
}

}  // namespace hipr::client
