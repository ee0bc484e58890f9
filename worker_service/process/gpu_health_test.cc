// GPU health for /metrics (gpu_health.h): what a node without librocm-smi
// or without a GPU gets, the families a GPU's samples make, checked by
// Prometheus' own promtool where it is installed, and the reading of a
// double of librocm-smi's entry points. (Reading a real GPU needs an AMD
// GPU; none is here.)
#include "worker_service/process/gpu_health.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
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

// A double of the librocm-smi entry points GpuHealth::Api names, with the
// 5.x library's behaviour: two GPUs, the second reporting no temperature,
// ECC, or metrics table; reset events queued until taken.
struct FakeSmi {
  bool initialised = false;
  int event_init_status = 0;
  uint32_t throttle_status = 0;
  std::deque<GpuHealth::Api::Event> events;
  bool watching[2] = {false, false};
  uint64_t watched_mask[2] = {0, 0};
};
FakeSmi fake;

GpuHealth::Api FakeApi() {
  GpuHealth::Api a;
  a.init = [](uint64_t) { fake.initialised = true; return 0; };
  a.shut_down = [] { fake.initialised = false; return 0; };
  a.count = [](uint32_t* n) { *n = 2; return 0; };
  a.status_string = [](int, const char** text) { *text = "RSMI_STATUS_PERMISSION"; return 0; };
  a.temp = [](uint32_t d, uint32_t sensor, int, int64_t* milli) {
    if (d != 0) return 2;  // RSMI_STATUS_NOT_SUPPORTED
    *milli = 40000 + 10000 * static_cast<int64_t>(sensor);
    return 0;
  };
  a.power = [](uint32_t, uint32_t, uint64_t* uw) { *uw = 250000000; return 0; };
  a.busy = [](uint32_t, uint32_t* pct) { *pct = 97; return 0; };
  a.memory_total = [](uint32_t, int, uint64_t* b) { *b = uint64_t{64} << 30; return 0; };
  a.memory_usage = [](uint32_t, int, uint64_t* b) { *b = uint64_t{62} << 30; return 0; };
  a.ecc = [](uint32_t d, uint64_t block, GpuHealth::Api::ErrorCount* ec) {
    if (d != 0 || block != 1) return 2;  // Only UMC on GPU 0.
    *ec = {5, 1};
    return 0;
  };
  a.gpu_metrics = [](uint32_t d, void* table) {
    if (d != 0) return 2;
    // An rsmi_gpu_metrics_t of format 1 (96 bytes in 5.x): the header, then
    // throttle_status at 68.
    auto* bytes = static_cast<unsigned char*>(table);
    std::memset(bytes, 0, 96);
    bytes[0] = 96;
    bytes[2] = 1;
    bytes[3] = 1;
    std::memcpy(bytes + 68, &fake.throttle_status, 4);
    return 0;
  };
  a.event_init = [](uint32_t d) {
    if (fake.event_init_status != 0) return fake.event_init_status;
    fake.watching[d] = true;
    return 0;
  };
  a.event_mask = [](uint32_t d, uint64_t mask) { fake.watched_mask[d] = mask; return 0; };
  a.event_get = [](int timeout_ms, uint32_t* n, GpuHealth::Api::Event* out) {
    EXPECT_EQ(timeout_ms, 0) << "a scrape must not wait for events";
    const uint32_t room = *n;
    *n = 0;
    while (*n < room && !fake.events.empty()) {
      out[(*n)++] = fake.events.front();
      fake.events.pop_front();
    }
    return *n == 0 ? 14 : 0;  // RSMI_STATUS_NO_DATA
  };
  a.event_stop = [](uint32_t d) { fake.watching[d] = false; return 0; };
  return a;
}

GpuHealth::Api::Event Reset(uint32_t device, int type = 3) {  // RSMI_EVT_NOTIF_GPU_PRE_RESET
  GpuHealth::Api::Event e{};
  e.device = device;
  e.type = type;
  std::snprintf(e.message, sizeof e.message, "%x", 7);
  return e;
}

TEST(GpuHealthTest, ADoubleOfTheLibraryGivesThrottlingAndResets) {
  fake = FakeSmi();
  std::string why;
  std::unique_ptr<GpuHealth> h = GpuHealth::OpenWith(FakeApi(), &why);
  ASSERT_NE(h, nullptr) << why;
  EXPECT_TRUE(fake.watching[0] && fake.watching[1]);
  EXPECT_EQ(fake.watched_mask[0], uint64_t{1} << 2) << "GPU_PRE_RESET alone";

  std::vector<GpuSample> s = h->Read();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].junction_celsius, 50.0);
  EXPECT_EQ(s[0].throttle_status, 0u);
  EXPECT_EQ(s[0].resets, 0u);
  EXPECT_FALSE(s[1].throttle_status.has_value()) << "no metrics table: no value";
  EXPECT_FALSE(s[1].edge_celsius.has_value());
  EXPECT_EQ(s[1].resets, 0u);

  // 40 events (more than one batch): resets of GPU 1, a post-reset event
  // (not counted again), and a device index the library does not have.
  fake.throttle_status = 0x41;
  for (int i = 0; i < 38; ++i) fake.events.push_back(Reset(1));
  fake.events.push_back(Reset(1, 4));  // RSMI_EVT_NOTIF_GPU_POST_RESET
  fake.events.push_back(Reset(9));
  s = h->Read();
  EXPECT_TRUE(fake.events.empty());
  EXPECT_EQ(s[0].throttle_status, 0x41u);
  EXPECT_EQ(s[0].resets, 0u);
  EXPECT_EQ(s[1].resets, 38u);
  s = h->Read();
  EXPECT_EQ(s[1].resets, 38u) << "a counter: kept between scrapes";

  const std::string page = RenderGpuHealth(s, true);
  for (const char* line : {"# TYPE hipr_gpu_throttle_status gauge\n", "hipr_gpu_throttle_status{gpu_id=\"0\"} 65\n",
                           "# TYPE hipr_gpu_resets_total counter\n", "hipr_gpu_resets_total{gpu_id=\"1\"} 38\n",
                           "gpu_ecc_uncorrect_total{gpu_id=\"0\"} 1\n", "gpu_used_vram{gpu_id=\"1\"} 63488\n"})
    EXPECT_NE(page.find(line), std::string::npos) << line << " missing from:\n" << page;
  EXPECT_EQ(page.find("hipr_gpu_throttle_status{gpu_id=\"1\"}"), std::string::npos);

  // The exposition of every family, for tests/deploy/prometheus_check.sh:
  // the GPU metric names the alert rules may use.
  if (const char* out = std::getenv("HIPR_GPU_HEALTH_EXPOSITION")) std::ofstream(out) << page;

  h.reset();
  EXPECT_FALSE(fake.watching[0] || fake.watching[1]) << "event notification stopped";
  EXPECT_FALSE(fake.initialised);
}

TEST(GpuHealthTest, WithoutEventNotificationThereIsNoResetFamily) {
  fake = FakeSmi();
  fake.event_init_status = 4;  // RSMI_STATUS_PERMISSION: no access to /dev/kfd.
  std::string why;
  std::unique_ptr<GpuHealth> h = GpuHealth::OpenWith(FakeApi(), &why);
  ASSERT_NE(h, nullptr) << why;
  const std::vector<GpuSample> s = h->Read();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[0].resets.has_value());
  EXPECT_EQ(RenderGpuHealth(s, true).find("hipr_gpu_resets_total"), std::string::npos);

  GpuHealth::Api bare = FakeApi();  // A library without the optional entry points.
  bare.gpu_metrics = nullptr;
  bare.event_init = nullptr;
  fake = FakeSmi();
  h = GpuHealth::OpenWith(bare, &why);
  ASSERT_NE(h, nullptr) << why;
  const std::string page = RenderGpuHealth(h->Read(), true);
  EXPECT_EQ(page.find("hipr_gpu_throttle_status"), std::string::npos);
  EXPECT_EQ(page.find("hipr_gpu_resets_total"), std::string::npos);
  EXPECT_NE(page.find("gpu_junction_temperature{gpu_id=\"0\"} 50\n"), std::string::npos);
}

// hipr-smi's session reads without listening for resets, and matches a HIP
// device with its sample by PCI location (rsmi_dev_pci_id_get's BDFID).
TEST(GpuHealthTest, ASessionReadsWithoutWatchingAndByPciLocation) {
  fake = FakeSmi();
  GpuHealth::Api a = FakeApi();
  a.pci_id = [](uint32_t d, uint64_t* bdf) {
    if (d != 1) return 2;  // GPU 0 does not say.
    *bdf = PciBdf(0x10, 0xc1, 0) | 1;  // Function 1.
    return 0;
  };
  std::string why;
  std::unique_ptr<GpuHealth> h = GpuHealth::OpenWith(a, &why, /*watch_resets=*/false);
  ASSERT_NE(h, nullptr) << why;
  EXPECT_FALSE(fake.watching[0] || fake.watching[1]) << "no event notification for a session's reading";
  const std::vector<GpuSample> s = h->Read();
  ASSERT_EQ(s.size(), 2u);
  EXPECT_FALSE(s[0].pci_bdf.has_value());
  ASSERT_TRUE(s[1].pci_bdf.has_value());
  EXPECT_EQ(*s[1].pci_bdf, (uint64_t{0x10} << 32) | (0xc1u << 8) | 1u);
  EXPECT_EQ(*s[1].pci_bdf & ~uint64_t{7}, PciBdf(0x10, 0xc1, 0));
  EXPECT_FALSE(s[1].resets.has_value());
}

}  // namespace
}  // namespace hipr::worker
