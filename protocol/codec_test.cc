// Tests of the wire header (wire.h) and the msgpack body codec (codec.h) for
// every message of messages.h: exact byte layouts, round trips, forward
// compatibility, and hostile input that must end in a ProtocolError rather
// than an exception, a crash or a large allocation.
#include "protocol/codec.h"

#include <gtest/gtest.h>

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

Status Parse(const Bytes& bytes) {
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

Bytes PackArray(const std::vector<msgpack::object>& fields) {
  return PackWith([&](auto& pk) {
    pk.pack_array(static_cast<uint32_t>(fields.size()));
    for (const auto& f : fields) pk.pack(f);
  });
}

void ExpectProtocolError(const Status& st) {
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_FALSE(st.message().empty());
}

// ---- Header ----------------------------------------------------------------

TEST(WireHeader, EncodesSixteenLittleEndianBytes) {
  wire::FrameHeader h{wire::kMagic, 0x0201, 0x8F01, 0x11223344, 0x55667788};
  uint8_t out[16];
  std::memset(out, 0xCC, sizeof out);
  wire::EncodeHeader(h, out);
  const uint8_t expected[16] = {'R',  'P',  'I',  'H',                      // magic 0x48495052
                                0x01, 0x02,                                 // version
                                0x01, 0x8F,                                 // op
                                0x44, 0x33, 0x22, 0x11,                     // request_id
                                0x88, 0x77, 0x66, 0x55};                    // payload_length
  EXPECT_EQ(0, std::memcmp(out, expected, sizeof expected));
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], expected[i]) << "byte " << i;
}

TEST(WireHeader, EncodeWritesExactlySixteenBytes) {
  uint8_t out[20];
  std::memset(out, 0xCC, sizeof out);
  wire::EncodeHeader(wire::MakeHeader(1, 2, 3), out);
  for (int i = 16; i < 20; ++i) EXPECT_EQ(out[i], 0xCC) << "byte " << i << " overwritten";
}

TEST(WireHeader, DecodesLiteralBytes) {
  const uint8_t in[16] = {0x52, 0x50, 0x49, 0x48, 0x01, 0x00, 0x03, 0x0F,
                          0xEF, 0xBE, 0xAD, 0xDE, 0x00, 0x00, 0x00, 0x01};
  wire::FrameHeader h = wire::DecodeHeader(in);
  EXPECT_EQ(h.magic, wire::kMagic);
  EXPECT_EQ(h.version, 1);
  EXPECT_EQ(h.op, static_cast<uint16_t>(wire::Op::kHeartbeat));
  EXPECT_EQ(h.request_id, 0xDEADBEEFu);
  EXPECT_EQ(h.payload_length, 0x01000000u);
}

TEST(WireHeader, RoundTripsExtremeValues) {
  const wire::FrameHeader cases[] = {
      {0, 0, 0, 0, 0},
      {0xFFFFFFFF, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF},
      {wire::kMagic, wire::kProtocolVersion, wire::ReplyOp(wire::Op::kCopyFromDevice), 0x80000001,
       wire::kMaxPayloadBytes},
  };
  for (const auto& h : cases) {
    uint8_t raw[16];
    wire::EncodeHeader(h, raw);
    wire::FrameHeader d = wire::DecodeHeader(raw);
    EXPECT_EQ(d.magic, h.magic);
    EXPECT_EQ(d.version, h.version);
    EXPECT_EQ(d.op, h.op);
    EXPECT_EQ(d.request_id, h.request_id);
    EXPECT_EQ(d.payload_length, h.payload_length);
  }
}

TEST(WireHeader, MakeHeaderAndReplyOp) {
  wire::FrameHeader h = wire::MakeHeader(wire::ReplyOp(wire::Op::kHello), 7, 99);
  EXPECT_EQ(h.magic, wire::kMagic);
  EXPECT_EQ(h.version, wire::kProtocolVersion);
  EXPECT_EQ(h.op, 0x8F01);
  EXPECT_EQ(h.request_id, 7u);
  EXPECT_EQ(h.payload_length, 99u);
  EXPECT_EQ(wire::ReplyOp(wire::Op::kMalloc), 0x8101);
}

TEST(WireHeader, OpCodesSitInTheirFamilies) {
  auto family = [](wire::Op op) { return static_cast<uint16_t>(op) >> 8; };
  EXPECT_EQ(family(wire::Op::kDeviceSynchronize), 0x00);
  EXPECT_EQ(family(wire::Op::kMemGetInfo), 0x00);
  EXPECT_EQ(family(wire::Op::kMalloc), 0x01);
  EXPECT_EQ(family(wire::Op::kMemset), 0x01);
  EXPECT_EQ(family(wire::Op::kCopyToDevice), 0x02);
  EXPECT_EQ(family(wire::Op::kCopyOnDevice), 0x02);
  EXPECT_EQ(family(wire::Op::kStreamCreate), 0x04);
  EXPECT_EQ(family(wire::Op::kEventElapsedTime), 0x04);
  EXPECT_EQ(family(wire::Op::kHello), 0x0F);
  EXPECT_EQ(family(wire::Op::kFatal), 0x0F);
  // No request op may have the reply bit set.
  for (wire::Op op : {wire::Op::kDeviceSynchronize, wire::Op::kCopyFromDevice, wire::Op::kEventElapsedTime,
                      wire::Op::kHello, wire::Op::kData, wire::Op::kFatal})
    EXPECT_EQ(static_cast<uint16_t>(op) & wire::kReplyBit, 0);
}

TEST(WireLimits, AreConsistent) {
  EXPECT_LE(wire::kMinChunkBytes, wire::kDefaultChunkBytes);
  EXPECT_LE(wire::kDefaultChunkBytes, wire::kMaxChunkBytes);
  EXPECT_LE(wire::kMaxBodyBytes, wire::kMaxPayloadBytes);
  EXPECT_LE(wire::kMaxMsgpackString, wire::kMaxBodyBytes);
  EXPECT_LE(wire::kMaxMsgpackBin, wire::kMaxBodyBytes);
}

// ---- Encoding is an array of fields ------------------------------------------

TEST(Codec, EncodesMessagesAsArraysOfFieldsInOrder) {
  EXPECT_EQ(Encode(msg::DeviceRequest{5}), (Bytes{0x91, 0x05}));
  EXPECT_EQ(Encode(msg::CallReply{-1}), (Bytes{0x91, 0xFF}));
  EXPECT_EQ(Encode(msg::FreeRequest{0x1122334455667788}),
            (Bytes{0x91, 0xCF, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88}));
  msg::AddressWindow w;
  w.base = 0x7f0000000000;
  w.size = 1;
  EXPECT_EQ(Encode(w), (Bytes{0x92, 0xCF, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01}));
  msg::Fatal f;
  f.status = StatusCode::kDeviceLost;
  f.message = "ab";
  EXPECT_EQ(Encode(f), (Bytes{0x92, 103, 0xA2, 'a', 'b'}));
  msg::CopyToDeviceRequest c;
  c.device = 1;
  c.stream = 2;
  c.dst = {3, 4, 5, 6};
  c.want_reply = true;
  EXPECT_EQ(Encode(c), (Bytes{0x94, 0x01, 0x02, 0x94, 0x03, 0x04, 0x05, 0x06, 0xC3}));
}

TEST(Codec, BodyWriterCanBeReused) {
  codec::BodyWriter w;
  msg::HelloRequest big = Filled<msg::HelloRequest>();
  w.Encode(big);
  size_t big_size = w.size();
  w.Encode(msg::DeviceRequest{3});
  ASSERT_LT(w.size(), big_size);
  EXPECT_EQ(Bytes(w.data(), w.data() + w.size()), (Bytes{0x91, 0x03}));
  msg::HelloRequest back;
  w.Encode(big);
  ASSERT_TRUE(codec::DecodeBody(w.data(), w.size(), &back).ok());
  EXPECT_TRUE(DeepEqual(big, back));
}

// ---- Round trips -----------------------------------------------------------

TEST(Codec, DeepEqualSeesADifference) {
  // The helper must be able to fail, or the round trips below prove nothing.
  msg::HelloReply a = Filled<msg::HelloReply>();
  msg::HelloReply b = a;
  EXPECT_TRUE(DeepEqual(a, b));
  b.devices[1].max_texture_3d[2] += 1;
  EXPECT_FALSE(DeepEqual(a, b));
  b = a;
  b.devices.pop_back();
  EXPECT_FALSE(DeepEqual(a, b));
  b = a;
  b.window.size ^= 1;
  EXPECT_FALSE(DeepEqual(a, b));
  b = a;
  b.worker_version.back() = 'X';
  EXPECT_FALSE(DeepEqual(a, b));
}

TEST(Codec, HelloRequestRoundTrip) {
  msg::HelloRequest in;
  in.min_version = 1;
  in.max_version = 0xFFFF;
  in.auth_token = std::string("tok\0en", 6);
  in.client_name = "python3 on ci-runner-17";
  in.client_pid = 0xFFFFFFFF;
  in.window = {0x7e0000000000, 0x100000000000};
  in.chunk_bytes = wire::kDefaultChunkBytes;
  in.features = {"lz4", "", "zerocopy"};
  msg::HelloRequest out;
  Status st = Decode(Encode(in), &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(out.min_version, 1);
  EXPECT_EQ(out.max_version, 0xFFFF);
  EXPECT_EQ(out.auth_token, std::string("tok\0en", 6));
  EXPECT_EQ(out.client_name, "python3 on ci-runner-17");
  EXPECT_EQ(out.client_pid, 0xFFFFFFFFu);
  EXPECT_EQ(out.window.base, 0x7e0000000000u);
  EXPECT_EQ(out.window.size, 0x100000000000u);
  EXPECT_EQ(out.chunk_bytes, wire::kDefaultChunkBytes);
  EXPECT_EQ(out.features, (std::vector<std::string>{"lz4", "", "zerocopy"}));
}

msg::DeviceInfo Mi250x(int index) {
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
  d.max_texture_2d = {16384, 16384 - index};
  d.max_texture_3d = {16384, 16384, 8192};
  return d;
}

msg::HelloReply SampleHelloReply() {
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
  return r;
}

TEST(Codec, HelloReplyWithTwoDevicesRoundTrip) {
  msg::HelloReply in = SampleHelloReply();
  msg::HelloReply out;
  Status st = Decode(Encode(in), &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(DeepEqual(in, out));
  ASSERT_EQ(out.devices.size(), 2u);
  EXPECT_EQ(out.devices[0].gcn_arch_name, "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(out.devices[1].pci_bus_id, 0x2A);
  EXPECT_EQ(out.devices[1].max_texture_2d[1], 16383);
  EXPECT_TRUE(out.devices[1].large_bar);
  EXPECT_FALSE(out.devices[0].large_bar);
  EXPECT_EQ(out.devices[0].max_grid_size[2], 2147483647);
  EXPECT_EQ(out.session_id, 0xFEEDFACECAFEBEEFull);
  EXPECT_EQ(out.runtime_version, -50422804);
}

TEST(Codec, RegionAndCopiesRoundTrip) {
  msg::CopyOnDeviceRequest in;
  in.device = 3;
  in.stream = 0xFFFFFFFFFFFFFFFFull;
  in.dst = {0x7e0000001000, 4096, 3000, 77};
  in.src = {0x7e0000800000, 8192, 3000, 77};
  in.want_reply = true;
  msg::CopyOnDeviceRequest out;
  ASSERT_TRUE(Decode(Encode(in), &out).ok());
  EXPECT_EQ(out.device, 3);
  EXPECT_EQ(out.stream, 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(out.dst.address, 0x7e0000001000u);
  EXPECT_EQ(out.dst.pitch, 4096u);
  EXPECT_EQ(out.dst.width, 3000u);
  EXPECT_EQ(out.dst.height, 77u);
  EXPECT_EQ(out.src.address, 0x7e0000800000u);
  EXPECT_EQ(out.src.pitch, 8192u);
  EXPECT_EQ(out.src.bytes(), 3000u * 77u);
  EXPECT_TRUE(out.want_reply);
}

TEST(Codec, EventElapsedReplyKeepsFloatBits) {
  // msgpack-c packs whole-valued doubles as integers, so negative whole
  // values arrive as msgpack negative integers and must still decode.
  for (float ms : {0.0f, 1.5f, -1.5f, -1.0f, -3.0f, 2.0f, 16777216.0f, -1e10f, 3.4028235e38f,
                   -3.4028235e38f, 1e-45f, std::numeric_limits<float>::infinity(),
                   -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    msg::EventElapsedReply in;
    in.error = 600;
    in.milliseconds = ms;
    msg::EventElapsedReply out;
    ASSERT_TRUE(Decode(Encode(in), &out).ok());
    EXPECT_TRUE(DeepEqual(in, out)) << ms;
  }
}

TEST(Codec, NegativeZeroArrivesAsZero) {
  // The sign of a zero is lost (msgpack-c packs it as the integer 0).
  msg::EventElapsedReply in;
  in.milliseconds = -0.0f;
  msg::EventElapsedReply out;
  out.milliseconds = 5.0f;
  ASSERT_TRUE(Decode(Encode(in), &out).ok());
  EXPECT_EQ(out.milliseconds, 0.0f);
}

TEST(Codec, IntegerLimitsRoundTrip) {
  msg::MemsetRequest in;
  in.device = std::numeric_limits<int32_t>::min();
  in.stream = std::numeric_limits<uint64_t>::max();
  in.dst = {0, 0, std::numeric_limits<uint64_t>::max(), 0};
  in.value = std::numeric_limits<uint32_t>::max();
  in.element_size = 255;
  msg::MemsetRequest out;
  ASSERT_TRUE(Decode(Encode(in), &out).ok());
  EXPECT_TRUE(DeepEqual(in, out));
  in.device = std::numeric_limits<int32_t>::max();
  in.element_size = 0;
  ASSERT_TRUE(Decode(Encode(in), &out).ok());
  EXPECT_TRUE(DeepEqual(in, out));
}

// ---- Properties checked for every message type ------------------------------

template <class T>
class EveryMessage : public ::testing::Test {};

using AllMessages =
    ::testing::Types<msg::AddressWindow, msg::HelloRequest, msg::DeviceInfo, msg::HelloReply, msg::Fatal,
                     msg::CallReply, msg::DeviceRequest, msg::MemInfoReply, msg::MallocRequest,
                     msg::MallocReply, msg::FreeRequest, msg::Region, msg::MemsetRequest,
                     msg::CopyToDeviceRequest, msg::CopyFromDeviceRequest, msg::CopyOnDeviceRequest,
                     msg::StreamCreateRequest, msg::StreamRequest, msg::StreamWaitEventRequest,
                     msg::EventCreateRequest, msg::EventRequest, msg::EventRecordRequest,
                     msg::EventElapsedRequest, msg::EventElapsedReply>;
TYPED_TEST_SUITE(EveryMessage, AllMessages);

TYPED_TEST(EveryMessage, RoundTripsNonDefaultValues) {
  TypeParam in = Filled<TypeParam>();
  EXPECT_FALSE(DeepEqual(in, TypeParam{})) << "filler left the message at its defaults";
  TypeParam out;
  Status st = Decode(Encode(in), &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(DeepEqual(in, out));
}

TYPED_TEST(EveryMessage, DefaultValuesRoundTrip) {
  TypeParam in{};
  TypeParam out = Filled<TypeParam>();
  ASSERT_TRUE(Decode(Encode(in), &out).ok());
  EXPECT_TRUE(DeepEqual(in, out));
}

TYPED_TEST(EveryMessage, AcceptsExtraTrailingFields) {
  TypeParam in = Filled<TypeParam>();
  Unpacked u = UnpackFields(in);
  msgpack::zone z;
  std::vector<msgpack::object> fields = u.fields;
  fields.push_back(msgpack::object());  // nil
  fields.push_back(msgpack::object(std::string("from a newer peer"), z));
  fields.push_back(msgpack::object(std::vector<int>{1, 2, 3}, z));
  fields.push_back(msgpack::object(-7));
  TypeParam out;
  Status st = Decode(PackArray(fields), &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(DeepEqual(in, out));
}

TYPED_TEST(EveryMessage, RejectsTooFewFields) {
  Unpacked u = UnpackFields(Filled<TypeParam>());
  for (size_t n = 0; n < u.fields.size(); ++n) {
    std::vector<msgpack::object> fewer(u.fields.begin(), u.fields.begin() + n);
    TypeParam out;
    ExpectProtocolError(Decode(PackArray(fewer), &out));
  }
}

TYPED_TEST(EveryMessage, RejectsAWrongTypeInEveryField) {
  Unpacked u = UnpackFields(Filled<TypeParam>());
  msgpack::zone z;
  std::map<std::string, int> map{{"k", 1}};
  const msgpack::object wrong[] = {msgpack::object(), msgpack::object(map, z)};
  for (size_t i = 0; i < u.fields.size(); ++i) {
    for (const auto& w : wrong) {
      std::vector<msgpack::object> fields = u.fields;
      fields[i] = w;
      TypeParam out;
      Status st = Decode(PackArray(fields), &out);
      ExpectProtocolError(st);
    }
  }
}

TYPED_TEST(EveryMessage, RejectsEveryTruncation) {
  Bytes full = Encode(Filled<TypeParam>());
  for (size_t len = 0; len < full.size(); ++len) {
    TypeParam out;
    ExpectProtocolError(Decode(Bytes(full.begin(), full.begin() + len), &out));
  }
}

TYPED_TEST(EveryMessage, RejectsTrailingBytes) {
  Bytes full = Encode(Filled<TypeParam>());
  TypeParam out;
  Bytes one_more = full;
  one_more.push_back(0x00);
  ExpectProtocolError(Decode(one_more, &out));
  Bytes twice = full;
  twice.insert(twice.end(), full.begin(), full.end());
  ExpectProtocolError(Decode(twice, &out));
}

TYPED_TEST(EveryMessage, RejectsANonArrayBody) {
  TypeParam out;
  ExpectProtocolError(Decode(PackWith([](auto& pk) { pk.pack(42); }), &out));
  ExpectProtocolError(Decode(PackWith([](auto& pk) { pk.pack(std::string("hello")); }), &out));
  ExpectProtocolError(Decode(PackWith([](auto& pk) { pk.pack_map(0); }), &out));
  ExpectProtocolError(Decode(PackWith([](auto& pk) { pk.pack_nil(); }), &out));
}

// ---- Malformed and hostile bodies --------------------------------------------

TEST(CodecMalformed, EmptyBody) {
  msg::CallReply out;
  ExpectProtocolError(Decode(Bytes{}, &out));
  msgpack::object_handle oh;
  ExpectProtocolError(codec::ParseBody(nullptr, 0, &oh));
}

TEST(CodecMalformed, EveryPrefixOfAHelloReply) {
  Bytes full = Encode(SampleHelloReply());
  ASSERT_GT(full.size(), 400u);
  for (size_t len = 0; len < full.size(); ++len) {
    msg::HelloReply out;
    Status st = Decode(Bytes(full.begin(), full.begin() + len), &out);
    ExpectProtocolError(st);
    if (st.ok()) FAIL() << "prefix of " << len << " bytes decoded";
  }
  msg::HelloReply out;
  EXPECT_TRUE(Decode(full, &out).ok());
}

TEST(CodecMalformed, HelloReplyWithTrailingGarbage) {
  Bytes b = Encode(SampleHelloReply());
  b.insert(b.end(), {0xDE, 0xAD});
  msg::HelloReply out;
  ExpectProtocolError(Decode(b, &out));
}

TEST(CodecMalformed, StringWhereIntegerExpected) {
  Bytes b = PackWith([](auto& pk) {
    pk.pack_array(1);
    pk.pack(std::string("5"));
  });
  msg::DeviceRequest out;
  ExpectProtocolError(Decode(b, &out));
  Unpacked u = UnpackFields(Filled<msg::HelloRequest>());
  msgpack::zone z;
  u.fields[0] = msgpack::object(std::string("1"), z);  // min_version
  msg::HelloRequest hello;
  ExpectProtocolError(Decode(PackArray(u.fields), &hello));
}

TEST(CodecMalformed, IntegerWhereStringOrBoolExpected) {
  Unpacked u = UnpackFields(Filled<msg::Fatal>());
  u.fields[1] = msgpack::object(12);  // message
  msg::Fatal fatal;
  ExpectProtocolError(Decode(PackArray(u.fields), &fatal));
  Bytes bin = PackWith([](auto& pk) {  // Bytes are not a string either.
    pk.pack_array(2);
    pk.pack_int32(100);
    pk.pack_bin(2);
    pk.pack_bin_body("ab", 2);
  });
  ExpectProtocolError(Decode(bin, &fatal));

  Unpacked c = UnpackFields(Filled<msg::CopyToDeviceRequest>());
  c.fields[3] = msgpack::object(1);  // want_reply: 1 is not `true`.
  msg::CopyToDeviceRequest copy;
  ExpectProtocolError(Decode(PackArray(c.fields), &copy));
}

TEST(CodecMalformed, NegativeIntoUnsigned) {
  for (int64_t v : {int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
    Bytes b = PackWith([&](auto& pk) {
      pk.pack_array(3);
      pk.pack_int32(0);
      pk.pack_int64(v);  // size
      pk.pack_uint32(0);
    });
    msg::MallocRequest out;
    ExpectProtocolError(Decode(b, &out));
  }
  Bytes ok = PackWith([](auto& pk) {
    pk.pack_array(3);
    pk.pack_int32(-1);  // device is signed
    pk.pack_uint64(std::numeric_limits<uint64_t>::max());
    pk.pack_uint32(0);
  });
  msg::MallocRequest out;
  ASSERT_TRUE(Decode(ok, &out).ok());
  EXPECT_EQ(out.device, -1);
  EXPECT_EQ(out.size, std::numeric_limits<uint64_t>::max());
}

Bytes OneInt(bool negative, uint64_t magnitude_or_value) {
  return PackWith([&](auto& pk) {
    pk.pack_array(1);
    if (negative)
      pk.pack_int64(static_cast<int64_t>(magnitude_or_value));
    else
      pk.pack_uint64(magnitude_or_value);
  });
}

TEST(CodecMalformed, IntegerOverflowIntoInt32) {
  msg::DeviceRequest out;
  ExpectProtocolError(Decode(OneInt(false, 0x80000000ull), &out));
  ExpectProtocolError(Decode(OneInt(false, std::numeric_limits<uint64_t>::max()), &out));
  ExpectProtocolError(Decode(OneInt(true, static_cast<uint64_t>(int64_t{-2147483649})), &out));
  ExpectProtocolError(
      Decode(OneInt(true, static_cast<uint64_t>(std::numeric_limits<int64_t>::min())), &out));
  ASSERT_TRUE(Decode(OneInt(false, 0x7FFFFFFF), &out).ok());
  EXPECT_EQ(out.device, 0x7FFFFFFF);
  ASSERT_TRUE(Decode(OneInt(true, static_cast<uint64_t>(int64_t{-2147483648})), &out).ok());
  EXPECT_EQ(out.device, std::numeric_limits<int32_t>::min());
}

TEST(CodecMalformed, IntegerOverflowIntoUint8AndUint16AndUint32) {
  auto memset_with = [](uint64_t value, uint64_t element_size) {
    return PackWith([&](auto& pk) {
      pk.pack_array(5);
      pk.pack_int32(0);
      pk.pack_uint64(0);
      pk.pack_array(4);
      for (int i = 0; i < 4; ++i) pk.pack_uint64(1);
      pk.pack_uint64(value);
      pk.pack_uint64(element_size);
    });
  };
  msg::MemsetRequest m;
  ExpectProtocolError(Decode(memset_with(0, 256), &m));
  ExpectProtocolError(Decode(memset_with(0, 0x10000000000ull + 1), &m));
  ExpectProtocolError(Decode(memset_with(0x100000000ull, 1), &m));
  ASSERT_TRUE(Decode(memset_with(0xFFFFFFFF, 255), &m).ok());
  EXPECT_EQ(m.value, 0xFFFFFFFFu);
  EXPECT_EQ(m.element_size, 255);

  Unpacked u = UnpackFields(Filled<msg::HelloRequest>());
  u.fields[1] = msgpack::object(65536);  // max_version is uint16
  msg::HelloRequest hello;
  ExpectProtocolError(Decode(PackArray(u.fields), &hello));
}

TEST(CodecMalformed, EnumOutsideItsUnderlyingType) {
  msg::Fatal out;
  Bytes b = PackWith([](auto& pk) {
    pk.pack_array(2);
    pk.pack_uint64(0x80000000ull);  // StatusCode is an int
    pk.pack(std::string("x"));
  });
  ExpectProtocolError(Decode(b, &out));
}

TEST(CodecMalformed, FloatFields) {
  auto elapsed = [](auto pack_value) {
    return PackWith([&](auto& pk) {
      pk.pack_array(2);
      pk.pack_int32(0);
      pack_value(pk);
    });
  };
  msg::EventElapsedReply out;
  ExpectProtocolError(Decode(elapsed([](auto& pk) { pk.pack(std::string("1.5")); }), &out));
  ExpectProtocolError(Decode(elapsed([](auto& pk) { pk.pack_true(); }), &out));
  ASSERT_TRUE(Decode(elapsed([](auto& pk) { pk.pack_float(2.5f); }), &out).ok());
  EXPECT_EQ(out.milliseconds, 2.5f);
  ASSERT_TRUE(Decode(elapsed([](auto& pk) { pk.pack_uint64(3); }), &out).ok());
  EXPECT_EQ(out.milliseconds, 3.0f);
  ASSERT_TRUE(Decode(elapsed([](auto& pk) { pk.pack_int64(-4); }), &out).ok());
  EXPECT_EQ(out.milliseconds, -4.0f);
  ASSERT_TRUE(Decode(elapsed([](auto& pk) { pk.pack_double(-1e30); }), &out).ok());
  EXPECT_EQ(out.milliseconds, -1e30f);
  // A double far outside float's range must not reach an undefined
  // double->float conversion: rejected.
  ExpectProtocolError(Decode(elapsed([](auto& pk) { pk.pack_double(1e300); }), &out));
  ExpectProtocolError(Decode(elapsed([](auto& pk) { pk.pack_double(-1e300); }), &out));
}

TEST(CodecMalformed, FixedSizeArrayOfTheWrongLength) {
  msg::DeviceInfo info = Filled<msg::DeviceInfo>();
  Unpacked u = UnpackFields(info);
  // max_threads_dim is field 8 (std::array<int32_t, 3>).
  for (uint32_t n : {0u, 2u, 4u}) {
    std::vector<msgpack::object> fields = u.fields;
    msgpack::zone z;
    fields[8] = msgpack::object(std::vector<int>(n, 7), z);
    msg::DeviceInfo out;
    ExpectProtocolError(Decode(PackArray(fields), &out));
  }
  std::vector<msgpack::object> fields = u.fields;
  msgpack::zone z;
  fields[8] = msgpack::object(std::vector<int>{1, 2, 3}, z);
  msg::DeviceInfo out;
  ASSERT_TRUE(Decode(PackArray(fields), &out).ok());
  EXPECT_EQ(out.max_threads_dim, (std::array<int32_t, 3>{1, 2, 3}));
}

TEST(CodecMalformed, WrongElementInAVector) {
  Unpacked u = UnpackFields(Filled<msg::HelloRequest>());
  msgpack::zone z;
  std::vector<msgpack::object> features = {msgpack::object(std::string("lz4"), z), msgpack::object(1)};
  msgpack::object arr;
  arr.type = msgpack::type::ARRAY;
  arr.via.array.size = 2;
  arr.via.array.ptr = features.data();
  u.fields[7] = arr;
  msg::HelloRequest out;
  ExpectProtocolError(Decode(PackArray(u.fields), &out));
}

TEST(CodecMalformed, BrokenNestedMessage) {
  Unpacked u = UnpackFields(Filled<msg::HelloReply>());
  msg::HelloReply out;
  {
    std::vector<msgpack::object> fields = u.fields;
    fields[6] = msgpack::object(12);  // window must be an array
    ExpectProtocolError(Decode(PackArray(fields), &out));
  }
  {
    std::vector<msgpack::object> fields = u.fields;
    msgpack::zone z;
    fields[6] = msgpack::object(std::vector<uint64_t>{1}, z);  // window with one field
    ExpectProtocolError(Decode(PackArray(fields), &out));
  }
  {
    std::vector<msgpack::object> fields = u.fields;
    msgpack::zone z;
    fields[6] = msgpack::object(std::vector<uint64_t>{1, 2, 3, 4}, z);  // a newer window
    ASSERT_TRUE(Decode(PackArray(fields), &out).ok());
    EXPECT_EQ(out.window.base, 1u);
    EXPECT_EQ(out.window.size, 2u);
  }
  {
    // A device that is a string instead of a DeviceInfo array.
    std::vector<msgpack::object> fields = u.fields;
    msgpack::zone z;
    fields[5] = msgpack::object(std::vector<std::string>{"gfx90a"}, z);
    ExpectProtocolError(Decode(PackArray(fields), &out));
  }
}

TEST(CodecMalformed, InvalidMsgpackBytes) {
  msg::CallReply out;
  ExpectProtocolError(Decode(Bytes{0xC1}, &out));        // never used
  ExpectProtocolError(Decode(Bytes{0x91, 0xC1}, &out));  // inside an array
  ExpectProtocolError(Decode(Bytes{0x91, 0xD4, 0x01, 0x02}, &out));  // fixext: ext is off
  ExpectProtocolError(Decode(Bytes{0x91, 0xC7, 0x00, 0x05}, &out));  // ext8 of size 0
}

Bytes Nested(uint32_t depth, bool maps) {
  return PackWith([&](auto& pk) {
    for (uint32_t i = 0; i < depth; ++i) {
      if (maps) {
        pk.pack_map(1);
        pk.pack_uint32(i);
      } else {
        pk.pack_array(1);
      }
    }
    pk.pack_uint32(0);
  });
}

TEST(CodecLimits, NestingDepth) {
  EXPECT_TRUE(Parse(Nested(wire::kMaxMsgpackDepth, false)).ok());
  ExpectProtocolError(Parse(Nested(wire::kMaxMsgpackDepth + 1, false)));
  EXPECT_TRUE(Parse(Nested(wire::kMaxMsgpackDepth, true)).ok());
  ExpectProtocolError(Parse(Nested(wire::kMaxMsgpackDepth + 1, true)));
  // Deep enough to overflow a recursive parser's stack if depth were not capped.
  Bytes deep(200000, 0x91);
  deep.push_back(0x00);
  ExpectProtocolError(Parse(deep));
  msg::CallReply out;
  ExpectProtocolError(Decode(deep, &out));
}

TEST(CodecLimits, HugeArrayHeaderWithNoData) {
  for (Bytes b : {Bytes{0xDD, 0xFF, 0xFF, 0xFF, 0xFF}, Bytes{0xDD, 0x00, 0x00, 0x10, 0x01},
                  Bytes{0xDF, 0xFF, 0xFF, 0xFF, 0xFF}, Bytes{0x91, 0xDD, 0xFF, 0xFF, 0xFF, 0xFF}}) {
    ExpectProtocolError(Parse(b));
    msg::HelloReply out;
    ExpectProtocolError(Decode(b, &out));
  }
}

TEST(CodecLimits, HugeStringAndBinHeadersWithNoData) {
  for (Bytes b : {Bytes{0xDB, 0xFF, 0xFF, 0xFF, 0xFF}, Bytes{0x91, 0xDB, 0xFF, 0xFF, 0xFF, 0xFF, 'a'},
                  Bytes{0xC6, 0xFF, 0xFF, 0xFF, 0xFF}, Bytes{0xC9, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}}) {
    ExpectProtocolError(Parse(b));
    msg::Fatal out;
    ExpectProtocolError(Decode(b, &out));
  }
}

TEST(CodecLimits, ArrayAndMapSizes) {
  auto array_of = [](uint32_t n) {
    return PackWith([&](auto& pk) {
      pk.pack_array(n);
      for (uint32_t i = 0; i < n; ++i) pk.pack_nil();
    });
  };
  EXPECT_TRUE(Parse(array_of(wire::kMaxMsgpackArray)).ok());
  ExpectProtocolError(Parse(array_of(wire::kMaxMsgpackArray + 1)));
  auto map_of = [](uint32_t n) {
    return PackWith([&](auto& pk) {
      pk.pack_map(n);
      for (uint32_t i = 0; i < n; ++i) {
        pk.pack_uint32(i);
        pk.pack_nil();
      }
    });
  };
  EXPECT_TRUE(Parse(map_of(wire::kMaxMsgpackMap)).ok());
  ExpectProtocolError(Parse(map_of(wire::kMaxMsgpackMap + 1)));
  // A vector field longer than the limit never reaches the decoder's resize().
  Unpacked u = UnpackFields(Filled<msg::HelloRequest>());
  msgpack::zone z;
  u.fields[7] = msgpack::object(std::vector<std::string>(wire::kMaxMsgpackArray + 1, "f"), z);
  msg::HelloRequest out;
  ExpectProtocolError(Decode(PackArray(u.fields), &out));
}

TEST(CodecLimits, StringAndBinSizes) {
  auto str_of = [](uint32_t n) {
    return PackWith([&](auto& pk) {
      std::string s(n, 's');
      pk.pack(s);
    });
  };
  EXPECT_TRUE(Parse(str_of(wire::kMaxMsgpackString)).ok());
  ExpectProtocolError(Parse(str_of(wire::kMaxMsgpackString + 1)));
  auto bin_of = [](uint32_t n) {
    return PackWith([&](auto& pk) {
      std::string s(n, 'b');
      pk.pack_bin(n);
      pk.pack_bin_body(s.data(), n);
    });
  };
  EXPECT_TRUE(Parse(bin_of(wire::kMaxMsgpackBin)).ok());
  ExpectProtocolError(Parse(bin_of(wire::kMaxMsgpackBin + 1)));
  // Through a message: a client name over the limit.
  msg::HelloRequest hello = Filled<msg::HelloRequest>();
  hello.client_name.assign(wire::kMaxMsgpackString + 1, 'n');
  msg::HelloRequest out;
  ExpectProtocolError(Decode(Encode(hello), &out));
}

// A valid body of exactly `total` bytes: an array of 17 strings, each
// within the string limit, each with a 5-byte str32 header.
Bytes ValidBodyOfSize(size_t total) {
  const size_t kStrings = 17;
  const size_t overhead = 3 + kStrings * 5;  // array16 + str32 headers
  size_t payload = total - overhead;
  Bytes b = {0xDC, 0x00, static_cast<uint8_t>(kStrings)};
  for (size_t i = 0; i < kStrings; ++i) {
    size_t n = payload / kStrings + (i < payload % kStrings ? 1 : 0);
    b.insert(b.end(), {0xDB, static_cast<uint8_t>(n >> 24), static_cast<uint8_t>(n >> 16),
                       static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)});
    b.insert(b.end(), n, static_cast<uint8_t>('a' + i));
  }
  return b;
}

TEST(CodecLimits, BodySize) {
  Bytes at_limit = ValidBodyOfSize(wire::kMaxBodyBytes);
  ASSERT_EQ(at_limit.size(), wire::kMaxBodyBytes);
  EXPECT_TRUE(Parse(at_limit).ok());
  Bytes over = ValidBodyOfSize(wire::kMaxBodyBytes + 1);
  ASSERT_EQ(over.size(), wire::kMaxBodyBytes + 1);
  ExpectProtocolError(Parse(over));
  msg::HelloRequest out;
  ExpectProtocolError(Decode(over, &out));
  // The length is checked before a byte is read.
  msgpack::object_handle oh;
  ExpectProtocolError(codec::ParseBody(at_limit.data(), size_t{1} << 40, &oh));
}

TEST(CodecMalformed, RandomMutationsNeverThrow) {
  const Bytes good = Encode(SampleHelloReply());
  std::mt19937 rng(12345);
  int accepted = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes b = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % b.size();
      switch (rng() % 4) {
        case 0: b[pos] = static_cast<uint8_t>(rng()); break;
        case 1: b[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
        case 2: b.resize(std::max<size_t>(1, pos)); break;
        case 3: b.insert(b.begin() + static_cast<ptrdiff_t>(pos), static_cast<uint8_t>(rng())); break;
      }
    }
    msg::HelloReply out;
    Status st = Decode(b, &out);
    if (st.ok()) {
      ++accepted;
    } else {
      EXPECT_EQ(st.scope(), StatusScope::kSession) << st.ToString();
    }
  }
  // Most single-byte changes inside strings still decode; most others do not.
  EXPECT_GT(accepted, 0);
  EXPECT_LT(accepted, 3000);
}

}  // namespace
}  // namespace hipr
