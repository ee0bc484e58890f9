// Entry points of the HIP ABI that hipr does not implement (yet).
//
// shim_gen/gen_exports.py emits one HIPR_UNSUPPORTED_ENTRY per exported
// symbol of libamdhip64.so.{5,6,7} that returns hipError_t and is not hand-written
// (client_stub/abi/handwritten.txt). Each one logs its name on the first call
// only and returns hipErrorNotSupported through Result(), so the per-thread
// last error is set as for any other failing call.
//
// These functions can run before the stub's constructors (another library's
// constructor may call HIP): nothing here has a dynamic initialiser. The
// "logged" flag is a function-local constinit std::atomic<bool>, which lives
// in .bss and needs no guard variable.
#pragma once

#include <atomic>

#include "client_stub/api/api_result.h"

namespace hipr::client {

// Logs "<symbol> is not supported by hipr" at error level unless `logged` was
// already set (set atomically, so exactly one caller logs), then returns
// Result(hipErrorNotSupported).
hipError_t Unsupported(const char* symbol, std::atomic<bool>& logged);

}  // namespace hipr::client

// Defines an exported, argument-ignoring entry point named `symbol` (the
// exact ELF name, C++-mangled or not) through the C++ function `cname`.
//
// The asm label gives the definition its ELF name while the C++ name differs
// from the HIP prototype, so <hip/hip_runtime_api.h> can be included for the
// types without a conflicting-declaration error. On x86-64 (SysV) a callee
// that reads no arguments and returns an int-sized enum in eax is
// ABI-compatible with every hipError_t-returning prototype: arguments travel
// in registers or caller-owned (caller-cleaned) stack slots that the callee
// may simply ignore, and an enum result needs no hidden return pointer.
#define HIPR_UNSUPPORTED_ENTRY(cname, symbol)                     \
  HIPR_EXPORT hipError_t cname() __asm__(symbol);                 \
  hipError_t cname() {                                            \
    static constinit std::atomic<bool> logged{false};             \
    return ::hipr::client::Unsupported(symbol, logged);           \
  }
