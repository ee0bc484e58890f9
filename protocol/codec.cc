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
  HIPR_RETURN_IF_ERROR(CheckBodySize(len));
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

}  // namespace

Status ParseBody(const uint8_t* data, size_t len, msgpack::object_handle* out) {
  return Parsed(len, [&](size_t& offset) {
    *out = msgpack::unpack(reinterpret_cast<const char*>(data), len, offset, nullptr, nullptr, Limits());
  });
}

Status CheckBodySize(size_t len) {
  if (len > wire::kMaxBodyBytes) return ProtocolError("body exceeds the size limit");
  if (len == 0) return ProtocolError("empty body");
  return Status::Ok();
}

namespace {

Status Malformed(const char* why) { return ProtocolError(std::string("malformed msgpack body: ") + why); }

uint64_t BigEndian(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
  return v;
}

}  // namespace

Status Reader::Next(Item* out) {
  if (p_ == end_) return Malformed("insufficient bytes");
  const uint8_t b = *p_++;
  // The bytes of a header's argument (a length or a value), big-endian.
  auto take = [&](int bytes, uint64_t* v) {
    if (left() < static_cast<size_t>(bytes)) return false;
    *v = BigEndian(p_, bytes);
    p_ += bytes;
    return true;
  };
  uint64_t v = 0;
  int arg = 0;  // Argument bytes of a sized header.
  enum { kScalar, kString, kBinary, kList, kPairs } shape = kScalar;
  if (b <= 0x7f) {
    out->kind = Item::kUint;
    out->u64 = b;
    return Status::Ok();
  }
  if (b >= 0xe0) {
    out->kind = Item::kNegative;
    out->i64 = static_cast<int8_t>(b);
    return Status::Ok();
  }
  if (b <= 0x8f) {
    shape = kPairs, v = b & 0x0f;
  } else if (b <= 0x9f) {
    shape = kList, v = b & 0x0f;
  } else if (b <= 0xbf) {
    shape = kString, v = b & 0x1f;
  } else {
    switch (b) {
      case 0xc0: out->kind = Item::kNil; return Status::Ok();
      case 0xc2:
      case 0xc3: out->kind = Item::kBool, out->boolean = b == 0xc3; return Status::Ok();
      case 0xc4: case 0xc5: case 0xc6: shape = kBinary, arg = 1 << (b - 0xc4); break;
      case 0xca:
      case 0xcb: {
        if (!take(b == 0xca ? 4 : 8, &v)) return Malformed("insufficient bytes");
        out->kind = Item::kFloat;
        if (b == 0xca) {
          const uint32_t bits = static_cast<uint32_t>(v);
          float f;
          std::memcpy(&f, &bits, sizeof f);
          out->f64 = f;
        } else {
          std::memcpy(&out->f64, &v, sizeof v);
        }
        return Status::Ok();
      }
      case 0xcc: case 0xcd: case 0xce: case 0xcf:
        if (!take(1 << (b - 0xcc), &v)) return Malformed("insufficient bytes");
        out->kind = Item::kUint, out->u64 = v;
        return Status::Ok();
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        const int bytes = 1 << (b - 0xd0);
        if (!take(bytes, &v)) return Malformed("insufficient bytes");
        // Sign-extends the value from its width.
        const int64_t s = bytes == 8 ? static_cast<int64_t>(v)
                                     : static_cast<int64_t>(v << (64 - 8 * bytes)) >> (64 - 8 * bytes);
        if (s >= 0) out->kind = Item::kUint, out->u64 = static_cast<uint64_t>(s);
        else out->kind = Item::kNegative, out->i64 = s;
        return Status::Ok();
      }
      case 0xd9: case 0xda: case 0xdb: shape = kString, arg = 1 << (b - 0xd9); break;
      case 0xdc: case 0xdd: shape = kList, arg = b == 0xdc ? 2 : 4; break;
      case 0xde: case 0xdf: shape = kPairs, arg = b == 0xde ? 2 : 4; break;
      case 0xc7: case 0xc8: case 0xc9:
      case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        return Malformed("ext size overflow");  // No message holds an extension type.
      default:
        return Malformed("parse error");  // 0xc1, never used.
    }
    if (!take(arg, &v)) return Malformed("insufficient bytes");
  }
  const uint32_t size = static_cast<uint32_t>(v);
  switch (shape) {
    case kString:
    case kBinary:
      if (size > (shape == kString ? wire::kMaxMsgpackString : wire::kMaxMsgpackBin))
        return Malformed(shape == kString ? "str size overflow" : "bin size overflow");
      if (left() < size) return Malformed("insufficient bytes");
      out->kind = shape == kString ? Item::kStr : Item::kBin;
      out->bytes = p_;
      out->size = size;
      p_ += size;
      return Status::Ok();
    case kList:
    case kPairs:
      if (size > (shape == kList ? wire::kMaxMsgpackArray : wire::kMaxMsgpackMap))
        return Malformed(shape == kList ? "array size overflow" : "map size overflow");
      // As msgpack-c counts: the outermost container is at depth 1.
      if (open_ + 1 > wire::kMaxMsgpackDepth) return Malformed("depth size overflow");
      out->kind = shape == kList ? Item::kArray : Item::kMap;
      out->size = size;
      return Status::Ok();
    case kScalar:
      break;
  }
  return Malformed("parse error");
}

Status Reader::SkipElements(const Item& it) {
  if (it.kind != Item::kArray && it.kind != Item::kMap) return Status::Ok();
  const uint64_t items = it.kind == Item::kMap ? uint64_t{it.size} * 2 : it.size;
  Enter();
  Status st;
  for (uint64_t i = 0; st.ok() && i < items; ++i) {
    Item e;
    st = Next(&e);
    if (st.ok()) st = SkipElements(e);
  }
  Leave();
  return st;
}

}  // namespace hipr::codec
