// The edge where HIP calls end: every exported function returns through
// Result(), which records the per-thread last error as HIP does
// (hipGetLastError / hipPeekAtLastError read it).
#pragma once

#include <hip/hip_runtime_api.h>

namespace hipr::client {

// Records `err` as this thread's last result and returns it. HIP 5.x
// semantics (clr before 5.7): every call's return code, success included,
// becomes the last error; hipGetLastError returns it and resets it.
hipError_t Result(hipError_t err);

// Reads and clears this thread's last error (hipGetLastError).
hipError_t TakeLastError();
// Reads without clearing (hipPeekAtLastError).
hipError_t PeekLastError();

}  // namespace hipr::client

// Marks a function as part of the stub's exported HIP ABI. Everything else in
// the stub is hidden (-fvisibility=hidden); the version script assigns nodes.
#define HIPR_EXPORT extern "C" __attribute__((visibility("default")))
