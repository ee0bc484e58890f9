// Every message type of protocol/messages.h, by index: the wire fuzz target
// (wire_fuzz.cc) decodes its input as the type its first byte names, and the
// seed generator (wire_seeds.cc) writes a valid body of each. The list
// follows the op table; only a type nested in others is added here by hand.
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "protocol/messages.h"
#include "protocol/op_traits.h"
#include "protocol/ops.h"

namespace hipr::fuzz {
namespace detail {

template <class... T>
struct List {};

// Whether T is one of the table's markers, which are no msgpack message.
template <class T>
inline constexpr bool kMarker =
    std::is_same_v<T, msg::NoBody> || std::is_same_v<T, msg::RawBytes> || std::is_same_v<T, msg::NoReply>;

// L with each of U... appended, unless a marker or already in it.
template <class L, class... U>
struct AddAll {
  using type = L;
};
template <class... T, class U, class... Rest>
struct AddAll<List<T...>, U, Rest...> {
  using Added = std::conditional_t<kMarker<U> || (std::is_same_v<U, T> || ...), List<T...>, List<T..., U>>;
  using type = typename AddAll<Added, Rest...>::type;
};

template <class L>
struct AsTuple;
template <class... T>
struct AsTuple<List<T...>> {
  using type = std::tuple<T...>;
};

#define HIPR_FUZZ_OP_MESSAGES(name, code, request, reply, mode, flags, note) , msg::request, msg::reply

// Every request and reply the op table (protocol/ops.h) names, each once, so
// a new op's messages are fuzzed without anyone listing them; then the
// messages only nested in others, which the table cannot name.
using Messages = typename AddAll<List<> HIPR_OPS(HIPR_FUZZ_OP_MESSAGES),
                                 // Nested (and the generated calls' argument and output types, which are
                                 // the worker's: session_fuzz.cc reaches them; one of each stands in here).
                                 msg::AddressWindow, msg::NamedValue, msg::DeviceInfo, msg::ApiCallRequest<msg::Region>,
                                 msg::ApiCallReply<msg::MemInfoReply>, msg::VmmAccess, msg::Region, msg::SharedHost,
                                 msg::ModuleGlobal, msg::GraphNode, msg::DeviceStatus, msg::SessionStatus>::type;

#undef HIPR_FUZZ_OP_MESSAGES

}  // namespace detail

using AllMessages = typename detail::AsTuple<detail::Messages>::type;

inline constexpr size_t kMessageCount = std::tuple_size_v<AllMessages>;

// Whether T is one of AllMessages.
template <class T, class Tuple = AllMessages>
inline constexpr bool kFuzzed = false;
template <class T, class... M>
inline constexpr bool kFuzzed<T, std::tuple<M...>> = (std::is_same_v<T, M> || ...);
// The two the hand-kept list had missed.
static_assert(kFuzzed<msg::RdmaProbe> && kFuzzed<msg::RdmaVerdict>);

// Calls f(T{}) for the message type at `index` (< kMessageCount).
template <class F>
void WithMessage(size_t index, F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((I == index ? (f(std::tuple_element_t<I, AllMessages>{}), 0) : 0), ...);
  }
  (std::make_index_sequence<kMessageCount>{});
}

}  // namespace hipr::fuzz
