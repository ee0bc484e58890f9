// The pieces of runtime compilation that need no compiler: how name
// expressions are matched to kernels and which device libraries a target
// links, and what a compilation says when the device libraries lack the
// target. Compiling itself is tested end to end (tests/e2e/api_table_rtc.hip).
#include "client_stub/kernels/rtc_compiler.h"

#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace hipr::client::rtc {
namespace {

TEST(RtcCompilerTest, KernelNamesLoseReturnTypeParametersAndSpaces) {
  EXPECT_EQ(NormalizedKernelName("void scale<float>(float*, float, int)"), "scale<float>");
  EXPECT_EQ(NormalizedKernelName("void ns::k3<4>(float*)"), "ns::k3<4>");
  EXPECT_EQ(NormalizedKernelName("void pair<std::pair<int, int> >(int*)"), "pair<std::pair<int,int>>");
  EXPECT_EQ(NormalizedKernelName("plain(float*)"), "plain");  // Not a template: no return type.
  EXPECT_EQ(NormalizedKernelName("fill_roots"), "fill_roots");  // extern "C": not mangled.
  EXPECT_EQ(NormalizedKernelName("void k<(void (*)(int))&f>(int)"), "k<(void(*)(int))&f>");
  EXPECT_EQ(NormalizedKernelName("voidish(int)"), "voidish");  // A name starting with "void".
}

TEST(RtcCompilerTest, ExpressionsLoseAddressOfParenthesesAndSpaces) {
  EXPECT_EQ(NormalizedExpression("&scale<int>"), "scale<int>");
  EXPECT_EQ(NormalizedExpression("  ns::k3< 4 >"), "ns::k3<4>");
  EXPECT_EQ(NormalizedExpression("(&k<float>)"), "k<float>");
  EXPECT_EQ(NormalizedExpression("pair<std::pair<int, int>>"), NormalizedKernelName("void pair<std::pair<int, int> >(int*)"));
}

TEST(RtcCompilerTest, NameExpressionsBecomeInstantiatingVariables) {
  EXPECT_EQ(SourceWithNameExpressions("src", {}), "src");
  std::string s = SourceWithNameExpressions("src\n", {"k<float>", "&k<int>"});
  EXPECT_EQ(s.rfind("src\n", 0), 0u);
  EXPECT_NE(s.find("__hipr_rtc_name_expression_0 = k<float>;"), std::string::npos) << s;
  EXPECT_NE(s.find("__hipr_rtc_name_expression_1 = &k<int>;"), std::string::npos) << s;
}

TEST(RtcCompilerTest, DeviceLibrariesFollowTheTarget) {
  std::vector<std::string> names;
  ASSERT_TRUE(DeviceLibraries("gfx90a:sramecc+:xnack-", &names).ok());
  auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  EXPECT_TRUE(has("oclc_isa_version_90a.bc"));
  EXPECT_TRUE(has("oclc_wavefrontsize64_on.bc"));
  EXPECT_TRUE(has("ocml.bc") && has("ockl.bc") && has("hip.bc"));
  ASSERT_TRUE(DeviceLibraries("gfx1030", &names).ok());
  EXPECT_TRUE(has("oclc_isa_version_1030.bc"));
  EXPECT_TRUE(has("oclc_wavefrontsize64_off.bc"));  // RDNA runs wave32.
  EXPECT_FALSE(DeviceLibraries("sm_80", &names).ok());
  EXPECT_FALSE(DeviceLibraries("gfx", &names).ok());
  EXPECT_FALSE(DeviceLibraries("gfx90a/../../x", &names).ok());
}

// A target newer than the device libraries found: the log says they predate
// it, not that the package is missing; with none found, it names the package.
TEST(RtcCompilerTest, DeviceLibrariesOlderThanTheTargetAreNamedSo) {
  char dir_template[] = "/tmp/hipr-rtc-libs-XXXXXX";
  ASSERT_NE(mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  std::vector<std::string> names;
  ASSERT_TRUE(DeviceLibraries("gfx942", &names).ok());
  for (const std::string& n : names)
    if (n.find("isa_version") == std::string::npos) std::ofstream(dir + "/" + n) << "";
  CompileRequest request;
  request.source = "extern \"C\" __global__ void k() {}";
  request.default_target = "gfx942";
  request.device_lib_dir = dir;
  CompileResult result;
  Status st = Compile(request, &result);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("have no oclc_isa_version_942.bc for gfx942: they predate that target"),
            std::string::npos)
      << st.message();
  std::filesystem::remove(dir + "/ocml.bc");
  st = Compile(request, &result);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("is missing: runtime compilation needs rocm-device-libs"), std::string::npos)
      << st.message();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hipr::client::rtc
