#include "worker_service/session/shared_segment.h"

#include <gtest/gtest.h>

#include <vector>

namespace hipr::worker {
namespace {

constexpr uint64_t kPage = SharedSegment::kPage;

class SharedSegmentTest : public ::testing::Test {
 protected:
  std::vector<uint8_t> memory_ = std::vector<uint8_t>(16 * kPage);
  SharedSegment segment_{Connection::SharedRegion{memory_.data(), memory_.size()}};

  Status Register(uint64_t offset, uint64_t bytes) {
    uint8_t* at = nullptr;
    Status st = segment_.CheckNew(offset, bytes, &at);
    if (st.ok()) {
      EXPECT_EQ(at, memory_.data() + offset);
      segment_.Add(offset, bytes);
    }
    return st;
  }
};

TEST_F(SharedSegmentTest, RegisteredRangesAreWholePagesInsideAndDisjoint) {
  ASSERT_TRUE(Register(2 * kPage, 3 * kPage).ok());
  ASSERT_TRUE(Register(8 * kPage, kPage).ok());
  struct Case {
    uint64_t offset, bytes;
  };
  for (Case c : {Case{0, 0}, Case{1, kPage}, Case{0, kPage + 1}, Case{15 * kPage, 2 * kPage},
                 Case{16 * kPage, kPage}, Case{~uint64_t{0} - kPage + 1, kPage}, Case{kPage, 2 * kPage},
                 Case{4 * kPage, kPage}, Case{0, 16 * kPage}, Case{7 * kPage, 2 * kPage}}) {
    SCOPED_TRACE(c.offset);
    SCOPED_TRACE(c.bytes);
    EXPECT_EQ(Register(c.offset, c.bytes).code(), StatusCode::kInvalidArgument);
  }
  // Right beside both: fine.
  EXPECT_TRUE(Register(5 * kPage, 3 * kPage).ok());
  EXPECT_TRUE(Register(kPage, kPage).ok());
  EXPECT_EQ(segment_.registered_ranges(), 4u);

  // An unregister names a registered range exactly.
  uint8_t* at = nullptr;
  EXPECT_EQ(segment_.Remove(2 * kPage, 2 * kPage, &at).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(segment_.Remove(3 * kPage, 2 * kPage, &at).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(segment_.Remove(2 * kPage, 3 * kPage, &at).ok());
  EXPECT_EQ(at, memory_.data() + 2 * kPage);
  EXPECT_EQ(segment_.Remove(2 * kPage, 3 * kPage, &at).code(), StatusCode::kInvalidArgument) << "twice";
  EXPECT_TRUE(Register(2 * kPage, kPage).ok()) << "freed pages register again";
}

TEST_F(SharedSegmentTest, CopyRowsLieInsideOneRegisteredRange) {
  ASSERT_TRUE(Register(kPage, 2 * kPage).ok());
  ASSERT_TRUE(Register(3 * kPage, kPage).ok());  // Adjacent, but another range.
  HostRows rows;
  // 3 rows of 10 bytes, 100 apart.
  ASSERT_TRUE(segment_.Rows(msg::SharedHost{true, kPage + 7, 100}, msg::Region{0x1000, 10, 10, 3}, &rows).ok());
  EXPECT_EQ(rows.base, memory_.data() + kPage + 7);
  EXPECT_EQ(rows.pitch, 100u);
  // One row: the pitch is the width, whatever was sent.
  ASSERT_TRUE(segment_.Rows(msg::SharedHost{true, kPage, 0}, msg::Region{0x1000, 0, 2 * kPage, 1}, &rows).ok());
  EXPECT_EQ(rows.pitch, 2 * kPage);
  // Empty: nothing to touch.
  ASSERT_TRUE(segment_.Rows(msg::SharedHost{true, 0, 0}, msg::Region{0x1000, 0, 0, 1}, &rows).ok());
  EXPECT_EQ(rows.base, nullptr);

  struct Case {
    uint64_t offset, pitch, width, height;
  };
  for (Case c : {Case{0, 0, 1, 1},                          // Before any range.
                 Case{kPage - 1, 0, 2, 1},                  // Starts just before one.
                 Case{kPage, 0, 2 * kPage + 1, 1},          // Runs into the next range.
                 Case{2 * kPage, kPage, 10, 3},             // Rows run into the next range.
                 Case{4 * kPage, 0, 1, 1},                  // After every range.
                 Case{kPage, 5, 10, 2},                     // Pitch below width.
                 Case{15 * kPage, 0, 2 * kPage, 1},         // Outside the segment.
                 Case{~uint64_t{0} - 10, 0, 20, 1},         // Offset overflows.
                 Case{kPage, ~uint64_t{0} / 2, 1, 3}}) {    // Pitch overflows.
    SCOPED_TRACE(c.offset);
    Status st = segment_.Rows(msg::SharedHost{true, c.offset, c.pitch}, msg::Region{0, c.width, c.width, c.height},
                              &rows);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  }
  // Unregistered: refused from then on.
  uint8_t* at = nullptr;
  ASSERT_TRUE(segment_.Remove(kPage, 2 * kPage, &at).ok());
  EXPECT_EQ(segment_.Rows(msg::SharedHost{true, kPage, 0}, msg::Region{0, 10, 10, 1}, &rows).code(),
            StatusCode::kInvalidArgument);
}

TEST(SharedSegment, NoSegmentRefusesEverything) {
  SharedSegment none{Connection::SharedRegion{}};
  uint8_t* at = nullptr;
  EXPECT_EQ(none.CheckNew(0, kPage, &at).code(), StatusCode::kInvalidArgument);
  HostRows rows;
  EXPECT_EQ(none.Rows(msg::SharedHost{true, 0, 0}, msg::Region{0, 1, 1, 1}, &rows).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hipr::worker
