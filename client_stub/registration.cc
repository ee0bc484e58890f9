#include "client_stub/registration.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "client_stub/api_common.h"

using namespace hipr::client;

namespace hipr::client {
namespace {

constexpr uint32_t kFatBinaryMagic = 0x48495046;  // "HIPF"
constexpr uint32_t kFatBinaryVersion = 1;

// What clang places in .hipFatBinSegment and passes to
// __hipRegisterFatBinary (llvm-project clang/lib/CodeGen/CGCUDANV.cpp).
struct FatBinaryWrapper {
  uint32_t magic;
  uint32_t version;
  const void* binary;  // The offload bundle in .hip_fatbin.
  const void* unused;
};

// The handle returned to compiled code, which stores it and passes it back
// to every __hipRegister* call of its module.
struct FatBinaryRecord {
  const FatBinaryWrapper* wrapper = nullptr;
  const void* bundle = nullptr;
  bool live = true;
};

struct KernelRecord {
  const FatBinaryRecord* module = nullptr;
  std::string device_name;
};

enum class VarKind { kVariable, kSurface, kTexture };

struct VarRecord {
  const FatBinaryRecord* module = nullptr;
  std::string name;
  size_t size = 0;
  VarKind kind = VarKind::kVariable;
  bool constant = false;
  bool external = false;
};

class Registry {
 public:
  FatBinaryRecord* AddModule(const FatBinaryWrapper* wrapper) {
    auto* m = new FatBinaryRecord{wrapper, wrapper->binary, true};  // Never freed: see below.
    std::lock_guard<std::mutex> lock(mu_);
    modules_.insert(m);
    return m;
  }

  // A handle is only trusted if this registry made it and it is still live.
  bool IsLiveModule(const void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = modules_.find(static_cast<const FatBinaryRecord*>(handle));
    return it != modules_.end() && (*it)->live;
  }

  void AddKernel(const void* module, const void* host_function, const char* device_name) {
    std::lock_guard<std::mutex> lock(mu_);
    // The compiler may register one host stub twice; the first name stays.
    if (kernels_.count(host_function) != 0) return;
    auto* k = new KernelRecord{static_cast<const FatBinaryRecord*>(module), device_name};
    kernels_.emplace(host_function, k);
  }

  void AddVar(const void* module, const void* host_var, VarRecord record) {
    record.module = static_cast<const FatBinaryRecord*>(module);
    std::lock_guard<std::mutex> lock(mu_);
    vars_.insert_or_assign(host_var, std::move(record));
  }

  // Marks the module dead and forgets its kernels and variables. The record
  // itself stays allocated, so a late use of the handle is recognised as
  // dead rather than read freed memory; kernel names stay valid for callers
  // that still hold them.
  void RemoveModule(const void* handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = modules_.find(static_cast<const FatBinaryRecord*>(handle));
    if (it == modules_.end()) return;
    FatBinaryRecord* m = const_cast<FatBinaryRecord*>(*it);
    m->live = false;
    for (auto k = kernels_.begin(); k != kernels_.end();)
      k = k->second->module == m ? kernels_.erase(k) : std::next(k);
    for (auto v = vars_.begin(); v != vars_.end();)
      v = v->second.module == m ? vars_.erase(v) : std::next(v);
  }

  const char* KernelName(const void* host_function) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(host_function);
    return it == kernels_.end() ? nullptr : it->second->device_name.c_str();
  }

  RegistrationCounts Counts() {
    std::lock_guard<std::mutex> lock(mu_);
    RegistrationCounts c;
    for (const FatBinaryRecord* m : modules_) c.fat_binaries += m->live ? 1 : 0;
    c.kernels = kernels_.size();
    c.variables = vars_.size();
    return c;
  }

 private:
  std::mutex mu_;
  std::unordered_set<const FatBinaryRecord*> modules_;            // GUARDED_BY(mu_)
  std::unordered_map<const void*, KernelRecord*> kernels_;        // GUARDED_BY(mu_)
  std::unordered_map<const void*, VarRecord> vars_;               // GUARDED_BY(mu_)
};

Registry& GetRegistry() {
  static Registry* const registry = new Registry();  // Leaked: used until exit.
  return *registry;
}

// The <<<>>> configuration stack of the calling thread: pushed by the
// launch site, popped by the kernel's host stub. Trivial thread_locals only.
struct CallConfiguration {
  uint32_t grid[3];
  uint32_t block[3];
  size_t shared_mem;
  hipStream_t stream;
};
constexpr int kMaxCallDepth = 16;
constinit thread_local CallConfiguration t_call_stack[kMaxCallDepth] = {};
constinit thread_local int t_call_depth = 0;

}  // namespace

const char* RegisteredKernelName(const void* host_function) {
  return GetRegistry().KernelName(host_function);
}

RegistrationCounts CountRegistrations() { return GetRegistry().Counts(); }

}  // namespace hipr::client

// Not declared in Debian's HIP headers; signatures from ROCm/clr
// hipamd/src/hip_platform.cpp. The uint3* arguments of __hipRegisterFunction
// are taken as void* (unused, and pointer-sized either way).
HIPR_EXPORT void** __hipRegisterFatBinary(const void* data) {
  try {
    const auto* wrapper = static_cast<const FatBinaryWrapper*>(data);
    if (wrapper == nullptr || wrapper->magic != kFatBinaryMagic || wrapper->version != kFatBinaryVersion) {
      HIPR_LOG_ERROR("__hipRegisterFatBinary: not a HIP fat binary wrapper (magic 0x%x, version %u)",
                     wrapper != nullptr ? wrapper->magic : 0u, wrapper != nullptr ? wrapper->version : 0u);
      return nullptr;
    }
    FatBinaryRecord* m = GetRegistry().AddModule(wrapper);
    HIPR_LOG_DEBUG("registered fat binary %p (bundle %p)", data, wrapper->binary);
    return reinterpret_cast<void**>(m);
  } catch (...) {
    HIPR_LOG_ERROR("__hipRegisterFatBinary: out of memory");
    return nullptr;
  }
}

HIPR_EXPORT void __hipRegisterFunction(void** modules, const void* host_function,
                                       char* device_function, const char* device_name,
                                       unsigned int thread_limit, void* tid, void* bid,
                                       dim3* block_dim, dim3* grid_dim, int* wave_size) {
  try {
    if (host_function == nullptr || device_name == nullptr || !GetRegistry().IsLiveModule(modules)) {
      HIPR_LOG_ERROR("__hipRegisterFunction: bad registration of '%s'",
                     device_name != nullptr ? device_name : "(null)");
      return;
    }
    GetRegistry().AddKernel(modules, host_function, device_name);
  } catch (...) {
    HIPR_LOG_ERROR("__hipRegisterFunction: out of memory");
  }
}

namespace {

void RegisterVar(void** modules, void* var, const char* host_name, VarRecord record,
                 const char* what) {
  try {
    if (var == nullptr || host_name == nullptr || !GetRegistry().IsLiveModule(modules)) {
      HIPR_LOG_ERROR("%s: bad registration of '%s'", what, host_name != nullptr ? host_name : "(null)");
      return;
    }
    record.name = host_name;
    GetRegistry().AddVar(modules, var, std::move(record));
  } catch (...) {
    HIPR_LOG_ERROR("%s: out of memory", what);
  }
}

}  // namespace

HIPR_EXPORT void __hipRegisterVar(void** modules, void* var, char* host_var, char* device_var,
                                  int ext, size_t size, int constant, int global) {
  VarRecord r;
  r.size = size;
  r.kind = VarKind::kVariable;
  r.constant = constant != 0;
  r.external = ext != 0;
  RegisterVar(modules, var, host_var, std::move(r), "__hipRegisterVar");
}

HIPR_EXPORT void __hipRegisterSurface(void** modules, void* var, char* host_var, char* device_var,
                                      int type, int ext) {
  VarRecord r;
  r.kind = VarKind::kSurface;
  r.external = ext != 0;
  RegisterVar(modules, var, host_var, std::move(r), "__hipRegisterSurface");
}

HIPR_EXPORT void __hipRegisterTexture(void** modules, void* var, char* host_var, char* device_var,
                                      int type, int norm, int ext) {
  VarRecord r;
  r.kind = VarKind::kTexture;
  r.external = ext != 0;
  RegisterVar(modules, var, host_var, std::move(r), "__hipRegisterTexture");
}

HIPR_EXPORT void __hipRegisterManagedVar(void* module, void** pointer, void* init_value,
                                         const char* name, size_t size, unsigned align) {
  // Managed variables need a host mirror kept in sync with the device copy
  // (a later issue). Host code that reads through *pointer will fault.
  HIPR_LOG_ONCE(kError, "__managed__ variables are not supported by hipr yet (first: '%s')",
                name != nullptr ? name : "(null)");
  if (pointer != nullptr) *pointer = nullptr;
}

HIPR_EXPORT void __hipUnregisterFatBinary(void** modules) {
  try {
    GetRegistry().RemoveModule(modules);
  } catch (...) {
  }
}

HIPR_EXPORT hipError_t __hipPushCallConfiguration(dim3 grid_dim, dim3 block_dim, size_t shared_mem,
                                                  hipStream_t stream) {
  if (t_call_depth == kMaxCallDepth) {
    HIPR_LOG_ERROR("__hipPushCallConfiguration: more than %d nested kernel launches", kMaxCallDepth);
    return Result(hipErrorInvalidConfiguration);
  }
  t_call_stack[t_call_depth++] = CallConfiguration{{grid_dim.x, grid_dim.y, grid_dim.z},
                                                   {block_dim.x, block_dim.y, block_dim.z},
                                                   shared_mem,
                                                   stream};
  return Result(hipSuccess);
}

HIPR_EXPORT hipError_t __hipPopCallConfiguration(dim3* grid_dim, dim3* block_dim, size_t* shared_mem,
                                                 hipStream_t* stream) {
  if (t_call_depth == 0) return Result(hipErrorInvalidConfiguration);
  if (grid_dim == nullptr || block_dim == nullptr || shared_mem == nullptr || stream == nullptr)
    return Result(hipErrorInvalidValue);
  const CallConfiguration& c = t_call_stack[--t_call_depth];
  *grid_dim = dim3(c.grid[0], c.grid[1], c.grid[2]);
  *block_dim = dim3(c.block[0], c.block[1], c.block[2]);
  *shared_mem = c.shared_mem;
  *stream = c.stream;
  return Result(hipSuccess);
}
