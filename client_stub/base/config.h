// Config: every environment knob of the client stub, parsed once (Client
// creation) and passed down; nothing else in the stub calls getenv, except
// where an answer is needed before a Config exists (other libraries'
// constructors call into the stub first): log.cc reads HIPR_LOG_LEVEL
// through ParseLogLevel (log.h), and abi_major.cc reads HIPR_ABI_MAJOR.
//
// A bad value never stops the program: it is reported (one line each) and the
// default is used. HIPR_SERVER has no default: unset, it is left empty and the
// session fails with an error naming the variable.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "client_stub/base/log.h"
#include "protocol/transports.h"
#include "protocol/wire.h"

namespace hipr::client {

// HIPR_COMPRESS: lz4 for bulk copies (see protocol/chunk_lz4.h). kAuto is on
// unless the worker is on this host (loopback), where it only costs CPU.
// Used in a direction only where the worker agrees too.
enum class Compress { kOff, kOn, kAuto };

struct Config {
  // HIPR_SERVER: "host:port" or "[v6]:port" (tcp, upgraded to rdma when
  // both ends have a device on one fabric), "rdma://host:port" (rdma or a
  // clear failure), or "unix:/path" (a worker on this node started with
  // --listen-unix: the shm transport); empty when unset.
  std::string server;
  // How many workers the program's HIPR_SERVER lists (a list "a:p,b:q":
  // session/remote.h); set for each worker's session, not read from the
  // environment.
  int workers = 1;
  int worker_index = 0;  // This one's place in that list.
  // HIPR_RDMA=0: never try rdma (plain host:port stays on tcp).
  bool rdma = true;
  // HIPR_PEER_COPY=0: copies between two workers' memory pass through this
  // process even where the workers could send them to each other.
  bool peer_copy = true;
  // HIPR_RESUME: whether a session over tcp or TLS resumes over a new
  // connection when its link drops (where the worker keeps it): on, off,
  // or auto (the default: on for a worker on another host, where links
  // drop; it costs a copy of the bytes sent, docs/operations.md). The same
  // three words as HIPR_COMPRESS.
  Compress resume = Compress::kAuto;
  // HIPR_RDMA_DEVICE: the RDMA device to use (as hipr-rdma-devices lists
  // it); empty: the first.
  std::string rdma_device;
  // The tenant's credential, "TENANT:SECRET" (protocol/auth.h), for a
  // worker started with --auth-file: HIPR_TOKEN, or the file named by
  // HIPR_TOKEN_FILE (a mounted Kubernetes Secret). Never sent: the hello
  // proves it by challenge and response.
  std::string token;       // HIPR_TOKEN.
  std::string token_file;  // HIPR_TOKEN_FILE.
  // TLS to a worker started with --tls-cert (tcp only; protocol/tls/): the
  // CA file its certificate must chain to, which turns TLS on; a client
  // certificate and key for a worker with --tls-client-ca; the name the
  // certificate must carry, where it is not HIPR_SERVER's host.
  std::string tls_ca;           // HIPR_TLS_CA.
  std::string tls_cert;         // HIPR_TLS_CERT.
  std::string tls_key;          // HIPR_TLS_KEY.
  std::string tls_server_name;  // HIPR_TLS_SERVER_NAME.
  bool tls() const { return !tls_ca.empty() || !tls_cert.empty() || !tls_key.empty(); }
  LogLevel log_level = LogLevel::kWarn;        // HIPR_LOG_LEVEL.
  int connect_timeout_ms = 3000;               // HIPR_CONNECT_TIMEOUT_MS.
  int peer_timeout_ms = 10000;                 // HIPR_PEER_TIMEOUT_MS: silence => link dead.
  // HIPR_CONNECT_RETRY_S: how long to keep retrying a worker that refuses a
  // new session for now (kUnavailable: full, or busy with hellos); 0: never.
  int connect_retry_s = 60;
  uint64_t window_bytes = uint64_t{64} << 30;  // HIPR_WINDOW_BYTES: device VA window offered.
  uint32_t chunk_bytes = wire::kDefaultChunkBytes;  // HIPR_CHUNK_BYTES.
  // HIPR_BATCH_BYTES: flush threshold. Small, so that the worker starts on
  // a burst while the caller goes on, and little is left to send when the
  // caller waits (docs/performance.md "Kernel launches").
  uint64_t batch_bytes = 4u << 10;
  // HIPR_FREE_BLOCK_BYTES: freed device memory kept per device for the next
  // hipMalloc of its size (memory/free_blocks.h); 0: none.
  uint64_t free_block_bytes = uint64_t{64} << 20;
  // HIPR_MALLOC_LEASE_BYTES: device memory taken per device ahead of use,
  // where hipMalloc places allocations with no round trip
  // (memory/memory_leases.h); 0: none.
  uint64_t malloc_lease_bytes = uint64_t{64} << 20;
  uint32_t flush_us = 200;                     // HIPR_FLUSH_US: oldest batched frame's age limit.
  int spin_us = 50;  // HIPR_SPIN_US: a waiting call polls this long before it sleeps.
  // HIPR_ZEROCOPY_BYTES: tcp sends of pinned memory at least this large use
  // MSG_ZEROCOPY (0: never). Where the kernel copies anyway (loopback) the
  // connection notices at the first send and stops.
  uint64_t zero_copy_bytes = uint64_t{1} << 20;
  int stats = 0;                               // HIPR_STATS=1: print what crossed the wire at exit.
  Compress compress = Compress::kAuto;         // HIPR_COMPRESS: off, on or auto.
  // HIPR_RTC_DEVICE_LIB_DIR: rocm-device-libs' bitcode, which runtime
  // compilation (hiprtc, rtc_compiler.h) links into every program.
  std::string rtc_device_lib_dir = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";

  // HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES as
  // "NAME=VALUE", those set: sent in the hello, where the worker selects this
  // session's devices with them as ROCm would for a local process.
  std::vector<std::string> visible_devices;

  // For messages: the server, or "<unset>".
  std::string ServerForLog() const { return server.empty() ? "<unset>" : server; }

  // What the transport registry connects with (protocol/transports.h), log
  // unset.
  transport::ClientOptions TransportOptions() const;
};

// Looks an environment variable up; nullptr when unset.
using EnvLookup = const char* (*)(const char* name, void* ctx);

// Parses every knob through `lookup`. Each bad value adds one line to
// `problems` (naming the variable, the value and the default used) and keeps
// the default. Byte sizes accept a K, M, G or T suffix (powers of 1024).
Config ParseConfig(EnvLookup lookup, void* ctx, std::vector<std::string>* problems);

// ParseConfig over the process environment; logs each problem at warn level.
Config ConfigFromEnvironment();

// "off", "on" or "auto" (case-insensitive).
bool ParseCompress(std::string_view text, Compress* out);

}  // namespace hipr::client
