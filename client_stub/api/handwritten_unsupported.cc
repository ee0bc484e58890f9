// Exported symbols of libamdhip64.so.{5,6,7} that hipr does not support and that
// the generator cannot produce because they do not return hipError_t: the
// tracer and profiler's activity callbacks and hiprtc's precompiled header.
// Each logs once and fails in its own type.
#include <cstdint>

#include "client_stub/api/api_common.h"

// ROCm 6.x's tracer hook: nothing is traced through hipr.
HIPR_EXPORT void hipRegisterTracerCallback(int (*)(int, uint32_t, void*)) {
  HIPR_LOG_ONCE(kInfo, "hipRegisterTracerCallback: API tracing is not supported by hipr");
}

// Profiler hooks (roctracer): nothing is traced through hipr. Exported with C
// names although amd_detail/hip_runtime_prof.h declares them C++ (so that
// header is not included here).
HIPR_EXPORT void hipInitActivityCallback(void*, void*, void*) {
  HIPR_LOG_ONCE(kInfo, "hipInitActivityCallback: activity tracing is not supported by hipr");
}

HIPR_EXPORT bool hipEnableActivityCallback(uint32_t, bool) { return false; }

// hiprtc's precompiled header: none.
HIPR_EXPORT void __hipGetPCH(const char** pch, unsigned int* size) {
  if (pch != nullptr) *pch = nullptr;
  if (size != nullptr) *size = 0;
}
