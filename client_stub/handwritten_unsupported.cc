// Exported symbols of libamdhip64.so.{5,6,7} that hipr does not support and that
// the generator cannot produce because they do not return hipError_t:
// hiprtc (returns hiprtcResult), the profiler's activity callbacks and the
// hiprtc precompiled header. Each logs once and fails in its own type.
#include <cstdint>

#include <hip/hiprtc.h>

#include "client_stub/api_common.h"

namespace {

hiprtcResult HiprtcUnsupported(const char* name, std::atomic<bool>& logged) {
  if (!logged.exchange(true, std::memory_order_relaxed))
    HIPR_LOG_ERROR("%s: runtime compilation (hiprtc) is not supported by hipr", name);
  return HIPRTC_ERROR_INTERNAL_ERROR;
}

}  // namespace

#define HIPR_HIPRTC_UNSUPPORTED(name)                              \
  static constinit std::atomic<bool> logged{false};               \
  return HiprtcUnsupported(name, logged)

HIPR_EXPORT hiprtcResult hiprtcAddNameExpression(hiprtcProgram, const char*) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcAddNameExpression");
}
HIPR_EXPORT hiprtcResult hiprtcCompileProgram(hiprtcProgram, int, const char**) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcCompileProgram");
}
HIPR_EXPORT hiprtcResult hiprtcCreateProgram(hiprtcProgram*, const char*, const char*, int,
                                             const char**, const char**) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcCreateProgram");
}
HIPR_EXPORT hiprtcResult hiprtcDestroyProgram(hiprtcProgram*) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcDestroyProgram");
}
HIPR_EXPORT hiprtcResult hiprtcGetLoweredName(hiprtcProgram, const char*, const char**) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcGetLoweredName");
}
HIPR_EXPORT hiprtcResult hiprtcGetProgramLog(hiprtcProgram, char*) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcGetProgramLog");
}
HIPR_EXPORT hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram, size_t*) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcGetProgramLogSize");
}
HIPR_EXPORT hiprtcResult hiprtcGetCode(hiprtcProgram, char*) { HIPR_HIPRTC_UNSUPPORTED("hiprtcGetCode"); }
HIPR_EXPORT hiprtcResult hiprtcGetCodeSize(hiprtcProgram, size_t*) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcGetCodeSize");
}

// ROCm 6.x additions (libamdhip64.so.6 exports them; 7.x moved hiprtc to a
// library of its own). Opaque handle types stand in for 6.x's.
HIPR_EXPORT hiprtcResult hiprtcGetBitcode(hiprtcProgram, char*) { HIPR_HIPRTC_UNSUPPORTED("hiprtcGetBitcode"); }
HIPR_EXPORT hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram, size_t*) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcGetBitcodeSize");
}
HIPR_EXPORT hiprtcResult hiprtcLinkCreate(unsigned int, void*, void**, void**) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcLinkCreate");
}
HIPR_EXPORT hiprtcResult hiprtcLinkAddFile(void*, int, const char*, unsigned int, void*, void**) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcLinkAddFile");
}
HIPR_EXPORT hiprtcResult hiprtcLinkAddData(void*, int, void*, size_t, const char*, unsigned int, void*, void**) {
  HIPR_HIPRTC_UNSUPPORTED("hiprtcLinkAddData");
}
HIPR_EXPORT hiprtcResult hiprtcLinkComplete(void*, void**, size_t*) { HIPR_HIPRTC_UNSUPPORTED("hiprtcLinkComplete"); }
HIPR_EXPORT hiprtcResult hiprtcLinkDestroy(void*) { HIPR_HIPRTC_UNSUPPORTED("hiprtcLinkDestroy"); }

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
