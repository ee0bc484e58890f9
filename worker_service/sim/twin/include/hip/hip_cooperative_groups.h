// Kernel twins: <hip/hip_cooperative_groups.h>, cooperative groups over the
// twin's blocks and 64-lane wavefronts (hipr_twin_warp.h), with the API and
// results of HIP 5.2's amd_hip_cooperative_groups.h:
//
//   thread_block (this_thread_block): the block; sync() is __syncthreads.
//   tiled_partition(parent, n) and thread_block_tile<n>: tiles of n (a power
//     of two up to 64) consecutive threads of a wavefront; rank = the
//     block rank mod n; shfl/shfl_up/shfl_down/shfl_xor at width n.
//   coalesced_threads(): the lanes of the wavefront that execute the call;
//     rank = the active lanes below the caller; shfl by rank, and
//     shfl_up/shfl_down to the n-th active lane (the caller's own value when
//     there is none); tiled_partition of a coalesced group as HIP forms it.
//   sync() of a tile or coalesced group: the lanes of the wavefront meet, so
//     what each wrote before is visible after.
//   group_size, thread_rank, is_valid, sync as free functions.
//   grid_group (this_grid): size, thread_rank; is_valid() true in a
//     cooperative launch (hipLaunchCooperativeKernel, the cooperative launch
//     attribute), as HIP's __ockl_grid_is_valid; sync() (also
//     this_grid().sync(), sync(grid) and a grid group's thread_group::sync())
//     a barrier across every thread of every block, and a memory fence
//     (HiprTwinServices::grid_sync: the sim runs all blocks of a cooperative
//     grid at once). In a launch that is not cooperative (undefined in HIP:
//     the GPU hangs) the sim stops the kernel and fails the launch, naming
//     the kernel and the thread.
//   multi_grid_group (this_multi_grid): size and ranks of the one grid;
//     is_valid() false and sync() does not build (the sim runs no
//     multi-device cooperative launch).
#pragma once
#include "../../hipr_twin_prelude.h"

namespace cooperative_groups {

using lane_mask = unsigned long long;

namespace internal {
// HIP's numbering (hip_cooperative_groups_helper.h).
enum group_type { cg_invalid, cg_multi_grid, cg_grid, cg_workgroup, cg_tiled_group, cg_coalesced_group };

inline uint32_t BlockRank() { return ::hipr_twin::Self().flat_thread_id; }
inline uint32_t BlockSize() {
  const HiprTwinDim3 b = ::hipr_twin::Self().block_dim;
  return b.x * b.y * b.z;
}
inline uint64_t GridBlocks() {
  const HiprTwinDim3 g = ::hipr_twin::Self().grid_dim;
  return uint64_t{g.x} * g.y * g.z;
}
inline uint64_t BlockIndex() {
  const HiprTwinThread& t = ::hipr_twin::Self();
  return (uint64_t{t.block_idx.z} * t.grid_dim.y + t.block_idx.y) * t.grid_dim.x + t.block_idx.x;
}
inline bool Cooperative() { return ::hipr_twin::Self().cooperative != 0; }
// Every thread of the grid meets (grid_group::sync), a full fence.
inline void GridSync() {
  const HiprTwinThread& self = ::hipr_twin::Self();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
  self.services->grid_sync(&self);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
// The lanes of the caller's wavefront meet (a wave barrier).
inline lane_mask WaveSync(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                          unsigned column = __builtin_COLUMN()) {
  return ::hipr_twin::ActiveMask(::hipr_twin::WarpSiteId(file, line, column));
}
template <typename T>
inline constexpr bool kShuffleable = std::is_integral<T>::value || std::is_floating_point<T>::value;

template <typename... A>
struct GridSyncUnsupported : std::false_type {};
}  // namespace internal

// Every group is one of these; the derived classes add no data, so a group
// returned as a thread_group keeps what it is.
class thread_group {
 public:
  uint32_t size() const { return size_; }
  unsigned int cg_type() const { return type_; }
  uint32_t thread_rank() const;
  bool is_valid() const;
  void sync() const;

 protected:
  explicit thread_group(internal::group_type type, uint32_t size = 0, lane_mask mask = 0, bool tiled = false)
      : type_(type), size_(size), mask_(mask), tiled_(tiled) {}
  internal::group_type type_;
  uint32_t size_;
  lane_mask mask_;  // A coalesced group's lanes.
  bool tiled_;      // Made by tiled_partition.

  friend thread_group tiled_partition(const thread_group& parent, unsigned int tile_size);
};

class thread_block : public thread_group {
 public:
  dim3 group_index() const { return dim3(::hipr_twin::Self().block_idx); }
  dim3 thread_index() const { return dim3(::hipr_twin::Self().thread_idx); }
  uint32_t thread_rank() const { return internal::BlockRank(); }
  bool is_valid() const { return true; }
  void sync() const { __syncthreads(); }

 private:
  explicit thread_block(uint32_t size) : thread_group(internal::cg_workgroup, size) {}
  friend thread_block this_thread_block();
  friend class thread_group;
};

inline thread_block this_thread_block() { return thread_block(internal::BlockSize()); }

class tiled_group : public thread_group {
 public:
  uint32_t thread_rank() const { return internal::BlockRank() & (size_ - 1); }
  bool is_valid() const { return true; }
  void sync() const { internal::WaveSync(); }

 protected:
  explicit tiled_group(uint32_t tile_size) : thread_group(internal::cg_tiled_group, tile_size, 0, true) {}
  friend class thread_group;
  friend tiled_group tiled_partition(const tiled_group& parent, unsigned int tile_size);
};

class coalesced_group : public thread_group {
 public:
  uint32_t thread_rank() const { return static_cast<uint32_t>(__popcll(mask_ & ((lane_mask{1} << __lane_id()) - 1))); }
  bool is_valid() const { return size_ != 0; }
  void sync() const { internal::WaveSync(); }

  template <typename T>
  T shfl(T var, int src_rank) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    src_rank = static_cast<int>(static_cast<unsigned>(src_rank) % size_);
    const int lane = size_ == 64 ? src_rank : __fns64(mask_, 0, src_rank + 1);
    return __shfl(var, lane, 64);
  }
  template <typename T>
  T shfl_down(T var, unsigned int lane_delta) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    if (size_ == 64) return __shfl_down(var, lane_delta, 64);
    int lane = __fns64(mask_, __lane_id(), static_cast<int>(lane_delta) + 1);
    if (lane == -1) lane = static_cast<int>(__lane_id());
    return __shfl(var, lane, 64);
  }
  template <typename T>
  T shfl_up(T var, unsigned int lane_delta) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    if (size_ == 64) return __shfl_up(var, lane_delta, 64);
    int lane = __fns64(mask_, __lane_id(), -(static_cast<int>(lane_delta) + 1));
    if (lane == -1) lane = static_cast<int>(__lane_id());
    return __shfl(var, lane, 64);
  }

 protected:
  explicit coalesced_group(lane_mask mask, bool tiled = false)
      : thread_group(internal::cg_coalesced_group, static_cast<uint32_t>(__popcll(mask)), mask, tiled) {}
  friend class thread_group;
  friend coalesced_group coalesced_threads(const char*, unsigned, unsigned);
  friend coalesced_group tiled_partition(const coalesced_group& parent, unsigned int tile_size);
  friend thread_group tiled_partition(const thread_group& parent, unsigned int tile_size);

  // HIP's partition of a coalesced group into tiles of `tile_size` lanes.
  coalesced_group Partition(unsigned int tile_size) const {
    if (tile_size == 0 || tile_size > size_ || (tile_size & (tile_size - 1)) != 0) return coalesced_group(0);
    if (tiled_) {
      // A tile of a tile stays a run of consecutive lanes.
      const unsigned base = thread_rank() & ~(tile_size - 1);
      const unsigned length = std::min(size_ - base, tile_size);
      lane_mask m = ~lane_mask{0} >> (64 - length);
      m <<= (__lane_id() & ~(tile_size - 1));
      return coalesced_group(m, true);
    }
    // The tile_size active lanes that hold the caller's tile of ranks.
    lane_mask m = 0;
    unsigned taken = 0;
    int skip = static_cast<int>(thread_rank() / tile_size * tile_size);
    for (unsigned lane = 0; lane < 64; ++lane) {
      const lane_mask bit = lane_mask{1} << lane;
      if ((mask_ & bit) == 0) continue;
      if (skip <= 0 && taken < tile_size) {
        m |= bit;
        ++taken;
      }
      --skip;
    }
    return coalesced_group(m);
  }
};

// The lanes of the caller's wavefront that execute this call.
inline coalesced_group coalesced_threads(const char* file = __builtin_FILE(), unsigned line = __builtin_LINE(),
                                         unsigned column = __builtin_COLUMN()) {
  return coalesced_group(internal::WaveSync(file, line, column));
}

class grid_group : public thread_group {
 public:
  uint32_t thread_rank() const {
    return static_cast<uint32_t>(internal::BlockIndex() * internal::BlockSize() + internal::BlockRank());
  }
  // As in HIP: valid only in a cooperative launch.
  bool is_valid() const { return internal::Cooperative(); }
  void sync() const { internal::GridSync(); }

 private:
  explicit grid_group(uint32_t size) : thread_group(internal::cg_grid, size) {}
  friend grid_group this_grid();
};

inline grid_group this_grid() {
  return grid_group(static_cast<uint32_t>(internal::GridBlocks() * internal::BlockSize()));
}

class multi_grid_group : public thread_group {
 public:
  uint32_t num_grids() const { return 1; }
  uint32_t grid_rank() const { return 0; }
  uint32_t thread_rank() const { return this_grid().thread_rank(); }
  bool is_valid() const { return false; }
  template <typename... A>
  void sync(A...) const {
    static_assert(internal::GridSyncUnsupported<A...>::value,
                  "hipr sim twins: multi_grid_group::sync() is not supported by the sim device");
  }

 private:
  explicit multi_grid_group(uint32_t size) : thread_group(internal::cg_multi_grid, size) {}
  friend multi_grid_group this_multi_grid();
};

inline multi_grid_group this_multi_grid() { return multi_grid_group(this_grid().size()); }

inline uint32_t thread_group::thread_rank() const {
  switch (type_) {
    case internal::cg_multi_grid:
    case internal::cg_grid: return static_cast<const grid_group*>(this)->thread_rank();
    case internal::cg_workgroup: return internal::BlockRank();
    case internal::cg_tiled_group: return internal::BlockRank() & (size_ - 1);
    case internal::cg_coalesced_group: return static_cast<const coalesced_group*>(this)->thread_rank();
    default: return ~0u;
  }
}

inline bool thread_group::is_valid() const {
  switch (type_) {
    case internal::cg_grid: return internal::Cooperative();
    case internal::cg_workgroup:
    case internal::cg_tiled_group: return true;
    case internal::cg_coalesced_group: return size_ != 0;
    default: return false;
  }
}

inline void thread_group::sync() const {
  switch (type_) {
    case internal::cg_workgroup: __syncthreads(); break;
    case internal::cg_tiled_group:
    case internal::cg_coalesced_group: internal::WaveSync(); break;
    case internal::cg_grid: internal::GridSync(); break;
    default:  // A multi-grid group reached through thread_group.
      fprintf(stderr, "hipr sim twins: multi_grid_group::sync() (reached through thread_group::sync) is not "
                      "supported by the sim device; ending the session\n");
      abort();
  }
}

// Tiles of a block, a tile or a coalesced group (`tile_size`: a power of two
// up to 64, as in HIP).
inline thread_group tiled_partition(const thread_group& parent, unsigned int tile_size) {
  if (parent.type_ == internal::cg_coalesced_group)
    return static_cast<const coalesced_group&>(parent).Partition(tile_size);
  assert(tile_size != 0 && tile_size <= 64 && (tile_size & (tile_size - 1)) == 0 && "invalid tile size");
  if (parent.type_ == internal::cg_tiled_group && parent.size_ <= tile_size) return parent;
  return thread_group(internal::cg_tiled_group, tile_size, 0, true);
}
inline thread_group tiled_partition(const thread_block& parent, unsigned int tile_size) {
  return tiled_partition(static_cast<const thread_group&>(parent), tile_size);
}
inline tiled_group tiled_partition(const tiled_group& parent, unsigned int tile_size) {
  assert(tile_size != 0 && tile_size <= 64 && (tile_size & (tile_size - 1)) == 0 && "invalid tile size");
  return parent.size() <= tile_size ? parent : tiled_group(tile_size);
}
inline coalesced_group tiled_partition(const coalesced_group& parent, unsigned int tile_size) {
  return parent.Partition(tile_size);
}

template <class G>
inline uint32_t group_size(const G& g) { return g.size(); }
template <class G>
inline uint32_t thread_rank(const G& g) { return g.thread_rank(); }
template <class G>
inline bool is_valid(const G& g) { return g.is_valid(); }
template <class G>
inline void sync(const G& g) { g.sync(); }

// A tile of N threads known at compile time.
template <unsigned int N, class Parent = void>
class thread_block_tile : public tiled_group {
  static_assert(N != 0 && N <= 64 && (N & (N - 1)) == 0,
                "Tile size is either not a power of 2 or greater than the wavefront size");

 public:
  thread_block_tile() : tiled_group(N) {}
  template <class P>
  thread_block_tile(const thread_block_tile<N, P>&) : tiled_group(N) {}
  static constexpr unsigned int size() { return N; }
  uint32_t thread_rank() const { return internal::BlockRank() & (N - 1); }
  void sync() const { internal::WaveSync(); }
  template <typename T>
  T shfl(T var, int src_rank) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    return __shfl(var, src_rank, N);
  }
  template <typename T>
  T shfl_down(T var, unsigned int lane_delta) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    return __shfl_down(var, lane_delta, N);
  }
  template <typename T>
  T shfl_up(T var, unsigned int lane_delta) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    return __shfl_up(var, lane_delta, N);
  }
  template <typename T>
  T shfl_xor(T var, unsigned int lane_mask) const {
    static_assert(internal::kShuffleable<T>, "Neither an integer or float type.");
    return __shfl_xor(var, static_cast<int>(lane_mask), N);
  }
};

template <unsigned int N, class Parent>
inline thread_block_tile<N, Parent> tiled_partition(const Parent&) {
  return thread_block_tile<N, Parent>();
}

}  // namespace cooperative_groups
