#include "client_stub/base/config.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

using Env = std::map<std::string, std::string>;

const char* Lookup(const char* name, void* ctx) {
  auto* env = static_cast<Env*>(ctx);
  auto it = env->find(name);
  return it == env->end() ? nullptr : it->second.c_str();
}

Config Parse(Env env, std::vector<std::string>* problems) {
  return ParseConfig(&Lookup, &env, problems);
}

TEST(ConfigTest, DefaultsWhenNothingIsSet) {
  std::vector<std::string> problems;
  Config c = Parse({}, &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.server, "");
  EXPECT_EQ(c.ServerForLog(), "<unset>");
  EXPECT_EQ(c.connect_timeout_ms, 3000);
  EXPECT_EQ(c.peer_timeout_ms, 10000);
  EXPECT_EQ(c.window_bytes, uint64_t{64} << 30);
  EXPECT_EQ(c.chunk_bytes, wire::kDefaultChunkBytes);
  EXPECT_EQ(c.batch_bytes, 4u << 10);
  EXPECT_EQ(c.flush_us, 200u);
  EXPECT_EQ(c.spin_us, 50);
  EXPECT_EQ(c.log_level, LogLevel::kWarn);
  EXPECT_EQ(c.compress, Compress::kAuto);
  EXPECT_EQ(c.rtc_device_lib_dir, "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
}

TEST(ConfigTest, ParsesEveryKnob) {
  std::vector<std::string> problems;
  Config c = Parse({{"HIPR_SERVER", "gpu1:7000"},
                    {"HIPR_TOKEN", "t0k"},
                    {"HIPR_LOG_LEVEL", "DEBUG"},
                    {"HIPR_CONNECT_TIMEOUT_MS", "500"},
                    {"HIPR_PEER_TIMEOUT_MS", "2500"},
                    {"HIPR_WINDOW_BYTES", "8G"},
                    {"HIPR_CHUNK_BYTES", "1m"},
                    {"HIPR_BATCH_BYTES", "65536"},
                    {"HIPR_FLUSH_US", "0"},
                    {"HIPR_SPIN_US", "0"},
                    {"HIPR_COMPRESS", "On"},
                    {"HIPR_RTC_DEVICE_LIB_DIR", "/opt/rocm/amdgcn/bitcode"}},
                   &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.rtc_device_lib_dir, "/opt/rocm/amdgcn/bitcode");
  EXPECT_EQ(c.compress, Compress::kOn);
  EXPECT_EQ(c.server, "gpu1:7000");
  EXPECT_EQ(c.token, "t0k");
  EXPECT_EQ(c.log_level, LogLevel::kDebug);
  EXPECT_EQ(c.connect_timeout_ms, 500);
  EXPECT_EQ(c.peer_timeout_ms, 2500);
  EXPECT_EQ(c.window_bytes, uint64_t{8} << 30);
  EXPECT_EQ(c.chunk_bytes, 1u << 20);
  EXPECT_EQ(c.batch_bytes, 65536u);
  EXPECT_EQ(c.flush_us, 0u);
  EXPECT_EQ(c.spin_us, 0);
}

TEST(ConfigTest, BadValuesKeepDefaultsAndAreReportedOnce) {
  std::vector<std::string> problems;
  Config c = Parse({{"HIPR_LOG_LEVEL", "loud"},
                    {"HIPR_CONNECT_TIMEOUT_MS", "-5"},
                    {"HIPR_PEER_TIMEOUT_MS", "10s"},
                    {"HIPR_WINDOW_BYTES", "1K"},
                    {"HIPR_CHUNK_BYTES", "1T"},
                    {"HIPR_BATCH_BYTES", "99999999999999999999999"},
                    {"HIPR_FLUSH_US", ""},
                    {"HIPR_SPIN_US", "200000"},
                    {"HIPR_COMPRESS", "yes"},
                    {"HIPR_RTC_DEVICE_LIB_DIR", "bitcode"}},
                   &problems);
  EXPECT_EQ(problems.size(), 10u);
  EXPECT_EQ(c.rtc_device_lib_dir, "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode");
  EXPECT_EQ(c.compress, Compress::kAuto);
  EXPECT_EQ(c.log_level, LogLevel::kWarn);
  EXPECT_EQ(c.connect_timeout_ms, 3000);
  EXPECT_EQ(c.peer_timeout_ms, 10000);
  EXPECT_EQ(c.window_bytes, uint64_t{64} << 30);
  EXPECT_EQ(c.chunk_bytes, wire::kDefaultChunkBytes);
  EXPECT_EQ(c.batch_bytes, 4u << 10);
  EXPECT_EQ(c.flush_us, 200u);
  EXPECT_EQ(c.spin_us, 50);
  for (const std::string& p : problems) EXPECT_NE(p.find("HIPR_"), std::string::npos) << p;
  EXPECT_NE(problems[1].find("HIPR_CONNECT_TIMEOUT_MS='-5'"), std::string::npos) << problems[1];
  EXPECT_NE(problems[1].find("using 3000"), std::string::npos) << problems[1];
}

TEST(ConfigTest, WindowIsRoundedToWholePages) {
  std::vector<std::string> problems;
  Config c = Parse({{"HIPR_WINDOW_BYTES", std::to_string((uint64_t{64} << 20) + 1)}}, &problems);
  EXPECT_TRUE(problems.empty());
  EXPECT_EQ(c.window_bytes % 4096, 0u);
  EXPECT_GT(c.window_bytes, uint64_t{64} << 20);
}

TEST(ConfigTest, LogLevelNames) {
  LogLevel l;
  EXPECT_TRUE(ParseLogLevel("error", &l));
  EXPECT_EQ(l, LogLevel::kError);
  EXPECT_TRUE(ParseLogLevel("Trace", &l));
  EXPECT_EQ(l, LogLevel::kTrace);
  EXPECT_TRUE(ParseLogLevel("off", &l));
  EXPECT_EQ(l, LogLevel::kOff);
  EXPECT_FALSE(ParseLogLevel("verbose", &l));
}

TEST(ConfigTest, RdmaSwitchAndDevice) {
  std::vector<std::string> problems;
  Config c = Parse({}, &problems);
  EXPECT_TRUE(c.rdma);
  EXPECT_EQ(c.rdma_device, "");
  c = Parse({{"HIPR_RDMA", "0"}, {"HIPR_RDMA_DEVICE", "mlx5_0"}}, &problems);
  EXPECT_FALSE(c.rdma);
  EXPECT_EQ(c.rdma_device, "mlx5_0");
  c = Parse({{"HIPR_RDMA", "off"}}, &problems);
  EXPECT_FALSE(c.rdma);
  EXPECT_TRUE(problems.empty());
  c = Parse({{"HIPR_RDMA", "maybe"}}, &problems);
  EXPECT_TRUE(c.rdma);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("HIPR_RDMA"), std::string::npos);
}

TEST(ConfigTest, CompressNames) {
  Compress c;
  EXPECT_TRUE(ParseCompress("off", &c));
  EXPECT_EQ(c, Compress::kOff);
  EXPECT_TRUE(ParseCompress("AUTO", &c));
  EXPECT_EQ(c, Compress::kAuto);
  EXPECT_TRUE(ParseCompress("on", &c));
  EXPECT_EQ(c, Compress::kOn);
  EXPECT_FALSE(ParseCompress("lz4", &c));
  EXPECT_FALSE(ParseCompress("", &c));
}

}  // namespace
}  // namespace hipr::client
