// Tests of the wire header (wire.h) and the msgpack body codec (codec.h) for
// every message of messages.h: exact byte layouts, round trips and forward
// compatibility. Hostile input is in codec_malformed_test.cc.
#include "protocol/codec_test_util.h"

namespace hipr {
namespace {

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
  // The shared-host field (shm) last: unused, {false, 0, 0}.
  EXPECT_EQ(Encode(c), (Bytes{0x95, 0x01, 0x02, 0x94, 0x03, 0x04, 0x05, 0x06, 0xC3, 0x93, 0xC2, 0x00, 0x00}));
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
                     msg::EventElapsedRequest, msg::EventElapsedReply, msg::ModuleGlobal,
                     msg::ModuleLoadRequest, msg::ModuleLoadReply, msg::ModuleUnloadRequest,
                     msg::LaunchRequest, msg::Output>;
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

// Fewer fields than the message requires are refused; a message with
// optional trailing fields (kRequiredFields) decodes from an older peer's
// shorter array, the missing fields at their defaults.
TYPED_TEST(EveryMessage, RejectsTooFewFieldsAndDefaultsOptionalOnes) {
  Unpacked u = UnpackFields(Filled<TypeParam>());
  Unpacked defaults = UnpackFields(TypeParam{});
  const size_t required = codec::RequiredFields<TypeParam>(u.fields.size());
  for (size_t n = 0; n < u.fields.size(); ++n) {
    std::vector<msgpack::object> fewer(u.fields.begin(), u.fields.begin() + n);
    TypeParam out = Filled<TypeParam>();
    Status st = Decode(PackArray(fewer), &out);
    if (n < required) {
      ExpectProtocolError(st);
      continue;
    }
    ASSERT_TRUE(st.ok()) << n << " of " << u.fields.size() << " fields: " << st.ToString();
    Unpacked got = UnpackFields(out);
    for (size_t i = 0; i < u.fields.size(); ++i)
      EXPECT_TRUE(got.fields[i] == (i < n ? u.fields[i] : defaults.fields[i])) << "field " << i << " of " << n;
  }
}

TEST(Codec, LaunchRequestGlobalSizeIsOptional) {
  EXPECT_EQ(codec::RequiredFields<msg::LaunchRequest>(13), 12u);
  EXPECT_EQ(codec::RequiredFields<msg::MallocRequest>(3), 3u);
}

// A client from before StreamRequest named the null stream's device sends
// the stream alone: device -1, the worker's choice.
TEST(Codec, StreamRequestDeviceIsOptional) {
  EXPECT_EQ(codec::RequiredFields<msg::StreamRequest>(2), 1u);
  msgpack::sbuffer old;
  msgpack::packer<msgpack::sbuffer> pk(old);
  pk.pack_array(1);
  pk.pack_uint64(7);
  msg::StreamRequest out;
  out.device = 3;
  ASSERT_TRUE(Decode(Bytes(old.data(), old.data() + old.size()), &out).ok());
  EXPECT_EQ(out.stream, 7u);
  EXPECT_EQ(out.device, -1);
}

// A worker from before bulk lz4 replies without `features`: nothing agreed.
TEST(Codec, HelloReplyFeaturesAreOptional) {
  EXPECT_EQ(codec::RequiredFields<msg::HelloReply>(13), 12u);
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


}  // namespace
}  // namespace hipr
