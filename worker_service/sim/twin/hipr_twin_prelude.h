// The HIP kernel language for host compilation of kernel twins.
//
// A twin source (written by twin_rewrite.py from a program's .hip file)
// includes this header in place of <hip/hip_runtime.h> and is compiled by
// clang++-15 -x c++ -std=c++17 into a shared object (cmake/HiprSimTwin.cmake).
// Each GPU thread runs as a fiber driven by the worker's KernelRunner (see
// twin_abi.h for the contract).
//
// Supported: __global__ / __device__ / __host__ / __forceinline__ /
// __noinline__ / __launch_bounds__ / __restrict__ / __align__;
// __shared__ (per block: storage per OS thread, one block per OS thread at a
// time, ending at an inaccessible page so that an access past it is a named
// fault, see hipr_twin_shared.h); extern __shared__ and HIP_DYNAMIC_SHARED
// (dynamic shared memory, also ending at such a page);
// threadIdx, blockIdx, blockDim, gridDim and hipThreadIdx_x-style macros;
// warpSize (64); dim3, uint3 and the HIP vector types with make_* helpers;
// __syncthreads (a real barrier), __syncthreads_count/_and/_or; warp-level
// operations over wavefronts of 64 lanes (__shfl, __shfl_up, __shfl_down,
// __shfl_xor at every width and type HIP declares, __ballot, __ballot64,
// __any, __all, __activemask, __lane_id, __lanemask_lt/gt/eq), whose lanes
// meet as on a GPU, with HIP's results for inactive lanes (hipr_twin_warp.h);
// __threadfence*; atomics (atomicAdd/Sub/Exch/Min/Max/CAS/And/Or/Xor/Inc/Dec
// for the usual integer and floating types, truly atomic across blocks
// running on different OS threads); device printf (into the launch's
// output); the usual math (host libm plus the __expf-style intrinsics, see
// hipr_twin_math.h); every integer and bit intrinsic of HIP 5.2's
// amd_device_functions.h (__popc, __clz, __ffs, __brev, __byte_perm,
// __bitextract/__bitinsert, __funnelshift*, __fns32/64, __lastbit_u32_u64,
// __mul24, __mulhi, __mul64hi, __hadd, __rhadd, __sad and their unsigned
// forms) with the signatures and results of its device code, see
// hipr_twin_bits.h; clock64/wall_clock64; __device__, __constant__ and
// __managed__ variables, several to a declaration too (twin_rewrite.py reads
// a managed one through the code object's pointer variable, as clang's
// device code does). Texture objects: tex1Dfetch, tex1D and tex2D over the
// textures hipr creates (hipr_twin_texture.h).
//
// The program sees the macros the device compile predefines for the twin's
// target (__HIP_DEVICE_COMPILE__, __HIP__, __AMDGCN__, __AMDGPU__, __gfx90a__,
// __GFX9__, __AMDGCN_WAVEFRONT_SIZE, __amdgcn_processor__,
// __amdgcn_target_id__, __HIP_MEMORY_SCOPE_*, FP_FAST_FMA(F), ...):
// twin_rewrite.py defines them after this header (twin_macros.py), which
// itself, like the system headers it includes, is configured for the host.
//
// Cooperative groups (<hip/hip_cooperative_groups.h>, the twin's own in
// include/hip/): thread_block, tiles made at run time and at compile time,
// coalesced groups, the grid's ranks, and grid_group::sync() in a
// cooperative launch (a barrier across the grid); not multi_grid_group::sync().
//
// Not supported (a compile error names them): the masked warp intrinsics of
// later HIP (__shfl_sync and the other *_sync forms, __syncwarp), bfloat16
// (hip_bf16.h, hip_bfloat16.h), multi_grid_group::sync(),
// AMDGCN builtins. Refused by
// twin_rewrite.py: the long double layout macros (__LDBL_*,
// __SIZEOF_LONG_DOUBLE__, float.h's LDBL_*), where the device's 64-bit long
// double cannot be had on the host; a device variable whose initialiser
// refers to another one; a declaration whose first declarator is a host
// variable the twin drops while it keeps a later one.
#ifndef HIPR_TWIN_PRELUDE_H_
#define HIPR_TWIN_PRELUDE_H_

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <utility>

#include "twin_abi.h"

#define HIPR_SIM_TWIN 1
#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#ifndef __HIPCC__
#define __HIPCC__ 1
#endif

// ---- Function and variable qualifiers ---------------------------------------

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
// Per block: all fibers of a block share their OS thread's copy. At block
// scope thread_local implies static storage duration.
#define __shared__ thread_local

// ---- The running thread -------------------------------------------------------

namespace hipr_twin {

// The executor points this at the running fiber's context (twin_abi.h).
static thread_local const HiprTwinThread* tls_current_thread = nullptr;

inline const HiprTwinThread** CurrentThreadSlot() { return &tls_current_thread; }
__attribute__((always_inline)) inline const HiprTwinThread& Self() { return *tls_current_thread; }
inline void* DynamicShared() { return Self().dynamic_shared; }
inline void* VariableAddress(unsigned index) { return Self().variables[index]; }

}  // namespace hipr_twin

#include "hipr_twin_atomics.h"
#include "hipr_twin_bits.h"
#include "hipr_twin_math.h"
#include "hipr_twin_vector_types.h"
#include "hipr_twin_texture.h"
#include "hipr_twin_shared.h"

struct dim3 {
  uint32_t x, y, z;
  constexpr dim3(uint32_t x_ = 1, uint32_t y_ = 1, uint32_t z_ = 1) : x(x_), y(y_), z(z_) {}
  constexpr dim3(const HiprTwinDim3& d) : x(d.x), y(d.y), z(d.z) {}
  constexpr dim3(const uint3& u) : x(u.x), y(u.y), z(u.z) {}
};

#define threadIdx (::hipr_twin::Self().thread_idx)
#define blockIdx (::hipr_twin::Self().block_idx)
#define blockDim (::hipr_twin::Self().block_dim)
#define gridDim (::hipr_twin::Self().grid_dim)

#define hipThreadIdx_x (threadIdx.x)
#define hipThreadIdx_y (threadIdx.y)
#define hipThreadIdx_z (threadIdx.z)
#define hipBlockIdx_x (blockIdx.x)
#define hipBlockIdx_y (blockIdx.y)
#define hipBlockIdx_z (blockIdx.z)
#define hipBlockDim_x (blockDim.x)
#define hipBlockDim_y (blockDim.y)
#define hipBlockDim_z (blockDim.z)
#define hipGridDim_x (gridDim.x)
#define hipGridDim_y (gridDim.y)
#define hipGridDim_z (gridDim.z)

static constexpr int warpSize = 64;

inline unsigned __lane_id() { return ::hipr_twin::Self().flat_thread_id % warpSize; }

// Dynamic shared memory: the launch's sharedMemBytes, 16-byte aligned.
// (twin_rewrite.py turns `extern __shared__ T name[];` into the same.)
#define HIP_DYNAMIC_SHARED(type, var) type* var = reinterpret_cast<type*>(::hipr_twin::DynamicShared());
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

// ---- Barriers and fences --------------------------------------------------------

namespace hipr_twin {
inline uint32_t Barrier(int predicate) {
  const HiprTwinThread& self = Self();
  // Shared memory written before the barrier must be in memory, and read
  // again after it: other fibers of the block run in between.
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  uint32_t count = self.services->barrier(&self, predicate);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  return count;
}
}  // namespace hipr_twin

inline void __syncthreads() { ::hipr_twin::Barrier(0); }
inline int __syncthreads_count(int predicate) { return static_cast<int>(::hipr_twin::Barrier(predicate != 0)); }
inline int __syncthreads_and(int predicate) { return ::hipr_twin::Barrier(predicate == 0) == 0; }
inline int __syncthreads_or(int predicate) { return ::hipr_twin::Barrier(predicate != 0) != 0; }
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

[[noreturn]] inline void __trap() { abort(); }

inline long long clock64() { return static_cast<long long>(__builtin_readcyclecounter()); }
inline long long wall_clock64() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec;
}

#include "hipr_twin_warp.h"

// ---- Unsupported warp-level intrinsics (the masked forms of later HIP) --------

namespace hipr_twin {
template <typename... A>
struct Unsupported : std::false_type {};
}  // namespace hipr_twin

#define HIPR_TWIN_UNSUPPORTED(name)                                                                    \
  template <typename... A>                                                                             \
  inline unsigned long long name(A...) {                                                               \
    static_assert(::hipr_twin::Unsupported<A...>::value,                                               \
                  "hipr sim twins: " #name " (a warp-level intrinsic) is not supported by the sim device"); \
    return 0;                                                                                          \
  }
HIPR_TWIN_UNSUPPORTED(__shfl_sync)
HIPR_TWIN_UNSUPPORTED(__shfl_up_sync)
HIPR_TWIN_UNSUPPORTED(__shfl_down_sync)
HIPR_TWIN_UNSUPPORTED(__shfl_xor_sync)
HIPR_TWIN_UNSUPPORTED(__ballot_sync)
HIPR_TWIN_UNSUPPORTED(__any_sync)
HIPR_TWIN_UNSUPPORTED(__all_sync)
HIPR_TWIN_UNSUPPORTED(__syncwarp)
#undef HIPR_TWIN_UNSUPPORTED

// ---- Device printf ------------------------------------------------------------------

namespace hipr_twin {
__attribute__((format(printf, 1, 2))) inline int Printf(const char* format, ...) {
  char small[512];
  va_list ap;
  va_start(ap, format);
  int n = vsnprintf(small, sizeof(small), format, ap);
  va_end(ap);
  if (n < 0) return n;
  const HiprTwinThread& self = Self();
  if (static_cast<size_t>(n) < sizeof(small)) {
    self.services->write_output(&self, small, static_cast<size_t>(n));
    return n;
  }
  char* big = static_cast<char*>(malloc(static_cast<size_t>(n) + 1));
  if (big == nullptr) return -1;
  va_start(ap, format);
  vsnprintf(big, static_cast<size_t>(n) + 1, format, ap);
  va_end(ap);
  self.services->write_output(&self, big, static_cast<size_t>(n));
  free(big);
  return n;
}
}  // namespace hipr_twin


// ---- Kernel entries (used by the descriptor twin_rewrite.py appends) -----------

namespace hipr_twin {

// Explicit kernel arguments laid out by host ABI rules: each at the next
// offset aligned to alignof(T), sizeof(T) bytes.
template <typename... A>
struct ArgLayout {
  static constexpr uint32_t kCount = sizeof...(A);
  static constexpr std::array<HiprTwinArg, sizeof...(A) + 1> Compute() {
    std::array<HiprTwinArg, sizeof...(A) + 1> out{};
    const uint32_t sizes[] = {0u, static_cast<uint32_t>(sizeof(A))...};
    const uint32_t aligns[] = {1u, static_cast<uint32_t>(alignof(A))...};
    uint32_t offset = 0;
    for (uint32_t i = 0; i < kCount; ++i) {
      offset = (offset + aligns[i + 1] - 1) / aligns[i + 1] * aligns[i + 1];
      out[i] = HiprTwinArg{offset, sizes[i + 1]};
      offset += sizes[i + 1];
    }
    return out;
  }
  // One spare element so that a kernel without arguments has an array too.
  static constexpr std::array<HiprTwinArg, sizeof...(A) + 1> kArgs = Compute();
};

template <typename T>
inline T LoadArg(const uint8_t* p) {
  static_assert(std::is_trivially_copyable<T>::value,
                "hipr sim twins: kernel arguments must be trivially copyable");
  union Slot {
    Slot() {}
    T value;
  } slot;
  memcpy(static_cast<void*>(&slot.value), p, sizeof(T));
  return slot.value;
}

template <auto F>
struct Kernel;

template <typename... A, void (*F)(A...)>
struct Kernel<F> {
  using Layout = ArgLayout<A...>;
  // The descriptor takes its address, which also instantiates a template.
  static constexpr auto kFunction = F;
  static void Run(const uint8_t* kernarg) { Call(kernarg, std::index_sequence_for<A...>{}); }
  template <size_t... I>
  static void Call(const uint8_t* kernarg, std::index_sequence<I...>) {
    (void)kernarg;
    F(LoadArg<A>(kernarg + Layout::kArgs[I].offset)...);
  }
};

}  // namespace hipr_twin

// Device code's printf goes to the launch's output, not the worker's stdout.
// Last, so that no header included above sees the macro.
#define printf(...) hipr_twin::Printf(__VA_ARGS__)  // So that ::printf(...) works too.

#endif  // HIPR_TWIN_PRELUDE_H_
