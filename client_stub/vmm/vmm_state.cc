#include "client_stub/vmm/vmm_state.h"

#include "client_stub/session/hip_status.h"

namespace hipr::client::vmm {

VmmState& State() {
  static auto* state = new VmmState;  // Never destroyed: exit-time calls still find it.
  return *state;
}

void Adopt(VmmState& st, const Remote* s) HIPR_REQUIRES(st.mu) {
  if (st.session != s) {
    st.session = s;
    st.live.clear();
    st.reservations.clear();
    st.mappings.clear();
  }
}

PhysicalRecord* Live(VmmState& st, hipMemGenericAllocationHandle_t handle) HIPR_REQUIRES(st.mu) {
  auto* p = reinterpret_cast<PhysicalRecord*>(handle);
  return st.live.count(p) != 0 ? p : nullptr;
}

std::map<uint64_t, Mapping>::iterator MappingAt(VmmState& st, uint64_t address) HIPR_REQUIRES(st.mu) {
  auto it = st.mappings.upper_bound(address);
  if (it == st.mappings.begin()) return st.mappings.end();
  --it;
  return address - it->first < it->second.size ? it : st.mappings.end();
}

bool WholeMappings(VmmState& st, uint64_t address, uint64_t size, std::vector<uint64_t>* bases) HIPR_REQUIRES(st.mu) {
  if (size == 0 || address + size < address) return false;
  uint64_t at = address;
  for (auto it = st.mappings.find(address); at < address + size; ++it) {
    if (it == st.mappings.end() || it->first != at) return false;
    bases->push_back(at);
    at += it->second.size;
  }
  return at == address + size;
}

hipError_t MaybeRelease(VmmState& st, Remote& s, PhysicalRecord* p) HIPR_REQUIRES(st.mu) {
  if (p->refs > 0 || p->maps > 0) return hipSuccess;
  st.live.erase(p);
  msg::CallReply reply;
  Status status = s.Call<wire::Op::kVmmRelease>(p->prop.location.id, msg::VmmHandleRequest{p->id}, &reply);
  if (!status.ok()) return ToHipError(status);
  return static_cast<hipError_t>(reply.error);
}

}  // namespace hipr::client::vmm
