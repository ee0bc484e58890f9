// mixed_majors: a program linked against Debian's libamdhip64.so.5 and a
// library linked against the 6.x ABI (libmajor6.so, through the link-only
// libamdhip64.so.6), in one process on one hipr stub. The same functions
// must answer each caller in its own major's terms (client_stub/abi/abi_major.h):
// hipPointerGetAttributes' hipMemoryType numbering and unregistered memory,
// HIP_MEMCPY3D's field widths, and hipGetLastError's rule.
#include <hip/hip_runtime_api.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "../common.h"
#include "mixed_majors.h"

// Texture references are deprecated; their per-major errors are checked here.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

int main() {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, 4096));
  void* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, 4096, 0));

  // 5.x answers here.
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, d));
  CHECK(a.memoryType == hipMemoryTypeDevice && hipMemoryTypeDevice == 1, "5.x type of device memory: %d",
        a.memoryType);
  HIP_OK(hipPointerGetAttributes(&a, pinned));
  CHECK(a.memoryType == hipMemoryTypeHost && hipMemoryTypeHost == 0, "5.x type of pinned memory: %d", a.memoryType);
  std::vector<char> plain(64);
  HIP_EXPECT(hipPointerGetAttributes(&a, plain.data()), hipErrorInvalidValue);
  (void)hipGetLastError();
  HIP_EXPECT(hipSetDevice(999), hipErrorInvalidDevice);
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  HIP_EXPECT(hipGetLastError(), hipSuccess);  // 5.x: the last call's result.

  // hipDrvMemcpy3D reads the 5.x HIP_MEMCPY3D (unsigned int fields): 2
  // slices of 4 rows of 8 bytes, host -> device (pitch 16, slices of 5 rows,
  // 4 bytes in) -> host.
  unsigned char box_in[64];
  unsigned char box_out[64];
  for (int i = 0; i < 64; ++i) box_in[i] = static_cast<unsigned char>(i * 3 + 2);
  std::memset(box_out, 0, sizeof box_out);
  HIP_MEMCPY3D up{};
  up.srcMemoryType = hipMemoryTypeHost;
  up.srcHost = box_in;
  up.srcPitch = 8;
  up.srcHeight = 4;
  up.dstMemoryType = hipMemoryTypeDevice;
  up.dstDevice = d;
  up.dstPitch = 16;
  up.dstHeight = 5;
  up.dstXInBytes = 4;
  up.WidthInBytes = 8;
  up.Height = 4;
  up.Depth = 2;
  HIP_OK(hipDrvMemcpy3D(&up));
  HIP_MEMCPY3D down{};
  down.srcMemoryType = hipMemoryTypeDevice;
  down.srcDevice = d;
  down.srcPitch = 16;
  down.srcHeight = 5;
  down.srcXInBytes = 4;
  down.dstMemoryType = hipMemoryTypeHost;
  down.dstHost = box_out;
  down.dstPitch = 8;
  down.dstHeight = 4;
  down.WidthInBytes = 8;
  down.Height = 4;
  down.Depth = 2;
  HIP_OK(hipDrvMemcpy3D(&down));
  CHECK(std::memcmp(box_in, box_out, sizeof box_in) == 0, "5.x hipDrvMemcpy3D round trip differs");

  // 6.x answers there, from the same stub.
  hipDeviceProp_t prop;
  HIP_OK(hipGetDeviceProperties(&prop, 0));
  Major5Props expected{};
  std::memcpy(expected.name, prop.name, sizeof expected.name);
  expected.total_global_mem = prop.totalGlobalMem;
  std::memcpy(expected.gcn_arch_name, prop.gcnArchName, sizeof expected.gcn_arch_name);
  CHECK(Major6Checks(d, pinned, &expected) == 0, "the 6.x library's checks failed");
  CHECK(Major7Checks(d) == 0, "the 7.x library's checks failed");
  // 5.x's null-argument errors (7.x's differ).
  HIP_EXPECT(hipFreeAsync(nullptr, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipPointerGetAttributes(&a, nullptr), hipErrorInvalidValue);
  int blocks = -9;
  const void* no_kernel = nullptr;
  HIP_EXPECT(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, no_kernel, 64, 0), hipErrorInvalidValue);
  // 5.x has no host location: a value past Device is invalid (7.x's answer,
  // hipErrorNotSupported, is lib7's check).
  hipMemAllocationProp host{};
  host.type = hipMemAllocationTypePinned;
  host.location.type = static_cast<hipMemLocationType>(2);
  size_t host_granule = 0;
  HIP_EXPECT(hipMemGetAllocationGranularity(&host_granule, &host, hipMemAllocationGranularityMinimum),
             hipErrorInvalidValue);
  hipMemGenericAllocationHandle_t host_handle = nullptr;
  HIP_EXPECT(hipMemCreate(&host_handle, 2 << 20, &host, 0), hipErrorInvalidValue);
  size_t tex_offset = 0;
  HIP_EXPECT(hipGetTextureAlignmentOffset(&tex_offset, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipBindTexture2D(nullptr, nullptr, d, nullptr, 4, 4, 64), hipErrorInvalidValue);
  HIP_EXPECT(hipBindTextureToArray(nullptr, nullptr, nullptr), hipErrorInvalidValue);

  // And 5.x answers here again.
  HIP_OK(hipPointerGetAttributes(&a, d));
  CHECK(a.memoryType == hipMemoryTypeDevice, "5.x type after the 6.x calls: %d", a.memoryType);
  hipGraph_t graph = nullptr;
  HIP_OK(hipGraphCreate(&graph, 0));
  hipGraphNode_t empty = nullptr;
  HIP_OK(hipGraphAddEmptyNode(&empty, graph, nullptr, 0));
  hipGraphNodeType type = hipGraphNodeTypeCount;
  HIP_OK(hipGraphNodeGetType(empty, &type));
  CHECK(type == hipGraphNodeTypeEmpty && type == 6, "5.x type of an empty node: %d", type);
  HIP_OK(hipGraphDestroy(graph));
  hipMemAllocationProp vmm{};
  vmm.type = hipMemAllocationTypePinned;
  vmm.location.type = hipMemLocationTypeDevice;
  vmm.location.id = 0;
  size_t granule = 0;
  HIP_OK(hipMemGetAllocationGranularity(&granule, &vmm, hipMemAllocationGranularityMinimum));
  hipMemGenericAllocationHandle_t h = nullptr;
  HIP_OK(hipMemCreate(&h, granule, &vmm, 0));
  hipMemAllocationProp back{};
  HIP_OK(hipMemGetAllocationPropertiesFromHandle(&back, h));
  CHECK(back.type == hipMemAllocationTypePinned && back.location.id == 0 && back.location.type == hipMemLocationTypeDevice,
        "5.x properties read back: type %d", back.type);
  HIP_OK(hipMemRelease(h));
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(d));
  std::printf("main5: 5.x memory types, last-error rules, graph node types and hipMemAllocationProp layout, beside a 6.x library\n");
  return e2e::Finish("mixed_majors");
}
