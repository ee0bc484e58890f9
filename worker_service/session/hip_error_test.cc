#include "worker_service/session/hip_error.h"

#include <hip/hip_runtime_api.h>

#include "protocol/status_hip.h"

#include <vector>

#include <gtest/gtest.h>

namespace hipr::worker {
namespace {

// The worker's replies use the one table (protocol/status_hip.h), which the
// client's ToHipError shares; its numbers are checked against this
// hip_runtime_api.h at compile time on both ends.

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
      case StatusScope::kNone: EXPECT_EQ(ToHipError(st), hipSuccess); break;
      case StatusScope::kCall:
        EXPECT_NE(ToHipError(st), hipSuccess);
        EXPECT_NE(ToHipError(st), hipErrorNoDevice);
        break;
      case StatusScope::kSession:
      case StatusScope::kLink: EXPECT_EQ(ToHipError(st), hipErrorNoDevice); break;
    }
  }
}

TEST(StatusHip, RowsWhereTheTwoEndsOnceDisagreed) {
  EXPECT_EQ(ToHipError(Status(StatusCode::kFailedPrecondition, "")), hipErrorInvalidValue);
  EXPECT_EQ(ToHipError(Status(StatusCode::kInvalidDevicePointer, "")), hipErrorInvalidValue);
  EXPECT_EQ(ToHipError(Status(StatusCode::kDeviceLost, "")), hipErrorNoDevice);
  EXPECT_EQ(ToHipError(Status(StatusCode::kResourceExhausted, "")), hipErrorOutOfMemory);
  EXPECT_EQ(ToHipError(Status(StatusCode::kInternal, "")), hipErrorUnknown);
}

TEST(StatusHip, TheRuntimesOwnNumberWins) {
  EXPECT_EQ(ToHipError(Status(StatusCode::kInvalidArgument, "", hipErrorInvalidImage)), hipErrorInvalidImage);
  EXPECT_EQ(ToHipError(Status(StatusCode::kDeviceLost, "", hipErrorIllegalAddress)), hipErrorIllegalAddress);
  EXPECT_EQ(ToHipError(Status()), hipSuccess);
}

}  // namespace
}  // namespace hipr::worker
