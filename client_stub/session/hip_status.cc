#include "client_stub/session/hip_status.h"

#include <utility>

#include "protocol/status_hip.h"

namespace hipr::client {

hipError_t ToHipError(const Status& st) { return HipErrorFor(st); }

Status HipStatus(int error, std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message), error);
}

}  // namespace hipr::client
