#include "worker_service/process/tenants.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "protocol/auth.h"

namespace hipr::worker {

bool ParseByteSize(const std::string& text, uint64_t* out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return false;
  const std::string unit(end);
  int shift = 0;
  if (unit == "K" || unit == "KiB") shift = 10;
  else if (unit == "M" || unit == "MiB") shift = 20;
  else if (unit == "G" || unit == "GiB") shift = 30;
  else if (unit == "T" || unit == "TiB") shift = 40;
  else if (!unit.empty()) return false;
  if (shift > 0 && v > (~0ull >> shift)) return false;
  *out = static_cast<uint64_t>(v) << shift;
  return true;
}

Status ParseTenants(const std::string& text, std::vector<Tenant>* out) {
  std::vector<Tenant> tenants;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string name, secret, option;
    if (!(words >> name)) continue;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (!auth::ValidTenantName(name))
      return InvalidArgument(where + "a tenant name is 1 to 64 of A-Z a-z 0-9 . _ -");
    if (!(words >> secret)) return InvalidArgument(where + "tenant '" + name + "' has no secret");
    if (secret.size() < auth::kMinSecretBytes || secret.size() > auth::kMaxSecretBytes)
      return InvalidArgument(where + "tenant '" + name + "': a secret is " + std::to_string(auth::kMinSecretBytes) +
                             " to " + std::to_string(auth::kMaxSecretBytes) +
                             " characters (openssl rand -hex 32 makes one)");
    Tenant t;
    t.name = name;
    t.secret = secret;
    while (words >> option) {
      const size_t eq = option.find('=');
      const std::string key = option.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : option.substr(eq + 1);
      uint64_t n = 0;
      if (key == "sessions" && ParseByteSize(value, &n) && n >= 1 && n <= 100000) {
        t.max_sessions = static_cast<int>(n);
      } else if (key == "memory" && ParseByteSize(value, &n) && n > 0) {
        t.memory_bytes = n;
      } else if (key == "ipc" && !value.empty()) {
        std::istringstream peers(value);
        std::string peer;
        while (std::getline(peers, peer, ','))
          if (!auth::ValidTenantName(peer))
            return InvalidArgument(where + "tenant '" + name + "': ipc= lists tenant names separated by commas");
          else
            t.ipc_peers.push_back(peer);
      } else {
        return InvalidArgument(where + "tenant '" + name + "': '" + option +
                               "' is not sessions=N (1..100000), memory=SIZE (like 16G) or ipc=TENANT[,TENANT...]");
      }
    }
    // A repeated name is a second secret; its first line's limits hold.
    if (!seen.insert(name).second) {
      for (const Tenant& first : tenants)
        if (first.name == name) {
          t.max_sessions = first.max_sessions;
          t.memory_bytes = first.memory_bytes;
          t.ipc_peers = first.ipc_peers;
          break;
        }
    }
    tenants.push_back(std::move(t));
  }
  if (tenants.empty())
    return InvalidArgument("no tenant: each line is NAME SECRET [sessions=N] [memory=SIZE] [ipc=TENANT,...]");
  *out = std::move(tenants);
  return Status::Ok();
}

bool MayOpenIpc(const std::vector<Tenant>& tenants, const std::string& exporter, const std::string& opener) {
  if (exporter == opener) return true;
  for (const Tenant& t : tenants)
    if (t.name == exporter) {  // Its first line holds its options.
      for (const std::string& peer : t.ipc_peers)
        if (peer == opener) return true;
      return false;
    }
  return false;
}

Status LoadTenants(const std::string& path, std::vector<Tenant>* out, bool* world_readable) {
  struct stat sb{};
  if (stat(path.c_str(), &sb) != 0)
    return Status(StatusCode::kFailedPrecondition, "cannot read --auth-file " + path + ": " + std::strerror(errno));
  if (!S_ISREG(sb.st_mode)) return Status(StatusCode::kFailedPrecondition, "--auth-file " + path + " is not a file");
  if (sb.st_mode & S_IWOTH)
    return Status(StatusCode::kFailedPrecondition,
                  "--auth-file " + path + " may be written by any user; chmod o-w it (0600 is right)");
  if (sb.st_size > (1 << 20)) return Status(StatusCode::kFailedPrecondition, "--auth-file " + path + " is over 1 MiB");
  if (world_readable != nullptr) *world_readable = (sb.st_mode & S_IROTH) != 0;
  std::ifstream f(path);
  if (!f) return Status(StatusCode::kFailedPrecondition, "cannot read --auth-file " + path);
  std::ostringstream text;
  text << f.rdbuf();
  Status st = ParseTenants(text.str(), out);
  if (!st.ok()) return Status(st.code(), "--auth-file " + path + ", " + st.message());
  return Status::Ok();
}

}  // namespace hipr::worker
