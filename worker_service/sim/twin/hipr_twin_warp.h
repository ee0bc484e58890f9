// Warp-level operations for kernel twins: shuffles and votes over the 64
// lanes of a wavefront, included by hipr_twin_prelude.h.
//
// On a GPU the lanes of a wavefront execute a shuffle or vote as one
// instruction. Here each lane is a fiber, so the lanes meet: each offers
// its value to the executor (HiprTwinServices::warp_meet) and waits until
// every lane of its wavefront that has not exited is waiting too; the lanes
// waiting at the same call site go on together and see each other's values
// (twin_abi.h). Lanes that have exited, lanes past the end of a partial
// wavefront and lanes on another divergent path are inactive, as on a GPU.
//
// The results are those of HIP's own definitions (Debian's HIP 5.2,
// hip/amd_detail/amd_warp_functions.h and amd_device_functions.h): a
// shuffle reads lane `index` through ds_bpermute, where the lane is taken
// modulo 64 and an inactive lane reads as 0 (DS_BPERMUTE_B32 in AMD's ISA
// manuals: "reading from inactive lanes returns 0");
// __shfl's index is src_lane + the first lane of the caller's width-sized
// segment (src_lane is not reduced modulo width, as in HIP); __shfl_up,
// __shfl_down and __shfl_xor keep the caller's own value where the lane they
// would read lies outside the caller's segment; votes and ballots count
// the active lanes. 64-bit values move whole (HIP moves both halves from the
// same lane, which is the same).
//
// Each function takes the call site (__builtin_FILE/LINE/COLUMN) as hidden
// default arguments: it names the instruction the lanes meet at.
#ifndef HIPR_TWIN_WARP_H_
#define HIPR_TWIN_WARP_H_

namespace hipr_twin {

// Ordered by line, then column (the executor runs the lowest site first,
// twin_abi.h), then a hash of the file.
inline uint64_t WarpSiteId(const char* file, unsigned line, unsigned column) {
  const uint64_t file_hash = (reinterpret_cast<uintptr_t>(file) * 0x9e3779b97f4a7c15ull) >> 40;
  return (uint64_t{line} << 40) | (uint64_t{column & 0xffffu} << 24) | (file_hash & 0xffffffu);
}

// The lanes of the caller's wavefront at this site: their mask, and what
// each offered in *values.
inline uint64_t WarpMeet(uint64_t site, uint64_t value, const uint64_t** values) {
  const HiprTwinThread& self = Self();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  const uint64_t mask = self.services->warp_meet(&self, site, value, values);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return mask;
}

template <typename T>
inline uint64_t WarpBits(T v) {
  static_assert(sizeof(T) <= sizeof(uint64_t), "a warp operation moves at most 64 bits");
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

template <typename T>
inline T FromWarpBits(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// ds_bpermute: lane index mod 64's value, 0 when that lane is inactive.
template <typename T>
inline T Permute(uint64_t site, T var, int index) {
  const uint64_t* values = nullptr;
  const uint64_t mask = WarpMeet(site, WarpBits(var), &values);
  const unsigned lane = static_cast<unsigned>(index) & 63u;
  return FromWarpBits<T>((mask >> lane & 1u) != 0 ? values[lane] : 0);
}

// The mask of active lanes whose predicate is true.
inline uint64_t Ballot(uint64_t site, int predicate) {
  const uint64_t* values = nullptr;
  const uint64_t mask = WarpMeet(site, predicate != 0 ? 1 : 0, &values);
  uint64_t ballot = 0;
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((mask >> lane & 1u) != 0 && values[lane] != 0) ballot |= uint64_t{1} << lane;
  return ballot;
}

inline uint64_t ActiveMask(uint64_t site) {
  const uint64_t* values = nullptr;
  return WarpMeet(site, 0, &values);
}

}  // namespace hipr_twin

#define HIPR_TWIN_SITE_PARAMS \
  const char *hipr_site_file = __builtin_FILE(), unsigned hipr_site_line = __builtin_LINE(), \
  unsigned hipr_site_column = __builtin_COLUMN()
#define HIPR_TWIN_SITE ::hipr_twin::WarpSiteId(hipr_site_file, hipr_site_line, hipr_site_column)

// One overload per type HIP declares.
#define HIPR_TWIN_SHUFFLES(T)                                                                              \
  inline T __shfl(T var, int src_lane, int width = warpSize, HIPR_TWIN_SITE_PARAMS) {                    \
    const int self = static_cast<int>(__lane_id());                                                      \
    return ::hipr_twin::Permute(HIPR_TWIN_SITE, var, src_lane + (self & ~(width - 1)));                 \
  }                                                                                                      \
  inline T __shfl_up(T var, unsigned int lane_delta, int width = warpSize, HIPR_TWIN_SITE_PARAMS) {     \
    const int self = static_cast<int>(__lane_id());                                                      \
    int index = self - static_cast<int>(lane_delta);                                                     \
    index = index < (self & ~(width - 1)) ? self : index;                                                \
    return ::hipr_twin::Permute(HIPR_TWIN_SITE, var, index);                                            \
  }                                                                                                      \
  inline T __shfl_down(T var, unsigned int lane_delta, int width = warpSize, HIPR_TWIN_SITE_PARAMS) {   \
    const int self = static_cast<int>(__lane_id());                                                      \
    int index = self + static_cast<int>(lane_delta);                                                     \
    index = static_cast<int>((self & (width - 1)) + lane_delta) >= width ? self : index;                 \
    return ::hipr_twin::Permute(HIPR_TWIN_SITE, var, index);                                            \
  }                                                                                                      \
  inline T __shfl_xor(T var, int lane_mask, int width = warpSize, HIPR_TWIN_SITE_PARAMS) {              \
    const int self = static_cast<int>(__lane_id());                                                      \
    int index = self ^ lane_mask;                                                                        \
    index = index >= ((self + width) & ~(width - 1)) ? self : index;                                     \
    return ::hipr_twin::Permute(HIPR_TWIN_SITE, var, index);                                            \
  }

HIPR_TWIN_SHUFFLES(int)
HIPR_TWIN_SHUFFLES(unsigned int)
HIPR_TWIN_SHUFFLES(float)
HIPR_TWIN_SHUFFLES(double)
HIPR_TWIN_SHUFFLES(long)
HIPR_TWIN_SHUFFLES(unsigned long)
HIPR_TWIN_SHUFFLES(long long)
HIPR_TWIN_SHUFFLES(unsigned long long)
#undef HIPR_TWIN_SHUFFLES

inline int __all(int predicate, HIPR_TWIN_SITE_PARAMS) {
  const uint64_t site = HIPR_TWIN_SITE;
  const uint64_t* values = nullptr;
  const uint64_t mask = ::hipr_twin::WarpMeet(site, predicate != 0 ? 1 : 0, &values);
  for (unsigned lane = 0; lane < 64; ++lane)
    if ((mask >> lane & 1u) != 0 && values[lane] == 0) return 0;
  return 1;
}
inline int __any(int predicate, HIPR_TWIN_SITE_PARAMS) {
  return ::hipr_twin::Ballot(HIPR_TWIN_SITE, predicate) != 0 ? 1 : 0;
}
inline unsigned long long int __ballot(int predicate, HIPR_TWIN_SITE_PARAMS) {
  return ::hipr_twin::Ballot(HIPR_TWIN_SITE, predicate);
}
inline unsigned long long int __ballot64(int predicate, HIPR_TWIN_SITE_PARAMS) {
  return ::hipr_twin::Ballot(HIPR_TWIN_SITE, predicate);
}
// As newer HIP defines it: the lanes executing the call.
inline unsigned long long int __activemask(HIPR_TWIN_SITE_PARAMS) { return ::hipr_twin::ActiveMask(HIPR_TWIN_SITE); }
inline uint64_t __lanemask_lt(HIPR_TWIN_SITE_PARAMS) {
  const unsigned lane = __lane_id();
  return ((uint64_t{1} << lane) - 1) & ::hipr_twin::ActiveMask(HIPR_TWIN_SITE);
}
inline uint64_t __lanemask_gt(HIPR_TWIN_SITE_PARAMS) {
  const unsigned lane = __lane_id();
  if (lane == 63) return 0;  // Before the ballot, as HIP: lane 63 takes no part in it.
  return (~uint64_t{0} << (lane + 1)) & ::hipr_twin::ActiveMask(HIPR_TWIN_SITE);
}
inline uint64_t __lanemask_eq() { return uint64_t{1} << __lane_id(); }

#undef HIPR_TWIN_SITE
#undef HIPR_TWIN_SITE_PARAMS

#endif  // HIPR_TWIN_WARP_H_
