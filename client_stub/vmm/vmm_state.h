// Virtual memory state of the client (hipMemAddressReserve, hipMemCreate,
// hipMemMap and the rest; api/api_vmm.cc has the entry points and the
// design): the reservations, the physical memory records behind the
// hipMemGenericAllocationHandle_t handles, and the mappings between them,
// for the live session. A handle is a PhysicalRecord's address, never freed
// and checked against `live` before use, so a stale handle is refused,
// never dereferenced.
//
// Thread-safety: every field of VmmState is guarded by its `mu`; the
// functions below that take the state REQUIRE it held.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "client_stub/session/remote.h"
#include "protocol/thread_annotations.h"

namespace hipr::client::vmm {

struct PhysicalRecord {
  const Remote* session = nullptr;
  uint64_t id = 0;  // The worker's name for it.
  uint64_t size = 0;
  hipMemAllocationProp prop{};
  int refs = 0;
  int maps = 0;
};

struct Reservation {
  uint64_t size = 0;
  bool outside_window = false;  // Its pages are held in the client's DeviceReservations.
};

struct Mapping {
  uint64_t size = 0;
  PhysicalRecord* physical = nullptr;
  std::vector<uint8_t> access;  // hipMemAccessFlags per device.
};

// The session's virtual memory. Lookups compare `session` with the live
// session: a forked child's new session starts with none.
struct VmmState {
  Mutex mu;
  const Remote* session HIPR_GUARDED_BY(mu) = nullptr;
  std::set<PhysicalRecord*> live HIPR_GUARDED_BY(mu);                // Referenced or mapped.
  std::map<uint64_t, Reservation> reservations HIPR_GUARDED_BY(mu);  // By base.
  std::map<uint64_t, Mapping> mappings HIPR_GUARDED_BY(mu);          // By base.
  uint64_t next_id HIPR_GUARDED_BY(mu) = 1;
};

// The process's state (never destroyed: exit-time calls still find it).
VmmState& State();

// Makes the state session `s`'s (forgetting another session's).
void Adopt(VmmState& st, const Remote* s) HIPR_REQUIRES(st.mu);

// The live record `handle` names, or nullptr.
PhysicalRecord* Live(VmmState& st, hipMemGenericAllocationHandle_t handle) HIPR_REQUIRES(st.mu);

// The mapping holding `address`, or end().
std::map<uint64_t, Mapping>::iterator MappingAt(VmmState& st, uint64_t address) HIPR_REQUIRES(st.mu);

// The bases of the adjacent mappings that are exactly
// [address, address + size); false when the range is anything else.
bool WholeMappings(VmmState& st, uint64_t address, uint64_t size, std::vector<uint64_t>* bases)
    HIPR_REQUIRES(st.mu);

// Tells the worker to let go of `p` once nothing references or maps it.
hipError_t MaybeRelease(VmmState& st, Remote& s, PhysicalRecord* p) HIPR_REQUIRES(st.mu);

}  // namespace hipr::client::vmm
