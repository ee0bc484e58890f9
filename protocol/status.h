// Status: the project's error value. Codes are grouped by the scope they
// end: a call error fails one call, a session error ends the session (the
// worker drops it; the client fails every later call), a link error means the
// transport is gone. (leveldb Status; UCX status ranges.)
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace hipr {

enum class StatusCode : int {
  kOk = 0,
  // Call scope (1..99).
  kInvalidArgument = 1,
  kNotFound = 2,
  kOutOfRange = 3,
  kResourceExhausted = 4,
  kNotSupported = 5,
  kFailedPrecondition = 6,
  kInternal = 7,
  kNotReady = 8,               // Queried work has not completed yet.
  kInvalidDevice = 9,          // Device ordinal out of range.
  kInvalidHandle = 10,         // Unknown stream/event/module id.
  kInvalidDevicePointer = 11,  // Address outside this session's allocations.
  // Session scope (100..199).
  kProtocolError = 100,
  kVersionMismatch = 101,
  kUnauthenticated = 102,
  kDeviceLost = 103,
  // The worker cannot take the session now but may soon (at --max-sessions,
  // a per-peer limit, or busy with hellos): a client retries within its
  // bound. Refusals that retrying cannot change (credentials, a tenant's
  // limits, versions) carry their own codes.
  kUnavailable = 104,
  // Link scope (200..).
  kLinkDown = 200,
  kTimeout = 201,
};

enum class StatusScope { kNone, kCall, kSession, kLink };

// An ok Status is one null pointer, as leveldb's: the hot paths (a decode
// returns one per field, a launch a handful) create, move and destroy ok
// statuses with no string work; only an error carries its code, native
// number and message on the heap.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, int native = 0)
      : rep_(code == StatusCode::kOk && message.empty() && native == 0
                 ? nullptr
                 : new Rep{code, native, std::move(message)}) {}
  Status(const Status& other) : rep_(other.rep_ ? new Rep(*other.rep_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) rep_.reset(other.rep_ ? new Rep(*other.rep_) : nullptr);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  static Status Ok() { return Status(); }

  bool ok() const { return !rep_ || rep_->code == StatusCode::kOk; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  const std::string& message() const;
  // The runtime's own error number when a real runtime produced this status
  // (0 when none): the replay edge returns it verbatim.
  int native() const { return rep_ ? rep_->native : 0; }
  StatusScope scope() const;
  std::string ToString() const;

 private:
  struct Rep {
    StatusCode code;
    int native;
    std::string message;
  };
  std::unique_ptr<Rep> rep_;  // Null: ok.
};

std::string_view StatusCodeName(StatusCode code);

inline Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
inline Status ProtocolError(std::string m) { return {StatusCode::kProtocolError, std::move(m)}; }
inline Status LinkDown(std::string m) { return {StatusCode::kLinkDown, std::move(m)}; }

}  // namespace hipr

#define HIPR_RETURN_IF_ERROR(expr)        \
  do {                                    \
    ::hipr::Status hipr_status_ = (expr); \
    if (!hipr_status_.ok()) return hipr_status_; \
  } while (0)
