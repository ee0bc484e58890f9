#include "protocol/frame_io.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include "protocol/messages.h"

namespace hipr {
namespace {

constexpr int kMaxSlicesPerChunk = 256;
constexpr int kChunksPerSend = 4;

}  // namespace

IovCursor::IovCursor(const iovec* iov, int count) : iov_(iov), count_(count) {
  for (int i = 0; i < count; ++i) remaining_ += iov[i].iov_len;
}

size_t IovCursor::Take(size_t max_bytes, iovec* out, int max_slices, int* slices) {
  size_t taken = 0;
  int n = 0;
  while (taken < max_bytes && n < max_slices && index_ < count_) {
    const iovec& cur = iov_[index_];
    size_t avail = cur.iov_len - offset_;
    if (avail == 0) {
      ++index_;
      offset_ = 0;
      continue;
    }
    size_t len = std::min(avail, max_bytes - taken);
    out[n].iov_base = static_cast<char*>(cur.iov_base) + offset_;
    out[n].iov_len = len;
    ++n;
    taken += len;
    offset_ += len;
    if (offset_ == cur.iov_len) {
      ++index_;
      offset_ = 0;
    }
  }
  *slices = n;
  remaining_ -= taken;
  return taken;
}

uint8_t* IovCursor::Peek(size_t* len) {
  while (index_ < count_ && iov_[index_].iov_len == offset_) {
    ++index_;
    offset_ = 0;
  }
  if (index_ == count_) {
    *len = 0;
    return nullptr;
  }
  *len = iov_[index_].iov_len - offset_;
  return static_cast<uint8_t*>(iov_[index_].iov_base) + offset_;
}

void IovCursor::Skip(size_t bytes) {
  iovec scratch[16];
  int n = 0;
  while (bytes > 0 && remaining_ > 0) bytes -= Take(bytes, scratch, 16, &n);
}

uint64_t IovBytes(const iovec* iov, int count) {
  uint64_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  return total;
}

namespace {

// Appends up to kChunksPerSend data frames from `cursor` to `iov` and sends.
Status SendChunks(Connection& conn, uint32_t request_id, IovCursor& cursor, uint32_t chunk_bytes,
                  std::vector<iovec>& iov, uint8_t (*headers)[sizeof(wire::FrameHeader)],
                  int first_header, BulkMemory memory = BulkMemory::kTransient) {
  for (int c = first_header; c < kChunksPerSend && cursor.Remaining() > 0; ++c) {
    size_t hdr_index = iov.size();
    iov.push_back({headers[c], sizeof(wire::FrameHeader)});
    iov.resize(hdr_index + 1 + kMaxSlicesPerChunk);
    int slices = 0;
    size_t len = cursor.Take(chunk_bytes, iov.data() + hdr_index + 1, kMaxSlicesPerChunk, &slices);
    iov.resize(hdr_index + 1 + slices);
    wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(wire::Op::kData), request_id,
                                        static_cast<uint32_t>(len)),
                       headers[c]);
  }
  const int n = static_cast<int>(iov.size());
  return memory == BulkMemory::kStays ? conn.SendVZeroCopy(iov.data(), n) : conn.SendV(iov.data(), n);
}

}  // namespace

Status SendFrame(Connection& conn, uint16_t op, uint32_t request_id, const uint8_t* body,
                 size_t body_len, const iovec* bulk, int bulk_count, uint32_t chunk_bytes) {
  if (body_len > wire::kMaxBodyBytes) return Status(StatusCode::kInternal, "body too large to send");
  chunk_bytes = std::clamp(chunk_bytes, wire::kMinChunkBytes, wire::kMaxChunkBytes);
  uint8_t headers[kChunksPerSend + 1][sizeof(wire::FrameHeader)];
  wire::EncodeHeader(wire::MakeHeader(op, request_id, static_cast<uint32_t>(body_len)), headers[0]);
  std::vector<iovec> iov;
  iov.reserve(2 + kChunksPerSend * (1 + kMaxSlicesPerChunk));
  iov.push_back({headers[0], sizeof(wire::FrameHeader)});
  if (body_len > 0) iov.push_back({const_cast<uint8_t*>(body), body_len});
  IovCursor cursor(bulk, bulk_count);
  // The first batch rides in the same syscall as the header and body.
  HIPR_RETURN_IF_ERROR(SendChunks(conn, request_id, cursor, chunk_bytes, iov, headers + 1, 0));
  while (cursor.Remaining() > 0) {
    iov.clear();
    HIPR_RETURN_IF_ERROR(SendChunks(conn, request_id, cursor, chunk_bytes, iov, headers + 1, 0));
  }
  return Status::Ok();
}

Status SendBulk(Connection& conn, uint32_t request_id, const iovec* bulk, int bulk_count,
                uint32_t chunk_bytes, ChunkCompressor* lz4, BulkMemory memory) {
  if (lz4 != nullptr) return SendBulkLz4(conn, nullptr, 0, request_id, bulk, bulk_count, chunk_bytes, *lz4);
  chunk_bytes = std::clamp(chunk_bytes, wire::kMinChunkBytes, wire::kMaxChunkBytes);
  uint8_t headers[kChunksPerSend][sizeof(wire::FrameHeader)];
  std::vector<iovec> iov;
  iov.reserve(kChunksPerSend * (1 + kMaxSlicesPerChunk));
  IovCursor cursor(bulk, bulk_count);
  while (cursor.Remaining() > 0) {
    iov.clear();
    HIPR_RETURN_IF_ERROR(SendChunks(conn, request_id, cursor, chunk_bytes, iov, headers, 0, memory));
  }
  return Status::Ok();
}

Status SendBulkLz4(Connection& conn, const uint8_t* prefix, size_t prefix_len, uint32_t request_id,
                   const iovec* bulk, int bulk_count, uint32_t chunk_bytes, ChunkCompressor& lz4) {
  const uint32_t chunk =
      std::min(std::clamp(chunk_bytes, wire::kMinChunkBytes, wire::kMaxChunkBytes), ChunkCompressor::kChunkBytes);
  uint8_t header[sizeof(wire::FrameHeader)];
  std::array<iovec, 2 + kMaxSlicesPerChunk> iov;
  IovCursor cursor(bulk, bulk_count);
  bool first = true;
  do {
    int n = 0;
    size_t len = 0;
    if (first && prefix_len > 0) iov[n++] = {const_cast<uint8_t*>(prefix), prefix_len};
    first = false;
    if (cursor.Remaining() > 0) {
      int slices = 0;
      len = cursor.Take(chunk, iov.data() + n + 1, kMaxSlicesPerChunk, &slices);
      const uint8_t* payload = nullptr;
      size_t payload_len = 0;
      wire::Op op = wire::Op::kData;
      if (lz4.Compress(iov.data() + n + 1, slices, len, &payload, &payload_len)) {
        op = wire::Op::kDataLz4;
        iov[n + 1] = {const_cast<uint8_t*>(payload), payload_len};
        slices = 1;
      } else {
        payload_len = len;
      }
      wire::EncodeHeader(
          wire::MakeHeader(static_cast<uint16_t>(op), request_id, static_cast<uint32_t>(payload_len)), header);
      iov[n] = {header, sizeof header};
      n += 1 + slices;
    }
    if (n == 0) continue;
    const auto t0 = std::chrono::steady_clock::now();
    HIPR_RETURN_IF_ERROR(conn.SendV(iov.data(), n));
    if (len > 0)
      lz4.Sent(len, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now() - t0)
                                              .count()));
  } while (cursor.Remaining() > 0);
  return Status::Ok();
}

Status ReadHeader(Connection& conn, wire::FrameHeader* header) {
  uint8_t raw[sizeof(wire::FrameHeader)];
  HIPR_RETURN_IF_ERROR(conn.RecvExact(raw, sizeof raw));
  *header = wire::DecodeHeader(raw);
  if (header->magic != wire::kMagic) return ProtocolError("bad frame magic");
  if (header->version < wire::kMinProtocolVersion || header->version > wire::kProtocolVersion)
    return Status(StatusCode::kVersionMismatch,
                  "frame version " + std::to_string(header->version) + " is not spoken here");
  if (header->payload_length > wire::kMaxPayloadBytes) return ProtocolError("frame payload exceeds the limit");
  return Status::Ok();
}

Status ReadBody(Connection& conn, const wire::FrameHeader& header, std::vector<uint8_t>* body) {
  if (header.payload_length > wire::kMaxBodyBytes) return ProtocolError("message body exceeds the limit");
  body->resize(header.payload_length);
  if (header.payload_length == 0) return Status::Ok();
  return conn.RecvExact(body->data(), body->size());
}

Status SkipPayload(Connection& conn, uint32_t length) {
  uint8_t scratch[16384];
  while (length > 0) {
    uint32_t n = std::min<uint32_t>(length, sizeof scratch);
    HIPR_RETURN_IF_ERROR(conn.RecvExact(scratch, n));
    length -= n;
  }
  return Status::Ok();
}

namespace {

// Reads the next kData (or, with `lz4`, kDataLz4) header of `request_id`,
// skipping heartbeats.
Status NextDataHeader(Connection& conn, uint32_t request_id, uint64_t remaining, bool lz4, uint16_t* op,
                      uint32_t* len) {
  for (;;) {
    wire::FrameHeader h;
    HIPR_RETURN_IF_ERROR(ReadHeader(conn, &h));
    if (h.op == static_cast<uint16_t>(wire::Op::kHeartbeat)) {
      HIPR_RETURN_IF_ERROR(SkipPayload(conn, h.payload_length));
      continue;
    }
    if (h.op == static_cast<uint16_t>(wire::Op::kFatal)) {
      std::vector<uint8_t> body;
      HIPR_RETURN_IF_ERROR(ReadBody(conn, h, &body));
      msg::Fatal fatal;
      HIPR_RETURN_IF_ERROR(codec::DecodeBody(body.data(), body.size(), &fatal));
      return Status(StatusCode::kDeviceLost, fatal.message);
    }
    if (h.op == static_cast<uint16_t>(wire::Op::kDataLz4)) {
      if (!lz4) return ProtocolError("lz4 data frame where lz4 was not agreed");
      if (h.request_id != request_id) return ProtocolError("data frame for another request");
      // ChunkInflater::ReadChunk checks the payload and its declared length.
      *op = h.op;
      *len = h.payload_length;
      return Status::Ok();
    }
    if (h.op != static_cast<uint16_t>(wire::Op::kData)) return ProtocolError("expected a data frame");
    if (h.request_id != request_id) return ProtocolError("data frame for another request");
    if (h.payload_length == 0 || h.payload_length > remaining)
      return ProtocolError("data frame length does not fit the transfer");
    *op = h.op;
    *len = h.payload_length;
    return Status::Ok();
  }
}

}  // namespace

void BulkReader::TakeDecoded(IovCursor& cursor) {
  std::array<iovec, kMaxSlicesPerChunk> slices;
  while (decoded_left_ > 0 && cursor.Remaining() > 0) {
    int n = 0;
    const uint8_t* from = lz4_->decoded() + (decoded_len_ - decoded_left_);
    const size_t got = cursor.Take(decoded_left_, slices.data(), kMaxSlicesPerChunk, &n);
    for (int i = 0; i < n; ++i) {
      std::memcpy(slices[i].iov_base, from, slices[i].iov_len);
      from += slices[i].iov_len;
    }
    decoded_left_ -= static_cast<uint32_t>(got);
    remaining_ -= got;
  }
}

Status BulkReader::Read(const iovec* dst, int dst_count, BulkMemory memory) {
  IovCursor cursor(dst, dst_count);
  if (cursor.Remaining() > remaining_) return Status(StatusCode::kInternal, "read past the end of a transfer");
  std::array<iovec, kMaxSlicesPerChunk> slices;
  while (cursor.Remaining() > 0) {
    if (decoded_left_ > 0) {
      TakeDecoded(cursor);
      continue;
    }
    if (in_frame_ == 0) {
      uint16_t op = 0;
      uint32_t len = 0;
      HIPR_RETURN_IF_ERROR(NextDataHeader(conn_, request_id_, remaining_, lz4_ != nullptr, &op, &len));
      if (op == static_cast<uint16_t>(wire::Op::kData)) {
        in_frame_ = len;
      } else {
        uint32_t raw = 0;
        HIPR_RETURN_IF_ERROR(lz4_->ReadChunk(conn_, len, remaining_, &raw));
        size_t room = 0;
        uint8_t* at = cursor.Peek(&room);
        if (room >= raw) {
          // The common case: straight into its place.
          HIPR_RETURN_IF_ERROR(lz4_->InflateTo(at));
          cursor.Skip(raw);
          remaining_ -= raw;
        } else {
          HIPR_RETURN_IF_ERROR(lz4_->InflateToScratch());
          decoded_len_ = decoded_left_ = raw;
        }
        continue;
      }
    }
    int n = 0;
    size_t got = cursor.Take(in_frame_, slices.data(), kMaxSlicesPerChunk, &n);
    HIPR_RETURN_IF_ERROR(memory == BulkMemory::kStays ? conn_.RecvVZeroCopy(slices.data(), n)
                                                      : conn_.RecvV(slices.data(), n));
    in_frame_ -= static_cast<uint32_t>(got);
    remaining_ -= got;
  }
  return Status::Ok();
}

Status BulkReader::DiscardRest() {
  remaining_ -= decoded_left_;
  decoded_left_ = 0;
  while (remaining_ > 0) {
    if (in_frame_ == 0) {
      uint16_t op = 0;
      uint32_t len = 0;
      HIPR_RETURN_IF_ERROR(NextDataHeader(conn_, request_id_, remaining_, lz4_ != nullptr, &op, &len));
      if (op == static_cast<uint16_t>(wire::Op::kDataLz4)) {
        uint32_t raw = 0;
        HIPR_RETURN_IF_ERROR(lz4_->ReadChunk(conn_, len, remaining_, &raw));
        remaining_ -= raw;
        continue;
      }
      in_frame_ = len;
    }
    HIPR_RETURN_IF_ERROR(SkipPayload(conn_, in_frame_));
    remaining_ -= in_frame_;
    in_frame_ = 0;
  }
  return Status::Ok();
}

Status ReadBulk(Connection& conn, uint32_t request_id, const iovec* dst, int dst_count, ChunkInflater* lz4,
                BulkMemory memory) {
  BulkReader reader(conn, request_id, IovBytes(dst, dst_count), lz4);
  return reader.Read(dst, dst_count, memory);
}

Status DiscardBulk(Connection& conn, uint32_t request_id, uint64_t bytes) {
  return BulkReader(conn, request_id, bytes).DiscardRest();
}

}  // namespace hipr
