#include "client_stub/abi/device_props.h"

#include "protocol/device_properties.h"

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

using P = msg::DeviceProperty;

// A named property as the int most fields are; 0 when the worker sent none.
int Named(const msg::PropertyTable& t, P p) {
  const int64_t v = t.Or(p, 0);
  return static_cast<int>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(), kInt32Max));
}

// The fields both layouts share (5.2's hipDeviceProp_t and 6.x's R0600 one
// name them alike).
template <class Prop>
void FillCommon(const msg::DeviceInfo& info, const msg::PropertyTable& named, Prop* prop) {
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
  // The remote device cannot reach this process's host memory
  // (hipHostGetDevicePointer is hipErrorNotSupported): no mapped host memory.
  prop->canMapHostMemory = 0;
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
  // Fields both layouts have, from the worker's named properties.
  prop->texturePitchAlignment = Named(named, P::kTexturePitchAlignment);
  prop->cooperativeMultiDeviceLaunch = 0;  // hipr refuses multi-device cooperative launches.
  prop->cooperativeMultiDeviceUnmatchedFunc = 0;
  prop->cooperativeMultiDeviceUnmatchedGridDim = 0;
  prop->cooperativeMultiDeviceUnmatchedBlockDim = 0;
  prop->cooperativeMultiDeviceUnmatchedSharedMem = 0;
  // The GPU is on another host: none of its links to host memory reach
  // this process (no host-native atomics, no pageable access, no direct
  // access to managed memory), and it is never integrated with this host.
  prop->integrated = 0;
  prop->directManagedMemAccessFromHost = 0;
  prop->pageableMemoryAccess = 0;
  prop->pageableMemoryAccessUsesHostPageTables = 0;
}

template <class Prop>
int Choose(const std::vector<msg::DeviceInfo>& devices, const Prop& wanted) {
  int chosen = 0;
  unsigned best = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    Prop have;
    FillCommon(devices[i], msg::PropertyTable(devices[i]), &have);
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
  const msg::PropertyTable named(info);
  FillCommon(info, named, prop);
  prop->gcnArch = info.gcn_arch;  // 5.x only.
}

void FillDeviceProp(const msg::DeviceInfo& info, DevicePropR0600* prop) {
  const msg::PropertyTable named(info);
  FillCommon(info, named, prop);
  // Fields 6.x added that the runtime sets the same for every AMD device
  // it serves through hipr (as clr's ihipGetDeviceProperties does).
  if (info.uuid.size() == sizeof prop->uuid.bytes) std::memcpy(prop->uuid.bytes, info.uuid.data(), info.uuid.size());
  prop->luidDeviceNodeMask = static_cast<unsigned>(Named(named, P::kLuidDeviceNodeMask));
  prop->deviceOverlap = Named(named, P::kDeviceOverlap);
  prop->maxTexture1DMipmap = Named(named, P::kMaxTexture1DMipmap);
  prop->maxTexture2DMipmap[0] = Named(named, P::kMaxTexture2DMipmap0);
  prop->maxTexture2DMipmap[1] = Named(named, P::kMaxTexture2DMipmap1);
  prop->maxTexture2DLinear[0] = Named(named, P::kMaxTexture2DLinear0);
  prop->maxTexture2DLinear[1] = Named(named, P::kMaxTexture2DLinear1);
  prop->maxTexture2DLinear[2] = Named(named, P::kMaxTexture2DLinear2);
  prop->maxTexture2DGather[0] = Named(named, P::kMaxTexture2DGather0);
  prop->maxTexture2DGather[1] = Named(named, P::kMaxTexture2DGather1);
  prop->maxTexture3DAlt[0] = Named(named, P::kMaxTexture3DAlt0);
  prop->maxTexture3DAlt[1] = Named(named, P::kMaxTexture3DAlt1);
  prop->maxTexture3DAlt[2] = Named(named, P::kMaxTexture3DAlt2);
  prop->maxTextureCubemap = Named(named, P::kMaxTextureCubemap);
  prop->maxTexture1DLayered[0] = Named(named, P::kMaxTexture1DLayered0);
  prop->maxTexture1DLayered[1] = Named(named, P::kMaxTexture1DLayered1);
  prop->maxTexture2DLayered[0] = Named(named, P::kMaxTexture2DLayered0);
  prop->maxTexture2DLayered[1] = Named(named, P::kMaxTexture2DLayered1);
  prop->maxTexture2DLayered[2] = Named(named, P::kMaxTexture2DLayered2);
  prop->maxTextureCubemapLayered[0] = Named(named, P::kMaxTextureCubemapLayered0);
  prop->maxTextureCubemapLayered[1] = Named(named, P::kMaxTextureCubemapLayered1);
  prop->maxSurface1D = Named(named, P::kMaxSurface1D);
  prop->maxSurface2D[0] = Named(named, P::kMaxSurface2D0);
  prop->maxSurface2D[1] = Named(named, P::kMaxSurface2D1);
  prop->maxSurface3D[0] = Named(named, P::kMaxSurface3D0);
  prop->maxSurface3D[1] = Named(named, P::kMaxSurface3D1);
  prop->maxSurface3D[2] = Named(named, P::kMaxSurface3D2);
  prop->maxSurface1DLayered[0] = Named(named, P::kMaxSurface1DLayered0);
  prop->maxSurface1DLayered[1] = Named(named, P::kMaxSurface1DLayered1);
  prop->maxSurface2DLayered[0] = Named(named, P::kMaxSurface2DLayered0);
  prop->maxSurface2DLayered[1] = Named(named, P::kMaxSurface2DLayered1);
  prop->maxSurface2DLayered[2] = Named(named, P::kMaxSurface2DLayered2);
  prop->maxSurfaceCubemap = Named(named, P::kMaxSurfaceCubemap);
  prop->maxSurfaceCubemapLayered[0] = Named(named, P::kMaxSurfaceCubemapLayered0);
  prop->maxSurfaceCubemapLayered[1] = Named(named, P::kMaxSurfaceCubemapLayered1);
  prop->surfaceAlignment = static_cast<size_t>(named.Or(P::kSurfaceAlignment, 0));
  prop->tccDriver = Named(named, P::kTccDriver);
  prop->asyncEngineCount = Named(named, P::kAsyncEngineCount);
  prop->unifiedAddressing = 0;  // clr's hmmDirectHostAccess_: this host never reaches the GPU's memory.
  prop->persistingL2CacheMaxSize = Named(named, P::kPersistingL2CacheMaxSize);
  prop->streamPrioritiesSupported = 1;  // hipr's streams carry priorities.
  prop->globalL1CacheSupported = Named(named, P::kGlobalL1CacheSupported);
  prop->localL1CacheSupported = Named(named, P::kLocalL1CacheSupported);
  prop->sharedMemPerMultiprocessor =
      static_cast<size_t>(named.Or(P::kSharedMemPerMultiprocessor, 0));
  prop->regsPerMultiprocessor = Named(named, P::kRegsPerMultiprocessor);
  prop->multiGpuBoardGroupID = Named(named, P::kMultiGpuBoardGroupID);
  prop->hostNativeAtomicSupported = 0;  // See FillCommon: a remote GPU.
  prop->singleToDoublePrecisionPerfRatio = Named(named, P::kSingleToDoublePrecisionPerfRatio);
  prop->computePreemptionSupported = Named(named, P::kComputePreemptionSupported);
  prop->canUseHostPointerForRegisteredMem = 0;  // A remote GPU cannot use this host's pointers.
  prop->sharedMemPerBlockOptin = static_cast<size_t>(named.Or(P::kSharedMemPerBlockOptin, 0));
  prop->maxBlocksPerMultiProcessor = Named(named, P::kMaxBlocksPerMultiProcessor);
  prop->accessPolicyMaxWindowSize = Named(named, P::kAccessPolicyMaxWindowSize);
  prop->reservedSharedMemPerBlock = static_cast<size_t>(named.Or(P::kReservedSharedMemPerBlock, 0));
  prop->hostRegisterSupported = Named(named, P::kHostRegisterSupportedField);
  prop->sparseHipArraySupported = Named(named, P::kSparseHipArraySupported);
  prop->hostRegisterReadOnlySupported = Named(named, P::kHostRegisterReadOnlySupported);
  prop->timelineSemaphoreInteropSupported = Named(named, P::kTimelineSemaphoreInteropSupported);
  prop->memoryPoolsSupported = Named(named, P::kMemoryPoolsSupported);
  prop->gpuDirectRDMASupported = Named(named, P::kGpuDirectRDMASupported);
  prop->gpuDirectRDMAFlushWritesOptions = static_cast<unsigned>(Named(named, P::kGpuDirectRDMAFlushWritesOptions));
  prop->gpuDirectRDMAWritesOrdering = Named(named, P::kGpuDirectRDMAWritesOrdering);
  prop->memoryPoolSupportedHandleTypes = static_cast<unsigned>(Named(named, P::kMemoryPoolSupportedHandleTypes));
  prop->deferredMappingHipArraySupported = Named(named, P::kDeferredMappingHipArraySupported);
  prop->ipcEventSupported = Named(named, P::kIpcEventSupported);
  prop->clusterLaunch = Named(named, P::kClusterLaunch);
  prop->unifiedFunctionPointers = Named(named, P::kUnifiedFunctionPointers);
}

namespace {

// Attribute numbers Debian's 5.2 header lacks (the same in every later
// major; attr_enum facts in device_props.h).
enum : int {
  kAttrVirtualMemoryManagementSupported = 89,  // 5.3+
  kAttrHostRegisterSupported = 90,              // 6.0+
  kAttrMemoryPoolSupportedHandleTypes = 91,     // 6.1+
  kAttrHostNumaId = 92,                         // 7.2+
  kAttrWallClockRate = 10017,                   // 5.3+
  kAttrNumberOfXccs = 10018,                    // 7.0+
  kAttrMaxAvailableVgprsPerThread = 10019,      // 7.1+ (7.0's PciChipId)
  kAttrPciChipId = 10020,                       // 7.1+
};

// The first major whose header has attribute `a` (HIP never renumbered one).
int FirstMajor(int a) {
  switch (a) {
    case kAttrHostRegisterSupported:
    case kAttrMemoryPoolSupportedHandleTypes: return 6;
    case kAttrHostNumaId:
    case kAttrNumberOfXccs:
    case kAttrMaxAvailableVgprsPerThread:
    case kAttrPciChipId: return 7;
    default: return 5;
  }
}

int Clamp(uint64_t v) { return ClampToInt(v); }

}  // namespace

DeviceAnswers::DeviceAnswers(const msg::DeviceInfo& info) : named(info) {
  FillDeviceProp(info, &r0000);
  FillDeviceProp(info, &r0600);
}

hipError_t DeviceAttribute(const DeviceAnswers& device, int attr, int major, int* value) {
  if (major < FirstMajor(attr)) return hipErrorInvalidValue;
  const DevicePropR0600& p = device.r0600;
  const msg::PropertyTable& named = device.named;
  int v = 0;
  // A fact with no hipDeviceProp_t field: refused when the worker lacks it.
  auto fact = [&](P property) {
    int64_t x = 0;
    if (!named.Find(property, &x)) return false;
    v = static_cast<int>(std::clamp<int64_t>(x, std::numeric_limits<int32_t>::min(), kInt32Max));
    return true;
  };
  switch (attr) {
    case hipDeviceAttributeEccEnabled: v = p.ECCEnabled; break;
    case hipDeviceAttributeAccessPolicyMaxWindowSize: v = p.accessPolicyMaxWindowSize; break;
    case hipDeviceAttributeAsyncEngineCount: v = p.asyncEngineCount; break;
    case hipDeviceAttributeCanMapHostMemory: v = p.canMapHostMemory; break;
    case hipDeviceAttributeCanUseHostPointerForRegisteredMem: v = p.canUseHostPointerForRegisteredMem; break;
    case hipDeviceAttributeClockRate: v = p.clockRate; break;
    case hipDeviceAttributeComputeMode: v = p.computeMode; break;
    case hipDeviceAttributeComputePreemptionSupported: v = p.computePreemptionSupported; break;
    case hipDeviceAttributeConcurrentKernels: v = p.concurrentKernels; break;
    case hipDeviceAttributeConcurrentManagedAccess: v = p.concurrentManagedAccess; break;
    case hipDeviceAttributeCooperativeLaunch: v = p.cooperativeLaunch; break;
    case hipDeviceAttributeCooperativeMultiDeviceLaunch: v = p.cooperativeMultiDeviceLaunch; break;
    case hipDeviceAttributeDeviceOverlap: v = p.asyncEngineCount > 0 ? 1 : 0; break;
    case hipDeviceAttributeDirectManagedMemAccessFromHost: v = p.directManagedMemAccessFromHost; break;
    case hipDeviceAttributeGlobalL1CacheSupported: v = p.globalL1CacheSupported; break;
    case hipDeviceAttributeHostNativeAtomicSupported: v = p.hostNativeAtomicSupported; break;
    case hipDeviceAttributeIntegrated: v = p.integrated; break;
    case hipDeviceAttributeIsMultiGpuBoard: v = p.isMultiGpuBoard; break;
    case hipDeviceAttributeKernelExecTimeout: v = p.kernelExecTimeoutEnabled; break;
    case hipDeviceAttributeL2CacheSize: v = p.l2CacheSize; break;
    case hipDeviceAttributeLocalL1CacheSupported: v = p.localL1CacheSupported; break;
    case hipDeviceAttributeLuidDeviceNodeMask: v = static_cast<int>(p.luidDeviceNodeMask); break;
    case hipDeviceAttributeComputeCapabilityMajor: v = p.major; break;
    case hipDeviceAttributeManagedMemory: v = p.managedMemory; break;
    case hipDeviceAttributeMaxBlocksPerMultiProcessor: v = p.maxBlocksPerMultiProcessor; break;
    case hipDeviceAttributeMaxBlockDimX: v = p.maxThreadsDim[0]; break;
    case hipDeviceAttributeMaxBlockDimY: v = p.maxThreadsDim[1]; break;
    case hipDeviceAttributeMaxBlockDimZ: v = p.maxThreadsDim[2]; break;
    case hipDeviceAttributeMaxGridDimX: v = p.maxGridSize[0]; break;
    case hipDeviceAttributeMaxGridDimY: v = p.maxGridSize[1]; break;
    case hipDeviceAttributeMaxGridDimZ: v = p.maxGridSize[2]; break;
    case hipDeviceAttributeMaxSurface1D: v = p.maxSurface1D; break;
    case hipDeviceAttributeMaxTexture1DWidth: v = p.maxTexture1D; break;
    case hipDeviceAttributeMaxTexture1DLinear: v = p.maxTexture1DLinear; break;
    case hipDeviceAttributeMaxTexture1DMipmap: v = p.maxTexture1DMipmap; break;
    case hipDeviceAttributeMaxTexture2DWidth: v = p.maxTexture2D[0]; break;
    case hipDeviceAttributeMaxTexture2DHeight: v = p.maxTexture2D[1]; break;
    case hipDeviceAttributeMaxTexture3DWidth: v = p.maxTexture3D[0]; break;
    case hipDeviceAttributeMaxTexture3DHeight: v = p.maxTexture3D[1]; break;
    case hipDeviceAttributeMaxTexture3DDepth: v = p.maxTexture3D[2]; break;
    case hipDeviceAttributeMaxTextureCubemap: v = p.maxTextureCubemap; break;
    case hipDeviceAttributeMaxThreadsPerBlock: v = p.maxThreadsPerBlock; break;
    case hipDeviceAttributeMaxThreadsPerMultiProcessor: v = p.maxThreadsPerMultiProcessor; break;
    case hipDeviceAttributeMaxPitch: v = Clamp(p.memPitch); break;
    case hipDeviceAttributeMemoryBusWidth: v = p.memoryBusWidth; break;
    case hipDeviceAttributeMemoryClockRate: v = p.memoryClockRate; break;
    case hipDeviceAttributeComputeCapabilityMinor: v = p.minor; break;
    case hipDeviceAttributeMultiGpuBoardGroupID: v = p.multiGpuBoardGroupID; break;
    case hipDeviceAttributeMultiprocessorCount: v = p.multiProcessorCount; break;
    case hipDeviceAttributePageableMemoryAccess: v = p.pageableMemoryAccess; break;
    case hipDeviceAttributePageableMemoryAccessUsesHostPageTables: v = p.pageableMemoryAccessUsesHostPageTables; break;
    case hipDeviceAttributePciBusId: v = p.pciBusID; break;
    case hipDeviceAttributePciDeviceId: v = p.pciDeviceID; break;
    case hipDeviceAttributePciDomainID: v = p.pciDomainID; break;
    case hipDeviceAttributePersistingL2CacheMaxSize: v = p.persistingL2CacheMaxSize; break;
    case hipDeviceAttributeMaxRegistersPerBlock: v = p.regsPerBlock; break;
    case hipDeviceAttributeMaxRegistersPerMultiprocessor: v = p.regsPerMultiprocessor; break;
    case hipDeviceAttributeReservedSharedMemPerBlock: v = Clamp(p.reservedSharedMemPerBlock); break;
    case hipDeviceAttributeMaxSharedMemoryPerBlock: v = Clamp(p.sharedMemPerBlock); break;
    case hipDeviceAttributeSharedMemPerBlockOptin: v = Clamp(p.sharedMemPerBlockOptin); break;
    case hipDeviceAttributeSharedMemPerMultiprocessor: v = Clamp(p.sharedMemPerMultiprocessor); break;
    case hipDeviceAttributeStreamPrioritiesSupported: v = p.streamPrioritiesSupported; break;
    case hipDeviceAttributeSurfaceAlignment: v = Clamp(p.surfaceAlignment); break;
    case hipDeviceAttributeTextureAlignment: v = Clamp(p.textureAlignment); break;
    case hipDeviceAttributeTexturePitchAlignment: v = Clamp(p.texturePitchAlignment); break;
    case hipDeviceAttributeTotalConstantMemory: v = Clamp(p.totalConstMem); break;
    case hipDeviceAttributeTotalGlobalMem: v = Clamp(p.totalGlobalMem); break;
    case hipDeviceAttributeWarpSize: v = p.warpSize; break;
    case hipDeviceAttributeMemoryPoolsSupported: v = p.memoryPoolsSupported; break;
    case kAttrMemoryPoolSupportedHandleTypes: v = static_cast<int>(p.memoryPoolSupportedHandleTypes); break;
    case hipDeviceAttributeMaxSharedMemoryPerMultiprocessor: v = Clamp(p.maxSharedMemoryPerMultiProcessor); break;
    case hipDeviceAttributeHdpMemFlushCntl:
    case hipDeviceAttributeHdpRegFlushCntl: {
      // clr stores the HDP flush register's host mapping, a pointer, through
      // the int*; none is mapped into a process on another host: null.
      unsigned int* none = nullptr;
      std::memcpy(value, &none, sizeof none);
      return hipSuccess;
    }
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc: v = p.cooperativeMultiDeviceUnmatchedFunc; break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim: v = p.cooperativeMultiDeviceUnmatchedGridDim; break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim:
      v = p.cooperativeMultiDeviceUnmatchedBlockDim;
      break;
    case hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem:
      v = p.cooperativeMultiDeviceUnmatchedSharedMem;
      break;
    case hipDeviceAttributeIsLargeBar: v = p.isLargeBar; break;
    case hipDeviceAttributeAsicRevision: v = p.asicRevision; break;
    case hipDeviceAttributeCanUseStreamWaitValue:
      if (!fact(P::kCanUseStreamWaitValue)) return hipErrorInvalidValue;
      break;
    case hipDeviceAttributeImageSupport:
      if (!fact(P::kImageSupport)) return hipErrorInvalidValue;
      break;
    case hipDeviceAttributePhysicalMultiProcessorCount:
      if (!fact(P::kPhysicalMultiProcessorCount)) return hipErrorInvalidValue;
      break;
    case hipDeviceAttributeFineGrainSupport:
      if (!fact(P::kFineGrainSupport)) return hipErrorInvalidValue;
      break;
    case hipDeviceAttributeUnifiedAddressing:
      if (!fact(P::kUnifiedAddressing)) return hipErrorInvalidValue;
      break;
    case kAttrVirtualMemoryManagementSupported:
      if (!fact(P::kVirtualMemoryManagementSupported)) return hipErrorInvalidValue;
      break;
    case kAttrHostRegisterSupported:
      if (!fact(P::kHostRegisterSupported)) return hipErrorInvalidValue;
      break;
    case kAttrHostNumaId:
      if (!fact(P::kHostNumaId)) return hipErrorInvalidValue;
      break;
    case kAttrWallClockRate:
      if (!fact(P::kWallClockRate)) return hipErrorInvalidValue;
      break;
    case kAttrNumberOfXccs:
      if (!fact(P::kNumberOfXccs)) return hipErrorInvalidValue;
      break;
    case kAttrMaxAvailableVgprsPerThread:
      if (!fact(P::kMaxAvailableVgprsPerThread)) return hipErrorInvalidValue;
      break;
    case kAttrPciChipId:
      if (!fact(P::kPciChipId)) return hipErrorInvalidValue;
      break;
    // Everything else ROCm's runtime refuses too, in every release (Luid,
    // the layered/mipmap/gather/cubemap limits, MaxThreadsDim, the 5.x Name,
    // Uuid, Arch, GcnArch and GcnArchName, ClockInstructionRate, ...).
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
