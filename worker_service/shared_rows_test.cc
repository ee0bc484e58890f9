#include "worker_service/shared_rows.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace hipr::worker {
namespace {

TEST(SharedRows, WalksPitchedRowsInPiecesOfAnySize) {
  std::vector<uint8_t> segment(4096, 0);
  std::iota(segment.begin(), segment.end(), 0);
  SharedRows rows;
  // 3 rows of 10 bytes, 100 apart, from offset 7.
  ASSERT_TRUE(SharedRows::Make({segment.data(), segment.size()}, msg::SharedHost{true, 7, 100},
                               msg::Region{0x1000, 10, 10, 3}, &rows)
                  .ok());
  ASSERT_TRUE(rows.used());
  std::vector<uint8_t> packed(30);
  iovec a{packed.data(), 4};
  iovec b[2] = {{packed.data() + 4, 13}, {packed.data() + 17, 13}};
  ASSERT_TRUE(rows.CopyOut(&a, 1).ok());
  ASSERT_TRUE(rows.CopyOut(b, 2).ok());
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 10; ++c) EXPECT_EQ(packed[r * 10 + c], static_cast<uint8_t>(7 + r * 100 + c));
  uint8_t extra;
  iovec more{&extra, 1};
  EXPECT_FALSE(rows.CopyOut(&more, 1).ok()) << "walked past the last row";

  // And back in, leaving the gaps between rows alone.
  std::vector<uint8_t> zero(30, 0xEE);
  ASSERT_TRUE(SharedRows::Make({segment.data(), segment.size()}, msg::SharedHost{true, 7, 100},
                               msg::Region{0x1000, 10, 10, 3}, &rows)
                  .ok());
  iovec z{zero.data(), zero.size()};
  ASSERT_TRUE(rows.CopyIn(&z, 1).ok());
  EXPECT_EQ(segment[7], 0xEE);
  EXPECT_EQ(segment[16], 0xEE);
  EXPECT_EQ(segment[17], static_cast<uint8_t>(17));
  EXPECT_EQ(segment[216], 0xEE);
  EXPECT_EQ(segment[217], static_cast<uint8_t>(217 & 0xFF));
}

TEST(SharedRows, RowsOutsideTheSegmentAreRefused) {
  std::vector<uint8_t> segment(4096);
  const Connection::SharedRegion seg{segment.data(), segment.size()};
  SharedRows rows;
  struct Case {
    uint64_t offset, pitch, width, height;
  };
  for (Case c : {Case{4000, 0, 97, 1}, Case{4097, 0, 1, 1}, Case{0, 1000, 100, 5}, Case{~uint64_t{0} - 10, 0, 20, 1},
                 Case{0, ~uint64_t{0} / 2, 1, 3}, Case{0, 5, 10, 2}}) {
    SCOPED_TRACE(c.offset);
    Status st = SharedRows::Make(seg, msg::SharedHost{true, c.offset, c.pitch}, msg::Region{0, c.width, c.width, c.height},
                                 &rows);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  }
  // The last byte exactly: fine.
  EXPECT_TRUE(SharedRows::Make(seg, msg::SharedHost{true, 4000, 0}, msg::Region{0, 96, 96, 1}, &rows).ok());
  // No segment at all.
  EXPECT_EQ(SharedRows::Make({}, msg::SharedHost{true, 0, 0}, msg::Region{0, 1, 1, 1}, &rows).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hipr::worker
