// SimApi: the sim's semantics of the generated calls (shim_gen/annotations.txt;
// the interface ApiDevice is generated, build/worker_service/gen/api_device.h).
// Adding an annotated function means adding its method here.
//
// State is per device and session: limits, the current memory pool, pool
// attributes; DeviceReset(device) returns a device's state to its defaults,
// as hipDeviceReset does. The dispatcher has checked ctx.device and every
// :device argument; handles (pool ids) are checked here.
//
// What the sim models, and its honest limits:
//  * Limits: hipLimitStackSize (per work-item) and hipLimitMallocHeapSize
//    keep what was set; hipLimitPrintfFifoSize reads its fixed size and, as
//    in clr, cannot be set; others are hipErrorUnsupportedLimit.
//  * Shared-memory bank size: AMD GPUs bank by 4 bytes whatever is asked,
//    so a valid Set has no effect and Get answers hipSharedMemBankSizeFourByte;
//    an unknown configuration is hipErrorInvalidValue.
//  * Graph memory: hipr's graphs have no memory nodes, so usage is 0; the
//    high watermarks can only be reset (set to 0); anything else set is
//    hipErrorInvalidValue.
//  * Memory pools: one default pool per device, id device + 1, and up to
//    kMaxPools created ones (hipMemPoolCreate, as clr checks the properties;
//    hipMemPoolDestroy refuses default pools and puts a destroyed current
//    pool's device back on its default). The reuse
//    flags and release threshold keep what was set. hipr serves
//    hipMallocAsync from plain device memory, not from a pool, so the
//    used/reserved counters are hipErrorNotSupported rather than a made-up
//    number. Access: a pool's own device reads and writes it, other devices
//    have no access until hipMemPoolSetAccess grants it; descriptors are
//    checked as clr checks them (hip_mempool.cpp).
//
// Thread-safety: replay thread only.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "api_device.h"

namespace hipr::worker::sim {

class SimApi final : public ApiDevice {
 public:
  explicit SimApi(int device_count);

  void DeviceReset(int device);

  Status DeviceGetLimit(const ApiContext& ctx, const api::DeviceGetLimitIn& in, api::DeviceGetLimitOut* out) override;
  Status ExtGetLinkTypeAndHopCount(const ApiContext& ctx, const api::ExtGetLinkTypeAndHopCountIn& in,
                                   api::ExtGetLinkTypeAndHopCountOut* out) override;
  Status DeviceSetLimit(const ApiContext& ctx, const api::DeviceSetLimitIn& in, api::DeviceSetLimitOut* out) override;
  Status DeviceGetSharedMemConfig(const ApiContext& ctx, const api::DeviceGetSharedMemConfigIn& in,
                                  api::DeviceGetSharedMemConfigOut* out) override;
  Status DeviceSetSharedMemConfig(const ApiContext& ctx, const api::DeviceSetSharedMemConfigIn& in,
                                  api::DeviceSetSharedMemConfigOut* out) override;
  Status CtxGetSharedMemConfig(const ApiContext& ctx, const api::CtxGetSharedMemConfigIn& in,
                               api::CtxGetSharedMemConfigOut* out) override;
  Status CtxSetSharedMemConfig(const ApiContext& ctx, const api::CtxSetSharedMemConfigIn& in,
                               api::CtxSetSharedMemConfigOut* out) override;
  Status DeviceGraphMemTrim(const ApiContext& ctx, const api::DeviceGraphMemTrimIn& in,
                            api::DeviceGraphMemTrimOut* out) override;
  Status DeviceGetDefaultMemPool(const ApiContext& ctx, const api::DeviceGetDefaultMemPoolIn& in,
                                 api::DeviceGetDefaultMemPoolOut* out) override;
  Status DeviceGetMemPool(const ApiContext& ctx, const api::DeviceGetMemPoolIn& in,
                          api::DeviceGetMemPoolOut* out) override;
  Status DeviceSetMemPool(const ApiContext& ctx, const api::DeviceSetMemPoolIn& in,
                          api::DeviceSetMemPoolOut* out) override;
  Status MemPoolSetAttribute(const ApiContext& ctx, const api::MemPoolSetAttributeIn& in,
                             api::MemPoolSetAttributeOut* out) override;
  Status MemPoolGetAttribute(const ApiContext& ctx, const api::MemPoolGetAttributeIn& in,
                             api::MemPoolGetAttributeOut* out) override;
  Status MemPoolTrimTo(const ApiContext& ctx, const api::MemPoolTrimToIn& in, api::MemPoolTrimToOut* out) override;
  Status MemPoolSetAccess(const ApiContext& ctx, const api::MemPoolSetAccessIn& in,
                          api::MemPoolSetAccessOut* out) override;
  Status MemPoolGetAccess(const ApiContext& ctx, const api::MemPoolGetAccessIn& in,
                          api::MemPoolGetAccessOut* out) override;
  Status MemPoolCreate(const ApiContext& ctx, const api::MemPoolCreateIn& in, api::MemPoolCreateOut* out) override;
  Status MemPoolDestroy(const ApiContext& ctx, const api::MemPoolDestroyIn& in, api::MemPoolDestroyOut* out) override;
  Status ProfilerStart(const ApiContext& ctx, const api::ProfilerStartIn& in, api::ProfilerStartOut* out) override;
  Status ProfilerStop(const ApiContext& ctx, const api::ProfilerStopIn& in, api::ProfilerStopOut* out) override;

  // Defaults a device starts with (and returns to at DeviceReset).
  static constexpr uint64_t kDefaultStackBytes = 1024;
  static constexpr uint64_t kDefaultPrintfFifoBytes = 1u << 20;
  static constexpr uint64_t kDefaultMallocHeapBytes = 8u << 20;
  // Created pools a session may hold at once (hipErrorOutOfMemory beyond).
  static constexpr size_t kMaxPools = 4096;

 private:
  struct Pool {
    int device = 0;
    int32_t reuse_follow_event_dependencies = 1;
    int32_t reuse_allow_opportunistic = 1;
    int32_t reuse_allow_internal_dependencies = 1;
    uint64_t release_threshold = 0;
    std::vector<uint32_t> access;  // hipMemAccessFlags by device.
  };
  struct PerDevice {
    uint64_t stack_bytes = kDefaultStackBytes;
    uint64_t printf_fifo_bytes = kDefaultPrintfFifoBytes;
    uint64_t malloc_heap_bytes = kDefaultMallocHeapBytes;
    uint64_t current_pool = 0;  // A pool id.
  };
  // A fresh pool of `device`: only that device has access.
  Pool NewPool(int device) const;
  // The pool of id `id`, or kInvalidArgument.
  Status FindPool(uint64_t id, Pool** pool, int* device);
  uint64_t* Limit(uint32_t limit, int device);

  std::vector<PerDevice> devices_;
  std::map<uint64_t, Pool> pools_;  // By id: ids 1..devices are the default pools.
  uint64_t next_pool_ = 0;          // The next created pool's id.
};

}  // namespace hipr::worker::sim
