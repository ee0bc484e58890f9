// libmajor7.so: host code built against the 7.x ABI (linked with the
// link-only libamdhip64.so.7), loaded into the 5.x program beside
// libmajor6.so. Its checks expect 7.x answers from the same stub.
#include <hip/hip_runtime_api.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mixed_majors.h"

// Texture references are deprecated; their per-major errors are checked here.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace {

int Fail(const char* what, int got) {
  std::fprintf(stderr, "E2E_FAIL lib7: %s (got %d)\n", what, got);
  return 1;
}

// 7.0's hipMemsetParams, reordered to CUDA's fields (AMD's "HIP API 7.0
// changes"; Debian's header has the 5.x order, elementSize second).
struct MemsetParams7 {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};
static_assert(sizeof(MemsetParams7) == 40, "40 bytes (5.x's is 48)");

constexpr int kMemsetNode7 = 2;  // 6.x/7.x count node types from 0.

// 6.0's hipMemAllocationProp (type first; 5.x leads with compressionType).
struct MemAllocationProp7 {
  int type;
  int requestedHandleType;
  int location_type;
  int location_id;
  void* win32HandleMetaData;
  unsigned char compressionType, gpuDirectRDMACapable;
  unsigned short usage;
};
static_assert(sizeof(MemAllocationProp7) == 32, "32 bytes, as 5.x's");
constexpr int kLocationHost7 = 2;  // hipMemLocationTypeHost (7.1).

}  // namespace

extern "C" int Major7Checks(void* device_ptr) {
  // 7.0's null arguments: hipFreeAsync and hipPointerGetAttributes succeed.
  if (hipError_t e = hipFreeAsync(nullptr, nullptr); e != hipSuccess) return Fail("7.x hipFreeAsync(null)", e);
  hipPointerAttribute_t null_attr;
  std::memset(&null_attr, 0x5a, sizeof null_attr);
  if (hipError_t e = hipPointerGetAttributes(&null_attr, nullptr); e != hipSuccess)
    return Fail("7.x hipPointerGetAttributes(null pointer)", e);
  if (static_cast<int>(null_attr.memoryType) != 0) return Fail("7.x type of a null pointer", null_attr.memoryType);
  if (hipError_t e = hipPointerGetAttributes(nullptr, device_ptr); e != hipSuccess)
    return Fail("7.x hipPointerGetAttributes(null attributes)", e);
  // Texture references' null-argument errors as 7.0 changed them.
  size_t offset = 0;
  if (hipError_t e = hipGetTextureAlignmentOffset(&offset, nullptr); e != 912)
    return Fail("7.x hipGetTextureAlignmentOffset(null) is not hipErrorInvalidTexture", e);
  if (std::strcmp(hipGetErrorName(static_cast<hipError_t>(912)), "hipErrorInvalidTexture") != 0)
    return Fail("hipGetErrorName(912) does not name hipErrorInvalidTexture", 912);
  if (hipError_t e = hipBindTexture2D(nullptr, nullptr, device_ptr, nullptr, 4, 4, 64); e != hipErrorNotFound)
    return Fail("7.x hipBindTexture2D(null reference) is not hipErrorNotFound", e);
  if (hipError_t e = hipBindTextureToArray(nullptr, nullptr, nullptr); e != 911)
    return Fail("7.x hipBindTextureToArray(null) is not hipErrorInvalidChannelDescriptor", e);
  // A memset graph node from the 7.x struct: 64 rows of 4 ints, pitch 32.
  MemsetParams7 p{};
  p.dst = device_ptr;
  p.pitch = 32;
  p.value = 0x07070707u;
  p.elementSize = 4;
  p.width = 4;
  p.height = 64;
  hipGraph_t graph = nullptr;
  if (hipGraphCreate(&graph, 0) != hipSuccess) return Fail("hipGraphCreate", 0);
  if (hipMemset(device_ptr, 0, 64 * 32) != hipSuccess) return Fail("hipMemset", 0);
  hipGraphNode_t node = nullptr;
  if (hipError_t e = hipGraphAddMemsetNode(&node, graph, nullptr, 0, reinterpret_cast<const hipMemsetParams*>(&p));
      e != hipSuccess)
    return Fail("7.x hipGraphAddMemsetNode", e);
  MemsetParams7 back{};
  if (hipError_t e = hipGraphMemsetNodeGetParams(node, reinterpret_cast<hipMemsetParams*>(&back)); e != hipSuccess)
    return Fail("7.x hipGraphMemsetNodeGetParams", e);
  if (back.dst != device_ptr || back.pitch != 32 || back.value != p.value || back.elementSize != 4 ||
      back.width != 4 || back.height != 64)
    return Fail("7.x hipMemsetParams read back (pitch)", static_cast<int>(back.pitch));
  hipGraphNodeType type = hipGraphNodeTypeCount;
  if (hipError_t e = hipGraphNodeGetType(node, &type); e != hipSuccess) return Fail("hipGraphNodeGetType", e);
  if (static_cast<int>(type) != kMemsetNode7) return Fail("7.x type of a memset node", type);
  hipGraphExec_t exec = nullptr;
  if (hipError_t e = hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0); e != hipSuccess)
    return Fail("hipGraphInstantiate", e);
  if (hipError_t e = hipGraphLaunch(exec, nullptr); e != hipSuccess) return Fail("hipGraphLaunch", e);
  if (hipError_t e = hipStreamSynchronize(nullptr); e != hipSuccess) return Fail("hipStreamSynchronize", e);
  std::vector<uint8_t> rows(64 * 32);
  if (hipMemcpy(rows.data(), device_ptr, rows.size(), hipMemcpyDeviceToHost) != hipSuccess) return Fail("hipMemcpy", 0);
  for (size_t r = 0; r < 64; ++r)
    for (size_t b = 0; b < 32; ++b)
      if (rows[r * 32 + b] != (b < 16 ? 0x07 : 0))
        return Fail("the 7.x memset node's rows (byte)", static_cast<int>(r * 32 + b));
  (void)hipGraphExecDestroy(exec);
  (void)hipGraphDestroy(graph);
  // Host-located virtual memory, a 7.1 request hipr cannot serve: refused as
  // not supported (5.x's answer, hipErrorInvalidValue, is main5's check).
  MemAllocationProp7 host{};
  host.type = hipMemAllocationTypePinned;
  host.location_type = kLocationHost7;
  const auto* host_prop = reinterpret_cast<const hipMemAllocationProp*>(&host);
  size_t granule = 0;
  if (hipError_t e = hipMemGetAllocationGranularity(&granule, host_prop, hipMemAllocationGranularityMinimum);
      e != hipErrorNotSupported)
    return Fail("7.x granularity of host-located memory is not hipErrorNotSupported", e);
  hipMemGenericAllocationHandle_t h = nullptr;
  if (hipError_t e = hipMemCreate(&h, 2 << 20, host_prop, 0); e != hipErrorNotSupported)
    return Fail("7.x hipMemCreate of host-located memory is not hipErrorNotSupported", e);
  // 7.x hipGetLastError: the last error, hipErrorNotReady not counted.
  (void)hipGetLastError();
  if (hipSetDevice(999) != hipErrorInvalidDevice) return Fail("hipSetDevice(999)", 0);
  hipStream_t s = nullptr;
  if (hipStreamCreate(&s) != hipSuccess) return Fail("hipStreamCreate", 0);
  static volatile bool gate = false;
  gate = false;
  if (hipStreamAddCallback(s, [](hipStream_t, hipError_t, void*) { while (!gate) usleep(1000); }, nullptr, 0) !=
      hipSuccess)
    return Fail("hipStreamAddCallback", 0);
  const hipError_t busy = hipStreamQuery(s);
  gate = true;
  if (busy != hipErrorNotReady) return Fail("hipStreamQuery of a held stream", busy);
  if (hipError_t e = hipGetLastError(); e != hipErrorInvalidDevice) return Fail("7.x hipGetLastError after NotReady", e);
  if (hipStreamSynchronize(s) != hipSuccess || hipStreamDestroy(s) != hipSuccess) return Fail("stream teardown", 0);
  std::printf("lib7: 7.x hipMemsetParams layout, graph node types and last-error rule\n");
  return 0;
}
