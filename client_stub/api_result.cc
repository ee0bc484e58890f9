// HIP 5.x last-error semantics (ROCm/clr hipamd before 5.7): every API call
// stores its own return code in the calling thread's last error
// (HIP_RETURN), success included; hipGetLastError returns it and resets it to
// hipSuccess; hipPeekAtLastError returns it without resetting. HIP 5.7
// changed hipGetLastError to return the last *error* instead (clr
// CHANGELOG: "Correct hipGetLastError to return the last error instead of
// last API call's return code"); the per-major switch is a later issue.
#include "client_stub/api_result.h"

namespace hipr::client {
namespace {

// Trivial type with a constant initialiser: static TLS, no TLS wrapper, no
// constructor; valid in threads the stub never saw start.
constinit thread_local hipError_t t_last_result = hipSuccess;

}  // namespace

hipError_t Result(hipError_t err) {
  t_last_result = err;
  return err;
}

hipError_t TakeLastError() {
  hipError_t err = t_last_result;
  t_last_result = hipSuccess;
  return err;
}

hipError_t PeekLastError() { return t_last_result; }

}  // namespace hipr::client
