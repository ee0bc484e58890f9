// Helpers shared by the exported HIP entry points (api_*.cc): the edge where
// Status becomes hipError_t, where exceptions stop, and where the calling
// thread's last error is recorded.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <new>

#include "client_stub/allocate/device_memory.h"
#include "client_stub/api/api_result.h"
#include "client_stub/api/process_state.h"
#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"
#include "client_stub/client.h"
#include "client_stub/kernels/code_module.h"
#include "client_stub/managed/managed_vars.h"
#include "client_stub/session/hip_status.h"
#include "protocol/status.h"

namespace hipr::client {

// Runs `body` (returning hipError_t) and records its result as the calling
// thread's last error (Result); the round trips it waits for count against
// `name` (stats::ApiScope). No exception escapes: std::bad_alloc becomes
// hipErrorOutOfMemory, anything else hipErrorUnknown (logged).
// The extent of an API call for the stream ledger: the streams a call
// resolves count once its frames are queued (session/stream_ledger.h).
class LedgerScope {
 public:
  LedgerScope() { StreamLedger::Enter(); }
  ~LedgerScope() {
    if (!StreamLedger::Leave()) return;
    try {
      Client::Get().ledger().Commit();
    } catch (...) {
      // Out of host memory: the notes stay and count at the next commit.
    }
  }
  LedgerScope(const LedgerScope&) = delete;
  LedgerScope& operator=(const LedgerScope&) = delete;
};

template <class F>
hipError_t ApiCall(const char* name, F&& body) noexcept {
  stats::ApiScope scope(name);  // HIPR_STATS=1: round trips by entry point.
  LedgerScope ledger;
  try {
    return Result(body());
  } catch (const std::bad_alloc&) {
    HIPR_LOG_ERROR("%s: out of host memory", name);
    return Result(hipErrorOutOfMemory);
  } catch (const std::exception& e) {
    HIPR_LOG_ERROR("%s: internal error: %s", name, e.what());
    return Result(hipErrorUnknown);
  } catch (...) {
    HIPR_LOG_ERROR("%s: internal error", name);
    return Result(hipErrorUnknown);
  }
}

// The live session or nullptr (then the call returns hipErrorNoDevice).
inline Remote* LiveSession() { return Client::Get().LiveSession(); }

// hipErrorInvalidDevice unless 0 <= device < the session's device count.
inline hipError_t CheckDevice(const Remote& s, int device) {
  return device >= 0 && device < s.device_count() ? hipSuccess : hipErrorInvalidDevice;
}

// The calling thread's current device, checked against the session.
inline hipError_t CurrentDeviceOf(const Remote& s, int* device) {
  if (s.device_count() == 0) return hipErrorNoDevice;
  *device = CurrentDevice();
  return CheckDevice(s, *device);
}

// The legacy null stream: nullptr, or hipStreamLegacy ((hipStream_t)1,
// defined by the 6.x and 7.x headers; clr's hip::isValid takes it as the
// null stream).
inline bool IsLegacyNullStream(hipStream_t stream) {
  return stream == nullptr || reinterpret_cast<uintptr_t>(stream) == 1;
}

// The legacy null stream is id 0 on the calling thread's device;
// hipStreamPerThread is the calling thread's own blocking stream on its
// device (made at first use, no round trip); any other handle must be
// live, else hipErrorInvalidHandle.
hipError_t ResolveStream(hipStream_t stream, StreamTarget* out);

// clr answers a handle that is no live stream (destroyed, or never one)
// with hipErrorContextIsDestroyed in its stream, event-record, host-callback
// and async-copy calls (hip::isValid); ResolveStream's hipErrorInvalidHandle
// becomes that there.
inline hipError_t AsDestroyedStream(hipError_t e) {
  return e == hipErrorInvalidHandle ? hipErrorContextIsDestroyed : e;
}

// Whether ResolveStream would take `stream` as a stream (no side effects).
bool IsStreamHandle(hipStream_t stream);

// The hooks every module is made with (code_module.h): its globals are
// recorded as device memory of Client::Get(), its __managed__ variables
// attached by ManagedVars. api_common.cc.
ModuleHooks& ApiModuleHooks();

// __managed__: makes the variable's mirror (managed_vars.h), holding
// `init_value`'s `size` bytes, and writes its address to *pointer, so host
// code reading through it right after registration sees the initial value.
// Every load of the module then attaches the variable's device copy
// (ApiModuleHooks).
bool RegisterManagedVar(const void* handle, void** pointer, const void* init_value, const char* name,
                        size_t size, unsigned align);

// hipFree's path, for every caller that frees device memory. `role`:
// kPlain for hipFree(Async), kArray for an array's memory (refused for any
// other allocation). `synchronizing` (hipFree, not hipFreeAsync): refused
// while a global- or thread-local-mode capture runs on the device, as the
// device synchronization it implies is not allowed then.
hipError_t FreeDevice(void* ptr, bool synchronizing, AllocationRole role = AllocationRole::kPlain);
// AfterSync (session/managed_hooks.h) for the process's client and its
// managed memory.
inline hipError_t AfterSync(Remote& s, int device, uint64_t stream, hipError_t result,
                            ReadBack order = ReadBack::kAfterSync) {
  return AfterSync(Client::Get(), s, Managed(), device, stream, result, order);
}

}  // namespace hipr::client
