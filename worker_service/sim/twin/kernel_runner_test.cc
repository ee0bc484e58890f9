// KernelRunner's cooperative launches, on kernels written by hand against
// the twin ABI (twin_abi.h) rather than built by twin_rewrite.py: the grid
// barrier across blocks on their own OS threads, blocks that exit early,
// and a grid-wide sync outside a cooperative launch, which must fail the
// launch rather than hang. (Twins built from HIP sources run in
// tests/sim_twins and tests/e2e/coop_grid.hip.)
#include "worker_service/sim/twin/kernel_runner.h"

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace hipr::worker::sim {
namespace {

thread_local const HiprTwinThread* t_self = nullptr;
const HiprTwinThread** CurrentThread() { return &t_self; }

uint32_t BlockThreads(const HiprTwinThread& s) { return s.block_dim.x * s.block_dim.y * s.block_dim.z; }
uint32_t GridRank(const HiprTwinThread& s) {
  const uint32_t block = (s.block_idx.z * s.grid_dim.y + s.block_idx.y) * s.grid_dim.x + s.block_idx.x;
  return block * BlockThreads(s) + s.flat_thread_id;
}

struct PhaseArgs {
  uint32_t* counters;  // One per phase.
  uint32_t* seen;      // phases x grid threads.
  uint32_t phases;
  uint32_t exit_block;  // Block x whose threads return at once (~0u: none).
};

// Each phase: every thread counts itself, meets the grid, then records the
// count, which must be every thread still running, and takes a
// __syncthreads (a block barrier between grid barriers).
void Phases(const uint8_t* kernarg) {
  PhaseArgs a;
  std::memcpy(&a, kernarg, sizeof a);
  const HiprTwinThread& s = *t_self;
  if (s.block_idx.x == a.exit_block) return;
  const uint32_t total = BlockThreads(s) * s.grid_dim.x * s.grid_dim.y * s.grid_dim.z;
  for (uint32_t p = 0; p < a.phases; ++p) {
    __atomic_fetch_add(&a.counters[p], 1u, __ATOMIC_RELAXED);
    s.services->grid_sync(&s);
    a.seen[p * total + GridRank(s)] = __atomic_load_n(&a.counters[p], __ATOMIC_RELAXED) + (s.cooperative << 24);
    s.services->barrier(&s, 0);
  }
}

// A grid-wide sync in every thread.
void SyncOnce(const uint8_t*) {
  const HiprTwinThread& s = *t_self;
  s.services->grid_sync(&s);
}

const HiprTwinArg kPhaseArgs[] = {{0, 8}, {8, 8}, {16, 4}, {20, 4}};
const HiprTwinKernel kKernels[] = {
    {"phases", &Phases, reinterpret_cast<const void*>(&Phases), 4, kPhaseArgs},
    {"sync_once", &SyncOnce, reinterpret_cast<const void*>(&SyncOnce), 0, nullptr},
};
const HiprTwinModule kModule = {HIPR_TWIN_ABI_VERSION, 2, 0, 0, "0000", "kernel_runner_test.cc", kKernels, nullptr,
                                &CurrentThread};

class CooperativeLaunchTest : public ::testing::Test {
 protected:
  CooperativeLaunchTest() : module_(TwinModule::FromDescriptor(kModule, "kernel_runner_test")) {}

  // Runs `phases` phases on `blocks` x `threads`; returns what each thread
  // saw, phase after phase.
  Status RunPhases(KernelRunner& runner, uint32_t blocks, uint32_t threads, uint32_t phases, bool cooperative,
                   uint32_t exit_block, std::vector<uint32_t>* seen) {
    std::vector<uint32_t> counters(phases, 0);
    seen->assign(size_t{phases} * blocks * threads, 0);
    PhaseArgs a{counters.data(), seen->data(), phases, exit_block};
    uint8_t kernarg[sizeof a];
    std::memcpy(kernarg, &a, sizeof a);
    return runner.Launch(*module_->FindKernel("phases"), {blocks, 1, 1}, {threads, 1, 1}, 0, kernarg, nullptr, {},
                         cooperative);
  }

  std::shared_ptr<TwinModule> module_;
};

TEST_F(CooperativeLaunchTest, EveryThreadOfEveryBlockMeetsAtEachGridSync) {
  KernelRunner runner(2);
  for (const uint32_t blocks : {1u, 7u, 40u}) {
    for (const uint32_t threads : {1u, 64u, 96u}) {
      std::vector<uint32_t> seen;
      ASSERT_TRUE(RunPhases(runner, blocks, threads, 3, true, ~0u, &seen).ok());
      for (size_t i = 0; i < seen.size(); ++i)
        ASSERT_EQ(seen[i], (1u << 24) + blocks * threads) << blocks << " blocks of " << threads << ", entry " << i;
    }
  }
  // Block 0 runs on the launching thread; resident threads run the others
  // and are kept for later grids.
  EXPECT_EQ(runner.resident_threads(), 39u);
  std::vector<uint32_t> seen;
  ASSERT_TRUE(RunPhases(runner, 5, 32, 2, true, ~0u, &seen).ok());
  EXPECT_EQ(runner.resident_threads(), 39u);
}

TEST_F(CooperativeLaunchTest, ABlockWhoseThreadsAllExitedNoLongerHoldsTheGridBack) {
  KernelRunner runner(2);
  constexpr uint32_t kBlocks = 6;
  constexpr uint32_t kThreads = 64;
  for (const uint32_t exiting : {0u, 3u, kBlocks - 1}) {
    std::vector<uint32_t> seen;
    ASSERT_TRUE(RunPhases(runner, kBlocks, kThreads, 4, true, exiting, &seen).ok());
    for (uint32_t p = 0; p < 4; ++p) {
      for (uint32_t b = 0; b < kBlocks; ++b) {
        for (uint32_t t = 0; t < kThreads; ++t) {
          const uint32_t got = seen[(p * kBlocks + b) * kThreads + t];
          ASSERT_EQ(got, b == exiting ? 0u : (1u << 24) + (kBlocks - 1) * kThreads) << p << " " << b << " " << t;
        }
      }
    }
  }
}

TEST_F(CooperativeLaunchTest, AGridSyncOutsideACooperativeLaunchFailsItNamingTheKernel) {
  KernelRunner runner(2);
  for (const uint32_t blocks : {1u, 50u}) {
    Status st = runner.Launch(*module_->FindKernel("sync_once"), {blocks, 1, 1}, {128, 1, 1}, 0, {}, nullptr);
    ASSERT_EQ(st.code(), StatusCode::kFailedPrecondition) << st.ToString();
    EXPECT_NE(st.message().find("kernel sync_once: thread ("), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("not cooperative"), std::string::npos) << st.message();
  }
  // The abandoned threads' stacks went back: the runner goes on.
  std::vector<uint32_t> seen;
  ASSERT_TRUE(RunPhases(runner, 3, 128, 2, true, ~0u, &seen).ok());
  EXPECT_EQ(seen[0], (1u << 24) + 3 * 128);
  EXPECT_TRUE(runner.Launch(*module_->FindKernel("sync_once"), {4, 1, 1}, {128, 1, 1}, 0, {}, nullptr, {}, true).ok());
}

}  // namespace
}  // namespace hipr::worker::sim
