#include "worker_service/sim/models.h"

#include <cstring>

namespace hipr::worker::sim {
namespace {

struct Model {
  const char* key;
  const char* name;
  const char* arch;
  int gcn_arch;
  int compute_units;
  int clock_khz;
  int memory_clock_khz;
  int bus_width_bits;
  int l2_bytes;
  int major;
  int minor;
};

// gfx90a/gfx908/gfx942 all have 64 KiB LDS per workgroup, wave64, 1024
// threads per block, and 2048 resident threads per CU.
constexpr Model kModels[] = {
    {"mi250x", "AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", 910, 110, 1700000, 1600000, 4096,
     8 << 20, 9, 0},
    {"mi210", "AMD Instinct MI210", "gfx90a:sramecc+:xnack-", 910, 104, 1700000, 1600000, 4096,
     8 << 20, 9, 0},
    {"mi100", "AMD Instinct MI100", "gfx908:sramecc+:xnack-", 908, 120, 1502000, 1200000, 4096,
     8 << 20, 9, 0},
    {"mi300x", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 942, 304, 2100000, 2600000, 8192,
     4 << 20, 9, 4},
};

}  // namespace

std::vector<std::string> ModelNames() {
  std::vector<std::string> names;
  for (const Model& m : kModels) names.emplace_back(m.key);
  return names;
}

Status ModelInfo(const std::string& name, uint64_t memory_bytes, int ordinal, msg::DeviceInfo* out) {
  const Model* model = nullptr;
  for (const Model& m : kModels)
    if (name == m.key) model = &m;
  if (model == nullptr) return InvalidArgument("unknown sim model '" + name + "'");
  msg::DeviceInfo d;
  d.name = model->name;
  d.gcn_arch_name = model->arch;
  d.gcn_arch = model->gcn_arch;
  d.total_global_mem = memory_bytes;
  d.shared_mem_per_block = 64 << 10;
  d.regs_per_block = 65536;
  d.warp_size = 64;
  d.max_threads_per_block = 1024;
  d.max_threads_dim = {1024, 1024, 1024};
  d.max_grid_size = {2147483647, 65536, 65536};
  d.clock_rate_khz = model->clock_khz;
  d.memory_clock_rate_khz = model->memory_clock_khz;
  d.memory_bus_width_bits = model->bus_width_bits;
  d.total_const_mem = 2147483647;
  d.major = model->major;
  d.minor = model->minor;
  d.multi_processor_count = model->compute_units;
  d.l2_cache_size = model->l2_bytes;
  d.max_threads_per_multiprocessor = 2048;
  d.clock_instruction_rate_khz = 100000;  // The 100 MHz constant timer behind clock64/wall_clock64.
  d.pci_domain_id = 0;
  d.pci_bus_id = 0xc1 + ordinal;
  d.pci_device_id = 0;  // The slot on its bus (hipDeviceProp_t::pciDeviceID): each sim device has a bus.
  d.max_shared_memory_per_multiprocessor = 64 << 10;
  d.is_multi_gpu_board = std::string(model->key) == "mi250x";
  d.integrated = false;
  d.cooperative_launch = true;
  d.ecc_enabled = true;
  d.managed_memory = true;
  d.large_bar = true;
  d.asic_revision = 1;
  d.mem_pitch = 2147483647;
  d.texture_alignment = 256;
  d.max_texture_1d = 16384;
  d.max_texture_2d = {16384, 16384};
  d.max_texture_3d = {16384, 16384, 8192};
  // clr reports 16 bytes (the largest element) times the image-buffer
  // element limit, capped at INT32_MAX; the sim models the cap.
  d.max_texture_1d_linear = 2147483647;
  // The sim's virtual memory is pages of its address window.
  d.vmm_granularity = 4096;
  // A fixed UUID per (model, ordinal): "hipr-sim" then the model and the
  // ordinal, so one worker's devices differ and stay the same across runs.
  d.uuid = {'h', 'i', 'p', 'r', '-', 's', 'i', 'm'};
  for (size_t i = 0; i < 6; ++i) d.uuid.push_back(static_cast<uint8_t>(model->key[i % std::strlen(model->key)]));
  d.uuid.push_back(0);
  d.uuid.push_back(static_cast<uint8_t>(ordinal));
  *out = d;
  return Status::Ok();
}

}  // namespace hipr::worker::sim
