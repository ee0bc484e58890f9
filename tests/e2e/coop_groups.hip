// coop_groups: cooperative groups inside a block (thread_block, tiles made
// at run time and at compile time, coalesced groups of a divergent branch)
// and the grid's ranks, checked element by element against a host
// reference written from HIP 5.2's amd_hip_cooperative_groups.h: a tile of
// n holds n consecutive threads of a wavefront, its rank is the block rank
// mod n and its shuffles are __shfl* at width n; a coalesced group holds the
// lanes executing the call, ranked in lane order, its shfl goes by rank and
// its shfl_down to the n-th active lane above (the caller's own value when
// there is none). Blocks of 96 threads: one full wavefront and one of 32.
#include "common.h"  // hip/hip_runtime.h first, as HIP 5.2's cooperative groups need.

#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

namespace {

constexpr int kBlock = 96;
constexpr int kGrid = 3;
constexpr int kThreads = kBlock * kGrid;
constexpr int kSlots = 14;

__host__ __device__ int Value(int global) { return global * 7 + 2; }

}  // namespace

__global__ void groups(int* out) {
  __shared__ int shared[kBlock];
  const int g = static_cast<int>(blockIdx.x) * kBlock + static_cast<int>(threadIdx.x);
  int* slot = out + g;
  const int v = Value(g);

  cg::thread_block block = cg::this_thread_block();
  slot[0 * kThreads] = static_cast<int>(block.thread_rank());
  slot[1 * kThreads] = static_cast<int>(block.size()) * 1000 + static_cast<int>(block.group_index().x);
  // A block sync: every thread reads its neighbour's write.
  shared[block.thread_rank()] = v;
  block.sync();
  slot[2 * kThreads] = shared[(block.thread_rank() + 1) % kBlock];
  block.sync();

  // A tile of 16 made at run time: rank, size, and a tile sync with a
  // shared exchange inside the tile.
  cg::thread_group tile16 = cg::tiled_partition(block, 16);
  slot[3 * kThreads] = static_cast<int>(tile16.thread_rank()) * 100 + static_cast<int>(tile16.size());
  shared[block.thread_rank()] = v + 1;
  tile16.sync();
  const int tile_base = static_cast<int>(block.thread_rank()) & ~15;
  slot[4 * kThreads] = shared[tile_base + ((static_cast<int>(tile16.thread_rank()) + 3) & 15)];

  // A tile of 8 known at compile time: a sum by shfl_down, shfl_xor, shfl_up.
  cg::thread_block_tile<8> tile8 = cg::tiled_partition<8>(block);
  int sum = v;
  for (int offset = 4; offset > 0; offset /= 2) sum += tile8.shfl_down(sum, offset);
  slot[5 * kThreads] = tile8.shfl(sum, 0);
  slot[6 * kThreads] = tile8.shfl_xor(v, 5);
  slot[7 * kThreads] = tile8.shfl_up(v, 2);
  slot[8 * kThreads] = static_cast<int>(cg::group_size(tile8)) * 100 + static_cast<int>(cg::thread_rank(tile8));

  // A coalesced group: the lanes of a divergent branch.
  int coalesced[4] = {-1, -1, -1, -1};
  if (__lane_id() % 3 == 0) {
    cg::coalesced_group active = cg::coalesced_threads();
    coalesced[0] = static_cast<int>(active.size());
    coalesced[1] = static_cast<int>(active.thread_rank());
    coalesced[2] = active.shfl(v, 1);
    coalesced[3] = active.shfl_down(v, 2);
  }
  for (int i = 0; i < 4; ++i) slot[(9 + i) * kThreads] = coalesced[i];

  // The grid's ranks (a plain launch: not a cooperative one).
  cg::grid_group grid = cg::this_grid();
  slot[13 * kThreads] = static_cast<int>(grid.thread_rank()) * 10 + (grid.is_valid() ? 1 : 0) +
                        (static_cast<int>(grid.size()) == kThreads ? 2 : 0);
}

int main() {
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, sizeof(int) * kSlots * kThreads));
  hipLaunchKernelGGL(groups, dim3(kGrid), dim3(kBlock), 0, 0, d);
  HIP_OK(hipGetLastError());
  std::vector<int> out(kSlots * kThreads);
  HIP_OK(hipMemcpy(out.data(), d, out.size() * sizeof(int), hipMemcpyDeviceToHost));
  HIP_OK(hipFree(d));
  int checked = 0;
  for (int b = 0; b < kGrid; ++b) {
    for (int t = 0; t < kBlock; ++t) {
      const int g = b * kBlock + t;
      const int lane = t % 64;
      const int wave_base = b * kBlock + t / 64 * 64;  // Global index of lane 0.
      const int wave_lanes = std::min(64, kBlock - t / 64 * 64);
      const int tile8_base = g & ~7;
      int tile_sum = 0;
      for (int i = 0; i < 8; ++i) tile_sum += Value(tile8_base + i);
      // The active lanes of `lane % 3 == 0` in this wavefront, in order.
      std::vector<int> active;
      for (int l = 0; l < wave_lanes; l += 3) active.push_back(l);
      int want[kSlots];
      want[0] = t;
      want[1] = kBlock * 1000 + b;
      want[2] = Value(b * kBlock + (t + 1) % kBlock);
      want[3] = (t % 16) * 100 + 16;
      want[4] = Value(b * kBlock + (t & ~15) + ((t % 16 + 3) & 15)) + 1;
      want[5] = tile_sum;
      want[6] = Value(tile8_base + ((t % 8) ^ 5));
      want[7] = t % 8 >= 2 ? Value(g - 2) : Value(g);
      want[8] = 8 * 100 + t % 8;
      if (lane % 3 == 0) {
        const int rank = lane / 3;
        const int size = static_cast<int>(active.size());
        want[9] = size;
        want[10] = rank;
        want[11] = Value(wave_base + active[1 % size]);
        want[12] = rank + 2 < size ? Value(wave_base + active[rank + 2]) : Value(g);
      } else {
        want[9] = want[10] = want[11] = want[12] = -1;
      }
      want[13] = g * 10 + 0 + 2;
      static const char* const kNames[kSlots] = {
          "block.thread_rank()", "block.size()/group_index()", "block.sync() exchange", "tiled_partition(16) rank/size",
          "tile16.sync() exchange", "tile8 shfl_down sum", "tile8.shfl_xor(5)", "tile8.shfl_up(2)",
          "group_size/thread_rank(tile8)", "coalesced size", "coalesced thread_rank", "coalesced shfl(1)",
          "coalesced shfl_down(2)", "grid rank/is_valid/size"};
      for (int s = 0; s < kSlots; ++s) {
        const int got = out[s * kThreads + g];
        CHECK(got == want[s], "%s, block %d thread %d: %d, expected %d", kNames[s], b, t, got, want[s]);
        ++checked;
      }
    }
  }
  printf("[coop_groups] %d results match the host reference\n", checked);
  return e2e::Finish("coop_groups");
}
