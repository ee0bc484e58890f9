// Twin test program: the macros hipcc's gfx90a device compile predefines.
// Each #if below takes the branch that writes 1 where the compile sees the
// device compile's value; the host branch writes 0. The code object
// therefore writes 1 everywhere, and so must its twin (sim_twin_test).
#include <hip/hip_runtime.h>

#include "twin_macros_slots.h"

namespace {

__device__ int SameString(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// Host and device code in one function, as portable libraries write it.
__host__ __device__ inline int OnDevice() {
#if defined(__HIP_DEVICE_COMPILE__)
  return 1;
#else
  return 0;
#endif
}

}  // namespace

__global__ void macros(int* out) {
  using namespace twin_macros;
  for (int i = 0; i < kSlotCount; ++i) out[i] = 0;
#if defined(__HIP_DEVICE_COMPILE__) && __HIP_DEVICE_COMPILE__ == 1
  out[kHipDeviceCompile] = 1;
#endif
#if defined(__HIP__) && __HIP__ == 1
  out[kHip] = 1;
#endif
#if defined(__HIPCC__) && __HIPCC__ == 1
  out[kHipcc] = 1;
#endif
#if defined(__AMDGCN__) && __AMDGCN__ == 1
  out[kAmdgcn] = 1;
#endif
#if defined(__AMDGPU__) && __AMDGPU__ == 1
  out[kAmdgpu] = 1;
#endif
#if defined(__AMD__) && __AMD__ == 1
  out[kAmd] = 1;
#endif
#if defined(__GFX9__) && __GFX9__ == 1
  out[kGfx9] = 1;
#endif
#ifdef __gfx90a__
  out[kGfx90a] = __gfx90a__ == 1;
#endif
#if defined(__AMDGCN_WAVEFRONT_SIZE) && __AMDGCN_WAVEFRONT_SIZE == 64
  out[kWavefrontSize] = 1;
#endif
#ifdef __amdgcn_processor__
  out[kProcessor] = SameString(__amdgcn_processor__, "gfx90a");
#endif
#ifdef __amdgcn_target_id__
  out[kTargetId] = SameString(__amdgcn_target_id__, "gfx90a");
#endif
#if defined(__HAS_FMAF__) && __HAS_FMAF__ == 1
  out[kHasFmaf] = 1;
#endif
#if defined(__HAS_FP64__) && __HAS_FP64__ == 1
  out[kHasFp64] = 1;
#endif
#if defined(__HAS_LDEXPF__) && __HAS_LDEXPF__ == 1
  out[kHasLdexpf] = 1;
#endif
#if defined(__HIP_MEMORY_SCOPE_SINGLETHREAD) && __HIP_MEMORY_SCOPE_SINGLETHREAD == 1
  out[kScopeSingleThread] = 1;
#endif
#if defined(__HIP_MEMORY_SCOPE_WAVEFRONT) && __HIP_MEMORY_SCOPE_WAVEFRONT == 2
  out[kScopeWavefront] = 1;
#endif
#if defined(__HIP_MEMORY_SCOPE_WORKGROUP) && __HIP_MEMORY_SCOPE_WORKGROUP == 3
  out[kScopeWorkgroup] = 1;
#endif
#if defined(__HIP_MEMORY_SCOPE_AGENT) && __HIP_MEMORY_SCOPE_AGENT == 4
  out[kScopeAgent] = 1;
#endif
#if defined(__HIP_MEMORY_SCOPE_SYSTEM) && __HIP_MEMORY_SCOPE_SYSTEM == 5
  out[kScopeSystem] = 1;
#endif
#if defined(FP_FAST_FMA) && FP_FAST_FMA == 1
  out[kFastFma] = 1;
#endif
#if defined(FP_FAST_FMAF) && FP_FAST_FMAF == 1
  out[kFastFmaf] = 1;
#endif
#if defined(__NO_MATH_ERRNO__) && __NO_MATH_ERRNO__ == 1
  out[kNoMathErrno] = 1;
#endif
#if __cplusplus == 201703L
  out[kCplusplus] = 1;
#endif
  out[kDeviceBranch] = OnDevice();
  out[kSlotCount] = kSlotCount;  // The twin and the test agree on the slots.
}

int main() {
  int* out = nullptr;
  if (hipMalloc(&out, (twin_macros::kSlotCount + 1) * sizeof(int)) != hipSuccess) return 1;
  macros<<<1, 1>>>(out);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
