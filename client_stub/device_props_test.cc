#include "client_stub/device_props.h"

#include <cstring>

#include <gtest/gtest.h>

#include "client_stub/fake_worker.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;

TEST(DevicePropsTest, FillsFieldsFromDeviceInfoAndZeroesTheRest) {
  msg::DeviceInfo info = FakeWorker::Device("AMD Instinct MI250X");
  hipDeviceProp_t p;
  std::memset(&p, 0x5a, sizeof p);
  FillDeviceProp(info, &p);
  EXPECT_STREQ(p.name, "AMD Instinct MI250X");
  EXPECT_STREQ(p.gcnArchName, "gfx90a:sramecc+:xnack-");
  EXPECT_EQ(p.gcnArch, 910);
  EXPECT_EQ(p.totalGlobalMem, info.total_global_mem);
  EXPECT_EQ(p.warpSize, 64);
  EXPECT_EQ(p.maxThreadsDim[2], 1024);
  EXPECT_EQ(p.maxGridSize[0], 2147483647);
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.multiProcessorCount, 110);
  EXPECT_EQ(p.pciBusID, 0xc1);
  EXPECT_EQ(p.ECCEnabled, 1);
  EXPECT_EQ(p.isLargeBar, 1);
  EXPECT_EQ(p.maxTexture3D[2], 8192);
  EXPECT_EQ(p.concurrentKernels, 1);
  EXPECT_EQ(p.canMapHostMemory, 1);
  EXPECT_EQ(p.arch.hasDoubles, 1u);
  // No source: zero.
  EXPECT_EQ(p.cooperativeMultiDeviceLaunch, 0);
  EXPECT_EQ(p.hdpMemFlushCntl, nullptr);
  EXPECT_EQ(p.pageableMemoryAccess, 0);
  EXPECT_EQ(p.tccDriver, 0);
}

TEST(DevicePropsTest, LongNamesAreTruncatedAndTerminated) {
  msg::DeviceInfo info;
  info.name = std::string(400, 'x');
  hipDeviceProp_t p;
  FillDeviceProp(info, &p);
  EXPECT_EQ(std::strlen(p.name), sizeof p.name - 1);
}

TEST(DevicePropsTest, AttributesAnswerWhatHasASource) {
  msg::DeviceInfo info = FakeWorker::Device("gpu");
  int v = -1;
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeMaxThreadsPerBlock, &v), hipSuccess);
  EXPECT_EQ(v, 1024);
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeMultiprocessorCount, &v), hipSuccess);
  EXPECT_EQ(v, 110);
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeMaxBlocksPerMultiProcessor, &v), hipSuccess);
  EXPECT_EQ(v, 2);
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeTotalGlobalMem, &v), hipSuccess);
  EXPECT_EQ(v, 2147483647);  // Clamped to int, as the runtime does.
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeGcnArch, &v), hipSuccess);
  EXPECT_EQ(v, 910);
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributePciBusId, &v), hipSuccess);
  EXPECT_EQ(v, 0xc1);
  v = 77;
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeLuid, &v), hipErrorInvalidValue);
  EXPECT_EQ(DeviceAttribute(info, hipDeviceAttributeHdpMemFlushCntl, &v), hipErrorInvalidValue);
  EXPECT_EQ(DeviceAttribute(info, static_cast<hipDeviceAttribute_t>(123456), &v), hipErrorInvalidValue);
  EXPECT_EQ(v, 77);  // Nothing written on failure.
}

TEST(DevicePropsTest, ChooseDevicePicksTheDeviceMeetingMostRequests) {
  msg::DeviceInfo small = FakeWorker::Device("small");
  small.multi_processor_count = 60;
  msg::DeviceInfo big = FakeWorker::Device("big");
  big.multi_processor_count = 120;
  hipDeviceProp_t want;
  std::memset(&want, 0, sizeof want);
  EXPECT_EQ(ChooseDevice({small, big}, want), 0);  // Nothing asked: device 0.
  want.multiProcessorCount = 100;
  EXPECT_EQ(ChooseDevice({small, big}, want), 1);
  want.multiProcessorCount = 1000;
  EXPECT_EQ(ChooseDevice({small, big}, want), 0);  // Nobody qualifies.
}

}  // namespace
}  // namespace hipr::client
