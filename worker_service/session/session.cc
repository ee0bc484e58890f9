#include "worker_service/session/session.h"

#include <spdlog/spdlog.h>

#include <signal.h>

#include <algorithm>
#include <future>
#include <chrono>
#include <set>

#include "protocol/auth.h"
#include "protocol/frame_io.h"
#include "protocol/status_hip.h"
#include "protocol/tcp/tcp_connection.h"
#include "worker_service/session/hip_error.h"
#include "worker_service/session/shared_segment.h"

namespace hipr::worker {
namespace {

using wire::Op;

// Host callbacks a session may have waiting at once.
constexpr size_t kMaxHostCallbacks = 1 << 16;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The op's name, or its code when it has none.
std::string OpName(uint16_t op) {
  if (const char* name = wire::OpName(op)) return name;
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", op);
  return buf;
}

// A managed read-back's reply lists at most this many runs (its body
// stays far below wire::kMaxBodyBytes); more are merged across the
// smallest gaps, which sends some unwritten bytes too.
constexpr size_t kMaxChangedRuns = 8192;

// Merges runs (ascending, disjoint) across ever wider gaps until at most
// `max` are left.
void CoalesceRuns(std::vector<std::pair<uint64_t, uint64_t>>* runs, size_t max) {
  for (uint64_t gap = 4096; runs->size() > max; gap *= 2) {
    size_t out = 0;
    for (size_t i = 1; i < runs->size(); ++i) {
      auto& last = (*runs)[out];
      const auto& r = (*runs)[i];
      if (r.first - (last.first + last.second) <= gap)
        last.second = r.first + r.second - last.first;
      else
        (*runs)[++out] = r;
    }
    runs->resize(out + 1);
  }
}

}  // namespace

Session::Session(uint64_t id, std::unique_ptr<Connection> conn, std::unique_ptr<Device> device,
                 const WorkerConfig& config)
    : id_(id),
      conn_(std::move(conn)),
      device_(std::move(device)),
      config_(config),
      segment_(conn_->SharedHostRegion()),
      code_cache_(config.code_cache_dir, config.code_cache_bytes) {
  device_->SetOutputSink([this](std::string_view text) {
    MutexLock lock(output_mu_);
    output_.append(text);
  });
  // conn_ outlives device_ (~Session drops the device first). It is
  // replaced only in the hello (the transport's upgrade), before any bulk
  // moves.
  bulk_ = device_->bulk_memory();
  if (bulk_ != nullptr)
    bulk_->SetForgetMemoryHook([this](const void* addr, size_t bytes) { conn_->ForgetMemory(addr, bytes); });
}

Session::~Session() {
  {
    MutexLock lock(hb_mu_);
    stopping_ = true;
  }
  hb_cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
  // Streams held at host callbacks the client will never run now go on;
  // queued work may still run completions that use this session's members:
  // drain the device first.
  for (auto& [id, gate] : host_gates_) gate->Open();
  device_.reset();
}

Status Session::SendReplyLocked(const wire::FrameHeader& request) {
  last_send_ns_ = NowNs();
  HIPR_RETURN_IF_ERROR(FlushOutputLocked());
  return SendFrame(*conn_, static_cast<uint16_t>(request.op | wire::kReplyBit), request.request_id, writer_);
}

Status Session::TakeDeferred(const Status& own) {
  if (!own.ok()) return own;
  MutexLock lock(deferred_mu_);
  return std::exchange(deferred_, Status::Ok());
}

Status Session::ReplySync(const wire::FrameHeader& request, const Status& own) {
  return Reply(request, msg::CallReply{ToHipError(TakeDeferred(own))});
}

Device::Completion Session::ReplyLater(const wire::FrameHeader& request) {
  if (pending_replies_.fetch_add(1) == 0) pending_since_ns_ = NowNs();
  return [this, request](Status own) {
    codec::BodyWriter w;
    w.Encode(msg::CallReply{ToHipError(TakeDeferred(own))});
    Status st;
    {
      MutexLock lock(send_mu_);
      last_send_ns_ = NowNs();
      st = FlushOutputLocked();
      if (st.ok())
        st = SendFrame(*conn_, static_cast<uint16_t>(request.op | wire::kReplyBit), request.request_id, w);
    }
    pending_replies_.fetch_sub(1);
    // A dead link is the replay thread's to notice (its next read fails).
    if (!st.ok()) spdlog::info("session {}: reply to request {} not sent: {}", id_, request.request_id, st.ToString());
  };
}

Status Session::FlushOutputLocked() {
  std::string text;
  {
    MutexLock lock(output_mu_);
    if (output_.empty()) return Status::Ok();
    text.swap(output_);
  }
  codec::BodyWriter w;
  for (size_t at = 0; at < text.size(); at += wire::kMaxOutputBytes) {
    w.Encode(msg::Output{text.substr(at, wire::kMaxOutputBytes)});
    HIPR_RETURN_IF_ERROR(SendFrame(*conn_, static_cast<uint16_t>(Op::kOutput), 0, w));
  }
  return Status::Ok();
}

void Session::Defer(const wire::FrameHeader& request, const Status& st) {
  if (st.ok()) return;
  spdlog::warn("session {}: deferred error in op {} (request {}): {}", id_, OpName(request.op),
               request.request_id, st.ToString());
  if (ledger_ != nullptr) ledger_->Count(Ledger::kDeferredErrors);
  MutexLock lock(deferred_mu_);
  if (deferred_.ok()) deferred_ = st;
}

Status Session::OverLimit(const char* what, size_t held, int limit, const char* flag) {
  Status st(StatusCode::kResourceExhausted, "the session holds " + std::to_string(held) + " " + what +
                                                ", its limit (" + flag + " " + std::to_string(limit) + ")");
  static std::set<std::string> logged;
  if (logged.insert(what).second) spdlog::warn("session {}: {}", id_, st.message());
  return st;
}

void Session::ForgetDevice(int device) {
  // The branches' streams and events went with the rest; made again at the
  // next launch.
  for (auto& [id, g] : graphs_)
    if (g.device == device) ReleaseBranches(g, false);
  for (auto* held : {&streams_, &events_, &modules_}) {
    for (auto it = held->begin(); it != held->end();) {
      if (it->second != device) {
        ++it;
        continue;
      }
      if (held == &streams_ && ledger_ != nullptr) ledger_->ReturnStream(slot_);
      it = held->erase(it);
    }
  }
}

void Session::SendFatal(const Status& why) {
  MutexLock lock(send_mu_);
  SendFatalFrame(*conn_, why);
}

Status Session::Hello() {
  if (!admission_.has_value()) {
    Admission a;
    HIPR_RETURN_IF_ERROR(Handshake(*conn_, config_, id_, &a));
    admission_ = std::move(a);
  }
  const msg::HelloRequest& hello = admission_->hello;
  const wire::FrameHeader h = admission_->reply_to;
  code_cache_.set_tenant(admission_->tenant.name);

  msg::HelloReply reply;
  reply.session_id = id_;
  reply.device_kind = std::string(device_->kind());
  reply.capabilities = device_->capabilities();
  if (!peer_host_.empty()) reply.capabilities.push_back(wire::kCapabilityPeerCopy);
  reply.heartbeat_ms = static_cast<uint32_t>(config_.heartbeat_ms);
  reply.worker_version = HIPR_VERSION;
  reply.version = admission_->version;
  reply.auth_proof = admission_->auth_proof;
  Status attach = device_->AttachWindow(hello.window, &reply.window);
  if (!attach.ok()) {
    reply.status = attach.code();
    reply.message = "cannot attach the device address window: " + attach.message();
  }
  uint32_t want = hello.chunk_bytes == 0 ? config_.chunk_bytes : hello.chunk_bytes;
  chunk_bytes_ = std::clamp(std::min(want, config_.chunk_bytes), wire::kMinChunkBytes, wire::kMaxChunkBytes);
  reply.chunk_bytes = chunk_bytes_;
  // Bulk lz4: in each direction the client offers, when this side wants it.
  const bool local = conn_->PeerIsLocal();
  const bool want_lz4 = config_.compress == "on" || (config_.compress == "auto" && !local);
  for (const std::string& f : hello.features) {
    if (f == wire::kFeatureCopyChanged && !copy_changed_) {
      copy_changed_ = true;
      reply.features.push_back(f);
    }
    if (f == wire::kFeatureWorkerStatus && !worker_status_) {
      worker_status_ = true;
      reply.features.push_back(f);
    }
    if (!want_lz4) continue;
    if (f == wire::kFeatureLz4ToDevice && !lz4_to_device_) {
      lz4_to_device_ = true;
      reply.features.push_back(f);
    } else if (f == wire::kFeatureLz4FromDevice && !lz4_from_device_) {
      lz4_from_device_ = true;
      reply.features.push_back(f);
    }
  }
  // "on" compresses whatever compresses; "auto" also asks whether the link
  // is slower than lz4 (ChunkCompressor's link guard).
  {
    MutexLock lock(send_mu_);
    compressor_.set_link_guard(config_.compress == "auto");
  }
  reply.devices = device_->devices();
  reply.driver_version = device_->driver_version();
  reply.runtime_version = device_->runtime_version();
  // The transport's upgrade (transports.h): answered in the reply, then
  // finished, which may replace conn_, before any other frame.
  if (upgrade_ != nullptr && reply.status == StatusCode::kOk) upgrade_->Answer(hello, &reply);
  // Resume: a tcp or TLS session (never one moving to rdma) whose client
  // offers it, where the worker keeps sessions at all.
  const bool offered_resume =
      std::find(hello.features.begin(), hello.features.end(), wire::kFeatureResume) != hello.features.end();
  if (offered_resume && resumable_ && config_.resume_grace_s > 0 && reply.rdma_qp.empty() &&
      reply.status == StatusCode::kOk) {
    Status opened = ResumeDoor::Open(
        id_, admission_->tenant.name,
        [this] {
          if (ResumableLink* link = link_.load(); link != nullptr) link->Interrupt();
        },
        &door_);
    if (opened.ok()) {
      reply.features.push_back(wire::kFeatureResume);
      reply.resume_secret = door_->secret();
      reply.resume_grace_ms = static_cast<uint32_t>(config_.resume_grace_s) * 1000u;
    } else {
      spdlog::warn("session {}: cannot offer resume: {}", id_, opened.message());
    }
  }
  HIPR_RETURN_IF_ERROR(Reply(h, reply));
  if (reply.status != StatusCode::kOk) return Status(reply.status, reply.message);
  if (upgrade_ != nullptr) {
    std::unique_ptr<transport::ServerUpgrade> upgrade = std::move(upgrade_);
    HIPR_RETURN_IF_ERROR(upgrade->Finish(&conn_));
  }
  if (door_ != nullptr) StartResumable();
  spdlog::info("session {}: client '{}' pid {} from {}{}; window [{:#x}, +{:#x}){}", id_, hello.client_name,
               hello.client_pid, conn_->PeerName(),
               admission_->tenant.name.empty() ? "" : ", tenant '" + admission_->tenant.name + "'",
               reply.window.base, reply.window.size,
               reply.window.base == hello.window.base ? "" : " (counter-offer)");
  spdlog::info("session {}: bulk lz4: to the device {}, from the device {} (--compress {}, {} client{})", id_,
               lz4_to_device_ ? "on" : "off", lz4_from_device_ ? "on" : "off", config_.compress,
               local ? "local" : "remote", hello.features.empty() ? ", which offered none" : "");
  return Status::Ok();
}

void Session::StartResumable() {
  auto link = std::make_unique<ResumableLink>(
      std::move(conn_), [this](uint64_t received, const Status& why, const std::atomic<bool>& closed,
                               ResumableLink::Relinked* out) { return Relink(received, why, closed, out); });
  link_.store(link.get());
  conn_ = std::move(link);
  spdlog::info("session {}: resumable: kept for {} s after its link drops (--resume-grace-s)", id_,
               config_.resume_grace_s);
}

Status Session::Relink(uint64_t received, const Status& why, const std::atomic<bool>& closed,
                       ResumableLink::Relinked* out) {
  if (client_leaving_.load()) return LinkDown(why.message() + "; the client's process was exiting");
  const auto started = std::chrono::steady_clock::now();
  const auto deadline = started + std::chrono::seconds(config_.resume_grace_s);
  spdlog::info("session {}: link lost ({}); keeping the session {} s for its client to resume (--resume-grace-s)",
               id_, why.message(), config_.resume_grace_s);
  for (;;) {
    ResumeDoor::Admitted a;
    if (!door_->Take(deadline, closed, &a)) {
      if (closed.load()) return LinkDown("the session is ending");
      return LinkDown("the client did not resume within " + std::to_string(config_.resume_grace_s) +
                      " s (--resume-grace-s); the session ends");
    }
    auto conn = std::make_unique<tcp::TcpConnection>(a.fd);
    conn->set_spin_us(config_.spin_us);
    msg::HelloReply reply;
    reply.version = a.knock.version;
    reply.session_id = id_;
    reply.heartbeat_ms = static_cast<uint32_t>(config_.heartbeat_ms);
    reply.worker_version = HIPR_VERSION;
    reply.features = {wire::kFeatureResume};
    reply.resume_secret = a.secret;
    reply.resume_grace_ms = static_cast<uint32_t>(config_.resume_grace_s) * 1000u;
    reply.resume_received = received;
    reply.auth_proof = a.knock.auth_proof;
    codec::BodyWriter w;
    w.Encode(reply);
    Status sent = SendFrame(*conn, a.knock.reply_op | wire::kReplyBit, a.knock.reply_request_id, w);
    if (!sent.ok()) {
      // Lost again before it began; the client's next try needs the secret
      // this reply carried, which it never got.
      spdlog::warn("session {}: the resuming connection from {} failed at once: {}", id_, a.knock.peer,
                   sent.message());
      continue;
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    const uint64_t sent_bytes = link_.load()->sent();
    spdlog::info("session {}: resumed from {} after {:.2f} s; the client had {} of {} bytes sent to it, this worker "
                 "{} of the client's",
                 id_, a.knock.peer, waited, a.knock.client_received, sent_bytes, received);
    if (ledger_ != nullptr) ledger_->Count(Ledger::kResumes);
    out->conn = std::move(conn);
    out->peer_received = a.knock.client_received;
    return Status::Ok();
  }
}

void Session::LogLz4() {
  if (!lz4_to_device_ && !lz4_from_device_) return;
  ChunkCompressor::Counters sent;
  {
    MutexLock lock(send_mu_);
    sent = lz4_sent_;
  }
  const ChunkInflater::Counters& got = inflater_.counters();
  spdlog::info(
      "session {}: bulk lz4 received: {} chunks ({} bytes as {}); sent: {} chunks compressed ({} bytes as {}), "
      "raw: {} (samples did not shrink), {} (chunk did not shrink), {} (backing off), {} (link faster than lz4); "
      "{:.3f} s compressing",
      id_, got.chunks, got.raw_bytes, got.wire_bytes, sent.compressed, sent.raw_bytes, sent.wire_bytes,
      sent.raw_sampled, sent.raw_whole, sent.raw_backoff, sent.raw_link, static_cast<double>(sent.ns) / 1e9);
}

Status Session::Run() {
  Status st = Hello();
  if (!st.ok()) {
    spdlog::warn("session {}: hello failed: {}", id_, st.ToString());
    // A refused handshake has already told the client why.
    if (st.scope() == StatusScope::kSession && st.code() != StatusCode::kUnauthenticated) SendFatal(st);
    return st;
  }
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });
  for (;;) {
    wire::FrameHeader h;
    if (config_.idle_timeout_s > 0) {
      // A client that sends nothing for this long (no call, nothing it
      // waits on here) gives its memory back to the others.
      st = conn_->WaitReadable(config_.idle_timeout_s * 1000);
      if (st.code() == StatusCode::kTimeout) {
        const Status idle(StatusCode::kResourceExhausted,
                          "the session sent nothing for " + std::to_string(config_.idle_timeout_s) +
                              " s and was ended by the worker (--idle-timeout-s); its device memory is freed");
        spdlog::info("session {}: {}", id_, idle.message());
        if (ledger_ != nullptr) ledger_->Count(Ledger::kIdleEnded);
        SendFatal(idle);
        return Status::Ok();
      }
    }
    st = ReadHeader(*conn_, &h);
    if (st.ok()) {
      const int64_t started = NowNs();
      busy_since_ns_ = started;
      st = Dispatch(h);
      busy_since_ns_ = 0;
      if (ledger_ != nullptr && h.op != static_cast<uint16_t>(Op::kData))
        ledger_->CountCall(h.op, static_cast<uint64_t>(NowNs() - started));
    }
    if (st.ok() && !goodbye_) continue;
    LogLz4();
    if (const std::string bulk = conn_->BulkSummary(); !bulk.empty()) spdlog::info("session {}: {}", id_, bulk);
    if (goodbye_) {
      spdlog::info("session {}: client said goodbye", id_);
      return Status::Ok();
    }
    if (worker_stopping_) {
      spdlog::info("session {}: ended because the worker is shutting down", id_);
      return Status::Ok();
    }
    if (st.scope() == StatusScope::kLink) {
      spdlog::info("session {}: client gone: {}", id_, st.message());
      return Status::Ok();
    }
    spdlog::error("session {}: ending: {}", id_, st.ToString());
    SendFatal(st);
    return st;
  }
}

void Session::HeartbeatLoop() {
  const auto period = std::chrono::milliseconds(config_.heartbeat_ms);
  // Wakes often enough to notice the worker's SIGTERM (blocked in every
  // thread of the session process, so it stays pending until taken here).
  const auto tick = std::min(period, std::chrono::milliseconds(100));
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  const timespec no_wait{0, 0};
  MutexLock lock(hb_mu_);
  for (;;) {
    if (!stopping_) hb_cv_.wait_for(lock.native(), tick);
    if (stopping_) break;
    if (sigtimedwait(&term, nullptr, &no_wait) == SIGTERM) {
      worker_stopping_ = true;
      if (ResumableLink* link = link_.load(); link != nullptr && link->down()) {
        // Waiting for its client to resume: there is nobody to tell, and
        // the worker does not wait out the grace period.
        spdlog::info("session {}: the worker is shutting down; the session waited for its client to resume", id_);
        conn_->Shutdown();
        return;
      }
      // Between frames (the send lock is ours), tell the client why, then
      // wake the replay thread with a closed connection.
      SendFatal(Status(StatusCode::kDeviceLost, "the worker is shutting down"));
      conn_->Shutdown();
      return;
    }
    int64_t now = NowNs();
    int64_t busy = busy_since_ns_.load();
    if (busy == 0 && pending_replies_.load() > 0) busy = pending_since_ns_.load();  // A client waits.
    if (busy == 0 || now - busy < period.count() * 1000000 || now - last_send_ns_.load() < period.count() * 1000000)
      continue;
    uint8_t raw[sizeof(wire::FrameHeader)];
    wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(Op::kHeartbeat), 0, 0), raw);
    MutexLock send_lock(send_mu_);
    last_send_ns_ = now;
    if (!conn_->SendAll(raw, sizeof raw).ok()) return;
  }
}

// Frames reach their handler through the table of ops (protocol/ops.h):
// each op the worker serves has one On() overload, and an op without one
// does not compile. The body is read and decoded first.
Status Session::Dispatch(const wire::FrameHeader& h) {
  switch (static_cast<Op>(h.op)) {
#define HIPR_DISPATCH(name, code, request, reply, mode, flags, note) \
  case Op::k##name:                                                  \
    return Serve<Op::k##name>(h);
    HIPR_OPS(HIPR_DISPATCH)
#undef HIPR_DISPATCH
  }
  return ProtocolError("unknown op " + OpName(h.op));
}

template <Op op>
Status Session::Serve(const wire::FrameHeader& h) {
  constexpr ops::Mode mode = ops::kModeOf<op>;
  if constexpr (op == Op::kHeartbeat) {
    return SkipPayload(*conn_, h.payload_length);
  } else if constexpr (mode == ops::Mode::kLink) {
    return ProtocolError("data frame outside a transfer");
  } else if constexpr (mode != ops::Mode::kCall && mode != ops::Mode::kPost && mode != ops::Mode::kCallOrPost) {
    return ProtocolError(OpName(h.op) + " is not a request the session serves");
  } else {
    HIPR_RETURN_IF_ERROR(ReadBody(*conn_, h, &body_));
    if constexpr (op == Op::kApiCall) {
      return ServeApiCall(h);  // Decodes its head and arguments in one pass (session_api.cc).
    } else {
      ops::Request<op> m;
      if constexpr (!std::is_same_v<ops::Request<op>, msg::NoBody>) HIPR_RETURN_IF_ERROR(Decode(&m));
      return On(ops::Tag<op>{}, h, m);
    }
  }
}

Status Session::On(ops::Tag<Op::kLinkAck>, const wire::FrameHeader& h, msg::LinkAck& m) {
  ResumableLink* link = link_.load();
  if (link == nullptr) return ProtocolError("kLinkAck on a session that did not agree resume");
  HIPR_RETURN_IF_ERROR(link->Acknowledge(m.received));
  if (m.leaving && !client_leaving_.exchange(true))
    spdlog::info("session {}: the client's process is exiting: a dropped link now ends the session", id_);
  if (!m.want_reply) return Status::Ok();
  return Reply(h, msg::CallReply{});
}

Status Session::On(ops::Tag<Op::kGoodbye>, const wire::FrameHeader& h, msg::NoBody& m) {
  goodbye_ = true;
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kDeviceSynchronize>, const wire::FrameHeader& h, msg::DeviceRequest& m) {
  device_->DeviceSynchronizeAsync(m.device, ReplyLater(h));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kDeviceReset>, const wire::FrameHeader& h, msg::DeviceRequest& m) {
  // The reset waits for every stream here, on the replay thread: a
  // stream held at a host callback would wait for a "done" queued
  // behind this frame. The reset discards the streams' work anyway, so
  // let them past their callbacks (the client still runs them).
  for (auto& [id, gate] : host_gates_) gate->Open();
  Status st = device_->DeviceReset(m.device);
  if (st.ok()) ForgetDevice(m.device);
  return ReplySync(h, st);
}

Status Session::On(ops::Tag<Op::kMemGetInfo>, const wire::FrameHeader& h, msg::DeviceRequest& m) {
  msg::MemInfoReply r;
  r.error = ToHipError(device_->MemInfo(m.device, &r.free_bytes, &r.total_bytes));
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kWorkerStatus>, const wire::FrameHeader& h, msg::WorkerStatusRequest& m) {
  msg::WorkerStatusReply r;
  if (m.flags != 0) {
    r.error = ToHipError(InvalidArgument("unknown worker status flags " + std::to_string(m.flags)));
    return Reply(h, r);
  }
  // Health: librocm-smi, where the device is a real GPU; matched by PCI
  // location, since HIP's order (HIP_VISIBLE_DEVICES...) need not be its.
  std::vector<GpuSample> samples;
  if (device_->kind() != std::string_view("hip")) {
    r.health = "the " + std::string(device_->kind()) + " device has no sensors";
  } else {
    if (!health_tried_) {
      health_tried_ = true;
      health_ = GpuHealth::Open(&health_why_, "librocm_smi64.so.1", /*watch_resets=*/false);
      if (health_ == nullptr) spdlog::info("session {}: no GPU health for hipr-smi: {}", id_, health_why_);
    }
    if (health_ != nullptr) samples = health_->Read();
    else r.health = health_why_;
  }
  const std::vector<msg::DeviceInfo> infos = device_->devices();
  for (size_t i = 0; i < infos.size(); ++i) {
    msg::DeviceStatus d;
    d.device = static_cast<int32_t>(i);
    d.error = ToHipError(device_->MemInfo(d.device, &d.memory_free, &d.memory_total));
    const msg::DeviceInfo& info = infos[i];
    const uint64_t bdf = PciBdf(static_cast<uint32_t>(info.pci_domain_id), static_cast<uint32_t>(info.pci_bus_id),
                                static_cast<uint32_t>(info.pci_device_id));
    for (const GpuSample& g : samples) {
      if (!g.pci_bdf || (*g.pci_bdf & ~uint64_t{7}) != bdf) continue;
      if (g.edge_celsius) d.known |= msg::kStatusTemperature, d.edge_celsius = *g.edge_celsius;
      if (g.power_watts) d.known |= msg::kStatusPower, d.power_watts = *g.power_watts;
      if (g.gfx_activity) d.known |= msg::kStatusBusy, d.busy_percent = *g.gfx_activity;
      if (g.used_vram_mb)
        d.known |= msg::kStatusVramUsed, d.vram_used = static_cast<uint64_t>(*g.used_vram_mb * (1 << 20));
      break;
    }
    r.devices.push_back(d);
  }
  if (ledger_ != nullptr && slot_ >= 0) {
    for (const Ledger::SessionUsage& u : ledger_->SessionsOfTenant(slot_, &r.tenant))
      r.sessions.push_back({u.session_id, u.memory, u.leased});
    r.worker_memory_used = ledger_->memory_used();
    r.worker_memory_budget = ledger_->memory_budget();
  } else {
    r.sessions.push_back({id_, 0, 0});  // No ledger (in-process tests): this session alone, memory unknown.
  }
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kMalloc>, const wire::FrameHeader& h, msg::MallocRequest& m) {
  msg::MallocReply r;
  // As hipMalloc: size 0 is success with a null pointer, on any device.
  Status st = (m.flags & ~msg::kMallocKnownFlags) != 0
                  ? Status(StatusCode::kInvalidArgument, "unknown malloc flags " + std::to_string(m.flags))
              : m.size == 0 ? Status::Ok()
                            : device_->Malloc(m.device, m.size, m.flags, &r.address);
  if (!st.ok()) spdlog::info("session {}: malloc of {} bytes failed: {}", id_, m.size, st.ToString());
  r.error = ToHipError(st);
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kFree>, const wire::FrameHeader& h, msg::FreeRequest& m) {
  if (m.address != 0) Defer(h, device_->Free(m.address));  // hipFree(nullptr) does nothing.
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kMemLease>, const wire::FrameHeader& h, msg::MemLeaseRequest& m) {
  msg::MemLeaseReply r;
  MemoryLeaseFacet* lease = device_->memory_lease();
  Status st = lease ? lease->Lease(m.device, m.need, m.want, &r.base, &r.size, &r.granularity)
                    : NoFacet("memory leases");
  if (!st.ok()) {
    spdlog::info("session {}: lease of {} to {} bytes refused: {}", id_, m.need, m.want, st.ToString());
    r = msg::MemLeaseReply{};
  }
  r.error = ToHipError(st);
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kMemLeasePlace>, const wire::FrameHeader& h, msg::MemLeasePlaceRequest& m) {
  MemoryLeaseFacet* lease = device_->memory_lease();
  Status st = lease ? lease->PlaceInLease(m.device, m.address, m.size) : NoFacet("memory leases");
  if (!st.ok()) spdlog::info("session {}: allocation at 0x{:x} (+{}) in the lease refused: {}", id_, m.address, m.size,
                             st.ToString());
  Defer(h, std::move(st));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kMemLeaseReturn>, const wire::FrameHeader& h, msg::DeviceRequest& m) {
  MemoryLeaseFacet* lease = device_->memory_lease();
  Defer(h, lease ? lease->ReturnLease(m.device) : NoFacet("memory leases"));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kMemset>, const wire::FrameHeader& h, msg::MemsetRequest& m) {
  Defer(h, Replay(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kHostRegister>, const wire::FrameHeader& h, msg::HostRangeRequest& m) {
  return HostRange(h, m, true);
}

Status Session::On(ops::Tag<Op::kHostUnregister>, const wire::FrameHeader& h, msg::HostRangeRequest& m) {
  return HostRange(h, m, false);
}

Status Session::On(ops::Tag<Op::kVmmReserve>, const wire::FrameHeader& h, msg::VmmReserveRequest& m) {
  msg::VmmReserveReply r;
  VirtualMemoryFacet* vmm = device_->vmm();
  Status st = vmm ? vmm->VmmReserve(m.size, m.alignment, m.hint, &r.address) : NoFacet("virtual memory");
  if (!st.ok()) spdlog::info("session {}: address reservation of {} bytes refused: {}", id_, m.size, st.ToString());
  r.error = ToHipError(st);
  if (!st.ok()) r.address = 0;
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kVmmFree>, const wire::FrameHeader& h, msg::VmmRangeRequest& m) {
  VirtualMemoryFacet* vmm = device_->vmm();
  Status st = vmm ? vmm->VmmFree(m.address, m.size) : NoFacet("virtual memory");
  if (!st.ok())
    spdlog::info("session {}: freeing the reservation 0x{:x} (+{}) refused: {}", id_, m.address, m.size, st.ToString());
  return Reply(h, msg::CallReply{ToHipError(st)});
}

// Replied once the streams reach it, from wherever that happens: the
// replay thread goes on meanwhile (a stream may be held at a host callback
// whose "done" is still to come).
Status Session::On(ops::Tag<Op::kVmmUnmap>, const wire::FrameHeader& h, msg::VmmRangeRequest& m) {
  VirtualMemoryFacet* vmm = device_->vmm();
  if (vmm == nullptr) return ReplySync(h, NoFacet("virtual memory"));
  Device::Completion reply = ReplyLater(h);
  vmm->VmmUnmapAsync(m.address, m.size, [this, m, reply = std::move(reply)](Status st) {
    if (!st.ok()) spdlog::info("session {}: unmap of 0x{:x} (+{}) refused: {}", id_, m.address, m.size, st.ToString());
    reply(std::move(st));
  });
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kVmmCreate>, const wire::FrameHeader& h, msg::VmmCreateRequest& m) {
  VirtualMemoryFacet* vmm = device_->vmm();
  Status st = vmm ? vmm->VmmCreate(m.device, m.handle, m.size) : NoFacet("virtual memory");
  if (!st.ok()) spdlog::info("session {}: physical memory of {} bytes refused: {}", id_, m.size, st.ToString());
  return Reply(h, msg::CallReply{ToHipError(st)});
}

Status Session::On(ops::Tag<Op::kVmmRelease>, const wire::FrameHeader& h, msg::VmmHandleRequest& m) {
  VirtualMemoryFacet* vmm = device_->vmm();
  return Reply(h, msg::CallReply{ToHipError(vmm ? vmm->VmmRelease(m.handle) : NoFacet("virtual memory"))});
}

Status Session::On(ops::Tag<Op::kVmmMap>, const wire::FrameHeader& h, msg::VmmMapRequest& m) {
  VirtualMemoryFacet* vmm = device_->vmm();
  Status st = vmm ? vmm->VmmMap(m.address, m.size, m.offset, m.handle) : NoFacet("virtual memory");
  if (!st.ok()) spdlog::info("session {}: mapping at 0x{:x} (+{}) refused: {}", id_, m.address, m.size, st.ToString());
  return Reply(h, msg::CallReply{ToHipError(st)});
}

Status Session::On(ops::Tag<Op::kVmmSetAccess>, const wire::FrameHeader& h, msg::VmmSetAccessRequest& m) {
  VirtualMemoryFacet* vmm = device_->vmm();
  Status st = vmm ? vmm->VmmSetAccess(m.address, m.size, m.access) : NoFacet("virtual memory");
  if (!st.ok()) spdlog::info("session {}: access change at 0x{:x} (+{}) refused: {}", id_, m.address, m.size, st.ToString());
  return Reply(h, msg::CallReply{ToHipError(st)});
}

Status Session::On(ops::Tag<Op::kTextureCreate>, const wire::FrameHeader& h, msg::TextureCreateRequest& m) {
  msg::TextureCreateReply r;
  TextureFacet* textures = device_->textures();
  Status st = textures ? textures->CreateTexture(m, &r.handle) : NoFacet("texture objects");
  if (!st.ok()) spdlog::info("session {}: texture object refused: {}", id_, st.ToString());
  r.error = ToHipError(st);
  if (!st.ok()) r.handle = 0;
  return Reply(h, r);
}

Status Session::On(ops::Tag<Op::kTextureDestroy>, const wire::FrameHeader& h, msg::TextureDestroyRequest& m) {
  TextureFacet* textures = device_->textures();
  Defer(h, textures ? textures->DestroyTexture(m.handle) : NoFacet("texture objects"));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kCopyOnDevice>, const wire::FrameHeader& h, msg::CopyOnDeviceRequest& m) {
  Status st = Replay(m);
  if (!m.want_reply) {
    Defer(h, st);
    return Status::Ok();
  }
  if (!st.ok()) return ReplySync(h, st);
  device_->StreamSynchronizeAsync(m.device, m.stream, ReplyLater(h));
  return Status::Ok();
}

// Peer copies (protocol/peer_link.h). The destination listens, then takes
// the bytes on the replay thread; the source sends them from its stream.
namespace {
constexpr int kPeerTimeoutMs = 30000;
}  // namespace

Status Session::On(ops::Tag<Op::kPeerListen>, const wire::FrameHeader& h, msg::PeerListenRequest& m) {
  msg::PeerListenReply reply;
  if (peer_host_.empty()) {
    reply.error = hip_error::kNotSupported;
    return Reply(h, reply);
  }
  if (peer_ports_.size() >= kMaxPeerPorts) peer_ports_.erase(peer_ports_.begin());  // The oldest, never used.
  std::unique_ptr<peer::PeerListener> port;
  Status st = peer::PeerListener::Open(peer_host_, config_.peer_port_first, config_.peer_port_last, &port);
  if (!st.ok()) {
    spdlog::warn("session {}: cannot open a port for a peer copy to device {}: {}", id_, m.device, st.ToString());
    reply.error = ToHipError(st);
    return Reply(h, reply);
  }
  reply.port = port->port();
  reply.token = port->token();
  peer_ports_.push_back(std::move(port));
  return Reply(h, reply);
}

Status Session::On(ops::Tag<Op::kPeerAccept>, const wire::FrameHeader& h, msg::PeerAcceptRequest& m) {
  auto it = std::find_if(peer_ports_.begin(), peer_ports_.end(),
                         [&](const auto& p) { return auth::MacEquals(p->token(), m.token); });
  if (it == peer_ports_.end()) {
    Defer(h, InvalidArgument("no peer copy port has this token"));
    return Status::Ok();
  }
  std::unique_ptr<peer::PeerListener> port = std::move(*it);
  peer_ports_.erase(it);
  if (m.dst.height != 0 && m.dst.bytes() / m.dst.height != m.dst.width) {
    Defer(h, InvalidArgument("copy size overflows"));
    return Status::Ok();
  }
  std::unique_ptr<tcp::TcpConnection> link;
  uint64_t bytes = 0;
  Status st = port->AcceptPeer(kPeerTimeoutMs, &link, &bytes);
  if (!st.ok()) {
    spdlog::warn("session {}: peer copy to device {}: {}", id_, m.device, st.ToString());
    Defer(h, st);
    return Status::Ok();
  }
  if (bytes == peer::kPeerCancel) {
    spdlog::info("session {}: the client called a peer copy off", id_);
    return Status::Ok();
  }
  if (bytes != m.dst.bytes()) {
    st = InvalidArgument("the peer sent " + std::to_string(bytes) + " bytes for a copy of " +
                         std::to_string(m.dst.bytes()));
    (void)peer::SendPeerStatus(*link, ToHipError(st));
    Defer(h, st);
    return Status::Ok();
  }
  if (ledger_ != nullptr) ledger_->Count(Ledger::kBytesToDevice, bytes);
  Status received;
  BulkIo fill = [&](const iovec* iov, int count) {
    return received = peer::RecvWithin(*link, iov, count, kPeerTimeoutMs);
  };
  st = device_->CopyToDevice(m.device, m.stream, m.dst, fill);
  if (st.ok() && !received.ok()) st = received;
  if (st.ok()) {
    // In place before the source hears so: it may have been staged behind
    // the stream's earlier work.
    auto done = std::make_shared<std::promise<Status>>();
    std::future<Status> landed = done->get_future();
    device_->StreamSynchronizeAsync(m.device, m.stream, [done](Status s) { done->set_value(std::move(s)); });
    st = landed.wait_for(std::chrono::milliseconds(kPeerTimeoutMs)) == std::future_status::ready
             ? landed.get()
             : Status(StatusCode::kTimeout, "the peer copy's stream did not finish");
  }
  if (received.ok()) (void)peer::SendPeerStatus(*link, st.ok() ? 0 : ToHipError(st));
  if (!st.ok()) {
    spdlog::warn("session {}: peer copy of {} bytes to device {}: {}", id_, bytes, m.device, st.ToString());
    Defer(h, st);
  }
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kPeerSend>, const wire::FrameHeader& h, msg::PeerSendRequest& m) {
  if (peer_host_.empty())  // No peer copies here (shm, TLS, --no-peer-copies): no connections out either.
    return ReplySync(h, Status(StatusCode::kNotSupported, "this session offers no peer copies"));
  if (m.src.height != 0 && m.src.bytes() / m.src.height != m.src.width)
    return ReplySync(h, InvalidArgument("copy size overflows"));
  if (ledger_ != nullptr) ledger_->Count(Ledger::kBytesFromDevice, m.src.bytes());
  Device::Completion reply = ReplyLater(h);
  const uint64_t id = id_;
  device_->CopyFromDeviceAsync(m.device, m.stream, m.src,
                               [id, m, reply = std::move(reply)](Status st, const Device::RegionReader& read) {
    if (st.ok() && read) {
      int32_t peer_error = 0;
      Status link = peer::PushToPeer(m.address, m.token, m.src.bytes(),
                                     [&](const peer::Sink& sink) { return read(sink); }, kPeerTimeoutMs, &peer_error);
      if (!link.ok()) {
        spdlog::warn("session {}: peer copy of {} bytes to {}: {}", id, m.src.bytes(), m.address, link.ToString());
        st = Status(link.code(), "peer copy to " + m.address + ": " + link.message(), hip_error::kUnknown);
      } else if (peer_error != 0) {
        st = Status(StatusCode::kInternal, "the peer worker failed the copy", peer_error);
      }
    } else if (st.ok()) {
      st = InvalidArgument("the source region is not device memory of this session");
    }
    reply(std::move(st));
  });
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kModuleUnload>, const wire::FrameHeader& h, msg::ModuleUnloadRequest& m) {
  std::erase_if(functions_, [&](const auto& f) { return f.second.module == m.module; });
  Status st = device_->UnloadModule(m.module);
  if (st.ok()) modules_.erase(m.module);
  Defer(h, st);
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamCreate>, const wire::FrameHeader& h, msg::StreamCreateRequest& m) {
  if (streams_.size() >= static_cast<size_t>(config_.max_streams_per_session)) {
    Defer(h, OverLimit("streams", streams_.size(), config_.max_streams_per_session, "--max-streams-per-session"));
    return Status::Ok();
  }
  if (ledger_ != nullptr) {
    if (Status st = ledger_->TakeStream(slot_, config_.max_streams); !st.ok()) {
      Defer(h, st);
      return Status::Ok();
    }
  }
  Status st = device_->StreamCreate(m.device, m.stream, m.flags, m.priority, m.cu_mask);
  if (st.ok())
    streams_[m.stream] = m.device;
  else if (ledger_ != nullptr)
    ledger_->ReturnStream(slot_);
  Defer(h, st);
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamDestroy>, const wire::FrameHeader& h, msg::StreamRequest& m) {
  Status st = device_->StreamDestroy(m.stream);
  if (st.ok() && streams_.erase(m.stream) != 0 && ledger_ != nullptr) ledger_->ReturnStream(slot_);
  Defer(h, st);
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamSynchronize>, const wire::FrameHeader& h, msg::StreamRequest& m) {
  device_->StreamSynchronizeAsync(m.device, m.stream, ReplyLater(h));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamQuery>, const wire::FrameHeader& h, msg::StreamRequest& m) {
  return Reply(h, msg::CallReply{ToHipError(device_->StreamQuery(m.device, m.stream))});
}

Status Session::On(ops::Tag<Op::kStreamWaitEvent>, const wire::FrameHeader& h, msg::StreamWaitEventRequest& m) {
  Defer(h, Replay(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamWaitValue>, const wire::FrameHeader& h, msg::StreamWaitValueRequest& m) {
  Defer(h, Replay(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamWriteValue>, const wire::FrameHeader& h, msg::StreamWriteValueRequest& m) {
  Defer(h, Replay(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kStreamHostCallback>, const wire::FrameHeader& h, msg::StreamHostCallbackRequest& m) {
  Defer(h, Replay(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kGraphCreate>, const wire::FrameHeader& h, msg::GraphCreateRequest& m) {
  Defer(h, CreateGraph(std::move(m)));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kGraphLaunch>, const wire::FrameHeader& h, msg::GraphLaunchRequest& m) {
  Defer(h, LaunchGraph(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kGraphDestroy>, const wire::FrameHeader& h, msg::GraphRequest& m) {
  Defer(h, DestroyGraph(m.graph));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kHostCallbackDone>, const wire::FrameHeader& h, msg::HostCallbackDone& m) {
  auto it = host_gates_.find(m.callback);
  if (it == host_gates_.end()) {
    Defer(h, Status(StatusCode::kInvalidHandle, "no host callback " + std::to_string(m.callback) + " waits"));
    return Status::Ok();
  }
  it->second->Open();
  host_gates_.erase(it);
  pending_replies_.fetch_sub(1);
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kEventCreate>, const wire::FrameHeader& h, msg::EventCreateRequest& m) {
  if (events_.size() >= static_cast<size_t>(config_.max_events_per_session)) {
    Defer(h, OverLimit("events", events_.size(), config_.max_events_per_session, "--max-events-per-session"));
    return Status::Ok();
  }
  Status st = device_->EventCreate(m.device, m.event, m.flags);
  if (st.ok()) events_[m.event] = m.device;
  Defer(h, st);
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kEventDestroy>, const wire::FrameHeader& h, msg::EventRequest& m) {
  Status st = device_->EventDestroy(m.event);
  if (st.ok()) events_.erase(m.event);
  Defer(h, st);
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kEventRecord>, const wire::FrameHeader& h, msg::EventRecordRequest& m) {
  Defer(h, Replay(m));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kEventSynchronize>, const wire::FrameHeader& h, msg::EventRequest& m) {
  device_->EventSynchronizeAsync(m.event, ReplyLater(h));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kEventQuery>, const wire::FrameHeader& h, msg::EventRequest& m) {
  return Reply(h, msg::CallReply{ToHipError(device_->EventQuery(m.event))});
}

Status Session::On(ops::Tag<Op::kEventElapsedTime>, const wire::FrameHeader& h, msg::EventElapsedRequest& m) {
  msg::EventElapsedReply r;
  r.error = ToHipError(device_->EventElapsedTime(m.start, m.stop, &r.milliseconds));
  return Reply(h, r);
}

// ---- Stream work: one function per graph-node op, for its frame and its
// graph nodes alike ------------------------------------------------------

Status Session::Replay(msg::LaunchRequest m) { return Launch(std::move(m)); }

Status Session::Replay(const msg::MemsetRequest& m) {
  return device_->Memset(m.device, m.stream, m.dst, m.value, m.element_size);
}

Status Session::Replay(const msg::CopyOnDeviceRequest& m) {
  return device_->CopyOnDevice(m.device, m.stream, m.dst, m.src);
}

Status Session::Replay(const msg::StreamWaitEventRequest& m) {
  return device_->StreamWaitEvent(m.device, m.stream, m.event, m.flags);
}

Status Session::Replay(const msg::StreamHostCallbackRequest& m) { return AddHostCallback(m); }

Status Session::Replay(const msg::StreamWaitValueRequest& m) {
  return device_->StreamWaitValue(m.device, m.stream, m.address, m.value, m.mask, m.flags, m.bytes);
}

Status Session::Replay(const msg::StreamWriteValueRequest& m) {
  return device_->StreamWriteValue(m.device, m.stream, m.address, m.value, m.bytes);
}

Status Session::Replay(const msg::EventRecordRequest& m) { return device_->EventRecord(m.event, m.stream); }

Status Session::AddHostCallback(const msg::StreamHostCallbackRequest& m) {
  if (host_gates_.size() >= kMaxHostCallbacks)
    return Status(StatusCode::kResourceExhausted, "too many host callbacks waiting in one session");
  auto gate = std::make_shared<HostGate>();
  if (!host_gates_.emplace(m.callback, gate).second)
    return InvalidArgument("host callback id " + std::to_string(m.callback) + " is in use");
  // Counted as a reply the client waits for: heartbeats flow meanwhile.
  if (pending_replies_.fetch_add(1) == 0) pending_since_ns_ = NowNs();
  const uint64_t id = m.callback;
  Status st = device_->StreamHostCallback(m.device, m.stream, [this, id](Status stream_status) {
    codec::BodyWriter w;
    w.Encode(msg::HostCallbackReady{id, ToHipError(stream_status)});
    MutexLock lock(send_mu_);
    last_send_ns_ = NowNs();
    Status sent = FlushOutputLocked();
    if (sent.ok()) sent = SendFrame(*conn_, static_cast<uint16_t>(Op::kHostCallbackReady), 0, w);
    if (!sent.ok()) spdlog::info("session {}: host callback {} not announced: {}", id_, id, sent.ToString());
  }, gate);
  if (!st.ok()) {
    host_gates_.erase(m.callback);
    pending_replies_.fetch_sub(1);
  }
  return st;
}

Status Session::On(ops::Tag<Op::kCopyToDevice>, const wire::FrameHeader& h, msg::CopyToDeviceRequest& m) {
  const uint64_t total = m.dst.bytes();
  if (m.dst.height != 0 && total / m.dst.height != m.dst.width) return ProtocolError("copy size overflows");
  if (ledger_ != nullptr) ledger_->Count(Ledger::kBytesToDevice, total);
  if (m.host.used) {
    // The source rows are registered memory of the shared host segment: no
    // bulk follows, and the device reads them in stream order.
    HostRows rows;
    Status st = segment_.Rows(m.host, m.dst, &rows);
    HostRegisterFacet* pinned = device_->host_register();
    if (st.ok()) st = pinned ? pinned->CopyHostToDevice(m.device, m.stream, m.dst, rows.base, rows.pitch)
                             : NoFacet("host registration");
    if (!m.want_reply) {
      Defer(h, st);
      return Status::Ok();
    }
    if (!st.ok()) return ReplySync(h, st);
    device_->StreamSynchronizeAsync(m.device, m.stream, ReplyLater(h));
    return Status::Ok();
  }
  BulkReader reader(*conn_, h.request_id, total, lz4_to_device_ ? &inflater_ : nullptr);
  Status link;  // A failure of the connection itself, as opposed to the copy.
  BulkIo fill = [&](const iovec* iov, int count) {
    return link = reader.Read(iov, count, BulkMemoryOf(iov, count));
  };
  Status st = device_->CopyToDevice(m.device, m.stream, m.dst, fill);
  HIPR_RETURN_IF_ERROR(link);
  if (st.ok() && reader.remaining() != 0) st = Status(StatusCode::kInternal, "device did not take every byte");
  HIPR_RETURN_IF_ERROR(reader.DiscardRest());
  if (!m.want_reply) {
    Defer(h, st);
    return Status::Ok();
  }
  if (!st.ok()) return ReplySync(h, st);
  device_->StreamSynchronizeAsync(m.device, m.stream, ReplyLater(h));
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kCopyFromDevice>, const wire::FrameHeader& h, msg::CopyFromDeviceRequest& m) {
  // No bulk comes from the client here, so a bad size fails this call only.
  if (m.src.height != 0 && m.src.bytes() / m.src.height != m.src.width)
    return ReplySync(h, InvalidArgument("copy size overflows"));
  if (ledger_ != nullptr) ledger_->Count(Ledger::kBytesFromDevice, m.src.bytes());
  // Bulk follows a reply only when it says success: report a pending
  // deferred error instead of copying.
  {
    MutexLock lock(deferred_mu_);
    if (!deferred_.ok()) {
      lock.Unlock();
      return ReplySync(h, Status::Ok());
    }
  }
  if (m.host.used) {
    // Into registered memory of the shared host segment: the device writes
    // the rows in stream order, and the reply (once the stream is there)
    // carries no bulk.
    HostRows rows;
    Status st = segment_.Rows(m.host, m.src, &rows);
    HostRegisterFacet* pinned = device_->host_register();
    if (st.ok()) st = pinned ? pinned->CopyDeviceToHost(m.device, m.stream, rows.base, rows.pitch, m.src)
                             : NoFacet("host registration");
    if (!st.ok()) return ReplySync(h, st);
    device_->StreamSynchronizeAsync(m.device, m.stream, ReplyLater(h));
    return Status::Ok();
  }
  // The reply and its bytes go out when the stream gets there, from
  // whichever thread that is; the replay goes on meanwhile.
  if (pending_replies_.fetch_add(1) == 0) pending_since_ns_ = NowNs();
  device_->CopyFromDeviceAsync(m.device, m.stream, m.src, [this, h](Status st, const Device::RegionReader& read) {
    SendCopyOut(h, st, read, nullptr);
  });
  return Status::Ok();
}

Status Session::On(ops::Tag<Op::kCopyChangedFromDevice>, const wire::FrameHeader& h, msg::CopyChangedRequest& m) {
  if (m.src.height != 1) return ReplySync(h, InvalidArgument("a managed read-back is one row"));
  {
    MutexLock lock(deferred_mu_);
    if (!deferred_.ok()) {
      lock.Unlock();
      return ReplySync(h, Status::Ok());
    }
  }
  if (pending_replies_.fetch_add(1) == 0) pending_since_ns_ = NowNs();
  // Taken now: the completion may run while the device goes (device_ is
  // null then), and the facet lives as long as the device.
  WriteWatchFacet* watch = device_->write_watch();
  device_->CopyFromDeviceAsync(m.device, m.stream, m.src, [this, h, m, watch](Status st,
                                                                              const Device::RegionReader& read) {
    // Asked once the stream is there: every write queued before counts.
    Runs runs;
    if (st.ok() && read) {
      if (watch == nullptr || !watch->TakeWritten(m.src.address, m.src.width, &runs).ok())
        runs.assign(1, {0, m.src.width});
      CoalesceRuns(&runs, kMaxChangedRuns);
    }
    uint64_t bytes = 0;
    for (const auto& r : runs) bytes += r.second;
    if (ledger_ != nullptr) ledger_->Count(Ledger::kBytesFromDevice, bytes);
    SendCopyOut(h, st, read, &runs);
  });
  return Status::Ok();
}

void Session::SendCopyOut(const wire::FrameHeader& h, Status st, const Device::RegionReader& read, const Runs* runs) {
  codec::BodyWriter w;
  const bool with_bytes = st.ok() && read;
  const int32_t error = with_bytes ? 0 : ToHipError(TakeDeferred(st));
  if (runs == nullptr) {
    w.Encode(msg::CallReply{error});
  } else {
    msg::CopyChangedReply reply{error, {}};
    if (with_bytes)
      for (const auto& [offset, length] : *runs) {
        reply.runs.push_back(offset);
        reply.runs.push_back(length);
      }
    w.Encode(reply);
  }
  Status link;
  {
    // The send lock is held for the whole transfer so no other frame
    // lands between its frames.
    MutexLock lock(send_mu_);
    last_send_ns_ = NowNs();
    link = FlushOutputLocked();
    if (link.ok()) link = SendFrame(*conn_, static_cast<uint16_t>(h.op | wire::kReplyBit), h.request_id, w);
    if (link.ok() && with_bytes && (runs == nullptr || !runs->empty())) {
      if (lz4_from_device_) compressor_.BeginTransfer();
      auto send = [&](const iovec* iov, int count) HIPR_REQUIRES(send_mu_) {
        last_send_ns_ = NowNs();
        if (!lz4_from_device_)
          return SendBulk(*conn_, h.request_id, iov, count, chunk_bytes_, nullptr, BulkMemoryOf(iov, count));
        Status sent = SendBulkLz4(*conn_, nullptr, 0, h.request_id, iov, count, chunk_bytes_, compressor_);
        lz4_sent_ += compressor_.TakeCounters();
        return sent;
      };
      // Called by `read` within this scope, the send lock held. With runs,
      // only their bytes pass: `read` hands the region over in order.
      uint64_t at = 0;  // Offset in the region of the next byte `read` hands over.
      size_t next = 0;  // The first run not wholly before `at`.
      std::vector<iovec> keep;
      link = read([&](const iovec* iov, int count) HIPR_REQUIRES(send_mu_) {
        if (runs == nullptr) return send(iov, count);
        keep.clear();
        for (int i = 0; i < count; ++i) {
          const uint64_t from = at;
          const uint64_t to = at + iov[i].iov_len;
          at = to;
          while (next < runs->size() && (*runs)[next].first + (*runs)[next].second <= from) ++next;
          for (size_t j = next; j < runs->size() && (*runs)[j].first < to; ++j) {
            const uint64_t a = std::max(from, (*runs)[j].first);
            const uint64_t b = std::min(to, (*runs)[j].first + (*runs)[j].second);
            if (a < b) keep.push_back(iovec{static_cast<uint8_t*>(iov[i].iov_base) + (a - from), b - a});
          }
        }
        return keep.empty() ? Status::Ok() : send(keep.data(), static_cast<int>(keep.size()));
      });
    }
  }
  pending_replies_.fetch_sub(1);
  if (!link.ok()) {
    // Mid-transfer the byte stream is broken: end the session (the replay
    // thread's next read fails).
    spdlog::warn("session {}: copy to the client (request {}) failed: {}", id_, h.request_id, link.ToString());
    conn_->Shutdown();
  }
}

Status Session::HostRange(const wire::FrameHeader& h, const msg::HostRangeRequest& m, bool add) {
  uint8_t* at = nullptr;
  HostRegisterFacet* pinned = device_->host_register();
  if (pinned == nullptr) return Reply(h, msg::CallReply{ToHipError(NoFacet("host registration"))});
  Status st;
  if (add) {
    st = segment_.CheckNew(m.offset, m.bytes, &at);
    if (st.ok()) st = pinned->RegisterHost(at, m.bytes);
    if (st.ok()) segment_.Add(m.offset, m.bytes);
  } else {
    // Copies in flight may still use the range: the client synchronizes
    // its devices before it frees pinned memory, as HIP does.
    st = segment_.Remove(m.offset, m.bytes, &at);
    if (st.ok()) st = pinned->UnregisterHost(at, m.bytes);
  }
  if (!st.ok())
    spdlog::info("session {}: {} host range [{}, +{}) failed: {}", id_, add ? "registering" : "unregistering",
                 m.offset, m.bytes, st.ToString());
  else
    spdlog::debug("session {}: host range [{}, +{}) {} ({} registered)", id_, m.offset, m.bytes,
                  add ? "registered" : "unregistered", segment_.registered_ranges());
  return Reply(h, msg::CallReply{ToHipError(st)});
}

Status Session::NoFacet(std::string_view facet) {
  if (facets_refused_.insert(std::string(facet)).second)
    spdlog::warn("session {}: the {} device has no {}; those calls answer hipErrorNotSupported", id_,
                 device_->kind(), facet);
  return Status(StatusCode::kNotSupported, fmt::format("the {} device has no {}", device_->kind(), facet));
}

BulkMemory Session::BulkMemoryOf(const iovec* iov, int count) const {
  return bulk_ != nullptr && bulk_->BulkMemoryStays(iov, count) ? BulkMemory::kStays : BulkMemory::kTransient;
}

}  // namespace hipr::worker
