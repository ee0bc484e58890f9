// libmajor6.so: host code built against the 6.x ABI (linked with the
// link-only libamdhip64.so.6: DT_NEEDED libamdhip64.so.6, 6.x version
// nodes), loaded into a 5.x program (main5.cc). Its checks expect 6.x
// answers from the same stub the program gets 5.x answers from.
#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mixed_majors.h"

// 6.x programs call this under the name hipGetDeviceProperties (the 6.x
// headers rename it); it is exported in node hip_6.0.
extern "C" hipError_t hipGetDevicePropertiesR0600(void* prop, int device);
// 6.0's driver-API graph memcpy node (not in Debian's 5.2 header).
extern "C" hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                               size_t count, const void* params, hipCtx_t ctx);
extern "C" hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t node, void* params);

namespace {

// The 6.x hipDeviceProp_t, read at the offsets public bindings of AMD's
// header assert (not through the stub's own definition of it).
constexpr size_t kR0600Size = 1472;
constexpr size_t kTotalGlobalMemAt = 288;
constexpr size_t kGcnArchNameAt = 1160;

// 6.x numbering (Debian's 5.2 header has the 5.x one).
constexpr int kUnregistered6 = 0;
constexpr int kHost6 = 1;
constexpr int kDevice6 = 2;

int Fail(const char* what, int got) {
  std::fprintf(stderr, "E2E_FAIL lib6: %s (got %d)\n", what, got);
  return 1;
}

// 6.x HIP_MEMCPY3D: the 5.x layout with every offset, pitch and size widened
// to size_t (ROCm 6.0's driver_types.h; Debian's header has the 5.x one).
struct Memcpy3D6 {
  size_t srcXInBytes, srcY, srcZ, srcLOD;
  int srcMemoryType;
  const void* srcHost;
  void* srcDevice;
  void* srcArray;
  size_t srcPitch, srcHeight;
  size_t dstXInBytes, dstY, dstZ, dstLOD;
  int dstMemoryType;
  void* dstHost;
  void* dstDevice;
  void* dstArray;
  size_t dstPitch, dstHeight;
  size_t WidthInBytes, Height, Depth;
};
static_assert(sizeof(Memcpy3D6) == 23 * 8, "23 eight-byte slots (the memory types padded)");

// 6.x hipMemAllocationProp (ROCm 6.0's hip_runtime_api.h: type,
// requestedHandleType, location, Win32 metadata, then allocFlags; Debian's
// header has the 5.x order, compressionType first).
struct MemAllocationProp6 {
  int type;
  int requestedHandleType;
  int location_type;
  int location_id;
  void* win32HandleMetaData;
  unsigned char compressionType;
  unsigned char gpuDirectRDMACapable;
  unsigned short usage;
};
static_assert(sizeof(MemAllocationProp6) == 32, "32 bytes, as 5.x's");
constexpr int kPinned = 1;
constexpr int kPosixFd = 1;
constexpr int kLocationDevice = 1;

// 6.x hipGraphNodeType counts from 0 (5.x from 1).
constexpr int kMemsetNode6 = 2;
constexpr int kEmptyNode6 = 5;

// Virtual memory with the 6.x property layout, and 6.x graph node types.
int Vmm6AndNodeTypes() {
  MemAllocationProp6 prop{};
  prop.type = kPinned;
  prop.requestedHandleType = kPosixFd;
  prop.location_type = kLocationDevice;
  prop.location_id = 0;
  const auto* as_hip = reinterpret_cast<const hipMemAllocationProp*>(&prop);
  size_t granule = 0;
  if (hipError_t e = hipMemGetAllocationGranularity(&granule, as_hip, hipMemAllocationGranularityMinimum);
      e != hipSuccess)
    return Fail("6.x hipMemGetAllocationGranularity", e);
  hipMemGenericAllocationHandle_t h = nullptr;
  if (hipError_t e = hipMemCreate(&h, 4 * granule, as_hip, 0); e != hipSuccess) return Fail("6.x hipMemCreate", e);
  MemAllocationProp6 back{};
  std::memset(&back, 0xab, sizeof back);
  if (hipError_t e = hipMemGetAllocationPropertiesFromHandle(reinterpret_cast<hipMemAllocationProp*>(&back), h);
      e != hipSuccess)
    return Fail("6.x hipMemGetAllocationPropertiesFromHandle", e);
  if (back.type != kPinned || back.requestedHandleType != kPosixFd || back.location_type != kLocationDevice ||
      back.location_id != 0 || back.win32HandleMetaData != nullptr || back.usage != 0)
    return Fail("6.x properties read back (type)", back.type);
  if (hipError_t e = hipMemRelease(h); e != hipSuccess) return Fail("hipMemRelease", e);
  hipGraph_t graph = nullptr;
  if (hipGraphCreate(&graph, 0) != hipSuccess) return Fail("hipGraphCreate", 0);
  hipGraphNode_t empty = nullptr;
  if (hipError_t e = hipGraphAddEmptyNode(&empty, graph, nullptr, 0); e != hipSuccess)
    return Fail("hipGraphAddEmptyNode", e);
  hipGraphNodeType type = static_cast<hipGraphNodeType>(77);
  if (hipError_t e = hipGraphNodeGetType(empty, &type); e != hipSuccess) return Fail("hipGraphNodeGetType", e);
  if (static_cast<int>(type) != kEmptyNode6) return Fail("6.x type of an empty node", type);
  void* d = nullptr;
  if (hipMalloc(&d, 64) != hipSuccess) return Fail("hipMalloc", 0);
  hipMemsetParams ms{};
  ms.dst = d;
  ms.elementSize = 1;
  ms.width = 64;
  ms.height = 1;
  hipGraphNode_t memset_node = nullptr;
  if (hipError_t e = hipGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &ms); e != hipSuccess)
    return Fail("hipGraphAddMemsetNode", e);
  if (hipError_t e = hipGraphNodeGetType(memset_node, &type); e != hipSuccess) return Fail("hipGraphNodeGetType", e);
  if (static_cast<int>(type) != kMemsetNode6) return Fail("6.x type of a memset node", type);
  (void)hipGraphDestroy(graph);
  (void)hipFree(d);
  return 0;
}

}  // namespace

extern "C" int Major6Checks(void* device_ptr, void* pinned_ptr, const Major5Props* expected) {
  unsigned char prop[kR0600Size + 64];
  std::memset(prop, 0xab, sizeof prop);
  if (hipError_t e = hipGetDevicePropertiesR0600(prop, 0); e != hipSuccess) return Fail("hipGetDevicePropertiesR0600", e);
  if (std::strncmp(reinterpret_cast<const char*>(prop), expected->name, 256) != 0) return Fail("R0600 name", 0);
  size_t total = 0;
  std::memcpy(&total, prop + kTotalGlobalMemAt, sizeof total);
  if (total != expected->total_global_mem) return Fail("R0600 totalGlobalMem", static_cast<int>(total >> 20));
  if (std::strncmp(reinterpret_cast<const char*>(prop + kGcnArchNameAt), expected->gcn_arch_name, 256) != 0)
    return Fail("R0600 gcnArchName", 0);
  for (size_t i = kR0600Size; i < sizeof prop; ++i)
    if (prop[i] != 0xab) return Fail("hipGetDevicePropertiesR0600 wrote past 1472 bytes at", static_cast<int>(i));
  hipPointerAttribute_t a{};
  if (hipError_t e = hipPointerGetAttributes(&a, device_ptr); e != hipSuccess) return Fail("device pointer", e);
  if (static_cast<int>(a.memoryType) != kDevice6) return Fail("6.x type of device memory", a.memoryType);
  if (hipError_t e = hipPointerGetAttributes(&a, pinned_ptr); e != hipSuccess) return Fail("pinned pointer", e);
  if (static_cast<int>(a.memoryType) != kHost6) return Fail("6.x type of pinned memory", a.memoryType);
  std::vector<char> plain(64);
  a.memoryType = static_cast<hipMemoryType>(77);
  if (hipError_t e = hipPointerGetAttributes(&a, plain.data()); e != hipSuccess)
    return Fail("6.x: unregistered memory is hipSuccess", e);
  if (static_cast<int>(a.memoryType) != kUnregistered6) return Fail("6.x type of unregistered memory", a.memoryType);
  // hipPointerGetAttribute's MEMORY_TYPE: the same 6.x numbering.
  uint32_t type = 77;
  if (hipError_t e = hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, device_ptr); e != hipSuccess)
    return Fail("hipPointerGetAttribute(device pointer)", e);
  if (static_cast<int>(type) != kDevice6) return Fail("6.x attribute type of device memory", static_cast<int>(type));
  if (hipError_t e = hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, pinned_ptr); e != hipSuccess)
    return Fail("hipPointerGetAttribute(pinned pointer)", e);
  if (static_cast<int>(type) != kHost6) return Fail("6.x attribute type of pinned memory", static_cast<int>(type));
  // hipMemcpyParam2D reads hip_Memcpy2D's memory types in 6.x numbering:
  // 64 bytes host (1) -> device (2) -> host (1), read back byte-exact.
  unsigned char out[64];
  unsigned char in[64];
  for (int i = 0; i < 64; ++i) in[i] = static_cast<unsigned char>(i * 7 + 3);
  std::memset(out, 0, sizeof out);
  hip_Memcpy2D up{};
  up.srcMemoryType = static_cast<hipMemoryType>(kHost6);
  up.srcHost = in;
  up.dstMemoryType = static_cast<hipMemoryType>(kDevice6);
  up.dstDevice = device_ptr;
  up.WidthInBytes = 16;
  up.Height = 4;  // Pitches 0: rows of 16 bytes back to back.
  if (hipError_t e = hipMemcpyParam2D(&up); e != hipSuccess) return Fail("6.x hipMemcpyParam2D up", e);
  hip_Memcpy2D down{};
  down.srcMemoryType = static_cast<hipMemoryType>(kDevice6);
  down.srcDevice = device_ptr;
  down.dstMemoryType = static_cast<hipMemoryType>(kHost6);
  down.dstHost = out;
  down.WidthInBytes = 16;
  down.Height = 4;
  if (hipError_t e = hipMemcpyParam2D(&down); e != hipSuccess) return Fail("6.x hipMemcpyParam2D down", e);
  if (std::memcmp(in, out, sizeof in) != 0) return Fail("6.x hipMemcpyParam2D round trip differs", 0);
  // hipDrvMemcpy3D reads the 6.x HIP_MEMCPY3D: 2 slices of 4 rows of 8
  // bytes, host (pitch 8) -> device (pitch 16, slices of 5 rows) -> host.
  unsigned char box_in[64];
  unsigned char box_out[64];
  for (int i = 0; i < 64; ++i) box_in[i] = static_cast<unsigned char>(i * 5 + 1);
  std::memset(box_out, 0, sizeof box_out);
  Memcpy3D6 up3{};
  up3.srcMemoryType = kHost6;
  up3.srcHost = box_in;
  up3.srcPitch = 8;
  up3.srcHeight = 4;
  up3.dstMemoryType = kDevice6;
  up3.dstDevice = device_ptr;
  up3.dstPitch = 16;
  up3.dstHeight = 5;
  up3.dstXInBytes = 4;
  up3.WidthInBytes = 8;
  up3.Height = 4;
  up3.Depth = 2;
  if (hipError_t e = hipDrvMemcpy3D(reinterpret_cast<const HIP_MEMCPY3D*>(&up3)); e != hipSuccess)
    return Fail("6.x hipDrvMemcpy3D up", e);
  Memcpy3D6 down3 = up3;
  down3.srcMemoryType = kDevice6;
  down3.srcHost = nullptr;
  down3.srcDevice = device_ptr;
  down3.srcPitch = 16;
  down3.srcHeight = 5;
  down3.srcXInBytes = 4;
  down3.dstMemoryType = kHost6;
  down3.dstDevice = nullptr;
  down3.dstHost = box_out;
  down3.dstPitch = 8;
  down3.dstHeight = 4;
  down3.dstXInBytes = 0;
  if (hipError_t e = hipDrvMemcpy3D(reinterpret_cast<const HIP_MEMCPY3D*>(&down3)); e != hipSuccess)
    return Fail("6.x hipDrvMemcpy3D down", e);
  if (std::memcmp(box_in, box_out, sizeof box_in) != 0) return Fail("6.x hipDrvMemcpy3D round trip differs", 0);
  // The same box as a driver-API graph memcpy node, read back in the 6.x
  // layout and numbering.
  std::memset(box_out, 0, sizeof box_out);
  hipGraph_t graph = nullptr;
  if (hipGraphCreate(&graph, 0) != hipSuccess) return Fail("hipGraphCreate", 0);
  hipGraphNode_t node = nullptr;
  down3.dstHost = box_out;
  if (hipError_t e = hipDrvGraphAddMemcpyNode(&node, graph, nullptr, 0, &down3, nullptr); e != hipSuccess)
    return Fail("6.x hipDrvGraphAddMemcpyNode", e);
  Memcpy3D6 read{};
  if (hipError_t e = hipDrvGraphMemcpyNodeGetParams(node, &read); e != hipSuccess)
    return Fail("6.x hipDrvGraphMemcpyNodeGetParams", e);
  if (read.srcMemoryType != kDevice6 || read.dstMemoryType != kHost6 || read.srcDevice != device_ptr ||
      read.dstHost != box_out || read.srcPitch != 16 || read.srcHeight != 5 || read.srcXInBytes != 4 ||
      read.Depth != 2 || read.Height != 4 || read.WidthInBytes != 8)
    return Fail("6.x HIP_MEMCPY3D read back from the node", static_cast<int>(read.srcMemoryType));
  hipGraphExec_t exec = nullptr;
  if (hipError_t e = hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0); e != hipSuccess)
    return Fail("hipGraphInstantiate", e);
  if (hipError_t e = hipGraphLaunch(exec, nullptr); e != hipSuccess) return Fail("hipGraphLaunch", e);
  if (hipError_t e = hipStreamSynchronize(nullptr); e != hipSuccess) return Fail("hipStreamSynchronize", e);
  if (std::memcmp(box_in, box_out, sizeof box_in) != 0) return Fail("6.x driver-API memcpy node's copy differs", 0);
  (void)hipGraphExecDestroy(exec);
  (void)hipGraphDestroy(graph);
  // 6.x hipGetLastError: the last error, not the last call's result.
  (void)hipGetLastError();
  if (hipSetDevice(999) != hipErrorInvalidDevice) return Fail("hipSetDevice(999)", 0);
  int count = 0;
  if (hipGetDeviceCount(&count) != hipSuccess) return Fail("hipGetDeviceCount", 0);
  if (hipError_t e = hipPeekAtLastError(); e != hipErrorInvalidDevice) return Fail("6.x hipPeekAtLastError", e);
  if (hipError_t e = hipGetLastError(); e != hipErrorInvalidDevice) return Fail("6.x hipGetLastError", e);
  if (hipError_t e = hipGetLastError(); e != hipSuccess) return Fail("6.x hipGetLastError reset", e);
  if (int failed = Vmm6AndNodeTypes(); failed != 0) return failed;
  // 6.x occupancy of an unknown kernel: hipErrorInvalidDeviceFunction (5.x:
  // hipErrorInvalidValue, main5's check).
  int blocks = -9;
  const void* no_kernel = nullptr;
  if (hipError_t e = hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, no_kernel, 64, 0);
      e != hipErrorInvalidDeviceFunction)
    return Fail("6.x occupancy of a null kernel", e);
  int grid = -9;
  const void* not_kernel = &count;
  if (hipError_t e = hipOccupancyMaxPotentialBlockSize(&grid, &blocks, not_kernel, 0, 0);
      e != hipErrorInvalidDeviceFunction)
    return Fail("6.x potential block size of a non-kernel", e);
  if (blocks != -9 || grid != -9) return Fail("a refused occupancy call wrote", blocks);
  std::printf("lib6: 6.x device properties (R0600 layout), memory types (pointer attributes, hip_Memcpy2D), HIP_MEMCPY3D layout, last-error rules, hipMemAllocationProp layout, graph node types and occupancy errors\n");
  return 0;
}
