#include "worker_service/session/hip_error.h"

#include <hip/hip_runtime_api.h>

#include "protocol/status_hip.h"

HIPR_CHECK_HIP_ERROR_NUMBERS();

namespace hipr::worker {

int32_t ToHipError(const Status& status) { return HipErrorFor(status); }

}  // namespace hipr::worker
