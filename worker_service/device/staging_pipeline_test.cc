// StagingPipeline (staging_pipeline.h): every byte through in order, never
// more pieces in flight than buffers, errors from either half, copies
// sharing one pool at once, and packed ranges over a region's rows.
#include "worker_service/device/staging_pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace hipr::worker {
namespace {

constexpr size_t kPiece = 4096;

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 131 + seed * 7 + (i >> 12));
  return v;
}

class Pool {
 public:
  explicit Pool(size_t n) {
    for (size_t i = 0; i < n; ++i) storage_.emplace_back(kPiece);
    for (auto& b : storage_) buffers_.push_back(b.data());
  }
  std::vector<uint8_t*> buffers() const { return buffers_; }

 private:
  std::vector<std::vector<uint8_t>> storage_;
  std::vector<uint8_t*> buffers_;
};

// A network side handing out (or taking) a byte vector in odd-sized reads.
struct Stream {
  const std::vector<uint8_t>* in = nullptr;
  std::vector<uint8_t>* out = nullptr;
  size_t at = 0;
  Status Fill(const iovec* iov, int count) {
    for (int i = 0; i < count; ++i) {
      std::memcpy(iov[i].iov_base, in->data() + at, iov[i].iov_len);
      at += iov[i].iov_len;
    }
    return Status::Ok();
  }
  Status Send(const iovec* iov, int count) {
    for (int i = 0; i < count; ++i) {
      const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
      out->insert(out->end(), p, p + iov[i].iov_len);
    }
    return Status::Ok();
  }
};

TEST(StagingPipelineTest, InMovesEveryByteInOrderWithABoundedPool) {
  Pool pool(3);
  StagingPipeline pipe(pool.buffers(), kPiece);
  const std::vector<uint8_t> src = Pattern(10 * kPiece + 123, 1);
  std::vector<uint8_t> device(src.size(), 0);
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  uint64_t next_offset = 0;
  Stream net{&src, nullptr};
  Status st = pipe.In(
      src.size(),
      [&](const iovec* iov, int count) {
        const int now = ++in_flight;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        return net.Fill(iov, count);
      },
      [&](uint8_t* buffer, uint64_t offset, size_t len) {
        EXPECT_EQ(offset, next_offset) << "pieces out of order";
        next_offset += len;
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // A slow device.
        std::memcpy(device.data() + offset, buffer, len);
        --in_flight;
        return Status::Ok();
      });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(device == src);
  EXPECT_LE(most.load(), 3) << "more pieces in flight than buffers";
}

TEST(StagingPipelineTest, OutMovesEveryByteInOrder) {
  Pool pool(2);
  StagingPipeline pipe(pool.buffers(), kPiece);
  const std::vector<uint8_t> device = Pattern(7 * kPiece + 5, 2);
  std::vector<uint8_t> sent;
  Stream net{nullptr, &sent};
  Status st = pipe.Out(
      device.size(),
      [&](uint8_t* buffer, uint64_t offset, size_t len) {
        std::memcpy(buffer, device.data() + offset, len);
        return Status::Ok();
      },
      [&](const iovec* iov, int count) { return net.Send(iov, count); });
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(sent == device);
}

TEST(StagingPipelineTest, ErrorsFromEitherHalfAreReturnedAndTheBuffersComeBack) {
  Pool pool(2);
  StagingPipeline pipe(pool.buffers(), kPiece);
  const std::vector<uint8_t> src = Pattern(8 * kPiece, 3);
  Stream net{&src, nullptr};
  int fills = 0;
  Status st = pipe.In(
      src.size(),
      [&](const iovec* iov, int count) {
        ++fills;
        return net.Fill(iov, count);
      },
      [&](uint8_t*, uint64_t offset, size_t) {
        return offset >= 2 * kPiece ? Status(StatusCode::kInternal, "device failed") : Status::Ok();
      });
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  EXPECT_LT(fills, 8) << "the network was read to the end after the device failed";
  // A failing network read.
  st = pipe.In(src.size(), [](const iovec*, int) { return Status(StatusCode::kLinkDown, "gone"); },
               [](uint8_t*, uint64_t, size_t) { return Status::Ok(); });
  EXPECT_EQ(st.code(), StatusCode::kLinkDown);
  // Failing device reads and network sends.
  std::vector<uint8_t> sent;
  Stream out{nullptr, &sent};
  st = pipe.Out(src.size(),
                [](uint8_t*, uint64_t offset, size_t) {
                  return offset > kPiece ? Status(StatusCode::kInternal, "read failed") : Status::Ok();
                },
                [&](const iovec* iov, int count) { return out.Send(iov, count); });
  EXPECT_EQ(st.code(), StatusCode::kInternal);
  st = pipe.Out(src.size(), [](uint8_t*, uint64_t, size_t) { return Status::Ok(); },
                [](const iovec*, int) { return Status(StatusCode::kLinkDown, "gone"); });
  EXPECT_EQ(st.code(), StatusCode::kLinkDown);
  // Every buffer is back: a copy needing all of them still completes.
  std::vector<uint8_t> device(src.size());
  Stream again{&src, nullptr};
  st = pipe.In(src.size(), [&](const iovec* iov, int count) { return again.Fill(iov, count); },
               [&](uint8_t* buffer, uint64_t offset, size_t len) {
                 std::memcpy(device.data() + offset, buffer, len);
                 return Status::Ok();
               });
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(device == src);
}

// A send that fails while the device half is between taking a freed buffer
// and seeing the stop: the device half then waits for another buffer, and
// Out must keep giving back what it queued instead of joining it forever
// (once in a few hundred runs before the fix). Many tries, each bounded.
TEST(StagingPipelineTest, AFailedSendNeverStrandsTheDeviceHalf) {
  Pool pool(2);
  StagingPipeline pipe(pool.buffers(), kPiece);
  for (int run = 0; run < 3000; ++run) {
    int sends = 0;
    Status st = pipe.Out(16 * kPiece, [](uint8_t*, uint64_t, size_t) { return Status::Ok(); },
                         [&](const iovec*, int) {
                           return ++sends < 2 ? Status::Ok() : Status(StatusCode::kLinkDown, "gone");
                         });
    ASSERT_EQ(st.code(), StatusCode::kLinkDown) << "run " << run;
  }
  // Every buffer is back.
  const std::vector<uint8_t> src = Pattern(4 * kPiece, 5);
  Stream again{&src, nullptr};
  Status st = pipe.In(src.size(), [&](const iovec* iov, int count) { return again.Fill(iov, count); },
                      [](uint8_t*, uint64_t, size_t) { return Status::Ok(); });
  EXPECT_TRUE(st.ok());
}

TEST(StagingPipelineTest, CopiesShareOnePoolAtOnce) {
  Pool pool(2);
  StagingPipeline pipe(pool.buffers(), kPiece);
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      const std::vector<uint8_t> src = Pattern(20 * kPiece + t, static_cast<uint8_t>(t));
      std::vector<uint8_t> device(src.size());
      Stream net{&src, nullptr};
      Status st = pipe.In(src.size(), [&](const iovec* iov, int count) { return net.Fill(iov, count); },
                          [&](uint8_t* buffer, uint64_t offset, size_t len) {
                            std::memcpy(device.data() + offset, buffer, len);
                            return Status::Ok();
                          });
      std::vector<uint8_t> sent;
      Stream out{nullptr, &sent};
      if (st.ok())
        st = pipe.Out(device.size(),
                      [&](uint8_t* buffer, uint64_t offset, size_t len) {
                        std::memcpy(buffer, device.data() + offset, len);
                        return Status::Ok();
                      },
                      [&](const iovec* iov, int count) { return out.Send(iov, count); });
      if (st.ok() && device == src && sent == src) ++good;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(good.load(), 4);
}

TEST(StagingPipelineTest, OwnsOnlyRangesInsideOneBuffer) {
  std::vector<std::vector<uint8_t>> pool(3, std::vector<uint8_t>(64));
  std::vector<uint8_t*> buffers;
  for (auto& b : pool) buffers.push_back(b.data());
  StagingPipeline pipeline(buffers, 64);
  for (auto& b : pool) {
    EXPECT_TRUE(pipeline.Owns(b.data(), 64));
    EXPECT_TRUE(pipeline.Owns(b.data() + 63, 1));
    EXPECT_TRUE(pipeline.Owns(b.data() + 10, 0));
    EXPECT_FALSE(pipeline.Owns(b.data() + 1, 64));
    EXPECT_FALSE(pipeline.Owns(b.data(), 65));
  }
  uint8_t elsewhere[8];
  EXPECT_FALSE(pipeline.Owns(elsewhere, sizeof elsewhere));
}

TEST(StagingPipelineTest, PackedRangesFollowTheRows) {
  // 3 rows of 10 bytes, 16 apart, from address 1000.
  const msg::Region r{1000, 16, 10, 3};
  std::vector<std::array<uint64_t, 3>> calls;
  auto record = [&](uint64_t address, uint64_t packed, uint64_t n) {
    calls.push_back({address, packed, n});
    return Status::Ok();
  };
  ASSERT_TRUE(ForPackedRange(r, 7, 15, record).ok());
  const std::vector<std::array<uint64_t, 3>> want = {{1007, 7, 3}, {1016, 10, 10}, {1032, 20, 2}};
  EXPECT_EQ(calls, want);
  calls.clear();
  EXPECT_FALSE(ForPackedRange(r, 25, 10, record).ok()) << "a range past the region's end";
}

}  // namespace
}  // namespace hipr::worker
