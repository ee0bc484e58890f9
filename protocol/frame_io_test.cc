// Tests of frame_io over a real stream socket: frames with bodies, bulk as
// kData chunk frames straight between scatter-gather buffers, heartbeats,
// and every way a hostile or vanished peer can break a frame.
//
// Both ends are TcpConnections around a socketpair(AF_UNIX, SOCK_STREAM).
// Each socket gets a receive/send timeout (kHangGuardS) so that a test whose
// code under test blocks where it should not fails instead of hanging; tests
// of a closing peer also check that they finished well inside that guard.
#include "protocol/frame_io.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/tcp/tcp_connection.h"
#include "protocol/wire.h"

namespace hipr {
namespace {

using Bytes = std::vector<uint8_t>;
using Clock = std::chrono::steady_clock;

constexpr int kHangGuardS = 10;
constexpr uint32_t kChunk = wire::kMinChunkBytes;
constexpr uint16_t kDataOp = static_cast<uint16_t>(wire::Op::kData);
constexpr uint16_t kHeartbeatOp = static_cast<uint16_t>(wire::Op::kHeartbeat);
constexpr uint16_t kFatalOp = static_cast<uint16_t>(wire::Op::kFatal);
constexpr uint16_t kCopyToDeviceOp = static_cast<uint16_t>(wire::Op::kCopyToDevice);

// A position-dependent byte: a chunk delivered at the wrong offset shows.
uint8_t Pattern(uint64_t i) { return static_cast<uint8_t>(((i + 1) * 2654435761u) >> 24); }

Bytes PatternBytes(size_t n, uint64_t start = 0) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = Pattern(start + i);
  return b;
}

size_t FirstMismatch(const uint8_t* p, size_t n, uint64_t start = 0) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != Pattern(start + i)) return i;
  return n;
}

Bytes RawHeader(uint16_t op, uint32_t request_id, uint32_t payload_length, uint32_t magic = wire::kMagic,
                uint16_t version = wire::kProtocolVersion) {
  Bytes b(sizeof(wire::FrameHeader));
  wire::EncodeHeader(wire::FrameHeader{magic, version, op, request_id, payload_length}, b.data());
  return b;
}

Bytes Cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

template <class T>
Bytes Body(const T& msg) {
  codec::BodyWriter w;
  w.Encode(msg);
  return Bytes(w.data(), w.data() + w.size());
}

Bytes Frame(uint16_t op, uint32_t request_id, const Bytes& payload) {
  return Cat({RawHeader(op, request_id, static_cast<uint32_t>(payload.size())), payload});
}

void SetHangGuard(int fd) {
  timeval tv{kHangGuardS, 0};
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv), 0);
}

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Aborts the test program, naming `what`, unless destroyed within `seconds`:
// turns a call that hangs (or spins) where it should return into a prompt,
// attributable failure.
class Watchdog {
 public:
  Watchdog(double seconds, std::string what)
      : what_(std::move(what)), thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: %s did not finish within %.1f s\n", what_.c_str(), seconds);
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string what_;
  std::thread thread_;
};

// Runs `fn` on its own thread (the peer's side of a transfer that does not
// fit in the socket buffers) and hands back its status. If the test ends
// without Join() (a failed assertion), `conn` is shut down first so that a
// sender blocked on a full socket lets go.
class Peer {
 public:
  Peer(Connection& conn, std::function<Status()> fn)
      : conn_(conn), thread_([this, fn] { status_ = fn(); }) {}
  ~Peer() {
    if (thread_.joinable()) {
      conn_.Shutdown();
      thread_.join();
    }
  }
  Status Join() {
    thread_.join();
    return status_;
  }

 private:
  Connection& conn_;
  Status status_;
  std::thread thread_;
};

class FrameIo : public ::testing::Test {
 protected:
  void SetUp() override { Reconnect(); }

  // A fresh pair of connected ends (the old ones are closed).
  void Reconnect() {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    SetHangGuard(sv[0]);
    SetHangGuard(sv[1]);
    tx_ = std::make_unique<tcp::TcpConnection>(sv[0]);
    rx_ = std::make_unique<tcp::TcpConnection>(sv[1]);
  }

  Status WriteRaw(const Bytes& b) { return tx_->SendAll(b.data(), b.size()); }

  // The next frame must be `op`/`request_id` with exactly `body`.
  void ExpectFrame(uint16_t op, uint32_t request_id, const Bytes& body) {
    wire::FrameHeader h;
    Status st = ReadHeader(*rx_, &h);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(h.op, op);
    EXPECT_EQ(h.request_id, request_id);
    Bytes got;
    st = ReadBody(*rx_, h, &got);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(got, body);
  }

  // Nothing is left unread on the receiving side.
  void ExpectNothingPending() {
    Status st = rx_->WaitReadable(0);
    EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  }

  // The receiver consumed exactly what it should: the next byte is `mark`.
  void ExpectNextByteIs(uint8_t mark) {
    ASSERT_TRUE(tx_->SendAll(&mark, 1).ok());
    uint8_t got = 0;
    ASSERT_TRUE(rx_->RecvExact(&got, 1).ok());
    EXPECT_EQ(got, mark);
  }

  std::unique_ptr<tcp::TcpConnection> tx_;
  std::unique_ptr<tcp::TcpConnection> rx_;
  Watchdog watchdog_{60, ::testing::UnitTest::GetInstance()->current_test_info()->name()};
};

// ---- Frames with bodies ----------------------------------------------------

TEST_F(FrameIo, FrameWithBody) {
  msg::HelloRequest hello;
  hello.min_version = 1;
  hello.max_version = 1;
  hello.client_name = "frame_io_test";
  hello.window = {0x7e0000000000, 1ull << 40};
  hello.features = {"a", "b"};
  codec::BodyWriter w;
  w.Encode(hello);
  ASSERT_TRUE(SendFrame(*tx_, static_cast<uint16_t>(wire::Op::kHello), 0xABCDEF01, w).ok());

  wire::FrameHeader h{};
  ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
  EXPECT_EQ(h.magic, wire::kMagic);
  EXPECT_EQ(h.version, wire::kProtocolVersion);
  EXPECT_EQ(h.op, static_cast<uint16_t>(wire::Op::kHello));
  EXPECT_EQ(h.request_id, 0xABCDEF01u);
  EXPECT_EQ(h.payload_length, w.size());
  Bytes body;
  ASSERT_TRUE(ReadBody(*rx_, h, &body).ok());
  msg::HelloRequest back;
  ASSERT_TRUE(codec::DecodeBody(body.data(), body.size(), &back).ok());
  EXPECT_EQ(back.client_name, "frame_io_test");
  EXPECT_EQ(back.window.size, 1ull << 40);
  EXPECT_EQ(back.features, (std::vector<std::string>{"a", "b"}));
  ExpectNothingPending();
}

TEST_F(FrameIo, FrameWithoutBody) {
  ASSERT_TRUE(SendFrame(*tx_, kHeartbeatOp, 0, nullptr, 0).ok());
  wire::FrameHeader h{};
  ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
  EXPECT_EQ(h.op, kHeartbeatOp);
  EXPECT_EQ(h.payload_length, 0u);
  Bytes body = {1, 2, 3};
  ASSERT_TRUE(ReadBody(*rx_, h, &body).ok());
  EXPECT_TRUE(body.empty());
  ExpectNothingPending();
}

TEST_F(FrameIo, ExactBytesOnTheWire) {
  const Bytes body = {0x91, 0x05};
  ASSERT_TRUE(SendFrame(*tx_, 0x0001, 7, body.data(), body.size()).ok());
  Bytes raw(18);
  ASSERT_TRUE(rx_->RecvExact(raw.data(), raw.size()).ok());
  EXPECT_EQ(raw, (Bytes{'R', 'P', 'I', 'H', 1, 0, 0x01, 0x00, 7, 0, 0, 0, 2, 0, 0, 0, 0x91, 0x05}));
  ExpectNothingPending();
}

TEST_F(FrameIo, BodyAtTheLimit) {
  Bytes body = PatternBytes(wire::kMaxBodyBytes);
  Peer peer(*tx_, [&] { return SendFrame(*tx_, 0x0101, 9, body.data(), body.size()); });
  wire::FrameHeader h{};
  ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
  EXPECT_EQ(h.payload_length, wire::kMaxBodyBytes);
  Bytes got;
  ASSERT_TRUE(ReadBody(*rx_, h, &got).ok());
  EXPECT_EQ(got, body);
  EXPECT_TRUE(peer.Join().ok());
}

TEST_F(FrameIo, SendFrameRefusesAnOversizedBodyAndWritesNothing) {
  Bytes body(wire::kMaxBodyBytes + 1, 0);
  Status st = SendFrame(*tx_, 0x0101, 9, body.data(), body.size());
  EXPECT_FALSE(st.ok());
  ExpectNothingPending();
}

// ---- Bulk --------------------------------------------------------------------

class BulkSize : public FrameIo, public ::testing::WithParamInterface<size_t> {};

// The request, its bulk, then a following frame: all intact.
TEST_P(BulkSize, SendFrameThenReadBulk) {
  const size_t size = GetParam();
  Bytes src = PatternBytes(size);
  const Bytes body = {0x91, 0x2A};
  Peer peer(*tx_, [&]() -> Status {
    iovec iov{src.data(), src.size()};
    HIPR_RETURN_IF_ERROR(SendFrame(*tx_, kCopyToDeviceOp, 77, body.data(), body.size(), &iov, 1, kChunk));
    return SendFrame(*tx_, 0x0102, 78, body.data(), body.size());
  });
  ExpectFrame(kCopyToDeviceOp, 77, body);
  Bytes dst(size + 64, 0xEE);
  iovec iov{dst.data(), size};
  Status st = ReadBulk(*rx_, 77, &iov, 1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(FirstMismatch(dst.data(), size), size);
  for (size_t i = size; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE) << "wrote past the buffer at " << i;
  ExpectFrame(0x0102, 78, body);
  EXPECT_TRUE(peer.Join().ok());
  ExpectNothingPending();
}

// The chunking itself: full chunks, then the remainder, all for the request.
TEST_P(BulkSize, ChunkFramesOnTheWire) {
  const size_t size = GetParam();
  Bytes src = PatternBytes(size);
  Peer peer(*tx_, [&]() -> Status {
    iovec iov{src.data(), src.size()};
    return SendFrame(*tx_, kCopyToDeviceOp, 5, nullptr, 0, &iov, 1, kChunk);
  });
  ExpectFrame(kCopyToDeviceOp, 5, {});
  size_t offset = 0;
  while (offset < size) {
    wire::FrameHeader h{};
    ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
    ASSERT_EQ(h.op, kDataOp);
    EXPECT_EQ(h.request_id, 5u);
    EXPECT_EQ(h.payload_length, std::min<size_t>(kChunk, size - offset));
    Bytes chunk(h.payload_length);
    ASSERT_TRUE(rx_->RecvExact(chunk.data(), chunk.size()).ok());
    EXPECT_EQ(FirstMismatch(chunk.data(), chunk.size(), offset), chunk.size());
    offset += chunk.size();
  }
  EXPECT_EQ(offset, size);
  EXPECT_TRUE(peer.Join().ok());
  ExpectNothingPending();  // No empty trailing data frame, none for size 0.
}

// The reply path: a reply frame, then SendBulk on its own.
TEST_P(BulkSize, SendBulkAfterAReply) {
  const size_t size = GetParam();
  Bytes src = PatternBytes(size, 1000);
  const Bytes body = Body(msg::CallReply{0});
  const uint16_t reply_op = wire::ReplyOp(wire::Op::kCopyFromDevice);
  Peer peer(*tx_, [&]() -> Status {
    HIPR_RETURN_IF_ERROR(SendFrame(*tx_, reply_op, 3, body.data(), body.size()));
    iovec iov{src.data(), src.size()};
    return SendBulk(*tx_, 3, &iov, 1, kChunk);
  });
  ExpectFrame(reply_op, 3, body);
  Bytes dst(size);
  iovec iov{dst.data(), dst.size()};
  ASSERT_TRUE(ReadBulk(*rx_, 3, &iov, 1).ok());
  EXPECT_EQ(dst, src);
  EXPECT_TRUE(peer.Join().ok());
  ExpectNothingPending();
}

INSTANTIATE_TEST_SUITE_P(SmallChunks, BulkSize,
                         ::testing::Values(0, 1, kChunk - 1, kChunk, kChunk + 1, 3 * kChunk + 17,
                                           5 * kChunk));

TEST_F(FrameIo, MultiMebibyteTransferWithTheDefaultChunk) {
  const size_t size = 3 * wire::kDefaultChunkBytes + 12345;  // ~12 MiB
  Bytes src = PatternBytes(size);
  Peer peer(*tx_, [&]() -> Status {
    iovec iov{src.data(), src.size()};
    return SendFrame(*tx_, kCopyToDeviceOp, 1, nullptr, 0, &iov, 1);
  });
  wire::FrameHeader h{};
  ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
  ASSERT_EQ(h.payload_length, 0u);
  Bytes dst(size, 0);
  iovec iov{dst.data(), dst.size()};
  Status st = ReadBulk(*rx_, 1, &iov, 1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(FirstMismatch(dst.data(), size), size);
  EXPECT_TRUE(peer.Join().ok());
  ExpectNothingPending();
}

TEST_F(FrameIo, ChunkSizeIsClampedToTheLimits) {
  const size_t size = 2 * kChunk + 100;
  Bytes src = PatternBytes(size);
  iovec iov{src.data(), src.size()};
  Peer peer(*tx_, [&] { return SendFrame(*tx_, kCopyToDeviceOp, 2, nullptr, 0, &iov, 1, /*chunk_bytes=*/1); });
  ExpectFrame(kCopyToDeviceOp, 2, {});
  for (uint32_t expected : {kChunk, kChunk, 100u}) {
    wire::FrameHeader h{};
    ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
    EXPECT_EQ(h.op, kDataOp);
    EXPECT_EQ(h.payload_length, expected);
    ASSERT_TRUE(SkipPayload(*rx_, h.payload_length).ok());
  }
  EXPECT_TRUE(peer.Join().ok());

  // A chunk size above the limit gives frames no larger than kMaxChunkBytes.
  const size_t big = wire::kMaxChunkBytes + 5;
  Bytes large(big, 0x5A);
  iovec large_iov{large.data(), large.size()};
  Peer peer2(*tx_, [&] { return SendBulk(*tx_, 4, &large_iov, 1, 0xFFFFFFFF); });
  for (uint32_t expected : {wire::kMaxChunkBytes, 5u}) {
    wire::FrameHeader h{};
    ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
    EXPECT_EQ(h.payload_length, expected);
    ASSERT_TRUE(SkipPayload(*rx_, h.payload_length).ok());
  }
  EXPECT_TRUE(peer2.Join().ok());
  ExpectNothingPending();
}

// Rows of a pitched source go out as many uneven iovecs and land in a
// different uneven layout; the gaps on both sides are never touched.
TEST_F(FrameIo, ScatterGatherBetweenDifferentLayouts) {
  const size_t kRows = 1000, kRowBytes = 37, kPitch = 64, kTotal = kRows * kRowBytes;
  Bytes src(kRows * kPitch, 0xEE);
  std::vector<iovec> src_iov;
  for (size_t r = 0; r < kRows; ++r) {
    for (size_t j = 0; j < kRowBytes; ++j) src[r * kPitch + j] = Pattern(r * kRowBytes + j);
    src_iov.push_back({src.data() + r * kPitch, kRowBytes});
    if (r % 100 == 0) src_iov.push_back({src.data(), 0});  // Empty entries are harmless.
  }

  const size_t kPieces[] = {1, 100, 7, 0, 513, 3, 2048, 29, 4095, 4097, 64};
  const size_t kGuard = 8;
  Bytes dst(kTotal + 20000 * kGuard, 0xAB);
  std::vector<iovec> dst_iov;
  size_t placed = 0, at = 0;
  for (size_t i = 0; placed < kTotal; ++i) {
    size_t n = std::min(kPieces[i % std::size(kPieces)], kTotal - placed);
    dst_iov.push_back({dst.data() + at, n});
    placed += n;
    at += n + kGuard;
  }
  ASSERT_LE(at, dst.size());

  const Bytes body = Body(msg::CopyToDeviceRequest{});
  Peer peer(*tx_, [&] {
    return SendFrame(*tx_, kCopyToDeviceOp, 11, body.data(), body.size(), src_iov.data(),
                     static_cast<int>(src_iov.size()), kChunk);
  });
  ExpectFrame(kCopyToDeviceOp, 11, body);
  Status st = ReadBulk(*rx_, 11, dst_iov.data(), static_cast<int>(dst_iov.size()));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(peer.Join().ok());

  uint64_t logical = 0;
  size_t pos = 0;
  for (const iovec& v : dst_iov) {
    auto* p = static_cast<uint8_t*>(v.iov_base);
    ASSERT_EQ(p, dst.data() + pos);
    ASSERT_EQ(FirstMismatch(p, v.iov_len, logical), v.iov_len) << "piece at logical offset " << logical;
    logical += v.iov_len;
    pos += v.iov_len;
    for (size_t g = 0; g < kGuard && pos + g < dst.size(); ++g)
      ASSERT_EQ(dst[pos + g], 0xAB) << "guard byte overwritten after logical offset " << logical;
    pos += kGuard;
  }
  EXPECT_EQ(logical, kTotal);
  ExpectNothingPending();
}

// Far more tiny iovecs than one chunk or one sendmsg may carry.
TEST_F(FrameIo, ManyTinyIovecs) {
  const size_t kSrcPiece = 3, kSrcCount = 20000, kTotal = kSrcPiece * kSrcCount;
  Bytes src = PatternBytes(kTotal);
  std::vector<iovec> src_iov;
  for (size_t i = 0; i < kSrcCount; ++i) src_iov.push_back({src.data() + i * kSrcPiece, kSrcPiece});
  Bytes dst(kTotal, 0);
  std::vector<iovec> dst_iov;
  for (size_t off = 0; off < kTotal; off += 5) dst_iov.push_back({dst.data() + off, std::min<size_t>(5, kTotal - off)});

  Peer peer(*tx_, [&] {
    return SendFrame(*tx_, kCopyToDeviceOp, 12, nullptr, 0, src_iov.data(), static_cast<int>(src_iov.size()),
                     64 * 1024);
  });
  ExpectFrame(kCopyToDeviceOp, 12, {});
  Status st = ReadBulk(*rx_, 12, dst_iov.data(), static_cast<int>(dst_iov.size()));
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(peer.Join().ok());
  EXPECT_EQ(dst, src);
  ExpectNothingPending();
}

TEST_F(FrameIo, ReadBulkOfNothingReadsNothing) {
  ASSERT_TRUE(ReadBulk(*rx_, 1, nullptr, 0).ok());
  uint8_t b = 0;
  iovec empty{&b, 0};
  ASSERT_TRUE(ReadBulk(*rx_, 1, &empty, 1).ok());
  ExpectNextByteIs(0x42);
}

TEST_F(FrameIo, HeartbeatsBetweenDataFramesAreSkipped) {
  Bytes data = PatternBytes(1500);
  const Bytes body = {0x91, 0x01};
  Bytes stream = Cat({
      Frame(kCopyToDeviceOp, 5, body),
      Frame(kHeartbeatOp, 0, {}),
      Frame(kDataOp, 5, Bytes(data.begin(), data.begin() + 1000)),
      Frame(kHeartbeatOp, 0, {}),
      Frame(kHeartbeatOp, 99, Bytes(10, 0x77)),  // A heartbeat with a payload is skipped whole.
      Frame(kDataOp, 5, Bytes(data.begin() + 1000, data.end())),
      Frame(kHeartbeatOp, 0, {}),  // After the transfer: for the caller's loop.
      Frame(0x0102, 6, body),
  });
  ASSERT_TRUE(WriteRaw(stream).ok());
  ExpectFrame(kCopyToDeviceOp, 5, body);
  Bytes dst(1500);
  iovec iov{dst.data(), dst.size()};
  Status st = ReadBulk(*rx_, 5, &iov, 1);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(dst, data);
  ExpectFrame(kHeartbeatOp, 0, {});
  ExpectFrame(0x0102, 6, body);
  ExpectNothingPending();
}

TEST_F(FrameIo, DiscardBulkConsumesExactlyTheBulk) {
  const size_t size = 3 * kChunk + 17;
  Bytes src = PatternBytes(size);
  const Bytes body = {0x91, 0x02};
  const Bytes next = Body(msg::FreeRequest{0xDEADBEEF});
  Peer peer(*tx_, [&]() -> Status {
    iovec iov{src.data(), src.size()};
    HIPR_RETURN_IF_ERROR(SendFrame(*tx_, kCopyToDeviceOp, 21, body.data(), body.size(), &iov, 1, kChunk));
    HIPR_RETURN_IF_ERROR(SendFrame(*tx_, kHeartbeatOp, 0, nullptr, 0));
    return SendFrame(*tx_, static_cast<uint16_t>(wire::Op::kFree), 22, next.data(), next.size());
  });
  ExpectFrame(kCopyToDeviceOp, 21, body);
  Status st = DiscardBulk(*rx_, 21, size);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ExpectFrame(kHeartbeatOp, 0, {});
  ExpectFrame(static_cast<uint16_t>(wire::Op::kFree), 22, next);
  EXPECT_TRUE(peer.Join().ok());
  ExpectNothingPending();
}

TEST_F(FrameIo, DiscardBulkSkipsHeartbeatsAndChecksFrames) {
  Bytes stream = Cat({Frame(kDataOp, 8, Bytes(100, 1)), Frame(kHeartbeatOp, 0, {}),
                      Frame(kDataOp, 8, Bytes(50, 2)), Frame(0x0102, 9, {0x91, 0x00})});
  ASSERT_TRUE(WriteRaw(stream).ok());
  ASSERT_TRUE(DiscardBulk(*rx_, 8, 150).ok());
  ExpectFrame(0x0102, 9, {0x91, 0x00});
  // A discard that overruns its transfer is refused like a read.
  ASSERT_TRUE(WriteRaw(Frame(kDataOp, 8, Bytes(100, 1))).ok());
  EXPECT_EQ(DiscardBulk(*rx_, 8, 99).code(), StatusCode::kProtocolError);
}

TEST_F(FrameIo, SkipPayload) {
  Bytes stream = Cat({Bytes(40000, 0x11), Bytes{0x99}});
  ASSERT_TRUE(WriteRaw(stream).ok());
  ASSERT_TRUE(SkipPayload(*rx_, 40000).ok());
  uint8_t b = 0;
  ASSERT_TRUE(rx_->RecvExact(&b, 1).ok());
  EXPECT_EQ(b, 0x99);
  ASSERT_TRUE(SkipPayload(*rx_, 0).ok());
}

// ---- Hostile headers -----------------------------------------------------------

TEST_F(FrameIo, BadMagic) {
  // "HIPR" in wire order is not the magic: the magic is 0x48495052 LE.
  for (uint32_t magic : {0u, 0x52504948u, wire::kMagic ^ 1u, 0xFFFFFFFFu}) {
    ASSERT_TRUE(WriteRaw(RawHeader(0x0001, 1, 0, magic)).ok());
    wire::FrameHeader h{};
    EXPECT_EQ(ReadHeader(*rx_, &h).code(), StatusCode::kProtocolError) << std::hex << magic;
  }
}

TEST_F(FrameIo, UnsupportedVersion) {
  for (uint16_t version : {uint16_t{0}, uint16_t{wire::kProtocolVersion + 1}, uint16_t{0xFFFF}}) {
    ASSERT_TRUE(WriteRaw(RawHeader(0x0001, 1, 0, wire::kMagic, version)).ok());
    wire::FrameHeader h{};
    Status st = ReadHeader(*rx_, &h);
    EXPECT_EQ(st.code(), StatusCode::kVersionMismatch) << version;
    EXPECT_EQ(st.scope(), StatusScope::kSession);
  }
}

TEST_F(FrameIo, OversizedPayloadFailsBeforeReadingIt) {
  for (uint32_t len : {wire::kMaxPayloadBytes + 1, 0xFFFFFFFFu}) {
    // Only the header is sent, and the peer stays open: a reader that tried
    // to read (or allocate) the payload would block until the hang guard.
    ASSERT_TRUE(WriteRaw(RawHeader(kDataOp, 1, len)).ok());
    auto t0 = Clock::now();
    wire::FrameHeader h{};
    Status st = ReadHeader(*rx_, &h);
    EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
    EXPECT_LT(SecondsSince(t0), 1.0);
    ExpectNextByteIs(0x5A);  // Exactly the 16 header bytes were consumed.
  }
  // At the limit the header itself is fine.
  ASSERT_TRUE(WriteRaw(RawHeader(kDataOp, 1, wire::kMaxPayloadBytes)).ok());
  wire::FrameHeader h{};
  EXPECT_TRUE(ReadHeader(*rx_, &h).ok());
  EXPECT_EQ(h.payload_length, wire::kMaxPayloadBytes);
}

TEST_F(FrameIo, ReadBodyRefusesMoreThanTheBodyLimit) {
  wire::FrameHeader h = wire::MakeHeader(0x0101, 1, wire::kMaxBodyBytes + 1);
  Bytes body;
  auto t0 = Clock::now();
  Status st = ReadBody(*rx_, h, &body);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_LT(SecondsSince(t0), 1.0);
  EXPECT_EQ(body.capacity(), 0u) << "allocated on the word of an unchecked length";
  ExpectNextByteIs(0x33);

  // The same through the wire: a header ReadHeader accepts (a data-sized
  // payload) but ReadBody must not.
  ASSERT_TRUE(WriteRaw(RawHeader(0x0101, 1, wire::kMaxPayloadBytes)).ok());
  ASSERT_TRUE(ReadHeader(*rx_, &h).ok());
  EXPECT_EQ(ReadBody(*rx_, h, &body).code(), StatusCode::kProtocolError);
  EXPECT_EQ(body.capacity(), 0u);
}

// ---- Hostile bulk --------------------------------------------------------------

class BadBulk : public FrameIo {
 protected:
  // Writes `stream`, then reads a 200-byte transfer for request 5.
  // Each call starts on a fresh connection: a failed read leaves the old
  // stream out of step.
  Status ReadAfter(const Bytes& stream) {
    Reconnect();
    EXPECT_TRUE(WriteRaw(stream).ok());
    dst_.assign(200, 0);
    iovec iov{dst_.data(), dst_.size()};
    auto t0 = Clock::now();
    Watchdog watchdog(5, "ReadBulk of a broken transfer");
    Status st = ReadBulk(*rx_, 5, &iov, 1);
    EXPECT_LT(SecondsSince(t0), 2.0) << "ReadBulk blocked instead of failing";
    return st;
  }
  Bytes dst_;
};

TEST_F(BadBulk, DataFrameForAnotherRequest) {
  Status st = ReadAfter(Cat({Frame(kDataOp, 5, Bytes(100, 1)), Frame(kDataOp, 6, Bytes(100, 2))}));
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST_F(BadBulk, DataFrameLongerThanTheTransfer) {
  Status st = ReadAfter(Frame(kDataOp, 5, Bytes(201, 1)));
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  Status st2 = ReadAfter(Cat({Frame(kDataOp, 5, Bytes(150, 1)), Frame(kDataOp, 5, Bytes(51, 1))}));
  EXPECT_EQ(st2.code(), StatusCode::kProtocolError) << st2.ToString();
}

TEST_F(BadBulk, ZeroLengthDataFrame) {
  Status st = ReadAfter(Cat({Frame(kDataOp, 5, {}), Frame(kDataOp, 5, Bytes(200, 1))}));
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST_F(BadBulk, NonDataFrameMidBulk) {
  Status st = ReadAfter(Cat({Frame(kDataOp, 5, Bytes(100, 1)), Frame(0x0102, 5, {0x91, 0x00}),
                             Frame(kDataOp, 5, Bytes(100, 1))}));
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  // A reply bit on the data op is not a data frame either.
  Status st2 = ReadAfter(Frame(kDataOp | wire::kReplyBit, 5, Bytes(200, 1)));
  EXPECT_EQ(st2.code(), StatusCode::kProtocolError) << st2.ToString();
}

TEST_F(BadBulk, BadHeaderMidBulk) {
  Bytes bad = RawHeader(kDataOp, 5, 100, 0x12345678);
  Status st = ReadAfter(Cat({Frame(kDataOp, 5, Bytes(100, 1)), bad}));
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST_F(BadBulk, FatalMidBulkSurfacesItsMessage) {
  msg::Fatal fatal;
  fatal.status = StatusCode::kDeviceLost;
  fatal.message = "GPU 0 fell off the bus";
  Status st = ReadAfter(Cat({Frame(kDataOp, 5, Bytes(100, 1)), Frame(kFatalOp, 0, Body(fatal))}));
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.scope(), StatusScope::kSession) << st.ToString();
  EXPECT_NE(st.message().find("GPU 0 fell off the bus"), std::string::npos) << st.ToString();
  // DiscardBulk reports it too.
  Reconnect();
  ASSERT_TRUE(WriteRaw(Frame(kFatalOp, 0, Body(fatal))).ok());
  Status st2 = DiscardBulk(*rx_, 5, 10);
  EXPECT_EQ(st2.scope(), StatusScope::kSession);
  EXPECT_NE(st2.message().find("fell off the bus"), std::string::npos) << st2.ToString();
}

TEST_F(BadBulk, MalformedFatalMidBulk) {
  Status st = ReadAfter(Frame(kFatalOp, 0, {0x92, 0xC1}));
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  // A kFatal with a body over the limit is refused before it is read.
  Status st2 = ReadAfter(RawHeader(kFatalOp, 0, wire::kMaxBodyBytes + 1));
  EXPECT_EQ(st2.code(), StatusCode::kProtocolError) << st2.ToString();
}

// ---- A peer that goes away -------------------------------------------------------

class PeerCloses : public FrameIo {
 protected:
  // Writes `partial`, closes the sending end, and expects `read` to report
  // kLinkDown promptly.
  void Check(const Bytes& partial, const std::function<Status()>& read) {
    if (!partial.empty()) {
      ASSERT_TRUE(WriteRaw(partial).ok());
    }
    tx_.reset();
    auto t0 = Clock::now();
    Watchdog watchdog(5, "a read from a closed peer");
    Status st = read();
    EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
    EXPECT_EQ(st.scope(), StatusScope::kLink);
    EXPECT_LT(SecondsSince(t0), 2.0) << "noticed the close only through the hang guard";
  }
  Status ReadFrameAndBulk(size_t bulk) {
    wire::FrameHeader h{};
    HIPR_RETURN_IF_ERROR(ReadHeader(*rx_, &h));
    Bytes body;
    HIPR_RETURN_IF_ERROR(ReadBody(*rx_, h, &body));
    Bytes dst(bulk);
    iovec iov{dst.data(), dst.size()};
    return ReadBulk(*rx_, h.request_id, &iov, 1);
  }
};

TEST_F(PeerCloses, BeforeAHeader) {
  Check({}, [&] { return ReadFrameAndBulk(0); });
}

TEST_F(PeerCloses, MidHeader) {
  Bytes h = RawHeader(0x0101, 1, 10);
  Check(Bytes(h.begin(), h.begin() + 7), [&] { return ReadFrameAndBulk(0); });
}

TEST_F(PeerCloses, MidBody) {
  Check(Cat({RawHeader(0x0101, 1, 100), Bytes(50, 0x90)}), [&] { return ReadFrameAndBulk(0); });
}

TEST_F(PeerCloses, MidDataHeader) {
  Bytes dh = RawHeader(kDataOp, 1, 100);
  Check(Cat({Frame(kCopyToDeviceOp, 1, {0x90}), Bytes(dh.begin(), dh.begin() + 10)}),
        [&] { return ReadFrameAndBulk(100); });
}

TEST_F(PeerCloses, MidChunk) {
  Check(Cat({Frame(kCopyToDeviceOp, 1, {0x90}), RawHeader(kDataOp, 1, 4096), Bytes(1000, 1)}),
        [&] { return ReadFrameAndBulk(8192); });
}

TEST_F(PeerCloses, BetweenChunks) {
  Check(Cat({Frame(kCopyToDeviceOp, 1, {0x90}), Frame(kDataOp, 1, Bytes(4096, 1))}),
        [&] { return ReadFrameAndBulk(8192); });
}

TEST_F(PeerCloses, DuringDiscard) {
  Check(Cat({RawHeader(kDataOp, 1, 4096), Bytes(10, 1)}), [&] { return DiscardBulk(*rx_, 1, 4096); });
}

TEST_F(PeerCloses, DuringSkipPayload) {
  Check(Bytes(100, 1), [&] { return SkipPayload(*rx_, 40000); });
}

TEST_F(FrameIo, SendingToAClosedPeerFailsWithoutSigpipe) {
  rx_.reset();
  Bytes src = PatternBytes(3 * kChunk);
  iovec iov{src.data(), src.size()};
  const Bytes body = {0x90};
  Status st = SendFrame(*tx_, kCopyToDeviceOp, 1, body.data(), body.size(), &iov, 1, kChunk);
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_EQ(SendBulk(*tx_, 1, &iov, 1, kChunk).code(), StatusCode::kLinkDown);
}

TEST_F(FrameIo, ShutdownWakesAReceiverBlockedInReadBulk) {
  ASSERT_TRUE(WriteRaw(Frame(kDataOp, 1, Bytes(100, 1))).ok());
  Bytes dst(1000);
  iovec iov{dst.data(), dst.size()};
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    rx_->Shutdown();
  });
  auto t0 = Clock::now();
  Status st = ReadBulk(*rx_, 1, &iov, 1);
  stopper.join();
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(SecondsSince(t0), 2.0);
}

// ---- IovCursor -------------------------------------------------------------------

TEST(IovCursor, EmptyList) {
  IovCursor c(nullptr, 0);
  EXPECT_EQ(c.Remaining(), 0u);
  iovec out[4];
  int n = -1;
  EXPECT_EQ(c.Take(100, out, 4, &n), 0u);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(IovBytes(nullptr, 0), 0u);
}

TEST(IovCursor, WalksAcrossBuffersInSlices) {
  char a[10], b[5], c[20];
  iovec in[] = {{a, 10}, {b, 0}, {b, 5}, {c, 20}};
  EXPECT_EQ(IovBytes(in, 4), 35u);
  IovCursor cur(in, 4);
  EXPECT_EQ(cur.Remaining(), 35u);
  iovec out[8];
  int n = 0;

  // 12 bytes: all of a, 2 of b (the empty entry yields no slice).
  EXPECT_EQ(cur.Take(12, out, 8, &n), 12u);
  ASSERT_EQ(n, 2);
  EXPECT_EQ(out[0].iov_base, a);
  EXPECT_EQ(out[0].iov_len, 10u);
  EXPECT_EQ(out[1].iov_base, b);
  EXPECT_EQ(out[1].iov_len, 2u);
  EXPECT_EQ(cur.Remaining(), 23u);

  // One slice at most: the rest of b only.
  EXPECT_EQ(cur.Take(100, out, 1, &n), 3u);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(out[0].iov_base, b + 2);
  EXPECT_EQ(out[0].iov_len, 3u);
  EXPECT_EQ(cur.Remaining(), 20u);

  // Nothing asked, nothing given.
  EXPECT_EQ(cur.Take(0, out, 8, &n), 0u);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(cur.Take(5, out, 0, &n), 0u);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(cur.Remaining(), 20u);

  // Part of c, then the rest, then nothing.
  EXPECT_EQ(cur.Take(7, out, 8, &n), 7u);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(out[0].iov_base, c);
  EXPECT_EQ(out[0].iov_len, 7u);
  EXPECT_EQ(cur.Take(100, out, 8, &n), 13u);
  ASSERT_EQ(n, 1);
  EXPECT_EQ(out[0].iov_base, c + 7);
  EXPECT_EQ(out[0].iov_len, 13u);
  EXPECT_EQ(cur.Remaining(), 0u);
  EXPECT_EQ(cur.Take(100, out, 8, &n), 0u);
  EXPECT_EQ(n, 0);
}

TEST(IovCursor, CoversEveryByteOnceWhateverTheSliceSizes) {
  Bytes buf(10000);
  std::vector<iovec> in;
  size_t off = 0;
  for (size_t i = 0; off < buf.size(); ++i) {
    size_t n = std::min<size_t>((i * 37) % 101, buf.size() - off);  // Includes zero lengths.
    in.push_back({buf.data() + off, n});
    off += n;
  }
  for (size_t step : {1, 7, 100, 4096, 20000}) {
    for (int max_slices : {1, 3, 256}) {
      IovCursor cur(in.data(), static_cast<int>(in.size()));
      uint8_t* expect = buf.data();
      uint64_t total = 0;
      std::vector<iovec> out(max_slices);
      for (;;) {
        int n = 0;
        size_t got = cur.Take(step, out.data(), max_slices, &n);
        if (got == 0) break;
        ASSERT_LE(got, step);
        ASSERT_LE(n, max_slices);
        size_t sum = 0;
        for (int s = 0; s < n; ++s) {
          ASSERT_GT(out[s].iov_len, 0u);
          ASSERT_EQ(out[s].iov_base, expect);
          expect += out[s].iov_len;
          sum += out[s].iov_len;
        }
        ASSERT_EQ(sum, got);
        total += got;
        ASSERT_EQ(cur.Remaining(), buf.size() - total);
      }
      EXPECT_EQ(total, buf.size()) << step << " " << max_slices;
    }
  }
}

}  // namespace
}  // namespace hipr
