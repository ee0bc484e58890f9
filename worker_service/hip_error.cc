#include "worker_service/hip_error.h"

#include <hip/hip_runtime_api.h>

namespace hipr::worker {

int32_t ToHipError(const Status& status) {
  if (status.native() != 0) return status.native();
  switch (status.code()) {
    case StatusCode::kOk: return hipSuccess;
    case StatusCode::kInvalidArgument: return hipErrorInvalidValue;
    case StatusCode::kOutOfRange: return hipErrorInvalidValue;
    case StatusCode::kNotFound: return hipErrorNotFound;
    case StatusCode::kResourceExhausted: return hipErrorOutOfMemory;
    case StatusCode::kNotSupported: return hipErrorNotSupported;
    case StatusCode::kFailedPrecondition: return hipErrorInvalidValue;
    case StatusCode::kNotReady: return hipErrorNotReady;
    case StatusCode::kInvalidDevice: return hipErrorInvalidDevice;
    case StatusCode::kInvalidHandle: return hipErrorInvalidHandle;
    // HIP's memory calls answer a pointer they do not know with
    // hipErrorInvalidValue; the client checks the same way before sending.
    case StatusCode::kInvalidDevicePointer: return hipErrorInvalidValue;
    case StatusCode::kDeviceLost: return hipErrorLaunchFailure;
    default: return hipErrorUnknown;
  }
}

}  // namespace hipr::worker
