// Registration: what compiler-generated module constructors tell the runtime
// (__hipRegisterFatBinary, __hipRegisterFunction, __hipRegisterVar, ...),
// recorded on the client for later use (kernel launch is a later issue). It
// never touches the session.
//
// These entry points run from constructors of DT_NEEDED libraries, before
// the stub's own constructors: the registry is created on first use (a
// leaked object behind a guarded function-local static), never by a static
// initialiser.
//
// Thread-safety: all functions may be called from any thread.
#pragma once

#include <cstddef>

namespace hipr::client {

// The device-side name of the kernel whose host stub is `host_function`, or
// nullptr if none was registered. The string lives as long as the process.
const char* RegisteredKernelName(const void* host_function);

// Counts of live registrations, for tests and logs.
struct RegistrationCounts {
  size_t fat_binaries = 0;
  size_t kernels = 0;
  size_t variables = 0;
};
RegistrationCounts CountRegistrations();

}  // namespace hipr::client
