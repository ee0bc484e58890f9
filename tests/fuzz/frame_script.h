// FrameScript: builds the bytes a peer sends (frames, their bulk, and
// deliberate damage) with the protocol's own encoder and senders
// (frame_io.h), for seed corpora and for the hello the session target puts
// first. Not thread-safe.
#pragma once

#include <sys/uio.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "protocol/chunk_lz4.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/transport.h"
#include "protocol/wire.h"

namespace hipr::fuzz {

// A Connection that keeps what is sent: the wire bytes a sender produces.
class RecordingConnection final : public Connection {
 public:
  Status SendV(const iovec* iov, int count) override {
    for (int i = 0; i < count; ++i) {
      const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
      bytes_.insert(bytes_.end(), p, p + iov[i].iov_len);
    }
    return Status::Ok();
  }
  Status RecvV(const iovec*, int) override { return LinkDown("nothing to receive"); }
  Status WaitReadable(int) override { return LinkDown("nothing to receive"); }
  void Shutdown() override {}
  std::string PeerName() const override { return "recording"; }
  void Abandon() override {}
  bool PeerIsLocal() const override { return true; }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

class FrameScript {
 public:
  // The chunk size bulk is cut into (the session target agrees 64 KiB).
  static constexpr uint32_t kChunkBytes = 64u << 10;

  // A frame whose body is `msg`, then `bulk` as kData frames.
  template <class T>
  FrameScript& Add(wire::Op op, uint32_t request_id, const T& msg, std::span<const uint8_t> bulk = {}) {
    writer_.Encode(msg);
    iovec iov{const_cast<uint8_t*>(bulk.data()), bulk.size()};
    Sent(SendFrame(conn_, static_cast<uint16_t>(op), request_id, writer_, bulk.empty() ? nullptr : &iov,
                   bulk.empty() ? 0 : 1, kChunkBytes));
    return *this;
  }
  // A frame whose body is `msg`, then `bulk` as kDataLz4 chunks where they
  // compress (kData where not): for a peer that agreed bulk lz4.
  template <class T>
  FrameScript& AddLz4(wire::Op op, uint32_t request_id, const T& msg, std::span<const uint8_t> bulk) {
    return Add(op, request_id, msg).BulkLz4(request_id, bulk);
  }
  // Bulk alone, as kData frames or as kDataLz4 chunks where they compress.
  FrameScript& Bulk(uint32_t request_id, std::span<const uint8_t> bulk) {
    iovec iov{const_cast<uint8_t*>(bulk.data()), bulk.size()};
    Sent(SendBulk(conn_, request_id, &iov, 1, kChunkBytes));
    return *this;
  }
  FrameScript& BulkLz4(uint32_t request_id, std::span<const uint8_t> bulk) {
    ChunkCompressor lz4;
    lz4.set_link_guard(false);  // Every chunk that compresses goes compressed.
    lz4.BeginTransfer();
    iovec iov{const_cast<uint8_t*>(bulk.data()), bulk.size()};
    Sent(SendBulkLz4(conn_, nullptr, 0, request_id, &iov, 1, kChunkBytes, lz4));
    return *this;
  }
  // A frame with a raw payload (no msgpack): bodies that are not one, or
  // data frames out of place.
  FrameScript& Payload(uint16_t op, uint32_t request_id, std::span<const uint8_t> payload) {
    Sent(SendFrame(conn_, op, request_id, payload.data(), payload.size()));
    return *this;
  }
  // Bytes as they are: a damaged header, a frame cut short.
  FrameScript& Raw(std::span<const uint8_t> bytes) {
    conn_.bytes().insert(conn_.bytes().end(), bytes.begin(), bytes.end());
    return *this;
  }
  // A header alone, claiming `payload_length` bytes that may never come.
  FrameScript& Header(uint16_t op, uint32_t request_id, uint32_t payload_length, uint32_t magic = wire::kMagic,
                      uint16_t version = wire::kProtocolVersion) {
    uint8_t raw[sizeof(wire::FrameHeader)];
    wire::EncodeHeader(wire::FrameHeader{magic, version, op, request_id, payload_length}, raw);
    return Raw(raw);
  }

  const std::vector<uint8_t>& bytes() { return conn_.bytes(); }

 private:
  static void Sent(const Status& st) {
    if (!st.ok()) std::abort();  // A recording connection never fails.
  }

  RecordingConnection conn_;
  codec::BodyWriter writer_;
};

}  // namespace hipr::fuzz
