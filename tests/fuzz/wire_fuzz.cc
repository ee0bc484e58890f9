// Fuzz target: what decodes the wire before any session logic sees it. Frame
// headers (wire.h), msgpack bodies of every message type (codec.h,
// messages.h), and a peer's frame stream as frame_io.h reads it: headers,
// bodies, and bulk in kData and kDataLz4 chunks (chunk_lz4.h).
//
// Input: byte 0 below kMessageCount names a message type (wire_messages.h)
// and the rest is one body, decoded as that type. Any other byte 0: the rest
// is a frame stream, read as a worker or a client reads one (kDataLz4
// agreed when byte 0 is odd); each body is decoded as the type its op code
// carries, and the bulk a request or reply announces is read after it.
//
// Invariants beyond the sanitizers': a decoded message encodes to a body
// that decodes again to the same message; a header accepted by ReadHeader
// is within the limits of wire.h; EncodeHeader inverts DecodeHeader.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "protocol/chunk_lz4.h"
#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/op_traits.h"
#include "protocol/wire.h"
#include "tests/fuzz/memory_connection.h"
#include "tests/fuzz/wire_messages.h"

namespace {

using namespace hipr;
using wire::Op;

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// Decodes `body` as T; when that succeeds, T's encoding must decode to a
// message that encodes the same way.
template <class T>
Status Decode(std::span<const uint8_t> body, T* m) {
  Status st = codec::DecodeBody(body.data(), body.size(), m);
  // DecodeBody reads the bytes directly; ParseBody then Unpack build and walk
  // a msgpack object. Both must take and refuse the same bodies alike.
  msgpack::object_handle oh;
  Status parsed = codec::ParseBody(body.data(), body.size(), &oh);
  T via_object;
  if (parsed.ok()) parsed = codec::Unpack(oh.get(), &via_object);
  Check(parsed.ok() == st.ok());
  Check(parsed.code() == st.code());
  if (!st.ok()) return st;
  codec::BodyWriter first;
  first.Encode(*m);
  codec::BodyWriter other;
  other.Encode(via_object);
  Check(first.size() == other.size() && std::memcmp(first.data(), other.data(), first.size()) == 0);
  // A value packed more compactly than msgpack-c packs it (a float as a
  // fixint) grows: only a re-encoding within the limit must decode.
  if (first.size() > wire::kMaxBodyBytes) return st;
  T again;
  Check(codec::DecodeBody(first.data(), first.size(), &again).ok());
  codec::BodyWriter second;
  second.Encode(again);
  Check(first.size() == second.size() && std::memcmp(first.data(), second.data(), first.size()) == 0);
  return st;
}

// Decodes a body as the type op `op` carries (a reply's when `reply`). Sets
// *bulk to the bytes of bulk that follow it (0: none).
Status DecodeForOp(uint16_t op, bool reply, std::span<const uint8_t> body, uint64_t* bulk);

// The body of `op` as the table of ops (protocol/ops.h) types it; the ops
// with bulk say how much follows.
template <Op op>
Status DecodeAs(bool reply, std::span<const uint8_t> body, uint64_t* bulk) {
  if constexpr (op == Op::kCopyToDevice) {
    if (!reply) {
      msg::CopyToDeviceRequest m;
      HIPR_RETURN_IF_ERROR(Decode(body, &m));
      if (!m.host.used) *bulk = m.dst.bytes();
      return Status::Ok();
    }
  } else if constexpr (op == Op::kCopyFromDevice) {
    if (reply) {
      msg::CallReply r;
      HIPR_RETURN_IF_ERROR(Decode(body, &r));
      if (r.error == 0) *bulk = 64u << 10;  // The size is the request's; any will do here.
      return Status::Ok();
    }
  } else if constexpr (op == Op::kCopyChangedFromDevice) {
    if (reply) {
      msg::CopyChangedReply r;
      HIPR_RETURN_IF_ERROR(Decode(body, &r));
      if (r.error == 0)
        for (size_t i = 1; i < r.runs.size(); i += 2) *bulk += r.runs[i] % (64u << 10);
      return Status::Ok();
    }
  } else if constexpr (op == Op::kModuleLoad) {
    if (!reply) {
      msg::ModuleLoadRequest m;
      HIPR_RETURN_IF_ERROR(Decode(body, &m));
      if (m.code_bytes > 0) *bulk = m.bulk_bytes;
      return Status::Ok();
    }
  } else if constexpr (op == Op::kGraphCreate) {
    // Each node is the body of the stream op it replays.
    msg::GraphCreateRequest m;
    HIPR_RETURN_IF_ERROR(Decode(body, &m));
    for (const msg::GraphNode& node : m.nodes) {
      uint64_t node_bulk = 0;
      if (node.op == static_cast<uint16_t>(Op::kGraphCreate)) continue;  // No graph in a graph.
      (void)DecodeForOp(node.op, false, node.body, &node_bulk);
    }
    return Status::Ok();
  }
  auto decode = [&](auto* m) -> Status {
    using T = std::remove_pointer_t<decltype(m)>;
    if constexpr (codec::Message<T>)
      return Decode(body, m);
    else
      return Status::Ok();  // No body, raw bytes, or no reply: not looked at.
  };
  if (reply) {
    ops::Reply<op> r;
    return decode(&r);
  }
  ops::Request<op> q;
  return decode(&q);
}

Status DecodeForOp(uint16_t op, bool reply, std::span<const uint8_t> body, uint64_t* bulk) {
  *bulk = 0;
  switch (static_cast<Op>(op)) {
#define HIPR_FUZZ_DECODE(name, ...) \
  case Op::k##name:                 \
    return DecodeAs<Op::k##name>(reply, body, bulk);
    HIPR_OPS(HIPR_FUZZ_DECODE)
#undef HIPR_FUZZ_DECODE
  }
  return Status::Ok();  // Unknown ops: the body is not looked at.
}

// Reads `total` bytes of bulk for `request_id` in pieces of varying size,
// keeping at most 1 MiB of it (the rest is discarded, as a session discards
// a copy it refused).
Status ReadAnnouncedBulk(Connection& conn, uint32_t request_id, uint64_t total, ChunkInflater* lz4) {
  BulkReader reader(conn, request_id, total, lz4);
  static std::array<uint8_t, 1u << 16> scratch;
  uint64_t kept = 0;
  for (uint64_t piece = 1; reader.remaining() > 0 && kept < (1u << 20); piece = piece * 7 % scratch.size() + 1) {
    const uint64_t n = std::min<uint64_t>(piece, reader.remaining());
    // Two slices, so a piece may end inside a chunk and go on in the next.
    const iovec iov[2] = {{scratch.data(), n / 2}, {scratch.data() + n / 2, n - n / 2}};
    HIPR_RETURN_IF_ERROR(reader.Read(iov, 2));
    kept += n;
  }
  HIPR_RETURN_IF_ERROR(reader.DiscardRest());
  Check(reader.remaining() == 0);
  return Status::Ok();
}

void FuzzFrames(std::span<const uint8_t> stream, bool lz4) {
  fuzz::MemoryConnection conn(stream);
  ChunkInflater inflater;
  ChunkInflater* agreed = lz4 ? &inflater : nullptr;
  std::vector<uint8_t> body;
  for (int frames = 0; frames < 256; ++frames) {
    wire::FrameHeader h;
    if (!ReadHeader(conn, &h).ok()) return;
    Check(h.magic == wire::kMagic && h.version >= wire::kMinProtocolVersion && h.version <= wire::kProtocolVersion &&
          h.payload_length <= wire::kMaxPayloadBytes);
    const uint16_t op = h.op & static_cast<uint16_t>(~wire::kReplyBit);
    const bool reply = (h.op & wire::kReplyBit) != 0;
    Status st;
    if (op == static_cast<uint16_t>(Op::kHeartbeat) || op == static_cast<uint16_t>(Op::kData)) {
      st = SkipPayload(conn, h.payload_length);
    } else if (op == static_cast<uint16_t>(Op::kDataLz4) && lz4) {
      // A chunk on its own: the checks of ReadChunk and the block itself.
      uint32_t raw = 0;
      st = inflater.ReadChunk(conn, h.payload_length, wire::kMaxChunkBytes, &raw);
      if (st.ok()) {
        Check(raw >= 1 && raw <= wire::kMaxChunkBytes);
        (void)inflater.InflateToScratch();
      }
    } else {
      st = ReadBody(conn, h, &body);
      uint64_t bulk = 0;
      if (st.ok() && DecodeForOp(op, reply, body, &bulk).ok() && bulk > 0)
        st = ReadAnnouncedBulk(conn, h.request_id, bulk, agreed);
    }
    if (!st.ok()) return;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (size >= 1 + sizeof(wire::FrameHeader)) {
    uint8_t again[sizeof(wire::FrameHeader)];
    wire::EncodeHeader(wire::DecodeHeader(data + 1), again);
    Check(std::memcmp(again, data + 1, sizeof again) == 0);
  }
  const std::span<const uint8_t> rest(data + 1, size - 1);
  if (data[0] < fuzz::kMessageCount) {
    fuzz::WithMessage(data[0], [&](auto m) { (void)Decode(rest, &m); });
  } else {
    FuzzFrames(rest, (data[0] & 1) != 0);
  }
  return 0;
}
