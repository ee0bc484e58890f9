// ROCm 6.5+'s launch attributes (hipLaunchKernelExC, hipDrvLaunchKernelEx)
// and 7.1+'s stream attributes (hipStream{Get,Set,Copy}Attribute), which use
// the same 64-byte value union. Debian's 5.2 headers lack these types, so
// they are declared here by layout (shim_gen/decls/rocm6_7.h holds the
// declarations the generator reads).
#pragma once

#include <cstdint>

#include <hip/hip_runtime_api.h>

namespace hipr::client {

// hipLaunchAttributeID; the stream attributes share the numbering
// (hipStreamAttributeSynchronizationPolicy = 3, ...Priority = 8).
enum HiprLaunchAttributeId : int {
  kLaunchAttributeIgnore = 0,
  kLaunchAttributeAccessPolicyWindow = 1,
  kLaunchAttributeCooperative = 2,
  kLaunchAttributeSynchronizationPolicy = 3,
  kLaunchAttributePriority = 8,
};

// hipSynchronizationPolicy: Auto (the default) .. BlockingSync.
constexpr int kSyncPolicyAuto = 1;
constexpr int kSyncPolicyBlockingSync = 4;

// hipLaunchAttributeValue: every member starts at offset 0 (cooperative,
// priority and syncPolicy are int-sized).
union HiprLaunchAttributeValue {
  char pad[64];
  int cooperative;
  int priority;
  int sync_policy;
};
static_assert(sizeof(HiprLaunchAttributeValue) == 64);

// hipLaunchAttribute: the id in an 8-byte slot, then the value.
struct HiprLaunchAttribute {
  int id;
  char pad[4];
  HiprLaunchAttributeValue value;
};
static_assert(sizeof(HiprLaunchAttribute) == 72);

// hipLaunchConfig_t (hipLaunchKernelExC).
struct HiprLaunchConfig {
  dim3 grid;
  dim3 block;
  size_t dynamic_shared_bytes;
  hipStream_t stream;
  HiprLaunchAttribute* attrs;
  unsigned int num_attrs;
};

// HIP_LAUNCH_CONFIG (hipDrvLaunchKernelEx).
struct HiprDrvLaunchConfig {
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int shared_bytes;
  hipStream_t stream;
  HiprLaunchAttribute* attrs;
  unsigned int num_attrs;
};

// The launch flags (msg::LaunchFlags) a launch's attribute list asks for.
// Cooperative (non-zero: a cooperative launch, zero: a plain one) and Ignore
// are honoured. Every other attribute (access-policy windows, clusters,
// per-launch priority, memory-sync domains) is refused with
// hipErrorInvalidConfiguration, as ROCm's runtime refuses it, and logged
// once per attribute id. A list with entries must not be null
// (hipErrorInvalidValue).
hipError_t LaunchFlagsOf(const char* api, const HiprLaunchAttribute* attrs, unsigned int count, uint32_t* flags);

}  // namespace hipr::client
