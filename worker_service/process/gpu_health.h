// GPU health for /metrics: temperature, power, utilisation, memory and ECC
// counts of the node's AMD GPUs, read through librocm-smi (Debian's
// librocm-smi64-1), which is loaded with dlopen at the first scrape of a
// `--device hip` worker: a node without it, or without a GPU it can see,
// serves every other metric and says why not once in the log. The metric
// names are those of AMD's device-metrics-exporter (gpu_edge_temperature,
// gpu_average_package_power, gpu_gfx_activity, gpu_used_vram, ...), with a
// `gpu_id` label, so one dashboard reads both. Two families are hipr's own
// (hipr_gpu_*): the throttle status of the GPU's metrics table and the GPU
// resets the driver reports (KFD SMI events), the worker's view of a hang.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hipr::worker {

struct GpuSample {
  uint32_t index = 0;
  std::optional<double> edge_celsius, junction_celsius, memory_celsius;
  std::optional<double> power_watts;     // Average package power.
  std::optional<double> gfx_activity;    // Percent busy.
  std::optional<double> used_vram_mb, total_vram_mb;
  std::optional<uint64_t> ecc_correctable, ecc_uncorrectable;  // Over every block.
  // The limiters (power, current, temperature) holding the clocks down now:
  // gpu_metrics' throttle_status, whose bits are ASIC-specific; 0: none.
  std::optional<uint32_t> throttle_status;
  // GPU resets (the driver's answer to a hang or a fatal RAS error) seen
  // since this GpuHealth was opened.
  std::optional<uint64_t> resets;
  // rsmi_dev_pci_id_get's BDFID: domain << 32 | bus << 8 | device << 3 |
  // function; how a HIP device is matched with its sample (hipr-smi).
  std::optional<uint64_t> pci_bdf;
};

// The BDFID of a HIP device's PCI location (function 0).
inline uint64_t PciBdf(uint32_t domain, uint32_t bus, uint32_t device) {
  return uint64_t{domain} << 32 | (bus & 0xffu) << 8 | (device & 0x1fu) << 3;
}

class GpuHealth {
 public:
  // librocm-smi's entry points used here, as its 5.x header
  // (rocm_smi/rocm_smi.h) declares them: enums are ints, status 0 is
  // success. Units: millidegrees Celsius, microwatts, bytes. The last five
  // may be missing: their families are then left out.
  struct Api {
    struct ErrorCount {  // rsmi_error_count_t
      uint64_t correctable;
      uint64_t uncorrectable;
    };
    struct Event {  // rsmi_evt_notification_data_t
      uint32_t device;
      int32_t type;
      char message[64];
    };
    int (*init)(uint64_t flags) = nullptr;
    int (*shut_down)() = nullptr;
    int (*count)(uint32_t*) = nullptr;
    int (*status_string)(int status, const char**) = nullptr;
    int (*temp)(uint32_t device, uint32_t sensor, int metric, int64_t*) = nullptr;
    int (*power)(uint32_t device, uint32_t sensor, uint64_t*) = nullptr;
    int (*busy)(uint32_t device, uint32_t*) = nullptr;
    int (*memory_total)(uint32_t device, int type, uint64_t*) = nullptr;
    int (*memory_usage)(uint32_t device, int type, uint64_t*) = nullptr;
    int (*ecc)(uint32_t device, uint64_t block, ErrorCount*) = nullptr;
    // Optional: rsmi_dev_gpu_metrics_info_get, into an rsmi_gpu_metrics_t.
    int (*gpu_metrics)(uint32_t device, void* table) = nullptr;
    // Optional: rsmi_event_notification_{init,mask_set,get,stop}.
    int (*event_init)(uint32_t device) = nullptr;
    int (*event_mask)(uint32_t device, uint64_t mask) = nullptr;
    int (*event_get)(int timeout_ms, uint32_t* count, Event* events) = nullptr;
    int (*event_stop)(uint32_t device) = nullptr;
    // Optional: rsmi_dev_pci_id_get.
    int (*pci_id)(uint32_t device, uint64_t* bdfid) = nullptr;
  };

  // Loads `library` (librocm_smi64.so.1 by default) and initialises it;
  // nullptr with `why` when it cannot, or it sees no GPU. `watch_resets`:
  // also listen for GPU resets (the metrics endpoint; a session process
  // answering hipr-smi does not).
  static std::unique_ptr<GpuHealth> Open(std::string* why, const char* library = "librocm_smi64.so.1",
                                         bool watch_resets = true);
  // The same with entry points the caller bound (tests: a double of the
  // library). `api` is copied.
  static std::unique_ptr<GpuHealth> OpenWith(const Api& api, std::string* why, bool watch_resets = true);
  ~GpuHealth();
  GpuHealth(const GpuHealth&) = delete;
  GpuHealth& operator=(const GpuHealth&) = delete;

  // One sample per GPU; a value the library or the GPU does not give is
  // left out. Takes the reset events that came since the last call: one
  // caller at a time (the acceptor's event loop); never blocks on them.
  std::vector<GpuSample> Read();

 private:
  GpuHealth() = default;
  // Listens for GPU resets on every GPU; logs why not once.
  void WatchResets();

  void* handle_ = nullptr;
  Api api_;
  bool initialised_ = false;
  uint32_t count_ = 0;
  bool watching_resets_ = false;
  std::vector<uint64_t> resets_;  // Per GPU, while watching_resets_.
};

// The metric families of `samples` in Prometheus' text format (nothing for
// none), and hipr_gpu_health_available.
std::string RenderGpuHealth(const std::vector<GpuSample>& samples, bool available);

}  // namespace hipr::worker
