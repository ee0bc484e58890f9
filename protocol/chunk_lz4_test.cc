// Tests of kDataLz4 chunks: the sender's policy (compress only where it
// pays, back off on incompressible data), bulk transfers through
// SendBulkLz4/BulkReader over a real socket with every destination layout,
// and hostile chunks, each of which must end in a protocol error, never a
// crash, an overflow or a hang.
#include "protocol/chunk_lz4.h"

#include <gtest/gtest.h>
#include <lz4.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "protocol/frame_io.h"
#include "protocol/tcp/tcp_connection.h"
#include "protocol/wire.h"

namespace hipr {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint16_t kDataOp = static_cast<uint16_t>(wire::Op::kData);
constexpr uint16_t kLz4Op = static_cast<uint16_t>(wire::Op::kDataLz4);
constexpr uint16_t kHeartbeatOp = static_cast<uint16_t>(wire::Op::kHeartbeat);

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Bytes Random(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// float32 values, most of them zero (a ReLU activation): compressible.
Bytes SparseFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(0.f, 1.f);
  Bytes b(n);
  for (size_t i = 0; i + 4 <= n; i += 4) {
    float f = (rng() % 4 == 0) ? value(rng) : 0.f;
    std::memcpy(&b[i], &f, 4);
  }
  return b;
}

Bytes Lz4Payload(uint32_t raw_length, const Bytes& block) {
  Bytes p(wire::kLz4PrefixBytes + block.size());
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(raw_length >> (8 * i));
  std::copy(block.begin(), block.end(), p.begin() + wire::kLz4PrefixBytes);
  return p;
}

Bytes Lz4Block(const Bytes& raw) {
  Bytes out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  int n = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(out.data()),
                               static_cast<int>(raw.size()), static_cast<int>(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

Bytes Frame(uint16_t op, uint32_t id, const Bytes& payload) {
  Bytes b(sizeof(wire::FrameHeader));
  wire::EncodeHeader(wire::MakeHeader(op, id, static_cast<uint32_t>(payload.size())), b.data());
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

bool CompressOne(ChunkCompressor& c, const Bytes& chunk, Bytes* payload = nullptr) {
  iovec v{const_cast<uint8_t*>(chunk.data()), chunk.size()};
  const uint8_t* p = nullptr;
  size_t len = 0;
  bool yes = c.Compress(&v, 1, chunk.size(), &p, &len);
  if (yes && payload != nullptr) payload->assign(p, p + len);
  return yes;
}

// ---- The sender's policy ----------------------------------------------------

TEST(ChunkCompressor, CompressibleChunkShrinksAndRoundTrips) {
  ChunkCompressor c;
  const Bytes raw = SparseFloats(ChunkCompressor::kChunkBytes, 1);
  Bytes payload;
  ASSERT_TRUE(CompressOne(c, raw, &payload));
  EXPECT_LT(payload.size(), raw.size() * ChunkCompressor::kMaxRatio);
  uint32_t raw_length = 0;
  ASSERT_TRUE(ParseLz4Chunk(payload.data(), payload.size(), raw.size(), &raw_length).ok());
  EXPECT_EQ(raw_length, raw.size());
  Bytes back(raw_length);
  ASSERT_TRUE(InflateLz4Chunk(payload.data(), payload.size(), back.data(), raw_length).ok());
  EXPECT_EQ(back, raw);
  EXPECT_EQ(c.counters().compressed, 1u);
  EXPECT_EQ(c.counters().raw_bytes, raw.size());
  EXPECT_EQ(c.counters().wire_bytes, payload.size());
}

TEST(ChunkCompressor, IncompressibleChunkIsRejectedBySamplingAlone) {
  ChunkCompressor c;
  EXPECT_FALSE(CompressOne(c, Random(ChunkCompressor::kChunkBytes, 2)));
  EXPECT_EQ(c.counters().raw_sampled, 1u);
  EXPECT_EQ(c.counters().raw_whole, 0u);
  EXPECT_EQ(c.counters().compressed, 0u);
}

TEST(ChunkCompressor, SamplesThatLieCostOneCompressionAndTheChunkGoesRaw) {
  // Zeros where the samples look (start, middle, end), noise elsewhere.
  ChunkCompressor c;
  const size_t n = ChunkCompressor::kChunkBytes;
  Bytes raw = Random(n, 3);
  const size_t s = ChunkCompressor::kSampleBytes;
  std::memset(raw.data(), 0, s);
  std::memset(raw.data() + n / 2 - s / 2, 0, s);
  std::memset(raw.data() + n - s, 0, s);
  EXPECT_FALSE(CompressOne(c, raw));
  EXPECT_EQ(c.counters().raw_whole, 1u);
}

TEST(ChunkCompressor, BacksOffAfterARunOfIncompressibleChunksAndRecovers) {
  ChunkCompressor c;
  const Bytes noise = Random(64 << 10, 4);
  const Bytes zeros(64 << 10, 0);
  // kBackoffAfter chunks are sampled, then kFirstBackoff go untried (even
  // compressible ones), then the next is tried again.
  for (int i = 0; i < ChunkCompressor::kBackoffAfter; ++i) EXPECT_FALSE(CompressOne(c, noise));
  EXPECT_EQ(c.counters().raw_sampled, uint64_t(ChunkCompressor::kBackoffAfter));
  for (int i = 0; i < ChunkCompressor::kFirstBackoff; ++i) EXPECT_FALSE(CompressOne(c, zeros));
  EXPECT_EQ(c.counters().raw_backoff, uint64_t(ChunkCompressor::kFirstBackoff));
  // Still incompressible: the next backoff is twice as long.
  for (int i = 0; i < ChunkCompressor::kBackoffAfter; ++i) EXPECT_FALSE(CompressOne(c, noise));
  for (int i = 0; i < 2 * ChunkCompressor::kFirstBackoff; ++i) EXPECT_FALSE(CompressOne(c, zeros));
  EXPECT_EQ(c.counters().raw_backoff, uint64_t(3 * ChunkCompressor::kFirstBackoff));
  // A compressible chunk ends it and resets the backoff to kFirstBackoff.
  EXPECT_TRUE(CompressOne(c, zeros));
  for (int i = 0; i < ChunkCompressor::kBackoffAfter; ++i) EXPECT_FALSE(CompressOne(c, noise));
  for (int i = 0; i < ChunkCompressor::kFirstBackoff; ++i) EXPECT_FALSE(CompressOne(c, zeros));
  EXPECT_TRUE(CompressOne(c, zeros));
  // A new transfer starts afresh, even in the middle of a backoff.
  for (int i = 0; i < ChunkCompressor::kBackoffAfter; ++i) EXPECT_FALSE(CompressOne(c, noise));
  c.BeginTransfer();
  EXPECT_TRUE(CompressOne(c, zeros));
  const auto taken = c.TakeCounters();
  EXPECT_EQ(taken.compressed, 3u);
  EXPECT_EQ(c.counters().compressed, 0u);
}

TEST(ChunkCompressor, ChunksOfSeveralSlicesAndSmallChunks) {
  ChunkCompressor c;
  const Bytes raw = SparseFloats(300000, 5);
  std::vector<iovec> slices;
  for (size_t at = 0; at < raw.size(); at += 7001)
    slices.push_back({const_cast<uint8_t*>(raw.data() + at), std::min<size_t>(7001, raw.size() - at)});
  const uint8_t* p = nullptr;
  size_t len = 0;
  ASSERT_TRUE(c.Compress(slices.data(), static_cast<int>(slices.size()), raw.size(), &p, &len));
  Bytes back(raw.size());
  ASSERT_TRUE(InflateLz4Chunk(p, len, back.data(), static_cast<uint32_t>(raw.size())).ok());
  EXPECT_EQ(back, raw);
  // Too small to sample: tried whole.
  EXPECT_TRUE(CompressOne(c, Bytes(100, 7)));
  EXPECT_FALSE(CompressOne(c, Random(100, 6)));
  EXPECT_EQ(c.counters().raw_whole, 1u);
}

// ---- The link guard ----------------------------------------------------------

// Feeds one transfer of `chunks` chunks, each compressed in `compress_ns`,
// whose sends take `compressed_send_ns` (compressed) or `raw_send_ns` (raw).
// Returns how many went compressed.
// Chunks of 1 MiB on the wire that are not timed at the start of a transfer.
constexpr int kSkip = static_cast<int>(LinkGuard::kSkipBytes >> 20);

int Transfer(LinkGuard& g, int chunks, uint64_t compress_ns, uint64_t compressed_send_ns, uint64_t raw_send_ns) {
  g.BeginTransfer();
  int compressed = 0;
  for (int i = 0; i < chunks; ++i) {
    const bool c = g.WantCompression();
    compressed += c;
    g.Sent(1 << 20, 1 << 20, c, c ? compress_ns : 0, c ? compressed_send_ns : raw_send_ns);
  }
  return compressed;
}

TEST(LinkGuard, ASlowLinkIsProbedOnceAndKeepsCompressing) {
  LinkGuard g;
  // 1 Gbit/s-like: lz4 makes 1 MiB in 2 ms, the link takes 8 ms for it raw.
  const int n = kSkip + LinkGuard::kWindow;
  EXPECT_EQ(Transfer(g, n, 2'000'000, 1'500'000, 8'000'000), n);
  EXPECT_EQ(g.probes(), 1u);
  EXPECT_EQ(Transfer(g, LinkGuard::kProbeChunks, 2'000'000, 1'500'000, 8'000'000), 0);  // The probe.
  EXPECT_FALSE(g.holding_raw());
  for (int t = 0; t < 20; ++t) EXPECT_EQ(Transfer(g, 64, 2'000'000, 1'500'000, 8'000'000), 64);
  EXPECT_EQ(g.probes(), 1u);
}

TEST(LinkGuard, AFasterLinkIsHeldRawAndLz4RetimedAfterEachHold) {
  LinkGuard g;
  // The link takes 1 MiB raw in 0.5 ms; lz4 needs 2 ms.
  const int n = kSkip + LinkGuard::kWindow;
  EXPECT_EQ(Transfer(g, n, 2'000'000, 0, 500'000), n);
  EXPECT_EQ(Transfer(g, LinkGuard::kProbeChunks, 2'000'000, 0, 500'000), 0);  // The probe.
  EXPECT_TRUE(g.holding_raw());
  EXPECT_EQ(Transfer(g, LinkGuard::kFirstHold, 2'000'000, 0, 500'000), 0);  // The hold.
  // One chunk to time lz4 again, then a hold twice as long, then one...
  EXPECT_EQ(Transfer(g, 1 + 2 * LinkGuard::kFirstHold + 1, 2'000'000, 0, 500'000), 2);
  EXPECT_EQ(g.probes(), 1u);
}

TEST(LinkGuard, IncompressibleChunksTimeTheLinkWithoutAProbe) {
  LinkGuard g;
  // A transfer of raw chunks past the skip times the link (fast) ...
  g.BeginTransfer();
  for (int i = 0; i < kSkip + LinkGuard::kWindow; ++i) g.Sent(1 << 20, 1 << 20, false, 0, 500'000);
  EXPECT_GT(g.raw_rate(), 0);
  // ... so the first compressed chunk (lz4 slower) starts a hold.
  EXPECT_EQ(Transfer(g, 6, 2'000'000, 0, 500'000), 1);
  EXPECT_TRUE(g.holding_raw());
  EXPECT_EQ(g.probes(), 0u);
}

TEST(LinkGuard, AHeldLinkThatSlowsDownGoesBackToCompressing) {
  LinkGuard g;
  const int n = kSkip + LinkGuard::kWindow;
  EXPECT_EQ(Transfer(g, n, 2'000'000, 0, 500'000), n);
  EXPECT_EQ(Transfer(g, LinkGuard::kProbeChunks, 2'000'000, 0, 500'000), 0);
  EXPECT_TRUE(g.holding_raw());
  // Raw sends now take 10 ms per MiB: after a timed window of them, compress.
  EXPECT_EQ(Transfer(g, kSkip + LinkGuard::kWindow, 2'000'000, 0, 10'000'000), 0);
  EXPECT_FALSE(g.holding_raw());
  EXPECT_EQ(Transfer(g, 16, 2'000'000, 0, 10'000'000), 16);
}

TEST(LinkGuard, SmallTransfersAreNotJudged) {
  LinkGuard g;
  // Transfers that fit in the socket buffer never wait; they are not timed.
  for (int t = 0; t < 100; ++t) EXPECT_EQ(Transfer(g, kSkip, 2'000'000, 0, 0), kSkip);
  EXPECT_EQ(g.probes(), 0u);
}

TEST(ChunkCompressor, LinkGuardOffCompressesWhateverCompresses) {
  const Bytes sparse = SparseFloats(1 << 20, 8);
  ChunkCompressor c;
  c.set_link_guard(false);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(CompressOne(c, sparse)) << i;
    c.Sent(sparse.size(), 0);
  }
  ChunkCompressor guarded;
  int compressed = 0;
  for (int i = 0; i < 100; ++i) {
    compressed += CompressOne(guarded, sparse);
    guarded.Sent(sparse.size(), 0);  // A send that never waits: the link outruns lz4.
  }
  EXPECT_LT(compressed, 60);
  EXPECT_EQ(guarded.link().probes(), 1u);
  EXPECT_EQ(guarded.counters().raw_link, uint64_t(100 - compressed));
}

// ---- Transfers over a socket -------------------------------------------------

class Lz4Bulk : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    for (int fd : sv) {
      timeval tv{10, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    }
    tx_ = std::make_unique<tcp::TcpConnection>(sv[0]);
    rx_ = std::make_unique<tcp::TcpConnection>(sv[1]);
  }

  // Sends `src` with SendBulkLz4 on a thread and reads it back into `dst`
  // in pieces of `piece` bytes (0: one read).
  Status RoundTrip(const Bytes& src, const std::vector<iovec>& dst, size_t piece) {
    Status sent;
    std::thread sender([&] {
      iovec v{const_cast<uint8_t*>(src.data()), src.size()};
      sent = SendBulkLz4(*tx_, nullptr, 0, 9, &v, 1, wire::kDefaultChunkBytes, compressor_);
    });
    BulkReader reader(*rx_, 9, src.size(), &inflater_);
    Status st;
    if (piece == 0) {
      st = reader.Read(dst.data(), static_cast<int>(dst.size()));
    } else {
      // Re-slice dst into pieces.
      IovCursor cursor(dst.data(), static_cast<int>(dst.size()));
      std::vector<iovec> part(256);
      while (st.ok() && cursor.Remaining() > 0) {
        int n = 0;
        cursor.Take(piece, part.data(), 256, &n);
        st = reader.Read(part.data(), n);
      }
    }
    sender.join();
    EXPECT_TRUE(sent.ok()) << sent.ToString();
    return st;
  }

  Status ReadAfter(const Bytes& stream, size_t total, Bytes* dst, bool lz4 = true) {
    EXPECT_TRUE(tx_->SendAll(stream.data(), stream.size()).ok());
    dst->assign(total, 0xEE);
    iovec v{dst->data(), dst->size()};
    return ReadBulk(*rx_, 5, &v, 1, lz4 ? &inflater_ : nullptr);
  }

  std::unique_ptr<tcp::TcpConnection> tx_;
  std::unique_ptr<tcp::TcpConnection> rx_;
  ChunkCompressor compressor_;
  ChunkInflater inflater_;
};

// Compressible, incompressible and compressible again, not chunk-aligned.
Bytes MixedData() {
  Bytes a = SparseFloats(3 * ChunkCompressor::kChunkBytes + 12345, 10);
  Bytes b = Random(2 * ChunkCompressor::kChunkBytes, 11);
  Bytes c = SparseFloats(ChunkCompressor::kChunkBytes / 2 + 3, 12);
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

TEST_F(Lz4Bulk, StraightIntoOneBuffer) {
  const Bytes src = MixedData();
  Bytes dst(src.size());
  ASSERT_TRUE(RoundTrip(src, {{dst.data(), dst.size()}}, 0).ok());
  EXPECT_EQ(dst, src);
  EXPECT_GE(compressor_.counters().compressed, 4u);
  EXPECT_GE(compressor_.counters().raw_sampled + compressor_.counters().raw_whole, 2u);
  EXPECT_EQ(inflater_.counters().chunks, compressor_.counters().compressed);
  EXPECT_EQ(inflater_.counters().wire_bytes, compressor_.counters().wire_bytes);
}

TEST_F(Lz4Bulk, ScatteredDestinationsAndOddPieces) {
  const Bytes src = MixedData();
  for (size_t piece : {size_t{0}, size_t{1000}, size_t{ChunkCompressor::kChunkBytes / 3}, size_t{5u << 20}}) {
    Bytes dst(src.size());
    std::vector<iovec> rows;
    for (size_t at = 0; at < dst.size(); at += 70001)
      rows.push_back({dst.data() + at, std::min<size_t>(70001, dst.size() - at)});
    ASSERT_TRUE(RoundTrip(src, rows, piece).ok()) << piece;
    EXPECT_TRUE(dst == src) << "piece " << piece;
  }
}

TEST_F(Lz4Bulk, HeartbeatsBetweenLz4ChunksAreSkipped) {
  const Bytes raw(5000, 3);
  Bytes dst;
  Status st = ReadAfter(Frame(kHeartbeatOp, 0, {}) + Frame(kLz4Op, 5, Lz4Payload(5000, Lz4Block(raw))), 5000, &dst);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(dst, raw);
}

TEST_F(Lz4Bulk, DiscardConsumesLz4ChunksExactly) {
  const Bytes raw(5000, 3);
  Bytes stream = Frame(kLz4Op, 5, Lz4Payload(5000, Lz4Block(raw))) + Frame(kDataOp, 5, Bytes(100, 1));
  stream.push_back(0x77);
  ASSERT_TRUE(tx_->SendAll(stream.data(), stream.size()).ok());
  BulkReader reader(*rx_, 5, 5100, &inflater_);
  ASSERT_TRUE(reader.DiscardRest().ok());
  uint8_t mark = 0;
  ASSERT_TRUE(rx_->RecvExact(&mark, 1).ok());
  EXPECT_EQ(mark, 0x77);
}

// ---- Hostile chunks ----------------------------------------------------------

TEST_F(Lz4Bulk, RefusedWhereLz4WasNotAgreed) {
  Bytes dst;
  Status st = ReadAfter(Frame(kLz4Op, 5, Lz4Payload(100, Lz4Block(Bytes(100, 0)))), 100, &dst, /*lz4=*/false);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

struct Hostile {
  const char* what;
  Bytes payload;
};

class HostileLz4 : public Lz4Bulk, public ::testing::WithParamInterface<int> {};

std::vector<Hostile> HostileChunks() {
  const Bytes raw = SparseFloats(200, 1);
  const Bytes block = Lz4Block(raw);
  Bytes truncated(block.begin(), block.end() - 3);
  Bytes noise = Random(300, 99);
  return {
      {"prefix only", Lz4Payload(200, {})},
      {"shorter than the prefix", Bytes{1, 0}},
      {"zero raw length", Lz4Payload(0, block)},
      {"raw length beyond the transfer", Lz4Payload(201, block)},
      {"raw length beyond the chunk limit", Lz4Payload(wire::kMaxChunkBytes + 1, block)},
      {"raw length 4 GiB - 1", Lz4Payload(0xFFFFFFFFu, block)},
      {"declares fewer bytes than the block holds", Lz4Payload(150, block)},
      {"truncated block", Lz4Payload(200, truncated)},
      {"noise", Lz4Payload(200, noise)},
      {"a match reaching before the output", Lz4Payload(200, Bytes{0x0F, 0xFF, 0xFF, 0x00})},
  };
}

TEST_P(HostileLz4, EndsInAProtocolErrorWithoutWritingPastTheBuffer) {
  const Hostile h = HostileChunks()[GetParam()];
  // A transfer of 200 read into the middle of a guarded buffer.
  Bytes stream = Frame(kLz4Op, 5, h.payload);
  ASSERT_TRUE(tx_->SendAll(stream.data(), stream.size()).ok());
  Bytes guarded(600, 0xEE);
  iovec v{guarded.data() + 200, 200};
  Status st = ReadBulk(*rx_, 5, &v, 1, &inflater_);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << h.what << ": " << st.ToString();
  for (size_t i = 0; i < 200; ++i) ASSERT_EQ(guarded[i], 0xEE) << h.what;
  for (size_t i = 400; i < 600; ++i) ASSERT_EQ(guarded[i], 0xEE) << h.what;
}

INSTANTIATE_TEST_SUITE_P(All, HostileLz4, ::testing::Range(0, static_cast<int>(HostileChunks().size())));

TEST_F(Lz4Bulk, FrameForAnotherRequest) {
  Bytes dst;
  Status st = ReadAfter(Frame(kLz4Op, 6, Lz4Payload(100, Lz4Block(Bytes(100, 0)))), 100, &dst);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST_F(Lz4Bulk, SecondChunkOverrunsTheTransfer) {
  Bytes dst;
  Status st = ReadAfter(Frame(kLz4Op, 5, Lz4Payload(150, Lz4Block(Bytes(150, 0)))) +
                            Frame(kLz4Op, 5, Lz4Payload(100, Lz4Block(Bytes(100, 0)))),
                        200, &dst);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST(InflateLz4Chunk, MutatedPayloadsNeverOverrun) {
  // Random corruption of a valid chunk: each either decodes to exactly the
  // declared length or is refused; the guard bytes stay untouched.
  const Bytes raw = SparseFloats(4096, 7);
  const Bytes good = Lz4Payload(4096, Lz4Block(raw));
  std::mt19937 rng(1234);
  Bytes out(4096 + 64);
  for (int iter = 0; iter < 3000; ++iter) {
    Bytes p = good;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) p[wire::kLz4PrefixBytes + rng() % (p.size() - wire::kLz4PrefixBytes)] = static_cast<uint8_t>(rng());
    if (rng() % 4 == 0) p.resize(wire::kLz4PrefixBytes + 1 + rng() % (p.size() - wire::kLz4PrefixBytes));
    std::fill(out.begin(), out.end(), 0xAB);
    uint32_t raw_length = 0;
    ASSERT_TRUE(ParseLz4Chunk(p.data(), p.size(), 4096, &raw_length).ok());
    Status st = InflateLz4Chunk(p.data(), p.size(), out.data(), raw_length);
    if (!st.ok()) {
      EXPECT_EQ(st.code(), StatusCode::kProtocolError);
    }
    for (size_t i = 4096; i < out.size(); ++i) ASSERT_EQ(out[i], 0xAB) << "overrun at iteration " << iter;
  }
}

}  // namespace
}  // namespace hipr
