#include "worker_service/sim/twin/grid_barrier.h"

namespace hipr::worker::sim {

uint64_t GridBarrier::ArriveAndWait() {
  MutexLock lock(mu_);
  const uint64_t generation = generation_;
  if (++arrived_ == members_) {
    OpenLocked();
  } else {
    while (generation_ == generation) opened_.wait(lock.native());
  }
  return generation;
}

void GridBarrier::Leave() {
  MutexLock lock(mu_);
  --members_;
  if (arrived_ != 0 && arrived_ == members_) OpenLocked();
}

uint64_t GridBarrier::members() const {
  MutexLock lock(mu_);
  return members_;
}

void GridBarrier::OpenLocked() {
  arrived_ = 0;
  ++generation_;
  opened_.notify_all();
}

}  // namespace hipr::worker::sim
