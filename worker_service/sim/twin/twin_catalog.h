// Kernel twins on the worker: finding, loading and checking the host-built
// twin library of a code object (see twin_abi.h for the contract and for
// how a twin is named by the SHA-256 of its code object).
//
// A twin is only used after it has proven that it stands for the code object
// the client shipped: the hash it records equals the requested one, it speaks
// this ABI version, and it has exactly the code object's kernels, each with
// the explicit argument layout (offset and size of every non-hidden
// argument) the real compiler chose. So a client packing arguments from the
// code object's metadata and a twin unpacking them by C++ types agree.
//
// Crashes: twin code runs in the session process. A fault in a kernel
// (a bad pointer, a stack overflow, an assert) kills the session process,
// as a GPU fault ends a HIP process; the worker and other sessions carry on.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/status.h"
#include "protocol/thread_annotations.h"
#include "worker_service/sim/twin/twin_abi.h"

namespace hipr::worker::sim {

class TwinLibrary;
class TwinModule;

// One kernel of a loaded twin. Owned by its TwinModule; valid while the
// module lives.
class TwinKernel {
 public:
  TwinKernel(const TwinModule* module, const HiprTwinKernel* descriptor);

  std::string_view name() const { return descriptor_->name; }
  // The name demangled (the mangled one when it does not demangle), for
  // messages, fault reports included.
  const std::string& display_name() const { return display_name_; }
  std::span<const HiprTwinArg> args() const { return {descriptor_->args, descriptor_->arg_count}; }
  // Bytes the explicit arguments occupy: end of the last one.
  uint32_t explicit_kernarg_size() const;
  const TwinModule& module() const { return *module_; }
  const HiprTwinKernel& descriptor() const { return *descriptor_; }

 private:
  const TwinModule* module_;
  const HiprTwinKernel* descriptor_;
  std::string display_name_;
};

// A twin loaded for one module the client loaded: its kernels, and the
// device addresses of its variables in this module instance (two modules
// loaded from the same code object share the library, not the bindings).
//
// Thread-safety: FindKernel and the accessors are safe from any thread.
// BindVariable may run concurrently with launches, but a launch sees the
// bindings as they were when it started; bind before launching.
class TwinModule {
 public:
  struct Variable {
    std::string name;
    uint64_t size = 0;
    std::span<const uint8_t> initial_bytes;
  };

  TwinModule(std::shared_ptr<const TwinLibrary> library, std::string path);
  // A module over a descriptor linked into this process rather than a
  // loaded twin, unchecked (tests of the executor). `descriptor` must
  // outlive the module.
  static std::shared_ptr<TwinModule> FromDescriptor(const HiprTwinModule& descriptor, std::string name);
  TwinModule(const TwinModule&) = delete;
  TwinModule& operator=(const TwinModule&) = delete;

  // nullptr when the twin has no kernel of that (mangled) name.
  const TwinKernel* FindKernel(std::string_view mangled_name) const;
  const std::vector<TwinKernel>& kernels() const { return kernels_; }
  const std::vector<Variable>& variables() const { return variables_; }

  // Makes `device_address` (which must hold `size` bytes, the variable's
  // size in the code object) this module's storage for variable `name`, and
  // copies the twin's initial bytes there. kNotFound when the twin has no
  // such variable (e.g. compiler-internal symbols such as ".str"),
  // kFailedPrecondition when the sizes differ.
  Status BindVariable(std::string_view name, void* device_address, uint64_t size);
  // OK once every variable is bound; else kFailedPrecondition naming one.
  Status CheckBound() const;
  // The bound addresses in descriptor order (null where unbound).
  std::vector<void*> Bindings() const;

  const HiprTwinModule& descriptor() const;
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<const TwinLibrary> library_;
  std::string path_;
  std::vector<TwinKernel> kernels_;
  std::vector<Variable> variables_;
  mutable Mutex mu_;
  std::vector<void*> bindings_ HIPR_GUARDED_BY(mu_);
};

// Finds twins by code-object hash in a list of directories.
//
// Thread-safety: all methods may be called concurrently. Open may block on
// the file system and dlopen.
class TwinCatalog {
 public:
  explicit TwinCatalog(std::vector<std::string> directories);

  // Loads the twin of the code object with hash `code_object_hash` whose
  // parsed metadata is `metadata`, checks it (see the file comment) and
  // returns a fresh module instance with no variable bound.
  // kNotFound: no directory has the twin. kFailedPrecondition: a twin file
  // exists but cannot be loaded or does not match (hash, ABI version,
  // kernels, argument layouts, variable sizes); the message names the file
  // and, for a layout mismatch, the kernel and argument.
  Status Open(const co::Sha256Digest& code_object_hash, const co::CodeObjectInfo& metadata,
              std::shared_ptr<TwinModule>* out) const;

  const std::vector<std::string>& directories() const { return directories_; }
  // The file name a twin for `code_object_hash` has in a directory.
  static std::string FileName(const co::Sha256Digest& code_object_hash);

 private:
  const std::vector<std::string> directories_;
};

// Checks a loaded descriptor against the code object: the hash, the ABI
// version, the kernel set and every explicit argument's offset and size,
// and variable sizes. `where` names the twin in messages. Exposed for tests.
Status CheckTwin(const HiprTwinModule& twin, std::string_view where, const co::Sha256Digest& code_object_hash,
                 const co::CodeObjectInfo& metadata);

}  // namespace hipr::worker::sim
