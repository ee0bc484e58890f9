// ManagedVars: `__managed__` variables, the one place where device data is
// dereferenced directly by host code.
//
// How clang lowers `__managed__ T x = init;` (checked on Debian's hipcc 5.2):
// the code object holds `x.managed` (T, the initial bytes) and `x`, a device
// pointer variable; host code reads and writes through a host pointer
// variable that `__hipRegisterManagedVar(module, &ptr, &init, "x", size,
// align)` must fill in a constructor, with no HIP call before the first
// access. The runtime allocates managed memory, copies `init` into it and,
// when the module is loaded, stores the allocation's address in the device
// variable `x`.
//
// hipr cannot hand the client a device address it can dereference, so each
// variable has two copies:
//  * the mirror: client memory allocated at registration with the initial
//    bytes, which the registered pointer points at for the life of the
//    process (host code reads and writes it freely);
//  * the device copy: a managed allocation (msg::kMallocManaged) on the
//    worker, made when the variable's module is first loaded in a session;
//    every load of the module (any device) gets its `x` set to it.
//
// They are synchronised at the points where native HIP makes the other
// side's writes visible:
//  * before every kernel launch (BeforeLaunch): a mirror whose bytes differ
//    from those last exchanged with the device is sent, fire-and-forget on
//    the launch's stream, ahead of the launch;
//  * after a synchronising call that succeeded (AfterSync:
//    hipDeviceSynchronize, hipStreamSynchronize, hipEventSynchronize, a
//    query answering hipSuccess, a blocking copy), when a kernel was
//    launched since the last fetch: the device copies are read back. A byte
//    the device changed replaces the mirror's; a byte only host code changed
//    meanwhile is kept (and sent before the next launch).
// A kernel argument that points into a mirror (e.g. `kernel<<<..>>>(&x)`) is
// rewritten to the device copy, for the explicit pointer arguments
// (`global_buffer` in the metadata); a mirror address hidden inside a struct
// argument is not translated (documented in docs/architecture.md).
//
// Cost: nothing for a process without managed variables; otherwise a memcmp
// of each variable per launch and one round trip per variable at a
// synchronising call that follows launches.
//
// Thread-safety: all methods may be called from any thread (one mutex,
// which is never held while a module is loaded). fork(): the child keeps the
// mirrors (its own memory) and materialises new device copies in its own
// session.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "client_stub/session.h"
#include "protocol/status.h"

namespace hipr::client {

class CodeModule;
struct ModuleLoad;

// One registered `__managed__` variable. Never freed: host code may hold the
// mirror's address until exit.
struct ManagedVar {
  CodeModule* module = nullptr;
  std::string name;  // The device pointer variable's name in the code object.
  size_t size = 0;
  uint8_t* mirror = nullptr;
  // GUARDED_BY(ManagedVars::mu_) from here on.
  std::vector<uint8_t> exchanged;  // The bytes last sent to or read from the device copy.
  const Session* session = nullptr;  // Where the device copy lives; nullptr: none yet.
  uint64_t device_address = 0;
  int device = 0;  // Where it was allocated.
};

class ManagedVars {
 public:
  static ManagedVars& Get();

  // __hipRegisterManagedVar: allocates the mirror (aligned to `align`,
  // zero-filled past `size`), copies `init` into it and records the variable
  // for `module`. nullptr when the memory cannot be had.
  ManagedVar* Register(CodeModule* module, std::string name, const void* init, size_t size, size_t align);

  // A module with managed variables was loaded in `session` on `device`:
  // allocates the device copies not yet made in this session (sending the
  // mirrors' bytes) and stores their addresses in the load's pointer
  // variables. Blocks (one kMalloc round trip per new variable). An error
  // fails the load.
  Status Attach(Session& session, int device, const ModuleLoad& load, const std::vector<ManagedVar*>& vars);

  // Before a launch on (device, stream) in `session`: sends changed mirrors
  // and rewrites explicit pointer arguments that point into a mirror.
  // `pointer_offsets` are the kernarg offsets of 8-byte global_buffer
  // arguments. Loads the module of a variable referenced that way when it
  // has no device copy yet. Counts the launch.
  Status BeforeLaunch(Session& session, int device, uint64_t stream, const std::vector<uint32_t>& pointer_offsets,
                      std::vector<uint8_t>* kernarg);

  // After a synchronising call on (device, stream) (stream 0: that device's
  // null stream) returned success: reads back the device copies, on that
  // stream, if a kernel was launched since the last read. Errors are logged
  // and returned.
  Status AfterSync(Session& session, int device, uint64_t stream);

  // hipDeviceReset dropped `device`'s memory (every device when < 0): the
  // device copies made there are gone; the next load makes new ones.
  void ForgetDevice(const Session* session, int device);

  // The mirror containing [p, p + n), or nullptr.
  const ManagedVar* FindMirror(const void* p, size_t n) const;

  bool empty() const { return count_.load(std::memory_order_acquire) == 0; }

 private:
  ManagedVars() = default;
  static void InstallForkHandlers();

  // Sends the span of `var`'s mirror that changed since the last exchange,
  // on (device, stream). REQUIRES mu_.
  Status PushLocked(Session& session, ManagedVar& var, int device, uint64_t stream);
  ManagedVar* FindLocked(uint64_t address) const;  // REQUIRES mu_

  mutable std::mutex mu_;
  std::vector<ManagedVar*> vars_;    // GUARDED_BY(mu_)
  uint64_t launches_ = 0;            // GUARDED_BY(mu_): launches seen, any session.
  uint64_t fetched_at_ = 0;          // GUARDED_BY(mu_): launches_ at the last read-back.
  std::atomic<size_t> count_{0};     // vars_.size(), readable without the lock.
};

}  // namespace hipr::client
