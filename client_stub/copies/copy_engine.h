// The copy engine: one validated copy of `height` rows between host and
// device memory, or within device memory, sent the cheapest way the
// session allows. Direction comes from the allocation map (never from the
// kind; copy_kind.h weighs the kind as ROCm's entry points do); host-to-host
// copies are done here. The semantics per direction (blocking, async,
// pinned, the shm host segment, captures, managed memory) are described at
// the top of api/api_copy.cc, whose entry points all end here.
//
// Thread-safety: as Remote; any thread.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "client_stub/client.h"
#include "client_stub/copies/copy_kind.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/session/handle_table.h"
#include "client_stub/session/managed_hooks.h"
#include "client_stub/session/remote.h"

namespace hipr::client {

enum class CopyMode { kBlocking, kAsync };

// A validated rectangular copy: `height` rows of `width` bytes.
struct CopyRect {
  void* dst = nullptr;
  size_t dpitch = 0;
  const void* src = nullptr;
  size_t spitch = 0;
  size_t width = 0;
  size_t height = 1;
};

// Bytes spanned by `height` rows of `width` bytes `pitch` apart; false on
// overflow.
bool CopyExtent(size_t pitch, size_t width, size_t height, uint64_t* out);

// Copies `r` on `target` (a resolved stream) of `c`'s session `s`; while
// the stream captures (`graphs`), the copy becomes a node instead.
// REQUIRES: r.dst and r.src non-null, width and height > 0, pitches >=
// width. `rule`: how ROCm's entry point weighs the kind (copy_kind.h).
// hipErrorInvalidValue for memory that is neither one device allocation
// nor host memory clear of device addresses; a blocking copy waits for the
// stream's earlier work and brings managed mirrors up to date.
hipError_t CopyRows(Client& c, Remote& s, ManagedHooks& managed, GraphRegistry& graphs, const CopyRect& r,
                    hipMemcpyKind kind, KindRule rule, const StreamTarget& target, CopyMode mode);

}  // namespace hipr::client
