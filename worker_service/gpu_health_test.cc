// GPU health for /metrics (gpu_health.h): what a node without librocm-smi
// or without a GPU gets, and the families a GPU's samples make, checked by
// Prometheus' own promtool where it is installed. (Reading a real GPU needs
// an AMD GPU; none is here.)
#include "worker_service/gpu_health.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace hipr::worker {
namespace {

TEST(GpuHealthTest, AMissingLibraryIsReportedNotFatal) {
  std::string why;
  EXPECT_EQ(GpuHealth::Open(&why, "libhipr-no-such-smi.so.1"), nullptr);
  EXPECT_NE(why.find("cannot load libhipr-no-such-smi.so.1 (Debian: librocm-smi64-1)"), std::string::npos) << why;
}

TEST(GpuHealthTest, TheRealLibraryWithoutAGpuSaysWhy) {
  std::string why;
  std::unique_ptr<GpuHealth> h = GpuHealth::Open(&why);
  if (h != nullptr) GTEST_SKIP() << "librocm-smi sees a GPU here";
  EXPECT_FALSE(why.empty());
}

TEST(GpuHealthTest, SamplesBecomeTheExportersFamilies) {
  GpuSample a;
  a.index = 0;
  a.edge_celsius = 41.5;
  a.junction_celsius = 47;
  a.power_watts = 88.25;
  a.gfx_activity = 12;
  a.used_vram_mb = 1024;
  a.total_vram_mb = 65536;
  a.ecc_correctable = 3;
  a.ecc_uncorrectable = 0;
  GpuSample b;  // A GPU that reports only its temperature.
  b.index = 1;
  b.edge_celsius = 39;
  const std::string page = RenderGpuHealth({a, b}, true);
  for (const char* line :
       {"hipr_gpu_health_available 1\n", "gpu_edge_temperature{gpu_id=\"0\"} 41.5\n",
        "gpu_edge_temperature{gpu_id=\"1\"} 39\n", "gpu_junction_temperature{gpu_id=\"0\"} 47\n",
        "gpu_average_package_power{gpu_id=\"0\"} 88.25\n", "gpu_gfx_activity{gpu_id=\"0\"} 12\n",
        "gpu_used_vram{gpu_id=\"0\"} 1024\n", "gpu_total_vram{gpu_id=\"0\"} 65536\n",
        "# TYPE gpu_ecc_correct_total counter\n", "gpu_ecc_correct_total{gpu_id=\"0\"} 3\n",
        "gpu_ecc_uncorrect_total{gpu_id=\"0\"} 0\n"})
    EXPECT_NE(page.find(line), std::string::npos) << line << " missing from:\n" << page;
  EXPECT_EQ(page.find("gpu_memory_temperature"), std::string::npos) << "no GPU gave it: no family";
  EXPECT_EQ(page.find("gpu_junction_temperature{gpu_id=\"1\"}"), std::string::npos);
  EXPECT_EQ(RenderGpuHealth({}, false), RenderGpuHealth({}, false));
  EXPECT_NE(RenderGpuHealth({}, false).find("hipr_gpu_health_available 0\n"), std::string::npos);

  FILE* probe = std::fopen("/usr/bin/promtool", "r");
  if (probe == nullptr) GTEST_SKIP() << "promtool is not installed (Debian: prometheus)";
  std::fclose(probe);
  FILE* check = popen("/usr/bin/promtool check metrics > /dev/null 2>&1", "w");
  ASSERT_NE(check, nullptr);
  std::fwrite(page.data(), 1, page.size(), check);
  EXPECT_EQ(pclose(check), 0) << "promtool check metrics rejected:\n" << page;
}

}  // namespace
}  // namespace hipr::worker
