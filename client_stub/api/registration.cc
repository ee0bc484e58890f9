// The registration entry points compiler-generated module constructors call
// (llvm-project clang/lib/CodeGen/CGCUDANV.cpp). They only record (see
// kernel_registry.h): nothing is parsed, hashed or sent, and no session is
// opened. They run before the stub's own constructors, so nothing here
// relies on a static object with a constructor.
//
// Not declared in Debian's HIP headers; signatures from ROCm/clr
// hipamd/src/hip_platform.cpp. The uint3* arguments of __hipRegisterFunction
// are taken as void* (unused, and pointer-sized either way).
#include "client_stub/api/api_common.h"
#include "client_stub/kernels/kernel_registry.h"
#include "client_stub/base/stats.h"

using namespace hipr::client;

namespace {

// Adds the time of one registration call to the stats (HIPR_STATS).
class RegistrationTimer {
 public:
  RegistrationTimer() : start_(stats::NowNs()) {}
  ~RegistrationTimer() { stats::Add(stats::Get().registration_ns, stats::NowNs() - start_); }

 private:
  uint64_t start_;
};

}  // namespace

HIPR_EXPORT void** __hipRegisterFatBinary(const void* data) {
  RegistrationTimer timer;
  try {
    stats::Add(stats::Get().fat_binaries);
    return reinterpret_cast<void**>(Kernels().RegisterFatBinary(data, ApiModuleHooks()));
  } catch (...) {
    HIPR_LOG_ERROR("__hipRegisterFatBinary: out of memory");
    return nullptr;
  }
}

HIPR_EXPORT void __hipRegisterFunction(void** modules, const void* host_function,
                                       char* device_function, const char* device_name,
                                       unsigned int thread_limit, void* tid, void* bid,
                                       dim3* block_dim, dim3* grid_dim, int* wave_size) {
  RegistrationTimer timer;
  try {
    stats::Add(stats::Get().kernels);
    (void)Kernels().RegisterFunction(modules, host_function, device_name);
  } catch (...) {
    HIPR_LOG_ERROR("__hipRegisterFunction: out of memory");
  }
}

namespace {

void RegisterVarEntry(void** modules, void* var, const char* host_name, RegisteredVar record,
                      const char* what) {
  try {
    if (host_name == nullptr) {
      HIPR_LOG_ERROR("%s: a variable with no name", what);
      return;
    }
    stats::Add(stats::Get().variables);
    record.name = host_name;
    (void)Kernels().RegisterVar(modules, var, std::move(record));
  } catch (...) {
    HIPR_LOG_ERROR("%s: out of memory", what);
  }
}

}  // namespace

HIPR_EXPORT void __hipRegisterVar(void** modules, void* var, char* host_var, char* device_var,
                                  int ext, size_t size, int constant, int global) {
  RegistrationTimer timer;
  RegisteredVar r;
  r.size = size;
  r.kind = VarKind::kVariable;
  r.constant = constant != 0;
  r.external = ext != 0;
  // The code object names the variable by its device-side name; clang
  // passes the same string for both.
  RegisterVarEntry(modules, var, device_var != nullptr ? device_var : host_var, std::move(r), "__hipRegisterVar");
}

HIPR_EXPORT void __hipRegisterSurface(void** modules, void* var, char* host_var, char* device_var,
                                      int type, int ext) {
  RegisteredVar r;
  r.kind = VarKind::kSurface;
  r.external = ext != 0;
  RegisterVarEntry(modules, var, device_var != nullptr ? device_var : host_var, std::move(r),
                   "__hipRegisterSurface");
}

HIPR_EXPORT void __hipRegisterTexture(void** modules, void* var, char* host_var, char* device_var,
                                      int type, int norm, int ext) {
  RegisteredVar r;
  r.kind = VarKind::kTexture;
  r.external = ext != 0;
  RegisterVarEntry(modules, var, device_var != nullptr ? device_var : host_var, std::move(r),
                   "__hipRegisterTexture");
}

HIPR_EXPORT void __hipRegisterManagedVar(void* module, void** pointer, void* init_value,
                                         const char* name, size_t size, unsigned align) {
  try {
    (void)RegisterManagedVar(module, pointer, init_value, name, size, align);
  } catch (...) {
    HIPR_LOG_ERROR("__hipRegisterManagedVar: out of memory");
  }
}

HIPR_EXPORT void __hipUnregisterFatBinary(void** modules) {
  try {
    Kernels().UnregisterFatBinary(modules);
  } catch (...) {
  }
}
