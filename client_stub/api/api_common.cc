#include "client_stub/api/api_common.h"

#include "client_stub/kernels/code_module.h"
#include "client_stub/kernels/kernel_registry.h"
#include "client_stub/managed/managed_vars.h"
#include "client_stub/memory/address_window.h"

#include <vector>

namespace hipr::client {

namespace {

// Records the module's globals as device memory of the session, so copies
// to them (hipMemcpyToSymbol, or their address from hipGetSymbolAddress) pass
// the client's bounds checks. Outside the window (a `hip` worker) their pages
// are reserved like any allocation's.
void AddGlobals(Client& c, const ModuleLoad& load) {
  const Windows window = c.windows();
  for (const auto& [name, g] : load.globals) {
    if (g.size == 0) continue;
    DeviceAllocation a;
    a.base = g.address;
    a.size = g.size;
    a.device = load.device;
    a.module_global = true;
    if (window.Holds(g.address, g.size)) {
      a.outside_window = false;
    } else if (window.Overlaps(g.address, g.size) || !c.reservations().Reserve(g.address, g.size).ok()) {
      HIPR_LOG_WARN("module global '%s' at 0x%llx (+%llu) collides with this process's memory; "
                    "copies to it will be refused", name.c_str(), static_cast<unsigned long long>(g.address),
                    static_cast<unsigned long long>(g.size));
      continue;
    } else {
      a.outside_window = true;
    }
    if (!c.allocations().AddDevice(a)) {
      if (a.outside_window) c.reservations().Release(a.base, a.size);
      HIPR_LOG_DEBUG("module global '%s' overlaps recorded device memory; not recorded", name.c_str());
    }
  }
}

void RemoveGlobals(Client& c, const ModuleLoad& load) {
  for (const auto& [name, g] : load.globals) {
    DeviceAllocation a;
    if (g.size == 0 || !c.allocations().FindDevice(g.address, g.size, &a)) continue;
    if (!a.module_global || a.base != g.address || a.device != load.device) continue;
    if (c.allocations().RemoveDevice(g.address, &a) && a.outside_window) c.reservations().Release(a.base, a.size);
  }
}

// The exported API's ModuleHooks: a module's globals are device memory of
// the process's client, and its __managed__ variables are attached in the
// loading session.
class ClientModuleHooks final : public ModuleHooks {
 public:
  Status Loaded(Remote& session, int device, const ModuleLoad& load,
                const std::vector<ManagedVar*>& managed) override {
    Client& c = Client::Get();
    AddGlobals(c, load);
    if (managed.empty()) return Status::Ok();
    return Managed().Attach(c, session, device, load, managed);
  }
  void Unloaded(const ModuleLoad& load) override { RemoveGlobals(Client::Get(), load); }
};

}  // namespace

ModuleHooks& ApiModuleHooks() {
  static constinit ClientModuleHooks hooks;
  return hooks;
}

namespace {

// The calling thread's per-thread default streams, one per device it used,
// each an ordinary blocking stream created (fire-and-forget, client-named)
// at first use. Kept per session: a forked child's new session makes its
// own; one forgotten by hipDeviceReset is made again.
struct PerThreadStream {
  const Remote* session = nullptr;
  int device = 0;
  hipStream_t handle = nullptr;
};
constinit thread_local std::vector<PerThreadStream> t_per_thread_streams;

hipError_t PerThreadStreamOf(Remote& s, int device, StreamTarget* out) {
  HandleTable& handles = Client::Get().handles();
  StreamRecord record;
  for (PerThreadStream& p : t_per_thread_streams) {
    if (p.session != &s || p.device != device) continue;
    if (handles.FindStream(p.handle, &record)) {
      *out = StreamTarget{record.id, record.device};
      return hipSuccess;
    }
    p.session = nullptr;  // Forgotten (hipDeviceReset): make a new one.
  }
  hipStream_t handle = handles.NewStream(device, hipStreamDefault, 0, &record);
  Status st = s.Post<wire::Op::kStreamCreate>(msg::StreamCreateRequest{device, record.id, hipStreamDefault, 0, {}});
  if (!st.ok()) {
    handles.RemoveStream(handle, &record);
    return ToHipError(st);
  }
  std::erase_if(t_per_thread_streams, [](const PerThreadStream& p) { return p.session == nullptr; });
  t_per_thread_streams.push_back(PerThreadStream{&s, device, handle});
  *out = StreamTarget{record.id, device};
  return hipSuccess;
}

hipError_t ResolveStreamTarget(hipStream_t stream, StreamTarget* out) {
  if (IsLegacyNullStream(stream)) {
    *out = StreamTarget{0, CurrentDevice()};
    return hipSuccess;
  }
  if (stream == hipStreamPerThread) {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    return PerThreadStreamOf(*s, device, out);
  }
  StreamRecord record;
  if (!Client::Get().handles().FindStream(stream, &record)) return hipErrorInvalidHandle;
  *out = StreamTarget{record.id, record.device};
  return hipSuccess;
}

}  // namespace

bool IsStreamHandle(hipStream_t stream) {
  StreamRecord record;
  return IsLegacyNullStream(stream) || stream == hipStreamPerThread ||
         Client::Get().handles().FindStream(stream, &record);
}

hipError_t ResolveStream(hipStream_t stream, StreamTarget* out) {
  if (hipError_t e = ResolveStreamTarget(stream, out); e != hipSuccess) return e;
  // What the call queues there counts for the stream's synchronisations.
  StreamLedger::Note(out->device, out->id);
  // Whatever is queued on the stream next runs after the blocking calls
  // that returned without waiting (session/stream_fences.h).
  StreamFences& fences = Client::Get().fences();
  if (!fences.AnyInForce()) return hipSuccess;
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  return ToHipError(fences.Order(*s, out->device, out->id));
}

bool RegisterManagedVar(const void* handle, void** pointer, const void* init_value, const char* name,
                        size_t size, unsigned align) {
  if (pointer == nullptr || name == nullptr || !Kernels().IsRegisteredModule(handle)) {
    HIPR_LOG_ERROR("__hipRegisterManagedVar: bad registration of '%s'", name != nullptr ? name : "(null)");
    return false;
  }
  auto* module = static_cast<CodeModule*>(const_cast<void*>(handle));
  ManagedVar* var = Managed().Register(module, name, init_value, size, align);
  if (var == nullptr) {
    HIPR_LOG_ERROR("__hipRegisterManagedVar: cannot allocate %zu bytes for '%s'", size, name);
    *pointer = nullptr;
    return false;
  }
  *pointer = var->mirror;
  module->AddManagedVar(var);
  HIPR_LOG_DEBUG("__managed__ variable '%s' (%zu bytes): mirror at %p", name, size, static_cast<void*>(var->mirror));
  return true;
}

hipError_t FreeDevice(void* ptr, bool synchronizing, AllocationRole role) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (ptr == nullptr) return hipSuccess;
  Client& c = Client::Get();
  DeviceAllocation a;
  if (c.allocations().FindDevice(reinterpret_cast<uint64_t>(ptr), 0, &a) &&
      (a.module_global || a.ipc_opened || a.vmm || a.array != (role == AllocationRole::kArray)))
    return hipErrorInvalidValue;  // A module's variable, an opened IPC handle, a mapping or an array's memory.
  // A graph's allocation: its graph owns the memory (graph.h GraphMemory),
  // which stays for the graph's next launch; the application is done with it.
  if (a.graph) return hipSuccess;
  if (synchronizing && Graphs().AnyCapture()) {
    if (hipError_t e = Graphs().CheckNotCapturing(a.device, 0, true); e != hipSuccess) return e;
  }
  // As HIP: an interior pointer frees its whole allocation.
  if (!c.allocations().RemoveDevice(reinterpret_cast<uint64_t>(ptr), &a)) return hipErrorInvalidValue;
  // A managed allocation's mirror (managed_vars.h) goes with it: inside the
  // window its pages return to the reservation.
  size_t managed_size = 0;
  const bool managed = Managed().RemoveAllocation(a.base, &managed_size);
  // Plain memory may be kept for the next hipMalloc of its size
  // (memory/free_blocks.h): then the worker frees nothing yet.
  // Its pages outside the window go back to the process meanwhile (the
  // program may map memory there, as after a native hipFree).
  if (!managed && a.flags == 0 && role == AllocationRole::kPlain && !a.ipc_exported && !a.sync_memops &&
      c.free_blocks().Keep(a.device, KeptBlock{a.base, a.size, a.device})) {
    if (a.outside_window) c.reservations().Release(a.base, a.size);
    return hipSuccess;
  }
  Status st = s->Post<wire::Op::kFree>(a.device, msg::FreeRequest{a.base});
  // The pages may hold host memory again once the worker has freed them;
  // should the device reuse them before that, hipMalloc sees a collision.
  if (a.outside_window) c.reservations().Release(a.base, a.size);
  else if (managed) ReserveAgain(a.base, RoundUpToPage(a.size));
  return ToHipError(st);
}

}  // namespace hipr::client
