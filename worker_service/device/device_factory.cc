#include "worker_service/device/device_factory.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "worker_service/hip/hip_module.h"
#include "worker_service/sim/models.h"
#include "worker_service/sim/sim_device.h"

namespace hipr::worker {
namespace {

std::string HipModulePath(const WorkerConfig& config) {
  if (!config.hip_module.empty()) return config.hip_module;
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  std::filesystem::path dir = n > 0 ? std::filesystem::path(std::string(self, static_cast<size_t>(n))).parent_path()
                                    : std::filesystem::path(".");
  // Installed: bin/hipr-worker and lib/hipr-worker/libhipr_device_hip.so; build
  // tree: both under bin/ and lib/.
  for (const auto& candidate : {dir / "../lib/hipr-worker/libhipr_device_hip.so", dir / "libhipr_device_hip.so"})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return (dir / "../lib/hipr-worker/libhipr_device_hip.so").string();
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

Status LoadHipModule(const WorkerConfig& config, void** out) {
  void* runtime = nullptr;
  HIPR_RETURN_IF_ERROR(LoadHipRuntime(config, &runtime));
  std::string path = HipModulePath(config);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return Status(StatusCode::kNotSupported, "cannot load the hip device module " + path + ": " + dlerror());
  if (runtime != nullptr && dlsym(handle, "hipMalloc") != dlsym(runtime, "hipMalloc"))
    return Status(StatusCode::kNotSupported, path + " did not bind to --hip-runtime " + config.hip_runtime +
                                                 " (its SONAME must be the libamdhip64.so.5 the module needs)");
  *out = handle;
  return Status::Ok();
}

namespace {

Status LoadHipSymbol(const WorkerConfig& config, const char* symbol, void** out) {
  void* handle = nullptr;
  HIPR_RETURN_IF_ERROR(LoadHipModule(config, &handle));
  const std::string path = HipModulePath(config);
  *out = dlsym(handle, symbol);
  if (*out == nullptr) return Status(StatusCode::kNotSupported, path + " lacks " + symbol);
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

Status ProbeDevice(const WorkerConfig& config, std::string* summary) {
  if (config.device == "sim") {
    std::unique_ptr<sim::SimDevice> probe;
    sim::SimOptions o = SimOptionsOf(config);
    HIPR_RETURN_IF_ERROR(sim::SimDevice::Create(o, &probe));
    *summary = std::to_string(o.device_count) + " x " + probe->devices()[0].name + " (" +
               probe->devices()[0].gcn_arch_name + "), " + std::to_string(o.memory_bytes >> 20) + " MiB each";
    return Status::Ok();
  }
  if (config.device != "hip") return InvalidArgument("--device must be 'sim' or 'hip'");
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return Status(StatusCode::kInternal, "pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    close(pipefd[0]);
    char message[1024] = {};
    void* fn = nullptr;
    Status st = LoadHipSymbol(config, kHipProbeSymbol, &fn);
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

Status CreateDevice(const WorkerConfig& config, std::unique_ptr<Device>* out) {
  if (config.device == "sim") {
    std::unique_ptr<sim::SimDevice> device;
    HIPR_RETURN_IF_ERROR(sim::SimDevice::Create(SimOptionsOf(config), &device));
    *out = std::move(device);
    return Status::Ok();
  }
  void* fn = nullptr;
  HIPR_RETURN_IF_ERROR(LoadHipSymbol(config, kHipCreateSymbol, &fn));
  char message[1024] = {};
  Device* device = reinterpret_cast<HiprHipCreateFn>(fn)(message, sizeof message);
  if (device == nullptr) return Status(StatusCode::kDeviceLost, message);
  out->reset(device);
  return Status::Ok();
}

}  // namespace hipr::worker
