// Tests of Status: an ok status is a null pointer, and an error keeps its
// code, native number and message through copies and moves.
#include "protocol/status.h"

#include <gtest/gtest.h>

#include <type_traits>
#include <utility>

namespace hipr {
namespace {

TEST(StatusTest, OkIsOnePointer) {
  static_assert(sizeof(Status) == sizeof(void*));
  static_assert(std::is_nothrow_move_constructible_v<Status>);
  Status st;
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOk);
  EXPECT_EQ(st.native(), 0);
  EXPECT_EQ(st.message(), "");
  EXPECT_EQ(st.scope(), StatusScope::kNone);
  EXPECT_EQ(st.ToString(), "ok");
  EXPECT_TRUE(Status(StatusCode::kOk, "").ok());
}

TEST(StatusTest, AnErrorKeepsItsPartsThroughCopiesAndMoves) {
  Status st(StatusCode::kInvalidHandle, "no stream 7", 400);
  EXPECT_FALSE(st.ok());
  Status copy = st;
  EXPECT_EQ(copy.code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(copy.native(), 400);
  EXPECT_EQ(copy.message(), "no stream 7");
  EXPECT_EQ(st.message(), "no stream 7");  // The copy is its own.
  Status assigned;
  assigned = copy;
  EXPECT_EQ(assigned.ToString(), "invalid handle: no stream 7");
  assigned = Status::Ok();
  EXPECT_TRUE(assigned.ok());
  EXPECT_EQ(copy.code(), StatusCode::kInvalidHandle);
  Status moved = std::move(copy);
  EXPECT_EQ(moved.code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(moved.native(), 400);
  Status& self = moved;
  moved = self;  // Self-assignment keeps it.
  EXPECT_EQ(moved.message(), "no stream 7");
  EXPECT_EQ(Status(StatusCode::kLinkDown, "gone").scope(), StatusScope::kLink);
}

// An ok code with a message or a native number (as a peer may send) is
// still ok, and keeps what came with it.
TEST(StatusTest, AnOkCodeWithAMessageStaysOk) {
  Status st(StatusCode::kOk, "note", 0);
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kOk);
  EXPECT_EQ(st.message(), "note");
  EXPECT_EQ(st.ToString(), "ok");
  Status native(StatusCode::kOk, "", 3);
  EXPECT_TRUE(native.ok());
  EXPECT_EQ(native.native(), 3);
}

}  // namespace
}  // namespace hipr
