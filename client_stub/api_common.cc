#include "client_stub/api_common.h"

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

hipError_t ResolveStream(hipStream_t stream, StreamTarget* out) {
  if (stream == nullptr || stream == hipStreamPerThread) {
    if (stream == hipStreamPerThread)
      HIPR_LOG_ONCE(kWarn, "hipStreamPerThread is treated as the null stream by this hipr version");
    *out = StreamTarget{0, CurrentDevice()};
    return hipSuccess;
  }
  StreamRecord record;
  if (!Client::Get().handles().FindStream(stream, &record)) return hipErrorInvalidHandle;
  *out = StreamTarget{record.id, record.device};
  return hipSuccess;
}

}  // namespace hipr::client
