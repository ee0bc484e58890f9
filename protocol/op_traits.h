// The table of ops.h as types: for each op its request and reply messages,
// its mode and flags, at compile time (OpTraits<op>) and at run time
// (kOpInfos, for logs, docs and tests).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "protocol/messages.h"
#include "protocol/ops.h"
#include "protocol/wire.h"

namespace hipr::msg {

// Markers of the table for what is not a msgpack message.
struct NoBody {};    // The frame has no payload.
struct RawBytes {};  // The payload is bulk bytes.
struct NoReply {};   // Nothing answers it.

}  // namespace hipr::msg

namespace hipr::ops {

using wire::Op;

enum class Mode : uint8_t { kCall, kPost, kCallOrPost, kHandshake, kToClient, kLink };

inline constexpr uint32_t kPlain = 0;
inline constexpr uint32_t kSynchronizing = 1u << 0;
inline constexpr uint32_t kStreamOrdered = 1u << 1;
inline constexpr uint32_t kGraphNode = 1u << 2;
inline constexpr uint32_t kBulkIn = 1u << 3;
inline constexpr uint32_t kBulkOut = 1u << 4;

template <Op op>
struct OpTraits;

#define HIPR_OP_TRAITS(name, code, request, reply, mode, flags, note) \
  template <>                                                         \
  struct OpTraits<Op::k##name> {                                      \
    using Request = msg::request;                                     \
    using Reply = msg::reply;                                         \
    static constexpr Mode kMode = Mode::k##mode;                      \
    static constexpr uint32_t kFlags = flags;                         \
  };
HIPR_OPS(HIPR_OP_TRAITS)
#undef HIPR_OP_TRAITS

template <Op op>
using Request = typename OpTraits<op>::Request;
template <Op op>
using Reply = typename OpTraits<op>::Reply;
template <Op op>
inline constexpr Mode kModeOf = OpTraits<op>::kMode;
template <Op op>
inline constexpr bool Has(uint32_t flag) {
  return (OpTraits<op>::kFlags & flag) != 0;
}

// A distinct type per op, for handlers overloaded by op.
template <Op op>
using Tag = std::integral_constant<Op, op>;

// Whether the client may send `Req` as the body of `op`. Generated calls
// (kApiCall) carry their function's own argument type.
template <class T>
struct IsApiCallRequest : std::false_type {};
template <class In>
struct IsApiCallRequest<msg::ApiCallRequest<In>> : std::true_type {};
template <class T>
struct IsApiCallReply : std::false_type {};
template <class Out>
struct IsApiCallReply<msg::ApiCallReply<Out>> : std::true_type {};

template <Op op, class Req>
inline constexpr bool kRequestFits =
    std::is_same_v<Req, Request<op>> || (op == Op::kApiCall && IsApiCallRequest<Req>::value);
template <Op op, class Rep>
inline constexpr bool kReplyFits =
    std::is_same_v<Rep, Reply<op>> || (op == Op::kApiCall && IsApiCallReply<Rep>::value);

// Every op, in table order.
inline constexpr Op kAllOps[] = {
#define HIPR_OP_CODE(name, ...) Op::k##name,
    HIPR_OPS(HIPR_OP_CODE)
#undef HIPR_OP_CODE
};
inline constexpr size_t kOpCount = std::size(kAllOps);

// Calls f(Tag<op>{}) for every op, in table order.
template <class F>
constexpr void ForEachOp(F&& f) {
#define HIPR_OP_VISIT(name, ...) f(Tag<Op::k##name>{});
  HIPR_OPS(HIPR_OP_VISIT)
#undef HIPR_OP_VISIT
}

// The ops a graph may hold, in table order.
inline constexpr size_t kGraphNodeCount = [] {
  size_t n = 0;
  ForEachOp([&](auto tag) { n += Has<decltype(tag)::value>(kGraphNode) ? 1 : 0; });
  return n;
}();
inline constexpr std::array<Op, kGraphNodeCount> kGraphNodeOps = [] {
  std::array<Op, kGraphNodeCount> ops{};
  size_t n = 0;
  ForEachOp([&](auto tag) {
    if (Has<decltype(tag)::value>(kGraphNode)) ops[n++] = decltype(tag)::value;
  });
  return ops;
}();

// The table at run time.
struct OpInfo {
  Op op;
  const char* name;
  const char* request;         // The type's name, as in the table.
  const char* request_fields;  // "a, b, c"; "" for the markers.
  const char* reply;
  const char* reply_fields;
  Mode mode;
  uint32_t flags;
  const char* note;
};

template <class T>
constexpr const char* FieldNamesOf() {
  if constexpr (requires { T::kFieldNames; })
    return T::kFieldNames;
  else
    return "";
}

inline constexpr OpInfo kOpInfos[] = {
#define HIPR_OP_INFO(name, code, request, reply, mode, flags, note)                                            \
  OpInfo{Op::k##name, #name, #request, FieldNamesOf<msg::request>(), #reply, FieldNamesOf<msg::reply>(), \
         Mode::k##mode, flags, note},
    HIPR_OPS(HIPR_OP_INFO)
#undef HIPR_OP_INFO
};

// Codes are unique and each family's codes are in its high byte.
inline constexpr bool kCodesUnique = [] {
  for (size_t i = 0; i < kOpCount; ++i)
    for (size_t j = i + 1; j < kOpCount; ++j)
      if (kAllOps[i] == kAllOps[j]) return false;
  for (Op op : kAllOps)
    if ((static_cast<uint16_t>(op) & wire::kReplyBit) != 0) return false;
  return true;
}();
static_assert(kCodesUnique, "ops.h: two ops share a code, or a code has the reply bit");

}  // namespace hipr::ops
