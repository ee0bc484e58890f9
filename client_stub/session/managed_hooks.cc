#include "client_stub/session/managed_hooks.h"

#include "client_stub/session/hip_status.h"
#include "client_stub/session/remote.h"

namespace hipr::client {

hipError_t AfterSync(Client& c, Remote& s, ManagedHooks& managed, int device, uint64_t stream, hipError_t result,
                     ReadBack order) {
  if (result != hipSuccess) return result;
  // A failed async copy into pinned memory is a deferred error.
  if (int32_t async = s.TakeAsyncError(); async != 0) return static_cast<hipError_t>(async);
  if (managed.empty()) return result;
  return ToHipError(managed.AfterSync(c, s, device, stream, order));
}

}  // namespace hipr::client
