// memory: the memory API through the stub, byte-exact.
//
// Device properties, hipMalloc/hipMemcpy round trips at awkward sizes,
// copies into the middle of allocations, memsets of interior ranges (with the
// bytes around them checked), device-to-device and hipMemcpyDefault copies,
// 2-D copies with pitches, async copies on streams with events, pointer
// attributes, hipMemGetInfo accounting, the pageable-memory rules of async copies,
// pinned buffers, that device addresses are never host-accessible, and (on
// the hip device, which picks its own addresses) that an address landing on
// this process's memory is stepped over however large that memory is.
//
// Usage: memory [--total-mem BYTES]   (default 2 GiB: the driver's --sim-memory)
#include <sys/mman.h>

#include <atomic>
#include <string>
#include <vector>

#include "common.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kGiB = size_t{1} << 30;

void Section(const char* name) {
  printf("[memory] %s\n", name);
  fflush(stdout);
}

uint8_t* Dev(void* p) { return static_cast<uint8_t*>(p); }

// hipMalloc + the check that the range is reserved PROT_NONE in this process.
uint8_t* DeviceAlloc(size_t n, const char* what) {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, n));
  CHECK(d != nullptr, "hipMalloc(%zu) returned null", n);
  e2e::CheckNotHostAccessible(d, n, what);
  return Dev(d);
}

void Properties(size_t expected_total) {
  Section("device count and properties");
  int count = -1;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count >= 1, "device count is %d", count);
  int device = -1;
  HIP_OK(hipGetDevice(&device));
  CHECK(device == 0, "current device is %d", device);
  HIP_OK(hipSetDevice(0));
  hipDeviceProp_t prop;
  memset(&prop, 0, sizeof prop);
  HIP_OK(hipGetDeviceProperties(&prop, 0));
  CHECK(strlen(prop.name) > 0, "empty device name");
  CHECK(strncmp(prop.gcnArchName, "gfx90a", 6) == 0, "gcnArchName is '%s'", prop.gcnArchName);
  CHECK(prop.totalGlobalMem == expected_total, "totalGlobalMem is %zu, expected %zu", prop.totalGlobalMem,
        expected_total);
  CHECK(prop.multiProcessorCount > 0, "multiProcessorCount is %d", prop.multiProcessorCount);
  CHECK(prop.maxThreadsPerBlock > 0, "maxThreadsPerBlock is %d", prop.maxThreadsPerBlock);
  printf("  device 0: '%s' (%s), %zu MiB, %d CUs, %d of %d devices\n", prop.name, prop.gcnArchName,
         prop.totalGlobalMem / kMiB, prop.multiProcessorCount, device, count);
}

void RoundTrips() {
  Section("hipMalloc / hipMemcpy round trips");
  const size_t sizes[] = {1,           7,           4095,          4096,
                          4 * kMiB - 1, 4 * kMiB,   4 * kMiB + 1,  13 * kMiB + 17,
                          256 * kMiB};
  for (size_t n : sizes) {
    std::vector<uint8_t> src(n), dst(n);
    uint64_t seed = 0x1000 + n;
    e2e::FillPattern(src.data(), n, seed);
    memset(dst.data(), 0, n);
    uint8_t* d = DeviceAlloc(n, "round-trip buffer");
    double t0 = e2e::NowSeconds();
    HIP_OK(hipMemcpy(d, src.data(), n, hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(dst.data(), d, n, hipMemcpyDeviceToHost));
    double dt = e2e::NowSeconds() - t0;
    std::string what = "round trip of " + std::to_string(n) + " bytes";
    CHECK_PATTERN(dst.data(), n, seed, what.c_str());
    // The driver-API spelling of the same copies.
    memset(dst.data(), 0, n);
    HIP_OK(hipMemcpyHtoD(d, src.data(), n));
    HIP_OK(hipMemcpyDtoH(dst.data(), d, n));
    CHECK_PATTERN(dst.data(), n, seed, (what + " (HtoD/DtoH)").c_str());
    HIP_OK(hipFree(d));
    if (n >= 4 * kMiB) printf("  %zu bytes: %.1f MiB/s both ways\n", n, 2.0 * n / kMiB / (dt > 0 ? dt : 1e-9));
  }
}

void Offsets() {
  Section("copies into and out of the middle of an allocation");
  const size_t n = kMiB, off = 12345, len = 1000;
  std::vector<uint8_t> a(n), b(len), got(n);
  e2e::FillPattern(a.data(), n, 100);
  e2e::FillPattern(b.data(), len, 101);
  uint8_t* d = DeviceAlloc(n, "offset buffer");
  HIP_OK(hipMemcpy(d, a.data(), n, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(d + off, b.data(), len, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(got.data(), d, n, hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), a.data(), off) == 0, "bytes before the interior copy changed");
  CHECK_PATTERN(got.data() + off, len, 101, "interior copy");
  CHECK(memcmp(got.data() + off + len, a.data() + off + len, n - off - len) == 0,
        "bytes after the interior copy changed");
  // Read back from an interior address, and up to the last byte.
  std::vector<uint8_t> part(500);
  HIP_OK(hipMemcpy(part.data(), d + off + 10, 500, hipMemcpyDeviceToHost));
  CHECK(memcmp(part.data(), b.data() + 10, 500) == 0, "interior read-back differs");
  uint8_t last = 0;
  HIP_OK(hipMemcpy(&last, d + n - 1, 1, hipMemcpyDeviceToHost));
  CHECK(last == a[n - 1], "last byte is 0x%02x, expected 0x%02x", last, a[n - 1]);
  HIP_OK(hipFree(d));
}

void Memsets(hipStream_t stream) {
  Section("hipMemset / D8 / D16 / D32 / Async of interior ranges");
  const size_t n = 64 * 1024;
  std::vector<uint8_t> expect(n), got(n);
  e2e::FillPattern(expect.data(), n, 200);
  uint8_t* d = DeviceAlloc(n, "memset buffer");
  HIP_OK(hipMemcpy(d, expect.data(), n, hipMemcpyHostToDevice));

  HIP_OK(hipMemset(d + 100, 0x5a, 1000));
  memset(expect.data() + 100, 0x5a, 1000);
  HIP_OK(hipMemsetD8(d + 2001, 0xc3, 777));
  memset(expect.data() + 2001, 0xc3, 777);
  HIP_OK(hipMemsetD16(d + 4002, 0xbeef, 500));
  for (size_t i = 0; i < 500; ++i) {
    expect[4002 + 2 * i] = 0xef;
    expect[4002 + 2 * i + 1] = 0xbe;
  }
  HIP_OK(hipMemsetD32(d + 8004, 0x12345678, 300));
  for (size_t i = 0; i < 300; ++i) {
    expect[8004 + 4 * i + 0] = 0x78;
    expect[8004 + 4 * i + 1] = 0x56;
    expect[8004 + 4 * i + 2] = 0x34;
    expect[8004 + 4 * i + 3] = 0x12;
  }
  HIP_OK(hipMemsetAsync(d + 20000, 0x11, 3000, stream));
  memset(expect.data() + 20000, 0x11, 3000);
  HIP_OK(hipStreamSynchronize(stream));
  HIP_OK(hipMemset(d + n - 3, 0xfe, 3));  // Up to the last byte.
  memset(expect.data() + n - 3, 0xfe, 3);
  HIP_OK(hipMemcpy(got.data(), d, n, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < n; ++i)
    CHECK(got[i] == expect[i], "memsets: byte %zu is 0x%02x, expected 0x%02x", i, got[i], expect[i]);
  HIP_OK(hipFree(d));

  // A large memset (several chunks) in the middle of a bigger buffer.
  const size_t big = 16 * kMiB, off = 3, len = 13 * kMiB + 17;
  std::vector<uint8_t> bytes(big);
  e2e::FillPattern(bytes.data(), big, 201);
  uint8_t* b = DeviceAlloc(big, "large memset buffer");
  HIP_OK(hipMemcpy(b, bytes.data(), big, hipMemcpyHostToDevice));
  HIP_OK(hipMemset(b + off, 0x77, len));
  std::vector<uint8_t> back(big);
  HIP_OK(hipMemcpy(back.data(), b, big, hipMemcpyDeviceToHost));
  CHECK(memcmp(back.data(), bytes.data(), off) == 0, "large memset: bytes before changed");
  CHECK_BYTES_EQUAL(back.data() + off, len, 0x77, "large memset");
  CHECK(memcmp(back.data() + off + len, bytes.data() + off + len, big - off - len) == 0,
        "large memset: bytes after changed");
  HIP_OK(hipFree(b));
}

void DeviceToDevice() {
  Section("device-to-device copies");
  const size_t n = 5 * kMiB + 3;
  std::vector<uint8_t> src(n), got(n + 2);
  e2e::FillPattern(src.data(), n, 300);
  uint8_t* a = DeviceAlloc(n, "DtoD source");
  uint8_t* b = DeviceAlloc(n + 2, "DtoD destination");
  uint8_t* c = DeviceAlloc(n, "DtoD second destination");
  HIP_OK(hipMemcpy(a, src.data(), n, hipMemcpyHostToDevice));
  HIP_OK(hipMemset(b, 0x42, n + 2));
  HIP_OK(hipMemcpy(b + 1, a, n, hipMemcpyDeviceToDevice));
  HIP_OK(hipMemcpy(got.data(), b, n + 2, hipMemcpyDeviceToHost));
  CHECK(got[0] == 0x42 && got[n + 1] == 0x42, "DtoD wrote outside its range (0x%02x, 0x%02x)", got[0],
        got[n + 1]);
  CHECK_PATTERN(got.data() + 1, n, 300, "hipMemcpy DeviceToDevice");
  HIP_OK(hipMemcpyDtoD(c, a + 7, n - 7));
  HIP_OK(hipMemcpy(got.data(), c, n - 7, hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), src.data() + 7, n - 7) == 0, "hipMemcpyDtoD from an interior address differs");
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
  HIP_OK(hipFree(c));
}

void DefaultDirection() {
  Section("hipMemcpyDefault in every direction");
  const size_t n = 3 * kMiB + 11;
  std::vector<uint8_t> src(n), got(n), host2(n);
  e2e::FillPattern(src.data(), n, 400);
  uint8_t* a = DeviceAlloc(n, "Default buffer a");
  uint8_t* b = DeviceAlloc(n, "Default buffer b");
  HIP_OK(hipMemcpy(a, src.data(), n, hipMemcpyDefault));  // H2D
  HIP_OK(hipMemcpy(b, a, n, hipMemcpyDefault));           // D2D
  HIP_OK(hipMemcpy(got.data(), b, n, hipMemcpyDefault));  // D2H
  CHECK_PATTERN(got.data(), n, 400, "hipMemcpyDefault H2D, D2D, D2H");
  HIP_OK(hipMemcpy(host2.data(), got.data(), n, hipMemcpyDefault));  // H2H
  CHECK_PATTERN(host2.data(), n, 400, "hipMemcpyDefault H2H");
  // Interior addresses: the direction comes from the allocation map.
  HIP_OK(hipMemcpy(got.data(), a + 1000, 2000, hipMemcpyDefault));
  CHECK(memcmp(got.data(), src.data() + 1000, 2000) == 0, "hipMemcpyDefault from an interior device address");
  // Pinned host memory too.
  void* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, n, hipHostMallocDefault));
  e2e::FillPattern(pinned, n, 401);
  HIP_OK(hipMemcpy(a, pinned, n, hipMemcpyDefault));
  memset(pinned, 0, n);
  HIP_OK(hipMemcpy(pinned, a, n, hipMemcpyDefault));
  CHECK_PATTERN(static_cast<uint8_t*>(pinned), n, 401, "hipMemcpyDefault with pinned host memory");
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

void Copy2D() {
  Section("hipMemcpy2D with pitches");
  const size_t width = 100, height = 33, spitch = 150, dpitch = 128, hpitch = 111, d2pitch = 256;
  std::vector<uint8_t> src(spitch * height);
  e2e::FillPattern(src.data(), src.size(), 500);
  uint8_t* d = DeviceAlloc(dpitch * height, "2-D buffer");
  uint8_t* d2 = DeviceAlloc(d2pitch * height, "2-D second buffer");
  HIP_OK(hipMemset(d, 0xee, dpitch * height));
  HIP_OK(hipMemset(d2, 0xdd, d2pitch * height));
  HIP_OK(hipMemcpy2D(d, dpitch, src.data(), spitch, width, height, hipMemcpyHostToDevice));
  std::vector<uint8_t> lin(dpitch * height);
  HIP_OK(hipMemcpy(lin.data(), d, lin.size(), hipMemcpyDeviceToHost));
  for (size_t r = 0; r < height; ++r) {
    CHECK(memcmp(lin.data() + r * dpitch, src.data() + r * spitch, width) == 0, "2-D H2D: row %zu differs", r);
    CHECK_BYTES_EQUAL(lin.data() + r * dpitch + width, dpitch - width, 0xee, "2-D H2D: device row padding");
  }
  std::vector<uint8_t> back(hpitch * height, 0x33);
  HIP_OK(hipMemcpy2D(back.data(), hpitch, d, dpitch, width, height, hipMemcpyDeviceToHost));
  for (size_t r = 0; r < height; ++r) {
    CHECK(memcmp(back.data() + r * hpitch, src.data() + r * spitch, width) == 0, "2-D D2H: row %zu differs", r);
    CHECK_BYTES_EQUAL(back.data() + r * hpitch + width, hpitch - width, 0x33, "2-D D2H: host row padding");
  }
  HIP_OK(hipMemcpy2D(d2, d2pitch, d, dpitch, width, height, hipMemcpyDeviceToDevice));
  std::vector<uint8_t> lin2(d2pitch * height);
  HIP_OK(hipMemcpy(lin2.data(), d2, lin2.size(), hipMemcpyDeviceToHost));
  for (size_t r = 0; r < height; ++r) {
    CHECK(memcmp(lin2.data() + r * d2pitch, src.data() + r * spitch, width) == 0, "2-D D2D: row %zu differs", r);
    CHECK_BYTES_EQUAL(lin2.data() + r * d2pitch + width, d2pitch - width, 0xdd, "2-D D2D: row padding");
  }
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(d2));
}

void AsyncStreamsEvents() {
  Section("hipMemcpyAsync on streams, with events");
  const size_t n = 8 * kMiB + 5;
  hipStream_t s1 = nullptr, s2 = nullptr;
  HIP_OK(hipStreamCreate(&s1));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t start = nullptr, stop = nullptr, mid = nullptr;
  HIP_OK(hipEventCreate(&start));
  HIP_OK(hipEventCreate(&stop));
  HIP_OK(hipEventCreateWithFlags(&mid, hipEventDisableTiming));

  std::vector<uint8_t> src(n), got(n);
  e2e::FillPattern(src.data(), n, 600);
  uint8_t* a = DeviceAlloc(n, "async buffer a");
  uint8_t* b = DeviceAlloc(n, "async buffer b");
  HIP_OK(hipEventRecord(start, s1));
  HIP_OK(hipMemcpyAsync(a, src.data(), n, hipMemcpyHostToDevice, s1));
  HIP_OK(hipMemcpyAsync(b, a, n, hipMemcpyDeviceToDevice, s1));
  HIP_OK(hipEventRecord(mid, s1));
  HIP_OK(hipMemcpyAsync(got.data(), b, n, hipMemcpyDeviceToHost, s1));
  HIP_OK(hipEventRecord(stop, s1));
  HIP_OK(hipStreamSynchronize(s1));
  HIP_OK(hipEventSynchronize(stop));
  HIP_EXPECT(hipEventQuery(stop), hipSuccess);
  HIP_EXPECT(hipStreamQuery(s1), hipSuccess);
  float ms = -1.0f;
  HIP_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0.0f, "hipEventElapsedTime gave %f ms", static_cast<double>(ms));
  CHECK_PATTERN(got.data(), n, 600, "async H2D, D2D, D2H on one stream");
  printf("  3 async copies of %zu bytes: %.3f ms by events\n", n, static_cast<double>(ms));

  // Second stream waits for an event of the first; pinned buffers.
  void* pin_src = nullptr;
  void* pin_dst = nullptr;
  HIP_OK(hipHostMalloc(&pin_src, n, hipHostMallocDefault));
  HIP_OK(hipHostMalloc(&pin_dst, n, hipHostMallocDefault));
  e2e::FillPattern(pin_src, n, 601);
  memset(pin_dst, 0, n);
  HIP_OK(hipMemcpyAsync(a, pin_src, n, hipMemcpyHostToDevice, s1));
  HIP_OK(hipEventRecord(mid, s1));
  HIP_OK(hipStreamWaitEvent(s2, mid, 0));
  HIP_OK(hipMemcpyAsync(pin_dst, a, n, hipMemcpyDeviceToHost, s2));
  HIP_OK(hipStreamSynchronize(s2));
  CHECK_PATTERN(static_cast<uint8_t*>(pin_dst), n, 601, "pinned async copies across two streams");

  // The null stream, then a device-wide synchronize.
  memset(got.data(), 0, n);
  HIP_OK(hipMemcpyAsync(b, src.data(), n, hipMemcpyHostToDevice, nullptr));
  HIP_OK(hipMemcpyAsync(got.data(), b, n, hipMemcpyDeviceToHost, nullptr));
  HIP_OK(hipDeviceSynchronize());
  CHECK_PATTERN(got.data(), n, 600, "async copies on the null stream");

  HIP_OK(hipHostFree(pin_src));
  HIP_OK(hipHostFree(pin_dst));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
  HIP_OK(hipEventDestroy(start));
  HIP_OK(hipEventDestroy(stop));
  HIP_OK(hipEventDestroy(mid));
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipStreamDestroy(s2));
}

// An async H2D from pageable memory has consumed its source when it returns:
// the program may overwrite (or free) the buffer at once.
void PageableSourceConsumed(hipStream_t stream) {
  Section("async copies with pageable memory: H2D source overwritten at once, D2H done on return");
  const size_t sizes[] = {1000, 64 * 1024 + 1, 8 * kMiB + 5};
  for (size_t n : sizes) {
    const int kCopies = 4;
    uint8_t* d = DeviceAlloc(n * kCopies, "pageable-source buffer");
    std::vector<uint8_t> host(n);
    for (int k = 0; k < kCopies; ++k) {
      e2e::FillPattern(host.data(), n, 700 + n + k);
      HIP_OK(hipMemcpyAsync(d + k * n, host.data(), n, hipMemcpyHostToDevice, stream));
      memset(host.data(), 0xa5, n);  // Before any synchronization.
    }
    {
      // A heap buffer freed right after the call returns.
      uint8_t* tmp = static_cast<uint8_t*>(malloc(n));
      e2e::FillPattern(tmp, n, 799 + n);
      HIP_OK(hipMemcpyAsync(d, tmp, n, hipMemcpyHostToDevice, stream));
      memset(tmp, 0x5a, n);
      free(tmp);
    }
    HIP_OK(hipStreamSynchronize(stream));
    std::vector<uint8_t> got(n);
    for (int k = 0; k < kCopies; ++k) {
      HIP_OK(hipMemcpy(got.data(), d + k * n, n, hipMemcpyDeviceToHost));
      uint64_t seed = k == 0 ? 799 + n : 700 + n + k;
      std::string what = "async H2D of " + std::to_string(n) + " bytes, copy " + std::to_string(k);
      CHECK_PATTERN(got.data(), n, seed, what.c_str());
    }
    // The other direction: an async D2H into pageable memory has completed
    // when the call returns (no synchronization before reading).
    std::vector<uint8_t> back(n, 0);
    HIP_OK(hipMemcpyAsync(back.data(), d + n, n, hipMemcpyDeviceToHost, stream));
    std::string what = "async D2H of " + std::to_string(n) + " bytes into pageable memory, read before any sync";
    CHECK_PATTERN(back.data(), n, 700 + n + 1, what.c_str());
    HIP_OK(hipStreamSynchronize(stream));
    HIP_OK(hipFree(d));
  }
}

void PointerAttributes() {
  Section("hipPointerGetAttributes");
  const size_t n = kMiB;
  uint8_t* d = DeviceAlloc(n, "attribute buffer");
  hipPointerAttribute_t attr;
  memset(&attr, 0x7f, sizeof attr);
  HIP_OK(hipPointerGetAttributes(&attr, d));
  CHECK(attr.memoryType == hipMemoryTypeDevice, "device pointer: memoryType %d", static_cast<int>(attr.memoryType));
  CHECK(attr.device == 0, "device pointer: device %d", attr.device);
  CHECK(attr.devicePointer == d, "device pointer: devicePointer %p, expected %p", attr.devicePointer,
        static_cast<void*>(d));
  CHECK(attr.isManaged == 0, "device pointer: isManaged %d", attr.isManaged);
  memset(&attr, 0x7f, sizeof attr);
  HIP_OK(hipPointerGetAttributes(&attr, d + 4096));
  CHECK(attr.memoryType == hipMemoryTypeDevice, "interior device pointer: memoryType %d",
        static_cast<int>(attr.memoryType));

  void* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, n, hipHostMallocDefault));
  memset(pinned, 1, n);  // Pinned memory is ordinary host memory here.
  memset(&attr, 0x7f, sizeof attr);
  HIP_OK(hipPointerGetAttributes(&attr, pinned));
  CHECK(attr.memoryType == hipMemoryTypeHost, "pinned pointer: memoryType %d", static_cast<int>(attr.memoryType));
  CHECK(attr.hostPointer == pinned, "pinned pointer: hostPointer %p, expected %p", attr.hostPointer, pinned);

  // Memory HIP never saw: HIP 5.x answers hipErrorInvalidValue.
  std::vector<uint8_t> plain(4096);
  HIP_EXPECT(hipPointerGetAttributes(&attr, plain.data()), hipErrorInvalidValue);
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidValue);
  HIP_EXPECT(hipGetLastError(), hipSuccess);

  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(d));
}

// A hip device picks its own addresses, and one of them may be where this
// process already has memory: the stub must set it aside and use another,
// never overlap it. Host memory is mapped where an allocation just was (a
// first-fit allocator, like the chain's, hands that range out again), 64
// MiB of it: more than holding on to a few colliding 1 MiB allocations
// could step over. On a device whose allocator moves on, no collision
// happens and only the placement and the bytes are checked.
void HostMemoryWhereTheDevicePlaces() {
  if (!e2e::OnHipDevice()) return;  // The sim's window is reserved here: nothing of ours can be in it.
  Section("a device address that lands on host memory");
  const size_t n = kMiB;
  const size_t host_bytes = 64 * kMiB;
  uint8_t* probe = DeviceAlloc(n, "probe");
  HIP_OK(hipFree(probe));
  void* host = mmap(probe, host_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  CHECK(host == probe, "cannot map host memory at %p, where a freed allocation was: %s", static_cast<void*>(probe),
        host == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
  memset(host, 0x5a, host_bytes);
  uint8_t* d = DeviceAlloc(n, "allocation placed past host memory");
  const uint8_t* h = static_cast<const uint8_t*>(host);
  CHECK(d + n <= h || d >= h + host_bytes, "hipMalloc returned %p, inside host memory at [%p, %p)",
        static_cast<void*>(d), host, static_cast<const void*>(h + host_bytes));
  printf("[memory] allocated at %p, host memory at [%p, %p)\n", static_cast<void*>(d), host,
         static_cast<const void*>(h + host_bytes));
  std::vector<uint8_t> src(n), back(n);
  e2e::FillPattern(src.data(), n, 4242);
  HIP_OK(hipMemcpy(d, src.data(), n, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(back.data(), d, n, hipMemcpyDeviceToHost));
  CHECK_PATTERN(back.data(), n, 4242, "bytes through the allocation placed past host memory");
  for (size_t i = 0; i < host_bytes; ++i) CHECK(h[i] == 0x5a, "host byte %zu changed to 0x%02x", i, h[i]);
  HIP_OK(hipFree(d));
  munmap(host, host_bytes);

  // The same for bare address space (hipMemAddressReserve), where the device
  // has virtual memory management: the first fit is now the freed
  // allocation's range again, below what was set aside above.
  hipMemAllocationProp prop = {};
  prop.type = hipMemAllocationTypePinned;
  prop.location.type = hipMemLocationTypeDevice;
  prop.location.id = 0;
  size_t g = 0;
  if (hipMemGetAllocationGranularity(&g, &prop, hipMemAllocationGranularityMinimum) != hipSuccess || g == 0) {
    (void)hipGetLastError();
    printf("[memory] the device has no virtual memory management: reservations not checked\n");
    return;
  }
  const size_t rn = (n + g - 1) / g * g;
  void* r = nullptr;
  HIP_OK(hipMemAddressReserve(&r, rn, 0, nullptr, 0));
  HIP_OK(hipMemAddressFree(r, rn));
  host = mmap(r, host_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  CHECK(host == r, "cannot map host memory at %p, where a freed reservation was: %s", r,
        host == MAP_FAILED ? strerror(errno) : "mapped elsewhere");
  memset(host, 0x33, host_bytes);
  h = static_cast<const uint8_t*>(host);
  void* r2 = nullptr;
  HIP_OK(hipMemAddressReserve(&r2, rn, 0, nullptr, 0));
  const uint8_t* b = static_cast<const uint8_t*>(r2);
  CHECK(b + rn <= h || b >= h + host_bytes, "hipMemAddressReserve returned %p, inside host memory at [%p, %p)", r2,
        host, static_cast<const void*>(h + host_bytes));
  e2e::CheckNotHostAccessible(r2, rn, "a reservation placed past host memory");
  printf("[memory] reserved at %p, host memory at [%p, %p)\n", r2, host, static_cast<const void*>(h + host_bytes));
  for (size_t i = 0; i < host_bytes; ++i) CHECK(h[i] == 0x33, "host byte %zu changed to 0x%02x", i, h[i]);
  HIP_OK(hipMemAddressFree(r2, rn));
  munmap(host, host_bytes);
}

void FreeMemoryAccounting(size_t free0, size_t total0) {
  Section("hipMemGetInfo accounting");
  size_t free1 = 0, total1 = 0;
  const size_t n = 256 * kMiB;
  uint8_t* d = DeviceAlloc(n, "accounting buffer");
  HIP_OK(hipMemGetInfo(&free1, &total1));
  CHECK(total1 == total0, "total memory changed: %zu -> %zu", total0, total1);
  CHECK(free1 + n <= free0, "free memory %zu with 256 MiB allocated, %zu before", free1, free0);
  HIP_OK(hipFree(d));
  HIP_OK(hipMemGetInfo(&free1, &total1));
  CHECK(free1 == free0, "free memory is %zu after freeing, %zu at the start", free1, free0);
  // hipFree waits for the device, a host callback on a stream too: right
  // after it, the memory counts as free, though the callback still runs.
  d = DeviceAlloc(8 * kMiB, "buffer freed behind a host callback");
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  std::atomic<bool> ran{false};
  HIP_OK(hipStreamAddCallback(
      s,
      [](hipStream_t, hipError_t, void* flag) {
        usleep(300 * 1000);
        static_cast<std::atomic<bool>*>(flag)->store(true);
      },
      &ran, 0));
  HIP_OK(hipFree(d));
  HIP_OK(hipMemGetInfo(&free1, &total1));
  CHECK(free1 == free0, "free memory is %zu after a free behind a host callback, %zu at the start", free1, free0);
  HIP_OK(hipStreamSynchronize(s));
  CHECK(ran.load(), "hipStreamSynchronize returned before its host callback ran");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipMemGetInfo(&free1, &total1));
  CHECK(free1 == free0, "free memory is %zu once the callback ran, %zu at the start", free1, free0);
}

}  // namespace

int main(int argc, char** argv) {
  size_t expected_total = 2 * kGiB;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--total-mem") == 0 && i + 1 < argc) {
      expected_total = strtoull(argv[++i], nullptr, 10);
    } else {
      fprintf(stderr, "usage: %s [--total-mem BYTES]\n", argv[0]);
      return 2;
    }
  }
  double t0 = e2e::NowSeconds();
  Properties(expected_total);
  size_t free0 = 0, total0 = 0;
  HIP_OK(hipMemGetInfo(&free0, &total0));
  CHECK(total0 == expected_total, "hipMemGetInfo total %zu, expected %zu", total0, expected_total);
  CHECK(free0 > 0 && free0 <= total0, "hipMemGetInfo free %zu of %zu", free0, total0);

  HostMemoryWhereTheDevicePlaces();  // First: a first-fit allocator has no older holes to use.
  hipStream_t stream = nullptr;
  HIP_OK(hipStreamCreate(&stream));
  RoundTrips();
  Offsets();
  Memsets(stream);
  DeviceToDevice();
  DefaultDirection();
  Copy2D();
  AsyncStreamsEvents();
  PageableSourceConsumed(stream);
  PointerAttributes();
  HIP_OK(hipStreamDestroy(stream));
  FreeMemoryAccounting(free0, total0);

  size_t free_end = 0, total_end = 0;
  HIP_OK(hipMemGetInfo(&free_end, &total_end));
  CHECK(free_end == free0, "free memory at the end is %zu, %zu at the start", free_end, free0);
  HIP_EXPECT(hipGetLastError(), hipSuccess);
  printf("[memory] all checks passed in %.2f s\n", e2e::NowSeconds() - t0);
  return e2e::Finish("memory");
}
