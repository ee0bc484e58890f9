// Hostile msgpack bodies for the codec (codec.h): each must end in a
// ProtocolError rather than an exception, a crash or a large allocation.
#include "protocol/codec_test_util.h"

namespace hipr {
namespace {

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

// 2^64 is the one float msgpack-c's own packer would convert to an integer
// out of range (found by wire_fuzz under UBSan); the codec writes it as a
// float64, and it comes back exact. Its neighbours still travel as integers.
TEST(CodecMalformed, TwoToTheSixtyFourRoundTrips) {
  for (float ms : {18446744073709551616.0f, -18446744073709551616.0f, 9223372036854775808.0f}) {
    msg::EventElapsedReply in{0, ms}, out;
    codec::BodyWriter w;
    w.Encode(in);
    ASSERT_TRUE(codec::DecodeBody(w.data(), w.size(), &out).ok()) << ms;
    EXPECT_EQ(out.milliseconds, ms);
  }
  msg::EventElapsedReply big{0, 18446744073709551616.0f};
  codec::BodyWriter w;
  w.Encode(big);
  ASSERT_EQ(w.size(), 1u + 1u + 9u);  // fixarray, 0, float64.
  EXPECT_EQ(static_cast<uint8_t>(w.data()[2]), 0xcb);
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
  Bytes deep(200001, 0x91);
  deep.back() = 0x00;
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

// ---- DecodeBody reads the bytes directly: it must agree with ParseBody
// then Unpack (the msgpack object path) on every body ----------------------

template <class T>
void ExpectSameAsObjectPath(const Bytes& b, const char* what) {
  T direct;
  const Status st = Decode(b, &direct);
  msgpack::object_handle oh;
  Status via = codec::ParseBody(b.data(), b.size(), &oh);
  T object;
  if (via.ok()) via = codec::Unpack(oh.get(), &object);
  ASSERT_EQ(st.ok(), via.ok()) << what << ": direct " << st.ToString() << ", object path " << via.ToString();
  if (st.ok()) {
    EXPECT_TRUE(DeepEqual(direct, object)) << what;
  } else {
    EXPECT_EQ(st.code(), via.code()) << what;
    EXPECT_EQ(st.scope(), StatusScope::kSession) << what;
  }
}

// A valid body of T with `extra` appended as one more (newer peer's) field.
template <class T>
Bytes WithExtraField(const T& msg, const Bytes& extra) {
  Unpacked u = UnpackFields(msg);
  Bytes b = PackWith([&](auto& pk) { pk.pack_array(static_cast<uint32_t>(u.fields.size() + 1)); });
  for (const auto& f : u.fields) {
    Bytes one = PackWith([&](auto& pk) { pk.pack(f); });
    b.insert(b.end(), one.begin(), one.end());
  }
  b.insert(b.end(), extra.begin(), extra.end());
  return b;
}

TEST(CodecDirect, AgreesOnEveryIntegerWidthAndSign) {
  // MallocRequest: device an int32_t, size a uint64_t, flags a uint32_t.
  const std::vector<std::pair<uint8_t, int>> widths = {{0xcc, 1}, {0xcd, 2}, {0xce, 4}, {0xcf, 8},
                                                       {0xd0, 1}, {0xd1, 2}, {0xd2, 4}, {0xd3, 8}};
  const std::vector<uint64_t> values = {0, 1, 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff, 0x7fffffff, 0x80000000,
                                        0xffffffff, 0x7fffffffffffffff, 0x8000000000000000, ~uint64_t{0}};
  auto with = [](int field, uint8_t tag, int bytes, uint64_t v) {
    Bytes b = {0x93};
    for (int f = 0; f < 3; ++f) {
      if (f != field) {
        b.push_back(0x01);
        continue;
      }
      b.push_back(tag);
      for (int i = bytes - 1; i >= 0; --i) b.push_back(static_cast<uint8_t>(v >> (8 * i)));
    }
    return b;
  };
  for (auto [tag, bytes] : widths)
    for (uint64_t v : values)
      for (int field = 0; field < 3; ++field)
        ExpectSameAsObjectPath<msg::MallocRequest>(with(field, tag, bytes, v), "an integer");
  for (uint8_t fix : {0x00, 0x7f, 0xe0, 0xff})
    ExpectSameAsObjectPath<msg::MallocRequest>(Bytes{0x93, fix, fix, fix}, "a fixint");
  ExpectSameAsObjectPath<msg::MallocRequest>(Bytes{0x93, 0xca, 0x3f, 0x80, 0x00, 0x00, 0x01, 0x01}, "a float");
  // Into a float field: float32, float64, NaN, beyond float's range, integers.
  for (Bytes f : {Bytes{0xca, 0x7f, 0x80, 0x00, 0x00}, Bytes{0xcb, 0x7f, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
                  Bytes{0xcb, 0x7f, 0xf8, 0, 0, 0, 0, 0, 0}, Bytes{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0},
                  Bytes{0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, Bytes{0xc3}}) {
    Bytes b = {0x92, 0x00};
    b.insert(b.end(), f.begin(), f.end());
    ExpectSameAsObjectPath<msg::EventElapsedReply>(b, "a float field");
  }
}

TEST(CodecDirect, AgreesOnLimitsInANewerPeersExtraFields) {
  const msg::LaunchRequest launch = Filled<msg::LaunchRequest>();
  ExpectSameAsObjectPath<msg::LaunchRequest>(Encode(launch), "as sent");
  // The message's own array is the first level: seven more fit, eight do not.
  for (uint32_t depth : {wire::kMaxMsgpackDepth - 2, wire::kMaxMsgpackDepth - 1, wire::kMaxMsgpackDepth})
    for (bool maps : {false, true})
      ExpectSameAsObjectPath<msg::LaunchRequest>(WithExtraField(launch, Nested(depth, maps)), "a nested extra field");
  msg::LaunchRequest out;
  EXPECT_TRUE(Decode(WithExtraField(launch, Nested(wire::kMaxMsgpackDepth - 1, false)), &out).ok());
  EXPECT_TRUE(DeepEqual(out, launch));
  ExpectProtocolError(Decode(WithExtraField(launch, Nested(wire::kMaxMsgpackDepth, true)), &out));
  const std::vector<Bytes> extras = {
      {0xc0}, {0xc3}, {0xd4, 0x01, 0x02}, {0xc7, 0x00, 0x05}, {0xc1}, {0x80}, {0x90}, {0xa0}, {0xc4, 0x00},
      {0xdc, 0x10, 0x01}, {0xdd, 0x00, 0x00, 0x10, 0x00}, {0xde, 0x01, 0x01}, {0xdb, 0x00, 0x01, 0x00, 0x01},
      {0xc6, 0x00, 0x01, 0x00, 0x00}, {0x82, 0x01, 0x91, 0x02, 0xa1, 'k', 0xc4, 0x01, 0x00}};
  for (const Bytes& extra : extras) ExpectSameAsObjectPath<msg::LaunchRequest>(WithExtraField(launch, extra), "extra");
  // Arrays, strings and bins at and one past their limits.
  for (uint32_t n : {wire::kMaxMsgpackArray, wire::kMaxMsgpackArray + 1}) {
    Bytes array = {0xdc, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)};
    array.insert(array.end(), n, 0xc0);
    ExpectSameAsObjectPath<msg::LaunchRequest>(WithExtraField(launch, array), "a long array");
  }
  msg::LaunchRequest sized = launch;
  for (uint32_t n : {wire::kMaxMsgpackBin, wire::kMaxMsgpackBin + 1}) {
    sized.kernarg.assign(n, 7);
    ExpectSameAsObjectPath<msg::LaunchRequest>(Encode(sized), "a long bin");
  }
  sized = launch;
  for (uint32_t n : {wire::kMaxMsgpackString, wire::kMaxMsgpackString + 1}) {
    sized.kernel.assign(n, 'k');
    ExpectSameAsObjectPath<msg::LaunchRequest>(Encode(sized), "a long string");
  }
}

TEST(CodecDirect, AgreesOnRandomMutations) {
  msg::GraphCreateRequest graph = Filled<msg::GraphCreateRequest>();
  graph.nodes[0].body = Encode(Filled<msg::LaunchRequest>());
  const std::vector<Bytes> goods = {Encode(SampleHelloReply()), Encode(Filled<msg::LaunchRequest>()), Encode(graph)};
  std::mt19937 rng(4242);
  for (size_t g = 0; g < goods.size(); ++g) {
    for (int iter = 0; iter < 2000; ++iter) {
      Bytes b = goods[g];
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        const size_t pos = rng() % b.size();
        switch (rng() % 4) {
          case 0: b[pos] = static_cast<uint8_t>(rng()); break;
          case 1: b[pos] ^= static_cast<uint8_t>(1u << (rng() % 8)); break;
          case 2: b.resize(std::max<size_t>(1, pos)); break;
          case 3: b.insert(b.begin() + static_cast<ptrdiff_t>(pos), static_cast<uint8_t>(rng())); break;
        }
      }
      if (g == 0) ExpectSameAsObjectPath<msg::HelloReply>(b, "a mutated hello reply");
      if (g == 1) ExpectSameAsObjectPath<msg::LaunchRequest>(b, "a mutated launch");
      if (g == 2) ExpectSameAsObjectPath<msg::GraphCreateRequest>(b, "a mutated graph");
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace
}  // namespace hipr
