// KernelRegistry: what compiler-generated module constructors told the
// runtime (__hipRegisterFatBinary, __hipRegisterFunction, __hipRegisterVar,
// __hipRegisterManagedVar), and the module functions handed out by
// hipModuleGetFunction.
//
// Registration only records pointers and names: no parsing, hashing or
// session, so a library registering ~12,000 kernels costs a few ms. Each fat
// binary becomes a CodeModule (code_module.h) that reads its bundle at first
// use; the handle compiled code keeps is that module's address.
//
// Registration runs from constructors of DT_NEEDED libraries, before the
// stub's own constructors: the process's registry is created on first use
// by its owner, the API edge (api/process_state.h), never by a static
// initialiser.
//
// Thread-safety: all methods may be called from any thread. Lookups (every
// launch) share a reader lock; fork() is handled as in code_module.h (the
// owner installs LockForFork and the rest with pthread_atfork).
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "client_stub/kernels/code_module.h"
#include "protocol/thread_annotations.h"

namespace hipr::client {

enum class VarKind { kVariable, kSurface, kTexture };

// A kernel's host stub, as registered. `name` lives as long as the process.
struct RegisteredKernel {
  CodeModule* module = nullptr;
  const std::string* name = nullptr;
};

struct RegisteredVar {
  CodeModule* module = nullptr;
  std::string name;  // The device-side name (as the code object has it).
  size_t size = 0;
  VarKind kind = VarKind::kVariable;
  bool constant = false;
  bool external = false;
};

// Module functions: a hipFunction_t is the address of a record that is never
// freed, validated against the live set before use (a stale handle is
// unknown, never another function). One record per (module, name).
struct ModuleFunction {
  CodeModule* module = nullptr;
  const std::string* name = nullptr;  // Lives as long as the process.
};

// Counts of live registrations, for tests and logs.
struct RegistrationCounts {
  size_t fat_binaries = 0;
  size_t kernels = 0;
  size_t variables = 0;
};

class KernelRegistry {
 public:
  KernelRegistry() = default;
  // The process's registry is never destroyed (process_state.h); another
  // one (a test's) frees its records, so names it handed out dangle then.
  ~KernelRegistry();
  KernelRegistry(const KernelRegistry&) = delete;
  KernelRegistry& operator=(const KernelRegistry&) = delete;

  // `wrapper` is what clang passes (HIPF magic, version 1, bundle pointer).
  // Returns the new module (the handle compiled code keeps, made with
  // `hooks`), or nullptr when the wrapper is not one (logged).
  CodeModule* RegisterFatBinary(const void* wrapper, ModuleHooks& hooks);
  // Is `handle` a module RegisterFatBinary made and not yet unregistered?
  bool IsRegisteredModule(const void* handle) const;
  // False (logged) when the handle is not a live module or the names are null.
  // A host stub registered twice keeps its first name.
  bool RegisterFunction(const void* handle, const void* host_function, const char* device_name);
  bool RegisterVar(const void* handle, const void* host_var, RegisteredVar var);
  // Forgets the module's kernels and variables and retires it.
  void UnregisterFatBinary(const void* handle);

  bool FindRegisteredKernel(const void* host_function, RegisteredKernel* out) const;
  bool FindRegisteredVar(const void* host_var, RegisteredVar* out) const;

  // Module functions (above).
  hipFunction_t GetModuleFunction(CodeModule* module, const std::string& name);
  bool FindModuleFunction(hipFunction_t function, ModuleFunction* out) const;
  // Makes the module's functions unknown (hipModuleUnload).
  void ForgetModuleFunctions(const CodeModule* module);

  RegistrationCounts CountRegistrations() const;

  // fork(): the lock is held across it; the child's only thread re-creates it.
  void LockForFork();
  void UnlockInParent();
  void ResetInChild();

 private:
  struct KernelRecord {
    CodeModule* module;
    std::string name;
  };
  struct FunctionRecord {
    CodeModule* module;
    std::string name;
  };

  mutable SharedMutex mu_;
  std::unordered_set<const void*> modules_ HIPR_GUARDED_BY(mu_);                 // registered, live.
  std::unordered_map<const void*, KernelRecord*> kernels_ HIPR_GUARDED_BY(mu_);  // Never freed: names outlive them.
  std::unordered_map<const void*, RegisteredVar> vars_ HIPR_GUARDED_BY(mu_);
  std::unordered_set<hipFunction_t> functions_ HIPR_GUARDED_BY(mu_);  // live.
  static constexpr size_t kRetiredFunctionsKept = 1024;
  std::deque<FunctionRecord*> retired_functions_ HIPR_GUARDED_BY(mu_);  // oldest first.
  std::unordered_map<CodeModule*, std::unordered_map<std::string, hipFunction_t>> functions_by_module_
      HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::client
