// CodeModule: one module of device code as the client sees it — a fat
// binary registered by a compiler-generated constructor, or an image given
// to hipModuleLoad/hipModuleLoadData — and everything learnt about it
// lazily:
//
//  * per device ISA (target id), an IsaImage: the bundle entry selected for
//    that target (or the bare ELF), its parsed AMDGPU metadata and its
//    SHA-256. Parsed and hashed on first need, once per target, shared by
//    every session and device with that target.
//  * per (session, device), a ModuleLoad: the module's protocol id in that
//    session, what kModuleLoad answered (globals, kernels the device cannot
//    launch) and the function ids named so far. Made by the module's first
//    use on that device in that session (the first launch of one of its
//    kernels, symbol lookup, hipModuleGetGlobal), never at registration.
//
// Registration only records the bundle pointer: no parsing, hashing or
// I/O, so thousands of registrations cost microseconds each.
//
// Sessions are never destroyed (client.h), so a ModuleLoad keyed by a
// Remote* can never be mistaken for another session's: a forked child's new
// session has a new address and loads the module again.
//
// Lifetime: modules are never deleted. Unregistering or unloading one
// retires it: it drops its images and loads, and later uses fail with a
// handle error rather than read freed memory.
//
// Thread-safety: every method may be called from any thread. Each module
// has a short-held state lock (mu_) and a work lock (work_mu_) that
// serializes parsing and loading (network round trips) of that module only;
// results are published under mu_, so work_mu_ guards no state and a forked
// child may simply re-create it (see ModuleForkGuard).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "protocol/thread_annotations.h"
#include "client_stub/session/hip_status.h"
#include "client_stub/session/remote.h"
#include "protocol/code_object/code_object.h"
#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::client {

struct ManagedVar;  // managed/managed_vars.h
struct ModuleLoad;

// One ISA's code object of a module. Immutable once built.
struct IsaImage {
  // A loaded image's bytes, which `elf` may view: kept alive by every image
  // made from them, released by the module when it is unloaded.
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  std::string target;      // The device target id it was selected for.
  co::Bundle bundle;       // Keeps a decompressed (CCOB) bundle's bytes alive.
  co::Bytes elf;           // The code object: a view into the module or `bundle`.
  co::CodeObjectInfo info;
  co::Sha256Digest sha256{};
  std::unordered_map<std::string_view, const co::KernelInfo*> kernels;  // Views info.

  const co::KernelInfo* FindKernel(std::string_view name) const {
    auto it = kernels.find(name);
    return it == kernels.end() ? nullptr : it->second;
  }
};

// How many bytes from `p` (at most `max`) lie in readable memory of this
// process, from /proc/self/maps: the view a code object without a stated size
// may be parsed in, so that headers claiming more (a hostile e_shnum) are
// refused instead of read past the caller's memory. `max` when the maps
// cannot be read.
uint64_t ReadableBytesAt(const void* p, uint64_t max);

// A module's first use in one session on one device. Immutable once
// published, except `function_ids`, which its module's mu_ guards.
struct ModuleLoad {
  const Remote* session = nullptr;
  int device = 0;
  uint64_t id = 0;  // The protocol's module id, unique in the process.
  Status status;    // Not ok: the load failed and every use returns it.
  std::shared_ptr<const IsaImage> image;
  std::unordered_map<std::string, msg::ModuleGlobal> globals;
  std::unordered_set<std::string> unavailable;  // Kernels the device cannot launch.
  bool all_unavailable = false;                 // ...or none of them can run.
  std::string unavailable_message;
};

// What a launch needs from the module: the load, the kernel's metadata and
// its function id in the session.
struct KernelBinding {
  std::shared_ptr<const ModuleLoad> load;
  const co::KernelInfo* kernel = nullptr;  // Lives as long as load->image.
  uint64_t function_id = 0;
  // The request must carry the kernel's name: no launch carrying it has been
  // queued yet (concurrent first launches may all carry it).
  bool first_launch = false;
};

// What a module's loads owe the layers above modules, which the module
// cannot see: recording its globals as device memory of the client, and
// attaching its __managed__ variables. Given to each module when it is made
// (the exported API's, api_common.h); it outlives every module.
class ModuleHooks {
 public:
  // After the worker loaded the module (`load`, its globals known) in
  // `session` on `device`; `managed` are the module's __managed__ variables.
  // Not ok fails the load with that status.
  virtual Status Loaded(Remote& session, int device, const ModuleLoad& load,
                        const std::vector<ManagedVar*>& managed) = 0;
  // The load is dropped (the module retired): its globals are gone.
  virtual void Unloaded(const ModuleLoad& load) = 0;

 protected:
  ~ModuleHooks() = default;
};

class CodeModule {
 public:
  // A fat binary's offload bundle, borrowed from the registering object;
  // nothing is read until first use.
  static CodeModule* NewRegistered(const void* bundle, ModuleHooks& hooks);
  // An image (bundle or bare ELF) whose bytes the module keeps. Deleted a
  // while after Retire() (64 later unloads): a handle used after its
  // unload is refused by IsLive until then, and undefined after, as in HIP.
  static CodeModule* NewLoaded(std::vector<uint8_t> image, std::string name, ModuleHooks& hooks);
  // Is `p` a module made by one of the above and not retired? Never
  // dereferences `p`.
  static bool IsLive(const void* p);

  // For messages: the loaded file's name, or the object a registered bundle
  // lives in.
  std::string name() const;
  bool registered() const { return borrowed_ != nullptr; }
  bool live() const { return live_.load(std::memory_order_acquire); }

  // The code object for a device whose target id is `target`, parsed and
  // hashed once per target. Errors carry hipErrorInvalidImage (malformed),
  // hipErrorNoBinaryForGpu (no entry for the target) or
  // hipErrorInvalidResourceHandle (retired).
  Status Image(const std::string& target, std::shared_ptr<const IsaImage>* out);

  // The module's load in `session` on `device`, made on first call (one or
  // two kModuleLoad round trips; blocks) and cached, failures included. A
  // not-ok return is the load's error or the session's.
  Status Load(Remote& session, int device, std::shared_ptr<const ModuleLoad>* out);

  // Load() plus the kernel `name` and its function id in that session.
  // hipErrorInvalidDeviceFunction when the module has no such kernel,
  // hipErrorNoBinaryForGpu when the device cannot launch it (logged once).
  Status Bind(Remote& session, int device, const std::string& name, KernelBinding* out);

  // A launch's fast path: what Bind() gives, under one lock and with no
  // other work, once an earlier Bind() of `name` in (session, device) has
  // succeeded. False (and *out untouched) otherwise: then Image() and
  // Bind() say what is wrong, or do the first load.
  bool FindBound(const Remote& session, int device, const std::string& name, KernelBinding* out) const;

  // A launch that carried `kernel`'s name has been queued in load's session,
  // so later launches (queued after it) may leave the name out.
  void MarkNamed(const ModuleLoad& load, const std::string& kernel);

  // Records a __managed__ variable (managed_vars.h): every load of the
  // module attaches it.
  void AddManagedVar(ManagedVar* var);

  // Unregistered or unloaded: drops images and loads, posts kModuleUnload to
  // every session still alive that loaded it, forgets its globals.
  void Retire();

  // Forgets the loads of `session` on `device` (every device when < 0),
  // after hipDeviceReset dropped the worker's copies; the next use loads
  // again under a new id.
  void ForgetLoads(const Remote* session, int device);

 private:
  CodeModule(const void* borrowed, std::vector<uint8_t> owned, std::string name, ModuleHooks& hooks);
  friend class ModuleForkGuard;

  Status ImageLocked(const std::string& target, std::shared_ptr<const IsaImage>* out) HIPR_REQUIRES(work_mu_);
  Status BuildImage(const std::string& target, std::shared_ptr<const IsaImage>* out);
  std::shared_ptr<const ModuleLoad> FindLoad(const Remote* session, int device) const HIPR_REQUIRES(mu_);

  const void* const borrowed_;  // Registered bundle (nullptr for loaded images).
  // Loaded image bytes; released when the module is retired (images made
  // from them keep their own reference).
  std::shared_ptr<const std::vector<uint8_t>> owned_ HIPR_GUARDED_BY(mu_);
  const std::string given_name_;
  ModuleHooks& hooks_;
  std::atomic<bool> live_{true};

  Mutex work_mu_;  // Serializes parsing and loading; guards no state.
  mutable Mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const IsaImage>> images_ HIPR_GUARDED_BY(mu_);
  std::vector<std::shared_ptr<const ModuleLoad>> loads_ HIPR_GUARDED_BY(mu_);
  struct FunctionId {
    uint64_t id = 0;
    bool named = false;  // A launch carrying the name has been queued.
  };
  // Per load id: kernel name -> function id.
  std::unordered_map<uint64_t, std::unordered_map<std::string, FunctionId>> function_ids_ HIPR_GUARDED_BY(mu_);
  std::unordered_set<std::string> logged_unavailable_ HIPR_GUARDED_BY(mu_);
  std::vector<ManagedVar*> managed_vars_ HIPR_GUARDED_BY(mu_);
};

// Forgets every module's loads of `session` on `device` (< 0: all); the
// caller forgets what the hooks recorded for them.
void ForgetModuleLoads(const Remote* session, int device);

// fork() support: the prepare handler takes every module's state lock (and
// the module list's), so a child never inherits one held by a thread that
// does not exist there; the child re-creates them, and the work locks.
// Installed once, when the first module is made.
class ModuleForkGuard {
 public:
  static void Install();

 private:
  static void Prepare();
  static void Parent();
  static void Child();
};

}  // namespace hipr::client
