#include "client_stub/api/process_state.h"

#include <pthread.h>

#include "client_stub/base/log.h"

namespace hipr::client {
namespace {

// The process's one `R`, with pthread_atfork handlers that hold its lock
// across fork() and re-create it in the child.
template <class R>
struct ProcessWide {
  static R& Get() {
    static R* const r = [] {
      auto* made = new R();  // Leaked: see process_state.h.
      if (int rc = pthread_atfork(&Prepare, &Parent, &Child); rc != 0)
        HIPR_LOG_WARN("pthread_atfork failed (%d): a forked child could inherit a held lock", rc);
      return made;
    }();
    return *r;
  }
  static void Prepare() { Get().LockForFork(); }
  static void Parent() { Get().UnlockInParent(); }
  static void Child() { Get().ResetInChild(); }
};

}  // namespace

KernelRegistry& Kernels() { return ProcessWide<KernelRegistry>::Get(); }
GraphRegistry& Graphs() { return ProcessWide<GraphRegistry>::Get(); }
ArrayRegistry& Arrays() { return ProcessWide<ArrayRegistry>::Get(); }
ManagedVars& Managed() { return ProcessWide<ManagedVars>::Get(); }

}  // namespace hipr::client
