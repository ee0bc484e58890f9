#include "protocol/codec.h"

namespace hipr::codec {

Status ParseBody(const uint8_t* data, size_t len, msgpack::object_handle* out) {
  if (len > wire::kMaxBodyBytes) return ProtocolError("body exceeds the size limit");
  if (len == 0) return ProtocolError("empty body");
  const msgpack::unpack_limit limit(wire::kMaxMsgpackArray, wire::kMaxMsgpackMap,
                                    wire::kMaxMsgpackString, wire::kMaxMsgpackBin,
                                    /*ext=*/0, wire::kMaxMsgpackDepth);
  size_t offset = 0;
  try {
    *out = msgpack::unpack(reinterpret_cast<const char*>(data), len, offset, nullptr, nullptr, limit);
  } catch (const msgpack::unpack_error& e) {
    return ProtocolError(std::string("malformed msgpack body: ") + e.what());
  } catch (const std::exception& e) {
    return ProtocolError(std::string("malformed msgpack body: ") + e.what());
  }
  if (offset != len) return ProtocolError("trailing bytes after the msgpack body");
  return Status::Ok();
}

}  // namespace hipr::codec
