// Last-error semantics per major (api_result.h). HIP 5.x (ROCm/clr hipamd
// before 5.7): every API call stores its own return code in the calling
// thread's last error (HIP_RETURN), success included; hipGetLastError
// returns it and resets it to hipSuccess; hipPeekAtLastError returns it
// without resetting. HIP 5.7 changed hipGetLastError to return the last
// *error* instead (clr CHANGELOG: "Correct hipGetLastError to return the
// last error instead of last API call's return code"), which is what 6.x
// and 7.x programs see; 7.0 no longer counts hipErrorNotReady (a busy
// stream or event) as an error (AMD's "HIP API 7.0 changes").
#include "client_stub/api/api_result.h"

namespace hipr::client {
namespace {

// Trivial types with constant initialisers: static TLS, no TLS wrapper, no
// constructor; valid in threads the stub never saw start.
constinit thread_local hipError_t t_last_result = hipSuccess;
constinit thread_local hipError_t t_last_error = hipSuccess;
constinit thread_local hipError_t t_last_error7 = hipSuccess;  // hipErrorNotReady left out.

}  // namespace

hipError_t Result(hipError_t err) {
  t_last_result = err;
  if (err != hipSuccess) t_last_error = err;
  if (err != hipSuccess && err != hipErrorNotReady) t_last_error7 = err;
  return err;
}

hipError_t PeekLastError(int major) {
  return major >= 7 ? t_last_error7 : major == 6 ? t_last_error : t_last_result;
}

hipError_t TakeLastError(int major) {
  const hipError_t err = PeekLastError(major);
  t_last_result = hipSuccess;
  t_last_error = hipSuccess;
  t_last_error7 = hipSuccess;
  return err;
}

}  // namespace hipr::client
