// The process-wide state below the API edge: the registries every exported
// entry point may need. They are owned here, at the edge, and handed down:
// no engine reaches a process-wide registry by itself (layering_check).
// Client (client.h) cannot own them: the registries' own code uses Client,
// and the include graph is kept acyclic.
//
// Each is made on first use, from whatever thread or constructor calls first
// (__hipRegisterFatBinary runs in DT_NEEDED libraries' constructors, before
// the stub's own), installs its fork() handlers then, and is never
// destroyed: the application, the loader and other libraries may call HIP
// during exit.
#pragma once

#include "client_stub/graphs/graph.h"
#include "client_stub/kernels/kernel_registry.h"
#include "client_stub/managed/managed_vars.h"
#include "client_stub/textures/hip_arrays.h"

namespace hipr::client {

KernelRegistry& Kernels();
GraphRegistry& Graphs();
ArrayRegistry& Arrays();
ManagedVars& Managed();

}  // namespace hipr::client
