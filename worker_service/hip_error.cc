#include "worker_service/hip_error.h"

#include "protocol/status_hip.h"

namespace hipr::worker {

int32_t ToHipError(const Status& status) { return HipErrorFor(status); }

}  // namespace hipr::worker
