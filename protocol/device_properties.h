// The named device properties a worker reports in the hello
// (msg::DeviceInfo::properties) beyond DeviceInfo's typed fields: every other
// field of ROCm 6/7's hipDeviceProp_t (arrays one entry per element), and the
// facts behind hipDeviceGetAttribute answers that have no field
// (HIP's attribute names). The client answers hipGetDeviceProperties* and
// hipDeviceGetAttribute from them locally (client_stub/abi/device_props.h).
//
// Names, not numbers, cross the wire: HIP's enum numbering and struct layouts
// differ between majors, the names do not. A worker omits what its runtime
// cannot tell; the client then gives the field 0 and refuses the attribute
// with hipErrorInvalidValue, as a runtime that lacks it does.
//
// To add one: a line here, a value in the sim's models and the hip device's
// reader (worker_service/device/device_properties.cc), its use in
// client_stub/abi/device_props.cc.
#pragma once

#include <cstdint>
#include <string_view>

namespace hipr::msg {

struct DeviceInfo;

// X(identifier, "wire name").
#define HIPR_DEVICE_PROPERTIES(X)                                                 \
  /* hipDeviceProp_t fields (R0600 names). */                                     \
  X(kLuidDeviceNodeMask, "luidDeviceNodeMask")                                    \
  X(kDeviceOverlap, "deviceOverlap")                                              \
  X(kMaxTexture1DMipmap, "maxTexture1DMipmap")                                    \
  X(kMaxTexture2DMipmap0, "maxTexture2DMipmap[0]")                                \
  X(kMaxTexture2DMipmap1, "maxTexture2DMipmap[1]")                                \
  X(kMaxTexture2DLinear0, "maxTexture2DLinear[0]")                                \
  X(kMaxTexture2DLinear1, "maxTexture2DLinear[1]")                                \
  X(kMaxTexture2DLinear2, "maxTexture2DLinear[2]")                                \
  X(kMaxTexture2DGather0, "maxTexture2DGather[0]")                                \
  X(kMaxTexture2DGather1, "maxTexture2DGather[1]")                                \
  X(kMaxTexture3DAlt0, "maxTexture3DAlt[0]")                                      \
  X(kMaxTexture3DAlt1, "maxTexture3DAlt[1]")                                      \
  X(kMaxTexture3DAlt2, "maxTexture3DAlt[2]")                                      \
  X(kMaxTextureCubemap, "maxTextureCubemap")                                      \
  X(kMaxTexture1DLayered0, "maxTexture1DLayered[0]")                              \
  X(kMaxTexture1DLayered1, "maxTexture1DLayered[1]")                              \
  X(kMaxTexture2DLayered0, "maxTexture2DLayered[0]")                              \
  X(kMaxTexture2DLayered1, "maxTexture2DLayered[1]")                              \
  X(kMaxTexture2DLayered2, "maxTexture2DLayered[2]")                              \
  X(kMaxTextureCubemapLayered0, "maxTextureCubemapLayered[0]")                    \
  X(kMaxTextureCubemapLayered1, "maxTextureCubemapLayered[1]")                    \
  X(kMaxSurface1D, "maxSurface1D")                                                \
  X(kMaxSurface2D0, "maxSurface2D[0]")                                            \
  X(kMaxSurface2D1, "maxSurface2D[1]")                                            \
  X(kMaxSurface3D0, "maxSurface3D[0]")                                            \
  X(kMaxSurface3D1, "maxSurface3D[1]")                                            \
  X(kMaxSurface3D2, "maxSurface3D[2]")                                            \
  X(kMaxSurface1DLayered0, "maxSurface1DLayered[0]")                              \
  X(kMaxSurface1DLayered1, "maxSurface1DLayered[1]")                              \
  X(kMaxSurface2DLayered0, "maxSurface2DLayered[0]")                              \
  X(kMaxSurface2DLayered1, "maxSurface2DLayered[1]")                              \
  X(kMaxSurface2DLayered2, "maxSurface2DLayered[2]")                              \
  X(kMaxSurfaceCubemap, "maxSurfaceCubemap")                                      \
  X(kMaxSurfaceCubemapLayered0, "maxSurfaceCubemapLayered[0]")                    \
  X(kMaxSurfaceCubemapLayered1, "maxSurfaceCubemapLayered[1]")                    \
  X(kSurfaceAlignment, "surfaceAlignment")                                        \
  X(kTexturePitchAlignment, "texturePitchAlignment")                              \
  X(kTccDriver, "tccDriver")                                                      \
  X(kAsyncEngineCount, "asyncEngineCount")                                        \
  X(kUnifiedAddressingField, "unifiedAddressing")                                 \
  X(kPersistingL2CacheMaxSize, "persistingL2CacheMaxSize")                        \
  X(kStreamPrioritiesSupported, "streamPrioritiesSupported")                      \
  X(kGlobalL1CacheSupported, "globalL1CacheSupported")                            \
  X(kLocalL1CacheSupported, "localL1CacheSupported")                              \
  X(kSharedMemPerMultiprocessor, "sharedMemPerMultiprocessor")                    \
  X(kRegsPerMultiprocessor, "regsPerMultiprocessor")                              \
  X(kMultiGpuBoardGroupID, "multiGpuBoardGroupID")                                \
  X(kHostNativeAtomicSupported, "hostNativeAtomicSupported")                      \
  X(kSingleToDoublePrecisionPerfRatio, "singleToDoublePrecisionPerfRatio")        \
  X(kPageableMemoryAccess, "pageableMemoryAccess")                                \
  X(kComputePreemptionSupported, "computePreemptionSupported")                    \
  X(kCanUseHostPointerForRegisteredMem, "canUseHostPointerForRegisteredMem")      \
  X(kCooperativeMultiDeviceLaunch, "cooperativeMultiDeviceLaunch")                \
  X(kSharedMemPerBlockOptin, "sharedMemPerBlockOptin")                            \
  X(kPageableMemoryAccessUsesHostPageTables, "pageableMemoryAccessUsesHostPageTables") \
  X(kDirectManagedMemAccessFromHost, "directManagedMemAccessFromHost")            \
  X(kMaxBlocksPerMultiProcessor, "maxBlocksPerMultiProcessor")                    \
  X(kAccessPolicyMaxWindowSize, "accessPolicyMaxWindowSize")                      \
  X(kReservedSharedMemPerBlock, "reservedSharedMemPerBlock")                      \
  X(kHostRegisterSupportedField, "hostRegisterSupported")                         \
  X(kSparseHipArraySupported, "sparseHipArraySupported")                          \
  X(kHostRegisterReadOnlySupported, "hostRegisterReadOnlySupported")              \
  X(kTimelineSemaphoreInteropSupported, "timelineSemaphoreInteropSupported")      \
  X(kMemoryPoolsSupported, "memoryPoolsSupported")                                \
  X(kGpuDirectRDMASupported, "gpuDirectRDMASupported")                            \
  X(kGpuDirectRDMAFlushWritesOptions, "gpuDirectRDMAFlushWritesOptions")          \
  X(kGpuDirectRDMAWritesOrdering, "gpuDirectRDMAWritesOrdering")                  \
  X(kMemoryPoolSupportedHandleTypes, "memoryPoolSupportedHandleTypes")            \
  X(kDeferredMappingHipArraySupported, "deferredMappingHipArraySupported")        \
  X(kIpcEventSupported, "ipcEventSupported")                                      \
  X(kClusterLaunch, "clusterLaunch")                                              \
  X(kUnifiedFunctionPointers, "unifiedFunctionPointers")                          \
  X(kCooperativeMultiDeviceUnmatchedFunc, "cooperativeMultiDeviceUnmatchedFunc")  \
  X(kCooperativeMultiDeviceUnmatchedGridDim, "cooperativeMultiDeviceUnmatchedGridDim") \
  X(kCooperativeMultiDeviceUnmatchedBlockDim, "cooperativeMultiDeviceUnmatchedBlockDim") \
  X(kCooperativeMultiDeviceUnmatchedSharedMem, "cooperativeMultiDeviceUnmatchedSharedMem") \
  /* Attribute answers with no hipDeviceProp_t field (HIP's attribute names). */ \
  X(kImageSupport, "ImageSupport")                                                \
  X(kPhysicalMultiProcessorCount, "PhysicalMultiProcessorCount")                  \
  X(kFineGrainSupport, "FineGrainSupport")                                        \
  X(kCanUseStreamWaitValue, "CanUseStreamWaitValue")                              \
  X(kWallClockRate, "WallClockRate")                                              \
  X(kVirtualMemoryManagementSupported, "VirtualMemoryManagementSupported")        \
  X(kUnifiedAddressing, "UnifiedAddressing")                                      \
  X(kHostRegisterSupported, "HostRegisterSupported")                              \
  X(kNumberOfXccs, "NumberOfXccs")                                                \
  X(kMaxAvailableVgprsPerThread, "MaxAvailableVgprsPerThread")                    \
  X(kPciChipId, "PciChipId")                                                      \
  X(kHostNumaId, "HostNumaId")                                                    \
  /* hipr's own: bit i set when this device can access device i's memory */  \
  /* (hipDeviceCanAccessPeer; absent: none). */                                \
  X(kPeerAccessMask, "hipr.PeerAccessMask")

enum class DeviceProperty : int {
#define HIPR_DEVICE_PROPERTY_ENUM(id, name) id,
  HIPR_DEVICE_PROPERTIES(HIPR_DEVICE_PROPERTY_ENUM)
#undef HIPR_DEVICE_PROPERTY_ENUM
      kCount
};

// The wire name of `p`.
std::string_view NameOf(DeviceProperty p);

// The properties of one DeviceInfo indexed by DeviceProperty (lookups in
// constant time; built in one pass). Unknown names are ignored: a newer
// worker may send properties this client does not know.
class PropertyTable {
 public:
  explicit PropertyTable(const DeviceInfo& info);
  bool Find(DeviceProperty p, int64_t* value) const;
  int64_t Or(DeviceProperty p, int64_t fallback) const;

 private:
  int64_t values_[static_cast<int>(DeviceProperty::kCount)] = {};
  bool present_[static_cast<int>(DeviceProperty::kCount)] = {};
};

// The value `info` carries for `p`; false (and *value untouched) when absent.
bool FindProperty(const DeviceInfo& info, DeviceProperty p, int64_t* value);

// `info`'s value for `p`, or `fallback` when absent.
int64_t PropertyOr(const DeviceInfo& info, DeviceProperty p, int64_t fallback);

// Sets (adds or replaces) `p` in `info`.
void SetProperty(DeviceInfo* info, DeviceProperty p, int64_t value);

}  // namespace hipr::msg
