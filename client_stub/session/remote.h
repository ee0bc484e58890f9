// Remote: the workers HIPR_SERVER names, seen by the program as one list of
// devices. Each worker is its own Session (its own connection, hello,
// authentication, TLS, address window); the program's device g is device
// `local` of worker `worker` (Slot). With one worker the two numberings are
// the same and every call passes straight through.
//
// With several workers (HIPR_SERVER=a:p,b:q) the list is the first worker's
// devices, then the second's, and so on; HIP_VISIBLE_DEVICES and
// ROCR_VISIBLE_DEVICES select among that joint list as ROCm selects among
// local GPUs (the client applies them; with one worker the worker does, as
// before).
//
// Routing: a request that carries a `device` goes to that device's worker
// with the field rewritten to the worker's own ordinal; one that carries
// none (streams, events, modules, graphs and memory named by their id or
// address) names its device to Post/Call, and the compiler insists on it.
// A worker that is lost fails the calls routed to it with its session's
// status (hipErrorNoDevice at the API edge, the reason logged once) and no
// other: the Remote is dead only when every worker is.
//
// Thread-safety: as Session; immutable after Open apart from the sessions'
// own state.
#pragma once

#include <concepts>
#include <memory>
#include <string>
#include <vector>

#include "client_stub/abi/device_props.h"
#include "client_stub/base/config.h"
#include "client_stub/memory/address_window.h"
#include "client_stub/session/hip_status.h"
#include "client_stub/session/session.h"
#include "protocol/messages.h"

namespace hipr::client {

// A request that names the device it is for.
template <class Req>
concept NamesDevice = requires(Req r) {
  { r.device } -> std::convertible_to<int32_t>;
};

class Remote {
 public:
  static constexpr int kMaxWorkers = 16;

  // Where a device of the program lives.
  struct Slot {
    Session* session = nullptr;
    int worker = 0;  // Index in HIPR_SERVER's list.
    int local = 0;   // The worker's own ordinal.
  };

  // Opens a session to every worker config.server lists, in order; (*windows)[i]
  // is the address window offered to worker i (empty: reserve one; Open
  // resizes *windows to the list and stores what each session uses).
  // Never returns null: where no worker could be reached the Remote is dead.
  static std::unique_ptr<Remote> Open(const Config& config, std::vector<AddressRange>* windows);

  // The workers' sessions as given, every device of each visible (tests).
  explicit Remote(std::vector<std::unique_ptr<Session>> sessions);

  // The servers a HIPR_SERVER value lists ("a:p,b:q"; one entry otherwise).
  static std::vector<std::string> SplitServers(const std::string& server);

  // One worker of the list: its address, and the name TLS checks its
  // certificate against where HIPR_TLS_SERVER_NAME does not say (empty: the
  // address's host).
  struct Endpoint {
    std::string server;
    std::string tls_name;
  };
  // SplitServers, with each "dns:NAME:PORT" entry replaced by every address
  // NAME resolves to (a Kubernetes headless Service: one per ready pod),
  // sorted as text, so that every client numbers the devices alike.
  static Status ListWorkers(const std::string& server, std::vector<Endpoint>* out);

  bool dead() const;  // Every worker's session is.
  Status DeadStatus() const;  // The first worker's (all are dead).
  StatusCode DeadCause() const;

  int worker_count() const { return static_cast<int>(sessions_.size()); }
  Session& worker(int i) const { return *sessions_[static_cast<size_t>(i)]; }
  // Whether devices a and b (valid ordinals) are served by one worker.
  bool SameWorker(int a, int b) const { return SlotOf(a).worker == SlotOf(b).worker; }
  int WorkerOf(int device) const { return SlotOf(device).worker; }
  Session& SessionOf(int device) const { return *SlotOf(device).session; }
  // The HIPR_SERVER entry of `device`'s worker ("host:port", after dns:
  // expansion).
  const std::string& ServerOf(int device) const { return servers_[static_cast<size_t>(SlotOf(device).worker)]; }
  // The worker's own ordinal of `device` (a valid ordinal).
  int LocalOf(int device) const { return SlotOf(device).local; }

  const std::vector<msg::DeviceInfo>& devices() const { return devices_; }
  int device_count() const { return static_cast<int>(devices_.size()); }
  const DeviceAnswers& answers(int device) const { return SessionOf(device).answers(LocalOf(device)); }

  // The shm transport's host segment: only with a single worker.
  HostSegment* host_segment() const { return single() ? sessions_[0]->host_segment() : nullptr; }
  // What the first worker's hello established (every worker of one job
  // runs one ROCm; hipr-smi shows each).
  int32_t driver_version() const { return sessions_[0]->driver_version(); }
  int32_t runtime_version() const { return sessions_[0]->runtime_version(); }
  uint32_t chunk_bytes() const { return sessions_[0]->chunk_bytes(); }
  const std::string& device_kind() const { return sessions_[0]->device_kind(); }
  // Every worker's device has it (Session::HasCapability / ListsCapability).
  bool HasCapability(std::string_view name) const;
  bool ListsCapability(std::string_view name) const;
  bool copy_changed() const;

  // Fire-and-forget to the worker of request.device, in its ordinal.
  template <wire::Op op, NamesDevice Req>
  Status Post(const Req& request) {
    return Routed(request, [&](Session& s, const Req& r) { return s.Post<op>(r); });
  }
  // Fire-and-forget of a request that names no device, to `device`'s worker.
  template <wire::Op op, class Req>
    requires(!NamesDevice<Req>)
  Status Post(int device, const Req& request) {
    Session* s = Route(device);
    return s == nullptr ? NoSuchDevice(device) : s->Post<op>(request);
  }
  template <wire::Op op, NamesDevice Req, class Rep>
  Status Call(const Req& request, Rep* reply, const iovec* send_bulk = nullptr, int send_count = 0,
              const iovec* recv_bulk = nullptr, int recv_count = 0, bool send_pinned = false,
              bool recv_pinned = false) {
    return Routed(request, [&](Session& s, const Req& r) {
      return s.Call<op>(r, reply, send_bulk, send_count, recv_bulk, recv_count, send_pinned, recv_pinned);
    });
  }
  template <wire::Op op, class Req, class Rep>
    requires(!NamesDevice<Req>)
  Status Call(int device, const Req& request, Rep* reply, const iovec* send_bulk = nullptr, int send_count = 0,
              const iovec* recv_bulk = nullptr, int recv_count = 0, bool send_pinned = false,
              bool recv_pinned = false) {
    Session* s = Route(device);
    if (s == nullptr) return NoSuchDevice(device);
    return s->Call<op>(request, reply, send_bulk, send_count, recv_bulk, recv_count, send_pinned, recv_pinned);
  }

  Status PostCopy(const msg::CopyToDeviceRequest& request, const iovec* src, int src_count, bool src_pinned = false);
  Status PostCopyFromDevice(const msg::CopyFromDeviceRequest& request, const iovec* dst, int dst_count);
  Status CopyChanged(const msg::CopyChangedRequest& request, uint8_t* dst,
                     std::vector<std::pair<uint64_t, uint64_t>>* runs, int32_t* error);
  Status PostHostCallback(int device, uint64_t stream, std::function<void(int32_t error)> fn);
  uint64_t AddHostCallback(int device, std::function<void(int32_t error)> fn);
  void DropHostCallback(int device, uint64_t id);

  // Of every worker: the first failure (a lost worker's is skipped where
  // another's is live: its own calls report it).
  Status AwaitAsyncCopies();
  int32_t TakeAsyncError();
  Status Flush();
  void ForgetMemory(const void* addr, size_t bytes);
  void AbandonInChild();

 private:
  bool single() const { return sessions_.size() == 1; }
  // A valid ordinal's slot; with one worker every ordinal passes as it is,
  // so the worker judges it as it always has.
  Slot SlotOf(int device) const {
    if (single()) return Slot{sessions_[0].get(), 0, device};
    return slots_[static_cast<size_t>(device)];
  }
  Session* Route(int device) const {
    if (!single() && (device < 0 || device >= device_count())) return nullptr;
    return SlotOf(device).session;
  }
  static Status NoSuchDevice(int device) {
    return HipStatus(hipErrorInvalidDevice, "no device " + std::to_string(device));
  }
  template <class Req, class Send>
  Status Routed(const Req& request, Send send) {
    Session* s = Route(request.device);
    if (s == nullptr) return NoSuchDevice(request.device);
    const int local = SlotOf(request.device).local;
    if (local == request.device) return send(*s, request);
    Req copy = request;
    copy.device = local;
    return send(*s, copy);
  }
  // Builds devices_ and slots_: every device of each live worker, then
  // `visible` applied (HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES, as
  // ROCm reads them) where the client selects.
  void ListDevices(const std::vector<std::string>* visible);
  Remote(std::vector<std::unique_ptr<Session>> sessions, bool list);

  std::vector<std::unique_ptr<Session>> sessions_;  // At least one unless failed_.
  Status failed_;  // Why the list as a whole cannot serve (a worker unreachable at the start).
  std::vector<msg::DeviceInfo> devices_;
  std::vector<Slot> slots_;
  std::vector<std::string> servers_;  // Per worker, as sessions_.
};

}  // namespace hipr::client
