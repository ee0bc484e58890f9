// GPU health for /metrics: temperature, power, utilisation, memory and ECC
// counts of the node's AMD GPUs, read through librocm-smi (Debian's
// librocm-smi64-1), which is loaded with dlopen at the first scrape of a
// `--device hip` worker: a node without it, or without a GPU it can see,
// serves every other metric and says why not once in the log. The metric
// names are those of AMD's device-metrics-exporter (gpu_edge_temperature,
// gpu_average_package_power, gpu_gfx_activity, gpu_used_vram, ...), with a
// `gpu_id` label, so one dashboard reads both.
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
};

class GpuHealth {
 public:
  // Loads `library` (librocm_smi64.so.1 by default) and initialises it;
  // nullptr with `why` when it cannot, or it sees no GPU.
  static std::unique_ptr<GpuHealth> Open(std::string* why, const char* library = "librocm_smi64.so.1");
  ~GpuHealth();
  GpuHealth(const GpuHealth&) = delete;
  GpuHealth& operator=(const GpuHealth&) = delete;

  // One sample per GPU; a value the library or the GPU does not give is
  // left out.
  std::vector<GpuSample> Read() const;

 private:
  struct Api;
  GpuHealth() = default;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  uint32_t count_ = 0;
};

// The metric families of `samples` in Prometheus' text format (nothing for
// none), and hipr_gpu_health_available.
std::string RenderGpuHealth(const std::vector<GpuSample>& samples, bool available);

}  // namespace hipr::worker
