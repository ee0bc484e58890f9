// IPC between sessions: memory handles, event handles and shareable
// physical memory. The client gets a token of the worker's IpcRegistry,
// never the device's own handle; opening one checks that it is this
// worker's and that the exporting tenant allows the opening one
// (docs/operations.md "Security").
#include <spdlog/spdlog.h>

#include <algorithm>

#include "worker_service/session/hip_error.h"
#include "worker_service/session/session.h"
#include "worker_service/process/tenants.h"

namespace hipr::worker {

using wire::Op;

const std::string& Session::TenantName() const {
  static const std::string kNone;
  return admission_ ? admission_->tenant.name : kNone;
}

msg::IpcGetMemHandleReply Session::ExportIpc(Status st, IpcRegistry::Kind kind, const IpcRegistry::DeviceHandle& handle,
                                             const std::string& what) {
  msg::IpcGetMemHandleReply r;
  if (st.ok() && ledger_ == nullptr)
    st = Status(StatusCode::kFailedPrecondition, "IPC handles need the worker's registry (no ledger)");
  if (st.ok()) {
    IpcRegistry::Token t{};
    st = ledger_->ipc().Export(slot_, id_, TenantName(), kind, handle, &t);
    if (st.ok()) r.handle.assign(t.begin(), t.end());
  }
  if (!st.ok()) spdlog::info("session {}: exporting {} failed: {}", id_, what, st.ToString());
  r.error = ToHipError(st);
  return r;
}

Status Session::OpenIpc(IpcRegistry::Kind kind, const std::vector<uint8_t>& token, IpcRegistry::DeviceHandle* out) {
  if (token.size() != IpcRegistry::kTokenBytes)
    return InvalidArgument("an IPC handle has " + std::to_string(IpcRegistry::kTokenBytes) + " bytes");
  if (ledger_ == nullptr)
    return Status(StatusCode::kFailedPrecondition, "IPC handles need the worker's registry (no ledger)");
  IpcRegistry::Token t{};
  std::copy(token.begin(), token.end(), t.begin());
  IpcRegistry::Opened opened;
  if (Status st = ledger_->ipc().Open(kind, t, &opened); !st.ok()) {
    ledger_->Count(Ledger::kIpcRefusedInvalid);
    return st;
  }
  const std::string& me = TenantName();
  if (opened.tenant_digest != IpcRegistry::Digest(me)) {
    // Another tenant's: only where the exporter's line of the tenants file
    // (read now, so an edit takes effect at once) allows this one.
    std::vector<Tenant> tenants;
    const bool allowed = !config_.auth_file.empty() && LoadTenants(config_.auth_file, &tenants).ok() &&
                         MayOpenIpc(tenants, opened.tenant, me);
    if (!allowed) {
      ledger_->Count(Ledger::kIpcRefusedTenant);
      spdlog::warn("session {}: tenant '{}' may not open an IPC handle of tenant '{}' (exported by session {}); "
                   "refused. The exporter's line in --auth-file allows it with ipc={}",
                   id_, me, opened.tenant, opened.session_id, me.empty() ? "NAME" : me);
      return InvalidArgument("the IPC handle belongs to another tenant, which does not allow this one to open it");
    }
    spdlog::info("session {}: tenant '{}' opens an IPC handle of tenant '{}' (session {}), as its ipc= allows", id_,
                 me, opened.tenant, opened.session_id);
  }
  *out = opened.handle;
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kIpcGetMemHandle>, const wire::FrameHeader& h, msg::IpcGetMemHandleRequest& m) {
  Device::IpcHandle handle{};
  IpcFacet* ipc = device_->ipc();
  Status st = ipc ? ipc->IpcGetMemHandle(m.address, &handle) : NoFacet("IPC handles");
  return Reply(h, ExportIpc(std::move(st), IpcRegistry::Kind::kMemory, handle,
                            fmt::format("memory at 0x{:x}", m.address)));
}

Status Session::On(ops::Tag<Op::kIpcOpenMemHandle>, const wire::FrameHeader& h, msg::IpcOpenMemHandleRequest& m) {
  msg::IpcOpenMemHandleReply r;
  Device::IpcHandle handle{};
  Status st = OpenIpc(IpcRegistry::Kind::kMemory, m.handle, &handle);
  IpcFacet* ipc = device_->ipc();
  if (ipc == nullptr) st = NoFacet("IPC handles");
  if (st.ok()) st = ipc->IpcOpenMemHandle(m.device, handle, m.flags, &r.address, &r.base, &r.size);
  if (!st.ok()) spdlog::info("session {}: opening an IPC memory handle failed: {}", id_, st.ToString());
  r.error = ToHipError(st);
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kIpcCloseMemHandle>, const wire::FrameHeader& h, msg::IpcCloseMemHandleRequest& m) {
  IpcFacet* ipc = device_->ipc();
  return Reply(h, msg::CallReply{ToHipError(ipc ? ipc->IpcCloseMemHandle(m.base) : NoFacet("IPC handles"))});
}

Status Session::On(ops::Tag<Op::kVmmExport>, const wire::FrameHeader& h, msg::VmmHandleRequest& m) {
  Device::IpcHandle handle{};
  ShareableMemoryFacet* shareable = device_->shareable();
  Status st = shareable ? shareable->VmmExport(m.handle, &handle) : NoFacet("shareable memory handles");
  return Reply(h, ExportIpc(std::move(st), IpcRegistry::Kind::kPhysical, handle,
                            "physical memory " + std::to_string(m.handle)));
}

Status Session::On(ops::Tag<Op::kVmmImport>, const wire::FrameHeader& h, msg::VmmImportRequest& m) {
  msg::VmmImportReply r;
  Device::IpcHandle handle{};
  Status st = OpenIpc(IpcRegistry::Kind::kPhysical, m.token, &handle);
  ShareableMemoryFacet* shareable = device_->shareable();
  if (shareable == nullptr) st = NoFacet("shareable memory handles");
  if (st.ok()) st = shareable->VmmImport(m.device, m.handle, handle, &r.size);
  if (!st.ok()) spdlog::info("session {}: importing physical memory failed: {}", id_, st.ToString());
  r.error = ToHipError(st);
  if (!st.ok()) r.size = 0;
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kIpcGetEventHandle>, const wire::FrameHeader& h, msg::EventRequest& m) {
  Device::IpcEventHandle handle{};
  IpcFacet* ipc = device_->ipc();
  Status st = ipc ? ipc->IpcGetEventHandle(m.event, &handle) : NoFacet("IPC handles");
  return Reply(h, ExportIpc(std::move(st), IpcRegistry::Kind::kEvent, handle, "event " + std::to_string(m.event)));
}

Status Session::On(ops::Tag<Op::kIpcOpenEventHandle>, const wire::FrameHeader& h, msg::IpcOpenEventHandleRequest& m) {
  Device::IpcEventHandle handle{};
  Status st = OpenIpc(IpcRegistry::Kind::kEvent, m.handle, &handle);
  IpcFacet* ipc = device_->ipc();
  if (ipc == nullptr) st = NoFacet("IPC handles");
  if (st.ok()) st = ipc->IpcOpenEventHandle(m.device, m.event, handle);
  if (!st.ok()) spdlog::info("session {}: opening an IPC event handle failed: {}", id_, st.ToString());
  return Reply(h, msg::CallReply{ToHipError(st)});
}

}  // namespace hipr::worker
