// Reserved address ranges: virtual memory the client maps PROT_NONE
// (MAP_NORESERVE: no memory, no swap is committed) so that no host object can
// ever live at a device address. The offered session window is one; on a
// `hip` worker, each allocation outside the window reserves its own range.
//
// Thread-safety: the functions are stateless; a range is owned by whoever
// reserved it and must be released once.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/status.h"

namespace hipr::client {

struct AddressRange {
  uint64_t base = 0;
  uint64_t size = 0;

  bool empty() const { return size == 0; }
  uint64_t end() const { return base + size; }
  bool Contains(uint64_t addr) const { return addr >= base && addr - base < size; }
  // True when [addr, addr + len) and this range share a byte.
  bool Overlaps(uint64_t addr, uint64_t len) const {
    if (len == 0 || size == 0) return false;
    uint64_t last = addr + (len - 1);
    if (last < addr) last = UINT64_MAX;  // Wrapped: treat as reaching the top.
    return addr < end() && last >= base;
  }
};

uint64_t PageSize();

// One mapping of this process, as /proc/self/maps lists it.
struct HostMapping {
  AddressRange range;
  std::string perms;  // "rw-p"
  std::string name;   // A path, "[heap]", "/memfd:NAME (deleted)"; "" when anonymous.

  std::string Describe() const;  // "[0x.., 0x..) rw-s /memfd:hipr-shm-host (deleted)"
};

// The lowest mapping of this process that shares a byte with
// [base, base + size). False when none does or /proc/self/maps cannot be
// read.
bool FindHostMapping(uint64_t base, uint64_t size, HostMapping* out);

// The run of this process's mappings that begins with the lowest one
// sharing a byte with [base, base + size) and goes on while the gap to the
// next is under `min_gap` bytes: the addresses from there on that a device
// range needing `min_gap` bytes cannot use. False when nothing there is
// mapped or /proc/self/maps cannot be read.
bool FindHostSpan(uint64_t base, uint64_t size, uint64_t min_gap, AddressRange* span);
uint64_t RoundUpToPage(uint64_t bytes);

// Reserves `size` bytes (rounded up to pages) wherever the kernel chooses.
// kResourceExhausted when the address space cannot hold it.
Status ReserveAnywhere(uint64_t size, AddressRange* out);

// Reserves exactly [base, base + size) without disturbing any existing
// mapping (MAP_FIXED_NOREPLACE; also checked on kernels that ignore the
// flag). kFailedPrecondition when any of it is in use, kInvalidArgument when
// `base` is not page-aligned or the range wraps.
Status ReserveAt(uint64_t base, uint64_t size, AddressRange* out);

// Unmaps a range returned by Reserve*. No-op for an empty range.
void ReleaseRange(const AddressRange& range);

// Maps zero-filled read-write host memory over [base, base + size) (page
// multiples), which must lie in a range this process reserved: a managed
// allocation's mirror (managed_vars.h). kResourceExhausted when the memory
// cannot be had.
Status MapHostPages(uint64_t base, uint64_t size);

// Returns [base, base + size) (page multiples) to a reservation: no memory,
// no access. Undoes MapHostPages.
void ReserveAgain(uint64_t base, uint64_t size);

}  // namespace hipr::client
