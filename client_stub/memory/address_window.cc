#include "client_stub/memory/address_window.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000  // Linux >= 4.17; older kernels ignore it.
#endif

namespace hipr::client {
namespace {

constexpr int kReserveProt = PROT_NONE;
constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

uint64_t PageSize() {
  static const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return page;
}

uint64_t RoundUpToPage(uint64_t bytes) {
  const uint64_t page = PageSize();
  if (bytes > UINT64_MAX - (page - 1)) return UINT64_MAX & ~(page - 1);
  return (bytes + page - 1) & ~(page - 1);
}

std::string HostMapping::Describe() const {
  return "[" + Hex(range.base) + ", " + Hex(range.end()) + ") " + perms + " " + (name.empty() ? "anonymous" : name);
}

namespace {

struct MapsLine {
  uint64_t lo = 0, hi = 0;
  char perms[8] = {};
  std::string name;
};

// Every line of /proc/self/maps, in address order (as the kernel lists
// them). False when the file cannot be read.
bool ReadMaps(std::vector<MapsLine>* out) {
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    MapsLine m;
    int name_at = 0;
    if (std::sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %*s %*s %*s %n", &m.lo, &m.hi, m.perms, &name_at) < 3) continue;
    m.name = name_at > 0 ? line + name_at : "";
    while (!m.name.empty() && (m.name.back() == '\n' || m.name.back() == ' ')) m.name.pop_back();
    out->push_back(std::move(m));
  }
  std::fclose(maps);
  return true;
}

// The first line sharing a byte with [base, base + size), or lines.size().
size_t FirstOverlap(const std::vector<MapsLine>& lines, uint64_t base, uint64_t size) {
  const uint64_t end = size > UINT64_MAX - base ? UINT64_MAX : base + size;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].hi > base && lines[i].lo < end) return i;
  return lines.size();
}

}  // namespace

bool FindHostMapping(uint64_t base, uint64_t size, HostMapping* out) {
  std::vector<MapsLine> lines;
  if (!ReadMaps(&lines)) return false;
  const size_t i = FirstOverlap(lines, base, size);
  if (i == lines.size()) return false;
  out->range = AddressRange{lines[i].lo, lines[i].hi - lines[i].lo};
  out->perms = lines[i].perms;
  out->name = lines[i].name;
  return true;
}

bool FindHostSpan(uint64_t base, uint64_t size, uint64_t min_gap, AddressRange* span) {
  std::vector<MapsLine> lines;
  if (!ReadMaps(&lines)) return false;
  size_t i = FirstOverlap(lines, base, size);
  if (i == lines.size()) return false;
  uint64_t lo = lines[i].lo, hi = lines[i].hi;
  for (++i; i < lines.size() && lines[i].lo >= hi && lines[i].lo - hi < min_gap; ++i) hi = std::max(hi, lines[i].hi);
  *span = AddressRange{lo, hi - lo};
  return true;
}

Status ReserveAnywhere(uint64_t size, AddressRange* out) {
  const uint64_t len = RoundUpToPage(size);
  if (len == 0) return InvalidArgument("cannot reserve an empty range");
  void* p = mmap(nullptr, len, kReserveProt, kReserveFlags, -1, 0);
  if (p == MAP_FAILED)
    return Status(StatusCode::kResourceExhausted, "cannot reserve " + std::to_string(len) +
                                                      " bytes of address space: " +
                                                      std::strerror(errno));
  *out = AddressRange{reinterpret_cast<uint64_t>(p), len};
  return Status::Ok();
}

Status ReserveAt(uint64_t base, uint64_t size, AddressRange* out) {
  const uint64_t len = RoundUpToPage(size);
  if (len == 0 || base % PageSize() != 0 || base + len < base)
    return InvalidArgument("bad range [" + Hex(base) + ", +" + Hex(size) + ")");
  void* want = reinterpret_cast<void*>(base);
  void* p = mmap(want, len, kReserveProt, kReserveFlags | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    std::string what = std::strerror(err);
    HostMapping m;
    if (err == EEXIST && FindHostMapping(base, len, &m)) what += " (this process maps " + m.Describe() + ")";
    return Status(err == EEXIST ? StatusCode::kFailedPrecondition : StatusCode::kResourceExhausted,
                  "cannot reserve [" + Hex(base) + ", " + Hex(base + len) + "): " + what);
  }
  if (p != want) {
    // A kernel without MAP_FIXED_NOREPLACE treats the address as a hint.
    munmap(p, len);
    return Status(StatusCode::kFailedPrecondition,
                  "cannot reserve [" + Hex(base) + ", " + Hex(base + len) + "): already in use");
  }
  *out = AddressRange{base, len};
  return Status::Ok();
}

void ReleaseRange(const AddressRange& range) {
  if (range.empty()) return;
  munmap(reinterpret_cast<void*>(range.base), range.size);
}

Status MapHostPages(uint64_t base, uint64_t size) {
  void* p = mmap(reinterpret_cast<void*>(base), size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                 -1, 0);
  if (p == MAP_FAILED)
    return Status(StatusCode::kResourceExhausted,
                  "cannot map " + std::to_string(size) + " bytes of host memory at " + Hex(base) + ": " +
                      std::strerror(errno));
  return Status::Ok();
}

void ReserveAgain(uint64_t base, uint64_t size) {
  // MAP_FIXED over our own mapping: replaces it in one step, so no other
  // mapping can land in between.
  (void)mmap(reinterpret_cast<void*>(base), size, kReserveProt, kReserveFlags | MAP_FIXED, -1, 0);
}

}  // namespace hipr::client
