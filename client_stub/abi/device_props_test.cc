#include "client_stub/abi/device_props.h"

#include <cstring>

#include <gtest/gtest.h>

#include "tests/client_stub/fake_worker.h"
#include "protocol/device_properties.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;

TEST(DevicePropsTest, FillsFieldsFromDeviceInfoAndZeroesTheRest) {
  msg::DeviceInfo info = FakeWorker::Device("AMD Instinct MI250X");
  msg::SetProperty(&info, msg::DeviceProperty::kTexturePitchAlignment, 256);
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
  EXPECT_EQ(p.arch.hasDoubles, 1u);
  EXPECT_EQ(p.texturePitchAlignment, 256u) << "a named property";
  // What a GPU on another host is to this process, whatever it reports.
  EXPECT_EQ(p.cooperativeMultiDeviceLaunch, 0);
  EXPECT_EQ(p.pageableMemoryAccess, 0);
  EXPECT_EQ(p.canMapHostMemory, 0) << "hipHostGetDevicePointer is refused";
  EXPECT_EQ(p.integrated, 0);
  // No source: zero.
  EXPECT_EQ(p.hdpMemFlushCntl, nullptr);
  EXPECT_EQ(p.tccDriver, 0);
}

TEST(DevicePropsTest, LongNamesAreTruncatedAndTerminated) {
  msg::DeviceInfo info;
  info.name = std::string(400, 'x');
  hipDeviceProp_t p;
  FillDeviceProp(info, &p);
  EXPECT_EQ(std::strlen(p.name), sizeof p.name - 1);
}

TEST(DevicePropsTest, AttributesAnswerAsClrPerMajor) {
  msg::DeviceInfo info = FakeWorker::Device("gpu");
  msg::SetProperty(&info, msg::DeviceProperty::kMaxBlocksPerMultiProcessor, 32);
  msg::SetProperty(&info, msg::DeviceProperty::kImageSupport, 1);
  msg::SetProperty(&info, msg::DeviceProperty::kWallClockRate, 25000);
  msg::SetProperty(&info, msg::DeviceProperty::kPciChipId, 0x740c);
  const DeviceAnswers answers(info);
  int v = -1;
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeMaxThreadsPerBlock, 5, &v), hipSuccess);
  EXPECT_EQ(v, 1024);
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeMultiprocessorCount, 6, &v), hipSuccess);
  EXPECT_EQ(v, 110);
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeMaxBlocksPerMultiProcessor, 5, &v), hipSuccess);
  EXPECT_EQ(v, 32);
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeTotalGlobalMem, 6, &v), hipSuccess);
  EXPECT_EQ(v, 2147483647);  // Clamped to int, as the runtime does.
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeImageSupport, 5, &v), hipSuccess);
  EXPECT_EQ(v, 1);
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributePciBusId, 7, &v), hipSuccess);
  EXPECT_EQ(v, 0xc1);
  EXPECT_EQ(DeviceAttribute(answers, 10017, 5, &v), hipSuccess) << "WallClockRate exists from 5.3";
  EXPECT_EQ(v, 25000);
  EXPECT_EQ(DeviceAttribute(answers, 10020, 7, &v), hipSuccess) << "PciChipId, 7.1's number";
  EXPECT_EQ(v, 0x740c);
  v = 77;
  EXPECT_EQ(DeviceAttribute(answers, 10020, 6, &v), hipErrorInvalidValue) << "not in 6.x's enum";
  EXPECT_EQ(DeviceAttribute(answers, 10018, 7, &v), hipErrorInvalidValue) << "a fact the worker did not send";
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeLuid, 6, &v), hipErrorInvalidValue);
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeGcnArch, 5, &v), hipErrorInvalidValue) << "clr refuses it";
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeClockInstructionRate, 5, &v), hipErrorInvalidValue);
  EXPECT_EQ(DeviceAttribute(answers, 123456, 5, &v), hipErrorInvalidValue);
  EXPECT_EQ(v, 77);  // Nothing written on failure.
  void* hdp[2] = {&v, &v};
  EXPECT_EQ(DeviceAttribute(answers, hipDeviceAttributeHdpMemFlushCntl, 5, reinterpret_cast<int*>(hdp)), hipSuccess);
  EXPECT_EQ(hdp[0], nullptr) << "a pointer, 8 bytes: none mapped here";
  EXPECT_EQ(hdp[1], &v);
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
