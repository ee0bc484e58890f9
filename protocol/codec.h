// msgpack bodies. A message is a plain struct that lists its fields with
// HIPR_FIELDS(a, b, c); it travels as a msgpack array of those fields in
// order, nested messages as nested arrays. Decoding accepts arrays with extra
// trailing fields (a newer peer may append fields) and rejects anything
// shorter, mistyped, out of range, or beyond the limits in wire.h. A message
// whose later fields were added after its first release declares
// `static constexpr size_t kRequiredFields = N;`: an older peer's array of
// at least N fields decodes, the missing fields set to their defaults.
#pragma once

// Only the parts of msgpack-c the codec uses: <msgpack.hpp> adds every
// adaptor (a second of parsing in each of the ~130 files that include this).
#include <msgpack/object.hpp>
#include <msgpack/pack.hpp>
#include <msgpack/sbuffer.hpp>
#include <msgpack/unpack.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "protocol/status.h"
#include "protocol/wire.h"

// Fields() is a template so that its std::tuple is made only where a message
// is encoded or decoded: as plain members, every message's two tuples were
// instantiated in every file that includes messages.h (three seconds a file).
#define HIPR_FIELDS(...)                                        \
  static constexpr const char* kFieldNames = #__VA_ARGS__;      \
  template <int = 0>                                            \
  auto Fields() { return std::tie(__VA_ARGS__); }               \
  template <int = 0>                                            \
  auto Fields() const { return std::tie(__VA_ARGS__); }

namespace hipr::codec {

template <class T>
concept Message = requires(T t) { t.Fields(); };

using Packer = msgpack::packer<msgpack::sbuffer>;

template <class T>
void Pack(Packer& pk, const T& v);

// msgpack-c's pack_double writes a whole-valued double as an integer, and
// its range check lets 2^64 through (double(UINT64_MAX) rounds up to it), so
// that one value reached an undefined double -> uint64_t conversion. It is
// written here as the float64 it is; every other value goes the library's way.
inline void PackDouble(Packer& pk, double d) {
  constexpr double kTwoTo64 = 18446744073709551616.0;
  if (d != kTwoTo64) {
    pk.pack_double(d);
    return;
  }
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof bits);
  char raw[9];
  raw[0] = static_cast<char>(0xcb);  // float 64, big-endian.
  for (int i = 0; i < 8; ++i) raw[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  pk.pack_bin_body(raw, sizeof raw);  // Appends the bytes as they are.
}

template <class T>
void PackOne(Packer& pk, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    v ? pk.pack_true() : pk.pack_false();
  } else if constexpr (std::is_enum_v<T>) {
    PackOne(pk, static_cast<std::underlying_type_t<T>>(v));
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    pk.pack_int64(static_cast<int64_t>(v));
  } else if constexpr (std::is_integral_v<T>) {
    pk.pack_uint64(static_cast<uint64_t>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    PackDouble(pk, static_cast<double>(v));
  } else if constexpr (std::is_same_v<T, std::string>) {
    pk.pack_str(static_cast<uint32_t>(v.size()));
    pk.pack_str_body(v.data(), static_cast<uint32_t>(v.size()));
  } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
    // Raw bytes travel as msgpack bin, not as an array of integers.
    pk.pack_bin(static_cast<uint32_t>(v.size()));
    pk.pack_bin_body(reinterpret_cast<const char*>(v.data()), static_cast<uint32_t>(v.size()));
  } else if constexpr (Message<T>) {
    Pack(pk, v);
  } else {
    // std::vector<E> or std::array<E, N>.
    pk.pack_array(static_cast<uint32_t>(v.size()));
    for (const auto& e : v) PackOne(pk, e);
  }
}

template <class T>
void Pack(Packer& pk, const T& msg) {
  auto fields = msg.Fields();
  pk.pack_array(static_cast<uint32_t>(std::tuple_size_v<decltype(fields)>));
  std::apply([&](const auto&... f) { (PackOne(pk, f), ...); }, fields);
}

// Decoding from an already unpacked (and limit-checked) msgpack object.
template <class T>
Status UnpackOne(const msgpack::object& o, T* out);

// How many leading fields a message must have on the wire.
template <class T>
constexpr size_t RequiredFields(size_t all) {
  if constexpr (requires { T::kRequiredFields; }) {
    static_assert(T::kRequiredFields > 0);
    return T::kRequiredFields;
  } else {
    return all;
  }
}

// An older peer's missing trailing fields, from `present` on, take the
// message's defaults (its member initializers, not zero).
template <class T, class Fields>
void DefaultMissing(Fields& fields, size_t present) {
  constexpr size_t n = std::tuple_size_v<Fields>;
  if (present >= n) return;
  T defaults{};
  auto from = defaults.Fields();
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((I >= present ? (void)(std::get<I>(fields) = std::get<I>(from)) : void()), ...);
  }(std::make_index_sequence<n>{});
}

template <class T>
Status Unpack(const msgpack::object& o, T* msg) {
  if (o.type != msgpack::type::ARRAY) return ProtocolError("message is not an array");
  auto fields = msg->Fields();
  constexpr size_t n = std::tuple_size_v<decltype(fields)>;
  constexpr size_t required = RequiredFields<T>(n);
  static_assert(required <= n);
  const size_t present = o.via.array.size;
  if (present < required) return ProtocolError("message has too few fields");
  Status st;
  size_t i = 0;
  std::apply(
      [&](auto&... f) {
        ((st.ok() && i < present ? (st = UnpackOne(o.via.array.ptr[i++], &f), 0) : 0), ...);
      },
      fields);
  if (st.ok()) DefaultMissing<T>(fields, present);
  return st;
}

template <class T>
Status UnpackOne(const msgpack::object& o, T* out) {
  using msgpack::type::object_type;
  if constexpr (std::is_same_v<T, bool>) {
    if (o.type != object_type::BOOLEAN) return ProtocolError("expected a boolean");
    *out = o.via.boolean;
  } else if constexpr (std::is_enum_v<T>) {
    std::underlying_type_t<T> raw{};
    HIPR_RETURN_IF_ERROR(UnpackOne(o, &raw));
    *out = static_cast<T>(raw);
  } else if constexpr (std::is_integral_v<T>) {
    if (o.type == object_type::POSITIVE_INTEGER) {
      if (o.via.u64 > static_cast<uint64_t>(std::numeric_limits<T>::max()))
        return ProtocolError("integer out of range");
      *out = static_cast<T>(o.via.u64);
    } else if (o.type == object_type::NEGATIVE_INTEGER) {
      if constexpr (std::is_signed_v<T>) {
        if (o.via.i64 < static_cast<int64_t>(std::numeric_limits<T>::min()))
          return ProtocolError("integer out of range");
        *out = static_cast<T>(o.via.i64);
      } else {
        return ProtocolError("negative value for an unsigned field");
      }
    } else {
      return ProtocolError("expected an integer");
    }
  } else if constexpr (std::is_floating_point_v<T>) {
    // msgpack-c packs a whole-valued double as an integer, negative ones too.
    if (o.type == object_type::FLOAT64 || o.type == object_type::FLOAT32) {
      // Converting a finite double beyond T's range is undefined behaviour.
      if (std::isfinite(o.via.f64) &&
          std::fabs(o.via.f64) > static_cast<double>(std::numeric_limits<T>::max()))
        return ProtocolError("number out of range");
      *out = static_cast<T>(o.via.f64);
    } else if (o.type == object_type::POSITIVE_INTEGER) {
      *out = static_cast<T>(o.via.u64);
    } else if (o.type == object_type::NEGATIVE_INTEGER) {
      *out = static_cast<T>(o.via.i64);
    } else {
      return ProtocolError("expected a number");
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (o.type != object_type::STR) return ProtocolError("expected a string");
    out->assign(o.via.str.ptr, o.via.str.size);
  } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
    if (o.type != object_type::BIN) return ProtocolError("expected binary data");
    const auto* p = reinterpret_cast<const uint8_t*>(o.via.bin.ptr);
    out->assign(p, p + o.via.bin.size);
  } else if constexpr (Message<T>) {
    return Unpack(o, out);
  } else if constexpr (requires { std::tuple_size<T>::value; }) {
    if (o.type != object_type::ARRAY || o.via.array.size != std::tuple_size_v<T>)
      return ProtocolError("expected a fixed-size array");
    for (size_t i = 0; i < out->size(); ++i) HIPR_RETURN_IF_ERROR(UnpackOne(o.via.array.ptr[i], &(*out)[i]));
  } else {
    if (o.type != object_type::ARRAY) return ProtocolError("expected an array");
    out->clear();
    out->resize(o.via.array.size);
    for (size_t i = 0; i < out->size(); ++i) HIPR_RETURN_IF_ERROR(UnpackOne(o.via.array.ptr[i], &(*out)[i]));
  }
  return Status::Ok();
}

// Builds one body; reuse an instance to avoid reallocating per frame.
// Not thread-safe.
class BodyWriter {
 public:
  BodyWriter() : packer_(buffer_) {}
  template <class T>
  const BodyWriter& Encode(const T& msg) {
    buffer_.clear();
    Pack(packer_, msg);
    return *this;
  }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(buffer_.data()); }
  size_t size() const { return buffer_.size(); }

 private:
  msgpack::sbuffer buffer_;
  Packer packer_;
};

// Unpacks `len` bytes under the limits of wire.h. The whole input must be
// exactly one msgpack object. Never throws.
Status ParseBody(const uint8_t* data, size_t len, msgpack::object_handle* out);

// Decoding straight from the bytes, with no msgpack object in between: a
// launch's decode was two fifths of the worker's replay thread, most of it
// building the object tree and walking it. The rules are those of ParseBody
// then Unpack: the same limits (wire.h), the same inputs accepted and
// refused. The fuzz target checks that the two agree on every input it makes.
class Reader {
 public:
  // One item's header; a string's or bin's bytes come with it.
  struct Item {
    enum Kind : uint8_t { kNil, kBool, kUint, kNegative, kFloat, kStr, kBin, kArray, kMap };
    Kind kind = kNil;
    bool boolean = false;
    uint64_t u64 = 0;                // kUint.
    int64_t i64 = 0;                 // kNegative.
    double f64 = 0;                  // kFloat.
    const uint8_t* bytes = nullptr;  // kStr, kBin.
    uint32_t size = 0;               // kStr, kBin: bytes; kArray: elements; kMap: pairs.
  };

  Reader(const uint8_t* data, size_t len) : p_(data), end_(data + len) {}

  // Reads the next item's header. The elements of an array are read
  // between Enter() and Leave(); SkipElements() reads past them.
  Status Next(Item* out);
  void Enter() { ++open_; }
  void Leave() { --open_; }
  Status SkipElements(const Item& it);
  bool AtEnd() const { return p_ == end_; }
  size_t left() const { return static_cast<size_t>(end_ - p_); }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  uint32_t open_ = 0;  // Arrays and maps entered and not yet left.
};

template <class T>
Status ReadOne(Reader& r, T* out);

template <class T>
Status Read(Reader& r, T* msg) {
  Reader::Item it;
  HIPR_RETURN_IF_ERROR(r.Next(&it));
  if (it.kind != Reader::Item::kArray) return ProtocolError("message is not an array");
  auto fields = msg->Fields();
  constexpr size_t n = std::tuple_size_v<decltype(fields)>;
  constexpr size_t required = RequiredFields<T>(n);
  static_assert(required <= n);
  const size_t present = it.size;
  if (present < required) return ProtocolError("message has too few fields");
  r.Enter();
  Status st;
  size_t i = 0;
  std::apply(
      [&](auto&... f) {
        ((st.ok() && i < present ? (++i, st = ReadOne(r, &f), 0) : 0), ...);
      },
      fields);
  if (st.ok()) DefaultMissing<T>(fields, present);
  // A newer peer's trailing fields are read past, under the same limits.
  for (; st.ok() && i < present; ++i) {
    Reader::Item extra;
    st = r.Next(&extra);
    if (st.ok()) st = r.SkipElements(extra);
  }
  r.Leave();
  return st;
}

template <class T>
Status ReadOne(Reader& r, T* out) {
  using Item = Reader::Item;
  if constexpr (Message<T>) {
    return Read(r, out);
  } else if constexpr (std::is_enum_v<T>) {
    std::underlying_type_t<T> raw{};
    HIPR_RETURN_IF_ERROR(ReadOne(r, &raw));
    *out = static_cast<T>(raw);
    return Status::Ok();
  } else {
    Item it;
    HIPR_RETURN_IF_ERROR(r.Next(&it));
    if constexpr (std::is_same_v<T, bool>) {
      if (it.kind != Item::kBool) return ProtocolError("expected a boolean");
      *out = it.boolean;
    } else if constexpr (std::is_integral_v<T>) {
      if (it.kind == Item::kUint) {
        if (it.u64 > static_cast<uint64_t>(std::numeric_limits<T>::max())) return ProtocolError("integer out of range");
        *out = static_cast<T>(it.u64);
      } else if (it.kind == Item::kNegative) {
        if constexpr (std::is_signed_v<T>) {
          if (it.i64 < static_cast<int64_t>(std::numeric_limits<T>::min()))
            return ProtocolError("integer out of range");
          *out = static_cast<T>(it.i64);
        } else {
          return ProtocolError("negative value for an unsigned field");
        }
      } else {
        return ProtocolError("expected an integer");
      }
    } else if constexpr (std::is_floating_point_v<T>) {
      if (it.kind == Item::kFloat) {
        if (std::isfinite(it.f64) && std::fabs(it.f64) > static_cast<double>(std::numeric_limits<T>::max()))
          return ProtocolError("number out of range");
        *out = static_cast<T>(it.f64);
      } else if (it.kind == Item::kUint) {
        *out = static_cast<T>(it.u64);
      } else if (it.kind == Item::kNegative) {
        *out = static_cast<T>(it.i64);
      } else {
        return ProtocolError("expected a number");
      }
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (it.kind != Item::kStr) return ProtocolError("expected a string");
      out->assign(reinterpret_cast<const char*>(it.bytes), it.size);
    } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
      if (it.kind != Item::kBin) return ProtocolError("expected binary data");
      out->assign(it.bytes, it.bytes + it.size);
    } else if constexpr (requires { std::tuple_size<T>::value; }) {
      if (it.kind != Item::kArray || it.size != std::tuple_size_v<T>)
        return ProtocolError("expected a fixed-size array");
      r.Enter();
      for (auto& e : *out) HIPR_RETURN_IF_ERROR(ReadOne(r, &e));
      r.Leave();
    } else {
      if (it.kind != Item::kArray) return ProtocolError("expected an array");
      // Every element takes at least a byte: a count the body cannot hold
      // allocates nothing.
      if (it.size > r.left()) return ProtocolError("malformed msgpack body: insufficient bytes");
      out->clear();
      out->resize(it.size);
      r.Enter();
      for (auto& e : *out) HIPR_RETURN_IF_ERROR(ReadOne(r, &e));
      r.Leave();
    }
    return Status::Ok();
  }
}

// The checks on a whole body that ParseBody makes too.
Status CheckBodySize(size_t len);

template <class T>
Status DecodeBody(const uint8_t* data, size_t len, T* msg) {
  HIPR_RETURN_IF_ERROR(CheckBodySize(len));
  Reader r(data, len);
  HIPR_RETURN_IF_ERROR(Read(r, msg));
  if (!r.AtEnd()) return ProtocolError("trailing bytes after the msgpack body");
  return Status::Ok();
}

}  // namespace hipr::codec
