// Status -> hipError_t: the one table both ends use. The worker applies it to
// the result of every call it replays (the reply carries the number); the
// client to what it decides locally and to a session that has ended. Only the
// files that include this header need HIP's headers; protocol/ itself does
// not include it.
#pragma once

#include <hip/hip_runtime_api.h>

#include "protocol/status.h"

namespace hipr {

// Every code has its row and there is no default, so a new StatusCode does
// not compile (-Wswitch) until it says which HIP error it is.
constexpr hipError_t HipErrorForCode(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return hipSuccess;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
    case StatusCode::kFailedPrecondition:
      return hipErrorInvalidValue;
    // HIP's memory calls (hipFree, hipMemcpy, hipMemset...) answer a pointer
    // they do not know with hipErrorInvalidValue, not InvalidDevicePointer.
    case StatusCode::kInvalidDevicePointer: return hipErrorInvalidValue;
    case StatusCode::kNotFound: return hipErrorNotFound;
    case StatusCode::kResourceExhausted: return hipErrorOutOfMemory;
    case StatusCode::kNotSupported: return hipErrorNotSupported;
    case StatusCode::kNotReady: return hipErrorNotReady;
    case StatusCode::kInvalidDevice: return hipErrorInvalidDevice;
    case StatusCode::kInvalidHandle: return hipErrorInvalidHandle;
    case StatusCode::kInternal: return hipErrorUnknown;
    // Session and link scope: the session is over or cannot be reached, and
    // every later call of the client answers the same.
    case StatusCode::kProtocolError:
    case StatusCode::kVersionMismatch:
    case StatusCode::kUnauthenticated:
    case StatusCode::kDeviceLost:
    case StatusCode::kUnavailable:
    case StatusCode::kLinkDown:
    case StatusCode::kTimeout:
      return hipErrorNoDevice;
  }
  return hipErrorUnknown;
}

// A status that carries the runtime's own error number returns it verbatim.
inline hipError_t HipErrorFor(const Status& status) {
  if (status.ok()) return hipSuccess;
  if (status.native() != 0) return static_cast<hipError_t>(status.native());
  return HipErrorForCode(status.code());
}

}  // namespace hipr
