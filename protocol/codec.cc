#include "protocol/codec.h"

namespace hipr::codec {

namespace {

const msgpack::unpack_limit& Limits() {
  static const msgpack::unpack_limit limit(wire::kMaxMsgpackArray, wire::kMaxMsgpackMap, wire::kMaxMsgpackString,
                                           wire::kMaxMsgpackBin, /*ext=*/0, wire::kMaxMsgpackDepth);
  return limit;
}

// Runs `parse`, which sets `offset` to the bytes it used, under the rules
// both forms of ParseBody share.
template <class Parse>
Status Parsed(size_t len, Parse parse) {
  if (len > wire::kMaxBodyBytes) return ProtocolError("body exceeds the size limit");
  if (len == 0) return ProtocolError("empty body");
  size_t offset = 0;
  try {
    parse(offset);
  } catch (const msgpack::unpack_error& e) {
    return ProtocolError(std::string("malformed msgpack body: ") + e.what());
  } catch (const std::exception& e) {
    return ProtocolError(std::string("malformed msgpack body: ") + e.what());
  }
  if (offset != len) return ProtocolError("trailing bytes after the msgpack body");
  return Status::Ok();
}

struct ThreadZone {
  msgpack::zone zone;
  bool busy = false;
};

ThreadZone& ThisThreadsZone() {
  thread_local ThreadZone z;
  return z;
}

}  // namespace

Status ParseBody(const uint8_t* data, size_t len, msgpack::object_handle* out) {
  return Parsed(len, [&](size_t& offset) {
    *out = msgpack::unpack(reinterpret_cast<const char*>(data), len, offset, nullptr, nullptr, Limits());
  });
}

Status ParseBody(const uint8_t* data, size_t len, msgpack::zone* zone, msgpack::object* out) {
  return Parsed(len, [&](size_t& offset) {
    *out = msgpack::unpack(*zone, reinterpret_cast<const char*>(data), len, offset, nullptr, nullptr, Limits());
  });
}

ScratchZone::ScratchZone() {
  ThreadZone& z = ThisThreadsZone();
  if (z.busy) {
    own_ = std::make_unique<msgpack::zone>();
    zone_ = own_.get();
  } else {
    z.busy = true;
    zone_ = &z.zone;
  }
}

ScratchZone::~ScratchZone() {
  if (own_ != nullptr) return;
  zone_->clear();  // Keeps its first chunk, frees any it grew.
  ThisThreadsZone().busy = false;
}

}  // namespace hipr::codec
