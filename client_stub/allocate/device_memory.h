// Device memory as the client records it: allocating through the worker
// and placing what it returns in this process's address space (inside the
// session window, or outside it with its pages reserved so that nothing
// else of the process lands there).
//
// Thread-safety: as Client and Remote; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <hip/hip_runtime_api.h>

#include "client_stub/client.h"

namespace hipr::client {

// Whose an allocation is: the application's (hipFree frees it), or a
// module's, a HIP array's or a graph's (hipFree refuses it).
enum class AllocationRole { kPlain, kModuleGlobal, kArray, kGraph };

// Allocates `size` (> 0) bytes of device memory on `device`: plain memory
// (flags 0, AllocationRole::kPlain) first from the blocks the program freed
// (memory/free_blocks.h), then from the device's lease
// (memory/memory_leases.h), with no round trip; else AllocateFromWorker,
// and when the worker is out of memory while blocks are kept or a lease is
// held, again after giving them back. hipMalloc's path.
hipError_t AllocateDevice(Client& c, Remote& s, int device, size_t size, uint32_t flags, AllocationRole role,
                          void** out);

// Out of memory on `device` while blocks are kept or part of a lease is
// unplaced: gives them back (ReleaseKept) and waits, up to 2 s, until the
// worker has released them, so that asking again sees their memory. False
// when there was nothing to give back (asking again would not help).
bool GiveBackKept(Client& c, Remote& s, int device);

// Frees on the worker every block kept for reuse on `device` (all when
// < 0), gives back the unplaced rest of its lease, and returns their bytes:
// before hipMemGetInfo, which then reports what the worker does once queued
// work has run, as after any hipFree; and on out of memory.
uint64_t ReleaseKept(Client& c, Remote& s, int device);

// Allocates `size` (> 0) bytes of device memory on `device` through the
// worker (MallocRequest with `flags`, e.g. msg::kMallocManaged) and records
// it in c's allocation map, reserving its pages when it lies outside the
// session window; an address that collides with this process's memory is
// set aside, that memory's addresses reserved on the device where it can
// (FenceOffHostMapping), and another requested (up to 8 times).
hipError_t AllocateFromWorker(Client& c, Remote& s, int device, size_t size, uint32_t flags, AllocationRole role,
                              void** out);

// After the device range [collided, collided + size) came back overlapping
// this process's memory: asks the worker to reserve bare device address
// space (hipMemAddressReserve at a hint) from `from` up to the end of the
// host mapping found there, rounded to the VMM granularity, so that the
// device allocator's next address lies past the mapping. The reservation
// lasts as long as the session. True when the worker reserved exactly that
// range; false when there is nothing to fence, the device cannot reserve
// address space (HIP 5.2) or part of the range is in use (nothing kept).
bool FenceOffHostMapping(Remote& s, int device, uint64_t collided, uint64_t size, uint64_t from);

// Whether a device allocation at [address, address + size) can be used
// here: inside the session window, or outside it with its pages reserved
// now (*outside_window). False when it collides with this process's memory,
// with what it collided with in *why (when not null).
bool PlaceAllocation(Client& c, uint64_t address, uint64_t size, bool* outside_window, std::string* why = nullptr);

// hipMallocPitch's row pitch for rows of `width` bytes on `device` (also
// the rows of HIP arrays): the device's texture alignment (256 on every AMD
// GPU), so each row starts where a texture row may. 0 when no such row fits
// in size_t.
size_t RowPitch(const Remote& s, int device, size_t width);

}  // namespace hipr::client
