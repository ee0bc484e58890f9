#include "protocol/status_hip.h"

#include <vector>

#include <gtest/gtest.h>

namespace hipr {
namespace {

// Every StatusCode the protocol names (a code without a name is not one).
std::vector<StatusCode> AllCodes() {
  std::vector<StatusCode> codes;
  for (int c = 0; c < 512; ++c) {
    if (StatusCodeName(static_cast<StatusCode>(c)) != "unknown status") codes.push_back(static_cast<StatusCode>(c));
  }
  return codes;
}

TEST(StatusHip, ScopeDecidesBetweenACallErrorAndNoDevice) {
  const auto codes = AllCodes();
  ASSERT_GE(codes.size(), 19u);
  for (StatusCode code : codes) {
    const Status st(code, "x");
    SCOPED_TRACE(Status(code, "").ToString());
    switch (st.scope()) {
      case StatusScope::kNone: EXPECT_EQ(HipErrorFor(st), hipSuccess); break;
      case StatusScope::kCall:
        EXPECT_NE(HipErrorFor(st), hipSuccess);
        EXPECT_NE(HipErrorFor(st), hipErrorNoDevice);
        break;
      case StatusScope::kSession:
      case StatusScope::kLink: EXPECT_EQ(HipErrorFor(st), hipErrorNoDevice); break;
    }
  }
}

TEST(StatusHip, RowsWhereTheTwoEndsOnceDisagreed) {
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kFailedPrecondition, "")), hipErrorInvalidValue);
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kInvalidDevicePointer, "")), hipErrorInvalidValue);
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kDeviceLost, "")), hipErrorNoDevice);
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kResourceExhausted, "")), hipErrorOutOfMemory);
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kInternal, "")), hipErrorUnknown);
}

TEST(StatusHip, TheRuntimesOwnNumberWins) {
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kInvalidArgument, "", hipErrorInvalidImage)), hipErrorInvalidImage);
  EXPECT_EQ(HipErrorFor(Status(StatusCode::kDeviceLost, "", hipErrorIllegalAddress)), hipErrorIllegalAddress);
  EXPECT_EQ(HipErrorFor(Status()), hipSuccess);
}

}  // namespace
}  // namespace hipr
