#include "worker_service/gpu_health.h"

#include <dlfcn.h>

#include <cstdio>

namespace hipr::worker {

// librocm-smi's entry points used here, as its 5.x header declares them
// (rocm_smi/rocm_smi.h): enums are ints, status 0 is success. Units:
// millidegrees Celsius, microwatts, bytes.
struct GpuHealth::Api {
  using Init = int (*)(uint64_t);
  using ShutDown = int (*)();
  using Count = int (*)(uint32_t*);
  using StatusString = int (*)(int, const char**);
  using Temp = int (*)(uint32_t, uint32_t, int, int64_t*);
  using Power = int (*)(uint32_t, uint32_t, uint64_t*);
  using Busy = int (*)(uint32_t, uint32_t*);
  using Memory = int (*)(uint32_t, int, uint64_t*);
  struct ErrorCount {
    uint64_t correctable;
    uint64_t uncorrectable;
  };
  using Ecc = int (*)(uint32_t, uint64_t, ErrorCount*);

  Init init = nullptr;
  ShutDown shut_down = nullptr;
  Count count = nullptr;
  StatusString status_string = nullptr;
  Temp temp = nullptr;
  Power power = nullptr;
  Busy busy = nullptr;
  Memory memory_total = nullptr;
  Memory memory_usage = nullptr;
  Ecc ecc = nullptr;
};

namespace {

constexpr int kTempEdge = 0, kTempJunction = 1, kTempMemory = 2;  // rsmi_temperature_type_t
constexpr int kTempCurrent = 0;                                    // rsmi_temperature_metric_t
constexpr int kMemVram = 0;                                        // rsmi_memory_type_t
constexpr uint64_t kFirstBlock = 1, kLastBlock = 1ull << 13;       // rsmi_gpu_block_t: UMC .. FUSE

template <class T>
bool Bind(void* handle, const char* name, T* out) {
  *out = reinterpret_cast<T>(dlsym(handle, name));
  return *out != nullptr;
}

}  // namespace

std::unique_ptr<GpuHealth> GpuHealth::Open(std::string* why, const char* library) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    *why = std::string("cannot load ") + library + " (Debian: librocm-smi64-1): " + (e != nullptr ? e : "?");
    return nullptr;
  }
  std::unique_ptr<GpuHealth> h(new GpuHealth);
  h->handle_ = handle;
  h->api_ = std::make_unique<Api>();
  Api& a = *h->api_;
  if (!Bind(handle, "rsmi_init", &a.init) || !Bind(handle, "rsmi_shut_down", &a.shut_down) ||
      !Bind(handle, "rsmi_num_monitor_devices", &a.count) || !Bind(handle, "rsmi_status_string", &a.status_string) ||
      !Bind(handle, "rsmi_dev_temp_metric_get", &a.temp) || !Bind(handle, "rsmi_dev_power_ave_get", &a.power) ||
      !Bind(handle, "rsmi_dev_busy_percent_get", &a.busy) ||
      !Bind(handle, "rsmi_dev_memory_total_get", &a.memory_total) ||
      !Bind(handle, "rsmi_dev_memory_usage_get", &a.memory_usage) || !Bind(handle, "rsmi_dev_ecc_count_get", &a.ecc)) {
    *why = std::string(library) + " lacks an entry point this worker reads";
    a.init = nullptr;  // Nothing to shut down.
    return nullptr;
  }
  if (int st = a.init(0); st != 0) {
    const char* text = nullptr;
    a.status_string(st, &text);
    *why = std::string("rsmi_init failed: ") + (text != nullptr ? text : std::to_string(st)) +
           " (no AMD GPU visible to this process?)";
    a.init = nullptr;
    return nullptr;
  }
  if (a.count(&h->count_) != 0 || h->count_ == 0) {
    *why = "librocm-smi sees no GPU";
    return nullptr;
  }
  return h;
}

GpuHealth::~GpuHealth() {
  if (api_ != nullptr && api_->init != nullptr) api_->shut_down();
  // The library stays loaded: unloading a runtime library with threads of
  // its own is not safe.
}

std::vector<GpuSample> GpuHealth::Read() const {
  std::vector<GpuSample> out;
  const Api& a = *api_;
  for (uint32_t i = 0; i < count_; ++i) {
    GpuSample s;
    s.index = i;
    const std::pair<int, std::optional<double>*> temps[] = {
        {kTempEdge, &s.edge_celsius}, {kTempJunction, &s.junction_celsius}, {kTempMemory, &s.memory_celsius}};
    for (const auto& [sensor, into] : temps) {
      int64_t milli = 0;
      if (a.temp(i, static_cast<uint32_t>(sensor), kTempCurrent, &milli) == 0) *into = static_cast<double>(milli) / 1000.0;
    }
    uint64_t microwatts = 0;
    if (a.power(i, 0, &microwatts) == 0) s.power_watts = static_cast<double>(microwatts) / 1e6;
    uint32_t busy = 0;
    if (a.busy(i, &busy) == 0) s.gfx_activity = busy;
    uint64_t bytes = 0;
    if (a.memory_usage(i, kMemVram, &bytes) == 0) s.used_vram_mb = static_cast<double>(bytes) / (1 << 20);
    if (a.memory_total(i, kMemVram, &bytes) == 0) s.total_vram_mb = static_cast<double>(bytes) / (1 << 20);
    uint64_t correctable = 0, uncorrectable = 0;
    bool any = false;
    for (uint64_t block = kFirstBlock; block <= kLastBlock; block <<= 1) {
      Api::ErrorCount ec{};
      if (a.ecc(i, block, &ec) != 0) continue;
      correctable += ec.correctable;
      uncorrectable += ec.uncorrectable;
      any = true;
    }
    if (any) {
      s.ecc_correctable = correctable;
      s.ecc_uncorrectable = uncorrectable;
    }
    out.push_back(s);
  }
  return out;
}

namespace {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::string RenderGpuHealth(const std::vector<GpuSample>& samples, bool available) {
  std::string out;
  out += "# HELP hipr_gpu_health_available 1 when GPU health comes from librocm-smi (the gpu_* families); 0 when "
         "it cannot (the log says why once).\n# TYPE hipr_gpu_health_available gauge\n";
  out += std::string("hipr_gpu_health_available ") + (available ? "1" : "0") + "\n";
  struct Family {
    const char* name;
    const char* type;
    const char* help;
    std::optional<double> (*get)(const GpuSample&);
  };
  static const Family kFamilies[] = {
      {"gpu_edge_temperature", "gauge", "Current edge temperature in Celsius (librocm-smi).",
       [](const GpuSample& s) { return s.edge_celsius; }},
      {"gpu_junction_temperature", "gauge", "Current junction/hotspot temperature in Celsius (librocm-smi).",
       [](const GpuSample& s) { return s.junction_celsius; }},
      {"gpu_memory_temperature", "gauge", "Current memory temperature in Celsius (librocm-smi).",
       [](const GpuSample& s) { return s.memory_celsius; }},
      {"gpu_average_package_power", "gauge", "Average package power in Watts (librocm-smi).",
       [](const GpuSample& s) { return s.power_watts; }},
      {"gpu_gfx_activity", "gauge", "Graphics engine busy, percent (librocm-smi).",
       [](const GpuSample& s) { return s.gfx_activity; }},
      {"gpu_used_vram", "gauge", "VRAM in use in MB (librocm-smi).",
       [](const GpuSample& s) { return s.used_vram_mb; }},
      {"gpu_total_vram", "gauge", "VRAM in MB (librocm-smi).", [](const GpuSample& s) { return s.total_vram_mb; }},
      {"gpu_ecc_correct_total", "counter", "Correctable ECC errors over every block (librocm-smi).",
       [](const GpuSample& s) {
         return s.ecc_correctable ? std::optional<double>(static_cast<double>(*s.ecc_correctable)) : std::nullopt;
       }},
      {"gpu_ecc_uncorrect_total", "counter", "Uncorrectable ECC errors over every block (librocm-smi).",
       [](const GpuSample& s) {
         return s.ecc_uncorrectable ? std::optional<double>(static_cast<double>(*s.ecc_uncorrectable)) : std::nullopt;
       }},
  };
  for (const Family& f : kFamilies) {
    std::string lines;
    for (const GpuSample& s : samples)
      if (std::optional<double> v = f.get(s))
        lines += std::string(f.name) + "{gpu_id=\"" + std::to_string(s.index) + "\"} " + Number(*v) + "\n";
    if (lines.empty()) continue;
    out += std::string("# HELP ") + f.name + " " + f.help + "\n# TYPE " + f.name + " " + f.type + "\n" + lines;
  }
  return out;
}

}  // namespace hipr::worker
