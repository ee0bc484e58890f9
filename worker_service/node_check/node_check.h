// hipr-node check: whether a node can run the hipr worker on its AMD GPUs
// (`--device hip`), checked before the worker is deployed. Each check reads
// what the worker will need -- the GPUs on the PCI bus, the amdgpu driver,
// /dev/kfd and /dev/dri/renderD* open to the worker's user, the HIP runtime,
// rocm-smi -- and says what to do when it is not there.
//
// Every file it reads lies under Options::root, so tests run it on fake
// sysfs/devfs trees. Two checks are not file reads and ignore root: the HIP
// runtime goes through the real dynamic loader, and rocm-smi is a program
// that is run. Both run in a child process killed after `timeout`, so a hung
// driver or a crashing library is a failed check, never a hung or crashed
// check.
//
// Not thread-safe: Run() forks, and must be called from a process with a
// single thread (hipr-node's main, a test's body).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace hipr::worker::node_check {

enum class Status { kOk, kWarn, kFail };

// "ok", "warn", "FAIL": how the text report prints it (a failure stands out).
const char* StatusText(Status status);

struct CheckResult {
  std::string name;  // Stable, one word: "pci_gpus", "kfd", ...
  Status status = Status::kOk;
  std::string detail;  // What was found, one line.
  std::string fix;     // What to do (kFail and kWarn); lines joined by '\n'.
};

// The user the worker runs as: device nodes are checked against its uid and
// groups from their stat(2) mode, owner and group (not access(2), which
// would answer for the caller, on the real /dev).
struct WorkerIdentity {
  uid_t uid = 0;
  std::vector<gid_t> gids;  // Primary and supplementary.
  std::string user;         // Its name, where the user database knows it.
  std::string label;        // "user hipr (uid 998)", "uid 4242", for the report.
  bool defaulted = false;   // Nobody named it: `hipr` or the invoking user.
};

// The system's user database (NSS), not files under Options::root: the
// worker's user is a user of this system even when the tree is fake.
std::optional<WorkerIdentity> IdentityOfUser(const std::string& name, std::string* why);
// `gids` empty: the groups the user database gives uid, if it knows it.
WorkerIdentity IdentityOfUid(uid_t uid, std::vector<gid_t> gids);
// The user `hipr` when it exists, else the caller's uid and groups.
WorkerIdentity DefaultIdentity();
// "4343,render,44" -> gids; a name is looked up in the group database.
bool ParseGids(const std::string& text, std::vector<gid_t>* gids, std::string* why);

struct Options {
  std::string root = "/";
  std::optional<WorkerIdentity> identity;  // Unset: DefaultIdentity().
  // dlopen()ed in a child: a soname (searched by the loader) or a path.
  std::string hip_runtime = "libamdhip64.so.5";
  // A path, or a name searched in `search_path` and then /opt/rocm/bin.
  std::string rocm_smi = "rocm-smi";
  std::string search_path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  // For each of rocm-smi and the runtime probe.
  std::chrono::milliseconds timeout{8000};
  // Where `cmake --install` puts 70-amdgpu-hipr.rules, for the fix text.
  std::string udev_rules_dir = "/opt/hipr/share/hipr/udev";
};

// Runs every check, in a fixed order: pci_gpus, amdgpu_module, kfd,
// render_nodes, hip_runtime, rocm_smi, gpu_models. Blocks for at most about
// twice options.timeout.
std::vector<CheckResult> Run(const Options& options);

// 0 when nothing failed (warnings allowed), 1 otherwise.
int ExitStatus(const std::vector<CheckResult>& results);

// One line per check, `STATUS  NAME  detail`, each failure or warning
// followed by its fix lines indented under it, then a verdict line.
std::string FormatText(const std::vector<CheckResult>& results);
// A JSON array of {"name","status","detail","fix"} objects, one per check;
// status is "ok", "warn" or "fail".
std::string FormatJson(const std::vector<CheckResult>& results);

// The marketing name of an AMD PCI device id from hipr's own list of
// Instinct ids (checked against libdrm's amdgpu.ids), or nullptr.
const char* KnownInstinctName(unsigned device_id);

}  // namespace hipr::worker::node_check
