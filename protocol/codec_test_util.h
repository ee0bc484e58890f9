// Helpers shared by the codec tests: building raw msgpack, filling every
// field of a message with distinct values, comparing messages field by field.
// Test-only; each test file gets its own copy (anonymous namespace).
#pragma once

#include "protocol/codec.h"

#include <gtest/gtest.h>
// The tests build raw msgpack with the library's own adaptors, which
// codec.h leaves out.
#include <msgpack.hpp>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/wire.h"

namespace hipr {
namespace {

using Bytes = std::vector<uint8_t>;

// ---- Helpers ---------------------------------------------------------------

template <class T>
Bytes Encode(const T& msg) {
  codec::BodyWriter w;
  w.Encode(msg);
  return Bytes(w.data(), w.data() + w.size());
}

// Decodes from a heap buffer of exactly the input's size, so that ASan or
// valgrind notice any read past the end.
template <class T>
Status Decode(const Bytes& bytes, T* out) {
  auto exact = std::make_unique<uint8_t[]>(bytes.size() + 1);
  if (!bytes.empty()) std::memcpy(exact.get(), bytes.data(), bytes.size());
  Status st;
  EXPECT_NO_THROW(st = codec::DecodeBody(exact.get(), bytes.size(), out));
  return st;
}

[[maybe_unused]] Status Parse(const Bytes& bytes) {
  auto exact = std::make_unique<uint8_t[]>(bytes.size() + 1);
  if (!bytes.empty()) std::memcpy(exact.get(), bytes.data(), bytes.size());
  msgpack::object_handle oh;
  Status st;
  EXPECT_NO_THROW(st = codec::ParseBody(exact.get(), bytes.size(), &oh));
  return st;
}

template <class F>
Bytes PackWith(F&& f) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  f(pk);
  return Bytes(reinterpret_cast<const uint8_t*>(buf.data()),
               reinterpret_cast<const uint8_t*>(buf.data()) + buf.size());
}

template <class T>
struct IsStdVector : std::false_type {};
template <class E, class A>
struct IsStdVector<std::vector<E, A>> : std::true_type {};
template <class T>
struct IsStdArray : std::false_type {};
template <class E, size_t N>
struct IsStdArray<std::array<E, N>> : std::true_type {};

// Gives every field of a message a distinct, non-default value (wide
// integers near their limits, strings with an embedded NUL, two elements in
// every vector), so that a dropped, swapped or truncated field shows.
class Filler {
 public:
  template <class T>
  void Fill(T* v) {
    if constexpr (std::is_same_v<T, bool>) {
      *v = (n_++ % 2) == 1;
    } else if constexpr (std::is_enum_v<T>) {
      constexpr StatusCode kCodes[] = {StatusCode::kProtocolError, StatusCode::kLinkDown,
                                       StatusCode::kDeviceLost, StatusCode::kOutOfRange};
      *v = static_cast<T>(kCodes[n_++ % 4]);
    } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
      uint64_t k = n_++;
      *v = (k % 2) ? static_cast<T>(std::numeric_limits<T>::min() + static_cast<T>(k))
                   : static_cast<T>(std::numeric_limits<T>::max() - static_cast<T>(k));
    } else if constexpr (std::is_integral_v<T>) {
      *v = static_cast<T>(std::numeric_limits<T>::max() - static_cast<T>(n_++));
    } else if constexpr (std::is_floating_point_v<T>) {
      *v = static_cast<T>(n_++) + static_cast<T>(0.25);
    } else if constexpr (std::is_same_v<T, std::string>) {
      *v = "field-" + std::to_string(n_++);
      v->push_back('\0');
      *v += "\xc3\xa9nd";
    } else if constexpr (codec::Message<T>) {
      std::apply([&](auto&... f) { (Fill(&f), ...); }, v->Fields());
    } else if constexpr (IsStdArray<T>::value) {
      for (auto& e : *v) Fill(&e);
    } else {
      static_assert(IsStdVector<T>::value);
      v->resize(2);
      for (auto& e : *v) Fill(&e);
    }
  }

 private:
  uint64_t n_ = 1;
};

template <class T>
T Filled() {
  T v;
  Filler().Fill(&v);
  return v;
}

// Field-by-field equality through HIPR_FIELDS (messages have no operator==).
template <class T>
bool DeepEqual(const T& a, const T& b) {
  if constexpr (codec::Message<T>) {
    auto fa = a.Fields();
    auto fb = b.Fields();
    return [&]<size_t... I>(std::index_sequence<I...>) {
      return (DeepEqual(std::get<I>(fa), std::get<I>(fb)) && ...);
    }(std::make_index_sequence<std::tuple_size_v<decltype(fa)>>());
  } else if constexpr (IsStdVector<T>::value || IsStdArray<T>::value) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!DeepEqual(a[i], b[i])) return false;
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    return std::memcmp(&a, &b, sizeof a) == 0;  // Bit-exact, NaN included.
  } else {
    return a == b;
  }
}

// The top-level fields of an encoded message as msgpack objects, to rebuild
// variants of it (more fields, fewer fields, one field replaced).
struct Unpacked {
  msgpack::object_handle oh;
  std::vector<msgpack::object> fields;
};

template <class T>
Unpacked UnpackFields(const T& msg) {
  Unpacked u;
  Bytes b = Encode(msg);
  Status st = codec::ParseBody(b.data(), b.size(), &u.oh);
  EXPECT_TRUE(st.ok()) << st.ToString();
  const msgpack::object& o = u.oh.get();
  EXPECT_EQ(o.type, msgpack::type::ARRAY);
  if (o.type == msgpack::type::ARRAY) u.fields.assign(o.via.array.ptr, o.via.array.ptr + o.via.array.size);
  return u;
}

[[maybe_unused]] Bytes PackArray(const std::vector<msgpack::object>& fields) {
  return PackWith([&](auto& pk) {
    pk.pack_array(static_cast<uint32_t>(fields.size()));
    for (const auto& f : fields) pk.pack(f);
  });
}

[[maybe_unused]] void ExpectProtocolError(const Status& st) {
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_FALSE(st.message().empty());
}


[[maybe_unused]] msg::DeviceInfo Mi250x(int index) {
  msg::DeviceInfo d;
  d.name = "AMD Instinct MI250X/MI250";
  d.gcn_arch_name = "gfx90a:sramecc+:xnack-";
  d.gcn_arch = 910;
  d.total_global_mem = 68702699520ull;
  d.shared_mem_per_block = 65536;
  d.regs_per_block = 65536;
  d.warp_size = 64;
  d.max_threads_per_block = 1024;
  d.max_threads_dim = {1024, 1024, 1024};
  d.max_grid_size = {2147483647, 2147483647, 2147483647};
  d.clock_rate_khz = 1700000;
  d.memory_clock_rate_khz = 1600000;
  d.memory_bus_width_bits = 4096;
  d.total_const_mem = 2147483647;
  d.major = 9;
  d.minor = 0;
  d.multi_processor_count = 110;
  d.l2_cache_size = 8388608;
  d.max_threads_per_multiprocessor = 2048;
  d.clock_instruction_rate_khz = 1000000;
  d.pci_domain_id = 0;
  d.pci_bus_id = 0x29 + index;
  d.pci_device_id = index;
  d.max_shared_memory_per_multiprocessor = 65536;
  d.is_multi_gpu_board = true;
  d.integrated = false;
  d.cooperative_launch = true;
  d.ecc_enabled = true;
  d.managed_memory = true;
  d.large_bar = index == 1;
  d.asic_revision = 1;
  d.mem_pitch = 2147483647;
  d.texture_alignment = 256;
  d.max_texture_1d = 16384;
  d.max_texture_1d_linear = 2147483647;
  d.max_texture_2d = {16384, 16384 - index};
  d.max_texture_3d = {16384, 16384, 8192};
  d.properties = {{"asyncEngineCount", 8}, {"PciChipId", 0x740c + index}, {"HostNumaId", -1}};
  return d;
}

[[maybe_unused]] msg::HelloReply SampleHelloReply() {
  msg::HelloReply r;
  r.status = StatusCode::kOk;
  r.message = "welcome";
  r.version = 1;
  r.session_id = 0xFEEDFACECAFEBEEFull;
  r.device_kind = "sim";
  r.devices = {Mi250x(0), Mi250x(1)};
  r.window = {0x7e0000000000, 0x40000000000};
  r.chunk_bytes = 1u << 20;
  r.heartbeat_ms = 500;
  r.driver_version = 50422804;
  r.runtime_version = -50422804;
  r.worker_version = "hipr-worker 0.1.0";
  r.features = {wire::kFeatureLz4ToDevice, wire::kFeatureLz4FromDevice};
  return r;
}

}  // namespace
}  // namespace hipr
