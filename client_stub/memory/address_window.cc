#include "client_stub/memory/address_window.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

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
    return Status(err == EEXIST ? StatusCode::kFailedPrecondition : StatusCode::kResourceExhausted,
                  "cannot reserve [" + Hex(base) + ", " + Hex(base + len) + "): " + std::strerror(err));
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
