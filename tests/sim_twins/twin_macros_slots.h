// What twin_macros.hip's kernel checks, one result slot per macro of the
// gfx90a device compile; shared with sim_twin_test.cc (plain C++).
#pragma once

namespace twin_macros {

enum Slot {
  kHipDeviceCompile,   // __HIP_DEVICE_COMPILE__ 1
  kHip,                // __HIP__ 1
  kHipcc,              // __HIPCC__ 1
  kAmdgcn,             // __AMDGCN__ 1
  kAmdgpu,             // __AMDGPU__ 1
  kAmd,                // __AMD__ 1
  kGfx9,               // __GFX9__ 1
  kGfx90a,             // __gfx90a__ 1
  kWavefrontSize,      // __AMDGCN_WAVEFRONT_SIZE 64
  kProcessor,          // __amdgcn_processor__ "gfx90a"
  kTargetId,           // __amdgcn_target_id__ "gfx90a"
  kHasFmaf,            // __HAS_FMAF__ 1
  kHasFp64,            // __HAS_FP64__ 1
  kHasLdexpf,          // __HAS_LDEXPF__ 1
  kScopeSingleThread,  // __HIP_MEMORY_SCOPE_SINGLETHREAD 1
  kScopeWavefront,     // __HIP_MEMORY_SCOPE_WAVEFRONT 2
  kScopeWorkgroup,     // __HIP_MEMORY_SCOPE_WORKGROUP 3
  kScopeAgent,         // __HIP_MEMORY_SCOPE_AGENT 4
  kScopeSystem,        // __HIP_MEMORY_SCOPE_SYSTEM 5
  kFastFma,            // FP_FAST_FMA 1
  kFastFmaf,           // FP_FAST_FMAF 1
  kNoMathErrno,        // __NO_MATH_ERRNO__ 1
  kCplusplus,          // __cplusplus 201703L (both compile with -std=c++17)
  kDeviceBranch,       // A __host__ __device__ function's #if __HIP_DEVICE_COMPILE__
  kSlotCount
};

inline constexpr const char* kSlotNames[kSlotCount] = {"__HIP_DEVICE_COMPILE__",
                                                       "__HIP__",
                                                       "__HIPCC__",
                                                       "__AMDGCN__",
                                                       "__AMDGPU__",
                                                       "__AMD__",
                                                       "__GFX9__",
                                                       "__gfx90a__",
                                                       "__AMDGCN_WAVEFRONT_SIZE",
                                                       "__amdgcn_processor__",
                                                       "__amdgcn_target_id__",
                                                       "__HAS_FMAF__",
                                                       "__HAS_FP64__",
                                                       "__HAS_LDEXPF__",
                                                       "__HIP_MEMORY_SCOPE_SINGLETHREAD",
                                                       "__HIP_MEMORY_SCOPE_WAVEFRONT",
                                                       "__HIP_MEMORY_SCOPE_WORKGROUP",
                                                       "__HIP_MEMORY_SCOPE_AGENT",
                                                       "__HIP_MEMORY_SCOPE_SYSTEM",
                                                       "FP_FAST_FMA",
                                                       "FP_FAST_FMAF",
                                                       "__NO_MATH_ERRNO__",
                                                       "__cplusplus",
                                                       "#if __HIP_DEVICE_COMPILE__ in a __host__ __device__ function"};

}  // namespace twin_macros
