// warp_ops: shuffles at every width and votes over wavefronts of 64 lanes,
// one of them partial, with a divergent vote, checked element by element
// against a host reference written from HIP's definitions (HIP 5.2's
// amd_warp_functions.h and amd_device_functions.h: a shuffle reads lane
// `index` mod 64 through ds_bpermute, where an inactive lane reads as 0;
// __shfl's index is src_lane plus the start of the caller's width-sized
// segment; __shfl_up/_down/_xor keep the caller's value when the lane they
// would read is outside its segment; votes count the active lanes).
//
// Blocks of 96 threads: lanes 0-63 are one full wavefront, 64-95 a
// wavefront whose lanes 32-63 do not exist (inactive).
#include "common.h"

namespace {

constexpr int kBlock = 96;
constexpr int kGrid = 2;
constexpr int kThreads = kBlock * kGrid;
constexpr int kWidths = 7;  // 1, 2, 4, ..., 64.
constexpr int kIntOps = 4;  // __shfl, __shfl_up, __shfl_down, __shfl_xor.
constexpr int kVoteMasks = 5;
constexpr int kVoteFlags = 5;

__host__ __device__ int Value(int global) { return global * 3 + 1; }

}  // namespace

__global__ void shuffles(int* ints, float* floats, double* doubles, long long* longs) {
  const int t = static_cast<int>(threadIdx.x);
  const int g = static_cast<int>(blockIdx.x) * kBlock + t;
  const int v = Value(g);
  int w = 0;
  for (int width = 1; width <= 64; width *= 2, ++w) {
    ints[(w * kIntOps + 0) * kThreads + g] = __shfl(v, t * 5 + 1, width);
    ints[(w * kIntOps + 1) * kThreads + g] = __shfl_up(v, 3u, width);
    ints[(w * kIntOps + 2) * kThreads + g] = __shfl_down(v, 5u, width);
    ints[(w * kIntOps + 3) * kThreads + g] = __shfl_xor(v, 3, width);
    floats[w * kThreads + g] = __shfl(static_cast<float>(v) * 0.5f, t + 7, width);
    doubles[w * kThreads + g] = __shfl_xor(static_cast<double>(v) * 0.25, 1, width);
    longs[w * kThreads + g] = __shfl_down(static_cast<long long>(v) << 33, 1u, width);
  }
}

__global__ void votes(unsigned long long* masks, int* flags) {
  const int t = static_cast<int>(threadIdx.x);
  const int g = static_cast<int>(blockIdx.x) * kBlock + t;
  const bool p = g % 3 == 0;
  masks[0 * kThreads + g] = __ballot(p);
  masks[1 * kThreads + g] = __ballot(1);
  flags[0 * kThreads + g] = __any(p);
  flags[1 * kThreads + g] = __all(p);
  flags[2 * kThreads + g] = __all(t < kBlock);
  flags[3 * kThreads + g] = __any(g < 0);
  // Only the even lanes vote: the odd ones are inactive for that ballot.
  unsigned long long even = 0;
  if (__lane_id() % 2 == 0) even = __ballot(1);
  masks[2 * kThreads + g] = even;
  // Reconverged: every lane again.
  masks[3 * kThreads + g] = __ballot(1);
  masks[4 * kThreads + g] = __lanemask_lt();
  flags[4 * kThreads + g] = static_cast<int>(__lane_id());
}

namespace {

// The host's model of one wavefront (the one holding thread t of block b).
struct Wave {
  int base = 0;   // Global index of its lane 0.
  int lanes = 0;  // Lanes that exist.
  Wave(int b, int t) : base(b * kBlock + t / 64 * 64), lanes(std::min(64, kBlock - t / 64 * 64)) {}
  bool Active(int lane) const { return lane >= 0 && lane < lanes; }
  // ds_bpermute of Value(): lane index mod 64, 0 when inactive.
  long long Read(int index) const {
    const int lane = index & 63;
    return Active(lane) ? Value(base + lane) : 0;
  }
  unsigned long long Mask() const { return lanes == 64 ? ~0ull : (1ull << lanes) - 1; }
};

int ShflIndex(int lane, int t, int width) { return t * 5 + 1 + (lane & ~(width - 1)); }
int UpIndex(int lane, int width) {
  const int i = lane - 3;
  return i < (lane & ~(width - 1)) ? lane : i;
}
int DownIndex(int lane, int width, int delta) {
  return (lane & (width - 1)) + delta >= width ? lane : lane + delta;
}
int XorIndex(int lane, int width, int mask) {
  const int i = lane ^ mask;
  return i >= ((lane + width) & ~(width - 1)) ? lane : i;
}

}  // namespace

int main() {
  int* d_ints = nullptr;
  float* d_floats = nullptr;
  double* d_doubles = nullptr;
  long long* d_longs = nullptr;
  HIP_OK(hipMalloc(&d_ints, sizeof(int) * kWidths * kIntOps * kThreads));
  HIP_OK(hipMalloc(&d_floats, sizeof(float) * kWidths * kThreads));
  HIP_OK(hipMalloc(&d_doubles, sizeof(double) * kWidths * kThreads));
  HIP_OK(hipMalloc(&d_longs, sizeof(long long) * kWidths * kThreads));
  hipLaunchKernelGGL(shuffles, dim3(kGrid), dim3(kBlock), 0, 0, d_ints, d_floats, d_doubles, d_longs);
  HIP_OK(hipGetLastError());
  std::vector<int> ints(kWidths * kIntOps * kThreads);
  std::vector<float> floats(kWidths * kThreads);
  std::vector<double> doubles(kWidths * kThreads);
  std::vector<long long> longs(kWidths * kThreads);
  HIP_OK(hipMemcpy(ints.data(), d_ints, ints.size() * sizeof(int), hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(floats.data(), d_floats, floats.size() * sizeof(float), hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(doubles.data(), d_doubles, doubles.size() * sizeof(double), hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(longs.data(), d_longs, longs.size() * sizeof(long long), hipMemcpyDeviceToHost));
  int checked = 0;
  for (int b = 0; b < kGrid; ++b) {
    for (int t = 0; t < kBlock; ++t) {
      const int g = b * kBlock + t;
      const int lane = t % 64;
      const Wave wave(b, t);
      for (int w = 0, width = 1; w < kWidths; ++w, width *= 2) {
        const long long want[kIntOps] = {wave.Read(ShflIndex(lane, t, width)), wave.Read(UpIndex(lane, width)),
                                         wave.Read(DownIndex(lane, width, 5)), wave.Read(XorIndex(lane, width, 3))};
        static const char* const kNames[kIntOps] = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor"};
        for (int op = 0; op < kIntOps; ++op) {
          const int got = ints[(w * kIntOps + op) * kThreads + g];
          CHECK(got == want[op], "%s width %d, block %d thread %d: %d, expected %lld", kNames[op], width, b, t, got,
                want[op]);
          ++checked;
        }
        const float want_f = static_cast<float>(wave.Read(t + 7 + (lane & ~(width - 1)))) * 0.5f;
        const int fl = (t + 7 + (lane & ~(width - 1))) & 63;
        const float want_float = wave.Active(fl) ? want_f : 0.0f;
        CHECK(floats[w * kThreads + g] == want_float, "__shfl(float) width %d, block %d thread %d: %g, expected %g",
              width, b, t, static_cast<double>(floats[w * kThreads + g]), static_cast<double>(want_float));
        const int dl = XorIndex(lane, width, 1);
        const double want_double = wave.Active(dl & 63) ? static_cast<double>(Value(wave.base + (dl & 63))) * 0.25 : 0.0;
        CHECK(doubles[w * kThreads + g] == want_double, "__shfl_xor(double) width %d, block %d thread %d: %g, "
              "expected %g", width, b, t, doubles[w * kThreads + g], want_double);
        const int ll = DownIndex(lane, width, 1) & 63;
        const long long want_long = wave.Active(ll) ? static_cast<long long>(Value(wave.base + ll)) << 33 : 0;
        CHECK(longs[w * kThreads + g] == want_long, "__shfl_down(long long) width %d, block %d thread %d: %lld, "
              "expected %lld", width, b, t, longs[w * kThreads + g], want_long);
        checked += 3;
      }
    }
  }
  printf("[warp_ops] %d shuffle results match the host reference\n", checked);

  unsigned long long* d_masks = nullptr;
  int* d_flags = nullptr;
  HIP_OK(hipMalloc(&d_masks, sizeof(unsigned long long) * kVoteMasks * kThreads));
  HIP_OK(hipMalloc(&d_flags, sizeof(int) * kVoteFlags * kThreads));
  hipLaunchKernelGGL(votes, dim3(kGrid), dim3(kBlock), 0, 0, d_masks, d_flags);
  HIP_OK(hipGetLastError());
  std::vector<unsigned long long> masks(kVoteMasks * kThreads);
  std::vector<int> flags(kVoteFlags * kThreads);
  HIP_OK(hipMemcpy(masks.data(), d_masks, masks.size() * sizeof(unsigned long long), hipMemcpyDeviceToHost));
  HIP_OK(hipMemcpy(flags.data(), d_flags, flags.size() * sizeof(int), hipMemcpyDeviceToHost));
  int votes_checked = 0;
  for (int b = 0; b < kGrid; ++b) {
    for (int t = 0; t < kBlock; ++t) {
      const int g = b * kBlock + t;
      const int lane = t % 64;
      const Wave wave(b, t);
      unsigned long long ballot = 0;
      for (int l = 0; l < wave.lanes; ++l)
        if ((wave.base + l) % 3 == 0) ballot |= 1ull << l;
      const unsigned long long even_lanes = 0x5555555555555555ull & wave.Mask();
      const unsigned long long want_masks[kVoteMasks] = {ballot, wave.Mask(), lane % 2 == 0 ? even_lanes : 0,
                                                         wave.Mask(), ((1ull << lane) - 1) & wave.Mask()};
      static const char* const kMaskNames[kVoteMasks] = {"__ballot(g % 3 == 0)", "__ballot(1)",
                                                         "__ballot(1) on even lanes", "__ballot(1) reconverged",
                                                         "__lanemask_lt()"};
      for (int m = 0; m < kVoteMasks; ++m) {
        const unsigned long long got = masks[m * kThreads + g];
        CHECK(got == want_masks[m], "%s, block %d thread %d: %#llx, expected %#llx", kMaskNames[m], b, t, got,
              want_masks[m]);
      }
      const unsigned long long all_p = [&] {
        unsigned long long m = 0;
        for (int l = 0; l < wave.lanes; ++l) m |= 1ull << l;
        return m;
      }();
      const int want_flags[kVoteFlags] = {ballot != 0, ballot == all_p, 1, 0, lane};
      static const char* const kFlagNames[kVoteFlags] = {"__any(g % 3 == 0)", "__all(g % 3 == 0)",
                                                         "__all(true)", "__any(false)", "__lane_id()"};
      for (int f = 0; f < kVoteFlags; ++f) {
        const int got = flags[f * kThreads + g];
        CHECK(got == want_flags[f], "%s, block %d thread %d: %d, expected %d", kFlagNames[f], b, t, got,
              want_flags[f]);
      }
      votes_checked += kVoteMasks + kVoteFlags;
    }
  }
  printf("[warp_ops] %d vote results match the host reference\n", votes_checked);
  HIP_OK(hipFree(d_ints));
  HIP_OK(hipFree(d_floats));
  HIP_OK(hipFree(d_doubles));
  HIP_OK(hipFree(d_longs));
  HIP_OK(hipFree(d_masks));
  HIP_OK(hipFree(d_flags));
  return e2e::Finish("warp_ops");
}
