// hipr-smi [--json] [--server LIST]
//
// What rocm-smi shows for local GPUs, for the remote ones: for each worker
// HIPR_SERVER names ("host:port,host:port,...", or --server), its version,
// device kind, HIP runtime and transport; per device its model, target,
// memory in use, and the temperature, power and utilisation the worker can
// read (librocm-smi on a GPU node; the sim has no sensors); and the live
// sessions of this client's tenant (HIPR_TOKEN; every session where the
// worker authenticates no one) with the device memory each holds, and how
// much of it a lease holds for allocations not made yet. hipr-smi
// is itself a session while it asks, and says which one it is.
//
// The connection settings are the stub's (HIPR_TOKEN, HIPR_TLS_*,
// HIPR_CONNECT_TIMEOUT_MS, ...), except that a worker refusing new sessions
// for now is reported, not waited for. Exit status: 0 when every worker
// answered, 1 when one did not (the others are still shown), 2 on bad usage.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "client_stub/base/config.h"
#include "client_stub/memory/address_window.h"
#include "client_stub/session/remote.h"
#include "client_stub/session/session.h"
#include "protocol/messages.h"

namespace {

using hipr::Status;
namespace client = hipr::client;
namespace msg = hipr::msg;

// What one worker said, or why it said nothing.
struct WorkerView {
  std::string server;
  std::string error;  // Empty when it answered.
  std::string status_error;  // It answered the hello but not kWorkerStatus.
  msg::HelloReply hello;
  std::string transport;
  msg::WorkerStatusReply status;
};

WorkerView Ask(client::Config config, const std::string& server) {
  WorkerView v;
  v.server = server;
  config.server = server;
  config.connect_retry_s = 0;
  config.window_bytes = uint64_t{1} << 30;  // Nothing is allocated; only the hello's offer.
  client::AddressRange window;
  std::unique_ptr<client::Session> s = client::Session::Open(config, &window);
  if (s->dead()) {
    v.error = s->DeadStatus().message();
    return v;
  }
  v.hello = s->hello();
  v.transport = s->transport();
  if (!s->worker_status()) {
    v.status_error = "the worker does not answer status queries (it predates hipr-smi)";
    return v;
  }
  Status st = s->Call<hipr::wire::Op::kWorkerStatus>(msg::WorkerStatusRequest{}, &v.status);
  if (!st.ok()) v.status_error = st.message();
  else if (v.status.error != 0) v.status_error = "the worker answered hipError " + std::to_string(v.status.error);
  return v;
}

// HIP_VERSION's encoding: major * 10^7 + minor * 10^5 + patch.
std::string RuntimeText(int32_t v) {
  if (v <= 0) return "unknown";
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

std::string Bytes(uint64_t b) {
  char out[32];
  if (b >= (uint64_t{1} << 30)) std::snprintf(out, sizeof out, "%.1f GiB", static_cast<double>(b) / (1 << 30));
  else std::snprintf(out, sizeof out, "%.1f MiB", static_cast<double>(b) / (1 << 20));
  return out;
}

std::string Json(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c < 0x20) {
      char e[8];
      std::snprintf(e, sizeof e, "\\u%04x", c);
      out += e;
    } else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string Number(double d) {
  if (!std::isfinite(d)) return "null";
  std::ostringstream o;
  o << d;
  return o.str();
}

const msg::DeviceStatus* StatusOf(const WorkerView& v, size_t device) {
  for (const msg::DeviceStatus& d : v.status.devices)
    if (d.device == static_cast<int32_t>(device)) return &d;
  return nullptr;
}

void PrintJson(const std::vector<WorkerView>& views) {
  std::string out = "{\"workers\": [";
  for (size_t w = 0; w < views.size(); ++w) {
    const WorkerView& v = views[w];
    out += w ? ",\n  {" : "\n  {";
    out += "\"server\": " + Json(v.server);
    if (!v.error.empty()) {
      out += ", \"error\": " + Json(v.error) + "}";
      continue;
    }
    const msg::HelloReply& h = v.hello;
    out += ", \"worker_version\": " + Json(h.worker_version) + ", \"device_kind\": " + Json(h.device_kind) +
           ", \"runtime_version\": " + std::to_string(h.runtime_version) + ", \"runtime\": " +
           Json(RuntimeText(h.runtime_version)) + ", \"transport\": " + Json(v.transport) +
           ", \"session_id\": " + std::to_string(h.session_id);
    if (!v.status_error.empty()) out += ", \"status_error\": " + Json(v.status_error);
    else
      out += ", \"tenant\": " + Json(v.status.tenant) + ", \"health\": " + Json(v.status.health) +
             ", \"worker_memory_used\": " + std::to_string(v.status.worker_memory_used) +
             ", \"worker_memory_budget\": " + std::to_string(v.status.worker_memory_budget);
    out += ", \"devices\": [";
    for (size_t i = 0; i < h.devices.size(); ++i) {
      const msg::DeviceInfo& info = h.devices[i];
      out += i ? ", {" : "{";
      out += "\"index\": " + std::to_string(i) + ", \"name\": " + Json(info.name) +
             ", \"target\": " + Json(info.gcn_arch_name) + ", \"memory_total\": " +
             std::to_string(info.total_global_mem);
      if (const msg::DeviceStatus* d = StatusOf(v, i); d != nullptr && d->error == 0) {
        out += ", \"memory_free\": " + std::to_string(d->memory_free) +
               ", \"memory_used\": " + std::to_string(d->memory_total - d->memory_free);
        auto reading = [&](uint32_t bit, double value) {
          return (d->known & bit) != 0 ? Number(value) : std::string("null");
        };
        out += ", \"temperature_c\": " + reading(msg::kStatusTemperature, d->edge_celsius) +
               ", \"power_w\": " + reading(msg::kStatusPower, d->power_watts) +
               ", \"busy_percent\": " + reading(msg::kStatusBusy, d->busy_percent) + ", \"vram_used\": " +
               ((d->known & msg::kStatusVramUsed) != 0 ? std::to_string(d->vram_used) : std::string("null"));
      }
      out += "}";
    }
    out += "], \"sessions\": [";
    for (size_t i = 0; i < v.status.sessions.size(); ++i) {
      const msg::SessionStatus& s = v.status.sessions[i];
      out += (i ? ", " : "") + std::string("{\"session_id\": ") + std::to_string(s.session_id) +
             ", \"memory\": " + std::to_string(s.memory) + ", \"leased\": " + std::to_string(s.leased) +
             ", \"this\": " + (s.session_id == h.session_id ? "true" : "false") + "}";
    }
    out += "]}";
  }
  out += "\n]}\n";
  std::fputs(out.c_str(), stdout);
}

void PrintTable(const std::vector<WorkerView>& views) {
  for (const WorkerView& v : views) {
    std::printf("== %s\n", v.server.c_str());
    if (!v.error.empty()) {
      std::printf("   unreachable: %s\n\n", v.error.c_str());
      continue;
    }
    const msg::HelloReply& h = v.hello;
    std::printf("   hipr %s, %s device, HIP runtime %s, transport %s, this is session %llu\n",
                h.worker_version.c_str(), h.device_kind.c_str(), RuntimeText(h.runtime_version).c_str(),
                v.transport.c_str(), static_cast<unsigned long long>(h.session_id));
    if (!v.status_error.empty()) std::printf("   no status: %s\n", v.status_error.c_str());
    std::printf("   %-3s %-28s %-26s %7s %8s %6s %21s\n", "GPU", "Model", "Target", "Temp", "Power", "Busy",
                "Memory used / total");
    for (size_t i = 0; i < h.devices.size(); ++i) {
      const msg::DeviceInfo& info = h.devices[i];
      const msg::DeviceStatus* d = StatusOf(v, i);
      auto cell = [&](uint32_t bit, double value, const char* unit) {
        if (d == nullptr || (d->known & bit) == 0) return std::string("n/a");
        char out[32];
        std::snprintf(out, sizeof out, "%.1f%s", value, unit);
        return std::string(out);
      };
      std::string memory = "n/a";
      if (d != nullptr && d->error == 0)
        memory = Bytes(d->memory_total - d->memory_free) + " / " + Bytes(d->memory_total);
      std::printf("   %-3zu %-28.28s %-26.26s %7s %8s %6s %21s\n", i, info.name.c_str(), info.gcn_arch_name.c_str(),
                  cell(msg::kStatusTemperature, d ? d->edge_celsius : 0, "C").c_str(),
                  cell(msg::kStatusPower, d ? d->power_watts : 0, "W").c_str(),
                  cell(msg::kStatusBusy, d ? d->busy_percent : 0, "%").c_str(), memory.c_str());
    }
    if (v.status_error.empty()) {
      if (!v.status.health.empty()) std::printf("   (no sensor readings: %s)\n", v.status.health.c_str());
      std::printf("   device memory of all sessions: %s", Bytes(v.status.worker_memory_used).c_str());
      if (v.status.worker_memory_budget != 0)
        std::printf(" of a %s budget", Bytes(v.status.worker_memory_budget).c_str());
      std::printf("\n   sessions of %s:\n",
                  v.status.tenant.empty() ? "every client (no authentication)"
                                          : ("tenant '" + v.status.tenant + "'").c_str());
      for (const msg::SessionStatus& s : v.status.sessions) {
        const std::string leased = s.leased != 0 ? "  (" + Bytes(s.leased) + " of it leased, not allocated yet)" : "";
        std::printf("     session %-10llu %12s%s%s\n", static_cast<unsigned long long>(s.session_id),
                    Bytes(s.memory).c_str(), leased.c_str(), s.session_id == h.session_id ? "  (this hipr-smi)" : "");
      }
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hipr-smi: the remote GPUs of the workers HIPR_SERVER names, as rocm-smi shows local ones"};
  bool json = false;
  std::string servers;
  app.add_flag("--json", json, "Print JSON for scripts");
  app.add_option("--server", servers, "Workers to ask, comma-separated (default: HIPR_SERVER)");
  CLI11_PARSE(app, argc, argv);
  client::Config config = client::ConfigFromEnvironment();
  if (servers.empty()) servers = config.server;
  // The list a program would use (client_stub/session/remote.h): dns:NAME:PORT
  // entries stand for every address NAME resolves to.
  std::vector<client::Remote::Endpoint> list;
  if (Status st = client::Remote::ListWorkers(servers, &list); !st.ok()) {
    std::fprintf(stderr, "hipr-smi: %s\n", st.message().c_str());
    return 2;
  }
  if (list.empty() || (list.size() == 1 && list[0].server.empty())) {
    std::fprintf(stderr, "hipr-smi: no worker named: set HIPR_SERVER=host:port[,host:port...] or --server\n");
    return 2;
  }
  std::vector<WorkerView> views;
  bool all = true;
  for (const client::Remote::Endpoint& e : list) {
    client::Config one = config;
    if (one.tls_server_name.empty()) one.tls_server_name = e.tls_name;
    views.push_back(Ask(one, e.server));
    all = all && views.back().error.empty() && views.back().status_error.empty();
  }
  if (json) PrintJson(views);
  else PrintTable(views);
  return all ? 0 : 1;
}
