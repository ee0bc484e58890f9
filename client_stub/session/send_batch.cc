#include "client_stub/session/send_batch.h"

#include <algorithm>
#include <cstring>

#include "protocol/frame_io.h"
#include "protocol/wire.h"

namespace hipr::client {
namespace {

constexpr int kChunksPerSend = 4;
constexpr int kMaxSlicesPerChunk = 256;

void AppendHeader(std::vector<uint8_t>* out, uint16_t op, uint32_t request_id, uint32_t length) {
  uint8_t raw[sizeof(wire::FrameHeader)];
  wire::EncodeHeader(wire::MakeHeader(op, request_id, length), raw);
  out->insert(out->end(), raw, raw + sizeof raw);
}

uint32_t ClampChunk(uint32_t chunk_bytes) {
  return std::clamp(chunk_bytes, wire::kMinChunkBytes, wire::kMaxChunkBytes);
}

}  // namespace

void AppendFrame(std::vector<uint8_t>* out, uint16_t op, uint32_t request_id, const uint8_t* body,
                 size_t body_len, const iovec* bulk, int bulk_count, uint32_t chunk_bytes) {
  const uint32_t chunk = ClampChunk(chunk_bytes);
  const uint64_t bulk_bytes = IovBytes(bulk, bulk_count);
  const uint64_t chunks = (bulk_bytes + chunk - 1) / chunk;
  out->reserve(out->size() + sizeof(wire::FrameHeader) * (1 + chunks) + body_len + bulk_bytes);
  AppendHeader(out, op, request_id, static_cast<uint32_t>(body_len));
  out->insert(out->end(), body, body + body_len);
  IovCursor cursor(bulk, bulk_count);
  iovec slices[kMaxSlicesPerChunk];
  while (cursor.Remaining() > 0) {
    const uint64_t len = std::min<uint64_t>(cursor.Remaining(), chunk);
    AppendHeader(out, static_cast<uint16_t>(wire::Op::kData), request_id, static_cast<uint32_t>(len));
    uint64_t left = len;
    while (left > 0) {
      int n = 0;
      left -= cursor.Take(left, slices, kMaxSlicesPerChunk, &n);
      for (int i = 0; i < n; ++i) {
        const auto* p = static_cast<const uint8_t*>(slices[i].iov_base);
        out->insert(out->end(), p, p + slices[i].iov_len);
      }
    }
  }
}

Status SendPrefixAndBulk(Connection& conn, const std::vector<uint8_t>& prefix, uint32_t request_id,
                         const iovec* bulk, int bulk_count, uint32_t chunk_bytes, bool bulk_pinned,
                         ChunkCompressor* lz4) {
  if (lz4 != nullptr && bulk_count > 0) {
    lz4->BeginTransfer();
    return SendBulkLz4(conn, prefix.data(), prefix.size(), request_id, bulk, bulk_count, chunk_bytes, *lz4);
  }
  const uint32_t chunk = ClampChunk(chunk_bytes);
  uint8_t headers[kChunksPerSend][sizeof(wire::FrameHeader)];
  std::vector<iovec> iov;
  iov.reserve(1 + kChunksPerSend * (1 + kMaxSlicesPerChunk));
  if (!prefix.empty()) iov.push_back({const_cast<uint8_t*>(prefix.data()), prefix.size()});
  IovCursor cursor(bulk, bulk_count);
  do {
    for (int c = 0; c < kChunksPerSend && cursor.Remaining() > 0; ++c) {
      const size_t hdr = iov.size();
      iov.push_back({headers[c], sizeof(wire::FrameHeader)});
      iov.resize(hdr + 1 + kMaxSlicesPerChunk);
      int slices = 0;
      const size_t len = cursor.Take(chunk, iov.data() + hdr + 1, kMaxSlicesPerChunk, &slices);
      iov.resize(hdr + 1 + static_cast<size_t>(slices));
      wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(wire::Op::kData), request_id,
                                          static_cast<uint32_t>(len)),
                         headers[c]);
    }
    if (!iov.empty()) {
      const int n = static_cast<int>(iov.size());
      HIPR_RETURN_IF_ERROR(bulk_pinned && bulk_count > 0 ? conn.SendVZeroCopy(iov.data(), n) : conn.SendV(iov.data(), n));
    }
    iov.clear();
  } while (cursor.Remaining() > 0);
  return Status::Ok();
}

void SendBatch::Append(uint16_t op, uint32_t request_id, const uint8_t* body, size_t body_len,
                       const iovec* bulk, int bulk_count, uint32_t chunk_bytes,
                       Clock::time_point now) {
  if (frames_ == 0) oldest_ = now;
  AppendFrame(&bytes_, op, request_id, body, body_len, bulk, bulk_count, chunk_bytes);
  ++frames_;
}

void SendBatch::TakeInto(std::vector<uint8_t>* out) {
  out->clear();
  out->swap(bytes_);
  frames_ = 0;
}

}  // namespace hipr::client
