// The edge where HIP calls end: every exported function returns through
// Result(), which records the per-thread last error as HIP does
// (hipGetLastError / hipPeekAtLastError read it).
#pragma once

#include <hip/hip_runtime_api.h>

namespace hipr::client {

// Records `err` as this thread's last result and returns it. Two readings
// are kept, for callers linked against different majors (abi_major.h):
//  * major 5 (clr before 5.7): every call's return code, success included,
//    is the last error;
//  * major >= 6: the last call that failed is the last error, until read;
//    from 7.0 hipErrorNotReady is not a failure (AMD's "HIP API 7.0
//    changes").
hipError_t Result(hipError_t err);

// Reads and clears this thread's last error (hipGetLastError) as a caller
// of `major` sees it; clears both readings.
hipError_t TakeLastError(int major = 5);
// Reads without clearing (hipPeekAtLastError).
hipError_t PeekLastError(int major = 5);

}  // namespace hipr::client

// Marks a function as part of the stub's exported HIP ABI. Everything else in
// the stub is hidden (-fvisibility=hidden); the version script assigns nodes.
#define HIPR_EXPORT extern "C" __attribute__((visibility("default")))
