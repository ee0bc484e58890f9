#include "client_stub/kernels/kernel_launch.h"

#include <algorithm>
#include <cstring>

#include "client_stub/graphs/graph.h"
#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"

namespace hipr::client {
namespace {

constexpr uint64_t kMaxGlobalSize = UINT32_MAX;

int RoundUp(int v, int to) { return to <= 0 ? v : (v + to - 1) / to * to; }

// The per-CU resources the occupancy model uses (see the header).
struct CuModel {
  int wave = 64;
  int waves_per_simd = 8;
  int simds = 4;
  int vgprs_per_simd = 256;
  uint64_t lds = 0;
  int max_block = 1024;  // The device's and the kernel's limit.
};

CuModel ModelOf(const msg::DeviceInfo& d, const co::KernelInfo& k) {
  CuModel m;
  m.wave = k.wavefront_size != 0 ? static_cast<int>(k.wavefront_size) : d.warp_size > 0 ? d.warp_size : 64;
  m.waves_per_simd = d.major >= 10 ? 16 : 8;
  const int threads_per_cu = d.max_threads_per_multiprocessor > 0 ? d.max_threads_per_multiprocessor : 2048;
  m.simds = std::max(1, threads_per_cu / (m.wave * m.waves_per_simd));
  const std::string& arch = d.gcn_arch_name;
  m.vgprs_per_simd = arch.starts_with("gfx90a") || arch.starts_with("gfx94") ? 512 : 256;
  m.lds = d.max_shared_memory_per_multiprocessor != 0 ? d.max_shared_memory_per_multiprocessor
                                                       : d.shared_mem_per_block;
  m.max_block = d.max_threads_per_block > 0 ? d.max_threads_per_block : 1024;
  if (k.max_flat_workgroup_size != 0) m.max_block = std::min<int>(m.max_block, k.max_flat_workgroup_size);
  return m;
}

// Threads one CU can hold at once, limited by wave slots and VGPRs.
int AluThreads(const CuModel& m, const co::KernelInfo& k) {
  int waves = m.waves_per_simd;
  if (k.vgpr_count > 0) waves = std::min(waves, m.vgprs_per_simd / RoundUp(static_cast<int>(k.vgpr_count), 8));
  return m.simds * std::max(waves, 0) * m.wave;
}

// Blocks per CU that LDS allows (a large number when none is used).
int LdsBlocks(const CuModel& m, const co::KernelInfo& k, size_t dynamic_shared) {
  const uint64_t used = uint64_t{k.group_segment_fixed_size} + dynamic_shared;
  if (used == 0) return INT32_MAX;
  return static_cast<int>(std::min<uint64_t>(m.lds / used, INT32_MAX));
}

}  // namespace

hipError_t SetShape(dim3 grid, dim3 block, LaunchSpec* spec) {
  const uint32_t g[3] = {grid.x, grid.y, grid.z};
  const uint32_t b[3] = {block.x, block.y, block.z};
  for (int i = 0; i < 3; ++i) {
    if (uint64_t{g[i]} * b[i] > kMaxGlobalSize) return hipErrorInvalidConfiguration;
    spec->grid[i] = g[i];
    spec->block[i] = b[i];
  }
  return hipSuccess;
}

hipError_t ParseExtra(void** extra, KernelArgs* args) {
  bool have_pointer = false;
  bool have_size = false;
  const void* pointer = nullptr;
  size_t size = 0;
  // Pairs of (key, value) up to HIP_LAUNCH_PARAM_END; a bound keeps a
  // missing terminator from walking off through memory.
  for (int i = 0; i < 16; i += 2) {
    void* key = extra[i];
    if (key == HIP_LAUNCH_PARAM_END) {
      if (!have_pointer || !have_size) return hipErrorInvalidValue;
      args->buffer = pointer;
      args->buffer_size = size;
      args->has_buffer = true;
      return hipSuccess;
    }
    if (key == HIP_LAUNCH_PARAM_BUFFER_POINTER) {
      pointer = extra[i + 1];
      have_pointer = true;
    } else if (key == HIP_LAUNCH_PARAM_BUFFER_SIZE) {
      if (extra[i + 1] == nullptr) return hipErrorInvalidValue;
      size = *static_cast<const size_t*>(extra[i + 1]);
      have_size = true;
    } else {
      return hipErrorInvalidValue;
    }
  }
  return hipErrorInvalidValue;
}

Status PackKernargs(const co::KernelInfo& kernel, const KernelArgs& args, std::vector<uint8_t>* out) {
  const uint32_t bytes = kernel.explicit_kernarg_size();
  if (bytes > wire::kMaxMsgpackBin)
    return HipStatus(hipErrorInvalidValue, "kernel '" + kernel.name + "' has " + std::to_string(bytes) +
                                               " bytes of arguments, more than hipr can send");
  out->assign(bytes, 0);
  if (args.has_buffer) {
    const size_t have = args.buffer == nullptr ? 0 : args.buffer_size;
    if (have < bytes && !args.short_buffer_reads_zero)
      return HipStatus(hipErrorInvalidValue, "kernel '" + kernel.name + "' takes " + std::to_string(bytes) +
                                                 " bytes of arguments; the launch gave " + std::to_string(have));
    const auto* src = static_cast<const uint8_t*>(args.buffer);
    for (const co::KernelArg& a : kernel.args) {
      if (a.hidden() || a.offset >= have) continue;
      std::memcpy(out->data() + a.offset, src + a.offset, std::min<size_t>(a.size, have - a.offset));
    }
    return Status::Ok();
  }
  size_t i = 0;
  for (const co::KernelArg& a : kernel.args) {
    if (a.hidden()) continue;
    if (args.pointers == nullptr || args.pointers[i] == nullptr)
      return HipStatus(hipErrorInvalidValue, "argument " + std::to_string(i) + " of kernel '" + kernel.name +
                                                 "' is missing");
    if (a.size != 0) std::memcpy(out->data() + a.offset, args.pointers[i], a.size);
    ++i;
  }
  return Status::Ok();
}

Status CheckLaunch(const msg::DeviceInfo& d, const co::KernelInfo& k, const LaunchSpec& spec) {
  uint64_t threads = 1;
  for (int i = 0; i < 3; ++i) {
    if (spec.grid[i] == 0 || spec.block[i] == 0)
      return HipStatus(hipErrorInvalidValue, "a grid or block dimension is zero");
    threads *= spec.block[i];
  }
  for (int i = 0; i < 3; ++i)
    if (d.max_threads_dim[i] > 0 && spec.block[i] > static_cast<uint32_t>(d.max_threads_dim[i]))
      return HipStatus(hipErrorInvalidConfiguration, "block dimension " + std::to_string(i) + " (" +
                                                         std::to_string(spec.block[i]) + ") exceeds the device's " +
                                                         std::to_string(d.max_threads_dim[i]));
  if (d.max_threads_per_block > 0 && threads > static_cast<uint64_t>(d.max_threads_per_block))
    return HipStatus(hipErrorInvalidConfiguration, "a block of " + std::to_string(threads) +
                                                       " threads exceeds the device's " +
                                                       std::to_string(d.max_threads_per_block));
  if (k.max_flat_workgroup_size != 0 && threads > k.max_flat_workgroup_size)
    return HipStatus(hipErrorLaunchFailure, "a block of " + std::to_string(threads) + " threads exceeds the " +
                                                std::to_string(k.max_flat_workgroup_size) +
                                                " of kernel '" + k.name + "' (its launch bounds)");
  if (d.shared_mem_per_block != 0 && k.group_segment_fixed_size + spec.shared_bytes > d.shared_mem_per_block)
    return HipStatus(hipErrorInvalidValue, "kernel '" + k.name + "' needs " +
                                               std::to_string(k.group_segment_fixed_size + spec.shared_bytes) +
                                               " bytes of shared memory; the device has " +
                                               std::to_string(d.shared_mem_per_block) + " per block");
  if (spec.flags & msg::kLaunchCooperative) {
    if (!d.cooperative_launch) return HipStatus(hipErrorLaunchFailure, "the device has no cooperative launch");
    const uint64_t blocks = uint64_t{spec.grid[0]} * spec.grid[1] * spec.grid[2];
    const int per_cu = MaxActiveBlocksPerCu(d, k, static_cast<int>(threads), spec.shared_bytes);
    const uint64_t resident = uint64_t(std::max(per_cu, 0)) * std::max(d.multi_processor_count, 1);
    if (blocks > resident)
      return HipStatus(hipErrorCooperativeLaunchTooLarge,
                       "a cooperative grid of " + std::to_string(blocks) + " blocks exceeds the " +
                           std::to_string(resident) + " that can be resident at once");
  }
  return Status::Ok();
}

namespace {

// The checks and the request of a launch, not yet sent.
Status PrepareLaunch(Remote& session, CodeModule& module, const std::string& name, const LaunchSpec& spec,
                     const KernelArgs& args, msg::LaunchRequest* request, KernelBinding* binding,
                     std::shared_ptr<const IsaImage>* image_out, const co::KernelInfo** kernel_out) {
  if (spec.device < 0 || spec.device >= session.device_count())
    return HipStatus(hipErrorInvalidDevice, "device " + std::to_string(spec.device) + " does not exist");
  const msg::DeviceInfo& device = session.devices()[spec.device];
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo* kernel = nullptr;
  // After the kernel's first launch in this session: one lookup under one
  // lock (the binding's load holds the image it was bound from).
  const bool bound = module.FindBound(session, spec.device, name, binding);
  if (bound) {
    image = binding->load->image;
    kernel = binding->kernel;
  } else {
    // The metadata comes from the local image: invalid launches are refused
    // before the module's first use costs a round trip.
    HIPR_RETURN_IF_ERROR(module.Image(device.gcn_arch_name, &image));
    kernel = image->FindKernel(name);
    if (kernel == nullptr)
      return HipStatus(hipErrorInvalidDeviceFunction,
                       "module " + module.name() + " has no kernel '" + name + "' for " + device.gcn_arch_name);
  }
  HIPR_RETURN_IF_ERROR(CheckLaunch(device, *kernel, spec));
  HIPR_RETURN_IF_ERROR(PackKernargs(*kernel, args, &request->kernarg));
  if (!bound) HIPR_RETURN_IF_ERROR(module.Bind(session, spec.device, name, binding));
  request->device = spec.device;
  request->stream = spec.stream;
  request->module = binding->load->id;
  request->function = binding->function_id;
  if (binding->first_launch) request->kernel = name;
  request->grid = spec.grid;
  request->block = spec.block;
  request->shared_bytes = static_cast<uint32_t>(spec.shared_bytes);
  request->flags = spec.flags;
  request->start_event = spec.start_event;
  request->stop_event = spec.stop_event;
  request->global = spec.global;
  *kernel_out = kernel;  // Lives as long as *image_out.
  *image_out = std::move(image);
  return Status::Ok();
}

}  // namespace

namespace {

// `request` (prepared for `kernel`) as a graph node.
KernelNode MakeKernelNode(msg::LaunchRequest request, const co::KernelInfo& kernel, const LaunchSpec& spec,
                          const std::string& name) {
  KernelNode node;
  node.request = std::move(request);
  // A graph node may be the first launch the worker sees, at any time.
  node.request.kernel = name;
  node.func = spec.func;
  for (const co::KernelArg& a : kernel.args)
    if (!a.hidden()) node.arg_offsets.push_back(a.offset);
  return node;
}

}  // namespace

Status BuildKernelNode(Remote& session, CodeModule& module, const std::string& name, const LaunchSpec& spec,
                       const KernelArgs& args, KernelNode* node) {
  msg::LaunchRequest request;
  KernelBinding binding;
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo* kernel = nullptr;
  HIPR_RETURN_IF_ERROR(PrepareLaunch(session, module, name, spec, args, &request, &binding, &image, &kernel));
  *node = MakeKernelNode(std::move(request), *kernel, spec, name);
  return Status::Ok();
}

Status LaunchKernel(Client& client, Remote& session, ManagedHooks& managed, GraphRegistry& graphs, CodeModule& module,
                    const std::string& name, const LaunchSpec& spec, const KernelArgs& args) {
  msg::LaunchRequest request;
  KernelBinding binding;
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo* kernel = nullptr;
  HIPR_RETURN_IF_ERROR(PrepareLaunch(session, module, name, spec, args, &request, &binding, &image, &kernel));
  if (graphs.AnyCapture()) {
    hipError_t captured = hipSuccess;
    if (request.start_event == 0 && request.stop_event == 0) {
      if (graphs.CaptureNode(spec.device, spec.stream, MakeKernelNode(request, *kernel, spec, name), &captured))
        return captured == hipSuccess ? Status::Ok() : HipStatus(captured, "the stream's capture refused the launch");
    } else if (graphs.CaptureNode(spec.device, spec.stream, EmptyNode{}, &captured)) {
      // Launches that record events (hipExtLaunchKernel) are not captured.
      return HipStatus(hipErrorStreamCaptureUnsupported, "a launch with events cannot be captured");
    }
  }
  if (!managed.empty()) {
    std::vector<uint32_t> pointers;
    for (const co::KernelArg& a : kernel->args)
      if (!a.hidden() && a.value_kind == "global_buffer" && a.size == sizeof(uint64_t)) pointers.push_back(a.offset);
    HIPR_RETURN_IF_ERROR(managed.BeforeLaunch(client, session, spec.device, spec.stream, pointers, &request.kernarg));
  }
  HIPR_RETURN_IF_ERROR(session.Post<wire::Op::kLaunchKernel>(request));
  stats::Add(stats::Get().launches);
  // Posts are queued in order: launches bound from now on follow this one.
  if (binding.first_launch) module.MarkNamed(*binding.load, name);
  return Status::Ok();
}

int MaxActiveBlocksPerCu(const msg::DeviceInfo& d, const co::KernelInfo& k, int block_size, size_t dynamic_shared) {
  const CuModel m = ModelOf(d, k);
  if (block_size <= 0 || block_size > m.max_block) return 0;
  const int blocks = AluThreads(m, k) / RoundUp(block_size, m.wave);
  return std::min(blocks, LdsBlocks(m, k, dynamic_shared));
}

void MaxPotentialBlockSize(const msg::DeviceInfo& d, const co::KernelInfo& k, size_t dynamic_shared,
                           int block_size_limit, int* grid_size, int* block_size) {
  const CuModel m = ModelOf(d, k);
  const int limit = block_size_limit <= 0 || block_size_limit > m.max_block ? m.max_block : block_size_limit;
  const int alu = AluThreads(m, k);
  // The largest whole number of waves within the limit (the limit itself
  // when it is below one wave), no more than a CU holds.
  int best = limit >= m.wave ? limit / m.wave * m.wave : limit;
  best = std::max(1, std::min(best, std::max(alu, 1)));
  const int per_cu = std::min(alu / RoundUp(best, m.wave), LdsBlocks(m, k, dynamic_shared));
  *block_size = best;
  *grid_size = std::max(per_cu, 0) * std::max(d.multi_processor_count, 1);
}

hipFuncAttributes FunctionAttributes(const msg::DeviceInfo& d, const co::KernelInfo& k) {
  hipFuncAttributes a{};
  const uint64_t lds = d.shared_mem_per_block;
  a.binaryVersion = d.major * 10 + d.minor;
  a.ptxVersion = a.binaryVersion;
  a.cacheModeCA = 0;
  a.constSizeBytes = 0;
  a.localSizeBytes = k.private_segment_fixed_size;
  a.sharedSizeBytes = k.group_segment_fixed_size;
  a.maxDynamicSharedSizeBytes = lds > k.group_segment_fixed_size ? static_cast<int>(lds - k.group_segment_fixed_size) : 0;
  a.maxThreadsPerBlock = k.max_flat_workgroup_size != 0 ? static_cast<int>(k.max_flat_workgroup_size)
                                                        : d.max_threads_per_block;
  a.numRegs = static_cast<int>(k.vgpr_count);
  a.preferredShmemCarveout = 0;
  return a;
}

hipError_t FunctionAttribute(const msg::DeviceInfo& d, const co::KernelInfo& k, hipFunction_attribute attribute,
                             int* value) {
  const hipFuncAttributes a = FunctionAttributes(d, k);
  switch (attribute) {
    case HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = a.maxThreadsPerBlock; break;
    case HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *value = static_cast<int>(a.sharedSizeBytes); break;
    case HIP_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *value = static_cast<int>(a.constSizeBytes); break;
    case HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *value = static_cast<int>(a.localSizeBytes); break;
    case HIP_FUNC_ATTRIBUTE_NUM_REGS: *value = a.numRegs; break;
    case HIP_FUNC_ATTRIBUTE_PTX_VERSION: *value = a.ptxVersion; break;
    case HIP_FUNC_ATTRIBUTE_BINARY_VERSION: *value = a.binaryVersion; break;
    case HIP_FUNC_ATTRIBUTE_CACHE_MODE_CA: *value = a.cacheModeCA; break;
    case HIP_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *value = a.maxDynamicSharedSizeBytes; break;
    case HIP_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *value = a.preferredShmemCarveout; break;
    default: return hipErrorInvalidValue;
  }
  return hipSuccess;
}

}  // namespace hipr::client
