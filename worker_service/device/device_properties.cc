#include "worker_service/device/device_properties.h"

#include <algorithm>
#include <cstdint>

namespace hipr::worker {
namespace {

using msg::DeviceProperty;

// The image limits ROCr reports for gfx9 (1-D/2-D layered arrays).
constexpr int64_t kImageMaxLayers = 8192;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

int GcnArchNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "gfx";
  if (name.substr(0, kPrefix.size()) != kPrefix) return 0;
  name.remove_prefix(kPrefix.size());
  name = name.substr(0, name.find(':'));  // Features (":sramecc+") are not part of it.
  if (name.size() < 3 || name.size() > 4) return 0;
  const int stepping = HexDigit(name.back());
  const int minor = HexDigit(name[name.size() - 2]);
  int major = 0;
  for (char c : name.substr(0, name.size() - 2)) {
    if (c < '0' || c > '9') return 0;
    major = major * 10 + (c - '0');
  }
  if (stepping < 0 || minor < 0 || major == 0) return 0;
  return major * 100 + minor * 10 + stepping;
}

void FillRuntimeProperties(msg::DeviceInfo* d) {
  auto set = [d](DeviceProperty p, int64_t v) { msg::SetProperty(d, p, v); };
  const int64_t lds = static_cast<int64_t>(d->max_shared_memory_per_multiprocessor);
  // Copy queues and stream features every clr device has.
  set(DeviceProperty::kAsyncEngineCount, 8);
  set(DeviceProperty::kDeviceOverlap, 1);
  set(DeviceProperty::kStreamPrioritiesSupported, 1);
  set(DeviceProperty::kGlobalL1CacheSupported, 1);
  set(DeviceProperty::kLocalL1CacheSupported, 1);
  set(DeviceProperty::kIpcEventSupported, 1);
  set(DeviceProperty::kHostRegisterSupportedField, 1);
  set(DeviceProperty::kHostRegisterSupported, 1);
  set(DeviceProperty::kUnifiedAddressing, 1);  // clr 6.2+: "HIP always uses SVM".
  set(DeviceProperty::kMemoryPoolsSupported, 1);
  // The host NUMA node nearest the device is the GPU node's, not the
  // client's: no node of the client's is nearer than another.
  set(DeviceProperty::kHostNumaId, -1);
  set(DeviceProperty::kCooperativeMultiDeviceLaunch, d->cooperative_launch ? 1 : 0);
  for (DeviceProperty p : {DeviceProperty::kCooperativeMultiDeviceUnmatchedFunc,
                           DeviceProperty::kCooperativeMultiDeviceUnmatchedGridDim,
                           DeviceProperty::kCooperativeMultiDeviceUnmatchedBlockDim,
                           DeviceProperty::kCooperativeMultiDeviceUnmatchedSharedMem})
    set(p, d->cooperative_launch ? 1 : 0);
  // Memory of one CU and one block.
  set(DeviceProperty::kSharedMemPerMultiprocessor, lds);
  set(DeviceProperty::kSharedMemPerBlockOptin, lds);
  set(DeviceProperty::kReservedSharedMemPerBlock, 0);
  set(DeviceProperty::kRegsPerMultiprocessor, d->regs_per_block);
  set(DeviceProperty::kPersistingL2CacheMaxSize, d->l2_cache_size);
  set(DeviceProperty::kMaxBlocksPerMultiProcessor,
      d->warp_size > 0 ? d->max_threads_per_multiprocessor / d->warp_size : 0);
  set(DeviceProperty::kMultiGpuBoardGroupID, d->pci_device_id);
  set(DeviceProperty::kPhysicalMultiProcessorCount, d->multi_processor_count);
  // Images and surfaces: the limits the texture fields already carry; the
  // kinds clr never reports (mipmaps, gathers, cubemaps, 3-D alternates) 0.
  set(DeviceProperty::kMaxTexture1DMipmap, d->max_texture_1d_linear);
  set(DeviceProperty::kMaxTexture1DLayered0, d->max_texture_1d);
  set(DeviceProperty::kMaxTexture1DLayered1, kImageMaxLayers);
  set(DeviceProperty::kMaxTexture2DLayered0, d->max_texture_2d[0]);
  set(DeviceProperty::kMaxTexture2DLayered1, d->max_texture_2d[1]);
  set(DeviceProperty::kMaxTexture2DLayered2, kImageMaxLayers);
  set(DeviceProperty::kMaxSurface1D, d->max_texture_1d);
  set(DeviceProperty::kMaxSurface2D0, d->max_texture_2d[0]);
  set(DeviceProperty::kMaxSurface2D1, d->max_texture_2d[1]);
  for (int i = 0; i < 3; ++i)
    set(static_cast<DeviceProperty>(static_cast<int>(DeviceProperty::kMaxSurface3D0) + i), d->max_texture_3d[i]);
  set(DeviceProperty::kMaxSurface1DLayered0, d->max_texture_1d);
  set(DeviceProperty::kMaxSurface1DLayered1, kImageMaxLayers);
  set(DeviceProperty::kMaxSurface2DLayered0, d->max_texture_2d[0]);
  set(DeviceProperty::kMaxSurface2DLayered1, d->max_texture_2d[1]);
  set(DeviceProperty::kMaxSurface2DLayered2, kImageMaxLayers);
  for (DeviceProperty p :
       {DeviceProperty::kMaxTexture2DMipmap0, DeviceProperty::kMaxTexture2DMipmap1,
        DeviceProperty::kMaxTexture2DLinear0, DeviceProperty::kMaxTexture2DLinear1,
        DeviceProperty::kMaxTexture2DLinear2, DeviceProperty::kMaxTexture2DGather0,
        DeviceProperty::kMaxTexture2DGather1, DeviceProperty::kMaxTexture3DAlt0, DeviceProperty::kMaxTexture3DAlt1,
        DeviceProperty::kMaxTexture3DAlt2, DeviceProperty::kMaxTextureCubemap,
        DeviceProperty::kMaxTextureCubemapLayered0, DeviceProperty::kMaxTextureCubemapLayered1,
        DeviceProperty::kMaxSurfaceCubemap, DeviceProperty::kMaxSurfaceCubemapLayered0,
        DeviceProperty::kMaxSurfaceCubemapLayered1})
    set(p, 0);
  set(DeviceProperty::kSurfaceAlignment, static_cast<int64_t>(d->texture_alignment));
  set(DeviceProperty::kTexturePitchAlignment, static_cast<int64_t>(d->texture_alignment));
  // Features clr reports as absent on every device.
  for (DeviceProperty p :
       {DeviceProperty::kLuidDeviceNodeMask, DeviceProperty::kTccDriver, DeviceProperty::kSingleToDoublePrecisionPerfRatio,
        DeviceProperty::kComputePreemptionSupported, DeviceProperty::kAccessPolicyMaxWindowSize,
        DeviceProperty::kSparseHipArraySupported, DeviceProperty::kHostRegisterReadOnlySupported,
        DeviceProperty::kTimelineSemaphoreInteropSupported, DeviceProperty::kGpuDirectRDMASupported,
        DeviceProperty::kGpuDirectRDMAFlushWritesOptions, DeviceProperty::kGpuDirectRDMAWritesOrdering,
        DeviceProperty::kDeferredMappingHipArraySupported, DeviceProperty::kClusterLaunch,
        DeviceProperty::kUnifiedFunctionPointers})
    set(p, 0);
}

}  // namespace hipr::worker
