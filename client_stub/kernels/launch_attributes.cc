#include "client_stub/kernels/launch_attributes.h"

#include <atomic>

#include "client_stub/base/log.h"
#include "protocol/messages.h"

namespace hipr::client {
namespace {

const char* AttributeName(int id) {
  switch (id) {
    case kLaunchAttributeAccessPolicyWindow: return "access policy window";
    case kLaunchAttributeSynchronizationPolicy: return "synchronization policy";
    case 4: return "cluster dimension";
    case 5: return "cluster scheduling policy";
    case kLaunchAttributePriority: return "priority";
    case 9: return "memory-sync domain map";
    case 10: return "memory-sync domain";
    default: return "unknown";
  }
}

}  // namespace

hipError_t LaunchFlagsOf(const char* api, const HiprLaunchAttribute* attrs, unsigned int count, uint32_t* flags) {
  *flags = 0;
  if (count == 0) return hipSuccess;
  if (attrs == nullptr) return hipErrorInvalidValue;
  for (unsigned int i = 0; i < count; ++i) {
    const HiprLaunchAttribute& a = attrs[i];
    if (a.id == kLaunchAttributeIgnore) continue;
    if (a.id == kLaunchAttributeCooperative) {
      if (a.value.cooperative != 0) *flags |= msg::kLaunchCooperative;
      continue;
    }
    // Logged once per id (ids above 15 share a slot); constinit: may run
    // before the stub's constructors.
    static constinit std::atomic<bool> logged[17] = {};
    const int slot = a.id >= 0 && a.id < 16 ? a.id : 16;
    if (!logged[slot].exchange(true))
      HIPR_LOG_ERROR("%s: launch attribute %d (%s) is not supported (only cooperative is); "
                     "hipErrorInvalidConfiguration, as ROCm's runtime",
                     api, a.id, AttributeName(a.id));
    return hipErrorInvalidConfiguration;
  }
  return hipSuccess;
}

}  // namespace hipr::client
