#include "worker_service/device/device_factory.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include <spdlog/spdlog.h>

#include "worker_service/hip/hip_module.h"
#include "worker_service/sim/models.h"
#include "worker_service/sim/sim_device.h"

namespace hipr::worker {
namespace {

// The directories a hip device module may sit in: installed, bin/hipr-worker
// and lib/hipr-worker/; in the build tree, bin/ and lib/hipr-worker/ too.
std::vector<std::filesystem::path> HipModuleDirs() {
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::filesystem::path dir = n > 0 ? std::filesystem::path(std::string(self, static_cast<size_t>(n))).parent_path()
                                    : std::filesystem::path(".");
  return {dir / "../lib/hipr-worker", dir};
}

// The ROCm major of a module's file name: libhipr_device_hipN.so -> N, the
// 5.x module libhipr_device_hip.so -> 5; 0 for any other name.
int ModuleMajor(const std::string& file_name) {
  constexpr std::string_view kStem = "libhipr_device_hip", kSuffix = ".so";
  std::string_view name = file_name;
  if (name.substr(0, kStem.size()) != kStem || name.size() < kStem.size() + kSuffix.size() ||
      name.substr(name.size() - kSuffix.size()) != kSuffix)
    return 0;
  name = name.substr(kStem.size(), name.size() - kStem.size() - kSuffix.size());
  if (name.empty()) return 5;
  int major = 0;
  for (char c : name) {
    if (c < '0' || c > '9' || major > 1000) return 0;
    major = major * 10 + (c - '0');
  }
  return major;
}

// --hip-runtime: the runtime is mapped first, globally, so the module's
// DT_NEEDED libamdhip64.so.5 finds it by its SONAME instead of searching the
// system's. Checked after the module loads: its hipMalloc must be that
// runtime's.
Status LoadHipRuntime(const WorkerConfig& config, void** runtime) {
  *runtime = nullptr;
  if (config.hip_runtime.empty()) return Status::Ok();
  *runtime = dlopen(config.hip_runtime.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (*runtime == nullptr)
    return Status(StatusCode::kNotSupported, "cannot load --hip-runtime " + config.hip_runtime + ": " + dlerror());
  return Status::Ok();
}

}  // namespace

std::vector<std::string> HipModuleCandidates(const WorkerConfig& config) {
  if (!config.hip_module.empty()) return {config.hip_module};
  std::vector<std::pair<int, std::string>> found;
  for (const auto& dir : HipModuleDirs()) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const int major = ModuleMajor(entry.path().filename().string());
      if (major == 0) continue;
      const bool seen = std::any_of(found.begin(), found.end(), [&](const auto& f) { return f.first == major; });
      if (!seen) found.emplace_back(major, entry.path().lexically_normal().string());
    }
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> paths;
  for (auto& [major, path] : found) paths.push_back(std::move(path));
  return paths;
}

Status LoadHipModule(const WorkerConfig& config, const std::string& path, void** out) {
  void* runtime = nullptr;
  HIPR_RETURN_IF_ERROR(LoadHipRuntime(config, &runtime));
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Status(StatusCode::kNotSupported, "cannot load the hip device module " + path + ": " + dlerror());
  if (runtime != nullptr && dlsym(handle, "hipMalloc") != dlsym(runtime, "hipMalloc"))
    return Status(StatusCode::kNotSupported, path + " did not bind to --hip-runtime " + config.hip_runtime +
                                                 " (it must be the libamdhip64.so.N the module needs, by SONAME "
                                                 "or found under that name)");
  *out = handle;
  return Status::Ok();
}

Status LoadHipModule(const WorkerConfig& config, void** out) {
  const std::vector<std::string> candidates = HipModuleCandidates(config);
  if (candidates.empty())
    return Status(StatusCode::kNotSupported, "no hip device module (libhipr_device_hip*.so) beside hipr-worker");
  return LoadHipModule(config, candidates.front(), out);
}

namespace {

Status LoadHipSymbol(const WorkerConfig& config, const std::string& path, const char* symbol, void** out) {
  void* handle = nullptr;
  HIPR_RETURN_IF_ERROR(LoadHipModule(config, path, &handle));
  *out = dlsym(handle, symbol);
  if (*out == nullptr) return Status(StatusCode::kNotSupported, path + " lacks " + symbol);
  return Status::Ok();
}

// Loads one module in a forked child and counts its devices, so that no
// runtime is ever initialised here and a failed module leaves nothing behind
// for the next one.
Status ProbeHipModule(const WorkerConfig& config, const std::string& path, std::string* summary) {
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return Status(StatusCode::kInternal, "pipe failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return Status(StatusCode::kInternal, std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    close(pipefd[0]);
    char message[1024] = {};
    void* fn = nullptr;
    Status st = LoadHipSymbol(config, path, kHipProbeSymbol, &fn);
    int count = -1;
    if (st.ok()) {
      count = reinterpret_cast<HiprHipProbeFn>(fn)(message, sizeof message);
    } else {
      std::snprintf(message, sizeof message, "%s", st.message().c_str());
    }
    (void)!write(pipefd[1], &count, sizeof count);
    (void)!write(pipefd[1], message, std::strlen(message));
    _exit(0);
  }
  close(pipefd[1]);
  int count = -1;
  std::string message;
  bool got_count = read(pipefd[0], &count, sizeof count) == sizeof count;
  char buf[1024];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) > 0) message.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  int ws = 0;
  waitpid(pid, &ws, 0);
  if (!got_count) return Status(StatusCode::kNotSupported, "the HIP probe process died before answering");
  if (count <= 0) return Status(StatusCode::kNotSupported, message);
  *summary = message;
  return Status::Ok();
}

sim::SimOptions SimOptionsOf(const WorkerConfig& config) {
  sim::SimOptions o;
  o.model = config.sim_model;
  o.memory_bytes = config.sim_memory_bytes != 0 ? config.sim_memory_bytes : sim::DefaultSimMemoryBytes();
  o.device_count = config.sim_devices;
  o.kernel_dirs = config.sim_kernels;
  o.fail_kernels = config.sim_fail_kernels;
  o.force_staging = config.sim_force_staging;
  return o;
}

}  // namespace

Status ProbeDevice(const WorkerConfig& config, DeviceProbe* probe) {
  if (config.device == "sim") {
    std::unique_ptr<sim::SimDevice> device;
    sim::SimOptions o = SimOptionsOf(config);
    HIPR_RETURN_IF_ERROR(sim::SimDevice::Create(o, &device));
    probe->summary = std::to_string(o.device_count) + " x " + device->devices()[0].name + " (" +
                     device->devices()[0].gcn_arch_name + "), " + std::to_string(o.memory_bytes >> 20) + " MiB each";
    return Status::Ok();
  }
  if (config.device != "hip") return InvalidArgument("--device must be 'sim' or 'hip'");
  // The newest module whose runtime loads and finds a GPU; each one passed
  // over says why.
  const std::vector<std::string> candidates = HipModuleCandidates(config);
  if (candidates.empty())
    return Status(StatusCode::kNotSupported, "no hip device module (libhipr_device_hip*.so) beside hipr-worker");
  probe->passed_over.clear();
  for (const std::string& path : candidates) {
    std::string summary;
    const Status st = ProbeHipModule(config, path, &summary);
    if (st.ok()) {
      probe->summary = summary;
      probe->hip_module = path;
      return Status::Ok();
    }
    std::string why = st.message();
    const std::string load_failed = "cannot load the hip device module " + path + ": ";
    if (why.rfind(load_failed, 0) == 0) why = "cannot load: " + why.substr(load_failed.size());
    probe->passed_over.push_back(path + ": " + why);
  }
  std::string why;
  for (const std::string& p : probe->passed_over) why += (why.empty() ? "" : "; ") + p;
  if (candidates.size() == 1) return Status(StatusCode::kNotSupported, probe->passed_over.front());
  return Status(StatusCode::kNotSupported, "no hip device module can serve: " + why);
}

Status CreateDevice(const WorkerConfig& config, const VisibleDevices& visible, std::unique_ptr<Device>* out) {
  if (config.device == "sim") {
    sim::SimOptions o = SimOptionsOf(config);
    if (!visible.empty()) {
      // ROCr's list over every device, then HIP's over what it left.
      std::vector<std::string> uuids;
      for (int i = 0; i < o.device_count; ++i) {
        msg::DeviceInfo d;
        HIPR_RETURN_IF_ERROR(sim::ModelInfo(o.model, o.memory_bytes, i, &d));
        uuids.push_back("GPU-" + std::string(d.uuid.begin(), d.uuid.end()));
      }
      std::vector<int> rocr(uuids.size());
      for (size_t i = 0; i < rocr.size(); ++i) rocr[i] = static_cast<int>(i);
      if (visible.rocr) {
        rocr = SelectVisible(*visible.rocr, uuids);
        std::vector<std::string> left;
        for (int i : rocr) left.push_back(uuids[static_cast<size_t>(i)]);
        uuids = std::move(left);
      }
      std::vector<int> chosen = rocr;
      if (visible.hip) {
        chosen.clear();
        for (int i : SelectVisible(*visible.hip, uuids)) chosen.push_back(rocr[static_cast<size_t>(i)]);
      }
      if (chosen.empty())
        return Status(StatusCode::kNotFound, "the client's " + visible.Describe() + " leaves none of the worker's " +
                                                 std::to_string(o.device_count) + " devices");
      o.ordinals = std::move(chosen);
    }
    std::unique_ptr<sim::SimDevice> device;
    HIPR_RETURN_IF_ERROR(sim::SimDevice::Create(o, &device));
    *out = std::move(device);
    return Status::Ok();
  }
  // The runtime applies the selection itself when it starts, below.
  if (!visible.empty()) spdlog::info("device selection from the client: {}", ApplyVisibleToEnvironment(visible));
  void* fn = nullptr;
  const std::vector<std::string> candidates = HipModuleCandidates(config);
  if (candidates.empty())
    return Status(StatusCode::kNotSupported, "no hip device module (libhipr_device_hip*.so) beside hipr-worker");
  HIPR_RETURN_IF_ERROR(LoadHipSymbol(config, candidates.front(), kHipCreateSymbol, &fn));
  char message[1024] = {};
  Device* device = reinterpret_cast<HiprHipCreateFn>(fn)(message, sizeof message);
  if (device == nullptr) return Status(StatusCode::kDeviceLost, message);
  out->reset(device);
  return Status::Ok();
}

}  // namespace hipr::worker
