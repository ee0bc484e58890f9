#include "client_stub/device_props.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace hipr::client {
namespace {

constexpr uint64_t kInt32Max = static_cast<uint64_t>(std::numeric_limits<int32_t>::max());

int ClampToInt(uint64_t v) { return static_cast<int>(std::min(v, kInt32Max)); }

void CopyName(const std::string& from, char (&to)[256]) {
  const size_t n = std::min(from.size(), sizeof to - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

}  // namespace

namespace {

// The fields both layouts share (5.2's hipDeviceProp_t and 6.x's R0600 one
// name them alike).
template <class Prop>
void FillCommon(const msg::DeviceInfo& info, Prop* prop) {
  std::memset(prop, 0, sizeof *prop);
  CopyName(info.name, prop->name);
  prop->totalGlobalMem = info.total_global_mem;
  prop->sharedMemPerBlock = info.shared_mem_per_block;
  prop->regsPerBlock = info.regs_per_block;
  prop->warpSize = info.warp_size;
  prop->maxThreadsPerBlock = info.max_threads_per_block;
  for (int i = 0; i < 3; ++i) {
    prop->maxThreadsDim[i] = info.max_threads_dim[i];
    prop->maxGridSize[i] = info.max_grid_size[i];
  }
  prop->clockRate = info.clock_rate_khz;
  prop->memoryClockRate = info.memory_clock_rate_khz;
  prop->memoryBusWidth = info.memory_bus_width_bits;
  prop->totalConstMem = info.total_const_mem;
  prop->major = info.major;
  prop->minor = info.minor;
  prop->multiProcessorCount = info.multi_processor_count;
  prop->l2CacheSize = info.l2_cache_size;
  prop->maxThreadsPerMultiProcessor = info.max_threads_per_multiprocessor;
  prop->computeMode = 0;
  prop->clockInstructionRate = info.clock_instruction_rate_khz;
  // Feature bits the runtime reports for every AMD GPU.
  prop->arch.hasGlobalInt32Atomics = 1;
  prop->arch.hasGlobalFloatAtomicExch = 1;
  prop->arch.hasSharedInt32Atomics = 1;
  prop->arch.hasSharedFloatAtomicExch = 1;
  prop->arch.hasFloatAtomicAdd = 1;
  prop->arch.hasGlobalInt64Atomics = 1;
  prop->arch.hasSharedInt64Atomics = 1;
  prop->arch.hasDoubles = 1;
  prop->arch.hasWarpVote = 1;
  prop->arch.hasWarpBallot = 1;
  prop->arch.hasWarpShuffle = 1;
  prop->arch.hasFunnelShift = 0;
  prop->arch.hasThreadFenceSystem = 1;
  prop->arch.hasSyncThreadsExt = 0;
  prop->arch.hasSurfaceFuncs = 0;
  prop->arch.has3dGrid = 1;
  prop->arch.hasDynamicParallelism = 0;
  prop->concurrentKernels = 1;
  prop->pciDomainID = info.pci_domain_id;
  prop->pciBusID = info.pci_bus_id;
  prop->pciDeviceID = info.pci_device_id;
  prop->maxSharedMemoryPerMultiProcessor = info.max_shared_memory_per_multiprocessor;
  prop->isMultiGpuBoard = info.is_multi_gpu_board ? 1 : 0;
  prop->canMapHostMemory = 1;
  CopyName(info.gcn_arch_name, prop->gcnArchName);
  prop->integrated = info.integrated ? 1 : 0;
  prop->cooperativeLaunch = info.cooperative_launch ? 1 : 0;
  prop->maxTexture1D = info.max_texture_1d;
  prop->maxTexture1DLinear = info.max_texture_1d_linear;
  prop->maxTexture2D[0] = info.max_texture_2d[0];
  prop->maxTexture2D[1] = info.max_texture_2d[1];
  for (int i = 0; i < 3; ++i) prop->maxTexture3D[i] = info.max_texture_3d[i];
  prop->memPitch = info.mem_pitch;
  prop->textureAlignment = info.texture_alignment;
  prop->kernelExecTimeoutEnabled = 0;
  prop->ECCEnabled = info.ecc_enabled ? 1 : 0;
  prop->isLargeBar = info.large_bar ? 1 : 0;
  prop->asicRevision = info.asic_revision;
  prop->managedMemory = info.managed_memory ? 1 : 0;
  // hipr's managed memory (managed_vars.h) is coherent at synchronisations:
  // host code must not use it while device work runs.
  prop->concurrentManagedAccess = 0;
}

template <class Prop>
int Choose(const std::vector<msg::DeviceInfo>& devices, const Prop& wanted) {
  int chosen = 0;
  unsigned best = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    Prop have;
    FillCommon(devices[i], &have);
    unsigned asked = 0;
    unsigned met = 0;
    auto check = [&](auto want, auto got) {
      if (want != 0) {
        ++asked;
        if (got >= want) ++met;
      }
    };
    check(wanted.major, have.major);
    check(wanted.minor, have.minor);
    check(wanted.totalGlobalMem, have.totalGlobalMem);
    check(wanted.sharedMemPerBlock, have.sharedMemPerBlock);
    check(wanted.maxThreadsPerBlock, have.maxThreadsPerBlock);
    check(wanted.totalConstMem, have.totalConstMem);
    check(wanted.multiProcessorCount, have.multiProcessorCount);
    check(wanted.maxThreadsPerMultiProcessor, have.maxThreadsPerMultiProcessor);
    check(wanted.memoryClockRate, have.memoryClockRate);
    check(wanted.memoryBusWidth, have.memoryBusWidth);
    check(wanted.l2CacheSize, have.l2CacheSize);
    check(wanted.regsPerBlock, have.regsPerBlock);
    check(wanted.maxSharedMemoryPerMultiProcessor, have.maxSharedMemoryPerMultiProcessor);
    check(wanted.warpSize, have.warpSize);
    if (asked == met) {
      if (met > best) chosen = static_cast<int>(i);
      best = std::max(best, met);
    }
  }
  return chosen;
}

}  // namespace

void FillDeviceProp(const msg::DeviceInfo& info, hipDeviceProp_t* prop) {
  FillCommon(info, prop);
  prop->gcnArch = info.gcn_arch;  // 5.x only.
}

void FillDeviceProp(const msg::DeviceInfo& info, DevicePropR0600* prop) {
  FillCommon(info, prop);
  // Fields 6.x added that the runtime sets the same for every AMD device
  // it serves through hipr (as clr's ihipGetDeviceProperties does).
  prop->unifiedAddressing = 1;
  prop->streamPrioritiesSupported = 1;
  prop->cooperativeMultiDeviceLaunch = 0;
  prop->sharedMemPerMultiprocessor = info.max_shared_memory_per_multiprocessor;
  prop->sharedMemPerBlockOptin = info.shared_mem_per_block;
  if (info.uuid.size() == sizeof prop->uuid.bytes) std::memcpy(prop->uuid.bytes, info.uuid.data(), info.uuid.size());
}

hipError_t DeviceAttribute(const msg::DeviceInfo& info, hipDeviceAttribute_t attr, int* value) {
  int v = 0;
  switch (attr) {
    case hipDeviceAttributeEccEnabled: v = info.ecc_enabled; break;
    case hipDeviceAttributeCanMapHostMemory: v = 1; break;
    case hipDeviceAttributeClockRate: v = info.clock_rate_khz; break;
    case hipDeviceAttributeComputeMode: v = 0; break;
    case hipDeviceAttributeConcurrentKernels: v = 1; break;
    case hipDeviceAttributeConcurrentManagedAccess: v = 0; break;  // See FillCommon.
    case hipDeviceAttributeCooperativeLaunch: v = info.cooperative_launch; break;
    case hipDeviceAttributeIntegrated: v = info.integrated; break;
    case hipDeviceAttributeIsMultiGpuBoard: v = info.is_multi_gpu_board; break;
    case hipDeviceAttributeKernelExecTimeout: v = 0; break;
    case hipDeviceAttributeL2CacheSize: v = info.l2_cache_size; break;
    case hipDeviceAttributeComputeCapabilityMajor: v = info.major; break;
    case hipDeviceAttributeComputeCapabilityMinor: v = info.minor; break;
    case hipDeviceAttributeManagedMemory: v = info.managed_memory; break;
    case hipDeviceAttributeMaxBlocksPerMultiProcessor:
      if (info.max_threads_per_block <= 0) return hipErrorInvalidValue;
      v = info.max_threads_per_multiprocessor / info.max_threads_per_block;
      break;
    case hipDeviceAttributeMaxBlockDimX: v = info.max_threads_dim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: v = info.max_threads_dim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: v = info.max_threads_dim[2]; break;
    case hipDeviceAttributeMaxGridDimX: v = info.max_grid_size[0]; break;
    case hipDeviceAttributeMaxGridDimY: v = info.max_grid_size[1]; break;
    case hipDeviceAttributeMaxGridDimZ: v = info.max_grid_size[2]; break;
    case hipDeviceAttributeMaxTexture1DWidth: v = info.max_texture_1d; break;
    case hipDeviceAttributeMaxTexture1DLinear: v = info.max_texture_1d_linear; break;
    case hipDeviceAttributeMaxTexture2DWidth: v = info.max_texture_2d[0]; break;
    case hipDeviceAttributeMaxTexture2DHeight: v = info.max_texture_2d[1]; break;
    case hipDeviceAttributeMaxTexture3DWidth: v = info.max_texture_3d[0]; break;
    case hipDeviceAttributeMaxTexture3DHeight: v = info.max_texture_3d[1]; break;
    case hipDeviceAttributeMaxTexture3DDepth: v = info.max_texture_3d[2]; break;
    case hipDeviceAttributeMaxThreadsPerBlock: v = info.max_threads_per_block; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: v = info.max_threads_per_multiprocessor; break;
    case hipDeviceAttributeMaxPitch: v = ClampToInt(info.mem_pitch); break;
    case hipDeviceAttributeMemoryBusWidth: v = info.memory_bus_width_bits; break;
    case hipDeviceAttributeMemoryClockRate: v = info.memory_clock_rate_khz; break;
    case hipDeviceAttributeMultiprocessorCount: v = info.multi_processor_count; break;
    case hipDeviceAttributePciBusId: v = info.pci_bus_id; break;
    case hipDeviceAttributePciDeviceId: v = info.pci_device_id; break;
    case hipDeviceAttributePciDomainID: v = info.pci_domain_id; break;
    case hipDeviceAttributeMaxRegistersPerBlock: v = info.regs_per_block; break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: v = ClampToInt(info.shared_mem_per_block); break;
    case hipDeviceAttributeTextureAlignment: v = ClampToInt(info.texture_alignment); break;
    case hipDeviceAttributeTotalConstantMemory: v = ClampToInt(info.total_const_mem); break;
    case hipDeviceAttributeTotalGlobalMem: v = ClampToInt(info.total_global_mem); break;
    case hipDeviceAttributeWarpSize: v = info.warp_size; break;
    case hipDeviceAttributeClockInstructionRate: v = info.clock_instruction_rate_khz; break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor:
      v = ClampToInt(info.max_shared_memory_per_multiprocessor);
      break;
    case hipDeviceAttributeGcnArch: v = info.gcn_arch; break;
    case hipDeviceAttributeIsLargeBar: v = info.large_bar; break;
    case hipDeviceAttributeAsicRevision: v = info.asic_revision; break;
    default: return hipErrorInvalidValue;
  }
  *value = v;
  return hipSuccess;
}

int ChooseDevice(const std::vector<msg::DeviceInfo>& devices, const hipDeviceProp_t& wanted) {
  return Choose(devices, wanted);
}

int ChooseDevice(const std::vector<msg::DeviceInfo>& devices, const DevicePropR0600& wanted) {
  return Choose(devices, wanted);
}

}  // namespace hipr::client
