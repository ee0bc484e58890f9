// The client's device selection (visible_devices.h), read as clr reads
// HIP_VISIBLE_DEVICES (rocclr/device/rocm/rocdevice.cpp): entries up to the
// first invalid one, duplicates once, UUIDs by substring.
#include "worker_service/device/visible_devices.h"

#include <gtest/gtest.h>

#include <stdlib.h>

namespace hipr::worker {
namespace {

const std::vector<std::string> kFour = {"GPU-aaaa000000000000", "GPU-bbbb000000000000", "GPU-cccc000000000000",
                                        "GPU-dddd000000000000"};

TEST(VisibleDevicesTest, ListsAreReadAsClrReadsThem) {
  EXPECT_EQ(SelectVisible("2,0", kFour), (std::vector<int>{2, 0}));
  EXPECT_EQ(SelectVisible("1,7,0", kFour), (std::vector<int>{1})) << "an index past the devices ends the list";
  EXPECT_EQ(SelectVisible("1,1,3", kFour), (std::vector<int>{1, 3})) << "a device named twice counts once";
  EXPECT_EQ(SelectVisible("3,", kFour), (std::vector<int>{3})) << "a trailing comma adds nothing";
  EXPECT_EQ(SelectVisible("0,,1", kFour), (std::vector<int>{0})) << "an empty entry ends the list";
  EXPECT_EQ(SelectVisible("01", kFour), std::vector<int>{}) << "not written plainly";
  EXPECT_EQ(SelectVisible(" 1", kFour), std::vector<int>{});
  EXPECT_EQ(SelectVisible("-1", kFour), std::vector<int>{});
  EXPECT_EQ(SelectVisible("x,0", kFour), std::vector<int>{}) << "an invalid first entry leaves no device";
  EXPECT_EQ(SelectVisible("GPU-cccc,0", kFour), (std::vector<int>{2, 0})) << "a UUID by substring";
  EXPECT_EQ(SelectVisible("GPU-eeee,0", kFour), std::vector<int>{}) << "a UUID of no device is invalid";
}

TEST(VisibleDevicesTest, HipWinsOverCudaAndEmptyIsUnset) {
  VisibleDevices v = ParseVisibleDevices({"CUDA_VISIBLE_DEVICES=1", "HIP_VISIBLE_DEVICES=2", "OTHER=3"});
  EXPECT_EQ(v.hip, "2");
  EXPECT_FALSE(v.rocr.has_value());
  v = ParseVisibleDevices({"HIP_VISIBLE_DEVICES=", "CUDA_VISIBLE_DEVICES=1", "ROCR_VISIBLE_DEVICES=0,1"});
  EXPECT_EQ(v.hip, "1") << "an empty HIP_VISIBLE_DEVICES gives way to CUDA_VISIBLE_DEVICES, as in clr";
  EXPECT_EQ(v.rocr, "0,1");
  EXPECT_TRUE(ParseVisibleDevices({"HIP_VISIBLE_DEVICES="}).empty());
  EXPECT_EQ(v.Describe(), "HIP_VISIBLE_DEVICES=1 ROCR_VISIBLE_DEVICES=0,1");
}

TEST(VisibleDevicesTest, TheClientsIndicesArePositionsInTheWorkersList) {
  EXPECT_EQ(ComposeVisible("4,5,6", "2,0"), "6,4");
  EXPECT_EQ(ComposeVisible("4,5", "1,2,0"), "5") << "past the worker's list ends the client's";
  EXPECT_EQ(ComposeVisible("4,GPU-abc", "GPU-abc,0"), "GPU-abc,4");
  EXPECT_EQ(ComposeVisible("4,5", "1,GPU-abc,0"), "5") << "a UUID the worker was not given ends the list";
  EXPECT_EQ(ComposeVisible("4,5", "7"), "-1") << "nothing valid selects no device";
}

TEST(VisibleDevicesTest, TheEnvironmentOfAHipSessionProcess) {
  unsetenv("HIP_VISIBLE_DEVICES");
  unsetenv("ROCR_VISIBLE_DEVICES");
  setenv("CUDA_VISIBLE_DEVICES", "3,2", 1);  // The worker's own, read as HIP's.
  VisibleDevices v;
  v.hip = "1";
  v.rocr = "0,1";
  const std::string said = ApplyVisibleToEnvironment(v);
  EXPECT_STREQ(getenv("HIP_VISIBLE_DEVICES"), "2");
  EXPECT_STREQ(getenv("ROCR_VISIBLE_DEVICES"), "0,1");
  EXPECT_NE(said.find("within the worker's 3,2"), std::string::npos) << said;
  unsetenv("HIP_VISIBLE_DEVICES");
  unsetenv("ROCR_VISIBLE_DEVICES");
  unsetenv("CUDA_VISIBLE_DEVICES");
}

}  // namespace
}  // namespace hipr::worker
