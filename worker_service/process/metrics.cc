#include "worker_service/process/metrics.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "protocol/tcp/tcp_connection.h"
#include "protocol/wire.h"
#include "worker_service/process/code_cache.h"

namespace hipr::worker {
namespace {

class Page {
 public:
  // One metric family: its HELP and TYPE lines.
  void Family(const char* name, const char* type, const char* help) {
    text_ += "# HELP ";
    text_ += name;
    text_ += ' ';
    text_ += help;
    text_ += "\n# TYPE ";
    text_ += name;
    text_ += ' ';
    text_ += type;
    text_ += '\n';
  }
  void Sample(const std::string& name, const std::string& labels, double value) {
    char number[64];
    std::snprintf(number, sizeof number, "%.17g", value);
    text_ += name;
    if (!labels.empty()) text_ += "{" + labels + "}";
    text_ += ' ';
    text_ += number;
    text_ += '\n';
  }
  void Sample(const std::string& name, const std::string& labels, uint64_t value) {
    text_ += name;
    if (!labels.empty()) text_ += "{" + labels + "}";
    text_ += ' ' + std::to_string(value) + '\n';
  }
  std::string& text() { return text_; }

 private:
  std::string text_;
};

// A label value: tenant names are [A-Za-z0-9._-] (auth.h), op names are
// identifiers; escaped anyway.
std::string Quoted(const std::string& v) {
  std::string out = "\"";
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

struct Counter {
  const char* name;
  const char* help;
  Ledger::Event event;
};

}  // namespace

std::string RenderMetrics(const Ledger& ledger, const WorkerConfig& config, bool ready) {
  Page p;
  p.Family("hipr_worker_info", "gauge", "The worker's version and device kind.");
  p.Sample("hipr_worker_info", "version=" + Quoted(HIPR_VERSION) + ",device=" + Quoted(config.device), uint64_t{1});
  p.Family("hipr_ready", "gauge", "1 when a new client would be served (as /readyz).");
  p.Sample("hipr_ready", "", uint64_t{ready ? 1u : 0u});

  const std::vector<Ledger::SessionUsage> sessions = ledger.Sessions();
  uint64_t handshaking = 0, admitted = 0, relaying = 0;
  for (const auto& s : sessions)
    (s.state == Ledger::kHandshake ? handshaking : s.state == Ledger::kRelay ? relaying : admitted) += 1;
  p.Family("hipr_sessions", "gauge",
           "Live session processes, by phase: in the hello (handshake), admitted, or relaying a session resumed "
           "over TLS (relay).");
  p.Sample("hipr_sessions", "phase=\"handshake\"", handshaking);
  p.Sample("hipr_sessions", "phase=\"admitted\"", admitted);
  p.Sample("hipr_sessions", "phase=\"relay\"", relaying);
  p.Family("hipr_sessions_limit", "gauge", "--max-sessions.");
  p.Sample("hipr_sessions_limit", "", static_cast<uint64_t>(config.max_sessions));

  static const Counter kCounters[] = {
      {"hipr_sessions_started_total", "Connections handed to a session process.", Ledger::kSessionsStarted},
      {"hipr_handshakes_evicted_total", "Sessions ended in their hello to make room for newer connections.",
       Ledger::kEvictedHandshakes},
      {"hipr_auth_failures_total", "Hellos refused for a wrong, unknown or missing credential.",
       Ledger::kAuthFailures},
      {"hipr_sessions_idle_ended_total", "Sessions ended by --idle-timeout-s.", Ledger::kIdleEnded},
      {"hipr_sessions_resumed_total", "Sessions whose client resumed them over a new connection after a drop.",
       Ledger::kResumes},
      {"hipr_resumes_refused_total",
       "Resuming hellos refused: no such session (ended, or past --resume-grace-s), another tenant, a spent secret.",
       Ledger::kResumesRefused},
      {"hipr_deferred_errors_total", "Errors of fire-and-forget calls, reported at the client's next sync.",
       Ledger::kDeferredErrors},
      {"hipr_code_cache_hits_total", "Module loads served without the client's bytes (session or cache).",
       Ledger::kCodeCacheHits},
      {"hipr_code_cache_misses_total", "Module loads that needed the client's bytes.", Ledger::kCodeCacheMisses},
      {"hipr_code_cache_write_failures_total",
       "Code objects the --code-cache directory could not store (full disk, unusable directory; the log says which).",
       Ledger::kCodeCacheWriteFailures},
  };
  for (const Counter& c : kCounters) {
    p.Family(c.name, "counter", c.help);
    p.Sample(c.name, "", ledger.Counted(c.event));
  }
  p.Family("hipr_sessions_ended_total", "counter", "Sessions that ended, by how: clean (goodbye, a closed "
                                                   "connection, a reported error) or crashed (the process died).");
  p.Sample("hipr_sessions_ended_total", "how=\"clean\"", ledger.Counted(Ledger::kSessionsEndedClean));
  p.Sample("hipr_sessions_ended_total", "how=\"crashed\"", ledger.Counted(Ledger::kSessionsCrashed));
  p.Family("hipr_sessions_refused_total", "counter", "Connections refused, by reason.");
  p.Sample("hipr_sessions_refused_total", "reason=\"max_sessions\"", ledger.Counted(Ledger::kRefusedAtLimit));
  p.Sample("hipr_sessions_refused_total", "reason=\"per_peer\"", ledger.Counted(Ledger::kRefusedPerPeer));
  p.Sample("hipr_sessions_refused_total", "reason=\"handshakes\"", ledger.Counted(Ledger::kRefusedHandshakes));
  p.Sample("hipr_sessions_refused_total", "reason=\"tenant_limit\"", ledger.Counted(Ledger::kRefusedTenantLimit));
  p.Sample("hipr_sessions_refused_total", "reason=\"auth\"", ledger.Counted(Ledger::kAuthFailures));
  p.Sample("hipr_sessions_refused_total", "reason=\"hello\"", ledger.Counted(Ledger::kRefusedHello));
  p.Sample("hipr_sessions_refused_total", "reason=\"tls\"", ledger.Counted(Ledger::kTlsFailures));
  p.Family("hipr_ipc_open_refused_total", "counter",
           "IPC handles a session could not open, by why: another tenant's, not allowed (tenant), or naming no "
           "live export of this worker (invalid: another worker's, forged, or its session ended).");
  p.Sample("hipr_ipc_open_refused_total", "reason=\"tenant\"", ledger.Counted(Ledger::kIpcRefusedTenant));
  p.Sample("hipr_ipc_open_refused_total", "reason=\"invalid\"", ledger.Counted(Ledger::kIpcRefusedInvalid));
  p.Family("hipr_bulk_bytes_total", "counter", "Bytes copied to and from device memory.");
  p.Sample("hipr_bulk_bytes_total", "direction=\"to_device\"", ledger.Counted(Ledger::kBytesToDevice));
  p.Sample("hipr_bulk_bytes_total", "direction=\"from_device\"", ledger.Counted(Ledger::kBytesFromDevice));

  p.Family("hipr_calls_total", "counter", "Requests handled, by op.");
  for (int op = 0; op < Ledger::kOpSlots; ++op) {
    const uint64_t n = ledger.Calls(static_cast<uint16_t>(op));
    const char* name = wire::OpName(static_cast<uint16_t>(op));
    if (n != 0 && name != nullptr) p.Sample("hipr_calls_total", "op=" + Quoted(name), n);
  }
  const Ledger::Durations d = ledger.CallDurations();
  p.Family("hipr_call_duration_seconds", "histogram",
           "Time a request took on its session's replay thread (the worker's share of a round trip).");
  uint64_t cumulative = 0;
  for (int b = 0; b < Ledger::kDurationBuckets; ++b) {
    cumulative += d.buckets[b];
    char le[32];
    std::snprintf(le, sizeof le, "%g", Ledger::kDurationBounds[b]);
    p.Sample("hipr_call_duration_seconds_bucket", std::string("le=\"") + le + "\"", cumulative);
  }
  cumulative += d.buckets[Ledger::kDurationBuckets];
  p.Sample("hipr_call_duration_seconds_bucket", "le=\"+Inf\"", cumulative);
  p.Sample("hipr_call_duration_seconds_sum", "", static_cast<double>(d.sum_ns) / 1e9);
  p.Sample("hipr_call_duration_seconds_count", "", d.count);

  p.Family("hipr_device_memory_bytes", "gauge", "Device memory all sessions hold.");
  p.Sample("hipr_device_memory_bytes", "", ledger.memory_used());
  if (ledger.memory_budget() != 0) {
    p.Family("hipr_device_memory_budget_bytes", "gauge", "--memory-budget.");
    p.Sample("hipr_device_memory_budget_bytes", "", ledger.memory_budget());
  }
  p.Family("hipr_session_device_memory_bytes", "gauge", "Device memory each live session holds.");
  for (const auto& s : sessions)
    p.Sample("hipr_session_device_memory_bytes", "session=\"" + std::to_string(s.session_id) + "\"", s.memory);
  const std::vector<Ledger::TenantUsage> tenants = ledger.Tenants();
  p.Family("hipr_tenant_device_memory_bytes", "gauge", "Device memory each tenant's sessions hold.");
  for (const auto& t : tenants) p.Sample("hipr_tenant_device_memory_bytes", "tenant=" + Quoted(t.name), t.memory);
  p.Family("hipr_tenant_sessions", "gauge", "Live sessions of each tenant.");
  for (const auto& t : tenants)
    p.Sample("hipr_tenant_sessions", "tenant=" + Quoted(t.name), static_cast<uint64_t>(t.sessions));
  if (!config.code_cache_dir.empty()) {
    p.Family("hipr_code_cache_bytes", "gauge", "Bytes of code objects in the --code-cache directory.");
    p.Sample("hipr_code_cache_bytes", "", CodeCacheBytes(config.code_cache_dir));
    p.Family("hipr_code_cache_limit_bytes", "gauge", "--code-cache-bytes.");
    p.Sample("hipr_code_cache_limit_bytes", "", config.code_cache_bytes);
    p.Family("hipr_code_cache_tenant_bytes", "gauge", "Bytes of code objects in each tenant's part of the cache.");
    for (const CodeCachePart& part : CodeCacheParts(config.code_cache_dir))
      p.Sample("hipr_code_cache_tenant_bytes", "tenant=" + Quoted(part.tenant), part.bytes);
  }
  p.Family("hipr_streams", "gauge", "Streams all sessions hold (each sim stream is a thread).");
  p.Sample("hipr_streams", "", static_cast<uint64_t>(std::max<int64_t>(0, ledger.streams())));
  return std::move(p.text());
}

MetricsServer::MetricsServer(asio::io_context& io, const WorkerConfig& config, const Ledger& ledger,
                             ReadinessProbe ready)
    : config_(config),
      ledger_(ledger),
      ready_(std::move(ready)),
      acceptor_(io),
      accept_pause_(io),
      backoff_("--metrics-listen " + config.metrics_listen) {}

Status MetricsServer::Listen() {
  tcp::Endpoint ep;
  HIPR_RETURN_IF_ERROR(tcp::ParseEndpoint(config_.metrics_listen, &ep));
  asio::error_code ec;
  const asio::ip::address address =
      asio::ip::make_address(ep.host == "localhost" ? "127.0.0.1" : ep.host, ec);
  if (ec) return InvalidArgument("--metrics-listen: '" + ep.host + "' is not an IP address");
  const asio::ip::tcp::endpoint endpoint(address, ep.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(64, ec);
  if (ec)
    return Status(StatusCode::kFailedPrecondition,
                  "cannot listen on --metrics-listen " + config_.metrics_listen + ": " + ec.message());
  const uint16_t port = acceptor_.local_endpoint().port();
  spdlog::info("metrics and health on http://{}:{}/metrics (/healthz, /readyz)", ep.host, port);
  if (!config_.metrics_port_file.empty()) {
    const std::string tmp = config_.metrics_port_file + ".tmp";
    std::ofstream(tmp) << port << "\n";
    if (std::rename(tmp.c_str(), config_.metrics_port_file.c_str()) != 0)
      return Status(StatusCode::kFailedPrecondition, "cannot write --metrics-port-file " + config_.metrics_port_file);
  }
  Accept();
  return Status::Ok();
}

std::string MetricsServer::GpuHealthPage() {
  if (!gpu_health_tried_) {
    gpu_health_tried_ = true;
    std::string why = "--device " + config_.device + " uses no GPU";
    if (config_.device == "hip") gpu_health_ = GpuHealth::Open(&why);
    if (gpu_health_ == nullptr) spdlog::warn("no GPU health in /metrics: {}", why);
    else spdlog::info("GPU health in /metrics from librocm-smi");
  }
  if (gpu_health_ == nullptr) return RenderGpuHealth({}, false);
  return RenderGpuHealth(gpu_health_->Read(), true);
}

void MetricsServer::Close() {
  asio::error_code ignored;
  acceptor_.close(ignored);
  accept_pause_.cancel();
}

namespace {

// One scrape or probe: reads the request head (at most 8 KiB, 5 s), answers,
// closes.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(asio::ip::tcp::socket socket, std::function<void(const std::string&, std::string*, std::string*)> answer,
           std::shared_ptr<int> live)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), answer_(std::move(answer)), live_(std::move(live)) {
    ++*live_;
  }
  ~Exchange() { --*live_; }

  void Start() {
    auto self = shared_from_this();
    timer_.expires_after(std::chrono::seconds(5));
    timer_.async_wait([self](const asio::error_code& ec) {
      if (!ec) {
        asio::error_code ignored;
        self->socket_.close(ignored);
      }
    });
    asio::async_read_until(socket_, asio::dynamic_buffer(head_, 8192), "\r\n\r\n",
                           [self](const asio::error_code& ec, size_t) { self->Respond(ec); });
  }

 private:
  void Respond(const asio::error_code& ec) {
    if (ec) {  // Closed or cut off: the descriptor goes now, not at the timeout.
      asio::error_code ignored;
      socket_.close(ignored);
      timer_.cancel();
      return;
    }
    const std::string line = head_.substr(0, head_.find("\r\n"));
    std::string status, body;
    answer_(line, &status, &body);
    reply_ = "HTTP/1.1 " + status +
             "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nConnection: close\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body;
    auto self = shared_from_this();
    asio::async_write(socket_, asio::buffer(reply_), [self](const asio::error_code&, size_t) {
      asio::error_code ignored;
      self->socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
      self->socket_.close(ignored);
      self->timer_.cancel();
    });
  }

  asio::ip::tcp::socket socket_;
  asio::steady_timer timer_;
  std::function<void(const std::string&, std::string*, std::string*)> answer_;
  std::string head_;
  std::string reply_;
  std::shared_ptr<int> live_;  // The server's count of exchanges.
};

}  // namespace

void MetricsServer::AcceptAfter(std::chrono::milliseconds pause) {
  accept_pause_.expires_after(pause);
  accept_pause_.async_wait([this](const asio::error_code& ec) {
    if (!ec && acceptor_.is_open()) Accept();
  });
}

void MetricsServer::Accept() {
  if (*exchanges_ >= kMaxExchanges) return AcceptAfter(std::chrono::milliseconds(50));
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) return AcceptAfter(backoff_.Failed(ec));
    backoff_.Succeeded();
    {
      auto answer = [this](const std::string& line, std::string* status, std::string* body) {
        const bool get = line.rfind("GET ", 0) == 0;
        const std::string path = get ? line.substr(4, line.find(' ', 4) - 4) : "";
        if (path == "/metrics") {
          *status = "200 OK";
          *body = RenderMetrics(ledger_, config_, ready_().empty()) + GpuHealthPage();
        } else if (path == "/healthz") {
          *status = "200 OK";
          *body = "ok\n";
        } else if (path == "/readyz") {
          const std::string why = ready_();
          *status = why.empty() ? "200 OK" : "503 Service Unavailable";
          *body = why.empty() ? "ready\n" : "not ready: " + why + "\n";
        } else {
          *status = get ? "404 Not Found" : "405 Method Not Allowed";
          *body = "GET /metrics, /healthz or /readyz\n";
        }
      };
      std::make_shared<Exchange>(std::move(socket), std::move(answer), exchanges_)->Start();
    }
    Accept();
  });
}

}  // namespace hipr::worker
