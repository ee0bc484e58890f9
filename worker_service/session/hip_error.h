// The replay edge: the one place the worker turns a Status into the HIP
// error number a reply carries, by the table both ends share
// (protocol/status_hip.h).
#pragma once

#include <cstdint>

#include "protocol/status.h"

namespace hipr::worker {

int32_t ToHipError(const Status& status);

}  // namespace hipr::worker
