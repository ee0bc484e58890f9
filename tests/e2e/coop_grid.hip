// coop_grid: grid_group::sync() in a cooperative launch (hipLaunchCooperativeKernel),
// checked element by element against a host reference. A 6x4 grid of 128-thread blocks runs
// rounds of a grid reduction: each block sums its elements into a partial, the grid meets, every
// block adds up all partials and rewrites its elements from that total and a neighbour element
// another block may own, and the grid meets again. Each round needs the previous phase's results
// of every block, so a barrier that does not hold the whole grid (or is not a memory fence) gives
// wrong totals. The grid barrier is spelt each way HIP 5.2 offers: grid.sync(),
// this_grid().sync(), cg::sync(grid) and thread_group::sync() of a grid group.
//
// Then, as HIP's launch checks do (clr hip_module.cpp): a cooperative grid one block larger than
// the device holds at once (hipOccupancyMaxActiveBlocksPerMultiprocessor x CUs, with and without
// dynamic shared memory limiting it) is hipErrorCooperativeLaunchTooLarge, and nothing runs.
//
// On the sim only (a GPU hangs there): the same kernel in a plain launch fails at its first grid
// barrier, and the next synchronizing call returns hipErrorLaunchFailure.
#include "common.h"  // hip/hip_runtime.h first, as HIP 5.2's cooperative groups need.

#include <hip/hip_cooperative_groups.h>

namespace cg = cooperative_groups;

namespace {

constexpr int kBlock = 128;
constexpr int kGridX = 6;
constexpr int kGridY = 4;
constexpr int kBlocks = kGridX * kGridY;
constexpr int kThreads = kBlock * kBlocks;
constexpr int kN = 10007;  // Elements: not a multiple of the grid.
constexpr int kRounds = 6;
constexpr long long kP = 1000003;

__host__ __device__ long long Initial(int i) { return (i * 7919LL + 13) % kP; }
__host__ __device__ long long Mix(long long self, long long right, long long total, int round) {
  return (self * 3 + right + total + round) % kP;
}

}  // namespace

// a, b: kN elements each (a holds the result); partial: kRounds x kBlocks; totals: kRounds;
// ranks: one per thread.
__global__ void grid_rounds(long long* a, long long* b, long long* partial, long long* totals, int* ranks) {
  __shared__ long long sums[kBlock];
  cg::grid_group grid = cg::this_grid();
  cg::thread_block block = cg::this_thread_block();
  const int bid = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
  const int tid = static_cast<int>(threadIdx.x);
  const int gid = bid * kBlock + tid;
  const int stride = static_cast<int>(gridDim.x * gridDim.y) * kBlock;
  ranks[gid] = static_cast<int>(grid.thread_rank()) * 4 + (grid.is_valid() ? 1 : 0) +
               (static_cast<int>(grid.size()) == stride ? 2 : 0);
  for (int i = gid; i < kN; i += stride) a[i] = Initial(i);
  grid.sync();
  for (int r = 0; r < kRounds; ++r) {
    const long long* src = r % 2 == 0 ? a : b;
    long long* dst = r % 2 == 0 ? b : a;
    // Phase 1: the block's sum of its elements.
    long long s = 0;
    for (int i = gid; i < kN; i += stride) s += src[i];
    sums[tid] = s;
    block.sync();
    for (int half = kBlock / 2; half > 0; half /= 2) {
      if (tid < half) sums[tid] += sums[tid + half];
      block.sync();
    }
    if (tid == 0) partial[r * kBlocks + bid] = sums[0];
    if (r % 3 == 0) {
      grid.sync();
    } else if (r % 3 == 1) {
      cg::this_grid().sync();
    } else {
      cg::sync(grid);
    }
    // Phase 2: every block needs every block's partial, and a neighbour another block may own.
    long long total = 0;
    for (int k = 0; k < kBlocks; ++k) total += partial[r * kBlocks + k];
    total %= kP;
    if (gid == 0) totals[r] = total;
    for (int i = gid; i < kN; i += stride) dst[i] = Mix(src[i], src[(i + 1) % kN], total, r);
    cg::thread_group g = grid;
    g.sync();
  }
}

int main() {
  int device = 0;
  HIP_OK(hipGetDevice(&device));
  int cooperative = 0;
  HIP_OK(hipDeviceGetAttribute(&cooperative, hipDeviceAttributeCooperativeLaunch, device));
  CHECK(cooperative == 1, "hipDeviceAttributeCooperativeLaunch is %d", cooperative);
  int cus = 0;
  HIP_OK(hipDeviceGetAttribute(&cus, hipDeviceAttributeMultiprocessorCount, device));
  int per_cu = 0;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu, grid_rounds, kBlock, 0));
  CHECK(per_cu >= 1 && kBlocks <= per_cu * cus, "%d blocks per CU x %d CUs", per_cu, cus);

  long long *a = nullptr, *b = nullptr, *partial = nullptr, *totals = nullptr;
  int* ranks = nullptr;
  HIP_OK(hipMalloc(&a, sizeof(long long) * kN));
  HIP_OK(hipMalloc(&b, sizeof(long long) * kN));
  HIP_OK(hipMalloc(&partial, sizeof(long long) * kRounds * kBlocks));
  HIP_OK(hipMalloc(&totals, sizeof(long long) * kRounds));
  HIP_OK(hipMalloc(&ranks, sizeof(int) * kThreads));
  HIP_OK(hipMemset(partial, 0, sizeof(long long) * kRounds * kBlocks));
  hipStream_t stream = nullptr;
  HIP_OK(hipStreamCreate(&stream));
  void* args[] = {&a, &b, &partial, &totals, &ranks};
  HIP_OK(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_rounds), dim3(kGridX, kGridY),
                                    dim3(kBlock), args, 0, stream));
  HIP_OK(hipStreamSynchronize(stream));

  std::vector<long long> got_a(kN), got_b(kN), got_totals(kRounds);
  std::vector<int> got_ranks(kThreads);
  HIP_OK(hipMemcpy(got_a.data(), a, sizeof(long long) * kN, hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(got_b.data(), b, sizeof(long long) * kN, hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(got_totals.data(), totals, sizeof(long long) * kRounds, hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(got_ranks.data(), ranks, sizeof(int) * kThreads, hipMemcpyDeviceToHost));

  // The host reference.
  std::vector<long long> want_a(kN), want_b(kN), want_totals(kRounds);
  for (int i = 0; i < kN; ++i) want_a[i] = Initial(i);
  for (int r = 0; r < kRounds; ++r) {
    std::vector<long long>& src = r % 2 == 0 ? want_a : want_b;
    std::vector<long long>& dst = r % 2 == 0 ? want_b : want_a;
    long long total = 0;
    for (int i = 0; i < kN; ++i) total += src[i];
    total %= kP;
    want_totals[r] = total;
    for (int i = 0; i < kN; ++i) dst[i] = Mix(src[i], src[(i + 1) % kN], total, r);
  }
  int checked = 0;
  for (int t = 0; t < kThreads; ++t, ++checked)
    CHECK(got_ranks[t] == t * 4 + 1 + 2, "thread %d: rank*4 + is_valid + size check is %d, expected %d", t,
          got_ranks[t], t * 4 + 3);
  for (int r = 0; r < kRounds; ++r, ++checked)
    CHECK(got_totals[r] == want_totals[r], "round %d: total %lld, expected %lld", r, got_totals[r], want_totals[r]);
  for (int i = 0; i < kN; ++i, checked += 2) {
    CHECK(got_a[i] == want_a[i], "a[%d] = %lld, expected %lld", i, got_a[i], want_a[i]);
    CHECK(got_b[i] == want_b[i], "b[%d] = %lld, expected %lld", i, got_b[i], want_b[i]);
  }
  printf("[coop_grid] %d results of a %dx%d cooperative grid match the host reference\n", checked, kGridX, kGridY);

  // Too large: one block more than the device holds at once; also where dynamic shared memory
  // is what limits it. Nothing runs.
  const int limit = per_cu * cus;
  HIP_EXPECT(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_rounds), dim3(limit + 1), dim3(kBlock),
                                        args, 0, stream),
             hipErrorCooperativeLaunchTooLarge);
  constexpr size_t kDynamicShared = 32 * 1024;
  int per_cu_lds = 0;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&per_cu_lds, grid_rounds, kBlock, kDynamicShared));
  CHECK(per_cu_lds >= 1 && per_cu_lds < per_cu, "%d blocks per CU with %zu bytes of dynamic shared memory", per_cu_lds,
        kDynamicShared);
  HIP_EXPECT(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_rounds), dim3(per_cu_lds * cus + 1),
                                        dim3(kBlock), args, kDynamicShared, stream),
             hipErrorCooperativeLaunchTooLarge);
  HIP_OK(hipStreamSynchronize(stream));
  printf("[coop_grid] cooperative grids of %d blocks (%d per CU x %d CUs) and %d with %zu bytes of dynamic shared "
         "memory are hipErrorCooperativeLaunchTooLarge\n",
         limit + 1, per_cu, cus, per_cu_lds * cus + 1, kDynamicShared);

  if (!e2e::OnHipDevice()) {
    // A grid barrier outside a cooperative launch: the sim stops the kernel (a GPU hangs).
    hipLaunchKernelGGL(grid_rounds, dim3(kGridX, kGridY), dim3(kBlock), 0, stream, a, b, partial, totals, ranks);
    HIP_OK(hipGetLastError());
    HIP_EXPECT(hipStreamSynchronize(stream), hipErrorLaunchFailure);
    printf("[coop_grid] grid.sync() in a plain launch failed the kernel: hipErrorLaunchFailure\n");
  }
  HIP_OK(hipStreamDestroy(stream));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
  HIP_OK(hipFree(partial));
  HIP_OK(hipFree(totals));
  HIP_OK(hipFree(ranks));
  return e2e::Finish("coop_grid");
}
