#include "worker_service/sim/models.h"

#include <cstring>

#include "worker_service/device_properties.h"

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
  int chip_id;            // PCI device id (hipDeviceAttributePciChipId).
  int asic_revision;
  int threads_per_cu;     // Resident waves per CU x 64.
  int registers_per_cu;   // Addressable VGPRs x 4 SIMDs x 64 lanes.
  int vgprs_per_thread;   // hipDeviceAttributeMaxAvailableVgprsPerThread.
  int wall_clock_khz;     // s_memrealtime (hipDeviceAttributeWallClockRate).
  int image_support;      // gfx94x has no image instructions.
  int xccs;               // Accelerator complex dies (hipDeviceAttributeNumberOfXccs).
};

// What each GPU reports through ROCm's HIP runtime (rocminfo/HIP dumps and
// AMD's published specifications; one GCD of an MI250X). MI300X's L2 is one
// XCD's 4 MiB, as HSA reports it; its memory clock the 1.3 GHz HIP reports.
// gfx90a/gfx908/gfx942 all have 64 KiB LDS per workgroup, wave64 and 1024
// threads per block.
constexpr Model kModels[] = {
    {"mi250x", "AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", 910, 110, 1700000, 1600000, 4096, 8 << 20, 9, 0,
     0x740c, 1, 2048, 131072, 512, 25000, 1, 1},
    {"mi210", "AMD Instinct MI210", "gfx90a:sramecc+:xnack-", 910, 104, 1700000, 1600000, 4096, 8 << 20, 9, 0,
     0x740f, 1, 2048, 131072, 512, 25000, 1, 1},
    {"mi100", "AMD Instinct MI100", "gfx908:sramecc+:xnack-", 908, 120, 1502000, 1200000, 4096, 8 << 20, 9, 0,
     0x738c, 2, 2560, 65536, 256, 25000, 1, 1},
    {"mi300x", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 942, 304, 2100000, 1300000, 8192, 4 << 20, 9, 4,
     0x74a1, 1, 2048, 131072, 512, 100000, 0, 8},
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
  d.regs_per_block = model->registers_per_cu;
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
  d.max_threads_per_multiprocessor = model->threads_per_cu;
  d.clock_instruction_rate_khz = 1000000;  // clr's constant (timeStampFrequency_).
  d.pci_domain_id = 0;
  d.pci_bus_id = 0xc1 + ordinal;
  d.pci_device_id = 0;  // The slot on its bus (hipDeviceProp_t::pciDeviceID): each sim device has a bus.
  d.max_shared_memory_per_multiprocessor = 64 << 10;
  d.is_multi_gpu_board = false;  // clr never sets it, not even on an MI250X.
  d.integrated = false;
  d.cooperative_launch = true;
  d.ecc_enabled = false;  // clr reports 0 on every device (errorCorrectionSupport_).
  d.managed_memory = true;
  d.large_bar = true;
  d.asic_revision = model->asic_revision;
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
  worker::FillRuntimeProperties(&d);
  using msg::DeviceProperty;
  msg::SetProperty(&d, DeviceProperty::kImageSupport, model->image_support);
  msg::SetProperty(&d, DeviceProperty::kFineGrainSupport, 1);
  msg::SetProperty(&d, DeviceProperty::kCanUseStreamWaitValue, 1);
  msg::SetProperty(&d, DeviceProperty::kWallClockRate, model->wall_clock_khz);
  msg::SetProperty(&d, DeviceProperty::kVirtualMemoryManagementSupported, 1);
  msg::SetProperty(&d, DeviceProperty::kNumberOfXccs, model->xccs);
  msg::SetProperty(&d, DeviceProperty::kMaxAvailableVgprsPerThread, model->vgprs_per_thread);
  msg::SetProperty(&d, DeviceProperty::kPciChipId, model->chip_id);
  msg::SetProperty(&d, DeviceProperty::kHostNumaId, -1);  // No NUMA node of the client's.
  msg::SetProperty(&d, DeviceProperty::kMemoryPoolSupportedHandleTypes, 0);
  *out = d;
  return Status::Ok();
}

}  // namespace hipr::worker::sim
