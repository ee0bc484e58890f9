#include "worker_service/sim/models.h"

#include <algorithm>
#include <cstring>

#include "worker_service/device/device_properties.h"

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
  // A fixed UUID per (model, ordinal): "hipr-sim", the model and the
  // ordinal in two hex digits, so one worker's devices differ and stay the
  // same across runs. Printable, as a GPU's 16 characters are, so that
  // "GPU-hipr-simmi250x01" selects device 1 in HIP_VISIBLE_DEVICES.
  d.uuid = {'h', 'i', 'p', 'r', '-', 's', 'i', 'm'};
  for (size_t i = 0; i < 6; ++i) d.uuid.push_back(static_cast<uint8_t>(model->key[i % std::strlen(model->key)]));
  d.uuid.push_back(static_cast<uint8_t>("0123456789abcdef"[(ordinal >> 4) & 15]));
  d.uuid.push_back(static_cast<uint8_t>("0123456789abcdef"[ordinal & 15]));
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
  msg::SetProperty(&d, DeviceProperty::kMemoryPoolSupportedHandleTypes, 0);
  *out = d;
  return Status::Ok();
}

uint64_t CooperativeBlockLimit(const msg::DeviceInfo& d, const co::KernelInfo& k, uint32_t block_threads,
                               uint64_t dynamic_shared) {
  const uint64_t wave = k.wavefront_size != 0 ? k.wavefront_size : d.warp_size > 0 ? d.warp_size : 64;
  const uint64_t waves_per_simd = d.major >= 10 ? 16 : 8;
  const uint64_t threads_per_cu = d.max_threads_per_multiprocessor > 0 ? d.max_threads_per_multiprocessor : 2048;
  const uint64_t simds = std::max<uint64_t>(1, threads_per_cu / (wave * waves_per_simd));
  const std::string& arch = d.gcn_arch_name;
  const uint64_t vgprs_per_simd = arch.starts_with("gfx90a") || arch.starts_with("gfx94") ? 512 : 256;
  uint64_t max_block = d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
  if (k.max_flat_workgroup_size != 0) max_block = std::min<uint64_t>(max_block, k.max_flat_workgroup_size);
  if (block_threads == 0 || block_threads > max_block) return 0;
  uint64_t waves = waves_per_simd;
  if (k.vgpr_count > 0) waves = std::min(waves, vgprs_per_simd / ((k.vgpr_count + 7) / 8 * 8));
  const uint64_t alu_threads = simds * waves * wave;
  uint64_t per_cu = alu_threads / ((block_threads + wave - 1) / wave * wave);
  const uint64_t lds = d.max_shared_memory_per_multiprocessor != 0 ? d.max_shared_memory_per_multiprocessor
                                                                    : d.shared_mem_per_block;
  const uint64_t lds_used = uint64_t{k.group_segment_fixed_size} + dynamic_shared;
  if (lds_used != 0) per_cu = std::min(per_cu, lds / lds_used);
  return per_cu * static_cast<uint64_t>(std::max(d.multi_processor_count, 1));
}

}  // namespace hipr::worker::sim
