#include "client_stub/session/send_batch.h"

#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "protocol/frame_io.h"
#include "protocol/tcp/tcp_connection.h"
#include "protocol/wire.h"

namespace hipr::client {
namespace {

struct Parsed {
  wire::FrameHeader header;
  std::vector<uint8_t> payload;
};

std::vector<Parsed> ParseFrames(const std::vector<uint8_t>& bytes) {
  std::vector<Parsed> out;
  size_t at = 0;
  while (at < bytes.size()) {
    EXPECT_GE(bytes.size() - at, sizeof(wire::FrameHeader));
    Parsed p;
    p.header = wire::DecodeHeader(bytes.data() + at);
    at += sizeof(wire::FrameHeader);
    EXPECT_LE(p.header.payload_length, bytes.size() - at);
    p.payload.assign(bytes.begin() + at, bytes.begin() + at + p.header.payload_length);
    at += p.header.payload_length;
    out.push_back(std::move(p));
  }
  return out;
}

TEST(SendBatchTest, FramesAreEncodedBackToBackWithBulkChunked) {
  SendBatch b;
  EXPECT_TRUE(b.empty());
  const auto t0 = SendBatch::Clock::now();
  const uint8_t body1[] = {1, 2, 3};
  b.Append(0x0102, 7, body1, sizeof body1, nullptr, 0, wire::kMinChunkBytes, t0);
  std::vector<uint8_t> bulk(wire::kMinChunkBytes * 2 + 10);
  for (size_t i = 0; i < bulk.size(); ++i) bulk[i] = static_cast<uint8_t>(i);
  // The bulk arrives as two iovecs split at an odd place.
  iovec parts[2] = {{bulk.data(), 1000}, {bulk.data() + 1000, bulk.size() - 1000}};
  const uint8_t body2[] = {9};
  b.Append(0x0201, 8, body2, 1, parts, 2, wire::kMinChunkBytes, t0 + std::chrono::seconds(1));
  EXPECT_EQ(b.frames(), 2u);
  EXPECT_EQ(b.oldest(), t0);

  std::vector<uint8_t> out = {42};  // Discarded by TakeInto.
  b.TakeInto(&out);
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.bytes(), 0u);
  auto frames = ParseFrames(out);
  ASSERT_EQ(frames.size(), 5u);  // Two requests, three data chunks.
  EXPECT_EQ(frames[0].header.op, 0x0102);
  EXPECT_EQ(frames[0].header.request_id, 7u);
  EXPECT_EQ(frames[0].payload, std::vector<uint8_t>(body1, body1 + 3));
  EXPECT_EQ(frames[1].header.op, 0x0201);
  std::vector<uint8_t> joined;
  for (int i = 2; i < 5; ++i) {
    EXPECT_EQ(frames[i].header.op, static_cast<uint16_t>(wire::Op::kData));
    EXPECT_EQ(frames[i].header.request_id, 8u);
    EXPECT_LE(frames[i].payload.size(), wire::kMinChunkBytes);
    joined.insert(joined.end(), frames[i].payload.begin(), frames[i].payload.end());
  }
  EXPECT_EQ(joined, bulk);
  for (const auto& f : frames) EXPECT_EQ(f.header.magic, wire::kMagic);
}

TEST(SendBatchTest, ChunkSizeIsClampedToTheProtocolLimits) {
  std::vector<uint8_t> out;
  std::vector<uint8_t> bulk(wire::kMinChunkBytes + 1);
  iovec v{bulk.data(), bulk.size()};
  AppendFrame(&out, 1, 1, nullptr, 0, &v, 1, /*chunk_bytes=*/1);
  auto frames = ParseFrames(out);
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[1].payload.size(), wire::kMinChunkBytes);
  EXPECT_EQ(frames[2].payload.size(), 1u);
}

TEST(SendBatchTest, PrefixAndBulkArriveAsOneStream) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  tcp::TcpConnection tx(fds[0]);
  tcp::TcpConnection rx(fds[1]);
  std::vector<uint8_t> prefix;
  const uint8_t body[] = {5, 6};
  AppendFrame(&prefix, 0x0201, 3, body, sizeof body, nullptr, 0, 0);
  std::vector<uint8_t> bulk(3 * 4096 + 17);
  for (size_t i = 0; i < bulk.size(); ++i) bulk[i] = static_cast<uint8_t>(i * 13);
  std::vector<iovec> rows;
  for (size_t at = 0; at < bulk.size(); at += 100)
    rows.push_back({bulk.data() + at, std::min<size_t>(100, bulk.size() - at)});
  std::vector<uint8_t> got(bulk.size());
  std::thread reader([&] {
    wire::FrameHeader h;
    ASSERT_TRUE(ReadHeader(rx, &h).ok());
    EXPECT_EQ(h.op, 0x0201);
    std::vector<uint8_t> b;
    ASSERT_TRUE(ReadBody(rx, h, &b).ok());
    EXPECT_EQ(b, std::vector<uint8_t>(body, body + 2));
    iovec dst{got.data(), got.size()};
    ASSERT_TRUE(ReadBulk(rx, 3, &dst, 1).ok());
  });
  ASSERT_TRUE(SendPrefixAndBulk(tx, prefix, 3, rows.data(), static_cast<int>(rows.size()), 4096).ok());
  reader.join();
  EXPECT_EQ(got, bulk);
}

}  // namespace
}  // namespace hipr::client
