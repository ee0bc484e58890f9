#include "worker_service/process/gpu_health.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdio>
#include <cstring>

namespace hipr::worker {
namespace {

constexpr int kTempEdge = 0, kTempJunction = 1, kTempMemory = 2;  // rsmi_temperature_type_t
constexpr int kTempCurrent = 0;                                    // rsmi_temperature_metric_t
constexpr int kMemVram = 0;                                        // rsmi_memory_type_t
constexpr uint64_t kFirstBlock = 1, kLastBlock = 1ull << 13;       // rsmi_gpu_block_t: UMC .. FUSE
constexpr int kStatusNoData = 14;                                  // RSMI_STATUS_NO_DATA
constexpr int kEventGpuPreReset = 3;                               // RSMI_EVT_NOTIF_GPU_PRE_RESET
// rsmi_event_notification_mask_set's mask: bit (event - 1).
constexpr uint64_t kResetMask = uint64_t{1} << (kEventGpuPreReset - 1);

// rsmi_gpu_metrics_t: the library fills its own version of the table
// (96 bytes in 5.x; later versions append fields, so the buffer is larger
// than any). Read here: the header's format revision (1: a discrete GPU's
// table, the layout below) and throttle_status, at its offset in every
// version of that layout.
constexpr size_t kMetricsTableBytes = 8192;
constexpr size_t kFormatRevisionOffset = 2;
constexpr size_t kThrottleStatusOffset = 68;
constexpr uint32_t kNotReported = 0xffffffffu;  // All ones: a field the GPU's table lacks.

template <class T>
bool Bind(void* handle, const char* name, T* out) {
  *out = reinterpret_cast<T>(dlsym(handle, name));
  return *out != nullptr;
}

std::string StatusText(const GpuHealth::Api& a, int status) {
  const char* text = nullptr;
  if (a.status_string != nullptr) a.status_string(status, &text);
  return text != nullptr ? text : "status " + std::to_string(status);
}

}  // namespace

std::unique_ptr<GpuHealth> GpuHealth::Open(std::string* why, const char* library, bool watch_resets) {
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = dlerror();
    *why = std::string("cannot load ") + library + " (Debian: librocm-smi64-1): " + (e != nullptr ? e : "?");
    return nullptr;
  }
  Api a;
  if (!Bind(handle, "rsmi_init", &a.init) || !Bind(handle, "rsmi_shut_down", &a.shut_down) ||
      !Bind(handle, "rsmi_num_monitor_devices", &a.count) || !Bind(handle, "rsmi_status_string", &a.status_string) ||
      !Bind(handle, "rsmi_dev_temp_metric_get", &a.temp) || !Bind(handle, "rsmi_dev_power_ave_get", &a.power) ||
      !Bind(handle, "rsmi_dev_busy_percent_get", &a.busy) ||
      !Bind(handle, "rsmi_dev_memory_total_get", &a.memory_total) ||
      !Bind(handle, "rsmi_dev_memory_usage_get", &a.memory_usage) || !Bind(handle, "rsmi_dev_ecc_count_get", &a.ecc)) {
    *why = std::string(library) + " lacks an entry point this worker reads";
    return nullptr;  // The library stays loaded (see ~GpuHealth).
  }
  Bind(handle, "rsmi_dev_gpu_metrics_info_get", &a.gpu_metrics);
  Bind(handle, "rsmi_dev_pci_id_get", &a.pci_id);
  if (!Bind(handle, "rsmi_event_notification_init", &a.event_init) ||
      !Bind(handle, "rsmi_event_notification_mask_set", &a.event_mask) ||
      !Bind(handle, "rsmi_event_notification_get", &a.event_get) ||
      !Bind(handle, "rsmi_event_notification_stop", &a.event_stop))
    a.event_init = nullptr;
  std::unique_ptr<GpuHealth> h = OpenWith(a, why, watch_resets);
  if (h != nullptr) h->handle_ = handle;
  return h;
}

std::unique_ptr<GpuHealth> GpuHealth::OpenWith(const Api& api, std::string* why, bool watch_resets) {
  std::unique_ptr<GpuHealth> h(new GpuHealth);
  h->api_ = api;
  const Api& a = h->api_;
  if (int st = a.init(0); st != 0) {
    *why = "rsmi_init failed: " + StatusText(a, st) + " (no AMD GPU visible to this process?)";
    return nullptr;
  }
  h->initialised_ = true;
  if (a.count(&h->count_) != 0 || h->count_ == 0) {
    *why = "librocm-smi sees no GPU";
    return nullptr;
  }
  if (watch_resets) h->WatchResets();
  return h;
}

void GpuHealth::WatchResets() {
  const Api& a = api_;
  if (a.event_init == nullptr || a.event_mask == nullptr || a.event_get == nullptr || a.event_stop == nullptr) {
    spdlog::warn("GPU resets not counted: librocm-smi lacks event notification");
    return;
  }
  // Needs /dev/kfd (as HIP does) and a kernel with KFD SMI events.
  for (uint32_t i = 0; i < count_; ++i) {
    int st = a.event_init(i);
    if (st == 0) {
      st = a.event_mask(i, kResetMask);
      if (st != 0) a.event_stop(i);
    }
    if (st != 0) {
      spdlog::warn("GPU resets not counted: librocm-smi event notification on GPU {}: {}", i, StatusText(a, st));
      for (uint32_t j = 0; j < i; ++j) a.event_stop(j);
      return;
    }
  }
  watching_resets_ = true;
  resets_.assign(count_, 0);
}

GpuHealth::~GpuHealth() {
  if (watching_resets_)
    for (uint32_t i = 0; i < count_; ++i) api_.event_stop(i);
  if (initialised_) api_.shut_down();
  // The library stays loaded: unloading a runtime library with threads of
  // its own is not safe.
}

std::vector<GpuSample> GpuHealth::Read() {
  const Api& a = api_;
  if (watching_resets_) {
    // The events queued since the last scrape, without waiting for more; a
    // bounded number of batches so a flood cannot hold the event loop.
    std::array<Api::Event, 32> events;
    for (int batch = 0; batch < 64; ++batch) {
      auto n = static_cast<uint32_t>(events.size());
      const int st = a.event_get(0, &n, events.data());
      if (st != 0) {
        if (st != kStatusNoData) spdlog::debug("rsmi_event_notification_get: {}", StatusText(a, st));
        break;
      }
      for (uint32_t e = 0; e < n && e < events.size(); ++e)
        if (events[e].type == kEventGpuPreReset && events[e].device < count_) {
          ++resets_[events[e].device];
          spdlog::warn("GPU {} is being reset by the driver (after a hang or a fatal RAS error; event {})",
                       events[e].device,
                       std::string(events[e].message, strnlen(events[e].message, sizeof events[e].message)));
        }
      if (n < events.size()) break;
    }
  }
  std::vector<GpuSample> out;
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
    if (a.gpu_metrics != nullptr) {
      std::vector<uint64_t> table(kMetricsTableBytes / sizeof(uint64_t), 0);
      const auto* bytes_of = reinterpret_cast<const unsigned char*>(table.data());
      uint32_t throttle = kNotReported;
      if (a.gpu_metrics(i, table.data()) == 0 && bytes_of[kFormatRevisionOffset] == 1)
        std::memcpy(&throttle, bytes_of + kThrottleStatusOffset, sizeof throttle);
      if (throttle != kNotReported) s.throttle_status = throttle;
    }
    if (watching_resets_) s.resets = resets_[i];
    if (uint64_t bdf = 0; a.pci_id != nullptr && a.pci_id(i, &bdf) == 0) s.pci_bdf = bdf;
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
      {"hipr_gpu_throttle_status", "gauge",
       "Limiters (power, current, temperature) holding the GPU's clocks down now: throttle_status of its metrics "
       "table (librocm-smi); 0 when none, the bits are ASIC-specific.",
       [](const GpuSample& s) {
         return s.throttle_status ? std::optional<double>(static_cast<double>(*s.throttle_status)) : std::nullopt;
       }},
      {"hipr_gpu_resets_total", "counter",
       "GPU resets the driver reported (KFD event through librocm-smi), after a hang or a fatal RAS error, since "
       "the first scrape.",
       [](const GpuSample& s) {
         return s.resets ? std::optional<double>(static_cast<double>(*s.resets)) : std::nullopt;
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
