// ManagedVars: managed memory, the one place where device data is
// dereferenced directly by host code: `__managed__` variables and
// hipMallocManaged allocations.
//
// How clang lowers `__managed__ T x = init;` (checked on Debian's hipcc 5.2):
// the code object holds `x.managed` (T, the initial bytes) and `x`, a device
// pointer variable; host code reads and writes through a host pointer
// variable that `__hipRegisterManagedVar(module, &ptr, &init, "x", size,
// align)` must fill in a constructor, with no HIP call before the first
// access. The runtime allocates managed memory, copies `init` into it and,
// when the module is loaded, stores the allocation's address in the device
// variable `x`.
//
// hipr cannot hand the client a device address it can dereference, so each
// piece of managed memory has two copies:
//  * the mirror, in client memory, which host code reads and writes freely.
//    A variable's is allocated at registration with the initial bytes, and
//    the registered pointer points at it for the life of the process. An
//    allocation's (hipMallocManaged, AddAllocation) is anonymous memory the
//    client maps at the device address itself, over the address range it
//    keeps reserved, so the one pointer works on both sides;
//  * the device copy: a managed allocation (msg::kMallocManaged) on the
//    worker. A variable's is made when its module is first loaded in a
//    session, and every load of the module (any device) gets its `x` set to
//    it; an allocation's is the allocation.
//
// They are synchronised where native HIP makes the other side's writes
// visible, on a device without concurrent managed access (the model of
// CUDA before Pascal: host code must not touch managed memory while device
// work that may use it runs):
//  * before device work that may read managed memory (Push: a kernel or
//    graph launch reads all of it; a copy or stream-memory operation, the
//    range it reads): each mirror whose bytes differ from those last
//    exchanged with the device sends the changed span, with a blocking copy
//    on the work's stream, so the bytes are in place before this and any
//    later work on any stream;
//  * device work that may write managed memory (MarkWritten: launches all
//    of it, copies and memsets their destination) records its (device,
//    stream) on the mirrors concerned;
//  * after a synchronising call on (device, stream) succeeded (AfterSync:
//    hipDeviceSynchronize, hipStreamSynchronize, hipEventSynchronize, a
//    query answering hipSuccess, a blocking copy), every mirror written
//    from that stream (stream 0: from any stream of the device) is read
//    back. A byte the device changed replaces the mirror's; a byte only host
//    code changed meanwhile is kept (and pushed before the next work).
// A kernel argument that points into a variable's mirror (e.g.
// `kernel<<<..>>>(&x)`) is rewritten to the device copy, for the explicit
// pointer arguments (`global_buffer` in the metadata); a mirror address
// hidden inside a struct argument is not translated (documented in
// docs/architecture.md). Allocations need no translation.
//
// Which bytes changed is found without passing over whole copies where the
// kernel can tell (protocol/write_watch.h: Linux 6.7's asynchronous write
// protection): an allocation's mirror is watched, so a push compares only
// the pages host code wrote since the last one; the worker's device copies
// are watched by devices that can (the sim), so a read-back
// (kCopyChangedFromDevice) brings only the pages device work wrote. Where
// either side cannot tell, it compares or sends the whole copy, which is
// always right. `__managed__` variables' mirrors (heap memory) are always
// compared.
//
// Cost: nothing for a process without managed memory; otherwise, per
// device operation that may read managed memory, a page scan (or a memcmp)
// of every mirror against the bytes last exchanged (which are kept:
// managed memory costs twice its size in the client) and a round trip when
// host code changed some; at each synchronisation after device work, a
// round trip that brings the pages written.
//
// Thread-safety: all methods may be called from any thread (one mutex,
// which is never held while a module is loaded). fork(): the child keeps the
// mirrors (its own memory) and materialises new device copies of the
// variables in its own session; allocations are the parent session's.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "protocol/thread_annotations.h"
#include "protocol/write_watch.h"
#include "client_stub/client.h"
#include "client_stub/session/managed_hooks.h"
#include "client_stub/session/remote.h"
#include "protocol/status.h"

namespace hipr::client {

class CodeModule;
struct ModuleLoad;


// Where device work that may have written a device copy was queued.
struct ManagedWriter {
  int device = 0;
  uint64_t stream = 0;
  bool operator==(const ManagedWriter&) const = default;
};

// hipMemAdvise's and hipMemPrefetchAsync's records for an allocation
// (hipMemRangeGetAttribute reports them). Devices: hipInvalidDeviceId (-2)
// none, hipCpuDeviceId (-1) the host.
struct ManagedAdvice {
  bool read_mostly = false;
  int preferred_location = -2;
  std::vector<int> accessed_by;
  int last_prefetch = -2;
  bool coarse_grain = false;
};

// One piece of managed memory: a registered `__managed__` variable or a
// hipMallocManaged allocation. Variables are never freed (host code may
// hold the mirror's address until exit); allocations live until hipFree.
struct ManagedVar {
  CodeModule* module = nullptr;  // nullptr: an allocation.
  std::string name;  // A variable's device pointer variable's name in the code object.
  size_t size = 0;
  uint8_t* mirror = nullptr;
  // From here on, under the lock of ManagedVars (mu_), which owns the records.
  std::vector<uint8_t> exchanged;  // The bytes last sent to or read from the device copy.
  const Remote* session = nullptr;  // Where the device copy lives; nullptr: none yet.
  uint64_t device_address = 0;
  int device = 0;  // Where it was allocated.
  std::vector<ManagedWriter> writers;  // Since the last read-back.
  // An allocation's mirror watched by ManagedVars::watch_: only the pages
  // written since the last push are compared. False: all of it is.
  bool watched = false;
  ManagedAdvice advice;                // Allocations only.
  bool allocation() const { return module == nullptr; }
};

// One per process, owned by the API edge (api/process_state.h), which hands
// it to launches, copies and graph launches as their ManagedHooks.
class ManagedVars final : public ManagedHooks {
 public:
  ManagedVars() = default;
  ManagedVars(const ManagedVars&) = delete;
  ManagedVars& operator=(const ManagedVars&) = delete;

  // fork(): the lock is held across it. The child's copy of the lock is
  // owned by a thread that does not exist there, so it is re-created; device
  // copies are keyed by session, so the child's new session makes its own.
  void LockForFork();
  void UnlockInParent();
  void ResetInChild();

  // __hipRegisterManagedVar: allocates the mirror (aligned to `align`,
  // zero-filled past `size`), copies `init` into it and records the variable
  // for `module`. nullptr when the memory cannot be had.
  ManagedVar* Register(CodeModule* module, std::string name, const void* init, size_t size, size_t align);

  // A module with managed variables was loaded in `session` on `device`:
  // allocates the device copies not yet made in this session (sending the
  // mirrors' bytes) and stores their addresses in the load's pointer
  // variables. Blocks (one kMalloc round trip per new variable). An error
  // fails the load.
  Status Attach(Client& client, Remote& session, int device, const ModuleLoad& load,
                const std::vector<ManagedVar*>& vars);

  // Before a launch on (device, stream) in `session`: pushes changed
  // mirrors, marks every mirror written from that stream, and rewrites
  // explicit pointer arguments that point into a variable's mirror.
  // `pointer_offsets` are the kernarg offsets of 8-byte global_buffer
  // arguments. Loads the module of a variable referenced that way when it
  // has no device copy yet.
  Status BeforeLaunch(Client& client, Remote& session, int device, uint64_t stream,
                      const std::vector<uint32_t>& pointer_offsets, std::vector<uint8_t>* kernarg) override;

  // Device work on (device, stream) is about to read [p, p + n) (p nullptr:
  // anything): sends the changed spans of the mirrors concerned, each with a
  // blocking copy on the device's exchange stream (below). Errors are logged
  // and returned.
  Status Push(Client& client, Remote& session, int device, uint64_t stream, const void* p = nullptr,
              uint64_t n = 0) override;

  // Device work on (device, stream) may write [p, p + n) (p nullptr:
  // anything): the mirrors concerned are read back at the next
  // synchronisation that covers that stream.
  void MarkWritten(const Remote& session, int device, uint64_t stream, const void* p = nullptr,
                   uint64_t n = 0) override;

  // After a synchronising call on (device, stream) (stream 0: that device's
  // null stream, which hipr takes as the whole device) returned success:
  // reads back, on the device's exchange stream, the device copies written
  // from it. With ReadBack::kInStreamOrder, before a blocking copy, the
  // read-back goes on `stream` instead and so waits for its earlier work
  // (for the null stream: the device's blocking streams'). Errors are
  // logged and returned.
  Status AfterSync(Client& client, Remote& session, int device, uint64_t stream,
                   ReadBack order = ReadBack::kAfterSync) override;

  // hipMallocManaged: records the allocation at `address` on `device`,
  // whose mirror the caller has mapped at the same address (zero-filled,
  // as the device copy must be).
  Status AddAllocation(Remote& session, int device, uint64_t address, size_t size);

  // hipFree of an allocation's base address: forgets it. False when
  // `address` is no allocation's base. `*size` is its size.
  bool RemoveAllocation(uint64_t address, size_t* size);

  // hipDeviceReset dropped `device`'s memory (every device when < 0): the
  // variables' device copies made there are gone (the next load makes new
  // ones); the allocations made there are forgotten and returned as
  // (address, size), for the caller to unmap their mirrors.
  std::vector<std::pair<uint64_t, size_t>> ForgetDevice(const Remote* session, int device);

  // The managed memory containing [p, p + n), or nullptr. The record stays
  // valid while it is not freed (variables: always).
  const ManagedVar* FindMirror(const void* p, size_t n) const;

  // Whether [p, p + n) shares a byte with any managed memory.
  bool Touches(const void* p, uint64_t n) const override;

  // Runs `fn` on the allocation containing [p, p + n) under the lock;
  // false when there is none.
  bool WithAllocation(const void* p, uint64_t n, const std::function<void(ManagedVar&)>& fn);

  bool empty() const override { return count_.load(std::memory_order_acquire) == 0; }

 private:
  // Sends the span of `var`'s mirror that changed since the last exchange,
  // with a blocking copy on `device`'s exchange stream. REQUIRES mu_.
  Status PushLocked(Client& client, Remote& session, ManagedVar& var, int device) HIPR_REQUIRES(mu_);
  // The exchange stream of (session, device): a non-blocking stream of
  // hipr's own, made at first use (and again after hipDeviceReset), that
  // carries the mirrors' pushes and read-backs. Never on the work's stream:
  // a read-back there would wait for work queued after the synchronisation
  // it follows, and a stream held at a host callback (which may itself touch
  // managed memory, and so need mu_) would hold this lock with it. What a
  // host access does on a GPU, it does at once. REQUIRES mu_.
  Status ExchangeStreamLocked(Client& client, Remote& session, int device, uint64_t* id) HIPR_REQUIRES(mu_);
  ManagedVar* FindLocked(uint64_t address) const HIPR_REQUIRES(mu_);
  // Whether `var` holds a byte of [p, p + n) (p nullptr: always; n 0: p's byte).
  static bool Overlaps(const ManagedVar& var, const void* p, uint64_t n);
  static std::string Describe(const ManagedVar& var);
  static void Merge(uint8_t* mirror, const uint8_t* exchanged, const uint8_t* now, size_t size);
  // Reads `var`'s device copy back on stream `exchange` and merges it in:
  // only the runs the worker reports written where it can (copy_changed),
  // else all of it. REQUIRES mu_.
  Status ReadBackLocked(Remote& session, ManagedVar& var, int device, uint64_t exchange) HIPR_REQUIRES(mu_);

  mutable Mutex mu_;
  std::vector<ManagedVar*> vars_ HIPR_GUARDED_BY(mu_);
  struct ExchangeStream {
    const Remote* session = nullptr;
    int device = 0;
    void* handle = nullptr;  // A hipStream_t of the handle table.
  };
  std::vector<ExchangeStream> exchange_streams_ HIPR_GUARDED_BY(mu_);
  std::atomic<size_t> count_{0};     // vars_.size(), readable without the lock.
  // Which pages of allocations' mirrors host code wrote
  // (protocol/write_watch.h): opened at the first allocation; null where
  // the kernel offers none (then every push compares whole mirrors).
  std::unique_ptr<WriteWatch> watch_ HIPR_GUARDED_BY(mu_);
  bool watch_tried_ HIPR_GUARDED_BY(mu_) = false;
};


}  // namespace hipr::client
