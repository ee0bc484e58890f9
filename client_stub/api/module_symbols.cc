#include "client_stub/api/module_symbols.h"

#include <memory>

#include "client_stub/api/api_common.h"
#include "client_stub/kernels/kernel_registry.h"

namespace hipr::client {

// A loaded (not registered) module named by an application's handle.
CodeModule* LoadedModule(hipModule_t module) {
  if (!CodeModule::IsLive(module)) return nullptr;
  auto* m = reinterpret_cast<CodeModule*>(module);
  return m->registered() ? nullptr : m;
}

// The session, loaded module and current device a module call works on.
hipError_t OpenModule(hipModule_t module, Remote** s, CodeModule** m, int* device) {
  *s = LiveSession();
  if (*s == nullptr) return hipErrorNoDevice;
  if (module == nullptr) return hipErrorInvalidResourceHandle;
  *m = LoadedModule(module);
  if (*m == nullptr) return hipErrorNotFound;
  return CurrentDeviceOf(**s, device);
}

// Global `name` of module `m` on `device` (the module's first use there
// loads it); hipErrorNotFound when it has none of that name.
hipError_t GlobalOf(Remote& s, CodeModule* m, int device, const char* name, void** address, size_t* size) {
  std::shared_ptr<const ModuleLoad> load;
  if (Status st = m->Load(s, device, &load); !st.ok()) return ToHipError(st);
  auto it = load->globals.find(name);
  if (it == load->globals.end()) return hipErrorNotFound;
  *address = reinterpret_cast<void*>(it->second.address);
  *size = it->second.size;
  return hipSuccess;
}


hipError_t ResolveSymbol(const void* symbol, void** address, size_t* size) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  RegisteredVar var;
  if (symbol == nullptr || !Kernels().FindRegisteredVar(symbol, &var)) return hipErrorInvalidSymbol;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  const hipError_t e = GlobalOf(*s, var.module, device, var.name.c_str(), address, size);
  if (e == hipErrorNotFound) {
    HIPR_LOG_INFO("device variable '%s' is not among the loaded module's globals", var.name.c_str());
    return hipErrorInvalidSymbol;
  }
  return e;
}

hipError_t ModuleGlobal(hipModule_t module, const char* name, void** address, size_t* size) {
  Remote* s = nullptr;
  CodeModule* m = nullptr;
  int device = 0;
  if (hipError_t e = OpenModule(module, &s, &m, &device); e != hipSuccess) return e;
  return GlobalOf(*s, m, device, name, address, size);
}


}  // namespace hipr::client
