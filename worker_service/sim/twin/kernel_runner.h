// KernelRunner: runs a grid of a twin kernel on the host.
//
// Blocks run in parallel on a pool of OS threads (one per host core,
// started on the first launch so that a process which never launches, or
// forks before launching, has no threads), plus the launching thread
// itself. All threads of one block run as fibers on one OS thread: each GPU
// thread is one fiber with its own stack, __syncthreads() switches to the
// next fiber, and the barrier opens once every thread of the block that has
// not exited has reached it. Stacks come from a per-OS-thread pool reused
// across launches (fiber.h: mmap(MAP_NORESERVE) regions mapped on demand;
// only pages a thread touches cost memory). A thread that finishes without
// waiting hands its stack to the next, so a kernel that never synchronises
// uses one stack per OS thread.
//
// Cooperative launches (hipLaunchCooperativeKernel and the like): every
// block of the grid runs at once, each on an OS thread of its own (the
// launching thread runs block 0; "resident" threads, started when a grid
// first needs them and kept for later cooperative grids, run the others),
// so that grid_group::sync() can be a barrier across the grid
// (grid_barrier.h): a block arrives once all of its threads that have not
// exited wait there. One cooperative grid runs at a time; ordinary grids go
// on beside it on the pool. Every GPU thread of a cooperative grid holds its
// fiber stack until its block ends, so a device-filling grid (as many
// blocks as the device holds at once; the caller refuses larger ones, see
// CooperativeBlockLimit in models.h) costs a few KiB of touched stack per
// GPU thread. A grid_group::sync() in a launch that is not cooperative (on
// a GPU: undefined, it hangs) stops the kernel: its blocks are abandoned
// where they are and Launch fails naming the kernel and the thread.
//
// Thread-safety: Launch may be called concurrently from several threads
// (e.g. one per sim stream); their blocks share the pool.
//
// Failure: Launch validates before running anything and returns a Status;
// once running, a grid always completes. A fault inside twin code (bad
// pointer, assert, __trap) kills the process (the session process on the
// worker), as a GPU fault ends a HIP program; a SIGSEGV or SIGBUS is
// first reported with the kernel, block, thread and address (twin_fault.h).
// Dynamic shared memory ends at an inaccessible page, so an access past it
// is such a fault. kStackBytes is far above the
// private memory a gfx90a work-item can have, but host frames are larger
// and deep recursion can overflow it; an overflow is caught by a canary
// when the thread ends (the process is ended with a message naming the
// kernel) unless the frames skip over it, in which case it may corrupt the
// block's other stacks first.
#pragma once

#include <array>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "protocol/status.h"
#include "worker_service/sim/twin/twin_catalog.h"

namespace hipr::worker::sim {

class KernelRunner {
 public:
  static constexpr uint32_t kMaxBlockThreads = 1024;
  // LDS of the MI-series devices the sim models.
  static constexpr uint32_t kMaxDynamicSharedBytes = 64 * 1024;
  // Stack of each GPU thread (fiber).
  static constexpr size_t kStackBytes = 256 * 1024;

  // `pool_threads` 0: one per host core.
  explicit KernelRunner(unsigned pool_threads = 0);
  ~KernelRunner();  // Joins the pool. REQUIRES: no Launch in progress.
  KernelRunner(const KernelRunner&) = delete;
  KernelRunner& operator=(const KernelRunner&) = delete;

  // Runs the whole grid of `kernel` and returns when every thread has
  // finished. `grid` is in blocks, `block` in threads; `kernarg` holds the
  // explicit arguments as the code object's metadata lays them out (it must
  // cover the kernel's explicit arguments) and device pointers in it are
  // dereferenced directly. On success `printf_output` (if not null) is set
  // to the text the launch's device printf calls produced (also when the
  // kernel failed).
  // kInvalidArgument: a zero dimension, a block over kMaxBlockThreads, more
  // than 2^32 blocks, dynamic shared memory over kMaxDynamicSharedBytes, or
  // a kernarg buffer too short. kFailedPrecondition: a variable of the
  // kernel's module is not bound. The kernel's module must outlive the call.
  // `global`, when not all zero, is the size in work-items: the last block
  // of a dimension then holds only global - (grid-1)*block threads, and
  // its blockDim says so (kInvalidArgument unless the global size ends in
  // the last block).
  // `cooperative`: every block at once (see above); the caller has checked
  // that the device could hold the grid. kResourceExhausted when an OS
  // thread for a block cannot be started (nothing has run then).
  // kFailedPrecondition: the kernel called grid_group::sync() in a launch
  // that is not cooperative (the grid was stopped there).
  Status Launch(const TwinKernel& kernel, std::array<uint32_t, 3> grid, std::array<uint32_t, 3> block,
                uint32_t dynamic_shared_bytes, std::span<const uint8_t> kernarg, std::string* printf_output,
                std::array<uint32_t, 3> global = {}, bool cooperative = false);

  unsigned pool_threads() const { return pool_size_; }
  // Resident threads started so far for cooperative grids.
  size_t resident_threads() const;

  // The OS stack of a resident thread: blocks run on fiber stacks, so the
  // thread's own stack only holds the scheduler.
  static constexpr size_t kResidentStackBytes = 1 << 20;

 private:
  struct Grid;
  struct Resident;
  Status RunCooperative(Grid* grid);
  // Starts resident threads until there are `count`.
  Status GrowResidentsLocked(uint64_t count) HIPR_REQUIRES(coop_mu_);
  static void* ResidentMain(void* arg);
  void StartPoolLocked() HIPR_REQUIRES(mu_);
  void PoolMain();
  // Claims up to a chunk of `grid`'s blocks; false when none is left.
  bool ClaimLocked(Grid* grid, uint64_t* first, uint64_t* count) HIPR_REQUIRES(mu_);
  void RunBlocks(Grid* grid, uint64_t first, uint64_t count);
  void FinishBlocksLocked(Grid* grid, uint64_t count) HIPR_REQUIRES(mu_);

  const unsigned pool_size_;
  Mutex mu_;
  std::condition_variable work_cv_;
  std::deque<Grid*> grids_ HIPR_GUARDED_BY(mu_);  // Grids with unclaimed blocks.
  bool stopping_ HIPR_GUARDED_BY(mu_) = false;
  std::vector<std::thread> threads_ HIPR_GUARDED_BY(mu_);  // Empty until the first launch.
  // Held for the whole of a cooperative launch. Lock order: coop_mu_, mu_.
  mutable Mutex coop_mu_;
  std::vector<std::unique_ptr<Resident>> residents_ HIPR_GUARDED_BY(coop_mu_);
};

}  // namespace hipr::worker::sim
