#include "worker_service/sim/sim_api.h"

#include <hip/hip_runtime_api.h>
#include <spdlog/spdlog.h>

#include <string>

namespace hipr::worker::sim {
namespace {

// hipLimit_t. hipLimitStackSize (0) is in ROCm 6's headers only.
constexpr uint32_t kLimitStackSize = 0;
constexpr uint32_t kLimitPrintfFifoSize = 1;
constexpr uint32_t kLimitMallocHeapSize = 2;

// hipSharedMemConfig.
constexpr uint32_t kBankSizeDefault = 0;
constexpr uint32_t kBankSizeFourByte = 1;
constexpr uint32_t kBankSizeEightByte = 2;

Status Invalid(std::string what) { return Status(StatusCode::kInvalidArgument, std::move(what)); }

Status CheckBankSize(uint32_t config) {
  if (config == kBankSizeDefault || config == kBankSizeFourByte || config == kBankSizeEightByte) return Status::Ok();
  return Invalid("unknown shared memory configuration " + std::to_string(config));
}

}  // namespace

SimApi::SimApi(int device_count) : devices_(device_count), next_pool_(static_cast<uint64_t>(device_count) + 1) {
  for (int d = 0; d < device_count; ++d) DeviceReset(d);
}

SimApi::Pool SimApi::NewPool(int device) const {
  Pool pool;
  pool.device = device;
  pool.access.assign(devices_.size(), hipMemAccessFlagsProtNone);
  pool.access[device] = hipMemAccessFlagsProtReadWrite;
  return pool;
}

void SimApi::DeviceReset(int device) {
  devices_.at(device) = PerDevice{};
  const uint64_t default_id = static_cast<uint64_t>(device) + 1;
  devices_[device].current_pool = default_id;
  // The device's created pools go; its default pool starts afresh.
  std::erase_if(pools_, [&](const auto& p) { return p.second.device == device; });
  pools_[default_id] = NewPool(device);
}

uint64_t* SimApi::Limit(uint32_t limit, int device) {
  PerDevice& d = devices_[device];
  switch (limit) {
    case kLimitStackSize: return &d.stack_bytes;
    case kLimitPrintfFifoSize: return &d.printf_fifo_bytes;
    case kLimitMallocHeapSize: return &d.malloc_heap_bytes;
    default: return nullptr;
  }
}

// The sim models the GCDs of one MI-series node: every pair is one XGMI hop
// apart (HSA_AMD_LINK_INFO_TYPE_XGMI), as its peer access says.
Status SimApi::ExtGetLinkTypeAndHopCount(const ApiContext&, const api::ExtGetLinkTypeAndHopCountIn& in,
                                         api::ExtGetLinkTypeAndHopCountOut* out) {
  if (in.device1 == in.device2) return Invalid("a device has no link to itself");
  constexpr uint32_t kHsaLinkXgmi = 4;
  out->linktype = kHsaLinkXgmi;
  out->hopcount = 1;
  return Status::Ok();
}

Status SimApi::DeviceGetLimit(const ApiContext& ctx, const api::DeviceGetLimitIn& in, api::DeviceGetLimitOut* out) {
  const uint64_t* value = Limit(in.limit, ctx.device);
  if (value == nullptr)
    return Status(StatusCode::kInvalidArgument, "unknown limit " + std::to_string(in.limit), hipErrorUnsupportedLimit);
  out->pValue = *value;
  return Status::Ok();
}

Status SimApi::DeviceSetLimit(const ApiContext& ctx, const api::DeviceSetLimitIn& in, api::DeviceSetLimitOut*) {
  uint64_t* value = Limit(in.limit, ctx.device);
  // As clr: the printf FIFO can be read but not resized.
  if (value == nullptr || in.limit == kLimitPrintfFifoSize)
    return Status(StatusCode::kInvalidArgument, "limit " + std::to_string(in.limit) + " cannot be set",
                  hipErrorUnsupportedLimit);
  *value = in.value;
  return Status::Ok();
}

Status SimApi::DeviceGetSharedMemConfig(const ApiContext&, const api::DeviceGetSharedMemConfigIn&,
                                        api::DeviceGetSharedMemConfigOut* out) {
  out->pConfig = kBankSizeFourByte;
  return Status::Ok();
}

Status SimApi::DeviceSetSharedMemConfig(const ApiContext&, const api::DeviceSetSharedMemConfigIn& in,
                                        api::DeviceSetSharedMemConfigOut*) {
  return CheckBankSize(in.config);
}

Status SimApi::CtxGetSharedMemConfig(const ApiContext&, const api::CtxGetSharedMemConfigIn&,
                                     api::CtxGetSharedMemConfigOut* out) {
  out->pConfig = kBankSizeFourByte;
  return Status::Ok();
}

Status SimApi::CtxSetSharedMemConfig(const ApiContext&, const api::CtxSetSharedMemConfigIn& in,
                                     api::CtxSetSharedMemConfigOut*) {
  return CheckBankSize(in.config);
}

Status SimApi::DeviceGraphMemTrim(const ApiContext&, const api::DeviceGraphMemTrimIn&, api::DeviceGraphMemTrimOut*) {
  return Status::Ok();  // Nothing is cached for graphs.
}

Status SimApi::FindPool(uint64_t id, Pool** pool, int* device) {
  auto it = pools_.find(id);
  if (it == pools_.end()) return Invalid("unknown memory pool " + std::to_string(id));
  *device = it->second.device;
  *pool = &it->second;
  return Status::Ok();
}

Status SimApi::DeviceGetDefaultMemPool(const ApiContext&, const api::DeviceGetDefaultMemPoolIn& in,
                                       api::DeviceGetDefaultMemPoolOut* out) {
  out->mem_pool = static_cast<uint64_t>(in.device) + 1;
  return Status::Ok();
}

Status SimApi::DeviceGetMemPool(const ApiContext&, const api::DeviceGetMemPoolIn& in,
                                api::DeviceGetMemPoolOut* out) {
  out->mem_pool = devices_[in.device].current_pool;
  return Status::Ok();
}

Status SimApi::DeviceSetMemPool(const ApiContext&, const api::DeviceSetMemPoolIn& in, api::DeviceSetMemPoolOut*) {
  Pool* pool = nullptr;
  int owner = 0;
  HIPR_RETURN_IF_ERROR(FindPool(in.mem_pool, &pool, &owner));
  if (owner != in.device)
    return Invalid("memory pool " + std::to_string(in.mem_pool) + " belongs to device " + std::to_string(owner));
  devices_[in.device].current_pool = in.mem_pool;
  return Status::Ok();
}

Status SimApi::MemPoolSetAttribute(const ApiContext&, const api::MemPoolSetAttributeIn& in,
                                   api::MemPoolSetAttributeOut*) {
  Pool* pool = nullptr;
  int owner = 0;
  HIPR_RETURN_IF_ERROR(FindPool(in.mem_pool, &pool, &owner));
  switch (in.attr) {
    case hipMemPoolReuseFollowEventDependencies:
      pool->reuse_follow_event_dependencies = static_cast<int32_t>(in.value);
      return Status::Ok();
    case hipMemPoolReuseAllowOpportunistic:
      pool->reuse_allow_opportunistic = static_cast<int32_t>(in.value);
      return Status::Ok();
    case hipMemPoolReuseAllowInternalDependencies:
      pool->reuse_allow_internal_dependencies = static_cast<int32_t>(in.value);
      return Status::Ok();
    case hipMemPoolAttrReleaseThreshold:
      pool->release_threshold = in.value;
      return Status::Ok();
    case hipMemPoolAttrReservedMemHigh:
    case hipMemPoolAttrUsedMemHigh:
      // Watermarks can only be reset; the pool never holds memory.
      return in.value == 0 ? Status::Ok() : Invalid("a memory pool high watermark can only be reset to 0");
    default:  // The current counters are read-only; anything else is unknown.
      return Invalid("memory pool attribute " + std::to_string(in.attr) + " cannot be set");
  }
}

Status SimApi::MemPoolGetAttribute(const ApiContext&, const api::MemPoolGetAttributeIn& in,
                                   api::MemPoolGetAttributeOut* out) {
  Pool* pool = nullptr;
  int owner = 0;
  HIPR_RETURN_IF_ERROR(FindPool(in.mem_pool, &pool, &owner));
  switch (in.attr) {
    case hipMemPoolReuseFollowEventDependencies:
      out->value = static_cast<uint32_t>(pool->reuse_follow_event_dependencies);
      return Status::Ok();
    case hipMemPoolReuseAllowOpportunistic:
      out->value = static_cast<uint32_t>(pool->reuse_allow_opportunistic);
      return Status::Ok();
    case hipMemPoolReuseAllowInternalDependencies:
      out->value = static_cast<uint32_t>(pool->reuse_allow_internal_dependencies);
      return Status::Ok();
    case hipMemPoolAttrReleaseThreshold:
      out->value = pool->release_threshold;
      return Status::Ok();
    case hipMemPoolAttrReservedMemCurrent:
    case hipMemPoolAttrReservedMemHigh:
    case hipMemPoolAttrUsedMemCurrent:
    case hipMemPoolAttrUsedMemHigh:
      spdlog::info("hipMemPoolGetAttribute({}): hipr does not allocate from memory pools; not supported", in.attr);
      return Status(StatusCode::kNotSupported, "memory pool usage counters are not modelled");
    default:
      return Invalid("unknown memory pool attribute " + std::to_string(in.attr));
  }
}

Status SimApi::MemPoolTrimTo(const ApiContext&, const api::MemPoolTrimToIn& in, api::MemPoolTrimToOut*) {
  Pool* pool = nullptr;
  int owner = 0;
  return FindPool(in.mem_pool, &pool, &owner);  // The pool holds nothing to release.
}

}  // namespace hipr::worker::sim

namespace hipr::worker::sim {

Status SimApi::MemPoolSetAccess(const ApiContext& ctx, const api::MemPoolSetAccessIn& in,
                                api::MemPoolSetAccessOut*) {
  Pool* pool = nullptr;
  int owner = 0;
  HIPR_RETURN_IF_ERROR(FindPool(in.mem_pool, &pool, &owner));
  auto invalid_device = [](const std::string& why) {
    return Status(StatusCode::kInvalidDevice, why);
  };
  if (in.count > static_cast<uint64_t>(ctx.device_count)) return invalid_device("more descriptors than devices");
  // All descriptors are checked before any applies.
  for (const auto& d : in.desc_list) {
    if (d.location.type != hipMemLocationTypeDevice) return Invalid("access location is not a device");
    if (d.location.id < 0 || d.location.id >= ctx.device_count)
      return invalid_device("access location device " + std::to_string(d.location.id) + " does not exist");
    // As clr: access cannot be revoked, and unknown flags are refused.
    if (d.flags == hipMemAccessFlagsProtNone) return invalid_device("hipMemAccessFlagsProtNone cannot be set");
    if (d.flags > hipMemAccessFlagsProtReadWrite) return Invalid("unknown access flags " + std::to_string(d.flags));
  }
  for (const auto& d : in.desc_list) pool->access[d.location.id] = d.flags;
  return Status::Ok();
}

Status SimApi::MemPoolGetAccess(const ApiContext& ctx, const api::MemPoolGetAccessIn& in,
                                api::MemPoolGetAccessOut* out) {
  Pool* pool = nullptr;
  int owner = 0;
  HIPR_RETURN_IF_ERROR(FindPool(in.mem_pool, &pool, &owner));
  if (in.location.type != hipMemLocationTypeDevice || in.location.id < 0 || in.location.id >= ctx.device_count)
    return Invalid("access location is not a device of the session");
  out->flags = pool->access[in.location.id];
  return Status::Ok();
}

}  // namespace hipr::worker::sim

namespace hipr::worker::sim {

Status SimApi::MemPoolCreate(const ApiContext& ctx, const api::MemPoolCreateIn& in, api::MemPoolCreateOut* out) {
  const auto& props = in.pool_props;
  // As clr: pinned allocations only, on a device of the session.
  if (props.allocType != hipMemAllocationTypePinned)
    return Invalid("memory pools hold pinned allocations only, not type " + std::to_string(props.allocType));
  if (props.location.type != hipMemLocationTypeDevice || props.location.id < 0 ||
      props.location.id >= ctx.device_count)
    return Invalid("a memory pool's location must be a device of the session");
  if (pools_.size() - devices_.size() >= kMaxPools)
    return Status(StatusCode::kResourceExhausted, "too many memory pools in this session");
  const uint64_t id = next_pool_++;
  pools_[id] = NewPool(props.location.id);
  out->mem_pool = id;
  return Status::Ok();
}

Status SimApi::MemPoolDestroy(const ApiContext&, const api::MemPoolDestroyIn& in, api::MemPoolDestroyOut*) {
  Pool* pool = nullptr;
  int owner = 0;
  HIPR_RETURN_IF_ERROR(FindPool(in.mem_pool, &pool, &owner));
  const uint64_t default_id = static_cast<uint64_t>(owner) + 1;
  if (in.mem_pool == default_id) return Invalid("a device's default memory pool cannot be destroyed");
  if (devices_[owner].current_pool == in.mem_pool) devices_[owner].current_pool = default_id;
  pools_.erase(in.mem_pool);
  return Status::Ok();
}

// Profiler control: clr answers hipErrorNotSupported to both, whatever the
// state; the sim has no profiler to start either.
Status SimApi::ProfilerStart(const ApiContext&, const api::ProfilerStartIn&, api::ProfilerStartOut*) {
  return Status(StatusCode::kNotSupported, "the sim device has no profiler (clr: hipErrorNotSupported)");
}

Status SimApi::ProfilerStop(const ApiContext&, const api::ProfilerStopIn&, api::ProfilerStopOut*) {
  return Status(StatusCode::kNotSupported, "the sim device has no profiler (clr: hipErrorNotSupported)");
}

}  // namespace hipr::worker::sim
