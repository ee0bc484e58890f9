// hipr-worker: serves HIP sessions to remote clients.
//
// Start-up order matters: flags, then a device probe (for `hip`, in a
// throwaway child), then the zygote is forked while this process is still
// single-threaded and has never loaded a GPU runtime, then the acceptor.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/ranges.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "protocol/shm/shm_connection.h"
#include "protocol/tls/tls_connection.h"
#include "worker_service/process/acceptor.h"
#include "worker_service/process/code_cache.h"
#include "worker_service/process/config.h"
#include "worker_service/device/device_factory.h"
#include "worker_service/process/gpudirect_setup.h"
#include "worker_service/process/ledger.h"
#include "worker_service/process/rdma_setup.h"
#include "worker_service/sim/models.h"
#include "worker_service/process/tenants.h"
#include "worker_service/process/zygote.h"

namespace {

using hipr::worker::WorkerConfig;

// What the command line gives beyond WorkerConfig: sizes as typed (checked
// by ApplySizes) and --probe-only.
struct Flags {
  std::string sim_memory, shm_ring_bytes, shm_host_bytes, code_cache_bytes, memory_budget, tenant_memory;
  std::string peer_ports;
  bool probe_only = false;
};

void AddFlags(CLI::App& app, WorkerConfig* config, Flags* flags) {
  app.add_option("--listen", config->listen, "address:port to listen on (port 0 picks one)")->capture_default_str();
  app.add_option("--listen-unix", config->listen_unix,
                 "also accept clients on this node at this unix socket path; they use the shared-memory "
                 "transport (client: HIPR_SERVER=unix:PATH)");
  app.add_option("--shm-ring-bytes", flags->shm_ring_bytes,
                 "bytes of each direction's shared-memory ring, a power of two from 64K to 256M (default 1M)");
  app.add_option("--shm-host-bytes", flags->shm_host_bytes,
                 "host segment each shm session offers its client for pinned memory, e.g. 4G (0: none; "
                 "default 4G, only pages in use take memory)");
  app.add_option("--device", config->device, "device to serve: 'hip' (real AMD GPUs) or 'sim' (no GPU needed)")
      ->check(CLI::IsMember({"sim", "hip"}))
      ->capture_default_str();
  app.add_option("--port-file", config->port_file, "write the bound port to this file once listening");
  app.add_option("--max-sessions", config->max_sessions, "refuse connections beyond this many live sessions")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--max-sessions-per-peer", config->max_sessions_per_peer,
                 "refuse connections beyond this many live sessions from one IP address (tcp) or uid (unix socket)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--heartbeat-ms", config->heartbeat_ms, "heartbeat period while a call is running")
      ->check(CLI::Range(50, 60000))
      ->capture_default_str();
  app.add_option("--chunk-bytes", config->chunk_bytes, "largest bulk chunk frame")
      ->check(CLI::Range(4096u, 16u << 20))
      ->capture_default_str();
  app.add_option("--spin-us", config->spin_us,
                 "a session polls this long for the client's next frame before it sleeps (0: sleep at once)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--compress", config->compress,
                 "lz4 for bulk copies where the client agrees: on, off, or auto (on unless the client is on this "
                 "host)")
      ->check(CLI::IsMember({"off", "on", "auto"}))
      ->capture_default_str();
  app.add_option("--log-level", config->log_level, "trace|debug|info|warn|error")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  auto models = hipr::worker::sim::ModelNames();
  app.add_option("--sim-model", config->sim_model, "GPU model the sim device reports")
      ->check(CLI::IsMember(models))
      ->capture_default_str();
  app.add_option("--sim-memory", flags->sim_memory, "sim device memory per device, e.g. 4G (default: RAM/4, at most 16G)");
  app.add_option("--sim-devices", config->sim_devices, "number of sim devices")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--sim-kernels", config->sim_kernels,
                 "directory of kernel twins the sim device runs kernels with (repeatable)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--sim-fail-kernel", config->sim_fail_kernels,
                 "testing: a kernel whose mangled name contains this fails when it runs, as a faulting kernel "
                 "does on a GPU (repeatable)");
  app.add_flag("--sim-force-staging", config->sim_force_staging,
               "copies go through the bounded staging pipeline the hip device uses (4 x 4 MiB), not straight "
               "into device memory: that path runs and is measured without a GPU");
  app.add_option("--code-cache", config->code_cache_dir,
                 "directory of the code-object cache shared by sessions; '' keeps code objects in memory only")
      ->capture_default_str();
  app.add_option("--code-cache-bytes", flags->code_cache_bytes,
                 "bound on the code-object cache directory, e.g. 4G (default: a tenth of its filesystem, "
                 "256M..8G)");
  app.add_option("--hip-module", config->hip_module, "path of libhipr_device_hip.so (default: next to the binary)");
  app.add_option("--hip-runtime", config->hip_runtime,
                 "testing: the libamdhip64.so.5 the hip device binds to instead of the system's (for example "
                 "hipr's own client stub, forwarding to a sim worker named by HIPR_SERVER)")
      ->check(CLI::ExistingFile);
  app.add_option("--hello-timeout-ms", config->hello_timeout_ms, "end a connection that sends no hello in time")
      ->check(CLI::Range(100, 600000))
      ->capture_default_str();
  app.add_option("--auth-file", config->auth_file,
                 "tenants and their secrets, one per line: NAME SECRET [sessions=N] [memory=SIZE]; clients "
                 "authenticate with HIPR_TOKEN=NAME:SECRET (read again at every hello)");
  app.add_flag("--insecure", config->insecure,
               "serve clients beyond loopback without --auth-file: anyone who reaches the port can run code on "
               "the GPU");
  app.add_flag("--no-peer-copies", config->no_peer_copies,
               "open no ports for copies straight from another worker of the same client (HIPR_SERVER a,b): "
               "such copies then pass through the client");
  app.add_option("--peer-ports", flags->peer_ports,
                 "FIRST-LAST: the ports peer copies listen on, for a firewall or NetworkPolicy to admit between "
                 "workers (default: any)");
  app.add_option("--tls-cert", config->tls_cert,
                 "PEM certificate (chain) of this worker: tcp clients then speak TLS 1.3 and check it against "
                 "HIPR_TLS_CA");
  app.add_option("--tls-key", config->tls_key, "PEM private key of --tls-cert");
  app.add_option("--tls-client-ca", config->tls_client_ca,
                 "PEM CA: tcp clients must present a certificate it signed (HIPR_TLS_CERT/HIPR_TLS_KEY); its "
                 "common name is the tenant where there is no --auth-file");
  app.add_option("--tls-ciphersuites", config->tls_ciphersuites,
                 "TLS 1.3 ciphersuites accepted, in the worker's order of preference (default " +
                     std::string(hipr::tls::kDefaultCiphersuites) + ")");
  app.add_option("--memory-budget", flags->memory_budget,
                 "device memory all sessions together may hold, e.g. 48G (default: no limit beyond each device's)");
  app.add_option("--tenant-memory", flags->tenant_memory,
                 "device memory each tenant's sessions together may hold, unless its memory= says otherwise");
  app.add_option("--max-sessions-per-tenant", config->max_sessions_per_tenant,
                 "live sessions of one tenant, unless its sessions= says otherwise (0: --max-sessions alone)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--max-handshakes-per-peer", config->max_handshakes_per_peer,
                 "connections from one peer that have not finished their hello (all peers together: half of "
                 "--max-sessions)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--idle-timeout-s", config->idle_timeout_s,
                 "end a session whose client has sent nothing for this long, freeing its memory (0: never)")
      ->check(CLI::Range(0, 100000000))
      ->capture_default_str();
  app.add_option("--resume-grace-s", config->resume_grace_s,
                 "keep a session whose tcp link dropped this long for its client to resume it (0: a dropped link "
                 "ends the session)")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  app.add_option("--max-streams-per-session", config->max_streams_per_session, "streams one session may hold")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--max-events-per-session", config->max_events_per_session, "events one session may hold")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  app.add_option("--max-modules-per-session", config->max_modules_per_session, "modules one session may hold")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--probe-interval-s", config->probe_interval_s,
                 "--device hip: run the start-up device probe again this often; /readyz fails while it does "
                 "(0: only at start)")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  app.add_option("--max-graphs-per-session", config->max_graphs_per_session,
                 "executable graphs one session may hold (and 64 nodes per graph allowed, over all of them)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  app.add_option("--max-streams", config->max_streams,
                 "streams all sessions together may hold (each sim stream is a thread)")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  app.add_option("--metrics-listen", config->metrics_listen,
                 "serve Prometheus metrics (/metrics) and health (/healthz, /readyz) over HTTP at address:port");
  app.add_option("--metrics-port-file", config->metrics_port_file,
                 "write the metrics listener's port to this file once listening");
  app.add_option("--rdma-device", config->rdma_device,
                 "RDMA device (as hipr-rdma-devices lists it) that plain-tcp sessions move to when their client "
                 "offers rdma; default: the first one, if any; 'off': clients stay on tcp");
  app.add_flag("--probe-only", flags->probe_only, "check that the device can be served, print what was found, and exit");
}

// Parses each size flag given into `config`; false (having said why) on the
// first that is not a size.
bool ApplySizes(const Flags& flags, WorkerConfig* config) {
  struct Size {
    const char* flag;
    const std::string& text;
    uint64_t* out;
    const char* example;
  };
  const Size sizes[] = {
      {"--sim-memory", flags.sim_memory, &config->sim_memory_bytes, "512M or 4G"},
      {"--shm-ring-bytes", flags.shm_ring_bytes, &config->shm_ring_bytes, "4M"},
      {"--shm-host-bytes", flags.shm_host_bytes, &config->shm_host_bytes, "4G"},
      {"--memory-budget", flags.memory_budget, &config->memory_budget_bytes, "48G"},
      {"--tenant-memory", flags.tenant_memory, &config->tenant_memory_bytes, "16G"},
      {"--code-cache-bytes", flags.code_cache_bytes, &config->code_cache_bytes, "512M or 4G"},
  };
  for (const Size& s : sizes) {
    if (s.text.empty() || hipr::worker::ParseByteSize(s.text, s.out)) continue;
    std::fprintf(stderr, "hipr-worker: %s: '%s' is not a size like %s\n", s.flag, s.text.c_str(), s.example);
    return false;
  }
  if (config->shm_host_bytes % 4096 != 0) {
    std::fprintf(stderr, "hipr-worker: --shm-host-bytes: '%s' is not whole pages (4K)\n", flags.shm_host_bytes.c_str());
    return false;
  }
  if (!hipr::shm::ValidRingBytes(config->shm_ring_bytes)) {
    std::fprintf(stderr, "hipr-worker: --shm-ring-bytes must be a power of two from 64K to 256M\n");
    return false;
  }
  return true;
}

// Logs go to stderr (docs/operations.md); stdout carries nothing.
void StartLogging(const WorkerConfig& config) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("hipr-worker"));
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  spdlog::set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] [worker pid %P] %v");
}

// Checks the TLS, authentication and exposure flags together; false (having
// logged why) when the worker must not start with them.
bool CheckSecurity(const WorkerConfig& config) {
  if (config.tls_cert.empty() != config.tls_key.empty() ||
      ((!config.tls_client_ca.empty() || !config.tls_ciphersuites.empty()) && config.tls_cert.empty())) {
    spdlog::error("--tls-cert and --tls-key go together, and --tls-client-ca and --tls-ciphersuites need them");
    return false;
  }
  if (!config.tls_cert.empty()) {
    std::shared_ptr<hipr::tls::Context> tls;
    hipr::Status made = hipr::tls::Context::MakeServer(
        {config.tls_cert, config.tls_key, config.tls_client_ca, config.tls_ciphersuites}, &tls);
    if (!made.ok()) {
      spdlog::error("{}", made.message());
      return false;
    }
    spdlog::info("TLS 1.3 on tcp: certificate {}{}, ciphersuites {}", config.tls_cert,
                 config.tls_client_ca.empty() ? "" : ", client certificates from " + config.tls_client_ca,
                 config.tls_ciphersuites.empty() ? hipr::tls::kDefaultCiphersuites : config.tls_ciphersuites);
  }
  if (!config.auth_file.empty()) {
    std::vector<hipr::worker::Tenant> tenants;
    bool world_readable = false;
    hipr::Status loaded = hipr::worker::LoadTenants(config.auth_file, &tenants, &world_readable);
    if (!loaded.ok()) {
      spdlog::error("{}", loaded.message());
      return false;
    }
    spdlog::info("authentication on: {} credential(s) in {}", tenants.size(), config.auth_file);
    if (world_readable)
      spdlog::warn("--auth-file {} is readable by every user on this host; chmod 0600 it", config.auth_file);
  } else if (!config.tls_client_ca.empty()) {
    spdlog::info("authentication by client certificate: tenants are the certificates' common names");
  } else if (!hipr::worker::IsLoopbackListen(config.listen)) {
    if (!config.insecure) {
      spdlog::error("refusing to listen on {} without --auth-file: anyone who reaches it could run code on this "
                    "node's GPUs. Give --auth-file or --tls-client-ca (docs/operations.md \"Security\"), listen "
                    "on 127.0.0.1, or pass --insecure on a network you trust",
                    config.listen);
      return false;
    }
    spdlog::warn("--insecure: serving {} without authentication; anyone who reaches it can run code on the GPU",
                 config.listen);
  }
  return true;
}

// Probes the device and logs what this worker will serve with; false when
// it cannot serve --device. For `hip`, the module chosen is named in
// config->hip_module from then on.
bool ProbeAndDescribe(WorkerConfig* config) {
  hipr::worker::DeviceProbe probe;
  hipr::Status st = hipr::worker::ProbeDevice(*config, &probe);
  if (!st.ok()) {
    spdlog::error("cannot serve --device {}: {}", config->device, st.message());
    return false;
  }
  spdlog::info("device {}: {}", config->device, probe.summary);
  if (config->device == "hip") {
    if (!config->hip_module.empty())
      spdlog::info("hip device module: {} (--hip-module)", probe.hip_module);
    else if (probe.passed_over.empty())
      spdlog::info("hip device module: {} (the newest here)", probe.hip_module);
    else
      spdlog::info("hip device module: {} (the newest that serves; passed over {})", probe.hip_module,
                   fmt::join(probe.passed_over, "; "));
    config->hip_module = probe.hip_module;
  }
  bool rdma_usable = false;
  const std::string rdma = hipr::worker::DescribeRdma(*config, &rdma_usable);
  if (rdma_usable || config->rdma_device.empty() || config->rdma_device == hipr::worker::kRdmaOff)
    spdlog::info("transport: {}", rdma);
  else
    spdlog::warn("transport: {}", rdma);
  spdlog::info("GPUDirect RDMA: {}", hipr::worker::DescribeGpuDirect(*config));
  return true;
}

// The ledger, the zygote and the acceptor, in that order: the ledger before
// the zygote forks, so that every process shares it.
int Serve(const WorkerConfig& config) {
  std::unique_ptr<hipr::worker::Ledger> ledger;
  hipr::Status st = hipr::worker::Ledger::Create(config.max_sessions, config.memory_budget_bytes, &ledger);
  if (!st.ok()) {
    spdlog::error("{}", st.message());
    return 1;
  }
  hipr::worker::Zygote zygote;
  st = hipr::worker::StartZygote(config, ledger.get(), &zygote);
  if (!st.ok()) {
    spdlog::error("cannot start the zygote: {}", st.ToString());
    return 1;
  }
  hipr::worker::Acceptor acceptor(config, zygote, ledger.get());
  st = acceptor.Listen();
  if (!st.ok()) {
    spdlog::error("{}", st.message());
    kill(zygote.pid, SIGTERM);
    return 2;
  }
  return acceptor.Run();
}

}  // namespace

int main(int argc, char** argv) {
  WorkerConfig config;
  Flags flags;
  CLI::App app{"hipr-worker: replays HIP calls from remote clients on this node's GPUs"};
  AddFlags(app, &config, &flags);
  CLI11_PARSE(app, argc, argv);
  if (!config.hip_runtime.empty() && config.device != "hip") {
    std::fprintf(stderr, "hipr-worker: --hip-runtime is for --device hip\n");
    return 2;
  }
  if (!ApplySizes(flags, &config)) return 2;
  if (!flags.peer_ports.empty()) {
    unsigned first = 0, last = 0;
    char tail = 0;
    if (std::sscanf(flags.peer_ports.c_str(), "%u-%u%c", &first, &last, &tail) != 2 || first == 0 || first > last ||
        last > 65535) {
      std::fprintf(stderr, "hipr-worker: --peer-ports %s: expected FIRST-LAST, 1 <= FIRST <= LAST <= 65535\n",
                   flags.peer_ports.c_str());
      return 2;
    }
    config.peer_port_first = static_cast<uint16_t>(first);
    config.peer_port_last = static_cast<uint16_t>(last);
  }

  StartLogging(config);
  signal(SIGPIPE, SIG_IGN);
  if (flags.code_cache_bytes.empty() && !config.code_cache_dir.empty()) {
    std::string why;
    config.code_cache_bytes = hipr::worker::DefaultCodeCacheBytes(config.code_cache_dir, &why);
    spdlog::info("code cache {}: bounded at {} (--code-cache-bytes sets it)", config.code_cache_dir, why);
  }
  if (!CheckSecurity(config)) return 2;
  if (!ProbeAndDescribe(&config)) return 2;
  if (flags.probe_only) return 0;
  return Serve(config);
}
