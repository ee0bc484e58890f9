// The code-object cache's bookkeeping for /metrics (code_cache.h): failed
// writes counted in the ledger, and the bytes a directory holds.
#include "worker_service/code_cache.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "worker_service/ledger.h"

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

}  // namespace
}  // namespace hipr::worker
