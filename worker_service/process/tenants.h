// Tenants: who may use the worker, read from --auth-file.
//
// One tenant per line, `NAME SECRET [sessions=N] [memory=SIZE]
// [ipc=OTHER,...]`; `#` starts a comment. `ipc=` names the other tenants
// whose sessions may open this tenant's IPC handles (memory, events,
// shareable physical memory); without it only the tenant's own sessions
// may. A name may appear on several lines with different secrets
// (rotation: add the new secret, move clients over, remove the old one);
// its limits come from its first line. The file is read again at every
// hello, so an edit (or a Kubernetes Secret's update) takes effect for the
// next session without a restart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/status.h"

namespace hipr::worker {

struct Tenant {
  std::string name;
  std::string secret;
  int max_sessions = 0;       // Live sessions at once; 0: --max-sessions-per-tenant.
  uint64_t memory_bytes = 0;  // Device memory of all its sessions; 0: --tenant-memory.
  std::vector<std::string> ipc_peers;  // Other tenants that may open its IPC handles.
};

// Whether a session of tenant `opener` may open an IPC handle exported by a
// session of tenant `exporter`: the same tenant, or one the exporter's
// `ipc=` names.
bool MayOpenIpc(const std::vector<Tenant>& tenants, const std::string& exporter, const std::string& opener);

// Parses the file's text. Errors name the line.
Status ParseTenants(const std::string& text, std::vector<Tenant>* out);

// Reads and parses `path` (at most 1 MiB). Refuses a file any user may
// write. `world_readable`, when given, says whether any user may read it
// (the worker warns at start: 0600 or 0640 is right).
Status LoadTenants(const std::string& path, std::vector<Tenant>* out, bool* world_readable = nullptr);

// Parses "512M", "4G", "1048576" (K/M/G/T, powers of 1024).
bool ParseByteSize(const std::string& text, uint64_t* out);

}  // namespace hipr::worker
