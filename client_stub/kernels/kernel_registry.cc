#include "client_stub/kernels/kernel_registry.h"

#include <pthread.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <new>
#include <shared_mutex>
#include <unordered_map>
#include <unordered_set>

#include "client_stub/base/log.h"
#include "protocol/thread_annotations.h"

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

struct KernelRecord {
  CodeModule* module;
  std::string name;
};

struct FunctionRecord {
  CodeModule* module;
  std::string name;
};

class Registry {
 public:
  static Registry& Get() {
    static Registry* const registry = [] {
      if (int rc = pthread_atfork(&PrepareFork, &ParentAfterFork, &ChildAfterFork); rc != 0)
        HIPR_LOG_WARN("pthread_atfork failed (%d): a fork during a kernel launch could hang the child", rc);
      return new Registry();  // Leaked: used until exit.
    }();
    return *registry;
  }

  void AddModule(CodeModule* m) {
    WriterLock lock(mu_);
    modules_.insert(m);
  }

  bool IsModule(const void* handle) const {
    ReaderLock lock(mu_);
    return modules_.count(handle) != 0;
  }

  void AddKernel(CodeModule* m, const void* host_function, const char* name) {
    WriterLock lock(mu_);
    // The compiler may register one host stub twice; the first name stays.
    if (kernels_.count(host_function) != 0) return;
    kernels_.emplace(host_function, new KernelRecord{m, name});  // Never freed: names outlive it.
  }

  void AddVar(const void* host_var, RegisteredVar var) {
    WriterLock lock(mu_);
    vars_.insert_or_assign(host_var, std::move(var));
  }

  bool FindKernel(const void* host_function, RegisteredKernel* out) const {
    ReaderLock lock(mu_);
    auto it = kernels_.find(host_function);
    if (it == kernels_.end()) return false;
    *out = RegisteredKernel{it->second->module, &it->second->name};
    return true;
  }

  bool FindVar(const void* host_var, RegisteredVar* out) const {
    ReaderLock lock(mu_);
    auto it = vars_.find(host_var);
    if (it == vars_.end()) return false;
    *out = it->second;
    return true;
  }

  // Forgets the module's kernels and variables; the caller retires it.
  bool RemoveModule(const void* handle) {
    WriterLock lock(mu_);
    if (modules_.erase(handle) == 0) return false;
    for (auto k = kernels_.begin(); k != kernels_.end();)
      k = k->second->module == handle ? kernels_.erase(k) : std::next(k);
    for (auto v = vars_.begin(); v != vars_.end();)
      v = v->second.module == handle ? vars_.erase(v) : std::next(v);
    return true;
  }

  hipFunction_t Function(CodeModule* m, const std::string& name) {
    WriterLock lock(mu_);
    auto& by_name = functions_by_module_[m];
    auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    // Freed a while after its module's unload (ForgetFunctions).
    auto* f = reinterpret_cast<hipFunction_t>(new FunctionRecord{m, name});
    by_name.emplace(name, f);
    functions_.insert(f);
    return f;
  }

  bool FindFunction(hipFunction_t f, ModuleFunction* out) const {
    ReaderLock lock(mu_);
    if (functions_.count(f) == 0) return false;
    const auto* r = reinterpret_cast<const FunctionRecord*>(f);
    *out = ModuleFunction{r->module, &r->name};
    return true;
  }

  void ForgetFunctions(const CodeModule* m) {
    WriterLock lock(mu_);
    auto it = functions_by_module_.find(const_cast<CodeModule*>(m));
    if (it == functions_by_module_.end()) return;
    for (const auto& [name, f] : it->second) {
      functions_.erase(f);
      retired_functions_.push_back(reinterpret_cast<FunctionRecord*>(f));
    }
    functions_by_module_.erase(it);
    // A handle used after its module's unload is refused while its record
    // is kept (FindFunction never dereferences a forgotten one); the oldest
    // records go, so loading and unloading forever keeps a bounded number.
    while (retired_functions_.size() > kRetiredFunctionsKept) {
      delete retired_functions_.front();
      retired_functions_.pop_front();
    }
  }

  RegistrationCounts Counts() const {
    ReaderLock lock(mu_);
    return RegistrationCounts{modules_.size(), kernels_.size(), vars_.size()};
  }

 private:
  static void PrepareFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { Get().mu_.lock(); }
  static void ParentAfterFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { Get().mu_.unlock(); }
  // The child's only thread re-creates the lock its parent held at fork.
  static void ChildAfterFork() { new (&Get().mu_) SharedMutex(); }

  mutable SharedMutex mu_;
  std::unordered_set<const void*> modules_ HIPR_GUARDED_BY(mu_);  // registered, live.
  std::unordered_map<const void*, KernelRecord*> kernels_ HIPR_GUARDED_BY(mu_);
  std::unordered_map<const void*, RegisteredVar> vars_ HIPR_GUARDED_BY(mu_);
  std::unordered_set<hipFunction_t> functions_ HIPR_GUARDED_BY(mu_);  // live.
  static constexpr size_t kRetiredFunctionsKept = 1024;
  std::deque<FunctionRecord*> retired_functions_ HIPR_GUARDED_BY(mu_);  // oldest first.
  std::unordered_map<CodeModule*, std::unordered_map<std::string, hipFunction_t>>
      functions_by_module_ HIPR_GUARDED_BY(mu_);
};

}  // namespace

CodeModule* RegisterFatBinary(const void* data, ModuleHooks& hooks) {
  const auto* wrapper = static_cast<const FatBinaryWrapper*>(data);
  if (wrapper == nullptr || wrapper->magic != kFatBinaryMagic || wrapper->version != kFatBinaryVersion ||
      wrapper->binary == nullptr) {
    HIPR_LOG_ERROR("__hipRegisterFatBinary: not a HIP fat binary wrapper (magic 0x%x, version %u)",
                   wrapper != nullptr ? wrapper->magic : 0u, wrapper != nullptr ? wrapper->version : 0u);
    return nullptr;
  }
  CodeModule* m = CodeModule::NewRegistered(wrapper->binary, hooks);
  Registry::Get().AddModule(m);
  HIPR_LOG_DEBUG("registered fat binary %p (bundle %p)", data, wrapper->binary);
  return m;
}

bool RegisterFunction(const void* handle, const void* host_function, const char* device_name) {
  Registry& r = Registry::Get();
  if (host_function == nullptr || device_name == nullptr || !r.IsModule(handle)) {
    HIPR_LOG_ERROR("__hipRegisterFunction: bad registration of '%s'", device_name != nullptr ? device_name : "(null)");
    return false;
  }
  r.AddKernel(static_cast<CodeModule*>(const_cast<void*>(handle)), host_function, device_name);
  return true;
}

bool RegisterVar(const void* handle, const void* host_var, RegisteredVar var) {
  Registry& r = Registry::Get();
  if (host_var == nullptr || var.name.empty() || !r.IsModule(handle)) {
    HIPR_LOG_ERROR("__hipRegisterVar: bad registration of '%s'", var.name.c_str());
    return false;
  }
  var.module = static_cast<CodeModule*>(const_cast<void*>(handle));
  r.AddVar(host_var, std::move(var));
  return true;
}

bool IsRegisteredModule(const void* handle) { return Registry::Get().IsModule(handle); }

void UnregisterFatBinary(const void* handle) {
  if (!Registry::Get().RemoveModule(handle)) return;
  static_cast<CodeModule*>(const_cast<void*>(handle))->Retire();
}

bool FindRegisteredKernel(const void* host_function, RegisteredKernel* out) {
  return Registry::Get().FindKernel(host_function, out);
}

bool FindRegisteredVar(const void* host_var, RegisteredVar* out) { return Registry::Get().FindVar(host_var, out); }

hipFunction_t GetModuleFunction(CodeModule* module, const std::string& name) {
  return Registry::Get().Function(module, name);
}

bool FindModuleFunction(hipFunction_t function, ModuleFunction* out) {
  if (function == nullptr || !Registry::Get().FindFunction(function, out)) return false;
  return out->module->live();
}

void ForgetModuleFunctions(const CodeModule* module) { Registry::Get().ForgetFunctions(module); }

RegistrationCounts CountRegistrations() { return Registry::Get().Counts(); }

}  // namespace hipr::client
