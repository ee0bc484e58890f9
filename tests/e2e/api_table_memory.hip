// api_table_memory: one row per hand-written memory function (allocation,
// copies, memsets, host memory, symbols), against a sim worker with two
// devices; see api_table.h. Linked against the stub for the 6.x additions.
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>
#include <hip/hip_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "api_table.h"

// hipHostAlloc, hipMallocHost and hipFreeHost are deprecated, and have rows
// all the same.
#pragma clang diagnostic ignored "-Wdeprecated-declarations"

// hip_ext.h's launches (C++ linkage, as 5.x exports them), declared here
// from their documented signatures.
hipError_t hipExtModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,
                                    uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
                                    void** kernelParams, void** extra, hipEvent_t startEvent, hipEvent_t stopEvent,
                                    uint32_t flags);
hipError_t hipHccModuleLaunchKernel(hipFunction_t f, uint32_t globalWorkSizeX, uint32_t globalWorkSizeY,
                                    uint32_t globalWorkSizeZ, uint32_t localWorkSizeX, uint32_t localWorkSizeY,
                                    uint32_t localWorkSizeZ, size_t sharedMemBytes, hipStream_t hStream,
                                    void** kernelParams, void** extra, hipEvent_t startEvent, hipEvent_t stopEvent);

// ROCm >= 5.3's per-thread forms of the async copies and memsets.
extern "C" {
hipError_t hipMemcpy2DAsync_spt(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                                hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms* p, hipStream_t stream);
hipError_t hipPointerSetAttribute(const void* value, hipPointer_attribute attribute, hipDeviceptr_t ptr);
hipError_t hipMemsetAsync_spt(void* dst, int value, size_t size, hipStream_t stream);
hipError_t hipMemPrefetchAsync_v2(const void* dev_ptr, size_t count, hipMemLocation location, unsigned int flags,
                                  hipStream_t stream);
hipError_t hipMemAdvise_v2(const void* dev_ptr, size_t count, hipMemoryAdvise advice, hipMemLocation location);
hipError_t hipMemset2DAsync_spt(void* dst, size_t pitch, int value, size_t width, size_t height, hipStream_t stream);
hipError_t hipMemset3DAsync_spt(hipPitchedPtr p, int value, hipExtent extent, hipStream_t stream);
hipError_t hipMemcpyToSymbolAsync_spt(const void* symbol, const void* src, size_t count, size_t offset,
                                      hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpyFromSymbolAsync_spt(void* dst, const void* symbol, size_t count, size_t offset,
                                        hipMemcpyKind kind, hipStream_t stream);
}

// 6.x/7.x also export them under their C names (declared here under other
// names, bound to those symbols).
extern "C" hipError_t CExtModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                             uint32_t ly, uint32_t lz, size_t shared, hipStream_t stream,
                                             void** params, void** extra, hipEvent_t start, hipEvent_t stop,
                                             uint32_t flags) __asm__("hipExtModuleLaunchKernel");
extern "C" hipError_t CHccModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                             uint32_t ly, uint32_t lz, size_t shared, hipStream_t stream,
                                             void** params, void** extra, hipEvent_t start,
                                             hipEvent_t stop) __asm__("hipHccModuleLaunchKernel");
// ROCm 7.1's peer 3-D copies and batched copies, their structs by layout.
struct HiprMemcpy3DPeerParms {
  hipArray_t srcArray;
  hipPos srcPos;
  hipPitchedPtr srcPtr;
  int srcDevice;
  hipArray_t dstArray;
  hipPos dstPos;
  hipPitchedPtr dstPtr;
  int dstDevice;
  hipExtent extent;
};
struct HiprMemcpyAttributes {
  int src_access_order;
  hipMemLocation src_hint;
  hipMemLocation dst_hint;
  unsigned int flags;
};
extern "C" {
hipError_t hipMemcpy3DPeer(HiprMemcpy3DPeerParms* p);
hipError_t hipMemcpy3DPeerAsync(HiprMemcpy3DPeerParms* p, hipStream_t stream);
hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count, HiprMemcpyAttributes* attrs,
                               size_t* attr_indices, size_t attr_count, size_t* fail_index, hipStream_t stream);
}
// ROCm 7.1's 2-D memsets.
extern "C" {
hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width, size_t height);
hipError_t hipMemsetD2D8Async(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width, size_t height,
                              hipStream_t stream);
hipError_t hipMemsetD2D16(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width, size_t height);
hipError_t hipMemsetD2D16Async(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width, size_t height,
                               hipStream_t stream);
hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width, size_t height);
hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width, size_t height,
                               hipStream_t stream);
}

// For the symbol rows (hipMemcpyToSymbol, hipGetSymbolAddress, ...).
__device__ int g_symbol[64];

__global__ void DoubleSymbol(int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) g_symbol[i] *= 2;
}

// For the module launch rows: thread `t` of block `b` writes
// base + (b * stride + t) * 1000 + blockDim.x at index b * stride + t.
__global__ void MarkGlobal(int* out, int stride, int base) {
  const int i = static_cast<int>(blockIdx.x) * stride + static_cast<int>(threadIdx.x);
  out[i] = base + i * 1000 + static_cast<int>(blockDim.x);
}

// For the virtual memory rows: adds 1 to n ints (across mappings).
__global__ void AddOne(int* p, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) p[i] += 1;
}

namespace {

// A byte no row writes: outputs of failed calls and bytes outside a copied
// or set region must still hold it.
constexpr uint8_t kUntouched = 0xee;
// A pointer no call returns: a failed call must leave it in its output.
void* SentinelPtr() { return reinterpret_cast<void*>(uintptr_t{0x5eed0}); }
constexpr size_t kSentinelSize = 0x5eed5eedu;

void* DevAlloc(size_t n) {
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, n));
  return p;
}

void* DevAllocOn(int device, size_t n) {
  int before = 0;
  HIP_OK(hipGetDevice(&before));
  HIP_OK(hipSetDevice(device));
  void* p = DevAlloc(n);
  HIP_OK(hipSetDevice(before));
  return p;
}

void* PinnedAlloc(size_t n) {
  void* p = nullptr;
  HIP_OK(hipHostMalloc(&p, n, hipHostMallocDefault));
  return p;
}

// Device bytes read back with a blocking copy (the memory's own device current).
std::vector<uint8_t> ReadBack(const void* d, size_t n) {
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, d));
  int before = 0;
  HIP_OK(hipGetDevice(&before));
  HIP_OK(hipSetDevice(a.device));
  std::vector<uint8_t> out(n, 0);
  HIP_OK(hipMemcpy(out.data(), d, n, hipMemcpyDeviceToHost));
  HIP_OK(hipSetDevice(before));
  return out;
}

void Upload(void* d, uint64_t seed, size_t n) {
  std::vector<uint8_t> h(n);
  e2e::FillPattern(h.data(), n, seed);
  HIP_OK(hipMemcpy(d, h.data(), n, hipMemcpyHostToDevice));
}

hipStream_t NewStream() {
  hipStream_t s = nullptr;
  HIP_OK(hipStreamCreate(&s));
  return s;
}

// ---- Allocation and host memory ---------------------------------------------

void Malloc() {
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 1u << 20));
  CHECK(p != nullptr, "hipMalloc gave a null pointer");
  size_t free_after = 0, total = 0;
  HIP_OK(hipMemGetInfo(&free_after, &total));
  HIP_EXPECT(hipMalloc(nullptr, 16), hipErrorInvalidValue);
  void* huge = reinterpret_cast<void*>(0x1);
  HIP_EXPECT(hipMalloc(&huge, total + (1ull << 30)), hipErrorOutOfMemory);
  HIP_OK(hipFree(p));
}

void Free() {
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 4096));
  HIP_OK(hipFree(p));
  HIP_OK(hipFree(nullptr));  // As CUDA: freeing null is a no-op.
  // A second free of the same pointer is an error, not a crash.
  HIP_EXPECT(hipFree(p), hipErrorInvalidValue);
}

void MemGetInfo() {
  size_t free_before = 0, total = 0, free_after = 0;
  HIP_OK(hipMemGetInfo(&free_before, &total));
  CHECK(free_before > 0 && free_before <= total, "free %zu of %zu", free_before, total);
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 64u << 20));
  HIP_OK(hipMemGetInfo(&free_after, &total));
  CHECK(free_after + (64u << 20) <= free_before, "free %zu -> %zu after 64 MiB", free_before, free_after);
  HIP_OK(hipFree(p));
}

void HostMalloc() {
  const size_t n = 10000;
  void* p = nullptr;
  HIP_OK(hipHostMalloc(&p, n, hipHostMallocDefault));
  CHECK(p != nullptr && (reinterpret_cast<uintptr_t>(p) & 4095) == 0, "hipHostMalloc gave %p", p);
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, p));
  CHECK(a.memoryType == hipMemoryTypeHost && a.hostPointer == p, "pinned memory has type %d, host pointer %p",
        a.memoryType, a.hostPointer);
  // Host-accessible and usable as a copy's source and destination.
  e2e::FillPattern(p, n, 101);
  void* d = DevAlloc(n);
  HIP_OK(hipMemcpy(d, p, n, hipMemcpyHostToDevice));
  memset(p, 0, n);
  HIP_OK(hipMemcpy(p, d, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(p, n, 101, "hipHostMalloc memory round trip");
  void* keep = SentinelPtr();
  HIP_EXPECT(hipHostMalloc(&keep, 64, hipHostMallocCoherent | hipHostMallocNonCoherent), hipErrorInvalidValue);
  HIP_EXPECT(hipHostMalloc(&keep, 64, 0x100u), hipErrorInvalidValue);
  // hipHostMallocUncached (7.x headers, 0x10000000) is accepted, as clr 7.x.
  void* uncached = nullptr;
  HIP_OK(hipHostMalloc(&uncached, 64, 0x10000000u));
  CHECK(uncached != nullptr, "uncached hipHostMalloc gave null");
  HIP_OK(hipHostFree(uncached));
  CHECK(keep == SentinelPtr(), "a failed hipHostMalloc wrote %p", keep);
  HIP_EXPECT(hipHostMalloc(nullptr, 64, 0), hipErrorInvalidValue);
  HIP_OK(hipHostMalloc(&keep, 0, 0));
  CHECK(keep == nullptr, "hipHostMalloc of 0 bytes gave %p", keep);
  // Memsets of pinned memory work as on device memory (clr's device fills
  // it in place), in stream order: behind a copy into it on the stream, a
  // host function that checks it is still unfilled, and before a copy out.
  uint8_t* h = static_cast<uint8_t*>(p);
  HIP_OK(hipMemset(h, 0x21, n));
  CHECK_BYTES_EQUAL(h, n, 0x21, "hipMemset of pinned memory");
  HIP_OK(hipMemsetD32(h + 4, 0x01020304, 10));
  const uint32_t word = 0x01020304;
  for (size_t i = 0; i < 10; ++i) CHECK(memcmp(h + 4 + 4 * i, &word, 4) == 0, "hipMemsetD32 word %zu", i);
  CHECK(h[0] == 0x21 && h[44] == 0x21, "hipMemsetD32 of pinned memory wrote outside its words");
  HIP_OK(hipMemset2D(h + 100, 50, 0x3c, 20, 4));
  for (size_t y = 0; y < 4; ++y) {
    CHECK_BYTES_EQUAL(h + 100 + y * 50, 20, 0x3c, "a pinned 2-D memset row");
    CHECK_BYTES_EQUAL(h + 120 + y * 50, 30, 0x21, "past a pinned 2-D memset row");
  }
  hipStream_t s = NewStream();
  Upload(d, 102, n);
  struct Seen {
    const uint8_t* h;
    int pattern_intact = -1;
  } seen{h};
  HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipLaunchHostFunc(
      s,
      [](void* arg) {
        auto* v = static_cast<Seen*>(arg);
        std::vector<uint8_t> want(64);
        e2e::FillPattern(want.data(), want.size(), 102);
        v->pattern_intact = memcmp(v->h, want.data(), want.size()) == 0 ? 1 : 0;
      },
      &seen));
  HIP_OK(hipMemsetAsync(h, 0x4d, n / 2, s));
  void* d2 = DevAlloc(n);
  HIP_OK(hipMemcpyAsync(d2, h, n, hipMemcpyHostToDevice, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(seen.pattern_intact == 1, "the async memset ran before the copy and host function ahead of it (%d)",
        seen.pattern_intact);
  CHECK_BYTES_EQUAL(h, n / 2, 0x4d, "hipMemsetAsync of pinned memory");
  std::vector<uint8_t> back = ReadBack(d2, n);
  CHECK_BYTES_EQUAL(back.data(), n / 2, 0x4d, "a copy behind the pinned memset");
  std::vector<uint8_t> want(n);
  e2e::FillPattern(want.data(), n, 102);
  CHECK(memcmp(back.data() + n / 2, want.data() + n / 2, n - n / 2) == 0, "the unfilled half after the copies");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d2));
  HIP_OK(hipFree(d));
  HIP_OK(hipHostFree(p));
}

void HostAlloc() {
  const size_t n = 5000;
  void* p = nullptr;
  HIP_OK(hipHostAlloc(&p, n, hipHostMallocMapped));
  CHECK(p != nullptr, "hipHostAlloc gave null");
  unsigned flags = 0;
  HIP_OK(hipHostGetFlags(&flags, p));
  CHECK(flags == hipHostMallocMapped, "hipHostAlloc(Mapped) memory has flags %#x", flags);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(p, &size));
  CHECK(size == n, "hipHostAlloc memory of %zu bytes has size %zu", n, size);
  e2e::FillPattern(p, n, 102);
  CHECK_PATTERN(p, n, 102, "hipHostAlloc memory is host-writable");
  // hipHostAlloc takes only Portable, Mapped and WriteCombined.
  void* keep = SentinelPtr();
  HIP_EXPECT(hipHostAlloc(&keep, 64, hipHostMallocCoherent), hipErrorInvalidValue);
  CHECK(keep == SentinelPtr(), "a failed hipHostAlloc wrote %p", keep);
  HIP_EXPECT(hipHostAlloc(nullptr, 64, 0), hipErrorInvalidValue);
  HIP_OK(hipHostFree(p));
}

void MallocHost() {
  const size_t n = 3000;
  void* p = nullptr;
  HIP_OK(hipMallocHost(&p, n));
  CHECK(p != nullptr, "hipMallocHost gave null");
  unsigned flags = 0xff;
  HIP_OK(hipHostGetFlags(&flags, p));
  CHECK(flags == 0, "hipMallocHost memory has flags %#x", flags);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(p, &size));
  CHECK(size == n, "hipMallocHost memory of %zu bytes has size %zu", n, size);
  void* d = DevAlloc(n);
  Upload(d, 103, n);
  HIP_OK(hipMemcpy(p, d, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(p, n, 103, "device to hipMallocHost memory");
  HIP_EXPECT(hipMallocHost(nullptr, 64), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
  HIP_OK(hipFreeHost(p));
}

// hipHostFree / hipFreeHost: the pinned record goes; unknown, device and
// registered pointers are refused.
void CheckHostFree(hipError_t (*free_fn)(void*), const char* name) {
  // An async copy into pinned memory still on its way when the memory is
  // freed lands before the free returns: never in memory allocated after.
  {
    const size_t n = 8 << 20;
    void* d = DevAlloc(n);
    HIP_OK(hipMemset(d, 0x6b, n));
    hipStream_t s = NewStream();
    void* early = PinnedAlloc(n);
    HIP_OK(hipMemcpyAsync(early, d, n, hipMemcpyDeviceToHost, s));
    HIP_OK(free_fn(early));
    void* later = PinnedAlloc(n);
    memset(later, 0, n);
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipStreamSynchronize(s));
    CHECK_BYTES_EQUAL(static_cast<uint8_t*>(later), n, 0, "pinned memory allocated after a free");
    HIP_OK(hipHostFree(later));
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(d));
  }
  void* p = PinnedAlloc(4096);
  unsigned flags = 0;
  HIP_OK(hipHostGetFlags(&flags, p));
  // As clr (one ihipFree for both): device memory is freed too, and
  // hipFree frees hipHostMalloc memory.
  void* d = DevAlloc(256);
  size_t size = 0;
  HIP_OK(free_fn(d));
  CHECK(hipMemPtrGetInfo(d, &size) == hipErrorInvalidValue, "%s(device pointer) left it allocated", name);
  void* other = PinnedAlloc(4096);
  HIP_OK(hipFree(other));
  HIP_EXPECT(hipHostGetFlags(&flags, other), hipErrorInvalidValue);
  HIP_EXPECT(free_fn(other), hipErrorInvalidValue);
  std::vector<uint8_t> plain(4096);
  HIP_OK(hipHostRegister(plain.data(), plain.size(), 0));
  HIP_EXPECT(free_fn(plain.data()), hipErrorInvalidValue);  // Registered: hipHostUnregister's.
  HIP_OK(hipHostGetFlags(&flags, plain.data()));
  HIP_OK(hipHostUnregister(plain.data()));
  HIP_OK(free_fn(p));
  HIP_EXPECT(hipHostGetFlags(&flags, p), hipErrorInvalidValue);
  HIP_EXPECT(free_fn(p), hipErrorInvalidValue);
  HIP_OK(free_fn(nullptr));
}

void HostFree() { CheckHostFree(hipHostFree, "hipHostFree"); }
void FreeHost() { CheckHostFree(hipFreeHost, "hipFreeHost"); }

void HostGetFlags() {
  void* p = nullptr;
  const unsigned want = hipHostMallocPortable | hipHostMallocMapped;
  HIP_OK(hipHostMalloc(&p, 8192, want));
  unsigned flags = 0;
  HIP_OK(hipHostGetFlags(&flags, p));
  CHECK(flags == want, "flags %#x, expected %#x", flags, want);
  flags = 0;
  HIP_OK(hipHostGetFlags(&flags, static_cast<char*>(p) + 5000));  // Inside the allocation.
  CHECK(flags == want, "interior pointer: flags %#x, expected %#x", flags, want);
  std::vector<uint8_t> plain(64);
  flags = 0x5eed;
  HIP_EXPECT(hipHostGetFlags(&flags, plain.data()), hipErrorInvalidValue);
  HIP_EXPECT(hipHostGetFlags(&flags, nullptr), hipErrorInvalidValue);
  CHECK(flags == 0x5eed, "a failed hipHostGetFlags wrote %#x", flags);
  HIP_EXPECT(hipHostGetFlags(nullptr, p), hipErrorInvalidValue);
  HIP_OK(hipHostFree(p));
}

void HostRegister() {
  const size_t n = 3 * 4096;
  std::vector<uint8_t> buf(n + 4096, kUntouched);
  uint8_t* h = buf.data();
  HIP_OK(hipHostRegister(h, n, hipHostRegisterMapped));
  unsigned flags = 0;
  HIP_OK(hipHostGetFlags(&flags, h + 100));
  CHECK(flags == hipHostRegisterMapped, "registered memory has flags %#x", flags);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(h, &size));
  CHECK(size == n, "registered %zu bytes, hipMemPtrGetInfo says %zu", n, size);
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, h));
  CHECK(a.memoryType == hipMemoryTypeHost, "registered memory has type %d", a.memoryType);
  // An async device-to-host copy into registered (pinned) memory lands by the
  // stream's synchronization.
  void* d = DevAlloc(n);
  Upload(d, 104, n);
  hipStream_t s = NewStream();
  HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(h, n, 104, "async copy into registered memory");
  CHECK_BYTES_EQUAL(h + n, 4096, kUntouched, "bytes after the registered range");
  // Registering it (or any part) again, bad flags and device memory are refused.
  HIP_EXPECT(hipHostRegister(h, n, 0), hipErrorHostMemoryAlreadyRegistered);
  HIP_EXPECT(hipHostRegister(h + n - 10, 100, 0), hipErrorHostMemoryAlreadyRegistered);
  // A range holding a registered one (neither end inside it) overlaps it too.
  std::vector<uint8_t> wide(5 * 4096);
  HIP_OK(hipHostRegister(wide.data() + 2 * 4096, 4096, 0));
  HIP_EXPECT(hipHostRegister(wide.data(), wide.size(), 0), hipErrorHostMemoryAlreadyRegistered);
  size_t inner = 0;
  HIP_OK(hipMemPtrGetInfo(wide.data() + 2 * 4096, &inner));
  CHECK(inner == 4096, "the inner registration became %zu bytes", inner);
  HIP_EXPECT(hipMemPtrGetInfo(wide.data(), &inner), hipErrorInvalidValue);
  HIP_OK(hipHostUnregister(wide.data() + 2 * 4096));
  HIP_EXPECT(hipHostRegister(h + n, 4096, 0x80), hipErrorInvalidValue);
  // hipHostRegisterReadOnly (0x08, 6.x/7.x headers) is a flag clr accepts.
  HIP_OK(hipHostRegister(h + n, 4096, 0x08 | hipHostRegisterMapped));
  HIP_OK(hipHostGetFlags(&flags, h + n));
  CHECK(flags == (0x08 | hipHostRegisterMapped), "read-only registration has flags %#x", flags);
  HIP_OK(hipHostUnregister(h + n));
  HIP_EXPECT(hipHostRegister(d, 64, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipHostRegister(nullptr, 64, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipHostRegister(h + n, 0, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipHostGetFlags(&flags, h + n), hipErrorInvalidValue);  // The refused range stayed unregistered.
  HIP_OK(hipHostUnregister(h));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void HostUnregister() {
  std::vector<uint8_t> buf(8192);
  HIP_OK(hipHostRegister(buf.data(), buf.size(), 0));
  // Only the registered base unregisters.
  HIP_EXPECT(hipHostUnregister(buf.data() + 8), hipErrorHostMemoryNotRegistered);
  unsigned flags = 0;
  HIP_OK(hipHostGetFlags(&flags, buf.data()));
  HIP_OK(hipHostUnregister(buf.data()));
  HIP_EXPECT(hipHostGetFlags(&flags, buf.data()), hipErrorInvalidValue);
  size_t size = kSentinelSize;
  HIP_EXPECT(hipMemPtrGetInfo(buf.data(), &size), hipErrorInvalidValue);
  HIP_EXPECT(hipHostUnregister(buf.data()), hipErrorHostMemoryNotRegistered);
  HIP_EXPECT(hipHostUnregister(nullptr), hipErrorHostMemoryNotRegistered);
  // hipHostMalloc memory was never registered.
  void* p = PinnedAlloc(64);
  HIP_EXPECT(hipHostUnregister(p), hipErrorHostMemoryNotRegistered);
  HIP_OK(hipHostGetFlags(&flags, p));
  HIP_OK(hipHostFree(p));
  // Unregistered memory may be registered again; an async copy into it
  // still on its way has landed when hipHostUnregister returns.
  HIP_OK(hipHostRegister(buf.data(), buf.size(), 0));
  void* d = DevAlloc(buf.size());
  Upload(d, 108, buf.size());
  hipStream_t s = NewStream();
  HIP_OK(hipMemcpyAsync(buf.data(), d, buf.size(), hipMemcpyDeviceToHost, s));
  HIP_OK(hipHostUnregister(buf.data()));
  CHECK_PATTERN(buf.data(), buf.size(), 108, "an async copy into memory unregistered after it");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void MemPtrGetInfo() {
  void* d = DevAlloc(5000);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(d, &size));
  CHECK(size == 5000, "device allocation of 5000 has size %zu", size);
  size = 0;
  HIP_OK(hipMemPtrGetInfo(static_cast<char*>(d) + 4000, &size));
  CHECK(size == 5000, "interior pointer: size %zu", size);
  void* h = PinnedAlloc(3000);
  HIP_OK(hipMemPtrGetInfo(h, &size));
  CHECK(size == 3000, "pinned allocation of 3000 has size %zu", size);
  std::vector<uint8_t> plain(64);
  size = kSentinelSize;
  HIP_EXPECT(hipMemPtrGetInfo(plain.data(), &size), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPtrGetInfo(nullptr, &size), hipErrorInvalidValue);
  CHECK(size == kSentinelSize, "a failed hipMemPtrGetInfo wrote %zu", size);
  HIP_EXPECT(hipMemPtrGetInfo(d, nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
  HIP_EXPECT(hipMemPtrGetInfo(d, &size), hipErrorInvalidValue);  // Freed.
  HIP_OK(hipHostFree(h));
}

void PointerGetAttributes() {
  void* d1 = DevAllocOn(1, 8192);
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, static_cast<char*>(d1) + 100));
  CHECK(a.memoryType == hipMemoryTypeDevice && a.device == 1 && a.devicePointer == static_cast<char*>(d1) + 100 &&
            a.isManaged == 0,
        "device 1 memory: type %d, device %d, devicePointer %p", a.memoryType, a.device, a.devicePointer);
  void* d0 = DevAlloc(64);
  HIP_OK(hipPointerGetAttributes(&a, d0));
  CHECK(a.memoryType == hipMemoryTypeDevice && a.device == 0, "device 0 memory: type %d, device %d", a.memoryType,
        a.device);
  void* h = nullptr;
  HIP_OK(hipHostMalloc(&h, 100, hipHostMallocMapped));
  memset(&a, 0, sizeof a);
  HIP_OK(hipPointerGetAttributes(&a, h));
  CHECK(a.memoryType == hipMemoryTypeHost && a.hostPointer == h && a.allocationFlags == hipHostMallocMapped,
        "pinned memory: type %d, hostPointer %p, flags %#x", a.memoryType, a.hostPointer, a.allocationFlags);
  // HIP 5.x (this program's major): memory unknown to the runtime is an error.
  std::vector<uint8_t> plain(64);
  hipPointerAttribute_t keep{};
  keep.device = 77;
  HIP_EXPECT(hipPointerGetAttributes(&keep, plain.data()), hipErrorInvalidValue);
  HIP_EXPECT(hipPointerGetAttributes(&keep, nullptr), hipErrorInvalidValue);
  CHECK(keep.device == 77, "a failed hipPointerGetAttributes wrote device %d", keep.device);
  HIP_EXPECT(hipPointerGetAttributes(nullptr, d0), hipErrorInvalidValue);
  HIP_OK(hipFree(d1));
  HIP_OK(hipFree(d0));
  HIP_OK(hipHostFree(h));
}

void MemGetAddressRange() {
  void* d = DevAlloc(1 << 20);
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  HIP_OK(hipMemGetAddressRange(&base, &size, static_cast<char*>(d) + 12345));
  CHECK(base == d && size == (1 << 20), "hipMemGetAddressRange: %p +%zu, expected %p +%d", base, size, d, 1 << 20);
  size = 0;
  HIP_OK(hipMemGetAddressRange(nullptr, &size, d));  // Either output may be null.
  CHECK(size == (1 << 20), "size alone: %zu", size);
  std::vector<uint8_t> plain(64);
  base = SentinelPtr();
  size = kSentinelSize;
  HIP_EXPECT(hipMemGetAddressRange(&base, &size, plain.data()), hipErrorNotFound);
  HIP_EXPECT(hipMemGetAddressRange(&base, &size, nullptr), hipErrorNotFound);
  CHECK(base == SentinelPtr() && size == kSentinelSize, "a failed hipMemGetAddressRange wrote %p +%zu", base, size);
  HIP_OK(hipFree(d));
  HIP_EXPECT(hipMemGetAddressRange(&base, &size, d), hipErrorNotFound);
  // Pinned host memory is the runtime's too (clr's getMemoryObject): its
  // allocation, from an interior pointer, hipHostMalloc's or registered.
  void* pinned = PinnedAlloc(10000);
  HIP_OK(hipMemGetAddressRange(&base, &size, static_cast<char*>(pinned) + 777));
  CHECK(base == pinned && size == 10000, "pinned: %p +%zu, expected %p +10000", base, size, pinned);
  HIP_OK(hipHostFree(pinned));
  std::vector<uint8_t> reg(3 * 4096);
  HIP_OK(hipHostRegister(reg.data(), reg.size(), 0));
  HIP_OK(hipMemGetAddressRange(&base, &size, reg.data() + 4096));
  CHECK(base == reg.data() && size == reg.size(), "registered: %p +%zu", base, size);
  HIP_OK(hipHostUnregister(reg.data()));
  HIP_EXPECT(hipMemGetAddressRange(&base, &size, reg.data()), hipErrorNotFound);
}

void DeviceTotalMem() {
  for (int dev = 0; dev < 2; ++dev) {
    size_t bytes = 0;
    HIP_OK(hipDeviceTotalMem(&bytes, dev));
    hipDeviceProp_t props{};
    HIP_OK(hipGetDeviceProperties(&props, dev));
    CHECK(bytes > 0 && bytes == props.totalGlobalMem, "device %d: hipDeviceTotalMem %zu, totalGlobalMem %zu", dev,
          bytes, props.totalGlobalMem);
    HIP_OK(hipSetDevice(dev));
    size_t free = 0, total = 0;
    HIP_OK(hipMemGetInfo(&free, &total));
    CHECK(total == bytes, "device %d: hipMemGetInfo total %zu, hipDeviceTotalMem %zu", dev, total, bytes);
  }
  HIP_OK(hipSetDevice(0));
  size_t keep = kSentinelSize;
  HIP_EXPECT(hipDeviceTotalMem(&keep, 2), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceTotalMem(&keep, -1), hipErrorInvalidDevice);
  CHECK(keep == kSentinelSize, "a failed hipDeviceTotalMem wrote %zu", keep);
  HIP_EXPECT(hipDeviceTotalMem(nullptr, 0), hipErrorInvalidValue);
}

void MallocPitch() {
  const size_t width = 100, height = 7;
  void* d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMallocPitch(&d, &pitch, width, height));
  CHECK(d != nullptr && pitch >= width && (pitch & 255) == 0, "hipMallocPitch: %p, pitch %zu", d, pitch);
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  HIP_OK(hipMemGetAddressRange(&base, &size, d));
  CHECK(base == d && size == pitch * height, "pitched allocation of %zu x %zu is %zu bytes", pitch, height, size);
  // Every row is usable to the pitch.
  Upload(d, 105, pitch * height);
  std::vector<uint8_t> back = ReadBack(d, pitch * height);
  CHECK_PATTERN(back.data(), pitch * height, 105, "pitched memory round trip");
  void* keep = SentinelPtr();
  HIP_EXPECT(hipMallocPitch(&keep, nullptr, width, height), hipErrorInvalidValue);
  CHECK(keep == SentinelPtr(), "a failed hipMallocPitch wrote %p", keep);
  HIP_EXPECT(hipMallocPitch(nullptr, &pitch, width, height), hipErrorInvalidValue);
  // Rows or a whole beyond size_t: hipErrorOutOfMemory (hip-tests on AMD),
  // not a crash.
  keep = SentinelPtr();
  HIP_EXPECT(hipMallocPitch(&keep, &pitch, SIZE_MAX, 1), hipErrorOutOfMemory);
  HIP_EXPECT(hipMallocPitch(&keep, &pitch, SIZE_MAX - 100, 2), hipErrorOutOfMemory);
  HIP_EXPECT(hipMallocPitch(&keep, &pitch, 1, SIZE_MAX), hipErrorOutOfMemory);
  CHECK(keep == SentinelPtr(), "a failed hipMallocPitch wrote %p", keep);
  HIP_OK(hipFree(d));
}

void MemAllocPitch() {
  hipDeviceptr_t d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMemAllocPitch(&d, &pitch, 300, 3, 4));
  CHECK(d != nullptr && pitch >= 300 && (pitch & 255) == 0, "hipMemAllocPitch: %p, pitch %zu", d, pitch);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(d, &size));
  CHECK(size == pitch * 3, "pitched allocation of %zu x 3 is %zu bytes", pitch, size);
  Upload(d, 106, pitch * 3);
  std::vector<uint8_t> back = ReadBack(d, pitch * 3);
  CHECK_PATTERN(back.data(), pitch * 3, 106, "hipMemAllocPitch memory round trip");
  // The element size must be 4, 8 or 16.
  hipDeviceptr_t keep = SentinelPtr();
  size_t keep_pitch = kSentinelSize;
  HIP_EXPECT(hipMemAllocPitch(&keep, &keep_pitch, 300, 3, 3), hipErrorInvalidValue);
  CHECK(keep == SentinelPtr() && keep_pitch == kSentinelSize, "a failed hipMemAllocPitch wrote %p, %zu", keep,
        keep_pitch);
  // Unlike hipMallocPitch, an empty pitched allocation is refused (clr).
  HIP_EXPECT(hipMemAllocPitch(&keep, &keep_pitch, 0, 3, 4), hipErrorInvalidValue);
  HIP_EXPECT(hipMemAllocPitch(&keep, &keep_pitch, 300, 0, 4), hipErrorInvalidValue);
  HIP_EXPECT(hipMemAllocPitch(&keep, &keep_pitch, 1, SIZE_MAX, 4), hipErrorOutOfMemory);
  CHECK(keep == SentinelPtr(), "a failed hipMemAllocPitch wrote %p", keep);
  HIP_OK(hipFree(d));
}

void Malloc3D() {
  hipPitchedPtr p{};
  const hipExtent e = make_hipExtent(100, 5, 3);
  HIP_OK(hipMalloc3D(&p, e));
  CHECK(p.ptr != nullptr && p.pitch >= 100 && (p.pitch & 255) == 0 && p.xsize == 100 && p.ysize == 5,
        "hipMalloc3D: %p, pitch %zu, %zu x %zu", p.ptr, p.pitch, p.xsize, p.ysize);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(p.ptr, &size));
  CHECK(size == p.pitch * 5 * 3, "a %zu x 5 x 3 volume is %zu bytes", p.pitch, size);
  Upload(p.ptr, 107, size);
  std::vector<uint8_t> back = ReadBack(p.ptr, size);
  CHECK_PATTERN(back.data(), size, 107, "hipMalloc3D memory round trip");
  HIP_EXPECT(hipMalloc3D(nullptr, e), hipErrorInvalidValue);
  hipPitchedPtr huge{};
  HIP_EXPECT(hipMalloc3D(&huge, make_hipExtent(1, SIZE_MAX, 1)), hipErrorOutOfMemory);
  HIP_EXPECT(hipMalloc3D(&huge, make_hipExtent(1, 2, SIZE_MAX)), hipErrorOutOfMemory);
  HIP_EXPECT(hipMalloc3D(&huge, make_hipExtent(SIZE_MAX, 1, 1)), hipErrorOutOfMemory);
  HIP_OK(hipFree(p.ptr));
}

void MallocAsync() {
  HIP_OK(hipSetDevice(1));
  hipStream_t s1 = NewStream();
  HIP_OK(hipSetDevice(0));
  // The stream's device, not the current one, owns the memory.
  const size_t n = 1 << 20;
  void* p = nullptr;
  HIP_OK(hipMallocAsync(&p, n, s1));
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, p));
  CHECK(a.memoryType == hipMemoryTypeDevice && a.device == 1, "hipMallocAsync on a device 1 stream: device %d",
        a.device);
  HIP_OK(hipMemsetAsync(p, 0x5c, n, s1));
  HIP_OK(hipStreamSynchronize(s1));
  std::vector<uint8_t> back = ReadBack(p, n);
  CHECK_BYTES_EQUAL(back.data(), n, 0x5c, "hipMallocAsync memory set on its stream");
  void* keep = SentinelPtr();
  HIP_OK(hipMallocAsync(&keep, 0, s1));
  CHECK(keep == nullptr, "hipMallocAsync of 0 bytes gave %p", keep);
  HIP_EXPECT(hipMallocAsync(nullptr, 64, s1), hipErrorInvalidValue);
  HIP_OK(hipFreeAsync(p, s1));
  HIP_OK(hipStreamSynchronize(s1));
  HIP_OK(hipStreamDestroy(s1));
  // A destroyed stream allocates nothing.
  keep = SentinelPtr();
  HIP_EXPECT(hipMallocAsync(&keep, 64, s1), hipErrorInvalidHandle);
  CHECK(keep == SentinelPtr(), "a failed hipMallocAsync wrote %p", keep);
}

void FreeAsync() {
  const size_t n = 64 << 10;
  hipStream_t s = NewStream();
  void* d = DevAlloc(n);
  auto* h = static_cast<uint8_t*>(PinnedAlloc(n));
  memset(h, 0, n);
  // The free comes after the work queued before it on the stream.
  HIP_OK(hipMemsetAsync(d, 0x3d, n, s));
  HIP_OK(hipMemcpyAsync(h, d, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipFreeAsync(d, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(h, n, 0x3d, "work queued before hipFreeAsync");
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  HIP_EXPECT(hipMemGetAddressRange(&base, &size, d), hipErrorNotFound);
  HIP_EXPECT(hipFreeAsync(d, s), hipErrorInvalidValue);  // Already freed.
  HIP_EXPECT(hipFreeAsync(nullptr, s), hipErrorInvalidValue);  // A 5.x caller; 7.x's is hipSuccess (mixed_majors).
  HIP_OK(hipStreamDestroy(s));
  // On a destroyed stream the free is refused and the memory stays.
  void* kept = DevAlloc(4096);
  HIP_EXPECT(hipFreeAsync(kept, s), hipErrorInvalidHandle);
  HIP_OK(hipMemGetAddressRange(&base, &size, kept));
  CHECK(base == kept && size == 4096, "after a refused hipFreeAsync: %p +%zu", base, size);
  HIP_OK(hipFree(kept));
  HIP_OK(hipHostFree(h));
}

// ---- Copies -------------------------------------------------------------------

// Fails unless got[0, n) equals want[0, n).
void CheckSame(const void* got, const void* want, size_t n, const char* what) {
  const auto* g = static_cast<const uint8_t*>(got);
  const auto* w = static_cast<const uint8_t*>(want);
  for (size_t i = 0; i < n; ++i)
    if (g[i] != w[i])
      e2e::Fail(__FILE__, __LINE__, "%s: byte %zu of %zu is 0x%02x, expected 0x%02x", what, i, n, g[i], w[i]);
}

void Memcpy() {
  const size_t n = 100000;
  std::vector<uint8_t> src(n), dst(n, 0), other(n, 0);
  e2e::FillPattern(src.data(), n, 201);
  void* a = DevAlloc(n);
  void* b = DevAlloc(n);
  HIP_OK(hipMemcpy(a, src.data(), n, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(b, a, n, hipMemcpyDeviceToDevice));
  HIP_OK(hipMemcpy(dst.data(), b, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(dst.data(), n, 201, "host -> device -> device -> host");
  HIP_OK(hipMemcpy(other.data(), dst.data(), n, hipMemcpyHostToHost));
  CHECK_PATTERN(other.data(), n, 201, "host -> host");
  // hipMemcpyDefault takes the direction from the pointers.
  e2e::FillPattern(src.data(), n, 202);
  HIP_OK(hipMemcpy(a, src.data(), n, hipMemcpyDefault));
  HIP_OK(hipMemcpy(static_cast<char*>(b) + 1000, static_cast<char*>(a) + 1000, 5000, hipMemcpyDefault));
  HIP_OK(hipMemcpy(dst.data(), a, n, hipMemcpyDefault));
  CHECK_PATTERN(dst.data(), n, 202, "hipMemcpyDefault both ways");
  std::vector<uint8_t> b_now = ReadBack(b, n);
  CheckSame(b_now.data() + 1000, src.data() + 1000, 5000, "hipMemcpyDefault device to device, at an offset");
  // On the null stream, hipMemcpy waits for work queued on blocking streams.
  {
    hipStream_t s = NewStream();
    void* big = DevAlloc(16 << 20);
    std::vector<uint8_t> tail(4096, 0);
    HIP_OK(hipMemsetAsync(big, 0x4e, 16 << 20, s));
    HIP_OK(hipMemcpy(tail.data(), static_cast<char*>(big) + (16 << 20) - 4096, 4096, hipMemcpyDeviceToHost));
    CHECK_BYTES_EQUAL(tail.data(), 4096, 0x4e, "hipMemcpy after a memset on a blocking stream");
    HIP_OK(hipStreamDestroy(s));
    HIP_OK(hipFree(big));
  }
  CHECK_PATTERN(b_now.data(), 1000, 201, "bytes before the offset copy");
  // A kind that names host memory as device memory, an unknown kind, a
  // range past the allocation's end and null pointers are refused; the
  // destination keeps its bytes.
  std::fill(dst.begin(), dst.end(), kUntouched);
  HIP_EXPECT(hipMemcpy(dst.data(), src.data(), n, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy(dst.data(), a, n, static_cast<hipMemcpyKind>(7)), hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(hipMemcpy(dst.data(), static_cast<char*>(a) + 1, n, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy(nullptr, a, n, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(dst.data(), n, kUntouched, "destination of refused copies");
  HIP_EXPECT(hipMemcpy(a, nullptr, n, hipMemcpyHostToDevice), hipErrorInvalidValue);
  HIP_OK(hipMemcpy(nullptr, nullptr, 0, hipMemcpyHostToDevice));  // Nothing to copy.
  std::vector<uint8_t> a_now = ReadBack(a, n);
  CHECK_PATTERN(a_now.data(), n, 202, "device memory after refused copies");
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

// A blocking copy on a stream waits for the stream's earlier work.
void MemcpyWithStream() {
  const size_t n = 256 << 10;
  hipStream_t s = NewStream();
  void* d = DevAlloc(n);
  HIP_OK(hipMemsetAsync(d, 0x11, n, s));
  std::vector<uint8_t> h(n, 0);
  HIP_OK(hipMemcpyWithStream(h.data(), d, n, hipMemcpyDeviceToHost, s));
  CHECK_BYTES_EQUAL(h.data(), n, 0x11, "hipMemcpyWithStream after a memset on its stream");
  e2e::FillPattern(h.data(), n, 203);
  HIP_OK(hipMemcpyWithStream(d, h.data(), n, hipMemcpyHostToDevice, s));
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK_PATTERN(back.data(), n, 203, "hipMemcpyWithStream host to device");
  std::vector<uint8_t> keep(n, kUntouched);
  HIP_EXPECT(hipMemcpyWithStream(keep.data(), h.data(), n, hipMemcpyDeviceToDevice, s), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(keep.data(), n, kUntouched, "destination of a refused hipMemcpyWithStream");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void MemcpyAsync() {
  const size_t n = 300000;
  hipStream_t s = NewStream();
  std::vector<uint8_t> src(n);
  e2e::FillPattern(src.data(), n, 204);
  void* a = DevAlloc(n);
  void* b = DevAlloc(n);
  auto* pinned = static_cast<uint8_t*>(PinnedAlloc(n));
  std::vector<uint8_t> pageable(n, 0);
  memset(pinned, 0, n);
  HIP_OK(hipMemcpyAsync(a, src.data(), n, hipMemcpyHostToDevice, s));
  HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s));
  HIP_OK(hipMemcpyAsync(pinned, b, n, hipMemcpyDeviceToHost, s));  // Lands by the synchronization.
  HIP_OK(hipMemcpyAsync(pageable.data(), b, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(pinned, n, 204, "async copies into pinned memory");
  CHECK_PATTERN(pageable.data(), n, 204, "async copies into pageable memory");
  // Async copies check the direction first.
  std::vector<uint8_t> keep(n, kUntouched);
  HIP_EXPECT(hipMemcpyAsync(keep.data(), b, n, static_cast<hipMemcpyKind>(7), s), hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(hipMemcpyAsync(keep.data(), nullptr, n, hipMemcpyDeviceToHost, s), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpyAsync(keep.data(), src.data(), n, hipMemcpyDeviceToHost, s), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(keep.data(), n, kUntouched, "destination of refused async copies");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
  HIP_OK(hipHostFree(pinned));
}

// The _spt forms run on the calling thread's per-thread stream.
void MemcpySpt() {
  const size_t n = 70000;
  void* d = DevAlloc(n);
  HIP_OK(hipMemsetAsync(d, 0x22, n, hipStreamPerThread));
  std::vector<uint8_t> h(n, 0);
  HIP_OK(hipMemcpy_spt(h.data(), d, n, hipMemcpyDeviceToHost));  // Waits for the per-thread stream.
  CHECK_BYTES_EQUAL(h.data(), n, 0x22, "hipMemcpy_spt after a memset on the per-thread stream");
  e2e::FillPattern(h.data(), n, 205);
  HIP_OK(hipMemcpy_spt(d, h.data(), n, hipMemcpyHostToDevice));
  std::vector<uint8_t> back(n, 0);
  HIP_OK(hipMemcpy_spt(back.data(), d, n, hipMemcpyDefault));
  CHECK_PATTERN(back.data(), n, 205, "hipMemcpy_spt round trip");
  std::vector<uint8_t> keep(n, kUntouched);
  HIP_EXPECT(hipMemcpy_spt(keep.data(), d, n, static_cast<hipMemcpyKind>(7)), hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(hipMemcpy_spt(keep.data(), h.data(), n, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(keep.data(), n, kUntouched, "destination of refused hipMemcpy_spt");
  HIP_OK(hipFree(d));
}

void MemcpyAsyncSpt() {
  const size_t n = 90000;
  std::vector<uint8_t> src(n);
  e2e::FillPattern(src.data(), n, 206);
  void* d = DevAlloc(n);
  auto* pinned = static_cast<uint8_t*>(PinnedAlloc(n));
  memset(pinned, 0, n);
  // The null stream means the per-thread stream.
  HIP_OK(hipMemcpyAsync_spt(d, src.data(), n, hipMemcpyHostToDevice, nullptr));
  HIP_OK(hipMemcpyAsync_spt(pinned, d, n, hipMemcpyDeviceToHost, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK_PATTERN(pinned, n, 206, "hipMemcpyAsync_spt round trip on the per-thread stream");
  hipStream_t s = NewStream();
  memset(pinned, 0, n);
  HIP_OK(hipMemcpyAsync_spt(pinned, d, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(pinned, n, 206, "hipMemcpyAsync_spt on a created stream");
  memset(pinned, kUntouched, n);
  HIP_EXPECT(hipMemcpyAsync_spt(pinned, d, n, static_cast<hipMemcpyKind>(7), s), hipErrorInvalidMemcpyDirection);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(pinned, n, kUntouched, "destination of refused hipMemcpyAsync_spt");
  // A kind that names the pageable source as device memory: the pointers
  // decide (host to pinned host), as clr does.
  HIP_OK(hipMemcpyAsync_spt(pinned, src.data(), n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(pinned, n, 206, "hipMemcpyAsync_spt with a kind that does not match the pointers");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  HIP_OK(hipHostFree(pinned));
}

void MemcpyHtoD() {
  const size_t n = 50000;
  std::vector<uint8_t> src(n);
  e2e::FillPattern(src.data(), n, 207);
  void* d = DevAlloc(n);
  HIP_OK(hipMemsetD8(d, kUntouched, n));
  HIP_OK(hipMemcpyHtoD(static_cast<char*>(d) + 100, src.data(), n - 200));
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK_BYTES_EQUAL(back.data(), 100, kUntouched, "bytes before the copied range");
  CheckSame(back.data() + 100, src.data(), n - 200, "hipMemcpyHtoD");
  CHECK_BYTES_EQUAL(back.data() + n - 100, 100, kUntouched, "bytes after the copied range");
  // Two host buffers are refused; device memory must hold the whole range.
  std::vector<uint8_t> keep(n, kUntouched);
  HIP_EXPECT(hipMemcpyHtoD(keep.data(), src.data(), n), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpyHtoD(static_cast<char*>(d) + 1, src.data(), n), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(keep.data(), n, kUntouched, "host destination of a refused hipMemcpyHtoD");
  back = ReadBack(d, 100);
  CHECK_BYTES_EQUAL(back.data(), 100, kUntouched, "device memory after a refused hipMemcpyHtoD");
  HIP_OK(hipFree(d));
}

void MemcpyDtoH() {
  const size_t n = 50000;
  void* d = DevAlloc(n);
  Upload(d, 208, n);
  std::vector<uint8_t> h(n, 0);
  HIP_OK(hipMemcpyDtoH(h.data(), d, n));
  CHECK_PATTERN(h.data(), n, 208, "hipMemcpyDtoH");
  std::vector<uint8_t> keep(n, kUntouched);
  HIP_EXPECT(hipMemcpyDtoH(keep.data(), h.data(), n), hipErrorInvalidValue);  // Both sides host memory.
  HIP_EXPECT(hipMemcpyDtoH(keep.data(), static_cast<char*>(d) + 8, n), hipErrorInvalidValue);  // Past the end.
  CHECK_BYTES_EQUAL(keep.data(), n, kUntouched, "destination of a refused hipMemcpyDtoH");
  HIP_OK(hipFree(d));
}

void MemcpyDtoD() {
  const size_t n = 40000;
  void* a = DevAlloc(n);
  void* b = DevAlloc(n);
  Upload(a, 209, n);
  HIP_OK(hipMemsetD8(b, kUntouched, n));
  HIP_OK(hipMemcpyDtoD(b, a, n));
  std::vector<uint8_t> back = ReadBack(b, n);
  CHECK_PATTERN(back.data(), n, 209, "hipMemcpyDtoD");
  // Host memory named as device memory: the pointers decide, as clr does
  // (a read to host memory, a write from it); two host buffers are refused.
  std::vector<uint8_t> h(n, kUntouched);
  HIP_OK(hipMemcpyDtoD(h.data(), a, n));
  CHECK_PATTERN(h.data(), n, 209, "hipMemcpyDtoD into host memory");
  e2e::FillPattern(h.data(), n, 210);
  HIP_OK(hipMemcpyDtoD(b, h.data(), n));
  back = ReadBack(b, n);
  CHECK_PATTERN(back.data(), n, 210, "hipMemcpyDtoD from host memory");
  std::vector<uint8_t> h2(n, kUntouched);
  HIP_EXPECT(hipMemcpyDtoD(h2.data(), h.data(), n), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(h2.data(), n, kUntouched, "host memory named as a hipMemcpyDtoD destination");
  back = ReadBack(a, n);
  CHECK_PATTERN(back.data(), n, 209, "source after a refused hipMemcpyDtoD");
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

void MemcpyHtoDAsync() {
  const size_t n = 200000;
  hipStream_t s = NewStream();
  std::vector<uint8_t> src(n);
  e2e::FillPattern(src.data(), n, 210);
  void* d = DevAlloc(n);
  HIP_OK(hipMemcpyHtoDAsync(d, src.data(), n, s));
  // The source has been consumed when the call returns: changing it now
  // does not change what lands.
  std::fill(src.begin(), src.end(), 0);
  HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK_PATTERN(back.data(), n, 210, "hipMemcpyHtoDAsync");
  HIP_EXPECT(hipMemcpyHtoDAsync(src.data(), back.data(), n, s), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(src.data(), n, 0, "host destination of a refused hipMemcpyHtoDAsync");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void MemcpyDtoHAsync() {
  const size_t n = 200000;
  hipStream_t s = NewStream();
  void* d = DevAlloc(n);
  Upload(d, 211, n);
  auto* pinned = static_cast<uint8_t*>(PinnedAlloc(n));
  memset(pinned, 0, n);
  std::vector<uint8_t> pageable(n, 0);
  HIP_OK(hipMemcpyDtoHAsync(pinned, d, n, s));
  HIP_OK(hipMemcpyDtoHAsync(pageable.data(), d, n, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(pinned, n, 211, "hipMemcpyDtoHAsync into pinned memory");
  CHECK_PATTERN(pageable.data(), n, 211, "hipMemcpyDtoHAsync into pageable memory");
  // Completion seen by polling: hipStreamQuery, then an event recorded after the copy.
  Upload(d, 221, n);
  memset(pinned, 0, n);
  HIP_OK(hipMemcpyDtoHAsync(pinned, d, n, s));
  hipError_t q;
  while ((q = hipStreamQuery(s)) == hipErrorNotReady) {
  }
  HIP_OK(q);
  CHECK_PATTERN(pinned, n, 221, "hipMemcpyDtoHAsync into pinned memory once hipStreamQuery says done");
  Upload(d, 222, n);
  memset(pinned, 0, n);
  hipEvent_t done = nullptr;
  HIP_OK(hipEventCreate(&done));
  HIP_OK(hipMemcpyDtoHAsync(pinned, d, n, s));
  HIP_OK(hipEventRecord(done, s));
  while ((q = hipEventQuery(done)) == hipErrorNotReady) {
  }
  HIP_OK(q);
  CHECK_PATTERN(pinned, n, 222, "hipMemcpyDtoHAsync into pinned memory once its event is complete");
  HIP_OK(hipEventDestroy(done));
  // A pageable source named as device memory: the pointers decide (clr).
  memset(pinned, kUntouched, n);
  HIP_OK(hipMemcpyDtoHAsync(pinned, pageable.data(), n, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(pinned, n, 211, "hipMemcpyDtoHAsync from pageable memory");
  std::vector<uint8_t> keep(n, kUntouched);
  HIP_EXPECT(hipMemcpyDtoHAsync(keep.data(), pageable.data(), n, s), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(keep.data(), n, kUntouched, "destination of a refused hipMemcpyDtoHAsync");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  HIP_OK(hipHostFree(pinned));
}

void MemcpyDtoDAsync() {
  const size_t n = 123456;
  hipStream_t s = NewStream();
  void* a = DevAlloc(n);
  void* b = DevAlloc(n);
  Upload(a, 212, n);
  HIP_OK(hipMemsetAsync(b, 0, n, s));
  HIP_OK(hipMemcpyDtoDAsync(b, a, n, s));
  HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> back = ReadBack(b, n);
  CHECK_PATTERN(back.data(), n, 212, "hipMemcpyDtoDAsync");
  std::vector<uint8_t> h(n, kUntouched);
  HIP_OK(hipMemcpyDtoDAsync(h.data(), a, n, s));  // The pointers decide (clr): a read.
  HIP_OK(hipStreamSynchronize(s));
  CHECK_PATTERN(h.data(), n, 212, "hipMemcpyDtoDAsync into host memory");
  std::vector<uint8_t> h2(n, kUntouched);
  HIP_EXPECT(hipMemcpyDtoDAsync(h2.data(), h.data(), n, s), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(h2.data(), n, kUntouched, "host memory named as a hipMemcpyDtoDAsync destination");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

// 2-D copies: 8 rows of 30 bytes between host rows 40 apart, a pitched
// device allocation and host rows 33 apart; the bytes between rows keep theirs.
constexpr size_t kW = 30, kH = 8, kSrcPitch = 40, kDstPitch = 33;

struct TwoD {
  std::vector<uint8_t> src = std::vector<uint8_t>(kSrcPitch * kH);
  std::vector<uint8_t> dst = std::vector<uint8_t>(kDstPitch * kH, kUntouched);
  void* d = nullptr;
  size_t pitch = 0;
  explicit TwoD(uint64_t seed) {
    e2e::FillPattern(src.data(), src.size(), seed);
    HIP_OK(hipMallocPitch(&d, &pitch, kW, kH));
    HIP_OK(hipMemset(d, kUntouched, pitch * kH));
  }
  ~TwoD() { (void)hipFree(d); }
  // dst (and, when `check_device`, the device rows) hold src's rectangle.
  void Check(const char* what, bool check_device = true) const {
    for (size_t y = 0; y < kH; ++y) {
      CheckSame(&dst[y * kDstPitch], &src[y * kSrcPitch], kW, what);
      CHECK_BYTES_EQUAL(&dst[y * kDstPitch + kW], kDstPitch - kW, kUntouched, what);
    }
    if (!check_device) return;
    std::vector<uint8_t> dev = ReadBack(d, pitch * kH);
    for (size_t y = 0; y < kH; ++y) {
      CheckSame(&dev[y * pitch], &src[y * kSrcPitch], kW, what);
      CHECK_BYTES_EQUAL(&dev[y * pitch + kW], pitch - kW, kUntouched, what);
    }
  }
};

void Memcpy2D() {
  TwoD t(213);
  HIP_OK(hipMemcpy2D(t.d, t.pitch, t.src.data(), kSrcPitch, kW, kH, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy2D(t.dst.data(), kDstPitch, t.d, t.pitch, kW, kH, hipMemcpyDeviceToHost));
  t.Check("hipMemcpy2D host -> pitched device -> host");
  // Device to device, into a second pitched allocation, and back.
  TwoD u(214);
  u.src = t.src;
  HIP_OK(hipMemcpy2D(u.d, u.pitch, t.d, t.pitch, kW, kH, hipMemcpyDeviceToDevice));
  HIP_OK(hipMemcpy2D(u.dst.data(), kDstPitch, u.d, u.pitch, kW, kH, hipMemcpyDefault));
  u.Check("hipMemcpy2D device to device");
  // A width wider than a pitch, an unknown kind, rows past the allocation.
  std::vector<uint8_t> keep(kDstPitch * kH, kUntouched);
  // A pitch past the device's maximum (memPitch), host rows included: refused
  // before a row is touched (clr), not read gigabytes past the buffer.
  int max_pitch = 0;
  HIP_OK(hipDeviceGetAttribute(&max_pitch, hipDeviceAttributeMaxPitch, 0));
  const size_t huge = static_cast<size_t>(max_pitch) + 1;
  std::vector<uint8_t> other(kDstPitch * kH, 1);
  HIP_EXPECT(hipMemcpy2D(keep.data(), huge, other.data(), kDstPitch, kW, kH, hipMemcpyHostToHost),
             hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy2D(keep.data(), kDstPitch, other.data(), huge, kW, kH, hipMemcpyHostToHost),
             hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy2D(t.d, huge, other.data(), kDstPitch, kW, kH, hipMemcpyHostToDevice), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy2D(keep.data(), kDstPitch, t.d, t.pitch, kDstPitch + 1, kH, hipMemcpyDeviceToHost),
             hipErrorInvalidPitchValue);
  HIP_EXPECT(hipMemcpy2D(keep.data(), kDstPitch, t.d, t.pitch, kW, kH, static_cast<hipMemcpyKind>(7)),
             hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(hipMemcpy2D(keep.data(), kDstPitch, t.d, t.pitch, kW, kH + 1, hipMemcpyDeviceToHost),
             hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(keep.data(), keep.size(), kUntouched, "destination of refused hipMemcpy2D");
}

void Memcpy2DAsync() {
  TwoD t(215);
  hipStream_t s = NewStream();
  auto* pinned = static_cast<uint8_t*>(PinnedAlloc(kDstPitch * kH));
  memset(pinned, kUntouched, kDstPitch * kH);
  HIP_OK(hipMemcpy2DAsync(t.d, t.pitch, t.src.data(), kSrcPitch, kW, kH, hipMemcpyHostToDevice, s));
  HIP_OK(hipMemcpy2DAsync(pinned, kDstPitch, t.d, t.pitch, kW, kH, hipMemcpyDeviceToHost, s));
  HIP_OK(hipMemcpy2DAsync(t.dst.data(), kDstPitch, t.d, t.pitch, kW, kH, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  t.Check("hipMemcpy2DAsync into pageable rows");
  CHECK(memcmp(pinned, t.dst.data(), kDstPitch * kH) == 0, "hipMemcpy2DAsync into pinned rows differs");
  std::vector<uint8_t> keep(kDstPitch * kH, kUntouched);
  HIP_EXPECT(hipMemcpy2DAsync(keep.data(), kDstPitch, t.d, t.pitch, kDstPitch + 1, kH, hipMemcpyDeviceToHost, s),
             hipErrorInvalidPitchValue);
  HIP_EXPECT(hipMemcpy2DAsync(keep.data(), kDstPitch, t.d, t.pitch, kW, kH, static_cast<hipMemcpyKind>(7), s),
             hipErrorInvalidMemcpyDirection);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(keep.data(), keep.size(), kUntouched, "destination of refused hipMemcpy2DAsync");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipHostFree(pinned));
}

void Memcpy2DSpt() {
  TwoD t(216);
  // After work queued on the per-thread stream.
  HIP_OK(hipMemsetAsync(t.d, 0x01, t.pitch * kH, hipStreamPerThread));
  HIP_OK(hipMemcpy2D_spt(t.d, t.pitch, t.src.data(), kSrcPitch, kW, kH, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy2D_spt(t.dst.data(), kDstPitch, t.d, t.pitch, kW, kH, hipMemcpyDeviceToHost));
  t.Check("hipMemcpy2D_spt", /*check_device=*/false);
  std::vector<uint8_t> dev = ReadBack(t.d, t.pitch * kH);
  for (size_t y = 0; y < kH; ++y) {
    CheckSame(&dev[y * t.pitch], &t.src[y * kSrcPitch], kW, "hipMemcpy2D_spt device rows");
    CHECK_BYTES_EQUAL(&dev[y * t.pitch + kW], t.pitch - kW, 0x01, "bytes between rows after the memset");
  }
  std::vector<uint8_t> keep(kDstPitch * kH, kUntouched);
  HIP_EXPECT(hipMemcpy2D_spt(keep.data(), kDstPitch, t.d, t.pitch, kDstPitch + 1, kH, hipMemcpyDeviceToHost),
             hipErrorInvalidPitchValue);
  CHECK_BYTES_EQUAL(keep.data(), keep.size(), kUntouched, "destination of a refused hipMemcpy2D_spt");
}

// 3-D copies: a 20 x 4 x 3 host volume into a hipMalloc3D volume, and a
// 5 x 2 x 2 sub-box back out of it.
constexpr size_t kX = 20, kY = 4, kZ = 3;

hipMemcpy3DParms Params3D(hipPitchedPtr dst, hipPitchedPtr src, hipExtent e, hipMemcpyKind kind) {
  hipMemcpy3DParms p{};
  p.dstPtr = dst;
  p.srcPtr = src;
  p.extent = e;
  p.kind = kind;
  return p;
}

void Check3D(hipError_t (*copy)(const hipMemcpy3DParms*, hipStream_t), hipStream_t s, uint64_t seed,
             const char* what) {
  std::vector<uint8_t> host(kX * kY * kZ);
  e2e::FillPattern(host.data(), host.size(), seed);
  hipPitchedPtr d{};
  HIP_OK(hipMalloc3D(&d, make_hipExtent(kX, kY, kZ)));
  HIP_OK(hipMemset(d.ptr, kUntouched, d.pitch * kY * kZ));
  hipMemcpy3DParms up =
      Params3D(d, make_hipPitchedPtr(host.data(), kX, kX, kY), make_hipExtent(kX, kY, kZ), hipMemcpyHostToDevice);
  HIP_OK(copy(&up, s));
  // The sub-box at (3, 1, 1) of 5 x 2 x 2 into a 5 x 2 x 2 host box.
  std::vector<uint8_t> box(5 * 2 * 2, 0);
  hipMemcpy3DParms down =
      Params3D(make_hipPitchedPtr(box.data(), 5, 5, 2), d, make_hipExtent(5, 2, 2), hipMemcpyDeviceToHost);
  down.srcPos = make_hipPos(3, 1, 1);
  HIP_OK(copy(&down, s));
  if (s != nullptr) HIP_OK(hipStreamSynchronize(s));
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 2; ++y)
      for (size_t x = 0; x < 5; ++x) {
        const uint8_t want = host[(z + 1) * kX * kY + (y + 1) * kX + x + 3];
        const uint8_t got = box[z * 10 + y * 5 + x];
        CHECK(got == want, "%s: sub-box (%zu,%zu,%zu) is 0x%02x, expected 0x%02x", what, x, y, z, got, want);
      }
  // The whole volume, with the pitch's padding untouched.
  std::vector<uint8_t> dev = ReadBack(d.ptr, d.pitch * kY * kZ);
  for (size_t row = 0; row < kY * kZ; ++row) {
    CheckSame(&dev[row * d.pitch], &host[row * kX], kX, what);
    CHECK_BYTES_EQUAL(&dev[row * d.pitch + kX], d.pitch - kX, kUntouched, what);
  }
  // A box wider than the pitch is refused; the box stays.
  std::fill(box.begin(), box.end(), kUntouched);
  hipMemcpy3DParms bad = down;
  bad.srcPos = make_hipPos(d.pitch - 2, 0, 0);
  HIP_EXPECT(copy(&bad, s), hipErrorInvalidPitchValue);
  bad = down;
  bad.kind = static_cast<hipMemcpyKind>(7);
  HIP_EXPECT(copy(&bad, s), hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(copy(nullptr, s), hipErrorInvalidValue);
  if (s != nullptr) HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(box.data(), box.size(), kUntouched, what);
  HIP_OK(hipFree(d.ptr));
}

void Memcpy3D() {
  Check3D([](const hipMemcpy3DParms* p, hipStream_t) { return hipMemcpy3D(p); }, nullptr, 217, "hipMemcpy3D");
}

void Memcpy3DAsync() {
  hipStream_t s = NewStream();
  Check3D(hipMemcpy3DAsync, s, 218, "hipMemcpy3DAsync");
  HIP_OK(hipStreamDestroy(s));
}

// Peer copies between the two devices' memory.
void CheckPeer(bool async) {
  const size_t n = 80000;
  void* a = DevAllocOn(0, n);
  void* b = DevAllocOn(1, n);
  Upload(a, async ? 220 : 219, n);
  hipStream_t s = async ? NewStream() : nullptr;
  if (async) {
    HIP_OK(hipMemcpyPeerAsync(b, 1, a, 0, n, s));
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_OK(hipMemcpyPeer(b, 1, a, 0, n));
  }
  std::vector<uint8_t> back = ReadBack(b, n);
  CHECK_PATTERN(back.data(), n, async ? 220 : 219, async ? "hipMemcpyPeerAsync 0 -> 1" : "hipMemcpyPeer 0 -> 1");
  // Back again, into the middle of device 0's buffer.
  HIP_OK(hipMemsetD8(a, 0, n));
  if (async) {
    HIP_OK(hipMemcpyPeerAsync(static_cast<char*>(a) + 100, 0, b, 1, 1000, s));
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_OK(hipMemcpyPeer(static_cast<char*>(a) + 100, 0, b, 1, 1000));
  }
  std::vector<uint8_t> a_now = ReadBack(a, n);
  CheckSame(a_now.data() + 100, back.data(), 1000, "peer copy 1 -> 0");
  CHECK_BYTES_EQUAL(a_now.data(), 100, 0, "bytes before the peer copy");
  CHECK_BYTES_EQUAL(a_now.data() + 1100, n - 1100, 0, "bytes after the peer copy");
  // A device that does not exist, two host buffers: refused.
  HIP_OK(hipMemsetD8(a, kUntouched, n));
  std::vector<uint8_t> h1(n, 1), h2(n, kUntouched);
  if (async) {
    HIP_EXPECT(hipMemcpyPeerAsync(a, 2, b, 1, n, s), hipErrorInvalidDevice);
    HIP_EXPECT(hipMemcpyPeerAsync(h2.data(), 0, h1.data(), 1, n, s), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(s));
    hipStream_t gone = NewStream();
    HIP_OK(hipStreamDestroy(gone));
    HIP_EXPECT(hipMemcpyPeerAsync(a, 0, b, 1, n, gone), hipErrorContextIsDestroyed);  // As clr.
  } else {
    HIP_EXPECT(hipMemcpyPeer(a, 0, b, -1, n), hipErrorInvalidDevice);
    HIP_EXPECT(hipMemcpyPeer(h2.data(), 0, h1.data(), 1, n), hipErrorInvalidValue);
  }
  a_now = ReadBack(a, n);
  CHECK_BYTES_EQUAL(a_now.data(), n, kUntouched, "destination of refused peer copies");
  CHECK_BYTES_EQUAL(h2.data(), n, kUntouched, "host destination of a refused peer copy");
  // Device numbers that do not own the pointers: clr only range-checks them,
  // the pointers decide (b on device 1 into a on device 0).
  if (async) {
    HIP_OK(hipMemcpyPeerAsync(a, 1, b, 1, n, s));
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_OK(hipMemcpyPeer(a, 1, b, 1, n));
  }
  a_now = ReadBack(a, n);
  CheckSame(a_now.data(), back.data(), n, "peer copy with device numbers that do not own the pointers");
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

void MemcpyPeer() { CheckPeer(false); }
void MemcpyPeerAsync() { CheckPeer(true); }

// ---- Memsets ------------------------------------------------------------------

// A device buffer of `n` bytes of kUntouched.
void* UntouchedBuffer(size_t n) {
  void* d = DevAlloc(n);
  std::vector<uint8_t> h(n, kUntouched);
  HIP_OK(hipMemcpy(d, h.data(), n, hipMemcpyHostToDevice));
  return d;
}

// After a memset of bytes [from, from + len) of a kUntouched buffer to `value`.
void CheckSetRange(const void* d, size_t n, size_t from, size_t len, uint8_t value, const char* what) {
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK_BYTES_EQUAL(back.data(), from, kUntouched, what);
  CHECK_BYTES_EQUAL(back.data() + from, len, value, what);
  CHECK_BYTES_EQUAL(back.data() + from + len, n - from - len, kUntouched, what);
}

// The refused memsets every byte-memset row checks: host memory, a range
// past the allocation, null; the buffer keeps its bytes.
template <typename F>
void CheckMemsetRefused(F set, void* d, size_t n, const char* what) {
  std::vector<uint8_t> h(n, kUntouched);
  HIP_EXPECT(set(h.data(), n), hipErrorInvalidValue);
  HIP_EXPECT(set(static_cast<char*>(d) + 1, n), hipErrorInvalidValue);
  HIP_EXPECT(set(nullptr, n), hipErrorInvalidValue);
  HIP_OK(set(d, 0));  // Nothing to set.
  HIP_OK(hipDeviceSynchronize());
  CHECK_BYTES_EQUAL(h.data(), n, kUntouched, what);
}

void Memset() {
  const size_t n = 100000;
  void* d = UntouchedBuffer(n);
  HIP_OK(hipMemset(static_cast<char*>(d) + 10, 0x1ab, 5000));  // The low byte of the int.
  CheckSetRange(d, n, 10, 5000, 0xab, "hipMemset");
  CheckMemsetRefused([](void* p, size_t k) { return hipMemset(p, 0x77, k); }, d, n, "host memory after hipMemset");
  CheckSetRange(d, n, 10, 5000, 0xab, "buffer after refused hipMemset");
  HIP_OK(hipFree(d));
}

void MemsetSpt() {
  const size_t n = 100000;
  void* d = UntouchedBuffer(n);
  HIP_OK(hipMemset_spt(static_cast<char*>(d) + 7, 0x2c, n - 7));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CheckSetRange(d, n, 7, n - 7, 0x2c, "hipMemset_spt");
  CheckMemsetRefused([](void* p, size_t k) { return hipMemset_spt(p, 0x77, k); }, d, n, "host memory");
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CheckSetRange(d, n, 7, n - 7, 0x2c, "buffer after refused hipMemset_spt");
  HIP_OK(hipFree(d));
}

void MemsetAsync() {
  const size_t n = 100000;
  hipStream_t s = NewStream();
  void* d = UntouchedBuffer(n);
  auto* pinned = static_cast<uint8_t*>(PinnedAlloc(n));
  // Stream order: the second memset overwrites part of the first; the copy sees both.
  HIP_OK(hipMemsetAsync(d, 0x31, 6000, s));
  HIP_OK(hipMemsetAsync(static_cast<char*>(d) + 3000, 0x32, 3000, s));
  HIP_OK(hipMemcpyAsync(pinned, d, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(pinned, 3000, 0x31, "hipMemsetAsync, first");
  CHECK_BYTES_EQUAL(pinned + 3000, 3000, 0x32, "hipMemsetAsync, second");
  CHECK_BYTES_EQUAL(pinned + 6000, n - 6000, kUntouched, "after hipMemsetAsync's range");
  std::vector<uint8_t> h(n, kUntouched);
  HIP_EXPECT(hipMemsetAsync(h.data(), 0x77, n, s), hipErrorInvalidValue);
  HIP_EXPECT(hipMemsetAsync(static_cast<char*>(d) + 1, 0x77, n, s), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(h.data(), n, kUntouched, "host memory named to hipMemsetAsync");
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK(memcmp(back.data(), pinned, n) == 0, "refused hipMemsetAsync changed the buffer");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  HIP_OK(hipHostFree(pinned));
}

// 2-D memsets: 50 bytes of each of 4 rows of a pitched allocation.
void CheckMemset2D(bool async) {
  const size_t width = 50, height = 4;
  void* d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMallocPitch(&d, &pitch, 100, height + 1));
  HIP_OK(hipMemset(d, kUntouched, pitch * (height + 1)));
  hipStream_t s = async ? NewStream() : nullptr;
  if (async) {
    HIP_OK(hipMemset2DAsync(d, pitch, 0x5a, width, height, s));
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_OK(hipMemset2D(d, pitch, 0x5a, width, height));
  }
  std::vector<uint8_t> back = ReadBack(d, pitch * (height + 1));
  for (size_t y = 0; y < height; ++y) {
    CHECK_BYTES_EQUAL(&back[y * pitch], width, 0x5a, "a set row");
    CHECK_BYTES_EQUAL(&back[y * pitch + width], pitch - width, kUntouched, "past a set row's width");
  }
  CHECK_BYTES_EQUAL(&back[height * pitch], pitch, kUntouched, "the row after the set ones");
  // A pitch narrower than the width (hipErrorInvalidValue, as clr); rows past the allocation; host memory.
  std::vector<uint8_t> h(pitch * height, kUntouched);
  if (async) {
    HIP_EXPECT(hipMemset2DAsync(d, 10, 0x77, width, height, s), hipErrorInvalidValue);
    HIP_EXPECT(hipMemset2DAsync(d, pitch, 0x77, width, height + 2, s), hipErrorInvalidValue);
    HIP_EXPECT(hipMemset2DAsync(h.data(), pitch, 0x77, width, height, s), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_EXPECT(hipMemset2D(d, 10, 0x77, width, height), hipErrorInvalidValue);
    HIP_EXPECT(hipMemset2D(d, pitch, 0x77, width, height + 2), hipErrorInvalidValue);
    HIP_EXPECT(hipMemset2D(h.data(), pitch, 0x77, width, height), hipErrorInvalidValue);
  }
  CHECK_BYTES_EQUAL(h.data(), h.size(), kUntouched, "host memory named to a 2-D memset");
  std::vector<uint8_t> again = ReadBack(d, pitch * (height + 1));
  CHECK(again == back, "refused 2-D memsets changed the allocation");
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void Memset2D() { CheckMemset2D(false); }
void Memset2DAsync() { CheckMemset2D(true); }

// 3-D memsets on a 40 x 5 x 3 hipMalloc3D volume: a box of 7 bytes of rows
// 0..2 of every slice (slice by slice), then whole slices' first 3 bytes.
void CheckMemset3D(bool async) {
  hipPitchedPtr p{};
  HIP_OK(hipMalloc3D(&p, make_hipExtent(40, 5, 3)));
  const size_t bytes = p.pitch * 5 * 3;
  HIP_OK(hipMemset(p.ptr, kUntouched, bytes));
  hipStream_t s = async ? NewStream() : nullptr;
  auto set = [&](int value, hipExtent e) {
    return async ? hipMemset3DAsync(p, value, e, s) : hipMemset3D(p, value, e);
  };
  HIP_OK(set(0x3c, make_hipExtent(7, 3, 3)));
  HIP_OK(set(0x3d, make_hipExtent(3, 5, 3)));
  if (async) HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> back = ReadBack(p.ptr, bytes);
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 5; ++y)
      for (size_t x = 0; x < p.pitch; ++x) {
        const uint8_t want = x < 3 ? 0x3d : (x < 7 && y < 3) ? 0x3c : kUntouched;
        const uint8_t got = back[z * p.pitch * 5 + y * p.pitch + x];
        CHECK(got == want, "%s: (%zu,%zu,%zu) is 0x%02x, expected 0x%02x", async ? "hipMemset3DAsync" : "hipMemset3D",
              x, y, z, got, want);
      }
  // A box taller than the slices, a null pointer: refused, nothing set.
  HIP_EXPECT(set(0x77, make_hipExtent(7, 6, 1)), hipErrorInvalidValue);
  hipPitchedPtr null_ptr = p;
  null_ptr.ptr = nullptr;
  HIP_EXPECT(async ? hipMemset3DAsync(null_ptr, 0x77, make_hipExtent(1, 1, 1), s)
                   : hipMemset3D(null_ptr, 0x77, make_hipExtent(1, 1, 1)),
             hipErrorInvalidValue);
  HIP_OK(set(0x77, make_hipExtent(0, 5, 3)));  // An empty box.
  if (async) HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> again = ReadBack(p.ptr, bytes);
  CHECK(again == back, "refused or empty 3-D memsets changed the volume");
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(p.ptr));
}

void Memset3D() { CheckMemset3D(false); }
void Memset3DAsync() { CheckMemset3D(true); }

// hipMemsetD8/D16/D32 (and Async): `count` elements of 1, 2 or 4 bytes.
template <typename T>
void CheckMemsetD(hipError_t (*set)(hipDeviceptr_t, T, size_t),
                  hipError_t (*set_async)(hipDeviceptr_t, T, size_t, hipStream_t),
                  T value, const char* what) {
  const size_t count = 3001;  // Elements.
  const size_t n = (count + 20) * sizeof(T);
  void* d = UntouchedBuffer(n);
  hipStream_t s = set_async != nullptr ? NewStream() : nullptr;
  char* at = static_cast<char*>(d) + 3 * sizeof(T);
  if (set_async != nullptr) {
    HIP_OK(set_async(at, value, count, s));
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_OK(set(at, value, count));
  }
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK_BYTES_EQUAL(back.data(), 3 * sizeof(T), kUntouched, what);
  for (size_t i = 0; i < count; ++i) {
    T got;
    memcpy(&got, &back[(3 + i) * sizeof(T)], sizeof got);
    CHECK(got == value, "%s: element %zu is %#llx, expected %#llx", what, i, static_cast<unsigned long long>(got),
          static_cast<unsigned long long>(value));
  }
  CHECK_BYTES_EQUAL(&back[(3 + count) * sizeof(T)], n - (3 + count) * sizeof(T), kUntouched, what);
  // Past the allocation's end, host memory: refused, nothing set.
  std::vector<uint8_t> h(n, kUntouched);
  const size_t too_many = n / sizeof(T);
  if (set_async != nullptr) {
    HIP_EXPECT(set_async(at, 0, too_many, s), hipErrorInvalidValue);
    HIP_EXPECT(set_async(h.data(), 0, count, s), hipErrorInvalidValue);
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_EXPECT(set(at, 0, too_many), hipErrorInvalidValue);
    HIP_EXPECT(set(h.data(), 0, count), hipErrorInvalidValue);
  }
  CHECK_BYTES_EQUAL(h.data(), n, kUntouched, what);
  std::vector<uint8_t> again = ReadBack(d, n);
  CHECK(again == back, "%s: refused memsets changed the buffer", what);
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void MemsetD8() { CheckMemsetD<unsigned char>(hipMemsetD8, nullptr, 0xa5, "hipMemsetD8"); }
void MemsetD8Async() { CheckMemsetD<unsigned char>(nullptr, hipMemsetD8Async, 0x5a, "hipMemsetD8Async"); }
void MemsetD16() { CheckMemsetD<unsigned short>(hipMemsetD16, nullptr, 0xbeef, "hipMemsetD16"); }
void MemsetD16Async() { CheckMemsetD<unsigned short>(nullptr, hipMemsetD16Async, 0xf00d, "hipMemsetD16Async"); }
void MemsetD32() { CheckMemsetD<int>(hipMemsetD32, nullptr, static_cast<int>(0xdeadbeefu), "hipMemsetD32"); }
void MemsetD32Async() { CheckMemsetD<int>(nullptr, hipMemsetD32Async, 0x12345678, "hipMemsetD32Async"); }

// ---- Symbols ------------------------------------------------------------------

constexpr int kSymbolInts = 64;
int g_not_a_symbol[kSymbolInts];  // Host memory of the same shape, never registered.

std::vector<int> Ints(int base) {
  std::vector<int> v(kSymbolInts);
  for (int i = 0; i < kSymbolInts; ++i) v[i] = base + i;
  return v;
}

// g_symbol as kernels see it: read through its device address.
std::vector<int> SymbolNow() {
  void* address = nullptr;
  HIP_OK(hipGetSymbolAddress(&address, HIP_SYMBOL(g_symbol)));
  std::vector<int> v(kSymbolInts, 0);
  HIP_OK(hipMemcpy(v.data(), address, sizeof g_symbol, hipMemcpyDeviceToHost));
  return v;
}

void DoubleOnDevice() {
  DoubleSymbol<<<1, kSymbolInts>>>(kSymbolInts);
  HIP_OK(hipGetLastError());
  HIP_OK(hipDeviceSynchronize());
}

void CheckInts(const std::vector<int>& got, const std::vector<int>& want, const char* what) {
  for (int i = 0; i < kSymbolInts; ++i)
    CHECK(got[i] == want[i], "%s: element %d is %d, expected %d", what, i, got[i], want[i]);
}

void GetSymbolSize() {
  size_t size = 0;
  HIP_OK(hipGetSymbolSize(&size, HIP_SYMBOL(g_symbol)));
  CHECK(size == sizeof g_symbol, "hipGetSymbolSize(g_symbol) = %zu, expected %zu", size, sizeof g_symbol);
  size = kSentinelSize;
  HIP_EXPECT(hipGetSymbolSize(&size, HIP_SYMBOL(g_not_a_symbol)), hipErrorInvalidSymbol);
  HIP_EXPECT(hipGetSymbolSize(&size, nullptr), hipErrorInvalidSymbol);
  CHECK(size == kSentinelSize, "a failed hipGetSymbolSize wrote %zu", size);
  HIP_EXPECT(hipGetSymbolSize(nullptr, HIP_SYMBOL(g_symbol)), hipErrorInvalidValue);
}

void GetSymbolAddress() {
  void* address = nullptr;
  HIP_OK(hipGetSymbolAddress(&address, HIP_SYMBOL(g_symbol)));
  CHECK(address != nullptr && address != static_cast<void*>(g_symbol), "hipGetSymbolAddress gave %p", address);
  void* again = nullptr;
  HIP_OK(hipGetSymbolAddress(&again, HIP_SYMBOL(g_symbol)));
  CHECK(again == address, "the address moved: %p then %p", address, again);
  // The address is the variable kernels use: a copy to it, doubled by a
  // kernel, read back through it.
  const std::vector<int> v = Ints(1000);
  HIP_OK(hipMemcpy(address, v.data(), sizeof g_symbol, hipMemcpyHostToDevice));
  DoubleOnDevice();
  std::vector<int> got(kSymbolInts, 0);
  HIP_OK(hipMemcpy(got.data(), address, sizeof g_symbol, hipMemcpyDeviceToHost));
  std::vector<int> want = v;
  for (int& x : want) x *= 2;
  CheckInts(got, want, "g_symbol through its address after DoubleSymbol");
  // It is device memory of the variable's size, but no allocation to free.
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  HIP_OK(hipMemGetAddressRange(&base, &size, static_cast<char*>(address) + 8));
  CHECK(base == address && size == sizeof g_symbol, "g_symbol's range: %p +%zu, expected %p +%zu", base, size,
        address, sizeof g_symbol);
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, address));
  CHECK(a.memoryType == hipMemoryTypeDevice && a.device == 0, "g_symbol's address: type %d, device %d",
        a.memoryType, a.device);
  HIP_EXPECT(hipFree(address), hipErrorInvalidValue);
  CheckInts(SymbolNow(), want, "g_symbol after a refused hipFree of its address");
  // Each device has its own instance.
  HIP_OK(hipSetDevice(1));
  void* address1 = nullptr;
  HIP_OK(hipGetSymbolAddress(&address1, HIP_SYMBOL(g_symbol)));
  HIP_OK(hipPointerGetAttributes(&a, address1));
  CHECK(a.device == 1, "device 1's g_symbol is on device %d", a.device);
  HIP_OK(hipMemset(address1, 0, sizeof g_symbol));
  HIP_OK(hipSetDevice(0));
  CheckInts(SymbolNow(), want, "device 0's g_symbol after device 1's was cleared");
  void* keep = SentinelPtr();
  HIP_EXPECT(hipGetSymbolAddress(&keep, HIP_SYMBOL(g_not_a_symbol)), hipErrorInvalidSymbol);
  CHECK(keep == SentinelPtr(), "a failed hipGetSymbolAddress wrote %p", keep);
  HIP_EXPECT(hipGetSymbolAddress(nullptr, HIP_SYMBOL(g_symbol)), hipErrorInvalidValue);
}

enum class SymbolMode { kBlocking, kAsync, kSpt };

// To the symbol: whole, then 4 ints at an offset; a kernel doubles them.
void CheckToSymbol(SymbolMode mode, int base, const char* what) {
  hipStream_t s = mode == SymbolMode::kAsync ? NewStream() : nullptr;
  auto to = [&](const void* src, size_t count, size_t offset) {
    switch (mode) {
      case SymbolMode::kBlocking:
        return hipMemcpyToSymbol(HIP_SYMBOL(g_symbol), src, count, offset, hipMemcpyHostToDevice);
      case SymbolMode::kAsync:
        return hipMemcpyToSymbolAsync(HIP_SYMBOL(g_symbol), src, count, offset, hipMemcpyHostToDevice, s);
      case SymbolMode::kSpt:
        return hipMemcpyToSymbol_spt(HIP_SYMBOL(g_symbol), src, count, offset, hipMemcpyHostToDevice);
    }
    return hipErrorUnknown;
  };
  auto settle = [&] {
    if (mode == SymbolMode::kAsync) HIP_OK(hipStreamSynchronize(s));
    if (mode == SymbolMode::kSpt) HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  };
  std::vector<int> want = Ints(base);
  HIP_OK(to(want.data(), sizeof g_symbol, 0));
  const int four[4] = {-1, -2, -3, -4};
  HIP_OK(to(four, sizeof four, 10 * sizeof(int)));
  settle();
  for (int i = 0; i < 4; ++i) want[10 + i] = four[i];
  CheckInts(SymbolNow(), want, what);
  DoubleOnDevice();
  for (int& x : want) x *= 2;
  CheckInts(SymbolNow(), want, what);
  // Past the variable's end, not a variable: refused, the variable stays.
  const std::vector<int> other = Ints(-500);
  HIP_EXPECT(to(other.data(), sizeof g_symbol + 4, 0), hipErrorInvalidValue);
  HIP_EXPECT(to(other.data(), 8, sizeof g_symbol - 4), hipErrorInvalidValue);
  switch (mode) {
    case SymbolMode::kBlocking:
      HIP_EXPECT(hipMemcpyToSymbol(HIP_SYMBOL(g_not_a_symbol), other.data(), 8, 0, hipMemcpyHostToDevice),
                 hipErrorInvalidSymbol);
      break;
    case SymbolMode::kAsync:
      HIP_EXPECT(hipMemcpyToSymbolAsync(HIP_SYMBOL(g_not_a_symbol), other.data(), 8, 0, hipMemcpyHostToDevice, s),
                 hipErrorInvalidSymbol);
      break;
    case SymbolMode::kSpt:
      HIP_EXPECT(hipMemcpyToSymbol_spt(HIP_SYMBOL(g_not_a_symbol), other.data(), 8, 0, hipMemcpyHostToDevice),
                 hipErrorInvalidSymbol);
      break;
  }
  settle();
  CheckInts(SymbolNow(), want, "g_symbol after refused copies");
  if (mode == SymbolMode::kBlocking) {
    // From device memory (hipMemcpyDeviceToDevice).
    const std::vector<int> dev_ints = Ints(base + 50);
    void* d = DevAlloc(sizeof g_symbol);
    HIP_OK(hipMemcpy(d, dev_ints.data(), sizeof g_symbol, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(g_symbol), d, sizeof g_symbol, 0, hipMemcpyDeviceToDevice));
    CheckInts(SymbolNow(), dev_ints, "hipMemcpyToSymbol from device memory");
    // Kinds a symbol copy refuses (ROCm 5.3+), Default among them.
    for (hipMemcpyKind k : {hipMemcpyDeviceToHost, hipMemcpyHostToHost, hipMemcpyDefault})
      HIP_EXPECT(hipMemcpyToSymbol(HIP_SYMBOL(g_symbol), other.data(), 8, 0, k), hipErrorInvalidMemcpyDirection);
    CheckInts(SymbolNow(), dev_ints, "g_symbol after refused kinds");
    // Host memory named as device memory: the pointers decide (clr).
    HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(g_symbol), other.data(), 8, 0, hipMemcpyDeviceToDevice));
    std::vector<int> mixed = dev_ints;
    mixed[0] = other[0];
    mixed[1] = other[1];
    CheckInts(SymbolNow(), mixed, "hipMemcpyToSymbol from host memory named as device memory");
    HIP_OK(hipFree(d));
  }
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
}

void MemcpyToSymbol() { CheckToSymbol(SymbolMode::kBlocking, 100, "hipMemcpyToSymbol"); }
void MemcpyToSymbolAsync() { CheckToSymbol(SymbolMode::kAsync, 200, "hipMemcpyToSymbolAsync"); }
void MemcpyToSymbolSpt() { CheckToSymbol(SymbolMode::kSpt, 300, "hipMemcpyToSymbol_spt"); }

// From the symbol: whole, then 4 ints from an offset, after a kernel ran.
void CheckFromSymbol(SymbolMode mode, int base, const char* what) {
  hipStream_t s = mode == SymbolMode::kAsync ? NewStream() : nullptr;
  auto from = [&](void* dst, size_t count, size_t offset) {
    switch (mode) {
      case SymbolMode::kBlocking:
        return hipMemcpyFromSymbol(dst, HIP_SYMBOL(g_symbol), count, offset, hipMemcpyDeviceToHost);
      case SymbolMode::kAsync:
        return hipMemcpyFromSymbolAsync(dst, HIP_SYMBOL(g_symbol), count, offset, hipMemcpyDeviceToHost, s);
      case SymbolMode::kSpt:
        return hipMemcpyFromSymbol_spt(dst, HIP_SYMBOL(g_symbol), count, offset, hipMemcpyDeviceToHost);
    }
    return hipErrorUnknown;
  };
  auto settle = [&] {
    if (mode == SymbolMode::kAsync) HIP_OK(hipStreamSynchronize(s));
    if (mode == SymbolMode::kSpt) HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  };
  std::vector<int> want = Ints(base);
  void* address = nullptr;
  HIP_OK(hipGetSymbolAddress(&address, HIP_SYMBOL(g_symbol)));
  HIP_OK(hipMemcpy(address, want.data(), sizeof g_symbol, hipMemcpyHostToDevice));
  DoubleOnDevice();
  for (int& x : want) x *= 2;
  // Into pinned memory for the async form: it lands by the synchronization.
  int* got = static_cast<int*>(PinnedAlloc(sizeof g_symbol));
  memset(got, 0, sizeof g_symbol);
  HIP_OK(from(got, sizeof g_symbol, 0));
  settle();
  CheckInts(std::vector<int>(got, got + kSymbolInts), want, what);
  int four[4] = {0, 0, 0, 0};
  HIP_OK(from(four, sizeof four, 20 * sizeof(int)));
  settle();
  for (int i = 0; i < 4; ++i) CHECK(four[i] == want[20 + i], "%s at an offset: %d is %d", what, i, four[i]);
  // Past the variable's end, not a variable: refused, the destination stays.
  memset(got, kUntouched, sizeof g_symbol);
  HIP_EXPECT(from(got, sizeof g_symbol + 4, 0), hipErrorInvalidValue);
  HIP_EXPECT(from(got, 8, sizeof g_symbol - 4), hipErrorInvalidValue);
  switch (mode) {
    case SymbolMode::kBlocking:
      HIP_EXPECT(hipMemcpyFromSymbol(got, HIP_SYMBOL(g_not_a_symbol), 8, 0, hipMemcpyDeviceToHost),
                 hipErrorInvalidSymbol);
      break;
    case SymbolMode::kAsync:
      HIP_EXPECT(hipMemcpyFromSymbolAsync(got, HIP_SYMBOL(g_not_a_symbol), 8, 0, hipMemcpyDeviceToHost, s),
                 hipErrorInvalidSymbol);
      break;
    case SymbolMode::kSpt:
      HIP_EXPECT(hipMemcpyFromSymbol_spt(got, HIP_SYMBOL(g_not_a_symbol), 8, 0, hipMemcpyDeviceToHost),
                 hipErrorInvalidSymbol);
      break;
  }
  settle();
  CHECK_BYTES_EQUAL(reinterpret_cast<uint8_t*>(got), sizeof g_symbol, kUntouched,
                    "destination of refused copies from g_symbol");
  if (mode == SymbolMode::kBlocking) {
    // Into device memory (hipMemcpyDeviceToDevice).
    void* d = DevAlloc(sizeof g_symbol);
    HIP_OK(hipMemcpyFromSymbol(d, HIP_SYMBOL(g_symbol), sizeof g_symbol, 0, hipMemcpyDeviceToDevice));
    std::vector<int> back(kSymbolInts, 0);
    HIP_OK(hipMemcpy(back.data(), d, sizeof g_symbol, hipMemcpyDeviceToHost));
    CheckInts(back, want, "hipMemcpyFromSymbol into device memory");
    // Kinds a symbol copy refuses (ROCm 5.3+), Default among them.
    std::vector<int> host(kSymbolInts, -7);
    for (hipMemcpyKind k : {hipMemcpyHostToDevice, hipMemcpyHostToHost, hipMemcpyDefault})
      HIP_EXPECT(hipMemcpyFromSymbol(host.data(), HIP_SYMBOL(g_symbol), sizeof g_symbol, 0, k),
                 hipErrorInvalidMemcpyDirection);
    CHECK(host[0] == -7, "a refused hipMemcpyFromSymbol wrote %d", host[0]);
    // Host memory named as device memory: the pointers decide (clr).
    HIP_OK(hipMemcpyFromSymbol(host.data(), HIP_SYMBOL(g_symbol), sizeof g_symbol, 0, hipMemcpyDeviceToDevice));
    CheckInts(host, want, "hipMemcpyFromSymbol into host memory named as device memory");
    HIP_OK(hipFree(d));
  }
  HIP_OK(hipHostFree(got));
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
}

void MemcpyFromSymbol() { CheckFromSymbol(SymbolMode::kBlocking, 400, "hipMemcpyFromSymbol"); }
void MemcpyFromSymbolAsync() { CheckFromSymbol(SymbolMode::kAsync, 500, "hipMemcpyFromSymbolAsync"); }
void MemcpyFromSymbolSpt() { CheckFromSymbol(SymbolMode::kSpt, 600, "hipMemcpyFromSymbol_spt"); }

// AMD banks shared memory by 4 bytes whatever is asked: the call accepts any
// configuration for a registered kernel (which still runs) and refuses
// anything that is not one.
void FuncSetSharedMemConfig() {
  HIP_OK(hipFuncSetSharedMemConfig(reinterpret_cast<const void*>(DoubleSymbol), hipSharedMemBankSizeEightByte));
  HIP_OK(hipFuncSetSharedMemConfig(reinterpret_cast<const void*>(DoubleSymbol), hipSharedMemBankSizeFourByte));
  const std::vector<int> v = Ints(7);
  HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(g_symbol), v.data(), sizeof g_symbol, 0, hipMemcpyHostToDevice));
  DoubleOnDevice();
  std::vector<int> want = v;
  for (int& x : want) x *= 2;
  CheckInts(SymbolNow(), want, "DoubleSymbol after hipFuncSetSharedMemConfig");
  HIP_EXPECT(hipFuncSetSharedMemConfig(static_cast<const void*>(g_not_a_symbol), hipSharedMemBankSizeFourByte),
             hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipFuncSetSharedMemConfig(reinterpret_cast<const void*>(&FuncSetSharedMemConfig),
                                       hipSharedMemBankSizeFourByte),
             hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipFuncSetSharedMemConfig(nullptr, hipSharedMemBankSizeFourByte), hipErrorInvalidDeviceFunction);
}

// ---- Module launches (hipExtModuleLaunchKernel, hipHccModuleLaunchKernel) -----

using ExtLaunchFn = hipError_t (*)(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
                                   uint32_t lz, size_t shared, hipStream_t stream, void** params, void** extra,
                                   hipEvent_t start, hipEvent_t stop);

// Global sizes are in work-items: 1000 of 256-wide blocks leave the last
// block partial (232 threads), and no thread past 1000 runs. Start and stop events are
// recorded around the kernel.
void CheckModuleLaunch(ExtLaunchFn launch, int base, const char* what) {
  std::vector<uint8_t> fatbin = e2e::OwnFatBinary();
  hipModule_t module = nullptr;
  HIP_OK(hipModuleLoadData(&module, fatbin.data()));
  hipFunction_t f = nullptr;
  HIP_OK(hipModuleGetFunction(&f, module, "_Z10MarkGlobalPiii"));
  const int slots = 1024;
  int* d = static_cast<int*>(DevAlloc(slots * sizeof(int)));
  HIP_OK(hipMemset(d, 0xff, slots * sizeof(int)));  // -1 everywhere.
  hipStream_t s = NewStream();
  hipEvent_t start = nullptr, stop = nullptr;
  HIP_OK(hipEventCreate(&start));
  HIP_OK(hipEventCreate(&stop));
  int stride = 256, b = base;
  void* params[] = {&d, &stride, &b};
  HIP_OK(launch(f, 1000, 1, 1, 256, 1, 1, 0, s, params, nullptr, start, stop));
  HIP_OK(hipEventSynchronize(stop));
  HIP_EXPECT(hipEventQuery(start), hipSuccess);
  float ms = -1;
  HIP_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0, "%s: elapsed %f ms", what, ms);
  std::vector<int> got(slots);
  HIP_OK(hipMemcpy(got.data(), d, slots * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < slots; ++i) {
    // The last block is partial: 232 of 256 threads, and its blockDim says so.
    const int want = i < 768 ? base + i * 1000 + 256 : i < 1000 ? base + i * 1000 + 232 : -1;
    CHECK(got[i] == want, "%s: slot %d holds %d, expected %d", what, i, got[i], want);
  }
  // The packed-argument form (extra), a whole grid, on the null stream.
  struct {
    int* out;
    int stride;
    int base;
  } packed{d, 128, base + 7};
  size_t packed_size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   HIP_LAUNCH_PARAM_END};
  HIP_OK(launch(f, slots, 1, 1, 128, 1, 1, 0, nullptr, nullptr, extra, nullptr, nullptr));
  HIP_OK(hipMemcpy(got.data(), d, slots * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < slots; ++i)
    CHECK(got[i] == base + 7 + i * 1000 + 128, "%s (extra): slot %d holds %d", what, i, got[i]);
  // A zero size, both argument forms at once, no function: refused, nothing runs.
  HIP_EXPECT(launch(f, 0, 1, 1, 256, 1, 1, 0, s, params, nullptr, nullptr, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(launch(f, 256, 1, 1, 0, 1, 1, 0, s, params, nullptr, nullptr, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(launch(f, 256, 1, 1, 256, 1, 1, 0, s, params, extra, nullptr, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(launch(nullptr, 256, 1, 1, 256, 1, 1, 0, s, params, nullptr, nullptr, nullptr), hipErrorInvalidImage);
  HIP_OK(hipStreamSynchronize(s));
  std::vector<int> again(slots);
  HIP_OK(hipMemcpy(again.data(), d, slots * sizeof(int), hipMemcpyDeviceToHost));
  CHECK(again == got, "%s: a refused launch changed the output", what);
  HIP_OK(hipEventDestroy(start));
  HIP_OK(hipEventDestroy(stop));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  HIP_OK(hipModuleUnload(module));
}

void ExtModuleLaunchKernel() {
  CheckModuleLaunch(
      [](hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
         hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
        return hipExtModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, 0);
      },
      10, "hipExtModuleLaunchKernel");
}

void HccModuleLaunchKernel() {
  CheckModuleLaunch(
      [](hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
         hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
        return hipHccModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop);
      },
      20, "hipHccModuleLaunchKernel");
}

// ---- Per-thread forms of the 2-D/3-D memsets and 3-D copy, driver-API
// host allocation, flagged device allocation, single pointer attributes and
// the hip_Memcpy2D copies.

void Memset2DSpt() {
  const size_t width = 50, height = 4;
  void* d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMallocPitch(&d, &pitch, 100, height + 1));
  HIP_OK(hipMemset(d, kUntouched, pitch * (height + 1)));
  HIP_OK(hipDeviceSynchronize());
  // After work queued on the per-thread stream: stream order.
  HIP_OK(hipMemsetAsync(d, 0x11, pitch, hipStreamPerThread));
  HIP_OK(hipMemset2D_spt(d, pitch, 0x5b, width, height));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  std::vector<uint8_t> back = ReadBack(d, pitch * (height + 1));
  for (size_t y = 0; y < height; ++y) {
    CHECK_BYTES_EQUAL(&back[y * pitch], width, 0x5b, "a row set by hipMemset2D_spt");
    CHECK_BYTES_EQUAL(&back[y * pitch + width], pitch - width, y == 0 ? 0x11 : kUntouched, "past a set row");
  }
  CHECK_BYTES_EQUAL(&back[height * pitch], pitch, kUntouched, "the row after hipMemset2D_spt's");
  HIP_EXPECT(hipMemset2D_spt(d, 10, 0x77, width, height), hipErrorInvalidValue);
  HIP_EXPECT(hipMemset2D_spt(d, pitch, 0x77, width, height + 2), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(ReadBack(d, pitch * (height + 1)) == back, "refused hipMemset2D_spt calls changed the allocation");
  HIP_OK(hipFree(d));
}

void Memset3DSpt() {
  hipPitchedPtr p{};
  HIP_OK(hipMalloc3D(&p, make_hipExtent(40, 5, 3)));
  const size_t bytes = p.pitch * 5 * 3;
  HIP_OK(hipMemset(p.ptr, kUntouched, bytes));
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipMemset3D_spt(p, 0x4c, make_hipExtent(7, 3, 3)));  // Slice by slice.
  HIP_OK(hipMemset3D_spt(p, 0x4d, make_hipExtent(3, 5, 3)));  // Whole slices.
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  std::vector<uint8_t> back = ReadBack(p.ptr, bytes);
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 5; ++y)
      for (size_t x = 0; x < p.pitch; ++x) {
        const uint8_t want = x < 3 ? 0x4d : (x < 7 && y < 3) ? 0x4c : kUntouched;
        const uint8_t got = back[z * p.pitch * 5 + y * p.pitch + x];
        CHECK(got == want, "hipMemset3D_spt: (%zu,%zu,%zu) is 0x%02x, expected 0x%02x", x, y, z, got, want);
      }
  HIP_EXPECT(hipMemset3D_spt(p, 0x77, make_hipExtent(7, 6, 1)), hipErrorInvalidValue);
  hipPitchedPtr null_ptr = p;
  null_ptr.ptr = nullptr;
  HIP_EXPECT(hipMemset3D_spt(null_ptr, 0x77, make_hipExtent(1, 1, 1)), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(ReadBack(p.ptr, bytes) == back, "refused hipMemset3D_spt calls changed the volume");
  HIP_OK(hipFree(p.ptr));
}

void Memcpy3DSpt() {
  Check3D([](const hipMemcpy3DParms* p, hipStream_t) { return hipMemcpy3D_spt(p); }, nullptr, 219,
          "hipMemcpy3D_spt");
}

void MemAllocHost() {
  const size_t n = 5000;
  void* p = nullptr;
  HIP_OK(hipMemAllocHost(&p, n));
  CHECK(p != nullptr, "hipMemAllocHost gave null");
  unsigned flags = 0xff;
  HIP_OK(hipHostGetFlags(&flags, p));
  CHECK(flags == 0, "hipMemAllocHost memory has flags %#x", flags);
  size_t size = 0;
  HIP_OK(hipMemPtrGetInfo(p, &size));
  CHECK(size == n, "hipMemAllocHost memory of %zu bytes has size %zu", n, size);
  void* d = DevAlloc(n);
  Upload(d, 104, n);
  HIP_OK(hipMemcpy(p, d, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(p, n, 104, "device to hipMemAllocHost memory");
  HIP_EXPECT(hipMemAllocHost(nullptr, 64), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
  HIP_OK(hipHostFree(p));
}

void ExtMallocWithFlags() {
  // hipDeviceMallocDefault, Finegrained, Uncached (0x3; later headers) and
  // Contiguous (0x4): device memory that holds what is copied into it.
  const unsigned accepted[] = {hipDeviceMallocDefault, hipDeviceMallocFinegrained, 0x3u, 0x4u};
  const size_t n = 6000;
  for (unsigned flags : accepted) {
    void* d = nullptr;
    HIP_OK(hipExtMallocWithFlags(&d, n, flags));
    CHECK(d != nullptr, "hipExtMallocWithFlags(%#x) gave null", flags);
    hipPointerAttribute_t a{};
    HIP_OK(hipPointerGetAttributes(&a, d));
    CHECK(a.memoryType == hipMemoryTypeDevice && a.device == 0, "flags %#x: type %d, device %d", flags,
          a.memoryType, a.device);
    Upload(d, 300 + flags, n);
    std::vector<uint8_t> back = ReadBack(d, n);
    CHECK_PATTERN(back.data(), n, 300 + flags, "hipExtMallocWithFlags memory read back");
    HIP_OK(hipFree(d));
  }
  // Signal memory: exactly 8 bytes.
  void* sig = nullptr;
  HIP_OK(hipExtMallocWithFlags(&sig, 8, hipMallocSignalMemory));
  Upload(sig, 305, 8);
  const std::vector<uint8_t> sig_back = ReadBack(sig, 8);
  CHECK_PATTERN(sig_back.data(), 8, 305, "hipMallocSignalMemory memory read back");
  HIP_OK(hipFree(sig));
  void* keep = SentinelPtr();
  HIP_EXPECT(hipExtMallocWithFlags(&keep, 16, hipMallocSignalMemory), hipErrorInvalidValue);
  HIP_EXPECT(hipExtMallocWithFlags(&keep, 64, 0x7), hipErrorInvalidValue);  // Not a flag clr accepts.
  HIP_EXPECT(hipExtMallocWithFlags(&keep, 64, hipDeviceMallocFinegrained | 0x10), hipErrorInvalidValue);
  CHECK(keep == SentinelPtr(), "a failed hipExtMallocWithFlags wrote %p", keep);
  HIP_EXPECT(hipExtMallocWithFlags(nullptr, 64, hipDeviceMallocDefault), hipErrorInvalidValue);
}

// IPC between two processes (opening, reading and writing through the other
// process's allocation) is e2e_ipc's (ipc.hip); in one process: handles
// are made, stable, and misuse gets its documented error.
void IpcGetMemHandle() {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, 8192));
  hipIpcMemHandle_t a{}, b{}, zero{};
  HIP_OK(hipIpcGetMemHandle(&a, d));
  HIP_OK(hipIpcGetMemHandle(&b, d));
  CHECK(memcmp(&a, &zero, sizeof a) != 0, "hipIpcGetMemHandle gave an all-zero handle");
  CHECK(memcmp(&a, &b, sizeof a) == 0, "two handles of one allocation differ");
  std::vector<uint8_t> host(64, 1);
  hipIpcMemHandle_t untouched{};
  HIP_EXPECT(hipIpcGetMemHandle(&untouched, host.data()), hipErrorInvalidValue);
  CHECK(memcmp(&untouched, &zero, sizeof zero) == 0, "a failed hipIpcGetMemHandle wrote its handle");
  HIP_EXPECT(hipIpcGetMemHandle(nullptr, d), hipErrorInvalidValue);
  HIP_EXPECT(hipIpcGetMemHandle(&untouched, nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
  HIP_EXPECT(hipIpcGetMemHandle(&untouched, d), hipErrorInvalidValue);  // Freed.
}

void IpcOpenMemHandle() {
  hipIpcMemHandle_t zero{};
  void* out = SentinelPtr();
  HIP_EXPECT(hipIpcOpenMemHandle(&out, zero, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipIpcOpenMemHandle(&out, zero, 0x80), hipErrorInvalidValue);  // Unknown flags.
  CHECK(out == SentinelPtr(), "a failed hipIpcOpenMemHandle wrote %p", out);
  HIP_EXPECT(hipIpcOpenMemHandle(nullptr, zero, 0), hipErrorInvalidValue);
}

void IpcCloseMemHandle() {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, 4096));
  HIP_EXPECT(hipIpcCloseMemHandle(d), hipErrorInvalidValue);  // Allocated here, not opened.
  HIP_EXPECT(hipIpcCloseMemHandle(nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(d));  // Still an ordinary allocation.
}

void PointerSetAttribute() {
  void* d = DevAllocOn(0, 4096);
  char* inside = static_cast<char*>(d) + 64;
  bool sync = true;
  HIP_OK(hipPointerGetAttribute(&sync, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  CHECK(!sync, "SYNC_MEMOPS set before any hipPointerSetAttribute");
  unsigned int on = 1;
  HIP_OK(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, inside));  // The whole allocation.
  HIP_OK(hipPointerGetAttribute(&sync, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  CHECK(sync, "SYNC_MEMOPS not set after hipPointerSetAttribute");
  unsigned int off = 0;
  HIP_OK(hipPointerSetAttribute(&off, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  HIP_OK(hipPointerGetAttribute(&sync, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, inside));
  CHECK(!sync, "SYNC_MEMOPS still set after clearing it");
  HIP_EXPECT(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, d), hipErrorInvalidValue);
  HIP_EXPECT(hipPointerSetAttribute(nullptr, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, d), hipErrorInvalidValue);
  int local = 0;
  HIP_EXPECT(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, &local), hipErrorInvalidValue);
  // Pinned memory too; a new allocation starts unset.
  void* h = nullptr;
  HIP_OK(hipHostMalloc(&h, 256, 0));
  HIP_OK(hipPointerSetAttribute(&on, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, h));
  HIP_OK(hipPointerGetAttribute(&sync, HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, h));
  CHECK(sync, "pinned memory: SYNC_MEMOPS not set");
  HIP_OK(hipHostFree(h));
  HIP_OK(hipFree(d));
}

void PointerGetAttribute() {
  void* d1 = DevAllocOn(1, 8192);
  char* inside = static_cast<char*>(d1) + 100;
  // This program is 5.x: hipMemoryTypeDevice is 1, hipMemoryTypeHost 0.
  uint32_t type = 0xffffffff;
  HIP_OK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, inside));
  CHECK(type == hipMemoryTypeDevice, "device memory: type %u", type);
  int ordinal = -1;
  HIP_OK(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, inside));
  CHECK(ordinal == 1, "device 1 memory: ordinal %d", ordinal);
  void* start = nullptr;
  HIP_OK(hipPointerGetAttribute(&start, HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, inside));
  CHECK(start == d1, "range start %p, expected %p", start, d1);
  uint32_t range = 0;
  HIP_OK(hipPointerGetAttribute(&range, HIP_POINTER_ATTRIBUTE_RANGE_SIZE, inside));
  CHECK(range == 8192, "range size %u", range);
  void* dev_ptr = nullptr;
  HIP_OK(hipPointerGetAttribute(&dev_ptr, HIP_POINTER_ATTRIBUTE_DEVICE_POINTER, inside));
  CHECK(dev_ptr == inside, "device pointer %p, expected %p", dev_ptr, static_cast<void*>(inside));
  bool managed = true;
  HIP_OK(hipPointerGetAttribute(&managed, HIP_POINTER_ATTRIBUTE_IS_MANAGED, inside));
  CHECK(!managed, "hipMalloc memory reported managed");
  void* host_ptr = SentinelPtr();
  HIP_EXPECT(hipPointerGetAttribute(&host_ptr, HIP_POINTER_ATTRIBUTE_HOST_POINTER, inside), hipErrorInvalidValue);
  CHECK(host_ptr == nullptr, "device memory's host pointer is %p", host_ptr);
  // Pinned memory.
  void* h = nullptr;
  HIP_OK(hipHostMalloc(&h, 300, hipHostMallocMapped));
  HIP_OK(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, h));
  CHECK(type == hipMemoryTypeHost, "pinned memory: type %u", type);
  HIP_OK(hipPointerGetAttribute(&host_ptr, HIP_POINTER_ATTRIBUTE_HOST_POINTER, h));
  CHECK(host_ptr == h, "pinned host pointer %p, expected %p", host_ptr, h);
  uint32_t flags = 0;
  HIP_OK(hipPointerGetAttribute(&flags, HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS, h));
  CHECK(flags == hipHostMallocMapped, "pinned memory's flags %#x", flags);
  // Memory the runtime does not know: clr's defaults and hipErrorInvalidValue.
  std::vector<uint8_t> plain(64);
  HIP_EXPECT(hipPointerGetAttribute(&ordinal, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL, plain.data()),
             hipErrorInvalidValue);
  CHECK(ordinal == -2, "unknown memory's ordinal %d, expected -2", ordinal);
  // Refused arguments leave the output alone.
  uint32_t keep = 0x5eed;
  HIP_EXPECT(hipPointerGetAttribute(&keep, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipPointerGetAttribute(nullptr, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, inside), hipErrorInvalidValue);
  HIP_EXPECT(hipPointerGetAttribute(&keep, static_cast<hipPointer_attribute>(999), inside), hipErrorInvalidValue);
  HIP_EXPECT(hipPointerGetAttribute(&keep, HIP_POINTER_ATTRIBUTE_BUFFER_ID, inside), hipErrorNotSupported);
  CHECK(keep == 0x5eed, "a failed hipPointerGetAttribute wrote %#x", keep);
  HIP_OK(hipFree(d1));
  HIP_EXPECT(hipPointerGetAttribute(&type, HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, inside), hipErrorInvalidValue);
  HIP_OK(hipHostFree(h));
}

void DrvPointerGetAttributes() {
  void* d = DevAlloc(4096);
  char* inside = static_cast<char*>(d) + 40;
  uint32_t type = 0xffffffff;
  int ordinal = -1;
  void* start = nullptr;
  bool mapped = false;
  hipPointer_attribute attrs[] = {HIP_POINTER_ATTRIBUTE_MEMORY_TYPE, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR, HIP_POINTER_ATTRIBUTE_MAPPED};
  void* data[] = {&type, &ordinal, &start, &mapped};
  HIP_OK(hipDrvPointerGetAttributes(4, attrs, data, inside));
  CHECK(type == hipMemoryTypeDevice && ordinal == 0 && start == d && mapped,
        "device memory: type %u, ordinal %d, start %p (expected %p), mapped %d", type, ordinal, start, d, mapped);
  // Memory the runtime does not know: success, every attribute its default (as clr).
  std::vector<uint8_t> plain(64);
  HIP_OK(hipDrvPointerGetAttributes(4, attrs, data, plain.data()));
  CHECK(type == 0 && ordinal == -2 && start == nullptr && !mapped,
        "unknown memory: type %u, ordinal %d, start %p, mapped %d", type, ordinal, start, mapped);
  // An attribute hipr cannot answer is reported; the others are still answered.
  uint32_t id = 0x5eed;
  hipPointer_attribute with_id[] = {HIP_POINTER_ATTRIBUTE_BUFFER_ID, HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* id_data[] = {&id, &ordinal};
  HIP_EXPECT(hipDrvPointerGetAttributes(2, with_id, id_data, d), hipErrorNotSupported);
  CHECK(id == 0x5eed && ordinal == 0, "buffer id %#x (untouched expected), ordinal %d", id, ordinal);
  ordinal = 77;
  HIP_EXPECT(hipDrvPointerGetAttributes(0, attrs, data, d), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvPointerGetAttributes(4, nullptr, data, d), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvPointerGetAttributes(4, attrs, nullptr, d), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvPointerGetAttributes(4, attrs, data, nullptr), hipErrorInvalidValue);
  CHECK(ordinal == 77, "a refused hipDrvPointerGetAttributes wrote ordinal %d", ordinal);
  HIP_OK(hipFree(d));
}

// hip_Memcpy2D in this program's (5.x) hipMemoryType numbering.
hip_Memcpy2D Param2D(hipMemoryType src_type, const void* src, size_t spitch, hipMemoryType dst_type, void* dst,
                     size_t dpitch, size_t width, size_t height) {
  hip_Memcpy2D p{};
  p.srcMemoryType = src_type;
  if (src_type == hipMemoryTypeHost) p.srcHost = src; else p.srcDevice = const_cast<void*>(src);
  p.srcPitch = spitch;
  p.dstMemoryType = dst_type;
  if (dst_type == hipMemoryTypeHost) p.dstHost = dst; else p.dstDevice = dst;
  p.dstPitch = dpitch;
  p.WidthInBytes = width;
  p.Height = height;
  return p;
}

void CheckMemcpyParam2D(bool async) {
  const char* what = async ? "hipMemcpyParam2DAsync" : "hipMemcpyParam2D";
  hipStream_t s = async ? NewStream() : nullptr;
  auto copy = [&](const hip_Memcpy2D* p) { return async ? hipMemcpyParam2DAsync(p, s) : hipMemcpyParam2D(p); };
  TwoD t(async ? 221 : 220);
  // Host rows into the pitched allocation at origin (2, 1): kW - 2 bytes of kH - 1 rows.
  const size_t w = kW - 2, h = kH - 1;
  hip_Memcpy2D up = Param2D(hipMemoryTypeHost, t.src.data(), kSrcPitch, hipMemoryTypeDevice, t.d, t.pitch, w, h);
  up.dstXInBytes = 2;
  up.dstY = 1;
  HIP_OK(copy(&up));
  // Device to device into a second allocation, then device to host rows (pinned when async).
  TwoD u(222);
  hip_Memcpy2D across = Param2D(hipMemoryTypeDevice, t.d, t.pitch, hipMemoryTypeDevice, u.d, u.pitch, kW, kH);
  HIP_OK(copy(&across));
  auto* out = static_cast<uint8_t*>(async ? PinnedAlloc(kDstPitch * kH) : malloc(kDstPitch * kH));
  memset(out, kUntouched, kDstPitch * kH);
  hip_Memcpy2D down = Param2D(hipMemoryTypeDevice, u.d, u.pitch, hipMemoryTypeHost, out, kDstPitch, kW, kH);
  HIP_OK(copy(&down));
  if (async) HIP_OK(hipStreamSynchronize(s));
  for (size_t y = 0; y < kH; ++y)
    for (size_t x = 0; x < kDstPitch; ++x) {
      const uint8_t want = x >= kW ? kUntouched : (y >= 1 && x >= 2) ? t.src[(y - 1) * kSrcPitch + x - 2] : kUntouched;
      CHECK(out[y * kDstPitch + x] == want, "%s: (%zu,%zu) is 0x%02x, expected 0x%02x", what, x, y,
            out[y * kDstPitch + x], want);
    }
  // An array side naming no live array (api_table_array.hip copies real
  // ones), a width past the pitch, an unknown memory type, host memory
  // named as device memory: refused, the destination untouched.
  std::vector<uint8_t> keep(kDstPitch * kH, kUntouched);
  hip_Memcpy2D bad = Param2D(hipMemoryTypeDevice, u.d, u.pitch, hipMemoryTypeHost, keep.data(), kDstPitch, kW, kH);
  bad.dstMemoryType = hipMemoryTypeArray;
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  bad.dstMemoryType = hipMemoryTypeHost;
  bad.dstXInBytes = kDstPitch - kW + 1;
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);  // As clr's BufferRect (hip-tests), not InvalidPitchValue.
  bad.dstXInBytes = 0;
  // A pitch at the device's maximum (memPitch): refused before any row is
  // touched, as clr.
  int max_pitch = 0;
  HIP_OK(hipDeviceGetAttribute(&max_pitch, hipDeviceAttributeMaxPitch, 0));
  bad.dstPitch = static_cast<size_t>(max_pitch);
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  bad.dstPitch = kDstPitch;
  bad.srcMemoryType = static_cast<hipMemoryType>(42);
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  std::vector<uint8_t> host_rows(u.pitch * kH, 0x5a);
  bad.srcMemoryType = hipMemoryTypeDevice;
  bad.srcDevice = host_rows.data();
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  HIP_EXPECT(copy(nullptr), hipErrorInvalidValue);
  if (async) HIP_OK(hipStreamSynchronize(s));
  CHECK_BYTES_EQUAL(keep.data(), keep.size(), kUntouched, what);
  // Device memory named as host memory is copied as device memory (clr).
  bad.srcMemoryType = hipMemoryTypeHost;
  bad.srcHost = u.d;
  HIP_OK(copy(&bad));
  if (async) HIP_OK(hipStreamSynchronize(s));
  for (size_t y = 0; y < kH; ++y)
    for (size_t x = 0; x < kW; ++x)
      CHECK(keep[y * kDstPitch + x] == out[y * kDstPitch + x], "%s: device memory typed as host, (%zu,%zu)", what, x,
            y);
  if (async) {
    HIP_OK(hipHostFree(out));
    HIP_OK(hipStreamDestroy(s));
  } else {
    free(out);
  }
}

void MemcpyParam2D() { CheckMemcpyParam2D(false); }
void MemcpyParam2DAsync() { CheckMemcpyParam2D(true); }

// hipDrvMemcpy3D(Async) with this program's (5.x) HIP_MEMCPY3D: 3 slices of
// 4 rows of 10 bytes, host (pitch 12, slices of 4 rows) -> device (pitch 32,
// slices of 6 rows, 5 bytes in, 1 row down) -> host, byte-exact; the device
// bytes around the box untouched.
void CheckDrvMemcpy3D(bool async) {
  const char* what = async ? "hipDrvMemcpy3DAsync" : "hipDrvMemcpy3D";
  hipStream_t s = async ? NewStream() : nullptr;
  auto copy = [&](const HIP_MEMCPY3D* p) { return async ? hipDrvMemcpy3DAsync(p, s) : hipDrvMemcpy3D(p); };
  const size_t sp = 12, sh = 4, dp = 32, dh = 6, w = 10, h = 4, depth = 3;
  std::vector<uint8_t> in(sp * sh * depth);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint8_t>(i * 7 + (async ? 3 : 1));
  void* d = UntouchedBuffer(dp * dh * depth);
  HIP_MEMCPY3D up{};
  up.srcMemoryType = hipMemoryTypeHost;
  up.srcHost = in.data();
  up.srcPitch = sp;
  up.srcHeight = sh;
  up.dstMemoryType = hipMemoryTypeDevice;
  up.dstDevice = d;
  up.dstXInBytes = 5;
  up.dstY = 1;
  up.dstPitch = dp;
  up.dstHeight = dh;
  up.WidthInBytes = w;
  up.Height = h;
  up.Depth = depth;
  HIP_OK(copy(&up));
  if (async) HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> dev = ReadBack(d, dp * dh * depth);
  for (size_t z = 0; z < depth; ++z)
    for (size_t y = 0; y < dh; ++y)
      for (size_t x = 0; x < dp; ++x) {
        const bool inside = y >= 1 && y < 1 + h && x >= 5 && x < 5 + w;
        const uint8_t want = inside ? in[z * sp * sh + (y - 1) * sp + (x - 5)] : kUntouched;
        CHECK(dev[z * dp * dh + y * dp + x] == want, "%s: device (%zu,%zu,%zu) is 0x%02x, expected 0x%02x", what, x,
              y, z, dev[z * dp * dh + y * dp + x], want);
      }
  std::vector<uint8_t> out(sp * sh * depth, 0);
  HIP_MEMCPY3D down{};
  down.srcMemoryType = hipMemoryTypeDevice;
  down.srcDevice = d;
  down.srcXInBytes = 5;
  down.srcY = 1;
  down.srcPitch = dp;
  down.srcHeight = dh;
  down.dstMemoryType = hipMemoryTypeHost;
  down.dstHost = out.data();
  down.dstPitch = sp;
  down.dstHeight = sh;
  down.WidthInBytes = w;
  down.Height = h;
  down.Depth = depth;
  HIP_OK(copy(&down));
  if (async) HIP_OK(hipStreamSynchronize(s));
  for (size_t z = 0; z < depth; ++z)
    for (size_t y = 0; y < h; ++y)
      CHECK(memcmp(&out[z * sp * sh + y * sp], &in[z * sp * sh + y * sp], w) == 0, "%s: row %zu of slice %zu differs",
            what, y, z);
  // An array side naming no live array, an unknown memory type, a box
  // deeper than the slices, null.
  HIP_MEMCPY3D bad = down;
  bad.dstMemoryType = hipMemoryTypeArray;
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  bad.dstMemoryType = static_cast<hipMemoryType>(42);
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  bad = down;
  bad.srcY = 3;  // 3 + 4 rows > slices of 6.
  HIP_EXPECT(copy(&bad), hipErrorInvalidValue);
  HIP_EXPECT(copy(nullptr), hipErrorInvalidValue);
  if (async) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void DrvMemcpy3D() { CheckDrvMemcpy3D(false); }
void DrvMemcpy3DAsync() { CheckDrvMemcpy3D(true); }

// The _spt async forms: the null stream is the calling thread's per-thread
// stream; the work is there once that stream is synchronized.
void Memcpy2DAsyncSpt() {
  TwoD t(231);
  HIP_OK(hipMemcpy2DAsync_spt(t.d, t.pitch, t.src.data(), kSrcPitch, kW, kH, hipMemcpyHostToDevice, nullptr));
  HIP_OK(hipMemcpy2DAsync_spt(t.dst.data(), kDstPitch, t.d, t.pitch, kW, kH, hipMemcpyDeviceToHost, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  t.Check("hipMemcpy2DAsync_spt");
  HIP_EXPECT(hipMemcpy2DAsync_spt(t.dst.data(), kDstPitch, t.d, t.pitch, kDstPitch + 1, kH, hipMemcpyDeviceToHost,
                                  nullptr),
             hipErrorInvalidPitchValue);
}

void Memcpy3DAsyncSpt() {
  Check3D(hipMemcpy3DAsync_spt, nullptr, 232, "hipMemcpy3DAsync_spt");
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
}

void MemsetAsyncSpt() {
  const size_t n = 5000;
  void* d = UntouchedBuffer(n);
  HIP_OK(hipMemsetAsync_spt(static_cast<char*>(d) + 100, 0x41, 1000, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  std::vector<uint8_t> back = ReadBack(d, n);
  CHECK_BYTES_EQUAL(back.data(), 100, kUntouched, "before hipMemsetAsync_spt's range");
  CHECK_BYTES_EQUAL(back.data() + 100, 1000, 0x41, "hipMemsetAsync_spt");
  CHECK_BYTES_EQUAL(back.data() + 1100, n - 1100, kUntouched, "after hipMemsetAsync_spt's range");
  std::vector<uint8_t> h(16, kUntouched);
  HIP_EXPECT(hipMemsetAsync_spt(h.data(), 0, h.size(), nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
}

void Memset2DAsyncSpt() {
  void* d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMallocPitch(&d, &pitch, 50, 4));
  HIP_OK(hipMemset(d, kUntouched, pitch * 4));
  HIP_OK(hipMemset2DAsync_spt(d, pitch, 0x42, 30, 4, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  std::vector<uint8_t> back = ReadBack(d, pitch * 4);
  for (size_t y = 0; y < 4; ++y) {
    CHECK_BYTES_EQUAL(&back[y * pitch], 30, 0x42, "hipMemset2DAsync_spt row");
    CHECK_BYTES_EQUAL(&back[y * pitch + 30], pitch - 30, kUntouched, "past hipMemset2DAsync_spt's width");
  }
  HIP_EXPECT(hipMemset2DAsync_spt(d, 10, 0x42, 30, 4, nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
}

void Memset3DAsyncSpt() {
  hipPitchedPtr p{};
  HIP_OK(hipMalloc3D(&p, make_hipExtent(40, 5, 3)));
  const size_t bytes = p.pitch * 5 * 3;
  HIP_OK(hipMemset(p.ptr, kUntouched, bytes));
  HIP_OK(hipMemset3DAsync_spt(p, 0x43, make_hipExtent(7, 5, 3), nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  std::vector<uint8_t> back = ReadBack(p.ptr, bytes);
  for (size_t row = 0; row < 15; ++row) {
    CHECK_BYTES_EQUAL(&back[row * p.pitch], 7, 0x43, "hipMemset3DAsync_spt row");
    CHECK_BYTES_EQUAL(&back[row * p.pitch + 7], p.pitch - 7, kUntouched, "past hipMemset3DAsync_spt's box");
  }
  HIP_EXPECT(hipMemset3DAsync_spt(p, 0, make_hipExtent(7, 6, 3), nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(p.ptr));
}

void MemcpyToFromSymbolAsyncSpt() {
  int in[64], out[64];
  for (int i = 0; i < 64; ++i) in[i] = 4000 + i * 3;
  memset(out, 0, sizeof out);
  HIP_OK(hipMemcpyToSymbolAsync_spt(HIP_SYMBOL(g_symbol), in, sizeof in, 0, hipMemcpyHostToDevice, nullptr));
  HIP_OK(hipMemcpyFromSymbolAsync_spt(out, HIP_SYMBOL(g_symbol), sizeof out, 0, hipMemcpyDeviceToHost, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(memcmp(in, out, sizeof in) == 0, "the symbol's round trip on the per-thread stream differs");
  HIP_EXPECT(hipMemcpyToSymbolAsync_spt(HIP_SYMBOL(g_symbol), in, sizeof in + 4, 0, hipMemcpyHostToDevice, nullptr),
             hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpyFromSymbolAsync_spt(out, HIP_SYMBOL(g_symbol), 4, sizeof out, hipMemcpyDeviceToHost, nullptr),
             hipErrorInvalidValue);
}

void MallocFromPoolAsync() {
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 0));
  hipStream_t s = NewStream();
  const size_t n = 1 << 16;
  void* p = nullptr;
  HIP_OK(hipMallocFromPoolAsync(&p, n, pool, s));
  HIP_OK(hipMemsetAsync(p, 0x6d, n, s));
  HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> back = ReadBack(p, n);
  CHECK_BYTES_EQUAL(back.data(), n, 0x6d, "hipMallocFromPoolAsync memory");
  HIP_OK(hipFreeAsync(p, s));
  void* keep = SentinelPtr();
  HIP_EXPECT(hipMallocFromPoolAsync(&keep, n, nullptr, s), hipErrorInvalidValue);
  HIP_EXPECT(hipMallocFromPoolAsync(&keep, n, reinterpret_cast<hipMemPool_t>(0x12345), s), hipErrorInvalidValue);
  CHECK(keep == SentinelPtr(), "a refused allocation wrote a pointer");
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipStreamDestroy(s));
}

void ExtModuleLaunchKernelC() {
  CheckModuleLaunch(
      [](hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
         hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
        return CExtModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, 0);
      },
      30, "hipExtModuleLaunchKernel (C name)");
}

void HccModuleLaunchKernelC() {
  CheckModuleLaunch(
      [](hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
         hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
        return CHccModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop);
      },
      40, "hipHccModuleLaunchKernel (C name)");
}

// hipMemsetD2D{8,16,32}(Async): `width` elements of each of 4 rows of a
// pitched allocation; the rest of each row untouched.
template <typename T>
void CheckMemsetD2D(hipError_t (*set)(hipDeviceptr_t, size_t, T, size_t, size_t),
                    hipError_t (*set_async)(hipDeviceptr_t, size_t, T, size_t, size_t, hipStream_t), T value,
                    const char* what) {
  void* d = nullptr;
  size_t pitch = 0;
  const size_t width = 10, rows = 4;
  HIP_OK(hipMallocPitch(&d, &pitch, 64, rows));
  HIP_OK(hipMemset(d, kUntouched, pitch * rows));
  hipStream_t s = set_async != nullptr ? NewStream() : nullptr;
  if (set_async != nullptr) {
    HIP_OK(set_async(d, pitch, value, width, rows, s));
    HIP_OK(hipStreamSynchronize(s));
  } else {
    HIP_OK(set(d, pitch, value, width, rows));
  }
  std::vector<uint8_t> back = ReadBack(d, pitch * rows);
  for (size_t y = 0; y < rows; ++y) {
    for (size_t i = 0; i < width; ++i) {
      T got;
      memcpy(&got, &back[y * pitch + i * sizeof(T)], sizeof got);
      CHECK(got == value, "%s: row %zu element %zu is %#llx", what, y, i, static_cast<unsigned long long>(got));
    }
    CHECK_BYTES_EQUAL(&back[y * pitch + width * sizeof(T)], pitch - width * sizeof(T), kUntouched, what);
  }
  // A row wider than the pitch: refused, hipErrorInvalidValue as clr.
  const hipError_t e = set_async != nullptr ? set_async(d, 4, value, width, rows, s) : set(d, 4, value, width, rows);
  CHECK(e == hipErrorInvalidValue, "%s with a short pitch: %s", what, hipGetErrorName(e));
  if (s != nullptr) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void MemsetD2D8() { CheckMemsetD2D<unsigned char>(hipMemsetD2D8, nullptr, 0x5b, "hipMemsetD2D8"); }
void MemsetD2D8Async() { CheckMemsetD2D<unsigned char>(nullptr, hipMemsetD2D8Async, 0x5c, "hipMemsetD2D8Async"); }
void MemsetD2D16() { CheckMemsetD2D<unsigned short>(hipMemsetD2D16, nullptr, 0x1234, "hipMemsetD2D16"); }
void MemsetD2D16Async() {
  CheckMemsetD2D<unsigned short>(nullptr, hipMemsetD2D16Async, 0x4321, "hipMemsetD2D16Async");
}
void MemsetD2D32() { CheckMemsetD2D<unsigned int>(hipMemsetD2D32, nullptr, 0x89abcdefu, "hipMemsetD2D32"); }
void MemsetD2D32Async() {
  CheckMemsetD2D<unsigned int>(nullptr, hipMemsetD2D32Async, 0x01020304u, "hipMemsetD2D32Async");
}

// The unaligned form of hipMemcpyParam2D: host rows into a pitched
// allocation at an odd offset and back.
void DrvMemcpy2DUnaligned() {
  TwoD t(233);
  hip_Memcpy2D up = Param2D(hipMemoryTypeHost, t.src.data(), kSrcPitch, hipMemoryTypeDevice, t.d, t.pitch, kW, kH);
  HIP_OK(hipDrvMemcpy2DUnaligned(&up));
  hip_Memcpy2D down = Param2D(hipMemoryTypeDevice, t.d, t.pitch, hipMemoryTypeHost, t.dst.data(), kDstPitch, kW, kH);
  HIP_OK(hipDrvMemcpy2DUnaligned(&down));
  t.Check("hipDrvMemcpy2DUnaligned");
  down.dstMemoryType = hipMemoryTypeArray;  // With no array named.
  HIP_EXPECT(hipDrvMemcpy2DUnaligned(&down), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvMemcpy2DUnaligned(nullptr), hipErrorInvalidValue);
}

// Captured, stream-ordered allocation and free become the graph's memory
// nodes: the memory is the graph's, at the address the capture returned,
// and every launch finds it. Freeing memory no graph allocated in a
// capture is refused and invalidates it; hipFree during a global capture
// is refused too (it synchronizes), while hipFreeAsync on another stream
// is not.
void CheckRefusedInCapture(const char* what, hipError_t (*call)(hipStream_t, void*), void* arg) {
  hipStream_t s = NewStream();
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_EXPECT(call(s, arg), hipErrorStreamCaptureUnsupported);
  hipGraph_t g = nullptr;
  HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
  CHECK(g == nullptr, "%s: an invalidated capture gave a graph", what);
  HIP_OK(hipStreamDestroy(s));
}

void StreamOrderedMemoryInCapture() {
  hipStream_t s = NewStream();
  void* out = DevAlloc(8192);
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 0));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  void* q = nullptr;
  void* r = nullptr;
  HIP_OK(hipMallocAsync(&q, 4096, s));
  HIP_OK(hipMallocFromPoolAsync(&r, 4096, pool, s));
  CHECK(q != nullptr && r != nullptr && q != r, "captured allocations gave %p and %p", q, r);
  HIP_OK(hipMemsetAsync(q, 0x3c, 4096, s));
  HIP_OK(hipMemsetAsync(r, 0x4d, 4096, s));
  HIP_OK(hipMemcpyAsync(out, q, 4096, hipMemcpyDeviceToDevice, s));
  HIP_OK(hipMemcpyAsync(static_cast<char*>(out) + 4096, r, 4096, hipMemcpyDeviceToDevice, s));
  HIP_OK(hipFreeAsync(q, s));
  HIP_OK(hipFreeAsync(r, s));
  hipGraph_t g = nullptr;
  HIP_OK(hipStreamEndCapture(s, &g));
  size_t count = 0;
  HIP_OK(hipGraphGetNodes(g, nullptr, &count));
  CHECK(count == 8, "the capture made %zu nodes, not 8", count);
  std::vector<hipGraphNode_t> nodes(count);
  HIP_OK(hipGraphGetNodes(g, nodes.data(), &count));
  int allocs = 0, frees = 0;
  for (hipGraphNode_t n : nodes) {
    hipGraphNodeType t = hipGraphNodeTypeCount;
    HIP_OK(hipGraphNodeGetType(n, &t));
    allocs += t == 10;  // 6.x's memory node numbers, for every caller.
    frees += t == 11;
  }
  CHECK(allocs == 2 && frees == 2, "%d allocation and %d free nodes", allocs, frees);
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  for (int launch = 0; launch < 2; ++launch) {
    HIP_OK(hipMemset(out, 0, 8192));
    HIP_OK(hipGraphLaunch(exec, s));
    HIP_OK(hipStreamSynchronize(s));
    std::vector<uint8_t> back(8192);
    HIP_OK(hipMemcpy(back.data(), out, back.size(), hipMemcpyDeviceToHost));
    CHECK_BYTES_EQUAL(back.data(), 4096, 0x3c, "launch through the captured allocation");
    CHECK_BYTES_EQUAL(back.data() + 4096, 4096, 0x4d, "launch through the captured pool allocation");
  }
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  hipPointerAttribute_t attr = {};
  HIP_EXPECT(hipPointerGetAttributes(&attr, q), hipErrorInvalidValue);  // Gone with its graphs.
  // Memory no graph allocated cannot be freed in a capture.
  void* p = DevAlloc(4096);
  CheckRefusedInCapture("hipFreeAsync", [](hipStream_t st, void* m) { return hipFreeAsync(m, st); }, p);
  // The refused free left the allocation; hipFree during a global capture
  // is refused too, and a free on another stream is allowed.
  hipStream_t other = NewStream();
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  void* plain = DevAlloc(4096);
  HIP_OK(hipFreeAsync(plain, other));
  HIP_EXPECT(hipFree(p), hipErrorStreamCaptureUnsupported);
  g = nullptr;
  HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
  HIP_OK(hipFree(p));
  HIP_OK(hipFree(out));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipStreamDestroy(other));
}

// A 40 x 5 x 3 volume on device 0 to one on device 1: the box at (3, 1, 1)
// of 5 x 2 x 2, byte-exact, the rest of the destination untouched.
void CheckMemcpy3DPeer(bool async) {
  const char* what = async ? "hipMemcpy3DPeerAsync" : "hipMemcpy3DPeer";
  hipPitchedPtr a{}, b{};
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipMalloc3D(&a, make_hipExtent(40, 5, 3)));
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipMalloc3D(&b, make_hipExtent(40, 5, 3)));
  HIP_OK(hipSetDevice(0));
  std::vector<uint8_t> src(a.pitch * 5 * 3);
  e2e::FillPattern(src.data(), src.size(), async ? 241 : 240);
  HIP_OK(hipMemcpy(a.ptr, src.data(), src.size(), hipMemcpyHostToDevice));
  HIP_OK(hipMemset(b.ptr, kUntouched, b.pitch * 5 * 3));
  HIP_OK(hipDeviceSynchronize());
  HiprMemcpy3DPeerParms p{};
  p.srcPtr = a;
  p.srcPos = make_hipPos(3, 1, 1);
  p.srcDevice = 0;
  p.dstPtr = b;
  p.dstPos = make_hipPos(3, 1, 1);
  p.dstDevice = 1;
  p.extent = make_hipExtent(5, 2, 2);
  hipStream_t s = async ? NewStream() : nullptr;
  HIP_OK(async ? hipMemcpy3DPeerAsync(&p, s) : hipMemcpy3DPeer(&p));
  if (async) HIP_OK(hipStreamSynchronize(s));
  std::vector<uint8_t> got = ReadBack(b.ptr, b.pitch * 5 * 3);
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 5; ++y)
      for (size_t x = 0; x < 40; ++x) {
        const bool in = x >= 3 && x < 8 && y >= 1 && y < 3 && z >= 1 && z < 3;
        const uint8_t want = in ? src[z * a.pitch * 5 + y * a.pitch + x] : kUntouched;
        CHECK(got[z * b.pitch * 5 + y * b.pitch + x] == want, "%s: (%zu,%zu,%zu)", what, x, y, z);
      }
  HiprMemcpy3DPeerParms bad = p;
  bad.srcDevice = 1;  // The source is device 0's.
  HIP_EXPECT(async ? hipMemcpy3DPeerAsync(&bad, s) : hipMemcpy3DPeer(&bad), hipErrorInvalidValue);
  bad = p;
  bad.dstDevice = 7;
  HIP_EXPECT(async ? hipMemcpy3DPeerAsync(&bad, s) : hipMemcpy3DPeer(&bad), hipErrorInvalidDevice);
  HIP_EXPECT(async ? hipMemcpy3DPeerAsync(nullptr, s) : hipMemcpy3DPeer(nullptr), hipErrorInvalidValue);
  if (async) HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(a.ptr));
  HIP_OK(hipFree(b.ptr));
}

void Memcpy3DPeer() { CheckMemcpy3DPeer(false); }
void Memcpy3DPeerAsync() { CheckMemcpy3DPeer(true); }

// Three copies in one call: host -> device, device -> device, device ->
// pinned host; then a batch whose second copy is refused names it.
void MemcpyBatchAsync() {
  const size_t n = 4096;
  std::vector<uint8_t> src(n);
  e2e::FillPattern(src.data(), n, 242);
  void* d1 = DevAlloc(n);
  void* d2 = DevAlloc(n);
  auto* out = static_cast<uint8_t*>(PinnedAlloc(n));
  memset(out, 0, n);
  hipStream_t s = NewStream();
  void* dsts[] = {d1, d2, out};
  void* srcs[] = {src.data(), d1, d2};
  size_t sizes[] = {n, n, n};
  HiprMemcpyAttributes attrs[1] = {};
  attrs[0].src_access_order = 1;  // hipMemcpySrcAccessOrderStream
  size_t first[] = {0};
  size_t fail = 77;
  HIP_OK(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, first, 1, &fail, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(memcmp(out, src.data(), n) == 0, "the batch's three copies did not carry the bytes through");
  CHECK(fail == SIZE_MAX, "a successful batch reported copy %zu as failed", fail);
  size_t too_big[] = {n, n + 1, n};
  HIP_EXPECT(hipMemcpyBatchAsync(dsts, srcs, too_big, 3, attrs, first, 1, &fail, s), hipErrorInvalidValue);
  CHECK(fail == 1, "the refused copy is reported as %zu", fail);
  size_t not_first[] = {1};
  HIP_EXPECT(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, not_first, 1, &fail, s), hipErrorInvalidValue);
  attrs[0].src_access_order = 0;  // Invalid.
  HIP_EXPECT(hipMemcpyBatchAsync(dsts, srcs, sizes, 3, attrs, first, 1, &fail, s), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d1));
  HIP_OK(hipFree(d2));
  HIP_OK(hipHostFree(out));
}

// ---- Virtual memory (api_vmm.cc) ---------------------------------------------

hipMemAllocationProp DeviceProp(int device) {
  hipMemAllocationProp prop = {};
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = device;
  return prop;
}

size_t Granularity() {
  hipMemAllocationProp prop = DeviceProp(0);
  size_t g = 0;
  HIP_OK(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum));
  return g;
}

hipMemGenericAllocationHandle_t NewPhysical(int device, size_t size) {
  hipMemAllocationProp prop = DeviceProp(device);
  hipMemGenericAllocationHandle_t h = nullptr;
  HIP_OK(hipMemCreate(&h, size, &prop, 0));
  return h;
}

void GrantAccess(void* p, size_t size, int device, hipMemAccessFlags flags) {
  hipMemAccessDesc d = {};
  d.location.type = hipMemLocationTypeDevice;
  d.location.id = device;
  d.flags = flags;
  HIP_OK(hipMemSetAccess(p, size, &d, 1));
}

// A reservation of `chunks` granules with physical memory of device 0
// mapped at each granule, read-write for device 0: an expandable segment.
struct Segment {
  explicit Segment(int chunks) : granule(Granularity()), size(granule * static_cast<size_t>(chunks)) {
    HIP_OK(hipMemAddressReserve(&base, size, 0, nullptr, 0));
    for (int i = 0; i < chunks; ++i) {
      handles.push_back(NewPhysical(0, granule));
      HIP_OK(hipMemMap(At(static_cast<size_t>(i) * granule), granule, 0, handles.back(), 0));
    }
    GrantAccess(base, size, 0, hipMemAccessFlagsProtReadWrite);
  }
  ~Segment() {
    HIP_OK(hipMemUnmap(base, size));
    for (hipMemGenericAllocationHandle_t h : handles) HIP_OK(hipMemRelease(h));
    HIP_OK(hipMemAddressFree(base, size));
  }
  char* At(size_t offset) const { return static_cast<char*>(base) + offset; }

  size_t granule;
  size_t size;
  void* base = nullptr;
  std::vector<hipMemGenericAllocationHandle_t> handles;
};

void MemGetAllocationGranularity() {
  hipMemAllocationProp prop = DeviceProp(1);
  size_t minimum = 0;
  size_t recommended = 0;
  HIP_OK(hipMemGetAllocationGranularity(&minimum, &prop, hipMemAllocationGranularityMinimum));
  HIP_OK(hipMemGetAllocationGranularity(&recommended, &prop, hipMemAllocationGranularityRecommended));
  CHECK(minimum == 4096, "the sim's granularity is its page, got %zu", minimum);
  CHECK(recommended == minimum, "recommended %zu differs from minimum %zu", recommended, minimum);
  size_t g = kSentinelSize;
  prop.location.id = 2;
  HIP_EXPECT(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  prop = DeviceProp(0);
  prop.type = hipMemAllocationTypeInvalid;
  HIP_EXPECT(hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  prop = DeviceProp(0);
  HIP_EXPECT(hipMemGetAllocationGranularity(&g, &prop, static_cast<hipMemAllocationGranularity_flags>(7)),
             hipErrorInvalidValue);
  HIP_EXPECT(hipMemGetAllocationGranularity(nullptr, &prop, hipMemAllocationGranularityMinimum), hipErrorInvalidValue);
  CHECK(g == kSentinelSize, "a refused call wrote %zu", g);
}

void MemAddressReserve() {
  const size_t g = Granularity();
  void* p = SentinelPtr();
  HIP_OK(hipMemAddressReserve(&p, 8 * g, 1u << 20, nullptr, 0));
  const bool aligned = (reinterpret_cast<uintptr_t>(p) & ((1u << 20) - 1)) == 0;
  CHECK(aligned, "%p is not aligned to 1 MiB", p);
  // Reserved, not mapped: no copy may reach it.
  std::vector<char> host(16, 1);
  HIP_EXPECT(hipMemcpy(p, host.data(), host.size(), hipMemcpyHostToDevice), hipErrorInvalidValue);
  HIP_OK(hipMemAddressFree(p, 8 * g));
  // The freed range is free again: asking for it gets it.
  void* again = nullptr;
  HIP_OK(hipMemAddressReserve(&again, 8 * g, 0, p, 0));
  CHECK(again == p, "the hint %p was free but the reservation got %p", p, again);
  HIP_OK(hipMemAddressFree(again, 8 * g));
  void* out = SentinelPtr();
  HIP_EXPECT(hipMemAddressReserve(&out, g + 1, 0, nullptr, 0), hipErrorMemoryAllocation);
  HIP_EXPECT(hipMemAddressReserve(&out, 0, 0, nullptr, 0), hipErrorMemoryAllocation);
  HIP_EXPECT(hipMemAddressReserve(&out, g, 3, nullptr, 0), hipErrorMemoryAllocation);
  HIP_EXPECT(hipMemAddressReserve(&out, g, 0, nullptr, 1), hipErrorInvalidValue);
  HIP_EXPECT(hipMemAddressReserve(nullptr, g, 0, nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemAddressReserve(&out, size_t{1} << 50, 0, nullptr, 0), hipErrorOutOfMemory);
}

void MemAddressFree() {
  const size_t g = Granularity();
  void* p = nullptr;
  HIP_OK(hipMemAddressReserve(&p, 4 * g, 0, nullptr, 0));
  hipMemGenericAllocationHandle_t h = NewPhysical(0, g);
  HIP_OK(hipMemMap(p, g, 0, h, 0));
  HIP_EXPECT(hipMemAddressFree(p, 4 * g), hipErrorInvalidValue);  // Still mapped.
  HIP_OK(hipMemUnmap(p, g));
  HIP_OK(hipMemRelease(h));
  HIP_EXPECT(hipMemAddressFree(p, 2 * g), hipErrorInvalidValue);  // Not the whole reservation.
  HIP_OK(hipMemAddressFree(p, 4 * g));
  HIP_EXPECT(hipMemAddressFree(p, 4 * g), hipErrorInvalidValue);  // Twice.
  HIP_EXPECT(hipMemAddressFree(nullptr, 4 * g), hipErrorInvalidValue);
  // A freed reservation takes no mapping.
  h = NewPhysical(0, g);
  HIP_EXPECT(hipMemMap(p, g, 0, h, 0), hipErrorInvalidValue);
  HIP_OK(hipMemRelease(h));
}

void MemCreate() {
  const size_t g = Granularity();
  size_t free_before = 0;
  size_t total = 0;
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipMemGetInfo(&free_before, &total));
  hipMemAllocationProp prop = DeviceProp(1);
  prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;  // What PyTorch asks for.
  hipMemGenericAllocationHandle_t h = nullptr;
  HIP_OK(hipMemCreate(&h, 256 * g, &prop, 0));
  size_t free_after = 0;
  HIP_OK(hipMemGetInfo(&free_after, &total));
  HIP_OK(hipSetDevice(0));
  CHECK(free_before - free_after == 256 * g, "device 1 lost %zu bytes for %zu of physical memory",
        free_before - free_after, 256 * g);
  hipMemAllocationProp back = {};
  HIP_OK(hipMemGetAllocationPropertiesFromHandle(&back, h));
  CHECK(back.location.id == 1 && back.requestedHandleType == hipMemHandleTypePosixFileDescriptor,
        "the handle's properties say device %d, handle type %d", back.location.id,
        static_cast<int>(back.requestedHandleType));
  HIP_OK(hipMemRelease(h));
  hipMemGenericAllocationHandle_t out = nullptr;
  HIP_EXPECT(hipMemCreate(&out, g + 1, &prop, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemCreate(&out, g, &prop, 1), hipErrorInvalidValue);
  HIP_EXPECT(hipMemCreate(&out, 0, &prop, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemCreate(&out, g, nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemCreate(&out, size_t{1} << 40, &prop, 0), hipErrorOutOfMemory);
  prop.location.id = 2;
  HIP_EXPECT(hipMemCreate(&out, g, &prop, 0), hipErrorInvalidValue);
  prop = DeviceProp(0);
  prop.requestedHandleType = hipMemHandleTypeWin32;
  HIP_EXPECT(hipMemCreate(&out, g, &prop, 0), hipErrorNotSupported);
  CHECK(out == nullptr, "a refused hipMemCreate wrote a handle");
}

void MemRelease() {
  const size_t g = Granularity();
  size_t free_before = 0;
  size_t free_after = 0;
  size_t total = 0;
  HIP_OK(hipMemGetInfo(&free_before, &total));
  hipMemGenericAllocationHandle_t h = NewPhysical(0, 16 * g);
  HIP_OK(hipMemRelease(h));
  HIP_OK(hipMemGetInfo(&free_after, &total));
  CHECK(free_after == free_before, "released physical memory still counts: %zu free, was %zu", free_after,
        free_before);
  hipMemAllocationProp prop = {};
  HIP_EXPECT(hipMemGetAllocationPropertiesFromHandle(&prop, h), hipErrorInvalidValue);
  HIP_EXPECT(hipMemRelease(h), hipErrorInvalidValue);  // Twice.
  HIP_EXPECT(hipMemRelease(nullptr), hipErrorInvalidValue);
  // Released while mapped: the memory lives until the unmap.
  Segment seg(1);
  HIP_OK(hipMemRelease(seg.handles[0]));
  const int v = 1234;
  HIP_OK(hipMemcpy(seg.base, &v, sizeof v, hipMemcpyHostToDevice));
  int r = 0;
  HIP_OK(hipMemcpy(&r, seg.base, sizeof r, hipMemcpyDeviceToHost));
  CHECK(r == v, "mapped memory read %d after its handle was released", r);
  hipMemGenericAllocationHandle_t again = nullptr;
  HIP_OK(hipMemRetainAllocationHandle(&again, seg.base));  // Segment's destructor releases it.
}

void MemGetAllocationPropertiesFromHandle() {
  const size_t g = Granularity();
  hipMemGenericAllocationHandle_t h = NewPhysical(1, g);
  hipMemAllocationProp prop = {};
  prop.location.id = 9;
  HIP_OK(hipMemGetAllocationPropertiesFromHandle(&prop, h));
  CHECK(prop.type == hipMemAllocationTypePinned && prop.location.type == hipMemLocationTypeDevice &&
            prop.location.id == 1 && prop.requestedHandleType == hipMemHandleTypeNone,
        "properties: type %d, location %d/%d, handle type %d", static_cast<int>(prop.type),
        static_cast<int>(prop.location.type), prop.location.id, static_cast<int>(prop.requestedHandleType));
  HIP_EXPECT(hipMemGetAllocationPropertiesFromHandle(nullptr, h), hipErrorInvalidValue);
  HIP_EXPECT(hipMemGetAllocationPropertiesFromHandle(&prop, reinterpret_cast<hipMemGenericAllocationHandle_t>(&prop)),
             hipErrorInvalidValue);
  HIP_OK(hipMemRelease(h));
}

void MemRetainAllocationHandle() {
  Segment seg(2);
  hipMemGenericAllocationHandle_t h = nullptr;
  HIP_OK(hipMemRetainAllocationHandle(&h, seg.At(seg.granule + 100)));
  CHECK(h == seg.handles[1], "retained %p from the second mapping, which maps %p", static_cast<void*>(h),
        static_cast<void*>(seg.handles[1]));
  HIP_OK(hipMemRelease(h));  // The retained reference; the segment's own stays.
  hipMemAllocationProp prop = {};
  HIP_OK(hipMemGetAllocationPropertiesFromHandle(&prop, seg.handles[1]));
  void* plain = DevAlloc(64);
  HIP_EXPECT(hipMemRetainAllocationHandle(&h, plain), hipErrorInvalidValue);  // hipMalloc'd, not mapped.
  HIP_EXPECT(hipMemRetainAllocationHandle(nullptr, seg.base), hipErrorInvalidValue);
  HIP_OK(hipFree(plain));
}

void MemMap() {
  // Three mappings of physical memory side by side: a copy and a kernel run
  // across all of them, as over one allocation.
  Segment seg(3);
  const size_t n = seg.size / sizeof(int);
  std::vector<int> host(n);
  for (size_t i = 0; i < n; ++i) host[i] = static_cast<int>(i * 7);
  HIP_OK(hipMemcpy(seg.base, host.data(), seg.size, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(AddOne, dim3(static_cast<unsigned>((n + 255) / 256)), dim3(256), 0, nullptr,
                     static_cast<int*>(seg.base), static_cast<int>(n));
  HIP_OK(hipGetLastError());
  std::vector<int> back(n);
  HIP_OK(hipMemcpy(back.data(), seg.base, seg.size, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i) CHECK(back[i] == host[i] + 1, "int %zu reads %d, not %d", i, back[i], host[i] + 1);
  // A device-to-device copy from the seam between mappings into a hipMalloc.
  void* d = DevAlloc(64);
  HIP_OK(hipMemcpy(d, seg.At(seg.granule - 32), 64, hipMemcpyDeviceToDevice));
  int seam[16];
  HIP_OK(hipMemcpy(seam, d, sizeof seam, hipMemcpyDeviceToHost));
  CHECK(seam[8] == back[seg.granule / sizeof(int)], "the seam copy read %d", seam[8]);
  HIP_OK(hipFree(d));
  hipPointerAttribute_t attr = {};
  HIP_OK(hipPointerGetAttributes(&attr, seg.At(seg.granule)));
  CHECK(attr.memoryType == hipMemoryTypeDevice && attr.device == 0, "a mapping's attributes: type %d, device %d",
        static_cast<int>(attr.memoryType), attr.device);
  HIP_EXPECT(hipFree(seg.base), hipErrorInvalidValue);  // Unmapped, never freed.
  // Bad mappings.
  hipMemGenericAllocationHandle_t h = NewPhysical(0, seg.granule);
  HIP_EXPECT(hipMemMap(seg.base, seg.granule, 0, h, 0), hipErrorInvalidValue);  // Mapped already.
  void* r = nullptr;
  HIP_OK(hipMemAddressReserve(&r, 2 * seg.granule, 0, nullptr, 0));
  HIP_EXPECT(hipMemMap(r, seg.granule, seg.granule, h, 0), hipErrorInvalidValue);  // Offset.
  HIP_EXPECT(hipMemMap(r, 2 * seg.granule, 0, h, 0), hipErrorInvalidValue);        // Larger than h.
  HIP_EXPECT(hipMemMap(r, seg.granule, 0, h, 1), hipErrorInvalidValue);            // Flags.
  HIP_EXPECT(hipMemMap(static_cast<char*>(r) + 2 * seg.granule, seg.granule, 0, h, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemMap(r, seg.granule, 0, nullptr, 0), hipErrorInvalidValue);
  HIP_OK(hipMemRelease(h));
  HIP_OK(hipMemAddressFree(r, 2 * seg.granule));
}

void MemUnmap() {
  const size_t g = Granularity();
  void* r = nullptr;
  HIP_OK(hipMemAddressReserve(&r, 2 * g, 0, nullptr, 0));
  hipMemGenericAllocationHandle_t h = NewPhysical(0, g);
  HIP_OK(hipMemMap(r, g, 0, h, 0));
  GrantAccess(r, g, 0, hipMemAccessFlagsProtReadWrite);
  const int v = 4242;
  HIP_OK(hipMemcpy(r, &v, sizeof v, hipMemcpyHostToDevice));
  HIP_EXPECT(hipMemUnmap(r, g / 2), hipErrorInvalidValue);  // Part of a mapping.
  HIP_EXPECT(hipMemUnmap(r, 2 * g), hipErrorInvalidValue);  // Past it.
  HIP_OK(hipMemUnmap(r, g));
  int out = 0;
  HIP_EXPECT(hipMemcpy(&out, r, sizeof out, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  HIP_EXPECT(hipMemUnmap(r, g), hipErrorInvalidValue);  // Twice.
  // The physical memory kept its bytes: mapped again elsewhere, it reads them.
  char* other = static_cast<char*>(r) + g;
  HIP_OK(hipMemMap(other, g, 0, h, 0));
  GrantAccess(other, g, 0, hipMemAccessFlagsProtRead);
  HIP_OK(hipMemcpy(&out, other, sizeof out, hipMemcpyDeviceToHost));
  CHECK(out == v, "remapped physical memory reads %d, not %d", out, v);
  HIP_OK(hipMemUnmap(other, g));
  // An unmap waits for the work queued before it: a kernel held behind a
  // host callback still writes the memory (seen through a second mapping
  // of it), and the unmap returns only after that.
  HIP_OK(hipMemMap(r, g, 0, h, 0));
  HIP_OK(hipMemMap(other, g, 0, h, 0));
  GrantAccess(r, 2 * g, 0, hipMemAccessFlagsProtReadWrite);
  HIP_OK(hipMemset(r, 0, 256));
  hipStream_t s = nullptr;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  std::atomic<bool> gate{false};
  HIP_OK(hipStreamAddCallback(
      s,
      [](hipStream_t, hipError_t, void* flag) {
        while (!static_cast<std::atomic<bool>*>(flag)->load()) usleep(1000);
      },
      &gate, 0));
  hipLaunchKernelGGL(AddOne, dim3(1), dim3(64), 0, s, static_cast<int*>(r), 64);
  HIP_OK(hipGetLastError());
  std::atomic<bool> returned{false};
  hipError_t unmap_result = hipErrorUnknown;
  std::thread unmapper([&] {
    unmap_result = hipMemUnmap(r, g);
    returned = true;
  });
  usleep(100 * 1000);
  const bool early = returned.load();
  gate = true;
  unmapper.join();
  CHECK(!early, "hipMemUnmap returned while a kernel queued before it was still held");
  CHECK(unmap_result == hipSuccess, "the waiting unmap returned %d", static_cast<int>(unmap_result));
  int ran[64];
  HIP_OK(hipMemcpy(ran, other, sizeof ran, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i) CHECK(ran[i] == 1, "int %d reads %d: the held kernel did not run before the unmap", i, ran[i]);
  // A copy from pageable memory queued on a blocking stream held at a host
  // callback lands before the unmap too (the null stream waits for blocking
  // streams). hipr's hip device holds the stream there with the copy's
  // bytes and writes them from a side stream once the callback has run.
  hipStream_t blocking = nullptr;
  HIP_OK(hipStreamCreate(&blocking));
  HIP_OK(hipMemMap(r, g, 0, h, 0));
  GrantAccess(r, g, 0, hipMemAccessFlagsProtReadWrite);
  std::atomic<bool> gate2{false};
  HIP_OK(hipStreamAddCallback(
      blocking,
      [](hipStream_t, hipError_t, void* flag) {
        while (!static_cast<std::atomic<bool>*>(flag)->load()) usleep(1000);
      },
      &gate2, 0));
  std::thread opener([&] {
    usleep(200 * 1000);
    gate2 = true;
  });
  std::vector<int> fresh(64, 77);
  HIP_OK(hipMemcpyAsync(r, fresh.data(), fresh.size() * sizeof(int), hipMemcpyHostToDevice, blocking));
  HIP_OK(hipMemUnmap(r, g));
  opener.join();
  HIP_OK(hipStreamSynchronize(blocking));
  HIP_OK(hipMemcpy(ran, other, sizeof ran, hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i)
    CHECK(ran[i] == 77, "int %d reads %d: the held copy did not land before the unmap", i, ran[i]);
  HIP_OK(hipStreamDestroy(blocking));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipMemUnmap(other, g));
  HIP_OK(hipMemRelease(h));
  HIP_OK(hipMemAddressFree(r, 2 * g));
}

void MemSetAccess() {
  const size_t g = Granularity();
  void* r = nullptr;
  HIP_OK(hipMemAddressReserve(&r, 2 * g, 0, nullptr, 0));
  hipMemGenericAllocationHandle_t a = NewPhysical(0, g);
  hipMemGenericAllocationHandle_t b = NewPhysical(0, g);
  HIP_OK(hipMemMap(r, g, 0, a, 0));
  HIP_OK(hipMemMap(static_cast<char*>(r) + g, g, 0, b, 0));
  const int v = 7;
  HIP_EXPECT(hipMemcpy(r, &v, sizeof v, hipMemcpyHostToDevice), hipErrorInvalidValue);  // No access yet.
  GrantAccess(r, 2 * g, 0, hipMemAccessFlagsProtRead);  // Both mappings at once.
  int out = -1;
  HIP_OK(hipMemcpy(&out, static_cast<char*>(r) + g, sizeof out, hipMemcpyDeviceToHost));
  CHECK(out == 0, "fresh physical memory reads %d", out);
  HIP_EXPECT(hipMemcpy(r, &v, sizeof v, hipMemcpyHostToDevice), hipErrorInvalidValue);  // Read-only.
  GrantAccess(r, 2 * g, 0, hipMemAccessFlagsProtReadWrite);
  HIP_OK(hipMemcpy(r, &v, sizeof v, hipMemcpyHostToDevice));
  hipMemAccessDesc d = {};
  d.location.type = hipMemLocationTypeDevice;
  d.location.id = 0;
  d.flags = hipMemAccessFlagsProtReadWrite;
  HIP_EXPECT(hipMemSetAccess(r, g / 2, &d, 1), hipErrorInvalidValue);  // Part of a mapping.
  HIP_EXPECT(hipMemSetAccess(r, 2 * g, &d, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemSetAccess(r, 2 * g, nullptr, 1), hipErrorInvalidValue);
  d.location.id = 2;
  HIP_EXPECT(hipMemSetAccess(r, 2 * g, &d, 1), hipErrorInvalidValue);
  d.location.id = 0;
  d.flags = static_cast<hipMemAccessFlags>(2);
  HIP_EXPECT(hipMemSetAccess(r, 2 * g, &d, 1), hipErrorInvalidValue);
  // ROCm 7.1's host location: host access to device-located memory is
  // refused, as clr refuses it; the device's access is left as it was.
  d.location.type = static_cast<hipMemLocationType>(2);  // hipMemLocationTypeHost.
  d.flags = hipMemAccessFlagsProtReadWrite;
  HIP_EXPECT(hipMemSetAccess(r, 2 * g, &d, 1), hipErrorInvalidValue);
  HIP_OK(hipMemcpy(r, &v, sizeof v, hipMemcpyHostToDevice));
  HIP_OK(hipMemUnmap(r, 2 * g));
  HIP_OK(hipMemRelease(a));
  HIP_OK(hipMemRelease(b));
  HIP_OK(hipMemAddressFree(r, 2 * g));
}

void MemGetAccess() {
  Segment seg(2);
  hipMemLocation loc = {};
  loc.type = hipMemLocationTypeDevice;
  loc.id = 0;
  unsigned long long flags = 99;
  HIP_OK(hipMemGetAccess(&flags, &loc, seg.At(seg.granule + 8)));
  CHECK(flags == hipMemAccessFlagsProtReadWrite, "device 0's access reads %llu", flags);
  loc.id = 1;
  HIP_OK(hipMemGetAccess(&flags, &loc, seg.base));
  CHECK(flags == hipMemAccessFlagsProtNone, "device 1 was given no access, yet it reads %llu", flags);
  GrantAccess(seg.At(seg.granule), seg.granule, 1, hipMemAccessFlagsProtRead);
  HIP_OK(hipMemGetAccess(&flags, &loc, seg.At(seg.granule)));
  CHECK(flags == hipMemAccessFlagsProtRead, "device 1's access to the second mapping reads %llu", flags);
  HIP_OK(hipMemGetAccess(&flags, &loc, seg.base));
  CHECK(flags == hipMemAccessFlagsProtNone, "the first mapping's access for device 1 changed to %llu", flags);
  void* plain = DevAlloc(64);
  HIP_EXPECT(hipMemGetAccess(&flags, &loc, plain), hipErrorInvalidValue);
  loc.id = 2;
  HIP_EXPECT(hipMemGetAccess(&flags, &loc, seg.base), hipErrorInvalidValue);
  HIP_EXPECT(hipMemGetAccess(nullptr, &loc, seg.base), hipErrorInvalidValue);
  HIP_OK(hipFree(plain));
}

// Physical memory made with a descriptor as its shareable handle type.
hipMemGenericAllocationHandle_t NewShareable(size_t size) {
  hipMemAllocationProp prop = DeviceProp(0);
  prop.requestedHandleType = hipMemHandleTypePosixFileDescriptor;
  hipMemGenericAllocationHandle_t h = nullptr;
  HIP_OK(hipMemCreate(&h, size, &prop, 0));
  return h;
}

void* MapReadWrite(hipMemGenericAllocationHandle_t h, size_t size) {
  void* va = nullptr;
  HIP_OK(hipMemAddressReserve(&va, size, 0, nullptr, 0));
  HIP_OK(hipMemMap(va, size, 0, h, 0));
  GrantAccess(va, size, 0, hipMemAccessFlagsProtReadWrite);
  return va;
}

void Unmapped(void* va, size_t size, hipMemGenericAllocationHandle_t h) {
  HIP_OK(hipMemUnmap(va, size));
  HIP_OK(hipMemRelease(h));
  HIP_OK(hipMemAddressFree(va, size));
}

void MemExportToShareableHandle() {
  const size_t g = Granularity();
  hipMemGenericAllocationHandle_t h = NewShareable(g);
  int fd = -1;
  HIP_OK(hipMemExportToShareableHandle(&fd, h, hipMemHandleTypePosixFileDescriptor, 0));
  CHECK(fd >= 0 && fcntl(fd, F_GETFD) >= 0, "the export gave %d, not an open descriptor", fd);
  close(fd);
  int out = -1;
  HIP_EXPECT(hipMemExportToShareableHandle(&out, h, hipMemHandleTypeNone, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemExportToShareableHandle(&out, h, hipMemHandleTypePosixFileDescriptor, 1), hipErrorInvalidValue);
  HIP_EXPECT(hipMemExportToShareableHandle(nullptr, h, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  hipMemGenericAllocationHandle_t plain = NewPhysical(0, g);  // No shareable type asked for.
  HIP_EXPECT(hipMemExportToShareableHandle(&out, plain, hipMemHandleTypePosixFileDescriptor, 0),
             hipErrorInvalidValue);
  HIP_OK(hipMemRelease(plain));
  HIP_OK(hipMemRelease(h));
  HIP_EXPECT(hipMemExportToShareableHandle(&out, h, hipMemHandleTypePosixFileDescriptor, 0), hipErrorInvalidValue);
  CHECK(out == -1, "a refused export wrote %d", out);
}

void MemImportFromShareableHandle() {
  // Imported in the same process, the memory is the same: a write through
  // one mapping reads back through the other.
  const size_t g = Granularity();
  hipMemGenericAllocationHandle_t h = NewShareable(2 * g);
  int fd = -1;
  HIP_OK(hipMemExportToShareableHandle(&fd, h, hipMemHandleTypePosixFileDescriptor, 0));
  hipMemGenericAllocationHandle_t imported = nullptr;
  HIP_OK(hipMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                         hipMemHandleTypePosixFileDescriptor));
  CHECK(imported != nullptr && imported != h, "the import gave %p for %p", static_cast<void*>(imported),
        static_cast<void*>(h));
  hipMemAllocationProp prop = {};
  HIP_OK(hipMemGetAllocationPropertiesFromHandle(&prop, imported));
  CHECK(prop.location.id == 0 && prop.requestedHandleType == hipMemHandleTypePosixFileDescriptor,
        "imported properties: device %d, type %d", prop.location.id, static_cast<int>(prop.requestedHandleType));
  // The form ROCm before 7.1 took (and callers built for it pass): a
  // pointer to the descriptor. The same memory.
  hipMemGenericAllocationHandle_t by_pointer = nullptr;
  HIP_OK(hipMemImportFromShareableHandle(&by_pointer, &fd, hipMemHandleTypePosixFileDescriptor));
  CHECK(by_pointer != nullptr && by_pointer != h, "the import through &fd gave %p", static_cast<void*>(by_pointer));
  void* a = MapReadWrite(h, 2 * g);
  void* b = MapReadWrite(imported, 2 * g);
  void* c = MapReadWrite(by_pointer, 2 * g);
  const char text[] = "one memory, two handles";
  HIP_OK(hipMemcpy(static_cast<char*>(a) + g - 4, text, sizeof text, hipMemcpyHostToDevice));
  char back[sizeof text] = {};
  HIP_OK(hipMemcpy(back, static_cast<char*>(b) + g - 4, sizeof back, hipMemcpyDeviceToHost));
  CHECK(memcmp(back, text, sizeof text) == 0, "the imported mapping reads \"%s\"", back);
  memset(back, 0, sizeof back);
  HIP_OK(hipMemcpy(back, static_cast<char*>(c) + g - 4, sizeof back, hipMemcpyDeviceToHost));
  CHECK(memcmp(back, text, sizeof text) == 0, "the mapping imported through &fd reads \"%s\"", back);
  Unmapped(c, 2 * g, by_pointer);
  // The exporter lets go; the import still holds the memory.
  Unmapped(a, 2 * g, h);
  memset(back, 0, sizeof back);
  HIP_OK(hipMemcpy(back, static_cast<char*>(b) + g - 4, sizeof back, hipMemcpyDeviceToHost));
  CHECK(memcmp(back, text, sizeof text) == 0, "after the exporter released it, the import reads \"%s\"", back);
  Unmapped(b, 2 * g, imported);
  // Gone everywhere now: the descriptor names nothing.
  hipMemGenericAllocationHandle_t out = nullptr;
  HIP_EXPECT(hipMemImportFromShareableHandle(&out, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                             hipMemHandleTypePosixFileDescriptor),
             hipErrorInvalidValue);
  close(fd);
  HIP_EXPECT(hipMemImportFromShareableHandle(&out, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
                                             hipMemHandleTypePosixFileDescriptor),
             hipErrorInvalidValue);  // Closed.
  HIP_EXPECT(hipMemImportFromShareableHandle(&out, nullptr, hipMemHandleTypePosixFileDescriptor),
             hipErrorInvalidValue);
  HIP_EXPECT(hipMemImportFromShareableHandle(nullptr, reinterpret_cast<void*>(intptr_t{1}),
                                             hipMemHandleTypePosixFileDescriptor),
             hipErrorInvalidValue);
  CHECK(out == nullptr, "a refused import wrote a handle");
}

// ---- Managed memory ----------------------------------------------------------------
// hipr's managed memory is device memory mirrored at the same address in
// this process, coherent where HIP makes writes visible (client_stub/
// managed_vars.h): host code uses it while no device work that uses it runs.

int* ManagedInts(size_t n) {
  int* m = nullptr;
  HIP_OK(hipMallocManaged(reinterpret_cast<void**>(&m), n * sizeof(int), hipMemAttachGlobal));
  return m;
}

void AddOneTo(int* p, int n, hipStream_t stream = nullptr) {
  hipLaunchKernelGGL(AddOne, dim3((n + 255) / 256), dim3(256), 0, stream, p, n);
  HIP_OK(hipGetLastError());
}

// hipMemRangeGetAttribute's int answer.
int RangeInt(hipMemRangeAttribute attribute, const void* p, size_t n) {
  int v = 12345;
  HIP_OK(hipMemRangeGetAttribute(&v, sizeof v, attribute, p, n));
  return v;
}

void MallocManaged() {
  int value = -1;
  HIP_OK(hipDeviceGetAttribute(&value, hipDeviceAttributeManagedMemory, 0));
  CHECK(value == 1, "managed memory attribute %d", value);
  HIP_OK(hipDeviceGetAttribute(&value, hipDeviceAttributeConcurrentManagedAccess, 0));
  CHECK(value == 0, "concurrent managed access %d: hipr's host must not use managed memory while work runs", value);
  const int n = 1000;
  int* m = ManagedInts(n);
  // Zero on both sides; host writes in place reach the kernel, the kernel's
  // writes reach the host at the synchronisation.
  for (int i = 0; i < n; ++i) CHECK(m[i] == 0, "fresh managed memory holds %d at %d", m[i], i);
  for (int i = 0; i < n; ++i) m[i] = i;
  AddOneTo(m, n);
  HIP_OK(hipDeviceSynchronize());
  for (int i = 0; i < n; ++i) CHECK(m[i] == i + 1, "after a kernel: m[%d] = %d", i, m[i]);
  m[0] = 100;  // One host change between launches, kept with the kernel's.
  AddOneTo(m, n);
  HIP_OK(hipDeviceSynchronize());
  CHECK(m[0] == 101 && m[5] == 7 && m[n - 1] == n + 1, "second launch: %d %d %d", m[0], m[5], m[n - 1]);
  // On a stream: its synchronisation brings the results.
  hipStream_t s = NewStream();
  AddOneTo(m, n, s);
  HIP_OK(hipStreamSynchronize(s));
  CHECK(m[5] == 8, "after a stream's kernel: m[5] = %d", m[5]);
  // Copies: a blocking copy into managed memory is visible when it returns;
  // a copy out of it sees the host's writes.
  std::vector<int> host(n, 7);
  HIP_OK(hipMemcpy(m, host.data(), n * sizeof(int), hipMemcpyHostToDevice));
  CHECK(m[3] == 7, "after hipMemcpy into managed memory: %d", m[3]);
  m[4] = 42;
  std::vector<int> back(n, 0);
  HIP_OK(hipMemcpy(back.data(), m, n * sizeof(int), hipMemcpyDefault));
  CHECK(back[4] == 42 && back[3] == 7, "copied out of managed memory: %d %d", back[4], back[3]);
  int* d = static_cast<int*>(DevAlloc(n * sizeof(int)));
  m[1] = 55;
  HIP_OK(hipMemcpy(d, m, n * sizeof(int), hipMemcpyDeviceToDevice));
  std::vector<uint8_t> raw = ReadBack(d, 2 * sizeof(int));
  int second = 0;
  std::memcpy(&second, raw.data() + sizeof(int), sizeof second);
  CHECK(second == 55, "device copy of managed memory: %d", second);
  HIP_OK(hipFree(d));
  HIP_OK(hipMemsetAsync(m, 0, n * sizeof(int), s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(m[1] == 0 && m[n - 1] == 0, "after a memset: %d %d", m[1], m[n - 1]);
  // Pointer attributes: managed, the same address on both sides.
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, m + 10));
  CHECK(a.isManaged == 1 && a.devicePointer == m + 10 && a.hostPointer == m + 10 && a.device == 0,
        "attributes: managed %d, device %d", a.isManaged, a.device);
  HIP_OK(hipStreamDestroy(s));
  // hipFree gives the address back: it is no longer managed memory.
  void* freed = m;
  CHECK(e2e::MappingPerms(m) == "rw-p", "managed memory's host pages are %s", e2e::MappingPerms(m).c_str());
  HIP_OK(hipFree(m));
  HIP_EXPECT(hipMemAdvise(freed, 4, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);
  // Its host pages are reserved again, with no access, inside a sim's
  // address window; a hip device has none, and the range goes back.
  const std::string freed_perms = e2e::OnHipDevice() ? "none" : "---p";
  CHECK(e2e::MappingPerms(freed) == freed_perms, "freed managed pages are %s", e2e::MappingPerms(freed).c_str());
  // On device 1: its kernels and its synchronisation.
  HIP_OK(hipSetDevice(1));
  int* m1 = ManagedInts(64);
  m1[63] = 9;
  AddOneTo(m1, 64);
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipPointerGetAttributes(&a, m1));
  CHECK(m1[0] == 1 && m1[63] == 10 && a.device == 1, "device 1: %d %d on device %d", m1[0], m1[63], a.device);
  HIP_OK(hipFree(m1));
  HIP_OK(hipSetDevice(0));
  void* p = SentinelPtr();
  HIP_EXPECT(hipMallocManaged(&p, 0, hipMemAttachGlobal), hipErrorInvalidValue);
  HIP_EXPECT(hipMallocManaged(&p, 64, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMallocManaged(nullptr, 64, hipMemAttachGlobal), hipErrorInvalidValue);
  CHECK(p == SentinelPtr(), "a refused allocation wrote %p", p);
}

void MemPrefetchAsync() {
  int* m = ManagedInts(256);
  for (int i = 0; i < 256; ++i) m[i] = 2 * i;
  hipStream_t s = NewStream();
  HIP_OK(hipMemPrefetchAsync(m, 256 * sizeof(int), 0, s));
  CHECK(RangeInt(hipMemRangeAttributeLastPrefetchLocation, m, 4) == 0, "last prefetch not device 0");
  AddOneTo(m, 256, s);
  HIP_OK(hipMemPrefetchAsync(m, 256 * sizeof(int), hipCpuDeviceId, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(m[10] == 21 && RangeInt(hipMemRangeAttributeLastPrefetchLocation, m, 4) == hipCpuDeviceId,
        "after prefetching back: %d", m[10]);
  HIP_EXPECT(hipMemPrefetchAsync(m, 256 * sizeof(int), 9, s), hipErrorInvalidDevice);
  HIP_EXPECT(hipMemPrefetchAsync(m, 257 * sizeof(int), 0, s), hipErrorInvalidValue);  // Past the allocation.
  HIP_EXPECT(hipMemPrefetchAsync(m, 0, 0, s), hipErrorInvalidValue);
  int* d = static_cast<int*>(DevAlloc(64));
  HIP_EXPECT(hipMemPrefetchAsync(d, 64, 0, s), hipErrorInvalidValue);  // Not managed memory.
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipMemPrefetchAsync(m, 64, 0, s), hipErrorContextIsDestroyed);  // As clr: no such stream.
  HIP_OK(hipFree(m));
}

void MemPrefetchAsync_v2() {
  int* m = ManagedInts(64);
  hipMemLocation device1{hipMemLocationTypeDevice, 1};
  HIP_OK(hipMemPrefetchAsync_v2(m, 64 * sizeof(int), device1, 0, nullptr));
  CHECK(RangeInt(hipMemRangeAttributeLastPrefetchLocation, m, 4) == 1, "last prefetch not device 1");
  hipMemLocation host{static_cast<hipMemLocationType>(2), 0};  // hipMemLocationTypeHost (7.x).
  HIP_OK(hipMemPrefetchAsync_v2(m, 64 * sizeof(int), host, 0, nullptr));
  CHECK(RangeInt(hipMemRangeAttributeLastPrefetchLocation, m, 4) == hipCpuDeviceId, "last prefetch not the host");
  HIP_EXPECT(hipMemPrefetchAsync_v2(m, 64 * sizeof(int), device1, 1, nullptr), hipErrorInvalidValue);  // Flags.
  hipMemLocation invalid{static_cast<hipMemLocationType>(0), 0};
  HIP_EXPECT(hipMemPrefetchAsync_v2(m, 64 * sizeof(int), invalid, 0, nullptr), hipErrorInvalidValue);
  HIP_OK(hipFree(m));
}

void MemAdvise() {
  int* m = ManagedInts(1024);
  HIP_OK(hipMemAdvise(m, 4096, hipMemAdviseSetReadMostly, 0));
  CHECK(RangeInt(hipMemRangeAttributeReadMostly, m, 4096) == 1, "read mostly not set");
  HIP_OK(hipMemAdvise(m, 4096, hipMemAdviseUnsetReadMostly, 0));
  CHECK(RangeInt(hipMemRangeAttributeReadMostly, m, 4096) == 0, "read mostly not unset");
  HIP_OK(hipMemAdvise(m + 8, 64, hipMemAdviseSetPreferredLocation, 1));
  CHECK(RangeInt(hipMemRangeAttributePreferredLocation, m, 4) == 1, "preferred location not device 1");
  HIP_OK(hipMemAdvise(m, 4, hipMemAdviseSetAccessedBy, 0));
  HIP_OK(hipMemAdvise(m, 4, hipMemAdviseSetAccessedBy, 1));
  HIP_OK(hipMemAdvise(m, 4, hipMemAdviseUnsetAccessedBy, 0));
  int by[3] = {7, 7, 7};
  HIP_OK(hipMemRangeGetAttribute(by, sizeof by, hipMemRangeAttributeAccessedBy, m, 4));
  CHECK(by[0] == 1 && by[1] == hipInvalidDeviceId && by[2] == hipInvalidDeviceId, "accessed by %d %d %d", by[0],
        by[1], by[2]);
  HIP_OK(hipMemAdvise(m, 4, hipMemAdviseSetCoarseGrain, 0));
  CHECK(RangeInt(hipMemRangeAttributeCoherencyMode, m, 4) == hipMemRangeCoherencyModeCoarseGrain, "not coarse");
  // Advice changes nothing the program sees: the data still works.
  m[3] = 5;
  AddOneTo(m, 1024);
  HIP_OK(hipDeviceSynchronize());
  CHECK(m[3] == 6, "after advice and a kernel: %d", m[3]);
  HIP_EXPECT(hipMemAdvise(m, 4, static_cast<hipMemoryAdvise>(77), 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemAdvise(m, 4, hipMemAdviseSetPreferredLocation, 9), hipErrorInvalidDevice);
  HIP_EXPECT(hipMemAdvise(m, 8192, hipMemAdviseSetReadMostly, 0), hipErrorInvalidValue);  // Past the allocation.
  HIP_OK(hipFree(m));
}

void MemAdvise_v2() {
  int* m = ManagedInts(64);
  HIP_OK(hipMemAdvise_v2(m, 64, hipMemAdviseSetPreferredLocation, hipMemLocation{hipMemLocationTypeDevice, 1}));
  CHECK(RangeInt(hipMemRangeAttributePreferredLocation, m, 4) == 1, "preferred location not device 1");
  HIP_OK(hipMemAdvise_v2(m, 64, hipMemAdviseSetPreferredLocation,
                         hipMemLocation{static_cast<hipMemLocationType>(2), 0}));  // The host.
  CHECK(RangeInt(hipMemRangeAttributePreferredLocation, m, 4) == hipCpuDeviceId, "preferred location not the host");
  HIP_EXPECT(hipMemAdvise_v2(m, 64, hipMemAdviseSetPreferredLocation,
                             hipMemLocation{static_cast<hipMemLocationType>(0), 0}),
             hipErrorInvalidValue);
  HIP_OK(hipFree(m));
}

void MemRangeGetAttribute() {
  int* m = ManagedInts(64);
  // Nothing advised yet.
  CHECK(RangeInt(hipMemRangeAttributeReadMostly, m, 256) == 0, "read mostly");
  CHECK(RangeInt(hipMemRangeAttributePreferredLocation, m, 256) == hipInvalidDeviceId, "preferred location");
  CHECK(RangeInt(hipMemRangeAttributeLastPrefetchLocation, m, 256) == hipInvalidDeviceId, "last prefetch");
  CHECK(RangeInt(hipMemRangeAttributeCoherencyMode, m, 256) == hipMemRangeCoherencyModeFineGrain, "coherency");
  int v = 0;
  char small[2];
  HIP_EXPECT(hipMemRangeGetAttribute(small, sizeof small, hipMemRangeAttributeReadMostly, m, 4), hipErrorInvalidValue);
  HIP_EXPECT(hipMemRangeGetAttribute(&v, sizeof v, static_cast<hipMemRangeAttribute>(9), m, 4), hipErrorInvalidValue);
  HIP_EXPECT(hipMemRangeGetAttribute(&v, sizeof v, hipMemRangeAttributeReadMostly, m, 257), hipErrorInvalidValue);
  // A scalar attribute is exactly 4 bytes (clr): a larger buffer is refused too.
  int64_t wide = 0;
  HIP_EXPECT(hipMemRangeGetAttribute(&wide, sizeof wide, hipMemRangeAttributeReadMostly, m, 4), hipErrorInvalidValue);
  HIP_EXPECT(hipMemRangeGetAttribute(&wide, 6, hipMemRangeAttributePreferredLocation, m, 4), hipErrorInvalidValue);
  HIP_OK(hipFree(m));
}

void MemRangeGetAttributes() {
  int* m = ManagedInts(64);
  HIP_OK(hipMemAdvise(m, 256, hipMemAdviseSetReadMostly, 0));
  HIP_OK(hipMemAdvise(m, 256, hipMemAdviseSetPreferredLocation, 1));
  int read_mostly = 0, preferred = 0;
  void* data[] = {&read_mostly, &preferred};
  size_t sizes[] = {sizeof read_mostly, sizeof preferred};
  hipMemRangeAttribute which[] = {hipMemRangeAttributeReadMostly, hipMemRangeAttributePreferredLocation};
  HIP_OK(hipMemRangeGetAttributes(data, sizes, which, 2, m, 256));
  CHECK(read_mostly == 1 && preferred == 1, "attributes %d %d", read_mostly, preferred);
  HIP_EXPECT(hipMemRangeGetAttributes(data, sizes, which, 0, m, 256), hipErrorInvalidValue);
  HIP_EXPECT(hipMemRangeGetAttributes(nullptr, sizes, which, 2, m, 256), hipErrorInvalidValue);
  HIP_OK(hipFree(m));
}

void StreamAttachMemAsync() {
  int* m = ManagedInts(64);
  hipStream_t s = NewStream();
  HIP_OK(hipStreamAttachMemAsync(s, m, 0, hipMemAttachSingle));
  HIP_OK(hipStreamAttachMemAsync(s, m, 64 * sizeof(int), hipMemAttachGlobal));
  m[2] = 40;
  AddOneTo(m, 64, s);
  HIP_OK(hipStreamSynchronize(s));
  CHECK(m[2] == 41, "attached memory after its stream's kernel: %d", m[2]);
  HIP_EXPECT(hipStreamAttachMemAsync(s, m, 8, hipMemAttachSingle), hipErrorInvalidValue);  // Not the whole.
  HIP_EXPECT(hipStreamAttachMemAsync(s, m, 0, 8), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamAttachMemAsync(nullptr, m, 0, hipMemAttachSingle), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamAttachMemAsync(s, nullptr, 0, hipMemAttachGlobal), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(m));
}

const e2e::Row kRows[] = {
    {"hipMallocManaged", MallocManaged},
    {"hipMemPrefetchAsync", MemPrefetchAsync},
    {"hipMemPrefetchAsync_v2", MemPrefetchAsync_v2},
    {"hipMemAdvise", MemAdvise},
    {"hipMemAdvise_v2", MemAdvise_v2},
    {"hipMemRangeGetAttribute", MemRangeGetAttribute},
    {"hipMemRangeGetAttributes", MemRangeGetAttributes},
    {"hipStreamAttachMemAsync", StreamAttachMemAsync},
    {"hipMalloc", Malloc},
    {"hipExtMallocWithFlags", ExtMallocWithFlags},
    {"hipIpcGetMemHandle", IpcGetMemHandle},
    {"hipIpcOpenMemHandle", IpcOpenMemHandle},
    {"hipIpcCloseMemHandle", IpcCloseMemHandle},
    {"hipFree", Free},
    {"hipMemGetInfo", MemGetInfo},
    {"hipHostMalloc", HostMalloc},
    {"hipHostAlloc", HostAlloc},
    {"hipMallocHost", MallocHost},
    {"hipMemAllocHost", MemAllocHost},
    {"hipHostFree", HostFree},
    {"hipFreeHost", FreeHost},
    {"hipHostGetFlags", HostGetFlags},
    {"hipHostRegister", HostRegister},
    {"hipHostUnregister", HostUnregister},
    {"hipMemPtrGetInfo", MemPtrGetInfo},
    {"hipPointerGetAttributes", PointerGetAttributes},
    {"hipPointerGetAttribute", PointerGetAttribute},
    {"hipPointerSetAttribute", PointerSetAttribute},
    {"hipDrvPointerGetAttributes", DrvPointerGetAttributes},
    {"hipMemGetAddressRange", MemGetAddressRange},
    {"hipDeviceTotalMem", DeviceTotalMem},
    {"hipMallocPitch", MallocPitch},
    {"hipMemAllocPitch", MemAllocPitch},
    {"hipMalloc3D", Malloc3D},
    {"hipMallocAsync", MallocAsync},
    {"hipFreeAsync", FreeAsync},
    {"hipMemcpy", Memcpy},
    {"hipMemcpyWithStream", MemcpyWithStream},
    {"hipMemcpyAsync", MemcpyAsync},
    {"hipMemcpy_spt", MemcpySpt},
    {"hipMemcpyAsync_spt", MemcpyAsyncSpt},
    {"hipMemcpyHtoD", MemcpyHtoD},
    {"hipMemcpyDtoH", MemcpyDtoH},
    {"hipMemcpyDtoD", MemcpyDtoD},
    {"hipMemcpyHtoDAsync", MemcpyHtoDAsync},
    {"hipMemcpyDtoHAsync", MemcpyDtoHAsync},
    {"hipMemcpyDtoDAsync", MemcpyDtoDAsync},
    {"hipMemcpy2D", Memcpy2D},
    {"hipMemcpy2DAsync", Memcpy2DAsync},
    {"hipMemcpy2D_spt", Memcpy2DSpt},
    {"hipMemcpyParam2D", MemcpyParam2D},
    {"hipMemcpyParam2DAsync", MemcpyParam2DAsync},
    {"hipDrvMemcpy3D", DrvMemcpy3D},
    {"hipMallocFromPoolAsync", MallocFromPoolAsync},
    {"hipMallocAsync", StreamOrderedMemoryInCapture},
    {"hipFreeAsync", StreamOrderedMemoryInCapture},
    {"hipFree", StreamOrderedMemoryInCapture},
    {"hipExtModuleLaunchKernel", ExtModuleLaunchKernelC},
    {"hipHccModuleLaunchKernel", HccModuleLaunchKernelC},
    {"hipMemsetD2D8", MemsetD2D8},
    {"hipMemsetD2D8Async", MemsetD2D8Async},
    {"hipMemsetD2D16", MemsetD2D16},
    {"hipMemsetD2D16Async", MemsetD2D16Async},
    {"hipMemsetD2D32", MemsetD2D32},
    {"hipMemsetD2D32Async", MemsetD2D32Async},
    {"hipDrvMemcpy2DUnaligned", DrvMemcpy2DUnaligned},
    {"hipMemcpy3DPeer", Memcpy3DPeer},
    {"hipMemcpy3DPeerAsync", Memcpy3DPeerAsync},
    {"hipMemcpyBatchAsync", MemcpyBatchAsync},
    {"hipDrvMemcpy3DAsync", DrvMemcpy3DAsync},
    {"hipMemcpy2DAsync_spt", Memcpy2DAsyncSpt},
    {"hipMemcpy3DAsync_spt", Memcpy3DAsyncSpt},
    {"hipMemsetAsync_spt", MemsetAsyncSpt},
    {"hipMemset2DAsync_spt", Memset2DAsyncSpt},
    {"hipMemset3DAsync_spt", Memset3DAsyncSpt},
    {"hipMemcpyToSymbolAsync_spt", MemcpyToFromSymbolAsyncSpt},
    {"hipMemcpyFromSymbolAsync_spt", MemcpyToFromSymbolAsyncSpt},
    {"hipMemcpy3D", Memcpy3D},
    {"hipMemcpy3DAsync", Memcpy3DAsync},
    {"hipMemcpy3D_spt", Memcpy3DSpt},
    {"hipMemcpyPeer", MemcpyPeer},
    {"hipMemcpyPeerAsync", MemcpyPeerAsync},
    {"hipMemset", Memset},
    {"hipMemset_spt", MemsetSpt},
    {"hipMemsetAsync", MemsetAsync},
    {"hipMemset2D", Memset2D},
    {"hipMemset2DAsync", Memset2DAsync},
    {"hipMemset2D_spt", Memset2DSpt},
    {"hipMemset3D", Memset3D},
    {"hipMemset3DAsync", Memset3DAsync},
    {"hipMemset3D_spt", Memset3DSpt},
    {"hipMemsetD8", MemsetD8},
    {"hipMemsetD8Async", MemsetD8Async},
    {"hipMemsetD16", MemsetD16},
    {"hipMemsetD16Async", MemsetD16Async},
    {"hipMemsetD32", MemsetD32},
    {"hipMemsetD32Async", MemsetD32Async},
    {"hipGetSymbolSize", GetSymbolSize},
    {"hipGetSymbolAddress", GetSymbolAddress},
    {"hipMemcpyToSymbol", MemcpyToSymbol},
    {"hipMemcpyToSymbolAsync", MemcpyToSymbolAsync},
    {"hipMemcpyToSymbol_spt", MemcpyToSymbolSpt},
    {"hipMemcpyFromSymbol", MemcpyFromSymbol},
    {"hipMemcpyFromSymbolAsync", MemcpyFromSymbolAsync},
    {"hipMemcpyFromSymbol_spt", MemcpyFromSymbolSpt},
    {"hipFuncSetSharedMemConfig", FuncSetSharedMemConfig},
    {"hipMemGetAllocationGranularity", MemGetAllocationGranularity},
    {"hipMemAddressReserve", MemAddressReserve},
    {"hipMemAddressFree", MemAddressFree},
    {"hipMemCreate", MemCreate},
    {"hipMemRelease", MemRelease},
    {"hipMemGetAllocationPropertiesFromHandle", MemGetAllocationPropertiesFromHandle},
    {"hipMemRetainAllocationHandle", MemRetainAllocationHandle},
    {"hipMemMap", MemMap},
    {"hipMemUnmap", MemUnmap},
    {"hipMemSetAccess", MemSetAccess},
    {"hipMemGetAccess", MemGetAccess},
    {"hipMemExportToShareableHandle", MemExportToShareableHandle},
    {"hipMemImportFromShareableHandle", MemImportFromShareableHandle},
    {"_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j",
     ExtModuleLaunchKernel},
    {"_Z24hipHccModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_",
     HccModuleLaunchKernel},
};

}  // namespace

int main() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == 2, "expected a worker with two sim devices, got %d", count);
  return e2e::RunRows("api_table_memory", kRows);
}
