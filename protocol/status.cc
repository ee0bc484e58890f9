#include "protocol/status.h"

namespace hipr {

const std::string& Status::message() const {
  static const std::string* const empty = new std::string();
  return rep_ ? rep_->message : *empty;
}

StatusScope Status::scope() const {
  int c = static_cast<int>(code());
  if (c == 0) return StatusScope::kNone;
  if (c < 100) return StatusScope::kCall;
  if (c < 200) return StatusScope::kSession;
  return StatusScope::kLink;
}

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kInvalidArgument: return "invalid argument";
    case StatusCode::kNotFound: return "not found";
    case StatusCode::kOutOfRange: return "out of range";
    case StatusCode::kResourceExhausted: return "resource exhausted";
    case StatusCode::kNotSupported: return "not supported";
    case StatusCode::kFailedPrecondition: return "failed precondition";
    case StatusCode::kInternal: return "internal error";
    case StatusCode::kNotReady: return "not ready";
    case StatusCode::kInvalidDevice: return "invalid device";
    case StatusCode::kInvalidHandle: return "invalid handle";
    case StatusCode::kInvalidDevicePointer: return "invalid device pointer";
    case StatusCode::kProtocolError: return "protocol error";
    case StatusCode::kVersionMismatch: return "version mismatch";
    case StatusCode::kUnauthenticated: return "unauthenticated";
    case StatusCode::kDeviceLost: return "device lost";
    case StatusCode::kUnavailable: return "unavailable";
    case StatusCode::kLinkDown: return "link down";
    case StatusCode::kTimeout: return "timeout";
  }
  return "unknown status";
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(StatusCodeName(code()));
  if (!message().empty()) s += ": " + message();
  return s;
}

}  // namespace hipr
