// Bulk lz4 against a real hipr-worker process: what the hello agrees to,
// byte-exact copies both ways with compressed and raw chunks mixed (straight
// into sim device memory, and through the staging pipeline), and hostile
// compressed chunks, each of which ends its own session with a kFatal and
// leaves the worker and other sessions working.
#include <gtest/gtest.h>
#include <lz4.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_client.h"

namespace hipr::test {
namespace {

using wire::Op;
using Bytes = std::vector<uint8_t>;
const std::vector<std::string> kBoth = {wire::kFeatureLz4ToDevice, wire::kFeatureLz4FromDevice};

std::unique_ptr<RawClient> Connect(const WorkerProcess& worker, std::vector<std::string> features = kBoth) {
  std::unique_ptr<RawClient> c;
  Status st = RawClient::Connect(worker.endpoint(), &c, 16ull << 30, std::move(features));
  EXPECT_TRUE(st.ok()) << st.ToString();
  return c;
}

// float32 with 3 of 4 values zero: compressible.
Bytes Sparse(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n, 0);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    if (rng() % 4 != 0) continue;
    const float f = static_cast<float>(rng() % 1000) / 7.0f;
    std::memcpy(&b[i], &f, 4);
  }
  return b;
}

Bytes Noise(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

TEST(WorkerLz4, AgreedOnlyWhereBothSidesWantIt) {
  struct Case {
    std::vector<std::string> flags;
    std::vector<std::string> offer;
    bool agreed;
  };
  const Case cases[] = {
      {{"--compress", "on"}, kBoth, true},
      {{"--compress", "off"}, kBoth, false},
      {{}, kBoth, false},  // auto, and the client is on loopback.
      {{"--compress", "on"}, {}, false},
      {{"--compress", "on"}, {"bulk-zstd", wire::kFeatureLz4FromDevice}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::PrintToString(c.flags) + " offer " + testing::PrintToString(c.offer));
    WorkerProcess worker(c.flags);
    auto client = Connect(worker, c.offer);
    ASSERT_TRUE(client);
    std::vector<std::string> want;
    if (c.agreed)
      for (const std::string& f : c.offer)
        if (f.rfind("bulk-lz4", 0) == 0) want.push_back(f);
    EXPECT_EQ(client->hello().features, want);
  }
}

class WorkerLz4Copies : public testing::TestWithParam<bool> {};

TEST_P(WorkerLz4Copies, BothWaysByteExactWithCompressedAndRawChunks) {
  std::vector<std::string> flags = {"--compress", "on"};
  if (GetParam()) flags.push_back("--sim-force-staging");
  WorkerProcess worker(flags);
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  ASSERT_TRUE(c->lz4_to_device() && c->lz4_from_device());
  const size_t n = 12u << 20;
  Bytes data = Sparse(n, 1);
  const Bytes noise = Noise(5u << 20, 2);
  std::memcpy(data.data() + (3u << 20) + 777, noise.data(), noise.size());  // Raw chunks in the middle.
  uint64_t a = 0;
  ASSERT_EQ(c->Malloc(n, &a), 0);
  ASSERT_EQ(c->Write(a, data.data(), n), 0) << c->last_status().ToString();
  Bytes back(n, 0xEE);
  ASSERT_EQ(c->Read(a, back.data(), n), 0) << c->last_status().ToString();
  EXPECT_TRUE(back == data);
  // A pitched region: rows land in (and leave) device memory 4096 apart.
  const msg::Region rows{a, 4096, 3000, n / 4096};
  Bytes packed = Sparse(rows.bytes(), 3);
  ASSERT_EQ(c->WriteRegion(rows, packed.data()), 0) << c->last_status().ToString();
  Bytes packed_back(rows.bytes(), 0xEE);
  ASSERT_EQ(c->ReadRegion(rows, packed_back.data()), 0) << c->last_status().ToString();
  EXPECT_TRUE(packed_back == packed);
  // Both sides compressed some chunks and sent the noise raw.
  EXPECT_GE(c->lz4_sent().compressed, 10u);
  EXPECT_GE(c->lz4_sent().raw_sampled, 1u);
  EXPECT_GE(c->lz4_received().chunks, 10u);
  EXPECT_LT(c->lz4_received().wire_bytes, c->lz4_received().raw_bytes * 0.7);
}

INSTANTIATE_TEST_SUITE_P(Direct, WorkerLz4Copies, testing::Values(false));
INSTANTIATE_TEST_SUITE_P(Staged, WorkerLz4Copies, testing::Values(true));

// ---- Hostile chunks ----------------------------------------------------------

Bytes Payload(uint32_t raw_length, const Bytes& block) {
  Bytes p(wire::kLz4PrefixBytes + block.size());
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(raw_length >> (8 * i));
  std::copy(block.begin(), block.end(), p.begin() + wire::kLz4PrefixBytes);
  return p;
}

Bytes Block(const Bytes& raw) {
  Bytes out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  int k = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(out.data()),
                               static_cast<int>(raw.size()), static_cast<int>(out.size()));
  out.resize(static_cast<size_t>(k));
  return out;
}

// Reads until the worker closes the connection; true when a kFatal came first.
bool EndsWithFatal(RawClient& c, std::string* message) {
  auto t0 = std::chrono::steady_clock::now();
  bool fatal = false;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5)) {
    wire::FrameHeader h;
    Bytes body;
    Status st = c.ReceiveAny(&h, &body, 1000);
    if (st.code() == StatusCode::kTimeout) continue;
    if (!st.ok()) return fatal;
    if (h.op == static_cast<uint16_t>(Op::kFatal)) {
      msg::Fatal f;
      if (codec::DecodeBody(body.data(), body.size(), &f).ok()) *message = f.message;
      fatal = true;
    }
  }
  return false;  // Still open.
}

TEST(WorkerLz4, HostileChunksEndTheirSessionOnly) {
  WorkerProcess worker({"--compress", "on"});
  auto live = Connect(worker);
  ASSERT_TRUE(live);
  const Bytes keep = Sparse(1u << 20, 9);
  uint64_t kept = 0;
  ASSERT_EQ(live->Malloc(keep.size(), &kept), 0);
  ASSERT_EQ(live->Write(kept, keep.data(), keep.size()), 0);

  const Bytes raw = Sparse(8192, 4);
  const Bytes block = Block(raw);
  struct Hostile {
    const char* what;
    std::vector<std::string> offer;
    Bytes payload;
  };
  const Hostile cases[] = {
      {"lz4 chunk where lz4 was not agreed", {}, Payload(8192, block)},
      {"raw length beyond the transfer", kBoth, Payload(8193, block)},
      {"raw length beyond the chunk limit", kBoth, Payload(wire::kMaxChunkBytes + 1, block)},
      {"zero raw length", kBoth, Payload(0, block)},
      {"prefix only", kBoth, Payload(8192, {})},
      {"fewer bytes declared than the block holds", kBoth, Payload(4096, block)},
      {"more bytes declared than the block holds", kBoth, Payload(8000, Block(Bytes(7000, 1)))},
      {"noise for a block", kBoth, Payload(8192, Noise(3000, 5))},
  };
  for (const Hostile& h : cases) {
    SCOPED_TRACE(h.what);
    auto c = Connect(worker, h.offer);
    ASSERT_TRUE(c);
    uint64_t a = 0;
    ASSERT_EQ(c->Malloc(8192, &a), 0);
    msg::CopyToDeviceRequest req;
    req.dst = {a, 8192, 8192, 1};
    req.want_reply = true;
    uint32_t id = 0;
    ASSERT_TRUE(c->Send(Op::kCopyToDevice, req, &id).ok());
    uint8_t header[sizeof(wire::FrameHeader)];
    wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(Op::kDataLz4), id,
                                        static_cast<uint32_t>(h.payload.size())),
                       header);
    ASSERT_TRUE(c->conn().SendAll(header, sizeof header).ok());
    ASSERT_TRUE(c->conn().SendAll(h.payload.data(), h.payload.size()).ok());
    std::string message;
    EXPECT_TRUE(EndsWithFatal(*c, &message));
    EXPECT_NE(message.find("lz4"), std::string::npos) << message;
    ASSERT_TRUE(worker.Alive());
    Bytes back(keep.size());
    ASSERT_EQ(live->Read(kept, back.data(), back.size()), 0) << live->last_status().ToString();
    EXPECT_TRUE(back == keep);
  }
}

}  // namespace
}  // namespace hipr::test
