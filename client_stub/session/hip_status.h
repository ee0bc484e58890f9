// Status and hipError_t: the one mapping between the protocol's Status and
// the HIP error numbers the stub returns, shared by the exported API and
// the engines.
#pragma once

#include <string>

#include <hip/hip_runtime_api.h>

#include "protocol/status.h"

namespace hipr::client {

// A status carrying the runtime's own error number returns it; any session-
// or link-scope status (the session is dead or unreachable) is
// hipErrorNoDevice; other codes map to the nearest HIP error. The table is
// the worker's too (protocol/status_hip.h).
hipError_t ToHipError(const Status& st);

// Status carrying a HIP error number (Status::native()), the form module and
// launch errors take inside the client; ToHipError() returns `error`.
Status HipStatus(int error, std::string message);

}  // namespace hipr::client
