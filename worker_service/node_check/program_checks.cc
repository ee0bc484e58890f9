#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>
#include <sstream>
#include <system_error>

#include "worker_service/node_check/checks.h"
#include "worker_service/node_check/child_process.h"

namespace hipr::worker::node_check::internal {

namespace fs = std::filesystem;

namespace {

void WriteOut(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

bool StartsWithNoCase(const std::string& s, const std::string& prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != std::tolower(static_cast<unsigned char>(prefix[i])))
      return false;
  return true;
}

// rocm-smi --showproductname prints, per GPU, lines such as
//   GPU[0]\t\t: Card series: \t\tAMD Instinct MI250X / MI250
//   GPU[0]\t\t: Card model: \t\t0x0b0c
// ("Card Series" in newer releases).
void ParseProductNames(const std::string& output, SmiGpus* gpus) {
  std::set<int> seen;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("GPU[", 0) != 0) continue;
    size_t close = line.find(']');
    if (close == std::string::npos) continue;
    int index = std::atoi(line.c_str() + 4);
    std::string rest = line.substr(close + 1);
    size_t colon = rest.find(':');
    if (colon == std::string::npos) continue;
    rest = Trim(rest.substr(colon + 1));
    for (const char* key : {"card series:", "card model:", "card vendor:"}) {
      if (!StartsWithNoCase(rest, key)) continue;
      seen.insert(index);
      if (std::string(key) == "card series:") gpus->names[index] = Trim(rest.substr(std::strlen(key)));
    }
  }
  gpus->count = seen.size();
}

// The first line that says something, for a failure's detail.
std::string FirstMessage(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    line = Trim(line);
    if (!line.empty() && line.find("=====") == std::string::npos) return line;
  }
  return "(no output)";
}

std::optional<std::string> FindProgram(const Options& options, std::string* looked) {
  const std::string& name = options.rocm_smi;
  if (name.find('/') != std::string::npos) {
    *looked = name;
    if (access(name.c_str(), X_OK) == 0) return name;
    return std::nullopt;
  }
  std::vector<std::string> dirs;
  std::istringstream path(options.search_path);
  for (std::string d; std::getline(path, d, ':');)
    if (!d.empty()) dirs.push_back(d);
  dirs.push_back("/opt/rocm/bin");
  *looked = "PATH and /opt/rocm/bin";
  for (const std::string& d : dirs) {
    std::string candidate = d + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

}  // namespace

// dlopen() in a child: the runtime's constructors run there, and what
// they do (or a crash or hang in them) stays there.
CheckResult CheckHipRuntime(const Options& options) {
  CheckResult r{"hip_runtime", Status::kOk, "", ""};
  const std::string& lib = options.hip_runtime;
  ChildOutcome out = RunInChild(
      [&] {
        void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (handle == nullptr) {
          const char* e = dlerror();
          WriteOut(e != nullptr ? e : "unknown dlopen error");
          return 1;
        }
        link_map* map = nullptr;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
          WriteOut(map->l_name);
        return 0;
      },
      options.timeout);
  const std::string fix =
      "Debian: apt install libamdhip64-5 (the runtime hipr's hip device is built against); with AMD's ROCm, "
      "put its lib folder on the loader's path (/etc/ld.so.conf.d/rocm.conf, then ldconfig)";
  switch (out.end) {
    case ChildOutcome::End::kExited:
      if (out.code == 0) {
        std::string path = Trim(out.output);
        if (path.empty()) path = lib;
        r.detail = "loaded " + path;
        std::error_code ec;
        fs::path real = fs::canonical(path, ec);
        if (!ec && real.string() != path) r.detail += " (" + real.string() + ")";
        return r;
      }
      r.status = Status::kFail;
      r.detail = "cannot load " + lib + ": " + Trim(out.output);
      r.fix = fix;
      return r;
    case ChildOutcome::End::kSignaled:
      r.status = Status::kFail;
      r.detail = "loading " + lib + " killed the loading process (signal " + std::to_string(out.code) + ")";
      r.fix = "a runtime that does not match its libraries (libhsa-runtime64, libamd_comgr): reinstall them together";
      return r;
    case ChildOutcome::End::kTimedOut:
      r.status = Status::kFail;
      r.detail = "loading " + lib + " did not finish in " + Seconds(options.timeout);
      r.fix = "a hung driver blocks the runtime: `dmesg | grep -i amdgpu`, reset the GPU or reboot";
      return r;
    case ChildOutcome::End::kNotStarted:
      r.status = Status::kFail;
      r.detail = "cannot start the probe: " + out.error;
      r.fix = fix;
      return r;
  }
  return r;
}

CheckResult CheckRocmSmi(const Options& options, SmiGpus* gpus) {
  CheckResult r{"rocm_smi", Status::kOk, "", ""};
  std::string looked;
  std::optional<std::string> program = FindProgram(options, &looked);
  if (!program) {
    r.status = Status::kWarn;
    r.detail = options.rocm_smi + " not found (" + looked +
               "); the worker does not need it, its health metrics "
               "use librocm-smi";
    r.fix = "Debian: apt install rocm-smi, to check what the driver reports";
    return r;
  }
  ChildOutcome out = RunProgram({*program, "--showproductname"}, options.timeout);
  const std::string cmd = *program + " --showproductname";
  const std::string hang_fix =
      "a hung GPU or driver: `dmesg | grep -i amdgpu`; reset the GPU (rocm-smi --gpureset -d N) or reboot";
  switch (out.end) {
    case ChildOutcome::End::kTimedOut:
      r.status = Status::kFail;
      r.detail = cmd + " did not answer in " + Seconds(options.timeout) + " (killed)";
      r.fix = hang_fix;
      return r;
    case ChildOutcome::End::kNotStarted:
      r.status = Status::kFail;
      r.detail = "cannot run " + cmd + ": " + out.error;
      r.fix = "the system is out of processes or descriptors: retry";
      return r;
    case ChildOutcome::End::kSignaled:
      r.status = Status::kFail;
      r.detail = cmd + " died of signal " + std::to_string(out.code);
      r.fix = hang_fix;
      return r;
    case ChildOutcome::End::kExited:
      break;
  }
  if (out.code != 0) {
    r.status = Status::kFail;
    r.detail = cmd + " exited " + std::to_string(out.code) + ": " + FirstMessage(out.output);
    r.fix = "`dmesg | grep -i amdgpu`; rocm-smi needs amdgpu loaded (see amdgpu_module)";
    return r;
  }
  ParseProductNames(out.output, gpus);
  if (*gpus->count == 0) {
    r.status = Status::kFail;
    r.detail = "rocm-smi reports no GPU: " + FirstMessage(out.output);
    r.fix = "rocm-smi sees the GPUs amdgpu initialised: see amdgpu_module, `dmesg | grep -i amdgpu`";
    return r;
  }
  std::vector<std::string> names;
  for (const auto& [index, name] : gpus->names) names.push_back(name.empty() ? "unnamed" : name);
  r.detail = Plural(*gpus->count, "GPU", "GPUs");
  if (!names.empty()) r.detail += ": " + Counted(names);
  return r;
}

}  // namespace hipr::worker::node_check::internal
