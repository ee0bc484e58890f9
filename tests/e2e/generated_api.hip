// generated_api: the functions with generated remoting (shim_gen/annotations.txt),
// one table row each, against a sim worker with two devices. Every row
// asserts behaviour: a value set and read back, state kept per device or
// reset, or the documented error for a bad argument (outputs left alone).
// run_e2e.py checks that the rows cover every annotated function.
//
// Linked against the stub (like newer_entry_points): Debian's 5.2 library
// lacks the 6.x additions declared below from their documented signatures.
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>

#include "common.h"

extern "C" {
hipError_t hipDeviceSetLimit(enum hipLimit_t limit, size_t value);
hipError_t hipDeviceGetGraphMemAttribute(int device, int attr, void* value);
hipError_t hipDeviceSetGraphMemAttribute(int device, int attr, void* value);
hipError_t hipDeviceGraphMemTrim(int device);
}

namespace {

// ROCm 6's enumerators that Debian's 5.2 headers lack.
const auto kLimitStackSize = static_cast<hipLimit_t>(0);
constexpr int kGraphMemUsedCurrent = 0;
constexpr int kGraphMemUsedHigh = 1;
constexpr int kGraphMemReservedHigh = 3;
constexpr uint64_t kSentinel = 0xfeedfacecafebeefull;

void GetLimit() {
  size_t v = kSentinel;
  HIP_EXPECT(hipDeviceGetLimit(nullptr, hipLimitMallocHeapSize), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceGetLimit(&v, static_cast<hipLimit_t>(0x42)), hipErrorUnsupportedLimit);
  CHECK(v == kSentinel, "a failed hipDeviceGetLimit wrote %zu", v);
  HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
  CHECK(v > 0 && v != kSentinel, "heap size %zu", v);
  HIP_OK(hipDeviceGetLimit(&v, hipLimitPrintfFifoSize));
  CHECK(v > 0 && v != kSentinel, "printf FIFO size %zu", v);
}

void SetLimit() {
  size_t before1 = 0;
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipDeviceGetLimit(&before1, hipLimitMallocHeapSize));
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipDeviceSetLimit(hipLimitMallocHeapSize, 64u << 20));
  // As clr: the printf FIFO is read-only.
  HIP_EXPECT(hipDeviceSetLimit(hipLimitPrintfFifoSize, 3u << 20), hipErrorUnsupportedLimit);
  HIP_OK(hipDeviceSetLimit(kLimitStackSize, 4096));
  size_t v = 0;
  HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
  CHECK(v == (64u << 20), "heap size read back as %zu", v);
  HIP_OK(hipDeviceGetLimit(&v, hipLimitPrintfFifoSize));
  CHECK(v > 0 && v != (3u << 20), "printf FIFO read back as %zu", v);
  HIP_OK(hipDeviceGetLimit(&v, kLimitStackSize));
  CHECK(v == 4096, "stack size read back as %zu", v);
  // Limits are per device: device 1 kept its own.
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
  CHECK(v == before1, "device 1's heap size changed to %zu", v);
  HIP_OK(hipSetDevice(0));
  HIP_EXPECT(hipDeviceSetLimit(static_cast<hipLimit_t>(0x42), 1), hipErrorUnsupportedLimit);
  // hipDeviceReset returns the device's limits to their defaults.
  HIP_OK(hipDeviceReset());
  HIP_OK(hipDeviceGetLimit(&v, hipLimitMallocHeapSize));
  CHECK(v == before1, "after hipDeviceReset the heap size is %zu, not the default %zu", v, before1);
}

// AMD GPUs bank shared memory by 4 bytes whatever is asked.
void GetSharedMemConfig() {
  hipSharedMemConfig c = hipSharedMemBankSizeEightByte;
  HIP_OK(hipDeviceGetSharedMemConfig(&c));
  CHECK(c == hipSharedMemBankSizeFourByte, "bank size %d", c);
  HIP_EXPECT(hipDeviceGetSharedMemConfig(nullptr), hipErrorInvalidValue);
}

void SetSharedMemConfig() {
  HIP_OK(hipDeviceSetSharedMemConfig(hipSharedMemBankSizeEightByte));
  hipSharedMemConfig c = hipSharedMemBankSizeDefault;
  HIP_OK(hipDeviceGetSharedMemConfig(&c));
  CHECK(c == hipSharedMemBankSizeFourByte, "bank size %d after asking for 8 bytes", c);
  HIP_EXPECT(hipDeviceSetSharedMemConfig(static_cast<hipSharedMemConfig>(7)), hipErrorInvalidValue);
}

void CtxGetSharedMemConfig() {
  hipSharedMemConfig c = hipSharedMemBankSizeDefault;
  HIP_OK(hipCtxGetSharedMemConfig(&c));
  CHECK(c == hipSharedMemBankSizeFourByte, "bank size %d", c);
  HIP_EXPECT(hipCtxGetSharedMemConfig(nullptr), hipErrorInvalidValue);
}

void CtxSetSharedMemConfig() {
  HIP_OK(hipCtxSetSharedMemConfig(hipSharedMemBankSizeFourByte));
  HIP_EXPECT(hipCtxSetSharedMemConfig(static_cast<hipSharedMemConfig>(-1)), hipErrorInvalidValue);
}

void GraphMemTrim() {
  HIP_EXPECT(hipDeviceGraphMemTrim(7), hipErrorInvalidDevice);
  HIP_OK(hipDeviceGraphMemTrim(1));  // Fire-and-forget: its error would surface at the synchronize.
  HIP_OK(hipDeviceSynchronize());
}

void ExtGetLinkTypeAndHopCount() {
  uint32_t type = 99;
  uint32_t hops = 99;
  HIP_OK(hipExtGetLinkTypeAndHopCount(0, 1, &type, &hops));
  CHECK(type == 4 && hops == 1, "the sim's devices are one XGMI (4) hop apart, got type %u, %u hops", type, hops);
  type = hops = 77;
  HIP_EXPECT(hipExtGetLinkTypeAndHopCount(1, 1, &type, &hops), hipErrorInvalidValue);
  HIP_EXPECT(hipExtGetLinkTypeAndHopCount(0, 2, &type, &hops), hipErrorInvalidDevice);
  HIP_EXPECT(hipExtGetLinkTypeAndHopCount(0, 1, nullptr, &hops), hipErrorInvalidValue);
  CHECK(type == 77 && hops == 77, "failed calls wrote type %u, %u hops", type, hops);
}

void GetDefaultMemPool() {
  hipMemPool_t p0 = nullptr, p0_again = nullptr, p1 = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&p0, 0));
  HIP_OK(hipDeviceGetDefaultMemPool(&p0_again, 0));
  HIP_OK(hipDeviceGetDefaultMemPool(&p1, 1));
  CHECK(p0 != nullptr && p0 == p0_again, "device 0's default pool %p then %p", (void*)p0, (void*)p0_again);
  CHECK(p1 != nullptr && p1 != p0, "devices 0 and 1 share default pool %p", (void*)p1);
  HIP_EXPECT(hipDeviceGetDefaultMemPool(&p0, 2), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceGetDefaultMemPool(nullptr, 0), hipErrorInvalidValue);
}

void GetMemPool() {
  hipMemPool_t def = nullptr, cur = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&def, 1));
  HIP_OK(hipDeviceGetMemPool(&cur, 1));
  CHECK(cur == def, "device 1's current pool %p is not its default %p", (void*)cur, (void*)def);
  // As clr: a device out of range is an invalid value here (hip-tests).
  HIP_EXPECT(hipDeviceGetMemPool(&cur, -1), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceGetMemPool(&cur, 2), hipErrorInvalidValue);
}

void SetMemPool() {
  hipMemPool_t p0 = nullptr, p1 = nullptr, cur = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&p0, 0));
  HIP_OK(hipDeviceGetDefaultMemPool(&p1, 1));
  HIP_OK(hipDeviceSetMemPool(0, p0));
  // A pool serves its own device only; a handle never handed out is refused.
  HIP_EXPECT(hipDeviceSetMemPool(0, p1), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceSetMemPool(0, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceSetMemPool(0, reinterpret_cast<hipMemPool_t>(0x7777)), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceSetMemPool(9, p0), hipErrorInvalidValue);  // As clr.
  HIP_EXPECT(hipDeviceSetMemPool(-1, p0), hipErrorInvalidValue);
  HIP_OK(hipDeviceGetMemPool(&cur, 0));
  CHECK(cur == p0, "device 0's pool is %p after refused changes", (void*)cur);
}

void MemPoolSetAttribute() {
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 0));
  uint64_t threshold = 3ull << 32;
  HIP_OK(hipMemPoolSetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold));
  uint64_t got = 0;
  HIP_OK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReleaseThreshold, &got));
  CHECK(got == threshold, "release threshold read back as %llu", (unsigned long long)got);
  // An int attribute: exactly 4 bytes are read and written.
  struct {
    int value;
    int canary;
  } flag = {0, 0x5a5a5a5a};
  HIP_OK(hipMemPoolSetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &flag.value));
  flag.value = 77;
  HIP_OK(hipMemPoolGetAttribute(pool, hipMemPoolReuseAllowOpportunistic, &flag.value));
  CHECK(flag.value == 0 && flag.canary == 0x5a5a5a5a, "read back %d, canary %#x", flag.value, flag.canary);
  // The current counters are read-only; the pool of device 1 kept its own.
  uint64_t zero = 0;
  HIP_EXPECT(hipMemPoolSetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &zero), hipErrorInvalidValue);
  hipMemPool_t pool1 = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool1, 1));
  HIP_OK(hipMemPoolGetAttribute(pool1, hipMemPoolAttrReleaseThreshold, &got));
  CHECK(got == 0, "device 1's pool threshold %llu", (unsigned long long)got);
}

void MemPoolGetAttribute() {
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 1));
  int follow = -1;
  HIP_OK(hipMemPoolGetAttribute(pool, hipMemPoolReuseFollowEventDependencies, &follow));
  CHECK(follow == 1, "hipMemPoolReuseFollowEventDependencies defaults to %d", follow);
  HIP_EXPECT(hipMemPoolGetAttribute(pool, hipMemPoolReuseFollowEventDependencies, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPoolGetAttribute(reinterpret_cast<hipMemPool_t>(0x999), hipMemPoolAttrReleaseThreshold, &follow),
             hipErrorInvalidValue);
  // hipr's allocations do not come from pools: no made-up usage numbers.
  uint64_t used = kSentinel;
  HIP_EXPECT(hipMemPoolGetAttribute(pool, hipMemPoolAttrUsedMemCurrent, &used), hipErrorNotSupported);
  CHECK(used == kSentinel, "a failed call wrote %llu", (unsigned long long)used);
}

void MemPoolTrimTo() {
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 0));
  HIP_OK(hipMemPoolTrimTo(pool, 0));
  HIP_OK(hipMemPoolTrimTo(pool, 1u << 20));
  HIP_EXPECT(hipMemPoolTrimTo(nullptr, 0), hipErrorInvalidValue);
}

hipMemAccessDesc Access(int device, hipMemAccessFlags flags) {
  hipMemAccessDesc d{};
  d.location.type = hipMemLocationTypeDevice;
  d.location.id = device;
  d.flags = flags;
  return d;
}

hipMemAccessFlags AccessOf(hipMemPool_t pool, int device) {
  hipMemLocation where{hipMemLocationTypeDevice, device};
  auto flags = static_cast<hipMemAccessFlags>(-1);
  HIP_OK(hipMemPoolGetAccess(&flags, pool, &where));
  return flags;
}

void MemPoolSetAccess() {
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 0));
  hipMemAccessDesc grant[] = {Access(1, hipMemAccessFlagsProtRead), Access(0, hipMemAccessFlagsProtReadWrite)};
  HIP_OK(hipMemPoolSetAccess(pool, grant, 2));
  CHECK(AccessOf(pool, 1) == hipMemAccessFlagsProtRead, "device 1's access %d", AccessOf(pool, 1));
  hipMemAccessDesc upgrade = Access(1, hipMemAccessFlagsProtReadWrite);
  HIP_OK(hipMemPoolSetAccess(pool, &upgrade, 1));
  CHECK(AccessOf(pool, 1) == hipMemAccessFlagsProtReadWrite, "device 1's access %d", AccessOf(pool, 1));
  // As clr: access cannot be revoked; bad locations and too many descriptors.
  hipMemAccessDesc revoke = Access(1, hipMemAccessFlagsProtNone);
  HIP_EXPECT(hipMemPoolSetAccess(pool, &revoke, 1), hipErrorInvalidDevice);
  hipMemAccessDesc nowhere = Access(5, hipMemAccessFlagsProtRead);
  HIP_EXPECT(hipMemPoolSetAccess(pool, &nowhere, 1), hipErrorInvalidDevice);
  hipMemAccessDesc three[] = {upgrade, upgrade, upgrade};
  HIP_EXPECT(hipMemPoolSetAccess(pool, three, 3), hipErrorInvalidDevice);
  // A count past the devices is refused before the list is read (clr): a
  // list of one named as a thousand is never read past its end.
  HIP_EXPECT(hipMemPoolSetAccess(pool, &upgrade, 1000), hipErrorInvalidDevice);
  HIP_EXPECT(hipMemPoolSetAccess(pool, nullptr, 1), hipErrorInvalidValue);
  CHECK(AccessOf(pool, 1) == hipMemAccessFlagsProtReadWrite, "a refused call changed device 1's access");
}

void MemPoolGetAccess() {
  hipMemPool_t pool = nullptr;
  HIP_OK(hipDeviceGetDefaultMemPool(&pool, 1));
  CHECK(AccessOf(pool, 1) == hipMemAccessFlagsProtReadWrite, "a pool's own device has access %d", AccessOf(pool, 1));
  CHECK(AccessOf(pool, 0) == hipMemAccessFlagsProtNone, "another device has access %d", AccessOf(pool, 0));
  hipMemLocation bad{hipMemLocationTypeInvalid, 0};
  auto flags = static_cast<hipMemAccessFlags>(-1);
  HIP_EXPECT(hipMemPoolGetAccess(&flags, pool, &bad), hipErrorInvalidValue);
  CHECK(flags == static_cast<hipMemAccessFlags>(-1), "a failed call wrote %d", flags);
  hipMemLocation dev0{hipMemLocationTypeDevice, 0};
  HIP_EXPECT(hipMemPoolGetAccess(nullptr, pool, &dev0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPoolGetAccess(&flags, pool, nullptr), hipErrorInvalidValue);
}

hipMemPoolProps PinnedOn(int device) {
  hipMemPoolProps props{};
  props.allocType = hipMemAllocationTypePinned;
  props.handleTypes = hipMemHandleTypeNone;
  props.location.type = hipMemLocationTypeDevice;
  props.location.id = device;
  return props;
}

void MemPoolCreate() {
  hipMemPoolProps props = PinnedOn(1);
  hipMemPool_t pool = nullptr, def = nullptr, cur = nullptr;
  HIP_OK(hipMemPoolCreate(&pool, &props));
  HIP_OK(hipDeviceGetDefaultMemPool(&def, 1));
  CHECK(pool != nullptr && pool != def, "created pool %p, default %p", (void*)pool, (void*)def);
  // A created pool can become its device's current pool, and only its device's.
  HIP_OK(hipDeviceSetMemPool(1, pool));
  HIP_OK(hipDeviceGetMemPool(&cur, 1));
  CHECK(cur == pool, "device 1's current pool %p, set %p", (void*)cur, (void*)pool);
  HIP_EXPECT(hipDeviceSetMemPool(0, pool), hipErrorInvalidValue);
  // Its own attributes and access.
  uint64_t threshold = 1;
  HIP_OK(hipMemPoolGetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold));
  CHECK(threshold == 0, "a new pool's release threshold is %llu", (unsigned long long)threshold);
  CHECK(AccessOf(pool, 1) == hipMemAccessFlagsProtReadWrite && AccessOf(pool, 0) == hipMemAccessFlagsProtNone,
        "a new pool's access %d/%d", AccessOf(pool, 0), AccessOf(pool, 1));
  // As clr: pinned pools on a device only.
  hipMemPool_t bad = nullptr;
  hipMemPoolProps wrong = PinnedOn(1);
  wrong.allocType = hipMemAllocationTypeInvalid;
  HIP_EXPECT(hipMemPoolCreate(&bad, &wrong), hipErrorInvalidValue);
  wrong = PinnedOn(5);
  HIP_EXPECT(hipMemPoolCreate(&bad, &wrong), hipErrorInvalidValue);
  CHECK(bad == nullptr, "a failed create wrote %p", (void*)bad);
  HIP_EXPECT(hipMemPoolCreate(nullptr, &props), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPoolCreate(&bad, nullptr), hipErrorInvalidValue);
  HIP_OK(hipMemPoolDestroy(pool));
}

void MemPoolDestroy() {
  hipMemPoolProps props = PinnedOn(0);
  hipMemPool_t pool = nullptr, def = nullptr, cur = nullptr;
  HIP_OK(hipMemPoolCreate(&pool, &props));
  HIP_OK(hipDeviceGetDefaultMemPool(&def, 0));
  HIP_OK(hipDeviceSetMemPool(0, pool));
  // Destroying the current pool puts the device back on its default.
  HIP_OK(hipMemPoolDestroy(pool));
  HIP_OK(hipDeviceGetMemPool(&cur, 0));
  CHECK(cur == def, "after destroying the current pool, device 0 uses %p, not its default %p", (void*)cur,
        (void*)def);
  // A destroyed pool is gone; a default pool cannot be destroyed.
  HIP_EXPECT(hipMemPoolDestroy(pool), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPoolTrimTo(pool, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPoolDestroy(def), hipErrorInvalidValue);
  HIP_EXPECT(hipMemPoolDestroy(nullptr), hipErrorInvalidValue);
}

struct Row {
  const char* function;
  void (*check)();
};

// As clr: profiler control is not supported, started or not; the answer
// comes back from the worker's device each time.
void ProfilerStart() {
  (void)hipGetLastError();
  HIP_EXPECT(hipProfilerStart(), hipErrorNotSupported);
  HIP_EXPECT(hipProfilerStart(), hipErrorNotSupported);
  HIP_EXPECT(hipGetLastError(), hipErrorNotSupported);
  HIP_OK(hipGetLastError());
}

void ProfilerStop() {
  (void)hipGetLastError();
  HIP_EXPECT(hipProfilerStop(), hipErrorNotSupported);
  HIP_EXPECT(hipProfilerStop(), hipErrorNotSupported);
  HIP_EXPECT(hipGetLastError(), hipErrorNotSupported);
  HIP_OK(hipGetLastError());
}

const Row kRows[] = {
    {"hipDeviceGetLimit", GetLimit},
    {"hipDeviceSetLimit", SetLimit},
    {"hipDeviceGetSharedMemConfig", GetSharedMemConfig},
    {"hipDeviceSetSharedMemConfig", SetSharedMemConfig},
    {"hipCtxGetSharedMemConfig", CtxGetSharedMemConfig},
    {"hipCtxSetSharedMemConfig", CtxSetSharedMemConfig},
    {"hipDeviceGraphMemTrim", GraphMemTrim},
    {"hipExtGetLinkTypeAndHopCount", ExtGetLinkTypeAndHopCount},
    {"hipDeviceGetDefaultMemPool", GetDefaultMemPool},
    {"hipDeviceGetMemPool", GetMemPool},
    {"hipDeviceSetMemPool", SetMemPool},
    {"hipMemPoolSetAttribute", MemPoolSetAttribute},
    {"hipMemPoolGetAttribute", MemPoolGetAttribute},
    {"hipMemPoolTrimTo", MemPoolTrimTo},
    {"hipMemPoolSetAccess", MemPoolSetAccess},
    {"hipMemPoolGetAccess", MemPoolGetAccess},
    {"hipMemPoolCreate", MemPoolCreate},
    {"hipMemPoolDestroy", MemPoolDestroy},
    {"hipProfilerStart", ProfilerStart},
    {"hipProfilerStop", ProfilerStop},
};

}  // namespace

int main() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == 2, "expected a worker with two sim devices, got %d", count);
  for (const Row& row : kRows) {
    HIP_OK(hipSetDevice(0));
    row.check();
    printf("generated row passed: %s\n", row.function);
  }
  return e2e::Finish("generated_api");
}
