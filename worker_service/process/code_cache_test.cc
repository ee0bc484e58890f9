// The code-object cache's bookkeeping for /metrics (code_cache.h): failed
// writes counted in the ledger, and the bytes a directory holds.
#include "worker_service/process/code_cache.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "worker_service/process/ledger.h"

namespace hipr::worker {
namespace {

namespace fs = std::filesystem;

class CodeCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/hipr-code-cache-test-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    ASSERT_TRUE(Ledger::Create(4, 0, &ledger_).ok());
  }
  void TearDown() override { fs::remove_all(root_); }

  uint64_t Failures() const { return ledger_->Counted(Ledger::kCodeCacheWriteFailures); }

  std::string root_;
  std::unique_ptr<Ledger> ledger_;
};

std::vector<uint8_t> Code(size_t n, uint8_t fill) { return std::vector<uint8_t>(n, fill); }

TEST_F(CodeCacheTest, StoredObjectsAreCountedInBytesNotAsFailures) {
  const std::string dir = root_ + "/cache";
  EXPECT_EQ(CodeCacheBytes(dir), 0u) << "a directory not made yet holds nothing";
  CodeCache cache(dir, 1 << 20);
  cache.set_ledger(ledger_.get());
  const std::vector<uint8_t> a = Code(1000, 1), b = Code(3000, 2);
  cache.Put(co::Sha256(a), a);
  cache.Put(co::Sha256(b), b);
  cache.Put(co::Sha256(Code(2 << 20, 3)), Code(2 << 20, 3));  // Over the bound: not stored, not a failure.
  std::ofstream(dir + "/stray.txt") << "not a code object";
  EXPECT_EQ(CodeCacheBytes(dir), 4000u);
  EXPECT_EQ(Failures(), 0u);
  std::vector<uint8_t> got;
  EXPECT_TRUE(cache.Get(co::Sha256(b), &got));
  EXPECT_EQ(got, b);
  EXPECT_EQ(CodeCacheBytes(""), 0u);
}

TEST_F(CodeCacheTest, WritesToAnUnusableDirectoryAreCounted) {
  // A path below a regular file can never be a directory (even for root).
  std::ofstream(root_ + "/file") << "x";
  CodeCache cache(root_ + "/file/cache", 1 << 20);
  cache.set_ledger(ledger_.get());
  const std::vector<uint8_t> a = Code(100, 1), b = Code(200, 2);
  cache.Put(co::Sha256(a), a);
  cache.Put(co::Sha256(b), b);
  EXPECT_EQ(Failures(), 2u) << "each code object the cache could not keep";
  EXPECT_EQ(CodeCacheBytes(root_ + "/file/cache"), 0u);

  CodeCache no_disk("", 1 << 20);  // --code-cache '': memory only, by choice.
  no_disk.set_ledger(ledger_.get());
  no_disk.Put(co::Sha256(a), a);
  CodeCache no_ledger(root_ + "/file/cache", 1 << 20);
  no_ledger.Put(co::Sha256(a), a);
  EXPECT_EQ(Failures(), 2u);
}

// A tenant's session sees only its own part: a hash alone never finds
// another tenant's code object.
TEST_F(CodeCacheTest, ATenantNeverFindsAnotherTenantsCodeObjects) {
  const std::string dir = root_ + "/cache";
  CodeCache a(dir, 1 << 20), b(dir, 1 << 20), none(dir, 1 << 20);
  a.set_tenant("team-a");
  b.set_tenant("team-b");
  const std::vector<uint8_t> code = Code(1000, 7);
  a.Put(co::Sha256(code), code);
  std::vector<uint8_t> got;
  EXPECT_TRUE(a.Get(co::Sha256(code), &got));
  EXPECT_FALSE(b.Get(co::Sha256(code), &got)) << "team-b found team-a's code object by its hash";
  EXPECT_FALSE(none.Get(co::Sha256(code), &got)) << "a session without a tenant found a tenant's code object";
  CodeCache a_again(dir, 1 << 20);
  a_again.set_tenant("team-a");
  EXPECT_TRUE(a_again.Get(co::Sha256(code), &got)) << "another session of team-a";
  b.Put(co::Sha256(code), code);
  EXPECT_EQ(CodeCacheBytes(dir), 2000u) << "each tenant's copy is counted";
  const std::vector<CodeCachePart> parts = CodeCacheParts(dir);
  ASSERT_EQ(parts.size(), 2u);
  for (const CodeCachePart& p : parts) {
    EXPECT_TRUE(p.tenant == "team-a" || p.tenant == "team-b") << p.tenant;
    EXPECT_EQ(p.bytes, 1000u);
  }
}

// One tenant may take a quarter of the bound; the whole cache stays within it.
TEST_F(CodeCacheTest, OneTenantCannotFlushTheOthers) {
  const std::string dir = root_ + "/cache";
  CodeCache quiet(dir, 40000), noisy(dir, 40000);
  quiet.set_tenant("quiet");
  noisy.set_tenant("noisy");
  const std::vector<uint8_t> keep = Code(8000, 1);
  quiet.Put(co::Sha256(keep), keep);
  for (int i = 0; i < 20; ++i) {
    const std::vector<uint8_t> c = Code(4000, static_cast<uint8_t>(10 + i));
    noisy.Put(co::Sha256(c), c);
  }
  std::vector<uint8_t> got;
  EXPECT_TRUE(quiet.Get(co::Sha256(keep), &got)) << "a noisy tenant flushed another's code object";
  EXPECT_LE(CodeCacheBytes(dir), 40000u);
  for (const CodeCachePart& p : CodeCacheParts(dir)) {
    if (p.tenant == "noisy") {
      EXPECT_LE(p.bytes, 10000u) << "past its quarter";
    }
  }
}

TEST_F(CodeCacheTest, TheDefaultBoundFollowsTheFilesystem) {
  std::string why;
  const uint64_t bound = DefaultCodeCacheBytes(root_ + "/not/made/yet", &why);
  EXPECT_GE(bound, uint64_t{256} << 20) << why;
  EXPECT_LE(bound, uint64_t{8} << 30) << why;
  EXPECT_NE(why.find(root_), std::string::npos) << "the nearest existing directory is measured: " << why;
}

}  // namespace
}  // namespace hipr::worker
