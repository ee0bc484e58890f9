#include "client_stub/api/unsupported.h"

#include "client_stub/base/log.h"

namespace hipr::client {

hipError_t Unsupported(const char* symbol, std::atomic<bool>& logged) {
  // exchange() returns the previous value: only the first caller sees false.
  if (!logged.exchange(true, std::memory_order_relaxed)) {
    HIPR_LOG_ERROR("%s is not supported by hipr; returning hipErrorNotSupported", symbol);
  }
  return Result(hipErrorNotSupported);
}

}  // namespace hipr::client
