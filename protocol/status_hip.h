// Status -> HIP error number: the one table both ends use. The worker applies
// it to the result of every call it replays (the reply carries the number);
// the client to what it decides locally and to a session that has ended.
// The numbers are HIP's (hip_runtime_api.h's hipError_t, stable across ROCm
// majors); protocol/ includes no HIP header, so each end checks them against
// the headers it builds with (HIPR_CHECK_HIP_ERROR_NUMBERS).
#pragma once

#include <cstdint>

#include "protocol/status.h"

namespace hipr {

// The hipError_t values the table yields.
namespace hip_error {
inline constexpr int32_t kSuccess = 0;
inline constexpr int32_t kInvalidValue = 1;
inline constexpr int32_t kOutOfMemory = 2;
inline constexpr int32_t kNoDevice = 100;
inline constexpr int32_t kInvalidDevice = 101;
inline constexpr int32_t kInvalidHandle = 400;
inline constexpr int32_t kNotFound = 500;
inline constexpr int32_t kNotReady = 600;
inline constexpr int32_t kNotSupported = 801;
inline constexpr int32_t kUnknown = 999;
}  // namespace hip_error

// Every code has its row and there is no default, so a new StatusCode does
// not compile (-Wswitch) until it says which HIP error it is.
constexpr int32_t HipErrorForCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return hip_error::kSuccess;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kFailedPrecondition:
      return hip_error::kInvalidValue;
    // HIP's memory calls (hipFree, hipMemcpy, hipMemset...) answer a pointer
    // they do not know with hipErrorInvalidValue, not InvalidDevicePointer.
    case StatusCode::kInvalidDevicePointer: return hip_error::kInvalidValue;
    case StatusCode::kNotFound: return hip_error::kNotFound;
    case StatusCode::kResourceExhausted: return hip_error::kOutOfMemory;
    case StatusCode::kNotSupported: return hip_error::kNotSupported;
    case StatusCode::kNotReady: return hip_error::kNotReady;
    case StatusCode::kInvalidDevice: return hip_error::kInvalidDevice;
    case StatusCode::kInvalidHandle: return hip_error::kInvalidHandle;
    case StatusCode::kInternal: return hip_error::kUnknown;
    // Session and link scope: the session is over or cannot be reached, and
    // every later call of the client answers the same.
    case StatusCode::kProtocolError:
    case StatusCode::kVersionMismatch:
    case StatusCode::kUnauthenticated:
    case StatusCode::kDeviceLost:
    case StatusCode::kUnavailable:
    case StatusCode::kLinkDown:
    case StatusCode::kTimeout:
      return hip_error::kNoDevice;
  }
  return hip_error::kUnknown;
}

// A status that carries the runtime's own error number returns it verbatim.
inline int32_t HipErrorFor(const Status& status) {
  if (status.ok()) return hip_error::kSuccess;
  if (status.native() != 0) return status.native();
  return HipErrorForCode(status.code());
}

}  // namespace hipr

// In a file that includes hip_runtime_api.h: checks the table's numbers
// against that header's hipError_t.
#define HIPR_CHECK_HIP_ERROR_NUMBERS()                                                                   \
  static_assert(::hipr::hip_error::kSuccess == hipSuccess &&                                             \
                ::hipr::hip_error::kInvalidValue == hipErrorInvalidValue &&                              \
                ::hipr::hip_error::kOutOfMemory == hipErrorOutOfMemory &&                                \
                ::hipr::hip_error::kNoDevice == hipErrorNoDevice &&                                      \
                ::hipr::hip_error::kInvalidDevice == hipErrorInvalidDevice &&                            \
                ::hipr::hip_error::kInvalidHandle == hipErrorInvalidHandle &&                            \
                ::hipr::hip_error::kNotFound == hipErrorNotFound &&                                      \
                ::hipr::hip_error::kNotReady == hipErrorNotReady &&                                      \
                ::hipr::hip_error::kNotSupported == hipErrorNotSupported &&                              \
                ::hipr::hip_error::kUnknown == hipErrorUnknown,                                          \
                "protocol/status_hip.h's numbers differ from this hip_runtime_api.h")
