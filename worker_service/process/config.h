// WorkerConfig: every worker setting, parsed once in main() from flags and
// passed down. Nothing in the worker reads the environment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hipr::worker {

// How a session's client reached the worker.
enum class Transport : uint32_t { kTcp = 0, kShm = 1 };

struct WorkerConfig {
  std::string listen = "127.0.0.1:18515";
  // Also accept clients on this node on a unix socket at this path; they get
  // the shm transport (protocol/shm/). Empty: tcp only.
  std::string listen_unix;
  uint64_t shm_ring_bytes = uint64_t{1} << 20;  // Each direction's ring (measured: docs/performance.md).
  // The host segment each shm session offers its client for pinned memory
  // (hipHostMalloc): copies to and from it carry no bytes. Virtual: only
  // pages the client uses take memory.
  uint64_t shm_host_bytes = uint64_t{4} << 30;
  std::string device = "sim";  // "sim" or "hip".
  std::string port_file;        // If set, the bound port is written here.
  // Prometheus metrics and health endpoints (metrics.h); empty: none.
  std::string metrics_listen;
  std::string metrics_port_file;  // If set, the metrics port is written here.
  int max_sessions = 64;
  // Live sessions (handed over, not yet ended) from one peer: one IP
  // address over tcp, one uid over the unix socket. Keeps one client from
  // holding every slot.
  int max_sessions_per_peer = 32;
  // Tenants and their secrets (tenants.h); empty: no authentication, which
  // the worker allows only on loopback or with `insecure`.
  std::string auth_file;
  bool insecure = false;  // --insecure: serve beyond loopback without --auth-file.
  // --no-peer-copies: no session opens ports for copies straight from
  // another worker (protocol/peer_link.h); clients stage them instead.
  bool no_peer_copies = false;
  // --peer-ports FIRST-LAST: the ports peer copies listen on (a firewall or
  // NetworkPolicy admits them between workers); 0-0: any.
  uint16_t peer_port_first = 0;
  uint16_t peer_port_last = 0;
  // Worker-wide limits, kept in the ledger every process shares (ledger.h).
  uint64_t memory_budget_bytes = 0;  // --memory-budget: device memory of all sessions; 0: no limit.
  uint64_t tenant_memory_bytes = 0;  // --tenant-memory: each tenant's, unless its `memory=`; 0: none.
  int max_sessions_per_tenant = 0;   // Unless its `sessions=`; 0: --max-sessions alone.
  // Connections from one peer still in their hello; all of them together
  // may hold at most half of --max-sessions, so silent connections can
  // never keep authenticated clients out.
  int max_handshakes_per_peer = 8;
  int idle_timeout_s = 0;
  // --resume-grace-s: how long a session whose link dropped waits for its
  // client to resume it (docs/operations.md "Resuming sessions"); 0: a
  // dropped link ends the session.
  int resume_grace_s = 30;
  // Per session: what a client may hold at once. Each sim stream is a
  // thread, so streams are also bounded worker-wide.
  int max_streams_per_session = 1024;
  int max_events_per_session = 65536;
  int max_modules_per_session = 4096;
  int max_graphs_per_session = 16384;
  int probe_interval_s = 30;  // The hip device's probe again, for /readyz; 0: only at start.  // And 64 nodes per graph allowed, over all of them.
  int max_streams = 8192;  // All sessions together.
  // TLS for tcp clients (protocol/tls/): the worker's certificate chain and
  // key, PEM, read again for each connection. Empty: plain tcp. With
  // tls_client_ca, clients must also present a certificate that CA signed;
  // its common name names the tenant where there is no --auth-file.
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  std::string tls_ciphersuites;  // Empty: tls::kDefaultCiphersuites.
  // The RDMA device plain-tcp sessions move to when their client offers
  // rdma in the hello (protocol/rdma/rdma_upgrade.h): a name as
  // hipr-rdma-devices lists it; empty: the first device; "off": never
  // (clients stay on tcp).
  std::string rdma_device;
  int heartbeat_ms = 1000;
  int hello_timeout_ms = 10000;
  uint32_t chunk_bytes = 4u << 20;
  int spin_us = 50;  // A session polls this long for the next frame before it sleeps.
  // Bulk lz4 (protocol/chunk_lz4.h): "off", "on", or "auto" (on unless the
  // client is on this host). Used in a direction only where the client
  // offers it too.
  std::string compress = "auto";
  std::string log_level = "info";
  // sim device.
  std::string sim_model = "mi250x";
  uint64_t sim_memory_bytes = 0;  // Per device; 0 = default (RAM/4, at most 16 GiB).
  int sim_devices = 1;
  std::vector<std::string> sim_kernels;  // Directories of kernel twins.
  std::vector<std::string> sim_fail_kernels;  // Fault injection (tests): kernels that fail when run.
  bool sim_force_staging = false;  // Copies through the staging pipeline, as the hip device's.
  // Code-object cache shared by sessions; empty: memory only.
  std::string code_cache_dir = "/var/cache/hipr-worker";
  uint64_t code_cache_bytes = uint64_t{1} << 30;
  // hip device.
  std::string hip_module;  // Path of libhipr_device_hip.so; empty = next to the binary.
  // Testing: the HIP runtime the hip device binds to instead of the system's
  // libamdhip64 (hipr's own client stub, forwarding to a sim worker: the
  // "chain", docs/operations.md). Empty: the system's, as in production.
  std::string hip_runtime;
};

}  // namespace hipr::worker
