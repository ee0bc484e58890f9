// Modules and device variables by the handles applications hold: the
// paths that the module API (api_module.cc) and texture references
// (api_texref.cc) share.
#pragma once

#include <cstddef>

#include <hip/hip_runtime_api.h>

#include "client_stub/kernels/code_module.h"
#include "client_stub/session/remote.h"

namespace hipr::client {

// A loaded (not registered) module named by an application's handle;
// nullptr for anything else.
CodeModule* LoadedModule(hipModule_t module);

// The live session, the loaded module and the calling thread's device a
// module call works on (hipErrorNoDevice, hipErrorInvalidResourceHandle,
// hipErrorNotFound, or the device's error otherwise).
hipError_t OpenModule(hipModule_t module, Remote** s, CodeModule** m, int* device);

// Global `name` of module `m` on `device` (the module's first use there
// loads it); hipErrorNotFound when it has none of that name.
hipError_t GlobalOf(Remote& s, CodeModule* m, int device, const char* name, void** address, size_t* size);

// A registered device variable's address and size on the calling thread's
// device (its module's first use there loads it); hipErrorInvalidSymbol
// when `symbol` is no registered variable.
hipError_t ResolveSymbol(const void* symbol, void** address, size_t* size);
// A loaded module's global `name` on the calling thread's device
// (hipModuleGetGlobal's path).
hipError_t ModuleGlobal(hipModule_t module, const char* name, void** address, size_t* size);

}  // namespace hipr::client
