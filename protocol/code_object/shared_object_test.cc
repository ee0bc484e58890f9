// ReadSharedObjectIdentity and ReadDynamicInfo on real Debian libraries and
// on damaged copies.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "protocol/code_object/code_object.h"

namespace hipr::co {
namespace {

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

bool Has(const std::vector<std::string>& list, const std::string& name) {
  for (const std::string& s : list)
    if (s == name) return true;
  return false;
}

// The system's Debian HIP runtime: 5.2's on Debian 12 (6.4's in a sid root,
// where the project also builds), and its major; empty when there is none.
std::vector<uint8_t> SystemHipRuntime(int* major) {
  for (int m : {5, 6, 7}) {
    std::vector<uint8_t> file = ReadFile("/usr/lib/x86_64-linux-gnu/libamdhip64.so." + std::to_string(m));
    *major = m;
    if (!file.empty()) return file;
  }
  return {};
}

// SONAME libamdhip64.so.N, version nodes hip_4.2 up to its own major's.
TEST(SharedObjectTest, DebianHipRuntime) {
  int major = 0;
  std::vector<uint8_t> file = SystemHipRuntime(&major);
  ASSERT_GT(file.size(), 4096u) << "Debian's libamdhip64-dev is installed by deploy/hipr-dev";
  const std::string soname = "libamdhip64.so." + std::to_string(major);
  SharedObjectIdentity id;
  ASSERT_TRUE(ReadSharedObjectIdentity(file, &id).ok());
  EXPECT_EQ(id.soname, soname);
  EXPECT_TRUE(Has(id.version_definitions, "hip_4.2"));
  EXPECT_TRUE(Has(id.version_definitions, major == 5 ? "hip_5.2" : "hip_" + std::to_string(major) + ".0"));
  EXPECT_FALSE(Has(id.version_definitions, soname)) << "the base entry is the file's name";
  EXPECT_FALSE(Has(id.version_definitions, "hip_" + std::to_string(major + 1) + ".0"));
}

TEST(SharedObjectTest, Libc) {
  std::vector<uint8_t> file = ReadFile("/lib/x86_64-linux-gnu/libc.so.6");
  SharedObjectIdentity id;
  ASSERT_TRUE(ReadSharedObjectIdentity(file, &id).ok());
  EXPECT_EQ(id.soname, "libc.so.6");
  EXPECT_TRUE(Has(id.version_definitions, "GLIBC_2.2.5"));
  EXPECT_TRUE(Has(id.version_definitions, "GLIBC_2.34"));
}

// Every truncation and every single-byte corruption of the headers either
// parses or is refused; none crashes (ASan/valgrind catch reads past the end).
TEST(SharedObjectTest, DamagedCopiesAreRefusedOrParsed) {
  int major = 0;
  std::vector<uint8_t> file = SystemHipRuntime(&major);
  ASSERT_GT(file.size(), 4096u);
  SharedObjectIdentity id;
  for (size_t cut : {size_t{0}, size_t{16}, size_t{63}, size_t{64}, file.size() / 2, file.size() - 1}) {
    std::vector<uint8_t> part(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_FALSE(ReadSharedObjectIdentity(part, &id).ok()) << "cut at " << cut;
  }
  for (size_t at = 0; at < 64; ++at) {
    std::vector<uint8_t> bad = file;
    bad[at] ^= 0xff;
    (void)ReadSharedObjectIdentity(bad, &id);
  }
  std::vector<uint8_t> text(4096, 'x');
  EXPECT_FALSE(ReadSharedObjectIdentity(text, &id).ok());
}

// ReadDynamicInfo against what readelf shows for Debian's HIP runtime: its
// SONAME, a DT_NEEDED, a defined function at its node and an undefined one
// required from libc at its version.
TEST(DynamicInfoTest, DebianHipRuntime) {
  int major = 0;
  std::vector<uint8_t> file = SystemHipRuntime(&major);
  ASSERT_GT(file.size(), 4096u) << "Debian's libamdhip64-dev is installed by deploy/hipr-dev";
  DynamicInfo info;
  ASSERT_TRUE(ReadDynamicInfo(file, &info).ok());
  EXPECT_EQ(info.soname, "libamdhip64.so." + std::to_string(major));
  EXPECT_NE(std::find(info.needed.begin(), info.needed.end(), "libc.so.6"), info.needed.end());
  auto find = [&](const std::string& name, bool defined) -> const DynamicSymbol* {
    for (const DynamicSymbol& s : info.symbols)
      if (s.name == name && s.defined == defined) return &s;
    return nullptr;
  };
  const DynamicSymbol* malloc_def = find("hipMalloc", true);
  ASSERT_NE(malloc_def, nullptr);
  EXPECT_EQ(malloc_def->version, "hip_4.2");
  EXPECT_TRUE(malloc_def->version_file.empty());
  const DynamicSymbol* memcpy_ref = find("memcpy", false);
  ASSERT_NE(memcpy_ref, nullptr);
  EXPECT_TRUE(memcpy_ref->version.starts_with("GLIBC_2.")) << memcpy_ref->version;
  EXPECT_EQ(memcpy_ref->version_file, "libc.so.6");
}

// Damaged copies are refused or parsed, never read past their end.
TEST(DynamicInfoTest, DamagedCopiesAreRefusedOrParsed) {
  int major = 0;
  std::vector<uint8_t> file = SystemHipRuntime(&major);
  ASSERT_GT(file.size(), 4096u);  // A cut at size - 1 of an empty file would wrap.
  DynamicInfo info;
  for (size_t cut : {size_t{0}, size_t{64}, file.size() / 2, file.size() - 1}) {
    std::vector<uint8_t> part(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(cut));
    EXPECT_FALSE(ReadDynamicInfo(part, &info).ok()) << "cut at " << cut;
  }
  for (size_t at = 0; at < 64; ++at) {
    std::vector<uint8_t> bad = file;
    bad[at] ^= 0xff;
    (void)ReadDynamicInfo(bad, &info);
  }
}

}  // namespace
}  // namespace hipr::co
