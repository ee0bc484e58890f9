#include "client_stub/session/hip_status.h"

#include <utility>

namespace hipr::client {

hipError_t ToHipError(const Status& st) {
  if (st.ok()) return hipSuccess;
  if (st.native() != 0) return static_cast<hipError_t>(st.native());
  switch (st.scope()) {
    case StatusScope::kSession:
    case StatusScope::kLink:
      return hipErrorNoDevice;
    default:
      break;
  }
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return hipErrorInvalidValue;
    case StatusCode::kNotFound: return hipErrorNotFound;
    case StatusCode::kResourceExhausted: return hipErrorOutOfMemory;
    case StatusCode::kNotSupported: return hipErrorNotSupported;
    case StatusCode::kNotReady: return hipErrorNotReady;
    case StatusCode::kInvalidDevice: return hipErrorInvalidDevice;
    case StatusCode::kInvalidHandle: return hipErrorInvalidHandle;
    case StatusCode::kInvalidDevicePointer: return hipErrorInvalidDevicePointer;
    default: return hipErrorUnknown;
  }
}

Status HipStatus(int error, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), error);
}

}  // namespace hipr::client
