// GridBarrier: the grid-wide barrier of a cooperative launch on the sim
// (grid_group::sync() in twin code, HiprTwinServices::grid_sync).
//
// Its members are the blocks of one grid, each run by its own OS thread
// (kernel_runner.h). A block arrives once every one of its threads that has
// not exited waits at the grid barrier; the barrier opens when every block
// still running has arrived. A block whose threads have all exited leaves
// (on a GPU such a grid hangs; the sim goes on, as its __syncthreads counts
// only the threads that have not exited).
//
// Memory: the barrier is a full fence between the blocks. Whatever a block
// wrote before it arrived happens-before whatever any block does after the
// barrier opens (the arrivals and departures synchronise through one mutex).
//
// Thread-safety: every method may be called from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>

#include "protocol/thread_annotations.h"

namespace hipr::worker::sim {

class GridBarrier {
 public:
  // `members`: the blocks of the grid. REQUIRES: members > 0.
  explicit GridBarrier(uint64_t members) : members_(members) {}
  GridBarrier(const GridBarrier&) = delete;
  GridBarrier& operator=(const GridBarrier&) = delete;

  // Arrives and blocks until every member that has not left has arrived.
  // Returns the number of times the barrier had opened before this one.
  uint64_t ArriveAndWait();
  // A member that will never arrive again (its block has ended); opens the
  // barrier if every other member is waiting.
  void Leave();

  uint64_t members() const;  // Those that have not left.

 private:
  void OpenLocked() HIPR_REQUIRES(mu_);

  mutable Mutex mu_;
  std::condition_variable opened_;
  uint64_t members_ HIPR_GUARDED_BY(mu_);
  uint64_t arrived_ HIPR_GUARDED_BY(mu_) = 0;
  uint64_t generation_ HIPR_GUARDED_BY(mu_) = 0;
};

}  // namespace hipr::worker::sim
