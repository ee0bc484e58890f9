// The client's outgoing frames. Fire-and-forget calls (free, memset, stream
// and event creates/records/waits, small async copies) are encoded into a
// SendBatch and leave together in one writev when a synchronous call goes out
// (the batch rides in front of its request), when the batch grows past the
// size threshold, or when the session's flusher finds it too old.
#pragma once

#include <sys/uio.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "protocol/chunk_lz4.h"
#include "protocol/status.h"
#include "protocol/transport.h"

namespace hipr::client {

// Appends one complete frame to `out`: header, `body`, then the bytes of
// bulk[0..bulk_count) copied in as kData frames of at most `chunk_bytes`
// each, all carrying `request_id`.
void AppendFrame(std::vector<uint8_t>* out, uint16_t op, uint32_t request_id, const uint8_t* body,
                 size_t body_len, const iovec* bulk, int bulk_count, uint32_t chunk_bytes);

// Sends `prefix` (already encoded frames) followed by bulk[0..bulk_count) as
// kData frames for `request_id`, straight from the caller's buffers (never
// copied, never all in memory at once); the first writev carries the prefix
// together with the first chunks. `bulk_pinned`: the bulk stays put (pinned
// memory), so the connection may send it without a copy (SendVZeroCopy).
// With `lz4` (bulk lz4 agreed), chunks that compress go as kDataLz4 instead
// (SendBulkLz4).
// REQUIRES: the caller holds the connection's send side.
Status SendPrefixAndBulk(Connection& conn, const std::vector<uint8_t>& prefix, uint32_t request_id,
                         const iovec* bulk, int bulk_count, uint32_t chunk_bytes, bool bulk_pinned = false,
                         ChunkCompressor* lz4 = nullptr);

// Encoded fire-and-forget frames waiting to be sent. Not thread-safe: the
// session guards it.
class SendBatch {
 public:
  using Clock = std::chrono::steady_clock;

  // `now` is kept only when the batch was empty (it becomes oldest()); it
  // is ignored otherwise.
  void Append(uint16_t op, uint32_t request_id, const uint8_t* body, size_t body_len,
              const iovec* bulk, int bulk_count, uint32_t chunk_bytes, Clock::time_point now);

  bool empty() const { return frames_ == 0; }
  size_t bytes() const { return bytes_.size(); }
  size_t frames() const { return frames_; }
  // When the oldest queued frame was appended. REQUIRES: !empty().
  Clock::time_point oldest() const { return oldest_; }

  // Moves the encoded frames into *out (by swapping, so both buffers keep
  // their capacity; *out's old contents are discarded) and empties the batch.
  void TakeInto(std::vector<uint8_t>* out);

 private:
  std::vector<uint8_t> bytes_;
  size_t frames_ = 0;
  Clock::time_point oldest_{};
};

}  // namespace hipr::client
