// runtime_extras: memory, peer, context and configuration calls frameworks
// make (PyTorch's caching allocator, pinned-memory registration, device
// selection), on a sim worker with two devices (--sim-devices 2).
//
//  * hipMallocPitch + hipMemset2D(Async): rows set, padding untouched.
//  * hipMallocAsync/hipFreeAsync and hipMemGetAddressRange.
//  * hipMalloc3D and hipMemcpy3D(Async), whole volume and a sub-box.
//  * hipHostRegister/Unregister: registered memory is pinned memory (an
//    async copy into it lands at the sync point), with HIP's errors for
//    double registration and the wrong free.
//  * Peers: hipDeviceCanAccessPeer, Enable/DisablePeerAccess and their
//    errors, hipMemcpyPeer(Async) between the two devices.
//  * Primary contexts and hipCtxSetCurrent/GetDevice; cache configuration;
//    hipDeviceGetByPCIBusId against hipDeviceGetPCIBusId; distinct UUIDs.
#include <hip/hip_runtime.h>

#include <cstring>
#include <vector>

#include "common.h"

namespace {

void CheckPitchedMemset() {
  const size_t width = 1000;
  const size_t height = 7;
  void* d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMallocPitch(&d, &pitch, width, height));
  const bool aligned = pitch % 256 == 0;  // Not in CHECK: its condition becomes part of a format.
  CHECK(pitch >= width && aligned, "pitch %zu for width %zu", pitch, width);
  HIP_OK(hipMemset(d, 0xaa, pitch * height));
  HIP_OK(hipMemset2D(d, pitch, 0x11, width, height - 1));
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipMemset2DAsync(static_cast<char*>(d) + (height - 1) * pitch, pitch, 0x22, width, 1, s));
  HIP_OK(hipStreamSynchronize(s));
  std::vector<unsigned char> got(pitch * height);
  HIP_OK(hipMemcpy(got.data(), d, got.size(), hipMemcpyDeviceToHost));
  for (size_t r = 0; r < height; ++r)
    for (size_t c = 0; c < pitch; ++c) {
      const unsigned char want = c >= width ? 0xaa : r + 1 < height ? 0x11 : 0x22;
      CHECK(got[r * pitch + c] == want, "row %zu byte %zu is 0x%02x, expected 0x%02x", r, c, got[r * pitch + c], want);
    }
  HIP_EXPECT(hipMemset2D(d, width - 1, 0, width, 2), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  printf("hipMallocPitch gave pitch %zu; hipMemset2D(Async) set the rows and left the padding\n", pitch);
}

// A 3-D box: whole-volume copies both ways, then a sub-box.
void Check3D() {
  const hipExtent extent = make_hipExtent(100, 5, 3);  // Bytes, rows, slices.
  hipPitchedPtr d{};
  HIP_OK(hipMalloc3D(&d, extent));
  CHECK(d.pitch >= 100 && d.xsize == 100 && d.ysize == 5, "hipMalloc3D: pitch %zu, %zu x %zu", d.pitch, d.xsize,
        d.ysize);
  std::vector<unsigned char> host(100 * 5 * 3);
  e2e::FillPattern(host.data(), host.size(), 33);
  hipMemcpy3DParms up{};
  up.srcPtr = make_hipPitchedPtr(host.data(), 100, 100, 5);
  up.dstPtr = d;
  up.extent = extent;
  up.kind = hipMemcpyHostToDevice;
  HIP_OK(hipMemcpy3D(&up));
  std::vector<unsigned char> back(host.size(), 0);
  hipMemcpy3DParms down{};
  down.srcPtr = d;
  down.dstPtr = make_hipPitchedPtr(back.data(), 100, 100, 5);
  down.extent = extent;
  down.kind = hipMemcpyDeviceToHost;
  HIP_OK(hipMemcpy3D(&down));
  CHECK(back == host, "a 3-D round trip differs");
  // The box x 10..29, y 1..2, z 1..2 into a packed 20 x 2 x 2 buffer.
  std::vector<unsigned char> box(20 * 2 * 2, 0);
  hipMemcpy3DParms sub{};
  sub.srcPtr = d;
  sub.srcPos = make_hipPos(10, 1, 1);
  sub.dstPtr = make_hipPitchedPtr(box.data(), 20, 20, 2);
  sub.extent = make_hipExtent(20, 2, 2);
  sub.kind = hipMemcpyDeviceToHost;
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipMemcpy3DAsync(&sub, s));
  HIP_OK(hipStreamSynchronize(s));
  for (size_t z = 0; z < 2; ++z)
    for (size_t y = 0; y < 2; ++y)
      for (size_t x = 0; x < 20; ++x) {
        const unsigned char want = host[(z + 1) * 500 + (y + 1) * 100 + 10 + x];
        CHECK(box[z * 40 + y * 20 + x] == want, "sub-box (%zu,%zu,%zu) differs", x, y, z);
      }
  // hipMemset3D over rows 1..3 of every slice, 7 bytes in from the pitch
  // start: the rest stays.
  HIP_OK(hipMemset3D(d, 0x3c, make_hipExtent(7, 3, 3)));
  HIP_OK(hipMemcpy3D(&down));
  for (size_t z = 0; z < 3; ++z)
    for (size_t y = 0; y < 5; ++y)
      for (size_t x = 0; x < 100; ++x) {
        const size_t i = z * 500 + y * 100 + x;
        const unsigned char want = x < 7 && y < 3 ? 0x3c : host[i];
        CHECK(back[i] == want, "after hipMemset3D, (%zu,%zu,%zu) is 0x%02x", x, y, z, back[i]);
      }
  hipMemcpy3DParms bad = sub;
  bad.srcPos = make_hipPos(d.pitch - 10, 0, 0);  // x + width past the pitch.
  HIP_EXPECT(hipMemcpy3D(&bad), hipErrorInvalidPitchValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d.ptr));
  printf("hipMalloc3D, hipMemcpy3D(Async) and hipMemset3D: a 100 x 5 x 3 volume both ways, a sub-box, a memset box\n");
}

void CheckStreamOrderedAllocation() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  void* d = nullptr;
  HIP_OK(hipMallocAsync(&d, 1 << 20, s));
  HIP_OK(hipMemsetAsync(d, 0x5c, 1 << 20, s));
  std::vector<unsigned char> got(1 << 20);
  HIP_OK(hipMemcpyAsync(got.data(), d, got.size(), hipMemcpyDeviceToHost, s));
  CHECK(got[0] == 0x5c && got[(1 << 20) - 1] == 0x5c, "hipMallocAsync memory reads 0x%02x", got[0]);
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  HIP_OK(hipMemGetAddressRange(&base, &size, static_cast<char*>(d) + 12345));
  CHECK(base == d && size == (1 << 20), "hipMemGetAddressRange: %p +%zu", base, size);
  HIP_OK(hipFreeAsync(d, s));
  HIP_OK(hipStreamSynchronize(s));
  HIP_EXPECT(hipMemGetAddressRange(&base, &size, d), hipErrorNotFound);
  HIP_OK(hipStreamDestroy(s));
  printf("hipMallocAsync/hipFreeAsync in stream order; hipMemGetAddressRange found the allocation\n");
}

void CheckHostRegister() {
  const size_t n = 1 << 20;
  std::vector<unsigned char> buffer(n, 0);
  HIP_OK(hipHostRegister(buffer.data(), n, hipHostRegisterDefault));
  HIP_EXPECT(hipHostRegister(buffer.data(), n, hipHostRegisterDefault), hipErrorHostMemoryAlreadyRegistered);
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, buffer.data() + 100));
  CHECK(a.memoryType == hipMemoryTypeHost, "registered memory has type %d", a.memoryType);
  HIP_EXPECT(hipHostFree(buffer.data()), hipErrorInvalidValue);  // Not hipHostMalloc's.
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, n));
  HIP_OK(hipMemset(d, 0x7e, n));
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipMemcpyAsync(buffer.data(), d, n, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(buffer[0] == 0x7e && buffer[n - 1] == 0x7e, "the async copy into registered memory gave 0x%02x",
        buffer[n - 1]);
  HIP_EXPECT(hipHostUnregister(buffer.data() + 1), hipErrorHostMemoryNotRegistered);
  HIP_OK(hipHostUnregister(buffer.data()));
  HIP_EXPECT(hipHostUnregister(buffer.data()), hipErrorHostMemoryNotRegistered);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  printf("hipHostRegister'ed memory took an async copy as pinned memory; double registration and wrong frees refused\n");
}

void CheckPeers() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == 2, "the worker should have 2 sim devices, has %d", count);
  int can = -1;
  HIP_OK(hipDeviceCanAccessPeer(&can, 0, 1));
  CHECK(can == 1, "sim device 0 cannot access device 1");
  HIP_OK(hipDeviceCanAccessPeer(&can, 0, 0));
  CHECK(can == 0, "a device is its own peer");
  HIP_EXPECT(hipDeviceCanAccessPeer(&can, 0, 2), hipErrorInvalidDevice);
  int attr = -1;
  HIP_OK(hipDeviceGetP2PAttribute(&attr, hipDevP2PAttrAccessSupported, 0, 1));
  CHECK(attr == 1, "P2P access attribute %d", attr);
  HIP_OK(hipDeviceGetP2PAttribute(&attr, hipDevP2PAttrHipArrayAccessSupported, 0, 1));
  CHECK(attr == 0, "P2P array access attribute %d", attr);
  HIP_EXPECT(hipDeviceGetP2PAttribute(&attr, hipDevP2PAttrAccessSupported, 1, 1), hipErrorInvalidDevice);
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipDeviceEnablePeerAccess(1, 0));
  HIP_EXPECT(hipDeviceEnablePeerAccess(1, 0), hipErrorPeerAccessAlreadyEnabled);
  HIP_EXPECT(hipDeviceEnablePeerAccess(1, 1), hipErrorInvalidValue);
  HIP_OK(hipDeviceDisablePeerAccess(1));
  HIP_EXPECT(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);

  const size_t n = 1 << 20;
  void* d0 = nullptr;
  void* d1 = nullptr;
  HIP_OK(hipMalloc(&d0, n));
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipMalloc(&d1, n));
  HIP_OK(hipMemset(d1, 0, n));
  HIP_OK(hipSetDevice(0));
  std::vector<unsigned char> src(n);
  e2e::FillPattern(src.data(), n, 77);
  HIP_OK(hipMemcpy(d0, src.data(), n, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpyPeer(d1, 1, d0, 0, n / 2));
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipMemcpyPeerAsync(static_cast<char*>(d1) + n / 2, 1, static_cast<char*>(d0) + n / 2, 0, n / 2, s));
  HIP_OK(hipStreamSynchronize(s));
  // As clr: the device numbers are only range-checked, the pointers decide
  // (d1 is device 1's, named 0 here): the bytes still land in d1.
  HIP_EXPECT(hipMemcpyPeer(d1, 0, d0, 0, n), hipSuccess);
  HIP_EXPECT(hipMemcpyPeer(d1, 2, d0, 0, n), hipErrorInvalidDevice);
  HIP_OK(hipSetDevice(1));
  std::vector<unsigned char> got(n);
  HIP_OK(hipMemcpy(got.data(), d1, n, hipMemcpyDeviceToHost));
  CHECK(e2e::FirstPatternMismatch(got.data(), n, 77) == n, "peer copy differs at byte %zu",
        e2e::FirstPatternMismatch(got.data(), n, 77));
  HIP_OK(hipFree(d1));
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d0));
  printf("peer access between the two sim devices, and hipMemcpyPeer(Async) from device 0 to device 1\n");
}

void CheckContextsAndConfiguration() {
  hipCtx_t ctx = nullptr;
  HIP_OK(hipDevicePrimaryCtxRetain(&ctx, 1));
  HIP_OK(hipCtxSetCurrent(ctx));
  int device = -1;
  HIP_OK(hipGetDevice(&device));
  CHECK(device == 1, "hipCtxSetCurrent(primary context of 1) left device %d current", device);
  hipDevice_t ctx_device = -1;
  HIP_OK(hipCtxGetDevice(&ctx_device));
  CHECK(ctx_device == 1, "hipCtxGetDevice gave %d", ctx_device);
  hipCtx_t current = nullptr;
  HIP_OK(hipCtxGetCurrent(&current));
  CHECK(current == ctx, "hipCtxGetCurrent is not the primary context set");
  unsigned flags = 99;
  int active = -1;
  HIP_OK(hipDevicePrimaryCtxGetState(1, &flags, &active));
  CHECK(active == 1, "the primary context is not active");
  HIP_EXPECT(hipDevicePrimaryCtxSetFlags(1, 0), hipErrorContextAlreadyInUse);
  HIP_OK(hipDevicePrimaryCtxRelease(1));
  HIP_EXPECT(hipDevicePrimaryCtxRetain(&ctx, 5), hipErrorInvalidDevice);
  HIP_EXPECT(hipCtxSetCurrent(reinterpret_cast<hipCtx_t>(&flags)), hipErrorInvalidContext);
  HIP_OK(hipSetDevice(0));

  HIP_OK(hipDeviceSetCacheConfig(hipFuncCachePreferShared));
  hipFuncCache_t config = hipFuncCachePreferL1;
  HIP_OK(hipDeviceGetCacheConfig(&config));
  CHECK(config == hipFuncCachePreferNone, "cache config %d", config);

  hipUUID u0{};
  hipUUID u1{};
  HIP_OK(hipDeviceGetUuid(&u0, 0));
  HIP_OK(hipDeviceGetUuid(&u1, 1));
  CHECK(memcmp(u0.bytes, u1.bytes, sizeof u0.bytes) != 0, "the two devices have one UUID");
  hipUUID zero{};
  CHECK(memcmp(u0.bytes, zero.bytes, sizeof u0.bytes) != 0, "device 0's UUID is all zero");
  HIP_EXPECT(hipDeviceGetUuid(&u0, 2), hipErrorInvalidDevice);
  char bus[32] = {};
  HIP_OK(hipDeviceGetPCIBusId(bus, sizeof bus, 1));
  int found = -1;
  HIP_OK(hipDeviceGetByPCIBusId(&found, bus));
  CHECK(found == 1, "hipDeviceGetByPCIBusId(\"%s\") gave %d", bus, found);
  HIP_EXPECT(hipDeviceGetByPCIBusId(&found, "not a bus id"), hipErrorInvalidValue);
  printf("primary contexts select devices; cache configuration; PCI bus id %s is device 1\n", bus);
}

}  // namespace

int main() {
  CheckPitchedMemset();
  CheckStreamOrderedAllocation();
  Check3D();
  CheckHostRegister();
  CheckPeers();
  CheckContextsAndConfiguration();
  return e2e::Finish("runtime_extras");
}
