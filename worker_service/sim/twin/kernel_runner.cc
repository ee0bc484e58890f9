#include "worker_service/sim/twin/kernel_runner.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <semaphore>

#include "worker_service/sim/twin/fiber.h"
#include "worker_service/sim/twin/grid_barrier.h"
#include "worker_service/sim/twin/twin_fault.h"

namespace hipr::worker::sim {

// One launch in flight. Lives on the launching thread's stack; the pool
// only touches it between claiming a chunk and reporting that chunk done.
struct KernelRunner::Grid {
  const HiprTwinKernel* kernel = nullptr;
  const char* display_name = nullptr;  // For fault reports (twin_fault.h).
  const HiprTwinThread** (*current_thread)() = nullptr;
  HiprTwinDim3 grid_dim{};
  HiprTwinDim3 block_dim{};
  // The last block's size in each dimension (== block_dim unless the global
  // size leaves it partial).
  HiprTwinDim3 last_block_dim{};
  uint32_t threads_per_block = 0;
  uint32_t dynamic_shared_bytes = 0;
  const uint8_t* kernarg = nullptr;
  std::vector<void*> variables;
  uint64_t total_blocks = 0;
  uint64_t chunk = 1;
  uint64_t next_block = 0;  // GUARDED_BY(KernelRunner::mu_)
  uint64_t done_blocks = 0;  // GUARDED_BY(KernelRunner::mu_)
  std::condition_variable done_cv;
  bool cooperative = false;
  GridBarrier* barrier = nullptr;  // A cooperative grid's.
  // Set when a block stops the grid (a grid-wide sync outside a cooperative
  // launch): blocks not yet done are abandoned.
  std::atomic<bool> stopped{false};
  Mutex output_mu;
  std::string output HIPR_GUARDED_BY(output_mu);
  std::string failure HIPR_GUARDED_BY(output_mu);  // Why it stopped.

  void Stop(std::string why) {
    MutexLock lock(output_mu);
    if (failure.empty()) failure = std::move(why);
    stopped.store(true, std::memory_order_relaxed);
  }
};

// A thread that runs one block of each cooperative grid it is given.
struct KernelRunner::Resident {
  KernelRunner* runner = nullptr;
  pthread_t thread{};
  std::binary_semaphore go{0};
  // Written before `go` is released; null then means: end.
  Grid* grid = nullptr;
  uint64_t block = 0;
};

namespace {

// Runs blocks on the OS thread that owns it: the threads of a block as
// fibers, switched at barriers and exits. One per OS thread (thread_local),
// reused by every launch that thread works on.
class BlockExecutor {
 public:
  // Sized for the largest block run so far (resident threads of
  // cooperative grids are many, their blocks often small).
  BlockExecutor() : stacks_(KernelRunner::kStackBytes, KernelRunner::kMaxBlockThreads), shared_(MapShared()) {}
  ~BlockExecutor() { munmap(shared_, SharedMappingBytes()); }

  template <typename GridT>
  void Run(GridT* grid, uint64_t block_linear);

 private:
  struct Fiber {
    FiberContext context;
    void* stack = nullptr;
    bool done = false;
    // Waiting at a warp operation (WarpMeet): where, and what it offers.
    bool at_warp = false;
    uint64_t warp_site = 0;
    uint64_t warp_value = 0;
    bool at_grid = false;  // Waiting at the grid barrier (GridSync).
  };
  static constexpr uint32_t kWave = HIPR_TWIN_WAVEFRONT_SIZE;
  static constexpr uint32_t kMaxWaves = KernelRunner::kMaxBlockThreads / kWave;
  // What the lanes of one wavefront that last met at a warp operation
  // offered, and which lanes they were.
  struct WaveMeeting {
    uint64_t values[kWave] = {};
    uint64_t mask = 0;
  };

  // Dynamic shared memory: kMaxDynamicSharedBytes followed by a page that
  // is never accessible, so that a block reading or writing past the end of
  // its dynamic shared memory (placed to end there) faults and is named
  // (twin_fault.h) instead of corrupting other memory.
  static size_t SharedMappingBytes() {
    return KernelRunner::kMaxDynamicSharedBytes + static_cast<size_t>(sysconf(_SC_PAGESIZE));
  }
  static uint8_t* MapShared() {
    void* p = mmap(nullptr, SharedMappingBytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
      std::perror("hipr sim: cannot map a block's shared memory");
      std::abort();
    }
    auto* base = static_cast<uint8_t*>(p);
    const size_t usable = KernelRunner::kMaxDynamicSharedBytes;
    if (mprotect(base + usable, SharedMappingBytes() - usable, PROT_NONE) != 0) {
      std::perror("hipr sim: cannot protect the guard page after a block's shared memory");
      std::abort();
    }
    return base;
  }

  static void FiberMain(void* arg);
  static uint32_t Barrier(const HiprTwinThread* self, int predicate);
  static uint64_t WarpMeet(const HiprTwinThread* self, uint64_t site, uint64_t value, const uint64_t** values);
  static void GridSync(const HiprTwinThread* self);
  // Makes room for a block of `n` threads. Only between blocks: twin code
  // holds pointers into threads_ while its block runs.
  void Reserve(uint32_t n);
  // Ends the block where it is: its unfinished threads are never resumed
  // and their stacks go back to the pool.
  void Abandon(uint32_t n);
  // After a pass in which every runnable thread ran until it waited or
  // ended: lets the next group of each wavefront's lanes waiting at a warp
  // operation go on (appended to runnable_). False when none waits.
  bool MeetWaves(uint32_t threads);
  static void WriteOutput(const HiprTwinThread* self, const char* text, size_t size);
  void CheckStack(uint32_t index);

  static constexpr HiprTwinServices kServices = {&BlockExecutor::Barrier, &BlockExecutor::WriteOutput,
                                                 &BlockExecutor::WarpMeet, &BlockExecutor::GridSync};

  TwinAltStack alt_stack_;  // Fault reports from a fiber that overflowed its stack.
  StackPool stacks_;
  FiberContext scheduler_;
  std::vector<Fiber> fibers_;
  std::vector<HiprTwinThread> threads_;  // Resized only between blocks (Reserve).
  uint8_t* shared_;
  std::vector<uint32_t> runnable_;
  std::vector<uint32_t> ran_;      // The pass being run.
  std::vector<uint32_t> waiting_;  // At __syncthreads.
  std::vector<uint32_t> grid_waiting_;  // At grid_group::sync().
  WaveMeeting waves_[kMaxWaves];
  // The block being run.
  const HiprTwinKernel* kernel_ = nullptr;
  const uint8_t* kernarg_ = nullptr;
  Mutex* output_mu_ = nullptr;
  std::string* output_ = nullptr;
  bool cooperative_ = false;
  // A thread called GridSync in a launch that is not cooperative.
  const HiprTwinThread* misplaced_grid_sync_ = nullptr;
  // Barrier: arrivals with a true predicate, counted in the current phase;
  // the count of the last opened barrier stays readable until the next one.
  uint32_t barrier_count_[2] = {0, 0};
  int phase_ = 0;
  uint32_t barrier_result_ = 0;
};

void BlockExecutor::FiberMain(void* arg) {
  auto* self = static_cast<HiprTwinThread*>(arg);
  auto* ex = static_cast<BlockExecutor*>(self->executor);
  ex->kernel_->run_thread(ex->kernarg_);
  Fiber& f = ex->fibers_[self->flat_thread_id];
  f.done = true;
  SwitchFiber(&f.context, &ex->scheduler_);
  abort();  // A finished fiber is never resumed.
}

uint32_t BlockExecutor::Barrier(const HiprTwinThread* self, int predicate) {
  auto* ex = static_cast<BlockExecutor*>(self->executor);
  if (predicate != 0) ++ex->barrier_count_[ex->phase_];
  SwitchFiber(&ex->fibers_[self->flat_thread_id].context, &ex->scheduler_);
  return ex->barrier_result_;
}

uint64_t BlockExecutor::WarpMeet(const HiprTwinThread* self, uint64_t site, uint64_t value, const uint64_t** values) {
  auto* ex = static_cast<BlockExecutor*>(self->executor);
  Fiber& f = ex->fibers_[self->flat_thread_id];
  f.at_warp = true;
  f.warp_site = site;
  f.warp_value = value;
  SwitchFiber(&f.context, &ex->scheduler_);
  const WaveMeeting& w = ex->waves_[self->flat_thread_id / kWave];
  *values = w.values;
  return w.mask;
}

void BlockExecutor::GridSync(const HiprTwinThread* self) {
  auto* ex = static_cast<BlockExecutor*>(self->executor);
  Fiber& f = ex->fibers_[self->flat_thread_id];
  if (!ex->cooperative_) ex->misplaced_grid_sync_ = self;
  f.at_grid = true;
  // Outside a cooperative launch the scheduler abandons the block: no return.
  SwitchFiber(&f.context, &ex->scheduler_);
}

void BlockExecutor::Reserve(uint32_t n) {
  if (threads_.size() >= n) return;
  fibers_.resize(n);
  threads_.resize(n);
  runnable_.reserve(n);
  ran_.reserve(n);
  waiting_.reserve(n);
  grid_waiting_.reserve(n);
}

void BlockExecutor::Abandon(uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    Fiber& f = fibers_[i];
    if (f.stack != nullptr && !f.done) stacks_.Give(f.stack);
    f.stack = nullptr;
  }
}

bool BlockExecutor::MeetWaves(uint32_t threads) {
  bool any = false;
  for (uint32_t base = 0; base < threads; base += kWave) {
    const uint32_t end = std::min(threads, base + kWave);
    // The lowest site goes first (twin_abi.h).
    uint32_t first = end;
    for (uint32_t i = base; i < end; ++i) {
      if (fibers_[i].at_warp && (first == end || fibers_[i].warp_site < fibers_[first].warp_site)) first = i;
    }
    if (first == end) continue;
    WaveMeeting& w = waves_[base / kWave];
    w.mask = 0;
    for (uint32_t i = base; i < end; ++i) {
      Fiber& f = fibers_[i];
      w.values[i - base] = 0;
      if (!f.at_warp || f.warp_site != fibers_[first].warp_site) continue;
      w.mask |= uint64_t{1} << (i - base);
      w.values[i - base] = f.warp_value;
    }
    for (uint32_t i = base; i < end; ++i) {
      if ((w.mask >> (i - base) & 1) == 0) continue;
      fibers_[i].at_warp = false;
      runnable_.push_back(i);
    }
    any = true;
  }
  return any;
}

void BlockExecutor::WriteOutput(const HiprTwinThread* self, const char* text, size_t size) {
  auto* ex = static_cast<BlockExecutor*>(self->executor);
  MutexLock lock(*ex->output_mu_);
  ex->output_->append(text, size);
}

void BlockExecutor::CheckStack(uint32_t index) {
  if (stacks_.Intact(fibers_[index].stack)) return;
  const HiprTwinThread& t = threads_[index];
  fprintf(stderr,
          "hipr sim: thread (%u,%u,%u) of block (%u,%u,%u) of kernel %s overflowed its %zu KiB stack; "
          "ending the process\n",
          t.thread_idx.x, t.thread_idx.y, t.thread_idx.z, t.block_idx.x, t.block_idx.y, t.block_idx.z,
          kernel_->name, stacks_.stack_bytes() / 1024);
  abort();
}

template <typename GridT>
void BlockExecutor::Run(GridT* grid, uint64_t block_linear) {
  kernel_ = grid->kernel;
  kernarg_ = grid->kernarg;
  output_mu_ = &grid->output_mu;
  output_ = &grid->output;
  const HiprTwinDim3 g = grid->grid_dim;
  const HiprTwinDim3 block_idx{static_cast<uint32_t>(block_linear % g.x),
                               static_cast<uint32_t>(block_linear / g.x % g.y),
                               static_cast<uint32_t>(block_linear / (uint64_t{g.x} * g.y))};
  // A partial last block has fewer threads, and blockDim is its own size
  // there (as __ockl_get_local_size reports it on the GPU).
  HiprTwinDim3 b = grid->block_dim;
  if (block_idx.x == g.x - 1) b.x = grid->last_block_dim.x;
  if (block_idx.y == g.y - 1) b.y = grid->last_block_dim.y;
  if (block_idx.z == g.z - 1) b.z = grid->last_block_dim.z;
  const uint32_t n = b.x * b.y * b.z;
  if (grid->stopped.load(std::memory_order_relaxed)) {
    if (grid->barrier != nullptr) grid->barrier->Leave();
    return;
  }
  Reserve(n);
  cooperative_ = grid->cooperative;
  misplaced_grid_sync_ = nullptr;
  // The launch's dynamic shared memory ends at the guard page (16-byte
  // aligned start, as the GPU's).
  const uint32_t shared_bytes = (grid->dynamic_shared_bytes + 15u) & ~15u;
  uint8_t* const dynamic_shared = shared_ + KernelRunner::kMaxDynamicSharedBytes - shared_bytes;
  runnable_.clear();
  waiting_.clear();
  for (uint32_t i = 0; i < n; ++i) {
    HiprTwinThread& t = threads_[i];
    t.thread_idx = {i % b.x, i / b.x % b.y, i / (b.x * b.y)};
    t.block_idx = block_idx;
    t.block_dim = b;
    t.grid_dim = g;
    t.dynamic_shared = dynamic_shared;
    t.dynamic_shared_bytes = grid->dynamic_shared_bytes;
    t.flat_thread_id = i;
    t.variables = grid->variables.data();
    t.services = &kServices;
    t.executor = this;
    t.cooperative = grid->cooperative ? 1 : 0;
    t.reserved = 0;
    fibers_[i].stack = nullptr;
    fibers_[i].done = false;
    fibers_[i].at_warp = false;
    fibers_[i].at_grid = false;
    runnable_.push_back(i);
  }
  grid_waiting_.clear();
  barrier_count_[0] = barrier_count_[1] = 0;
  phase_ = 0;
  const HiprTwinThread** slot = grid->current_thread();
  TwinFaultScope& scope = CurrentTwinFaultScope();
  scope.kernel = grid->display_name;
  for (;;) {
    ran_.swap(runnable_);
    runnable_.clear();
    for (uint32_t i : ran_) {
      Fiber& f = fibers_[i];
      if (f.stack == nullptr) {
        f.stack = stacks_.Take();
        PrepareFiber(&f.context, f.stack, stacks_.stack_bytes(), &BlockExecutor::FiberMain, &threads_[i]);
      }
      *slot = &threads_[i];
      scope.thread = &threads_[i];
      SwitchFiber(&scheduler_, &f.context);
      scope.thread = nullptr;
      if (f.done) {
        // Checked once per thread: reading every stack's far end at each
        // barrier would cost more than the switch itself.
        CheckStack(i);
        stacks_.Give(f.stack);  // The next thread starts on it, still warm.
      } else if (f.at_grid) {
        if (misplaced_grid_sync_ != nullptr) break;
        grid_waiting_.push_back(i);
      } else if (!f.at_warp) {
        waiting_.push_back(i);  // At a barrier.
      }
    }
    if (misplaced_grid_sync_ != nullptr) {
      const HiprTwinThread& t = *misplaced_grid_sync_;
      char where[160];
      snprintf(where, sizeof where, "thread (%u, %u, %u) of block (%u, %u, %u)", t.thread_idx.x, t.thread_idx.y,
               t.thread_idx.z, t.block_idx.x, t.block_idx.y, t.block_idx.z);
      grid->Stop(std::string("kernel ") + grid->display_name + ": " + where +
                 " called grid_group::sync() (a grid-wide barrier) in a launch that is not cooperative; launch it "
                 "with hipLaunchCooperativeKernel (on a GPU it would hang); the kernel was stopped there");
      Abandon(n);
      break;
    }
    // Every thread has run until it ended or waits: the lanes of a
    // wavefront that wait at a warp operation meet first, since a barrier
    // opens only when every thread of the block waits at it.
    if (MeetWaves(n)) continue;
    if (grid->stopped.load(std::memory_order_relaxed)) {
      Abandon(n);  // Another block stopped the grid.
      break;
    }
    if (!waiting_.empty()) {
      // Every thread that has not exited waits at a barrier: open the
      // block's (those at the grid's wait on; mixing the two is undefined
      // on a GPU).
      barrier_result_ = barrier_count_[phase_];
      phase_ ^= 1;
      barrier_count_[phase_] = 0;
      runnable_.swap(waiting_);
      waiting_.clear();
      continue;
    }
    if (grid_waiting_.empty()) break;  // Every thread has exited.
    // Every thread that has not exited waits at the grid barrier: the block
    // arrives, and goes on when every block has.
    grid->barrier->ArriveAndWait();
    for (uint32_t i : grid_waiting_) fibers_[i].at_grid = false;
    runnable_.swap(grid_waiting_);
    grid_waiting_.clear();
  }
  if (grid->barrier != nullptr) grid->barrier->Leave();
  *slot = nullptr;
  scope.kernel = nullptr;
}

thread_local std::unique_ptr<BlockExecutor> tls_executor;

BlockExecutor& ThisThreadExecutor() {
  if (!tls_executor) tls_executor = std::make_unique<BlockExecutor>();
  return *tls_executor;
}

}  // namespace

KernelRunner::KernelRunner(unsigned pool_threads)
    : pool_size_(pool_threads != 0 ? pool_threads : std::max(1u, std::thread::hardware_concurrency())) {
  // A fault in twin code names its kernel before the process ends (the
  // session process sets where the report goes).
  InstallTwinFaultHandlers(nullptr);
}

KernelRunner::~KernelRunner() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(mu_);
    stopping_ = true;
    threads.swap(threads_);
  }
  work_cv_.notify_all();
  for (std::thread& t : threads) t.join();
  MutexLock coop(coop_mu_);
  for (const std::unique_ptr<Resident>& r : residents_) {
    r->grid = nullptr;
    r->go.release();
  }
  for (const std::unique_ptr<Resident>& r : residents_) pthread_join(r->thread, nullptr);
}

size_t KernelRunner::resident_threads() const {
  MutexLock coop(coop_mu_);
  return residents_.size();
}

void* KernelRunner::ResidentMain(void* arg) {
  auto* r = static_cast<Resident*>(arg);
  for (;;) {
    r->go.acquire();
    Grid* grid = r->grid;
    if (grid == nullptr) return nullptr;
    r->runner->RunBlocks(grid, r->block, 1);
    r->grid = nullptr;
    MutexLock lock(r->runner->mu_);
    r->runner->FinishBlocksLocked(grid, 1);
  }
}

Status KernelRunner::GrowResidentsLocked(uint64_t count) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, kResidentStackBytes);
  int error = 0;
  while (residents_.size() < count) {
    auto r = std::make_unique<Resident>();
    r->runner = this;
    error = pthread_create(&r->thread, &attr, &KernelRunner::ResidentMain, r.get());
    if (error != 0) break;
    residents_.push_back(std::move(r));
  }
  pthread_attr_destroy(&attr);
  if (error != 0)
    return Status(StatusCode::kResourceExhausted, "cannot start a thread for each of the " +
                                                      std::to_string(count + 1) + " blocks of a cooperative grid (" +
                                                      std::to_string(residents_.size()) +
                                                      " started): " + std::strerror(error));
  return Status::Ok();
}

Status KernelRunner::RunCooperative(Grid* grid) {
  MutexLock coop(coop_mu_);  // One cooperative grid at a time.
  const uint64_t others = grid->total_blocks - 1;
  HIPR_RETURN_IF_ERROR(GrowResidentsLocked(others));
  GridBarrier barrier(grid->total_blocks);
  grid->barrier = &barrier;
  // The pool never sees this grid: block 0 runs here, block i + 1 on
  // resident thread i.
  for (uint64_t i = 0; i < others; ++i) {
    Resident& r = *residents_[i];
    r.grid = grid;
    r.block = i + 1;
    r.go.release();
  }
  RunBlocks(grid, 0, 1);
  MutexLock lock(mu_);
  FinishBlocksLocked(grid, 1);
  while (grid->done_blocks != grid->total_blocks) grid->done_cv.wait(lock.native());
  return Status::Ok();
}

void KernelRunner::StartPoolLocked() {
  if (!threads_.empty()) return;
  for (unsigned i = 0; i < pool_size_; ++i) threads_.emplace_back([this] { PoolMain(); });
}

void KernelRunner::PoolMain() {
  MutexLock lock(mu_);
  for (;;) {
    while (!stopping_ && grids_.empty()) work_cv_.wait(lock.native());
    if (stopping_) return;
    // Round robin over concurrent launches.
    Grid* grid = grids_.front();
    grids_.pop_front();
    grids_.push_back(grid);
    uint64_t first = 0;
    uint64_t count = 0;
    if (!ClaimLocked(grid, &first, &count)) continue;
    lock.Unlock();
    RunBlocks(grid, first, count);
    lock.Lock();
    FinishBlocksLocked(grid, count);
  }
}

bool KernelRunner::ClaimLocked(Grid* grid, uint64_t* first, uint64_t* count) {
  if (grid->next_block == grid->total_blocks) return false;
  *first = grid->next_block;
  *count = std::min(grid->chunk, grid->total_blocks - grid->next_block);
  grid->next_block += *count;
  if (grid->next_block == grid->total_blocks) {
    auto it = std::find(grids_.begin(), grids_.end(), grid);
    if (it != grids_.end()) grids_.erase(it);
  }
  return true;
}

void KernelRunner::RunBlocks(Grid* grid, uint64_t first, uint64_t count) {
  BlockExecutor& ex = ThisThreadExecutor();
  for (uint64_t b = first; b < first + count; ++b) ex.Run(grid, b);
}

void KernelRunner::FinishBlocksLocked(Grid* grid, uint64_t count) {
  grid->done_blocks += count;
  if (grid->done_blocks == grid->total_blocks) grid->done_cv.notify_all();
}

Status KernelRunner::Launch(const TwinKernel& kernel, std::array<uint32_t, 3> grid_dim,
                            std::array<uint32_t, 3> block_dim, uint32_t dynamic_shared_bytes,
                            std::span<const uint8_t> kernarg, std::string* printf_output,
                            std::array<uint32_t, 3> global, bool cooperative) {
  const std::string name(kernel.name());
  for (int i = 0; i < 3; ++i) {
    if (grid_dim[i] == 0 || block_dim[i] == 0)
      return InvalidArgument("kernel " + name + ": grid and block dimensions must be at least 1");
  }
  const uint64_t threads = uint64_t{block_dim[0]} * block_dim[1] * block_dim[2];
  if (threads > kMaxBlockThreads)
    return InvalidArgument("kernel " + name + ": a block of " + std::to_string(threads) + " threads exceeds " +
                           std::to_string(kMaxBlockThreads));
  const uint64_t blocks = uint64_t{grid_dim[0]} * grid_dim[1] * grid_dim[2];
  if (blocks > (uint64_t{1} << 32))
    return InvalidArgument("kernel " + name + ": a grid of " + std::to_string(blocks) + " blocks is too large");
  if (dynamic_shared_bytes > kMaxDynamicSharedBytes)
    return InvalidArgument("kernel " + name + ": " + std::to_string(dynamic_shared_bytes) +
                           " bytes of dynamic shared memory exceed " + std::to_string(kMaxDynamicSharedBytes));
  if (kernarg.size() < kernel.explicit_kernarg_size())
    return InvalidArgument("kernel " + name + " needs " + std::to_string(kernel.explicit_kernarg_size()) +
                           " argument bytes, got " + std::to_string(kernarg.size()));
  const TwinModule& module = kernel.module();
  HIPR_RETURN_IF_ERROR(module.CheckBound());

  Grid grid;
  grid.kernel = &kernel.descriptor();
  grid.display_name = kernel.display_name().c_str();
  grid.current_thread = module.descriptor().current_thread;
  grid.grid_dim = {grid_dim[0], grid_dim[1], grid_dim[2]};
  grid.block_dim = {block_dim[0], block_dim[1], block_dim[2]};
  uint32_t last[3];
  for (int i = 0; i < 3; ++i) {
    const uint64_t whole = uint64_t{grid_dim[i]} * block_dim[i];
    if (global[i] == 0 && global != std::array<uint32_t, 3>{})
      return InvalidArgument("kernel " + name + ": a global size of 0 in dimension " + std::to_string(i));
    if (global[i] != 0 && (global[i] > whole || global[i] <= whole - block_dim[i]))
      return InvalidArgument("kernel " + name + ": global size " + std::to_string(global[i]) +
                             " does not end in the last block of dimension " + std::to_string(i));
    last[i] = global[i] == 0 ? block_dim[i] : static_cast<uint32_t>(global[i] - (whole - block_dim[i]));
  }
  grid.last_block_dim = {last[0], last[1], last[2]};
  grid.threads_per_block = static_cast<uint32_t>(threads);
  grid.dynamic_shared_bytes = dynamic_shared_bytes;
  // A kernel without arguments may get an empty buffer; never hand it null.
  static const uint8_t kNoArguments[16] = {};
  grid.kernarg = kernarg.empty() ? kNoArguments : kernarg.data();
  grid.variables = module.Bindings();
  grid.total_blocks = blocks;
  // Chunks amortise the lock over small blocks yet leave every thread work.
  grid.chunk = std::clamp<uint64_t>(blocks / (uint64_t{pool_size_ + 1} * 8), 1, 64);
  grid.cooperative = cooperative;

  if (cooperative) {
    HIPR_RETURN_IF_ERROR(RunCooperative(&grid));
  } else {
    MutexLock lock(mu_);
    if (blocks > 1) {
      StartPoolLocked();
      grids_.push_back(&grid);
      work_cv_.notify_all();
    }
    // The launching thread works on its own grid too.
    uint64_t first = 0;
    uint64_t count = 0;
    while (ClaimLocked(&grid, &first, &count)) {
      lock.Unlock();
      RunBlocks(&grid, first, count);
      lock.Lock();
      FinishBlocksLocked(&grid, count);
    }
    while (grid.done_blocks != grid.total_blocks) grid.done_cv.wait(lock.native());
  }
  MutexLock out(grid.output_mu);  // Every block is done: nothing else holds it.
  if (printf_output != nullptr) *printf_output = std::move(grid.output);
  if (!grid.failure.empty()) return Status(StatusCode::kFailedPrecondition, grid.failure);
  return Status::Ok();
}

}  // namespace hipr::worker::sim
