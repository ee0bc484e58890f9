#include "worker_service/sim/twin/twin_catalog.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <utility>

namespace hipr::worker::sim {

// A dlopen()ed twin: unloaded when the last module using it goes (a null
// handle: a descriptor linked into this process, TwinModule::FromDescriptor).
class TwinLibrary {
 public:
  TwinLibrary(void* handle, const HiprTwinModule* descriptor) : handle_(handle), descriptor_(descriptor) {}
  ~TwinLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  TwinLibrary(const TwinLibrary&) = delete;
  TwinLibrary& operator=(const TwinLibrary&) = delete;
  const HiprTwinModule& descriptor() const { return *descriptor_; }

 private:
  void* handle_;
  const HiprTwinModule* descriptor_;
};

namespace {

Status Refuse(std::string message) { return Status(StatusCode::kFailedPrecondition, std::move(message)); }

std::string ArgText(uint32_t offset, uint32_t size) {
  return "offset " + std::to_string(offset) + " size " + std::to_string(size);
}

}  // namespace

TwinKernel::TwinKernel(const TwinModule* module, const HiprTwinKernel* descriptor)
    : module_(module), descriptor_(descriptor) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(descriptor->name, nullptr, nullptr, &status);
  display_name_ = status == 0 && demangled != nullptr ? demangled : descriptor->name;
  std::free(demangled);
}

uint32_t TwinKernel::explicit_kernarg_size() const {
  uint32_t end = 0;
  for (const HiprTwinArg& a : args()) end = std::max(end, a.offset + a.size);
  return end;
}

TwinModule::TwinModule(std::shared_ptr<const TwinLibrary> library, std::string path)
    : library_(std::move(library)), path_(std::move(path)) {
  const HiprTwinModule& d = library_->descriptor();
  kernels_.reserve(d.kernel_count);
  for (uint32_t i = 0; i < d.kernel_count; ++i) kernels_.emplace_back(this, &d.kernels[i]);
  for (uint32_t i = 0; i < d.variable_count; ++i) {
    const HiprTwinVariable& v = d.variables[i];
    variables_.push_back(
        {v.name, v.size, {static_cast<const uint8_t*>(v.initial_bytes), static_cast<size_t>(v.size)}});
  }
  bindings_.assign(variables_.size(), nullptr);
}

std::shared_ptr<TwinModule> TwinModule::FromDescriptor(const HiprTwinModule& descriptor, std::string name) {
  return std::make_shared<TwinModule>(std::make_shared<const TwinLibrary>(nullptr, &descriptor), std::move(name));
}

const HiprTwinModule& TwinModule::descriptor() const { return library_->descriptor(); }

const TwinKernel* TwinModule::FindKernel(std::string_view mangled_name) const {
  for (const TwinKernel& k : kernels_)
    if (k.name() == mangled_name) return &k;
  return nullptr;
}

Status TwinModule::BindVariable(std::string_view name, void* device_address, uint64_t size) {
  for (size_t i = 0; i < variables_.size(); ++i) {
    const Variable& v = variables_[i];
    if (v.name != name) continue;
    if (v.size != size)
      return Refuse("twin " + path_ + ": variable " + v.name + " has " + std::to_string(v.size) +
                    " bytes, the code object's has " + std::to_string(size));
    if (device_address == nullptr) return InvalidArgument("variable " + v.name + " bound to a null address");
    if (!v.initial_bytes.empty()) memcpy(device_address, v.initial_bytes.data(), v.initial_bytes.size());
    MutexLock lock(mu_);
    bindings_[i] = device_address;
    return Status::Ok();
  }
  return Status(StatusCode::kNotFound, "twin " + path_ + " has no variable " + std::string(name));
}

Status TwinModule::CheckBound() const {
  MutexLock lock(mu_);
  for (size_t i = 0; i < variables_.size(); ++i)
    if (bindings_[i] == nullptr)
      return Refuse("variable " + variables_[i].name + " of twin " + path_ + " is not bound to device memory");
  return Status::Ok();
}

std::vector<void*> TwinModule::Bindings() const {
  MutexLock lock(mu_);
  return bindings_;
}

Status CheckTwin(const HiprTwinModule& twin, std::string_view where, const co::Sha256Digest& code_object_hash,
                 const co::CodeObjectInfo& metadata) {
  const std::string w(where);
  if (twin.abi_version < HIPR_TWIN_ABI_OLDEST_VERSION || twin.abi_version > HIPR_TWIN_ABI_VERSION)
    return Refuse("twin " + w + " speaks twin ABI version " + std::to_string(twin.abi_version) +
                  ", this worker speaks " + std::to_string(HIPR_TWIN_ABI_VERSION) + "; rebuild it");
  const std::string want = co::ToHex(code_object_hash);
  if (twin.code_object_sha256 == nullptr || want != twin.code_object_sha256)
    return Refuse("twin " + w + " was built for code object " +
                  (twin.code_object_sha256 ? twin.code_object_sha256 : "(none)") + ", not " + want);
  std::set<std::string_view> in_metadata;
  for (const co::KernelInfo& k : metadata.kernels) {
    in_metadata.insert(k.name);
    const HiprTwinKernel* tk = nullptr;
    for (uint32_t i = 0; i < twin.kernel_count; ++i)
      if (k.name == twin.kernels[i].name) tk = &twin.kernels[i];
    if (tk == nullptr) return Refuse("twin " + w + " lacks kernel " + k.name);
    std::vector<const co::KernelArg*> explicit_args;
    for (const co::KernelArg& a : k.args)
      if (!a.hidden()) explicit_args.push_back(&a);
    if (explicit_args.size() != tk->arg_count)
      return Refuse("twin " + w + ": kernel " + k.name + " takes " + std::to_string(tk->arg_count) +
                    " arguments in the twin, " + std::to_string(explicit_args.size()) + " in the code object");
    for (uint32_t i = 0; i < tk->arg_count; ++i) {
      const co::KernelArg& a = *explicit_args[i];
      const HiprTwinArg& t = tk->args[i];
      if (a.offset != t.offset || a.size != t.size)
        return Refuse("twin " + w + ": kernel " + k.name + " argument " + std::to_string(i) +
                      (a.name.empty() ? "" : " (" + a.name + ")") + " is at " + ArgText(t.offset, t.size) +
                      " in the twin but at " + ArgText(a.offset, a.size) + " in the code object");
    }
  }
  for (uint32_t i = 0; i < twin.kernel_count; ++i)
    if (in_metadata.count(twin.kernels[i].name) == 0)
      return Refuse("twin " + w + " has kernel " + twin.kernels[i].name + " that the code object lacks");
  for (uint32_t i = 0; i < twin.variable_count; ++i) {
    const HiprTwinVariable& v = twin.variables[i];
    const co::GlobalVariable* cv = metadata.FindVariable(v.name);
    if (cv == nullptr) return Refuse("twin " + w + " has variable " + v.name + " that the code object lacks");
    if (cv->size != v.size)
      return Refuse("twin " + w + ": variable " + v.name + " has " + std::to_string(v.size) +
                    " bytes, the code object's has " + std::to_string(cv->size));
  }
  return Status::Ok();
}

TwinCatalog::TwinCatalog(std::vector<std::string> directories) : directories_(std::move(directories)) {}

std::string TwinCatalog::FileName(const co::Sha256Digest& code_object_hash) {
  return co::ToHex(code_object_hash) + ".so";
}

Status TwinCatalog::Open(const co::Sha256Digest& code_object_hash, const co::CodeObjectInfo& metadata,
                         std::shared_ptr<TwinModule>* out) const {
  const std::string file = FileName(code_object_hash);
  std::string path;
  for (const std::string& dir : directories_) {
    std::string candidate = dir + "/" + file;
    struct stat st;
    if (stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      path = std::move(candidate);
      break;
    }
  }
  if (path.empty()) {
    std::string dirs;
    for (const std::string& d : directories_) dirs += (dirs.empty() ? "" : ", ") + d;
    return Status(StatusCode::kNotFound,
                  "no kernel twin " + file + " for code object " + co::ToHex(code_object_hash) + " in " +
                      (dirs.empty() ? std::string("(no --sim-kernels directory given)") : dirs) +
                      "; build one from the program's source with hipr_add_sim_twin()");
  }
  // RTLD_LOCAL: twins of different programs may define the same names.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Refuse("cannot load twin " + path + ": " + dlerror());
  auto entry = reinterpret_cast<HiprTwinEntryFn>(dlsym(handle, HIPR_TWIN_ENTRY_SYMBOL));
  const HiprTwinModule* descriptor = entry != nullptr ? entry() : nullptr;
  if (descriptor == nullptr) {
    dlclose(handle);
    return Refuse("twin " + path + " has no " HIPR_TWIN_ENTRY_SYMBOL " descriptor; is it a kernel twin?");
  }
  auto library = std::make_shared<const TwinLibrary>(handle, descriptor);
  HIPR_RETURN_IF_ERROR(CheckTwin(*descriptor, path, code_object_hash, metadata));
  *out = std::make_shared<TwinModule>(std::move(library), std::move(path));
  return Status::Ok();
}

}  // namespace hipr::worker::sim
