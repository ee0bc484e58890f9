// Client: the single process-wide state of the stub — Config, the session,
// the allocation map, the stream/event handles and the reserved device
// window. Created on first use (Get()), from whatever thread or constructor
// calls HIP first, and deliberately never destroyed: the application, the
// loader and other libraries may call HIP during exit.
//
// The session is opened lazily by the first call that needs the worker and
// at most once per process: a worker that cannot be reached leaves a dead
// session, and every later call fails fast with hipErrorNoDevice.
//
// fork(): the child abandons the parent's session (closes its copy of the
// socket, never writes to it), forgets the parent's device allocations,
// streams and events, keeps the pinned host allocations and the reserved
// window (both are its own memory now), and opens its own session on its
// first HIP call that needs one.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "protocol/thread_annotations.h"
#include "client_stub/memory/address_window.h"
#include "client_stub/memory/allocation_map.h"
#include "client_stub/base/config.h"
#include "client_stub/memory/device_reservations.h"
#include "client_stub/memory/free_blocks.h"
#include "client_stub/memory/memory_leases.h"
#include "client_stub/session/handle_table.h"
#include "client_stub/session/remote.h"
#include "client_stub/session/stream_fences.h"
#include "client_stub/session/stream_ledger.h"

namespace hipr::client {

// The device address windows of the workers' sessions, one per worker (an
// empty one where a worker places memory itself): a snapshot.
struct Windows {
  AddressRange at[Remote::kMaxWorkers];
  int count = 0;

  // No worker has one.
  bool empty() const;
  bool Contains(uint64_t address) const;
  // [address, address + size) lies inside one window.
  bool Holds(uint64_t address, uint64_t size) const;
  bool Overlaps(uint64_t address, uint64_t size) const;
};

class Client {
 public:
  // The process-wide client, created on the first call.
  static Client& Get();

  const Config& config() const { return config_; }

  // The workers' sessions (session/remote.h), opened on first use; nullptr
  // when no worker can be reached or every session has ended (already
  // logged). Blocks while they are being opened (at most the connect plus
  // peer timeouts of each).
  Remote* LiveSession();

  // The device address windows the sessions use; empty until they have
  // been opened successfully.
  Windows windows() const;

  AllocationMap& allocations() { return allocations_; }
  DeviceReservations& reservations() { return reservations_; }
  HandleTable& handles() { return handles_; }
  FreeBlocks& free_blocks() { return free_blocks_; }
  MemoryLeases& leases() { return leases_; }
  StreamFences& fences() { return fences_; }
  StreamLedger& ledger() { return ledger_; }

  // A synchronising call on (device, stream) is about to be sent; stream
  // kWholeDevice: hipDeviceSynchronize. Where it waits for every stream of
  // the device (the whole device, or the null stream where the device never
  // had a non-blocking stream), EndSync after its success lets the blocks
  // freed before it be reused (memory/free_blocks.h); it ends the stream
  // fence it covers (session/stream_fences.h), and the work it waited for
  // counts as seen complete (session/stream_ledger.h).
  static constexpr uint64_t kWholeDevice = StreamFences::kWholeDevice;
  struct SyncTicket {
    bool begun = false;  // Made by BeginSync (EndSync of a default one does nothing).
    int device = 0;
    uint64_t stream = 0;
    bool whole = false;
    uint64_t ticket = 0;
    uint64_t fence = 0;
    uint64_t ledger = 0;
  };
  SyncTicket BeginSync(int device, uint64_t stream);
  void EndSync(const SyncTicket& t, hipError_t result);

  // Forgets the device allocations, streams and events of `device` (all
  // devices when < 0) after the worker dropped them (hipDeviceReset), and
  // releases the pages reserved for them.
  void ForgetDeviceState(int device);

  // Per-device flags of hipSetDeviceFlags (devices beyond kMaxDevices keep
  // the default).
  static constexpr int kMaxDevices = 256;
  unsigned device_flags(int device) const;
  void set_device_flags(int device, unsigned flags);

 private:
  Client();
  static void PrepareFork();
  static void ParentAfterFork();
  static void ChildAfterFork();

  const Config config_;
  AllocationMap allocations_;
  DeviceReservations reservations_;
  HandleTable handles_;
  FreeBlocks free_blocks_{config_.free_block_bytes};
  MemoryLeases leases_{config_.malloc_lease_bytes};
  StreamFences fences_;
  StreamLedger ledger_;

  Mutex open_mu_;                      // Serializes opening the session.
  std::atomic<Remote*> session_{nullptr};  // Leaked; replaced only in a forked child.
  std::vector<AddressRange> reserved_ HIPR_GUARDED_BY(open_mu_);  // The windows held, one per worker.
  std::atomic<int> window_count_{0};
  std::atomic<uint64_t> window_base_[Remote::kMaxWorkers] = {};
  std::atomic<uint64_t> window_size_[Remote::kMaxWorkers] = {};
  std::atomic<unsigned> device_flags_[kMaxDevices];
};

// The calling thread's current device (hipSetDevice); 0 until set.
int CurrentDevice();
void SetCurrentDevice(int device);

}  // namespace hipr::client
