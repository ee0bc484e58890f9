#include "client_stub/session/hip_status.h"

#include <utility>

#include "protocol/status_hip.h"

HIPR_CHECK_HIP_ERROR_NUMBERS();

namespace hipr::client {

hipError_t ToHipError(const Status& st) { return static_cast<hipError_t>(HipErrorFor(st)); }

Status HipStatus(int error, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), error);
}

}  // namespace hipr::client
