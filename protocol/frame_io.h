// Frames over a Connection: header + msgpack body, and bulk bytes as a run
// of kData frames that are written straight from, and read straight into,
// the caller's buffers (scatter-gather; no intermediate copy, never the whole
// transfer in memory).
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <vector>

#include "protocol/chunk_lz4.h"
#include "protocol/codec.h"
#include "protocol/transport.h"
#include "protocol/wire.h"

namespace hipr {

// Walks a list of buffers, handing out slices of at most a given size.
class IovCursor {
 public:
  IovCursor(const iovec* iov, int count);
  // Writes up to `max_slices` slices covering up to `max_bytes` bytes into
  // `out` and advances past them; returns the bytes covered.
  size_t Take(size_t max_bytes, iovec* out, int max_slices, int* slices);
  uint64_t Remaining() const { return remaining_; }
  // The contiguous bytes at the cursor (the next non-empty buffer's rest):
  // *len of them at the returned address; nullptr and 0 at the end.
  uint8_t* Peek(size_t* len);
  // Advances past `bytes` (at most Remaining()).
  void Skip(size_t bytes);

 private:
  const iovec* iov_;
  int count_;
  int index_ = 0;
  size_t offset_ = 0;
  uint64_t remaining_ = 0;
};

uint64_t IovBytes(const iovec* iov, int count);

// Whether the host memory of a bulk transfer stays put until its owner
// calls Connection::ForgetMemory for it (pinned host memory, device memory
// the worker owns): a connection may then move it without copies through
// its own buffers (SendVZeroCopy, RecvVZeroCopy; rdma: registered memory
// the peer reads from or that an RDMA READ fills). kTransient memory is
// valid only during the call.
enum class BulkMemory : uint8_t { kTransient, kStays };

// Sends one frame: header, `body`, then `bulk` (if any) as kData frames of
// at most `chunk_bytes`, with as few syscalls as the iovec limit allows.
// REQUIRES: the caller holds the connection's send side.
Status SendFrame(Connection& conn, uint16_t op, uint32_t request_id, const uint8_t* body,
                 size_t body_len, const iovec* bulk = nullptr, int bulk_count = 0,
                 uint32_t chunk_bytes = wire::kDefaultChunkBytes);

inline Status SendFrame(Connection& conn, uint16_t op, uint32_t request_id,
                        const codec::BodyWriter& body, const iovec* bulk = nullptr,
                        int bulk_count = 0, uint32_t chunk_bytes = wire::kDefaultChunkBytes) {
  return SendFrame(conn, op, request_id, body.data(), body.size(), bulk, bulk_count, chunk_bytes);
}

// Sends only the kData frames of a bulk transfer. With `lz4` (a direction
// that negotiated kDataLz4), see SendBulkLz4.
Status SendBulk(Connection& conn, uint32_t request_id, const iovec* bulk, int bulk_count,
                uint32_t chunk_bytes, ChunkCompressor* lz4 = nullptr,
                BulkMemory memory = BulkMemory::kTransient);

// Sends `prefix` (already encoded frames; may be empty) and then a bulk
// transfer in chunks of at most min(chunk_bytes, ChunkCompressor::kChunkBytes),
// each as kDataLz4 where `lz4` finds that it pays and otherwise as kData
// straight from `bulk`. One writev per chunk, the prefix in the first, so
// compressing a chunk overlaps with the network taking the one before.
// A transfer sent in several calls keeps one backoff: the caller calls
// lz4.BeginTransfer() at the start of each transfer.
// REQUIRES: the caller holds the connection's send side.
Status SendBulkLz4(Connection& conn, const uint8_t* prefix, size_t prefix_len, uint32_t request_id,
                   const iovec* bulk, int bulk_count, uint32_t chunk_bytes, ChunkCompressor& lz4);

// Reads and validates a header: magic, a version this build speaks, and a
// payload no larger than kMaxPayloadBytes. Does not read the payload.
Status ReadHeader(Connection& conn, wire::FrameHeader* header);

// Reads a payload of at most kMaxBodyBytes into `body` (resized).
Status ReadBody(Connection& conn, const wire::FrameHeader& header, std::vector<uint8_t>* body);

// Reads the kData frames of one bulk transfer for `request_id`, placing the
// bytes straight into `dst` (whose sizes sum to the transfer size).
// Heartbeats between chunks are skipped; anything else is a protocol error,
// except kFatal, whose message is returned as a session error. kDataLz4
// chunks are accepted only with `lz4` (see BulkReader).
Status ReadBulk(Connection& conn, uint32_t request_id, const iovec* dst, int dst_count,
                ChunkInflater* lz4 = nullptr, BulkMemory memory = BulkMemory::kTransient);

// Reads one bulk transfer of `total` bytes for `request_id` in pieces of any
// size, independent of how the sender cut it into chunk frames.
//
// With `lz4` (the direction negotiated kDataLz4; borrowed, outlives the
// reader) kDataLz4 chunks are accepted too: a chunk decompresses straight
// into the destination when the piece being read has room for all of it in
// one buffer, else into the inflater's buffer and is copied out from there.
// Without, a kDataLz4 frame is a protocol error.
class BulkReader {
 public:
  BulkReader(Connection& conn, uint32_t request_id, uint64_t total, ChunkInflater* lz4 = nullptr)
      : conn_(conn), request_id_(request_id), remaining_(total), lz4_(lz4) {}
  // Reads the next IovBytes(dst) bytes straight into `dst`.
  Status Read(const iovec* dst, int dst_count, BulkMemory memory = BulkMemory::kTransient);
  // Reads and drops whatever is left of the transfer.
  Status DiscardRest();
  uint64_t remaining() const { return remaining_; }

 private:
  // Copies decoded bytes of the current kDataLz4 chunk into `cursor`.
  void TakeDecoded(IovCursor& cursor);

  Connection& conn_;
  const uint32_t request_id_;
  uint64_t remaining_;      // Bytes of the transfer not consumed yet.
  uint32_t in_frame_ = 0;   // Bytes of the current kData frame not consumed yet.
  ChunkInflater* const lz4_;
  uint32_t decoded_len_ = 0;   // Length of the chunk in lz4_->decoded()...
  uint32_t decoded_left_ = 0;  // ...and how much of it is not consumed yet.
};

// Reads and drops `bytes` of bulk for `request_id` (a copy that failed
// validation must still be consumed to keep the stream in step).
Status DiscardBulk(Connection& conn, uint32_t request_id, uint64_t bytes);

// Skips a payload the caller does not want.
Status SkipPayload(Connection& conn, uint32_t length);

}  // namespace hipr
