#include "worker_service/sim/models.h"

#include <gtest/gtest.h>

#include "worker_service/device/device_properties.h"

namespace hipr::worker::sim {
namespace {

co::KernelInfo Kernel(uint32_t vgprs, uint32_t group_segment = 0, uint32_t max_flat = 1024) {
  co::KernelInfo k;
  k.name = "k";
  k.vgpr_count = vgprs;
  k.group_segment_fixed_size = group_segment;
  k.max_flat_workgroup_size = max_flat;
  k.wavefront_size = 64;
  return k;
}

// The same numbers the client's occupancy model gives
// (tests/client_stub/launch_test.cc), times the model's CUs.
TEST(CooperativeBlockLimitTest, BlocksPerCuTimesComputeUnits) {
  msg::DeviceInfo d;
  ASSERT_TRUE(ModelInfo("mi250x", 1 << 30, 0, &d).ok());
  ASSERT_EQ(d.multi_processor_count, 110);
  // 4 SIMDs x 8 waves x 64 lanes = 2048 threads per CU.
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32), 256, 0), 8u * 110);
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32), 64, 0), 32u * 110);
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32), 1, 0), 32u * 110);    // A wave holds one block.
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32), 100, 0), 16u * 110);  // Two waves.
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32), 1024, 0), 2u * 110);
  // VGPRs: 512 per lane on gfx90a, 128 each leaves 4 waves per SIMD.
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(128), 256, 0), 4u * 110);
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(121), 256, 0), 4u * 110);  // Rounded up to 8.
  // LDS: 64 KiB per CU over static plus dynamic shared memory.
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32, 4096), 64, 0), 16u * 110);
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32, 4096), 64, 4096), 8u * 110);
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32, 0), 64, 65536), 1u * 110);
  // Over the device's or the kernel's block limit: nothing fits.
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32), 2048, 0), 0u);
  EXPECT_EQ(CooperativeBlockLimit(d, Kernel(32, 0, 128), 256, 0), 0u);
  // Every model says it supports cooperative launches.
  for (const std::string& name : ModelNames()) {
    msg::DeviceInfo m;
    ASSERT_TRUE(ModelInfo(name, 1 << 30, 0, &m).ok());
    EXPECT_TRUE(m.cooperative_launch) << name;
    const uint64_t per_cu = static_cast<uint64_t>(m.max_threads_per_multiprocessor) / 256;  // Light kernel.
    EXPECT_EQ(CooperativeBlockLimit(m, Kernel(32), 256, 0), per_cu * static_cast<uint64_t>(m.multi_processor_count))
        << name;
  }
}

}  // namespace
}  // namespace hipr::worker::sim

namespace hipr::worker::sim {
namespace {

// The numeric architecture a 6.x/7.x hip device derives from the name
// agrees with what ROCm 5 reported for every model the sim has.
TEST(GcnArchNumberTest, AgreesWithEveryModel) {
  for (const std::string& name : ModelNames()) {
    msg::DeviceInfo d;
    ASSERT_TRUE(ModelInfo(name, 1 << 30, 0, &d).ok());
    EXPECT_EQ(GcnArchNumber(d.gcn_arch_name), d.gcn_arch) << name << " " << d.gcn_arch_name;
  }
}

TEST(GcnArchNumberTest, ReadsEveryFamilyAndRefusesWhatIsNotAName) {
  EXPECT_EQ(GcnArchNumber("gfx906"), 906);
  EXPECT_EQ(GcnArchNumber("gfx950"), 950);
  EXPECT_EQ(GcnArchNumber("gfx1030"), 1030);
  EXPECT_EQ(GcnArchNumber("gfx1100"), 1100);
  EXPECT_EQ(GcnArchNumber("gfx1201"), 1201);
  EXPECT_EQ(GcnArchNumber("gfx90c:xnack-"), 912);
  EXPECT_EQ(GcnArchNumber("gfx9-4-generic"), 0);
  EXPECT_EQ(GcnArchNumber(""), 0);
  EXPECT_EQ(GcnArchNumber("gfx"), 0);
  EXPECT_EQ(GcnArchNumber("sm_90"), 0);
  EXPECT_EQ(GcnArchNumber("gfx9g0"), 0);
}

}  // namespace
}  // namespace hipr::worker::sim
