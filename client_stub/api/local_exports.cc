// Exported HIP functions that do not return hipError_t and are computed
// locally, with no remote session: channel descriptors, IEEE half <-> float
// conversion, error/API/command names, build and hiprtc version queries.
// Behaviour matches Debian's libamdhip64.so.5 (5.2.3) unless noted.
//
// Nothing here has a dynamic initialiser: these may be called before the
// stub's constructors run. None of them touches the per-thread last error
// (real HIP's don't either).
// api_result.h first: it includes <hip/hip_runtime_api.h>, which
// hip_prof_str.h needs but does not include itself.
#include "client_stub/api/api_result.h"

#include <cstdint>
#include <cstring>

#include <hip/amd_detail/hip_prof_str.h>  // hip_api_name()
#include <hip/hip_version.h>
#include <hip/hiprtc.h>

namespace {

// ---- IEEE 754 binary16 <-> binary32 ---------------------------------------
// Pure integer code on purpose: compilers may lower _Float16 conversions to
// calls to __gnu_f2h_ieee/__gnu_h2f_ieee themselves (older LLVM on x86 did).

uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

float BitsFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Rounds `value >> shift` to nearest, ties to even.
uint32_t ShiftRoundEven(uint32_t value, int shift) {
  const uint32_t result = value >> shift;
  const uint32_t rest = value & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  return (rest > half || (rest == half && (result & 1))) ? result + 1 : result;
}

uint16_t FloatToHalf(float f) {
  const uint32_t bits = FloatBits(f);
  const uint16_t sign = (bits >> 16) & 0x8000;
  const uint32_t abs = bits & 0x7fffffff;
  if (abs > 0x7f800000) {
    // NaN: the canonical quiet NaN, keeping only the sign, as HIP 5.2 does
    // (F16C hardware would also keep the top payload bits).
    return sign | 0x7e00;
  }
  if (abs >= 0x477ff000) {
    // Infinity, or at least 65520 = halfway between 65504 (largest half)
    // and 2^16: rounds to infinity (the tie goes to the even side).
    return sign | 0x7c00;
  }
  if (abs >= 0x38800000) {
    // Normal half (>= 2^-14): rebias the exponent from 127 to 15 and drop
    // 13 mantissa bits. A carry out of the mantissa correctly bumps the
    // exponent; it cannot reach infinity given the test above.
    return sign | ShiftRoundEven(abs - 0x38000000, 13);
  }
  if (abs <= 0x33000000) {
    // At most 2^-25, half the smallest subnormal: rounds (ties to even) to 0.
    return sign;
  }
  // Subnormal half: the value is m * 2^(e-150); in units of 2^-24 that is
  // m >> (126 - e), with shift in [14, 24] here. Rounding up from the largest
  // subnormal yields 0x400, the smallest normal, as it should.
  const uint32_t m = (abs & 0x7fffff) | 0x800000;
  const int e = static_cast<int>(abs >> 23);
  return sign | ShiftRoundEven(m, 126 - e);
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) {
    if (mantissa == 0) return BitsFloat(sign | 0x7f800000);  // infinity
    // NaN: payload kept, quiet bit set (a signalling NaN becomes quiet, as
    // IEEE 754 asks and HIP 5.2 does).
    return BitsFloat(sign | 0x7fc00000 | (mantissa << 13));
  }
  if (exponent != 0) {  // normal: rebias 15 -> 127
    return BitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  }
  if (mantissa == 0) {
    return BitsFloat(sign);  // signed zero
  }
  // Subnormal half (mantissa * 2^-24) becomes a normal float: shift the
  // leading one up to bit 10, lowering the exponent once per shift.
  uint32_t float_exponent = 113;  // 2^-14 == 2^(113 - 127)
  while ((mantissa & 0x400) == 0) {
    mantissa <<= 1;
    --float_exponent;
  }
  return BitsFloat(sign | (float_exponent << 23) | ((mantissa & 0x3ff) << 13));
}

// ---- hipError_t names and descriptions ------------------------------------

struct ErrorText {
  const char* name;
  const char* description;
};

// Every hipError_t enumerator of the HIP 5.2 header. Aliases (e.g.
// hipErrorMemoryAllocation == hipErrorOutOfMemory) share a value and get the
// primary name, as HIP returns. No default label: -Wswitch reports any
// enumerator a newer header adds.
ErrorText DescribeError(hipError_t error) {
  // ROCm 6.x/7.x codes Debian's 5.2 enum lacks (hipr returns them to 7.x
  // callers of the texture-reference functions).
  if (static_cast<int>(error) == 911) return {"hipErrorInvalidChannelDescriptor", "invalid channel descriptor"};
  if (static_cast<int>(error) == 912) return {"hipErrorInvalidTexture", "invalid texture"};
  switch (error) {
    case hipSuccess: return {"hipSuccess", "no error"};
    case hipErrorInvalidValue: return {"hipErrorInvalidValue", "invalid argument"};
    case hipErrorOutOfMemory: return {"hipErrorOutOfMemory", "out of memory"};
    case hipErrorNotInitialized: return {"hipErrorNotInitialized", "initialization error"};
    case hipErrorDeinitialized: return {"hipErrorDeinitialized", "driver shutting down"};
    case hipErrorProfilerDisabled:
      return {"hipErrorProfilerDisabled", "profiler disabled while an external profiling tool is in use"};
    case hipErrorProfilerNotInitialized:
      return {"hipErrorProfilerNotInitialized", "profiler not initialized"};
    case hipErrorProfilerAlreadyStarted:
      return {"hipErrorProfilerAlreadyStarted", "profiler already started"};
    case hipErrorProfilerAlreadyStopped:
      return {"hipErrorProfilerAlreadyStopped", "profiler already stopped"};
    case hipErrorInvalidConfiguration:
      return {"hipErrorInvalidConfiguration", "invalid launch configuration argument"};
    case hipErrorInvalidPitchValue: return {"hipErrorInvalidPitchValue", "invalid pitch argument"};
    case hipErrorInvalidSymbol: return {"hipErrorInvalidSymbol", "invalid device symbol"};
    case hipErrorInvalidDevicePointer:
      return {"hipErrorInvalidDevicePointer", "invalid device pointer"};
    case hipErrorInvalidMemcpyDirection:
      return {"hipErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"};
    case hipErrorInsufficientDriver:
      return {"hipErrorInsufficientDriver", "driver version is insufficient for runtime version"};
    case hipErrorMissingConfiguration:
      return {"hipErrorMissingConfiguration", "__global__ function call is not configured"};
    case hipErrorPriorLaunchFailure:
      return {"hipErrorPriorLaunchFailure", "unspecified launch failure in a prior launch"};
    case hipErrorInvalidDeviceFunction:
      return {"hipErrorInvalidDeviceFunction", "invalid device function"};
    case hipErrorNoDevice: return {"hipErrorNoDevice", "no ROCm-capable device is detected"};
    case hipErrorInvalidDevice: return {"hipErrorInvalidDevice", "invalid device ordinal"};
    case hipErrorInvalidImage: return {"hipErrorInvalidImage", "device kernel image is invalid"};
    case hipErrorInvalidContext: return {"hipErrorInvalidContext", "invalid device context"};
    case hipErrorContextAlreadyCurrent:
      return {"hipErrorContextAlreadyCurrent", "context is already the current context"};
    case hipErrorMapFailed: return {"hipErrorMapFailed", "mapping of buffer object failed"};
    case hipErrorUnmapFailed: return {"hipErrorUnmapFailed", "unmapping of buffer object failed"};
    case hipErrorArrayIsMapped: return {"hipErrorArrayIsMapped", "array is mapped"};
    case hipErrorAlreadyMapped: return {"hipErrorAlreadyMapped", "resource already mapped"};
    case hipErrorNoBinaryForGpu:
      return {"hipErrorNoBinaryForGpu", "no kernel image is available for execution on the device"};
    case hipErrorAlreadyAcquired: return {"hipErrorAlreadyAcquired", "resource already acquired"};
    case hipErrorNotMapped: return {"hipErrorNotMapped", "resource not mapped"};
    case hipErrorNotMappedAsArray:
      return {"hipErrorNotMappedAsArray", "resource not mapped as array"};
    case hipErrorNotMappedAsPointer:
      return {"hipErrorNotMappedAsPointer", "resource not mapped as pointer"};
    case hipErrorECCNotCorrectable:
      return {"hipErrorECCNotCorrectable", "uncorrectable ECC error encountered"};
    case hipErrorUnsupportedLimit:
      return {"hipErrorUnsupportedLimit", "limit is not supported on this architecture"};
    case hipErrorContextAlreadyInUse:
      return {"hipErrorContextAlreadyInUse", "exclusive-thread device already in use by another thread"};
    case hipErrorPeerAccessUnsupported:
      return {"hipErrorPeerAccessUnsupported", "peer access is not supported between these two devices"};
    case hipErrorInvalidKernelFile: return {"hipErrorInvalidKernelFile", "invalid kernel file"};
    case hipErrorInvalidGraphicsContext:
      return {"hipErrorInvalidGraphicsContext", "invalid OpenGL or DirectX context"};
    case hipErrorInvalidSource: return {"hipErrorInvalidSource", "invalid source"};
    case hipErrorFileNotFound: return {"hipErrorFileNotFound", "file not found"};
    case hipErrorSharedObjectSymbolNotFound:
      return {"hipErrorSharedObjectSymbolNotFound", "shared object symbol not found"};
    case hipErrorSharedObjectInitFailed:
      return {"hipErrorSharedObjectInitFailed", "shared object initialization failed"};
    case hipErrorOperatingSystem:
      return {"hipErrorOperatingSystem", "OS call failed or operation not supported on this OS"};
    case hipErrorInvalidHandle: return {"hipErrorInvalidHandle", "invalid resource handle"};
    case hipErrorIllegalState:
      return {"hipErrorIllegalState", "the operation cannot be performed in the present state"};
    case hipErrorNotFound: return {"hipErrorNotFound", "named symbol not found"};
    case hipErrorNotReady: return {"hipErrorNotReady", "device not ready"};
    case hipErrorIllegalAddress:
      return {"hipErrorIllegalAddress", "an illegal memory access was encountered"};
    case hipErrorLaunchOutOfResources:
      return {"hipErrorLaunchOutOfResources", "too many resources requested for launch"};
    case hipErrorLaunchTimeOut:
      return {"hipErrorLaunchTimeOut", "the launch timed out and was terminated"};
    case hipErrorPeerAccessAlreadyEnabled:
      return {"hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled"};
    case hipErrorPeerAccessNotEnabled:
      return {"hipErrorPeerAccessNotEnabled", "peer access has not been enabled"};
    case hipErrorSetOnActiveProcess:
      return {"hipErrorSetOnActiveProcess", "cannot set while device is active in this process"};
    case hipErrorContextIsDestroyed: return {"hipErrorContextIsDestroyed", "context is destroyed"};
    case hipErrorAssert: return {"hipErrorAssert", "device-side assert triggered"};
    case hipErrorHostMemoryAlreadyRegistered:
      return {"hipErrorHostMemoryAlreadyRegistered",
              "part or all of the requested memory range is already registered"};
    case hipErrorHostMemoryNotRegistered:
      return {"hipErrorHostMemoryNotRegistered",
              "pointer does not correspond to a registered memory region"};
    case hipErrorLaunchFailure: return {"hipErrorLaunchFailure", "unspecified launch failure"};
    case hipErrorCooperativeLaunchTooLarge:
      return {"hipErrorCooperativeLaunchTooLarge", "too many blocks in cooperative launch"};
    case hipErrorNotSupported: return {"hipErrorNotSupported", "operation not supported"};
    case hipErrorStreamCaptureUnsupported:
      return {"hipErrorStreamCaptureUnsupported", "operation not permitted when stream is capturing"};
    case hipErrorStreamCaptureInvalidated:
      return {"hipErrorStreamCaptureInvalidated",
              "operation failed due to a previous error during capture"};
    case hipErrorStreamCaptureMerge:
      return {"hipErrorStreamCaptureMerge",
              "operation would result in a merge of separate capture sequences"};
    case hipErrorStreamCaptureUnmatched:
      return {"hipErrorStreamCaptureUnmatched", "capture was not ended in the same stream as it began"};
    case hipErrorStreamCaptureUnjoined:
      return {"hipErrorStreamCaptureUnjoined", "capturing stream has unjoined work"};
    case hipErrorStreamCaptureIsolation:
      return {"hipErrorStreamCaptureIsolation",
              "dependency created on uncaptured work in another stream"};
    case hipErrorStreamCaptureImplicit:
      return {"hipErrorStreamCaptureImplicit",
              "operation would make the legacy stream depend on a capturing blocking stream"};
    case hipErrorCapturedEvent:
      return {"hipErrorCapturedEvent",
              "operation not permitted on an event last recorded in a capturing stream"};
    case hipErrorStreamCaptureWrongThread:
      return {"hipErrorStreamCaptureWrongThread",
              "attempt to terminate a thread-local capture sequence from another thread"};
    case hipErrorGraphExecUpdateFailure:
      return {"hipErrorGraphExecUpdateFailure",
              "the graph update was not performed because it violated update constraints"};
    case hipErrorUnknown: return {"hipErrorUnknown", "unknown error"};
    case hipErrorRuntimeMemory:
      return {"hipErrorRuntimeMemory", "runtime memory call returned error"};
    case hipErrorRuntimeOther:
      return {"hipErrorRuntimeOther", "runtime call other than memory returned error"};
    // A placeholder enumerator ("more error codes needed"), not a real error.
    case hipErrorTbd: return {"hipErrorTbd", "unknown error"};
  }
  return {"hipErrorUnknown", "unknown error"};
}

}  // namespace

// Stores the arguments verbatim, without validation, as HIP does.
HIPR_EXPORT hipChannelFormatDesc hipCreateChannelDesc(int x, int y, int z, int w,
                                                      hipChannelFormatKind f) {
  hipChannelFormatDesc desc;
  desc.x = x;
  desc.y = y;
  desc.z = z;
  desc.w = w;
  desc.f = f;
  return desc;
}

// Weak, as in libamdhip64.so.5: these are also compiler runtime helpers, so a
// definition elsewhere in the process may take precedence.
extern "C" __attribute__((visibility("default"), weak)) uint16_t __gnu_f2h_ieee(float f) {
  return FloatToHalf(f);
}

extern "C" __attribute__((visibility("default"), weak)) float __gnu_h2f_ieee(uint16_t h) {
  return HalfToFloat(h);
}

HIPR_EXPORT const char* hipGetErrorName(hipError_t error) { return DescribeError(error).name; }

// Note: HIP 5.2.3 itself returns the enumerator name here too; hipr returns a
// description, as later HIP releases do.
HIPR_EXPORT const char* hipGetErrorString(hipError_t error) {
  return DescribeError(error).description;
}

// ROCm 5.3's driver-style forms: the same texts through an output pointer;
// an error code the runtime does not know is hipErrorInvalidValue (and the
// pointer is left as it was).
HIPR_EXPORT hipError_t hipDrvGetErrorName(hipError_t error, const char** name) {
  if (name == nullptr) return hipErrorInvalidValue;
  const ErrorText t = DescribeError(error);
  if (error != hipErrorUnknown && std::strcmp(t.name, "hipErrorUnknown") == 0) return hipErrorInvalidValue;
  *name = t.name;
  return hipSuccess;
}

HIPR_EXPORT hipError_t hipDrvGetErrorString(hipError_t error, const char** text) {
  if (text == nullptr) return hipErrorInvalidValue;
  const ErrorText t = DescribeError(error);
  if (error != hipErrorUnknown && std::strcmp(t.name, "hipErrorUnknown") == 0) return hipErrorInvalidValue;
  *text = t.description;
  return hipSuccess;
}

// API names by callback id, from the header's generated table ("unknown" for
// ids it does not know), exactly what HIP returns.
HIPR_EXPORT const char* hipApiName(uint32_t id) { return hip_api_name(id); }

// Names of the ROCclr (OpenCL-derived) command kinds reported to activity
// callbacks; see HipVdiCommandKind in hip/amd_detail/hip_runtime_prof.h.
HIPR_EXPORT const char* hipGetCmdName(uint32_t id) {
  switch (id) {
    case 0x0000: return "InternalMarker";
    case 0x11f0: return "KernelExecution";
    case 0x11f1: return "Task";
    case 0x11f2: return "NativeKernel";
    case 0x11f3: return "CopyDeviceToHost";
    case 0x11f4: return "CopyHostToDevice";
    case 0x11f5: return "CopyDeviceToDevice";
    case 0x11f6: return "ReadImage";
    case 0x11f7: return "WriteImage";
    case 0x11f8: return "CopyImage";
    case 0x11f9: return "CopyImageToBuffer";
    case 0x11fa: return "CopyBufferToImage";
    case 0x11fb: return "MapBuffer";
    case 0x11fc: return "MapImage";
    case 0x11fd: return "UnmapMemObject";
    case 0x11fe: return "Marker";
    case 0x11ff: return "AcquireGLObjects";
    case 0x1200: return "ReleaseGLObjects";
    case 0x1201: return "CopyDeviceToHost2D";
    case 0x1202: return "CopyHostToDevice2D";
    case 0x1203: return "CopyDeviceToDevice2D";
    case 0x1204: return "User";
    case 0x1205: return "Barrier";
    case 0x1206: return "MigrateMemObjects";
    case 0x1207: return "FillBuffer";
    case 0x1208: return "FillImage";
    case 0x1209: return "SvmFree";
    case 0x120a: return "SvmMemcpy";
    case 0x120b: return "SvmMemFill";
    case 0x120c: return "SvmMap";
    case 0x120d: return "SvmUnmap";
    default: return "Unknown command type";
  }
}

// Build identification of "the library": the values of the HIP headers the
// stub was built against (Debian's are empty strings and 0, as its library
// returns).
HIPR_EXPORT const char* amd_dbgapi_get_build_name() { return HIP_VERSION_BUILD_NAME; }
HIPR_EXPORT const char* amd_dbgapi_get_git_hash() { return HIP_VERSION_GITHASH; }
HIPR_EXPORT size_t amd_dbgapi_get_build_id() { return HIP_VERSION_BUILD_ID; }

// Enumerator names; nullptr for unknown codes, as HIP returns.
HIPR_EXPORT const char* hiprtcGetErrorString(hiprtcResult result) {
  switch (result) {
    case HIPRTC_SUCCESS: return "HIPRTC_SUCCESS";
    case HIPRTC_ERROR_OUT_OF_MEMORY: return "HIPRTC_ERROR_OUT_OF_MEMORY";
    case HIPRTC_ERROR_PROGRAM_CREATION_FAILURE: return "HIPRTC_ERROR_PROGRAM_CREATION_FAILURE";
    case HIPRTC_ERROR_INVALID_INPUT: return "HIPRTC_ERROR_INVALID_INPUT";
    case HIPRTC_ERROR_INVALID_PROGRAM: return "HIPRTC_ERROR_INVALID_PROGRAM";
    case HIPRTC_ERROR_INVALID_OPTION: return "HIPRTC_ERROR_INVALID_OPTION";
    case HIPRTC_ERROR_COMPILATION: return "HIPRTC_ERROR_COMPILATION";
    case HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE: return "HIPRTC_ERROR_BUILTIN_OPERATION_FAILURE";
    case HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION:
      return "HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION";
    case HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION:
      return "HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION";
    case HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID: return "HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID";
    case HIPRTC_ERROR_INTERNAL_ERROR: return "HIPRTC_ERROR_INTERNAL_ERROR";
  }
  if (static_cast<int>(result) == 100) return "HIPRTC_ERROR_LINKING";  // 6.x's linker.
  return nullptr;
}

// HIP 5.2 reports hiprtc version 9.0 (a fixed value, not the HIP version).
HIPR_EXPORT hiprtcResult hiprtcVersion(int* major, int* minor) {
  if (major == nullptr || minor == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  *major = 9;
  *minor = 0;
  return HIPRTC_SUCCESS;
}
