#include "client_stub/kernels/kernel_registry.h"

#include <new>
#include <utility>

#include "client_stub/base/log.h"

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

}  // namespace

CodeModule* KernelRegistry::RegisterFatBinary(const void* data, ModuleHooks& hooks) {
  const auto* wrapper = static_cast<const FatBinaryWrapper*>(data);
  if (wrapper == nullptr || wrapper->magic != kFatBinaryMagic || wrapper->version != kFatBinaryVersion ||
      wrapper->binary == nullptr) {
    HIPR_LOG_ERROR("__hipRegisterFatBinary: not a HIP fat binary wrapper (magic 0x%x, version %u)",
                   wrapper != nullptr ? wrapper->magic : 0u, wrapper != nullptr ? wrapper->version : 0u);
    return nullptr;
  }
  CodeModule* m = CodeModule::NewRegistered(wrapper->binary, hooks);
  {
    WriterLock lock(mu_);
    modules_.insert(m);
  }
  HIPR_LOG_DEBUG("registered fat binary %p (bundle %p)", data, wrapper->binary);
  return m;
}

KernelRegistry::~KernelRegistry() {
  WriterLock lock(mu_);
  for (const auto& [stub, record] : kernels_) delete record;
  for (hipFunction_t f : functions_) delete reinterpret_cast<FunctionRecord*>(f);
  for (FunctionRecord* f : retired_functions_) delete f;
}

bool KernelRegistry::IsRegisteredModule(const void* handle) const {
  ReaderLock lock(mu_);
  return modules_.count(handle) != 0;
}

bool KernelRegistry::RegisterFunction(const void* handle, const void* host_function, const char* device_name) {
  if (host_function == nullptr || device_name == nullptr || !IsRegisteredModule(handle)) {
    HIPR_LOG_ERROR("__hipRegisterFunction: bad registration of '%s'", device_name != nullptr ? device_name : "(null)");
    return false;
  }
  WriterLock lock(mu_);
  // The compiler may register one host stub twice; the first name stays.
  if (kernels_.count(host_function) == 0)
    kernels_.emplace(host_function, new KernelRecord{static_cast<CodeModule*>(const_cast<void*>(handle)), device_name});
  return true;
}

bool KernelRegistry::RegisterVar(const void* handle, const void* host_var, RegisteredVar var) {
  if (host_var == nullptr || var.name.empty() || !IsRegisteredModule(handle)) {
    HIPR_LOG_ERROR("__hipRegisterVar: bad registration of '%s'", var.name.c_str());
    return false;
  }
  var.module = static_cast<CodeModule*>(const_cast<void*>(handle));
  WriterLock lock(mu_);
  vars_.insert_or_assign(host_var, std::move(var));
  return true;
}

void KernelRegistry::UnregisterFatBinary(const void* handle) {
  {
    WriterLock lock(mu_);
    if (modules_.erase(handle) == 0) return;
    for (auto k = kernels_.begin(); k != kernels_.end();)
      k = k->second->module == handle ? kernels_.erase(k) : std::next(k);
    for (auto v = vars_.begin(); v != vars_.end();) v = v->second.module == handle ? vars_.erase(v) : std::next(v);
  }
  static_cast<CodeModule*>(const_cast<void*>(handle))->Retire();
}

bool KernelRegistry::FindRegisteredKernel(const void* host_function, RegisteredKernel* out) const {
  ReaderLock lock(mu_);
  auto it = kernels_.find(host_function);
  if (it == kernels_.end()) return false;
  *out = RegisteredKernel{it->second->module, &it->second->name};
  return true;
}

bool KernelRegistry::FindRegisteredVar(const void* host_var, RegisteredVar* out) const {
  ReaderLock lock(mu_);
  auto it = vars_.find(host_var);
  if (it == vars_.end()) return false;
  *out = it->second;
  return true;
}

hipFunction_t KernelRegistry::GetModuleFunction(CodeModule* module, const std::string& name) {
  WriterLock lock(mu_);
  auto& by_name = functions_by_module_[module];
  auto it = by_name.find(name);
  if (it != by_name.end()) return it->second;
  // Freed a while after its module's unload (ForgetModuleFunctions).
  auto* f = reinterpret_cast<hipFunction_t>(new FunctionRecord{module, name});
  by_name.emplace(name, f);
  functions_.insert(f);
  return f;
}

bool KernelRegistry::FindModuleFunction(hipFunction_t function, ModuleFunction* out) const {
  if (function == nullptr) return false;
  {
    ReaderLock lock(mu_);
    if (functions_.count(function) == 0) return false;
    const auto* r = reinterpret_cast<const FunctionRecord*>(function);
    *out = ModuleFunction{r->module, &r->name};
  }
  return out->module->live();
}

void KernelRegistry::ForgetModuleFunctions(const CodeModule* module) {
  WriterLock lock(mu_);
  auto it = functions_by_module_.find(const_cast<CodeModule*>(module));
  if (it == functions_by_module_.end()) return;
  for (const auto& [name, f] : it->second) {
    functions_.erase(f);
    retired_functions_.push_back(reinterpret_cast<FunctionRecord*>(f));
  }
  functions_by_module_.erase(it);
  // A handle used after its module's unload is refused while its record is
  // kept (FindModuleFunction never dereferences a forgotten one); the oldest
  // records go, so loading and unloading forever keeps a bounded number.
  while (retired_functions_.size() > kRetiredFunctionsKept) {
    delete retired_functions_.front();
    retired_functions_.pop_front();
  }
}

RegistrationCounts KernelRegistry::CountRegistrations() const {
  ReaderLock lock(mu_);
  return RegistrationCounts{modules_.size(), kernels_.size(), vars_.size()};
}

void KernelRegistry::LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
void KernelRegistry::UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
void KernelRegistry::ResetInChild() { new (&mu_) SharedMutex(); }

}  // namespace hipr::client
