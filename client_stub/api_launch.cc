// Launch-related entry points that the generator cannot produce (they do not
// return hipError_t). Kernel launch itself is a later issue: the legacy
// hip_impl launcher logs once and records hipErrorNotSupported; kernel names
// come from registration.
#include <cstdint>

#include "client_stub/api_common.h"
#include "client_stub/registration.h"

using namespace hipr::client;

namespace hip_impl {

// HIP-Clang's old grid launcher (declared inline and hidden in the stale
// amd_detail/functional_grid_launch.hpp, exported by libamdhip64.so.5 as
// _ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv).
__attribute__((visibility("default"))) void hipLaunchKernelGGLImpl(std::uintptr_t function_address,
                                                                   const dim3& num_blocks,
                                                                   const dim3& dim_blocks,
                                                                   std::uint32_t shared_mem_bytes,
                                                                   hipStream_t stream,
                                                                   void** kernarg) {
  HIPR_LOG_ONCE(kError, "hip_impl::hipLaunchKernelGGLImpl is not supported by hipr; "
                        "kernel launches fail with hipErrorNotSupported");
  (void)Result(hipErrorNotSupported);
}

}  // namespace hip_impl

HIPR_EXPORT const char* hipKernelNameRefByPtr(const void* host_function, hipStream_t stream) {
  try {
    return RegisteredKernelName(host_function);
  } catch (...) {
    return nullptr;
  }
}

HIPR_EXPORT const char* hipKernelNameRef(const hipFunction_t function) {
  // Module functions (hipModuleGetFunction) are not supported yet, so no
  // hipFunction_t can name a kernel.
  return nullptr;
}
