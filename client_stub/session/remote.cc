#include "client_stub/session/remote.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>

#include "client_stub/base/log.h"
#include "protocol/visible_devices.h"

namespace hipr::client {

std::vector<std::string> Remote::SplitServers(const std::string& server) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (;;) {
    const size_t comma = server.find(',', pos);
    std::string one = server.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (!one.empty() || out.empty()) out.push_back(std::move(one));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (out.size() > 1 && out.front().empty()) out.erase(out.begin());
  return out;
}

Status Remote::ListWorkers(const std::string& server, std::vector<Endpoint>* out) {
  out->clear();
  for (const std::string& entry : SplitServers(server)) {
    if (!entry.starts_with("dns:")) {
      out->push_back(Endpoint{entry, ""});
      continue;
    }
    const std::string rest = entry.substr(4);
    const size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size())
      return InvalidArgument("HIPR_SERVER entry '" + entry + "': expected dns:NAME:PORT");
    const std::string name = rest.substr(0, colon), port = rest.substr(colon + 1);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(name.c_str(), port.c_str(), &hints, &found); rc != 0)
      return Status(StatusCode::kLinkDown, "HIPR_SERVER entry '" + entry + "': cannot resolve " + name + ": " +
                                               gai_strerror(rc));
    std::vector<std::string> addresses;
    for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
      char host[INET6_ADDRSTRLEN] = {};
      const void* where = a->ai_family == AF_INET6
                              ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr)
                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr);
      if (inet_ntop(a->ai_family, where, host, sizeof host) == nullptr) continue;
      addresses.push_back(a->ai_family == AF_INET6 ? "[" + std::string(host) + "]:" + port
                                                   : std::string(host) + ":" + port);
    }
    freeaddrinfo(found);
    std::sort(addresses.begin(), addresses.end());
    addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
    if (addresses.empty()) return Status(StatusCode::kLinkDown, "HIPR_SERVER entry '" + entry + "': no address");
    HIPR_LOG_INFO("HIPR_SERVER %s: %zu worker%s", entry.c_str(), addresses.size(), addresses.size() == 1 ? "" : "s");
    for (std::string& a : addresses) out->push_back(Endpoint{std::move(a), name});
  }
  return Status::Ok();
}

std::unique_ptr<Remote> Remote::Open(const Config& config, std::vector<AddressRange>* windows) {
  std::vector<Endpoint> endpoints;
  if (Status listed = ListWorkers(config.server, &endpoints); !listed.ok()) {
    HIPR_LOG_ERROR("%s", listed.message().c_str());
    auto r = std::unique_ptr<Remote>(new Remote({}, /*list=*/false));
    r->failed_ = listed;
    return r;
  }
  std::vector<std::string> servers;
  for (const Endpoint& e : endpoints) servers.push_back(e.server);
  windows->resize(servers.size());
  std::vector<std::unique_ptr<Session>> sessions;
  if (servers.size() > static_cast<size_t>(kMaxWorkers)) {
    HIPR_LOG_ERROR("HIPR_SERVER names %zu workers; a program may use at most %d", servers.size(), kMaxWorkers);
    auto r = std::unique_ptr<Remote>(new Remote({}, /*list=*/false));
    r->failed_ = InvalidArgument("HIPR_SERVER names more than " + std::to_string(kMaxWorkers) + " workers");
    return r;
  }
  bool all_up = true;
  for (size_t i = 0; i < servers.size(); ++i) {
    Config one = config;
    one.server = servers[i];
    one.workers = static_cast<int>(servers.size());
    one.worker_index = static_cast<int>(i);
    if (one.tls_server_name.empty()) one.tls_server_name = endpoints[i].tls_name;
    // With several workers the client selects among their joint list.
    if (servers.size() > 1) one.visible_devices.clear();
    sessions.push_back(Session::Open(one, &(*windows)[i]));
    if (sessions.back()->dead()) {
      all_up = false;
      break;  // The program is not served a list with a gap in it.
    }
  }
  auto r = std::unique_ptr<Remote>(new Remote(std::move(sessions), /*list=*/false));
  r->servers_ = servers;
  r->servers_.resize(r->sessions_.size());
  if (!all_up) {
    // A job that names several workers is given all of them or none: a
    // missing worker would silently renumber the rest. Its session's line
    // said so.
    r->failed_ = r->sessions_.back()->DeadStatus();
    return r;
  }
  r->ListDevices(servers.size() > 1 ? &config.visible_devices : nullptr);
  if (servers.size() > 1) {
    std::string list;
    for (int g = 0; g < r->device_count(); ++g)
      list += (g == 0 ? "" : ", ") + std::to_string(g) + " = " + servers[static_cast<size_t>(r->slots_[g].worker)] +
              " #" + std::to_string(r->slots_[g].local);
    HIPR_LOG_INFO("%zu workers, %d device%s: %s", servers.size(), r->device_count(),
                  r->device_count() == 1 ? "" : "s", list.c_str());
  }
  return r;
}

Remote::Remote(std::vector<std::unique_ptr<Session>> sessions) : Remote(std::move(sessions), true) {}

Remote::Remote(std::vector<std::unique_ptr<Session>> sessions, bool list) : sessions_(std::move(sessions)) {
  servers_.resize(sessions_.size());
  if (list) ListDevices(nullptr);
}

void Remote::ListDevices(const std::vector<std::string>* visible) {
  devices_.clear();
  slots_.clear();
  for (size_t w = 0; w < sessions_.size(); ++w) {
    const Session& s = *sessions_[w];
    for (int d = 0; d < s.device_count(); ++d) {
      devices_.push_back(s.devices()[static_cast<size_t>(d)]);
      slots_.push_back(Slot{sessions_[w].get(), static_cast<int>(w), d});
    }
  }
  if (visible == nullptr) return;
  const VisibleDevices v = ParseVisibleDevices(*visible);
  if (v.empty()) return;
  // ROCr's list first, then HIP's over what it left (as ROCm does).
  auto select = [&](const std::string& list) {
    std::vector<std::string> uuids;
    for (const msg::DeviceInfo& d : devices_)
      uuids.push_back(d.uuid.empty() ? std::string() : "GPU-" + std::string(d.uuid.begin(), d.uuid.end()));
    std::vector<msg::DeviceInfo> devices;
    std::vector<Slot> slots;
    for (int i : SelectVisible(list, uuids)) {
      devices.push_back(devices_[static_cast<size_t>(i)]);
      slots.push_back(slots_[static_cast<size_t>(i)]);
    }
    devices_ = std::move(devices);
    slots_ = std::move(slots);
  };
  if (v.rocr) select(*v.rocr);
  if (v.hip) select(*v.hip);
  HIPR_LOG_INFO("%s: %d of the workers' devices visible", v.Describe().c_str(), device_count());
}

bool Remote::dead() const {
  if (!failed_.ok() || sessions_.empty()) return true;
  for (const auto& s : sessions_)
    if (!s->dead()) return false;
  return true;
}

Status Remote::DeadStatus() const {
  if (!failed_.ok()) return Status(StatusCode::kDeviceLost, failed_.message());
  return sessions_[0]->DeadStatus();
}

StatusCode Remote::DeadCause() const {
  if (!failed_.ok()) {
    for (const auto& s : sessions_)
      if (s->dead()) return s->DeadCause();
    return failed_.code();
  }
  if (sessions_.empty()) return StatusCode::kOk;
  return sessions_[0]->DeadCause();
}

bool Remote::HasCapability(std::string_view name) const {
  return std::all_of(sessions_.begin(), sessions_.end(), [&](const auto& s) { return s->HasCapability(name); });
}

bool Remote::ListsCapability(std::string_view name) const {
  return std::all_of(sessions_.begin(), sessions_.end(), [&](const auto& s) { return s->ListsCapability(name); });
}

bool Remote::copy_changed() const {
  return std::all_of(sessions_.begin(), sessions_.end(), [](const auto& s) { return s->copy_changed(); });
}

Status Remote::PostCopy(const msg::CopyToDeviceRequest& request, const iovec* src, int src_count, bool src_pinned) {
  return Routed(request, [&](Session& s, const msg::CopyToDeviceRequest& r) {
    return s.PostCopy(r, src, src_count, src_pinned);
  });
}

Status Remote::PostCopyFromDevice(const msg::CopyFromDeviceRequest& request, const iovec* dst, int dst_count) {
  return Routed(request, [&](Session& s, const msg::CopyFromDeviceRequest& r) {
    return s.PostCopyFromDevice(r, dst, dst_count);
  });
}

Status Remote::CopyChanged(const msg::CopyChangedRequest& request, uint8_t* dst,
                           std::vector<std::pair<uint64_t, uint64_t>>* runs, int32_t* error) {
  return Routed(request, [&](Session& s, const msg::CopyChangedRequest& r) {
    return s.CopyChanged(r, dst, runs, error);
  });
}

Status Remote::PostHostCallback(int device, uint64_t stream, std::function<void(int32_t error)> fn) {
  Session* s = Route(device);
  if (s == nullptr) return NoSuchDevice(device);
  return s->PostHostCallback(LocalOf(device), stream, std::move(fn));
}

uint64_t Remote::AddHostCallback(int device, std::function<void(int32_t error)> fn) {
  Session* s = Route(device);
  return s == nullptr ? 0 : s->AddHostCallback(std::move(fn));
}

void Remote::DropHostCallback(int device, uint64_t id) {
  if (Session* s = Route(device); s != nullptr) s->DropHostCallback(id);
}

Status Remote::AwaitAsyncCopies() {
  Status first = Status::Ok();
  for (const auto& s : sessions_) {
    Status st = s->AwaitAsyncCopies();
    if (!st.ok() && first.ok() && (single() || !s->dead())) first = st;
  }
  return first;
}

int32_t Remote::TakeAsyncError() {
  int32_t first = 0;
  for (const auto& s : sessions_)
    if (int32_t e = s->TakeAsyncError(); e != 0 && first == 0) first = e;
  return first;
}

Status Remote::Flush() {
  Status first = Status::Ok();
  for (const auto& s : sessions_) {
    Status st = s->Flush();
    if (!st.ok() && first.ok() && (single() || !s->dead())) first = st;
  }
  return first;
}

void Remote::ForgetMemory(const void* addr, size_t bytes) {
  for (const auto& s : sessions_) s->ForgetMemory(addr, bytes);
}

void Remote::AbandonInChild() {
  for (const auto& s : sessions_) s->AbandonInChild();
}

}  // namespace hipr::client
