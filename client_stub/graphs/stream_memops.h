// Batched stream memory operations (ROCm 6.4's hipStreamBatchMemOp and
// its graph nodes): the parameters, declared by layout (Debian's 5.2
// header has none), and their conversion to the requests the worker runs.
#pragma once

#include <cstdint>
#include <variant>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "client_stub/client.h"
#include "protocol/messages.h"

namespace hipr::client {

// hipStreamBatchMemOpParams: a 48-byte union whose wait and write members
// share one shape.
union HiprBatchMemOp {
  int operation;
  struct {
    int operation;
    void* address;
    union {
      uint32_t value;
      uint64_t value64;
    };
    unsigned flags;
    void* alias;
  } value_op;
  uint64_t pad[6];
};
static_assert(sizeof(HiprBatchMemOp) == 48, "hipStreamBatchMemOpParams is 48 bytes");

// hipStreamBatchMemOpType.
enum : int { kBatchWait32 = 1, kBatchWrite32 = 2, kBatchFlush = 3, kBatchWait64 = 4, kBatchWrite64 = 5, kBatchBarrier = 6 };
// clr's limit on one batch.
inline constexpr unsigned kMaxBatchOps = 256;

// One operation as the worker runs it; barriers and flushes order nothing
// beyond the stream and become nothing (monostate).
using StreamMemOp = std::variant<std::monostate, msg::StreamWaitValueRequest, msg::StreamWriteValueRequest>;

// Checks `count` operations (1..kMaxBatchOps: known kinds and wait
// conditions, device memory, aligned) and converts them, in order; a wait
// compares the whole value. *device: the device of the first operation's
// memory (or -1 when none names memory), which must be device memory of
// `c`. hipErrorInvalidValue for any bad one, with nothing converted.
hipError_t BatchMemOps(Client& c, const HiprBatchMemOp* ops, unsigned count, std::vector<StreamMemOp>* out,
                       int* device);

}  // namespace hipr::client
