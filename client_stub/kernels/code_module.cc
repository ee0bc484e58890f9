#include "client_stub/kernels/code_module.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <new>

#include <hip/hip_runtime_api.h>

#include "client_stub/base/log.h"
#include "client_stub/kernels/module_shipper.h"

namespace hipr::client {
namespace {

// Ids are unique in the process, hence in every session.
constinit std::atomic<uint64_t> g_next_module_id{1};
constinit std::atomic<uint64_t> g_next_function_id{1};

// Every module ever made (never freed), and which are live.
struct ModuleList {
  Mutex mu;
  std::unordered_set<const void*> live HIPR_GUARDED_BY(mu);
  std::vector<CodeModule*> all HIPR_GUARDED_BY(mu);
  // Unloaded modules, oldest first. Each outlives its unload by
  // kRetiredKept later unloads (a thread still inside a call on it
  // finishes), then is deleted: a program that loads and unloads forever
  // keeps a bounded number of them.
  std::deque<CodeModule*> retired HIPR_GUARDED_BY(mu);
};
constexpr size_t kRetiredKept = 64;

ModuleList& Modules() {
  static ModuleList* const list = [] {
    ModuleForkGuard::Install();
    return new ModuleList();  // Leaked: used until exit.
  }();
  return *list;
}

std::string TargetOf(const co::CodeObjectInfo& info) {
  // amdhsa.target is "amdgcn-amd-amdhsa--gfx90a:xnack-": the target id
  // follows the (empty) environment.
  const size_t at = info.target.find("--");
  return at == std::string::npos ? info.target : info.target.substr(at + 2);
}

std::string EntryTargets(const co::Bundle& bundle) {
  std::string out;
  for (const co::BundleEntry& e : bundle.entries) {
    if (e.target.empty()) continue;
    out += out.empty() ? "" : ", ";
    out += e.target;
  }
  return out.empty() ? "none" : out;
}

}  // namespace

CodeModule::CodeModule(const void* borrowed, std::vector<uint8_t> owned, std::string name, ModuleHooks& hooks)
    : borrowed_(borrowed),
      owned_(borrowed != nullptr ? nullptr : std::make_shared<const std::vector<uint8_t>>(std::move(owned))),
      given_name_(std::move(name)),
      hooks_(hooks) {}

uint64_t ReadableBytesAt(const void* p, uint64_t max) {
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return max;
  const auto a = reinterpret_cast<uintptr_t>(p);
  uintptr_t end = 0;  // End of the readable run that holds `a` so far; 0: none yet.
  char line[512];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long lo = 0, hi = 0;
    char perms[5] = {};
    if (std::sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) != 3) continue;
    const bool readable = perms[0] == 'r';
    if (end == 0) {
      if (a >= lo && a < hi) {
        if (!readable) break;
        end = hi;
      }
    } else if (lo == end && readable) {
      end = hi;  // Contiguous and readable: the run goes on.
    } else if (lo >= end) {
      break;
    }
  }
  std::fclose(maps);
  if (end == 0) return 0;
  return std::min<uint64_t>(max, end - a);
}

CodeModule* CodeModule::NewRegistered(const void* bundle, ModuleHooks& hooks) {
  auto* m = new CodeModule(bundle, {}, {}, hooks);  // Never deleted: see the header.
  ModuleList& list = Modules();
  MutexLock lock(list.mu);
  list.all.push_back(m);
  list.live.insert(m);
  return m;
}

CodeModule* CodeModule::NewLoaded(std::vector<uint8_t> image, std::string name, ModuleHooks& hooks) {
  auto* m = new CodeModule(nullptr, std::move(image), std::move(name), hooks);
  ModuleList& list = Modules();
  MutexLock lock(list.mu);
  list.all.push_back(m);
  list.live.insert(m);
  return m;
}

bool CodeModule::IsLive(const void* p) {
  if (p == nullptr) return false;
  ModuleList& list = Modules();
  MutexLock lock(list.mu);
  return list.live.count(p) != 0;
}

std::string CodeModule::name() const {
  if (!given_name_.empty()) return given_name_;
  Dl_info info{};
  char buf[64];
  std::snprintf(buf, sizeof buf, "fat binary %p", borrowed_);
  if (dladdr(borrowed_, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0') {
    std::string file = info.dli_fname;
    return file.substr(file.find_last_of('/') + 1) + " " + buf;
  }
  return buf;
}

Status CodeModule::Image(const std::string& target, std::shared_ptr<const IsaImage>* out) {
  {
    MutexLock lock(mu_);
    if (auto it = images_.find(target); it != images_.end()) {
      *out = it->second;
      return Status::Ok();
    }
  }
  MutexLock work(work_mu_);
  return ImageLocked(target, out);
}

Status CodeModule::ImageLocked(const std::string& target, std::shared_ptr<const IsaImage>* out) {
  {
    MutexLock lock(mu_);
    if (!live()) return HipStatus(hipErrorInvalidResourceHandle, "the module was unloaded");
    if (auto it = images_.find(target); it != images_.end()) {
      *out = it->second;
      return Status::Ok();
    }
  }
  std::shared_ptr<const IsaImage> image;
  Status st = BuildImage(target, &image);
  if (!st.ok()) {
    HIPR_LOG_ERROR("module %s: %s", name().c_str(), st.message().c_str());
    return st;
  }
  MutexLock lock(mu_);
  if (!live()) return HipStatus(hipErrorInvalidResourceHandle, "the module was unloaded");
  images_.emplace(target, image);
  *out = std::move(image);
  return Status::Ok();
}

Status CodeModule::BuildImage(const std::string& target, std::shared_ptr<const IsaImage>* out) {
  co::Bytes data;
  std::shared_ptr<const std::vector<uint8_t>> bytes;
  if (borrowed_ != nullptr) {
    // A registered bundle has no stated size: its headers give it, read in
    // the readable memory that holds it.
    const auto* p = static_cast<const uint8_t*>(borrowed_);
    const uint64_t room = ReadableBytesAt(p, co::kMaxCodeObjectBytes);
    uint64_t size = 0;
    Status st = co::ImageSize(co::Bytes(p, room), &size);
    if (!st.ok()) return HipStatus(hipErrorInvalidImage, "not a usable fat binary: " + st.message());
    data = co::Bytes(p, size);
  } else {
    {
      MutexLock lock(mu_);
      bytes = owned_;
    }
    if (bytes == nullptr) return HipStatus(hipErrorInvalidResourceHandle, "the module was unloaded");
    data = co::Bytes(bytes->data(), bytes->size());
  }
  co::TargetId device;
  if (!co::ParseTargetId(target, &device).ok())
    return HipStatus(hipErrorNoBinaryForGpu, "the device's target id '" + target + "' is not understood");

  auto image = std::make_shared<IsaImage>();
  image->bytes = std::move(bytes);
  image->target = target;
  if (co::LooksLikeBundle(data) || co::LooksLikeCompressedBundle(data)) {
    Status st = co::ParseBundle(data, &image->bundle);
    if (!st.ok()) return HipStatus(hipErrorInvalidImage, "not a usable offload bundle: " + st.message());
    const co::BundleEntry* entry = co::SelectEntry(image->bundle, device);
    if (entry == nullptr)
      return HipStatus(hipErrorNoBinaryForGpu, "no code object for the device's " + target + " (the bundle has: " +
                                                   EntryTargets(image->bundle) + ")");
    image->elf = entry->bytes;
  } else if (co::LooksLikeAmdgpuElf(data)) {
    image->elf = data;
  } else {
    return HipStatus(hipErrorInvalidImage, "neither an offload bundle nor an AMDGPU code object");
  }
  Status st = co::ParseCodeObject(image->elf, &image->info);
  if (!st.ok()) return HipStatus(hipErrorInvalidImage, "not a usable code object: " + st.message());
  if (image->info.elf_size != 0 && image->info.elf_size < image->elf.size())
    image->elf = image->elf.first(image->info.elf_size);
  if (!co::LooksLikeBundle(data) && !co::LooksLikeCompressedBundle(data)) {
    co::TargetId code;
    const std::string code_target = TargetOf(image->info);
    if (!co::ParseTargetId(code_target, &code).ok() || !co::IsCompatible(code, device))
      return HipStatus(hipErrorNoBinaryForGpu,
                       "the code object is built for " + code_target + ", the device is " + target);
  }
  image->sha256 = co::Sha256(image->elf);
  image->kernels.reserve(image->info.kernels.size());
  for (const co::KernelInfo& k : image->info.kernels) image->kernels.emplace(k.name, &k);
  *out = std::move(image);
  return Status::Ok();
}

std::shared_ptr<const ModuleLoad> CodeModule::FindLoad(const Remote* session, int device) const {
  for (const auto& l : loads_)
    if (l->session == session && l->device == device) return l;
  return nullptr;
}

Status CodeModule::Load(Remote& session, int device, std::shared_ptr<const ModuleLoad>* out) {
  if (device < 0 || device >= session.device_count())
    return HipStatus(hipErrorInvalidDevice, "device " + std::to_string(device) + " does not exist");
  {
    MutexLock lock(mu_);
    if (!live()) return HipStatus(hipErrorInvalidResourceHandle, "the module was unloaded");
    if (auto l = FindLoad(&session, device)) {
      *out = l;
      return l->status;
    }
  }
  MutexLock work(work_mu_);
  {
    MutexLock lock(mu_);
    if (auto l = FindLoad(&session, device)) {
      *out = l;
      return l->status;
    }
  }
  auto load = std::make_shared<ModuleLoad>();
  load->session = &session;
  load->device = device;
  const std::string module_name = name();
  HIPR_RETURN_IF_ERROR(ImageLocked(session.devices()[device].gcn_arch_name, &load->image));
  std::vector<ManagedVar*> managed;
  {
    MutexLock lock(mu_);
    managed = managed_vars_;
  }
  load->id = g_next_module_id.fetch_add(1, std::memory_order_relaxed);
  msg::ModuleLoadReply reply;
  HIPR_RETURN_IF_ERROR(
      ShipModule(session, device, load->id, load->image->elf, load->image->sha256, module_name, &reply));
  if (reply.error != 0) {
    load->status = HipStatus(reply.error, "module " + module_name + " failed to load on device " +
                                              std::to_string(device) + ": " + reply.message);
    HIPR_LOG_ERROR("%s", load->status.message().c_str());
  } else {
    for (msg::ModuleGlobal& g : reply.globals) load->globals.emplace(g.name, g);
    load->unavailable.insert(reply.unavailable_kernels.begin(), reply.unavailable_kernels.end());
    load->all_unavailable = reply.all_kernels_unavailable;
    load->unavailable_message = std::move(reply.message);
    // Its globals become device memory of the client; its kernels read
    // __managed__ variables through pointers set here.
    if (Status st = hooks_.Loaded(session, device, *load, managed); !st.ok()) {
      load->status = st;
      HIPR_LOG_ERROR("module %s: %s", module_name.c_str(), st.message().c_str());
    }
    HIPR_LOG_DEBUG("module %s loaded as %llu on device %d (%zu kernels, %zu globals, %zu managed, %zu unavailable)",
                   module_name.c_str(), static_cast<unsigned long long>(load->id), device,
                   load->image->info.kernels.size(), load->globals.size(), managed.size(), load->unavailable.size());
  }
  MutexLock lock(mu_);
  loads_.push_back(load);
  *out = load;
  return load->status;
}

Status CodeModule::Bind(Remote& session, int device, const std::string& kernel, KernelBinding* out) {
  HIPR_RETURN_IF_ERROR(Load(session, device, &out->load));
  const ModuleLoad& load = *out->load;
  out->kernel = load.image->FindKernel(kernel);
  if (out->kernel == nullptr)
    return HipStatus(hipErrorInvalidDeviceFunction,
                     "module " + name() + " has no kernel '" + kernel + "' for " + load.image->target);
  const bool unavailable = load.all_unavailable || load.unavailable.count(kernel) != 0;
  MutexLock lock(mu_);
  if (unavailable) {
    std::string why = "kernel '" + kernel + "' cannot run on device " + std::to_string(device) + ": " +
                      (load.unavailable_message.empty() ? "the worker says so" : load.unavailable_message);
    if (logged_unavailable_.insert(kernel).second) HIPR_LOG_ERROR("%s", why.c_str());
    return HipStatus(hipErrorNoBinaryForGpu, std::move(why));
  }
  auto& ids = function_ids_[load.id];
  auto [it, inserted] = ids.try_emplace(kernel);
  if (inserted) it->second.id = g_next_function_id.fetch_add(1, std::memory_order_relaxed);
  out->function_id = it->second.id;
  out->first_launch = !it->second.named;
  return Status::Ok();
}

bool CodeModule::FindBound(const Remote& session, int device, const std::string& name, KernelBinding* out) const {
  MutexLock lock(mu_);
  if (!live()) return false;
  std::shared_ptr<const ModuleLoad> load = FindLoad(&session, device);
  if (load == nullptr || !load->status.ok()) return false;
  auto ids = function_ids_.find(load->id);
  if (ids == function_ids_.end()) return false;
  auto id = ids->second.find(name);
  if (id == ids->second.end()) return false;  // Bind() makes the id after every check has passed.
  const co::KernelInfo* kernel = load->image->FindKernel(name);
  if (kernel == nullptr) return false;
  out->kernel = kernel;
  out->function_id = id->second.id;
  out->first_launch = !id->second.named;
  out->load = std::move(load);
  return true;
}

void CodeModule::MarkNamed(const ModuleLoad& load, const std::string& kernel) {
  MutexLock lock(mu_);
  auto ids = function_ids_.find(load.id);
  if (ids == function_ids_.end()) return;
  if (auto it = ids->second.find(kernel); it != ids->second.end()) it->second.named = true;
}

void CodeModule::AddManagedVar(ManagedVar* var) {
  MutexLock lock(mu_);
  managed_vars_.push_back(var);
}

void CodeModule::Retire() {
  CodeModule* expired = nullptr;
  {
    ModuleList& list = Modules();
    MutexLock lock(list.mu);
    list.live.erase(this);
    // Registered modules are never deleted (their objects may register
    // again); loaded ones go kRetiredKept unloads later.
    if (!registered()) {
      list.retired.push_back(this);
      if (list.retired.size() > kRetiredKept) {
        expired = list.retired.front();
        list.retired.pop_front();
        list.all.erase(std::find(list.all.begin(), list.all.end(), expired));
      }
    }
  }
  delete expired;
  std::vector<std::shared_ptr<const ModuleLoad>> loads;
  {
    MutexLock lock(mu_);
    live_.store(false, std::memory_order_release);
    loads.swap(loads_);
    images_.clear();
    owned_.reset();  // A loaded image's bytes go once no image made from them is in use.
    function_ids_.clear();
  }
  for (const auto& l : loads) {
    if (!l->status.ok() || l->id == 0) continue;
    hooks_.Unloaded(*l);
    auto* s = const_cast<Remote*>(l->session);
    if (!s->dead()) (void)s->Post<wire::Op::kModuleUnload>(l->device, msg::ModuleUnloadRequest{l->id});
  }
}

void CodeModule::ForgetLoads(const Remote* session, int device) {
  MutexLock lock(mu_);
  for (auto it = loads_.begin(); it != loads_.end();) {
    if ((*it)->session == session && (device < 0 || (*it)->device == device)) {
      function_ids_.erase((*it)->id);
      it = loads_.erase(it);
    } else {
      ++it;
    }
  }
}

void ForgetModuleLoads(const Remote* session, int device) {
  std::vector<CodeModule*> all;
  {
    ModuleList& list = Modules();
    MutexLock lock(list.mu);
    all = list.all;
  }
  for (CodeModule* m : all) m->ForgetLoads(session, device);
}

void ModuleForkGuard::Install() {
  if (int rc = pthread_atfork(&Prepare, &Parent, &Child); rc != 0)
    HIPR_LOG_WARN("pthread_atfork failed (%d): a fork during a kernel launch could hang the child", rc);
}

// Lock order: the list, then each module's state lock in list order. No
// other path holds two of these at once.
void ModuleForkGuard::Prepare() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  ModuleList& list = Modules();
  list.mu.lock();
  for (CodeModule* m : list.all) m->mu_.lock();
}

void ModuleForkGuard::Parent() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  ModuleList& list = Modules();
  for (CodeModule* m : list.all) m->mu_.unlock();
  list.mu.unlock();
}

void ModuleForkGuard::Child() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  // Only this thread exists: locks held by the parent's other threads can
  // never be released here, so every lock is made anew. The parent's loads
  // stay keyed by the parent's session, which this child never uses.
  ModuleList& list = Modules();
  for (CodeModule* m : list.all) {
    new (&m->mu_) Mutex();
    new (&m->work_mu_) Mutex();
  }
  new (&list.mu) Mutex();
}

}  // namespace hipr::client
