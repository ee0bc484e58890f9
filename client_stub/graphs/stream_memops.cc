#include "client_stub/graphs/stream_memops.h"

#include <utility>

namespace hipr::client {

hipError_t BatchMemOps(Client& c, const HiprBatchMemOp* ops, unsigned count, std::vector<StreamMemOp>* out,
                       int* device) {
  if (ops == nullptr || count == 0 || count > kMaxBatchOps) return hipErrorInvalidValue;
  std::vector<StreamMemOp> converted;
  *device = -1;
  for (unsigned i = 0; i < count; ++i) {
    const HiprBatchMemOp& op = ops[i];
    const bool wait = op.operation == kBatchWait32 || op.operation == kBatchWait64;
    const bool write = op.operation == kBatchWrite32 || op.operation == kBatchWrite64;
    if (op.operation == kBatchFlush || op.operation == kBatchBarrier) {
      converted.emplace_back(std::monostate{});
      continue;
    }
    if (!wait && !write) return hipErrorInvalidValue;
    const uint8_t bytes = op.operation == kBatchWait64 || op.operation == kBatchWrite64 ? 8 : 4;
    const uint64_t p = reinterpret_cast<uint64_t>(op.value_op.address);
    DeviceAllocation a;
    if (p == 0 || p % bytes != 0 || !c.allocations().FindDevice(p, bytes, &a)) return hipErrorInvalidValue;
    if (*device < 0) *device = a.device;
    const uint64_t value = bytes == 8 ? op.value_op.value64 : op.value_op.value;
    if (wait) {
      if (op.value_op.flags > hipStreamWaitValueNor) return hipErrorInvalidValue;
      converted.emplace_back(msg::StreamWaitValueRequest{a.device, 0, p, value, bytes == 8 ? ~uint64_t{0} : 0xffffffffu,
                                                         op.value_op.flags, bytes});
    } else {
      converted.emplace_back(msg::StreamWriteValueRequest{a.device, 0, p, value, bytes});
    }
  }
  *out = std::move(converted);
  return hipSuccess;
}

}  // namespace hipr::client
