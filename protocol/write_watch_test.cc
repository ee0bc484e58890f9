#include "protocol/write_watch.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace hipr {
namespace {

using Runs = std::vector<WriteWatch::Run>;

class WriteWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    watch_ = WriteWatch::Open(&why);
    if (watch_ == nullptr) GTEST_SKIP() << "this kernel offers no asynchronous write protection: " << why;
    page_ = WriteWatch::PageSize();
  }
  uint8_t* Map(size_t pages) {
    void* p = mmap(nullptr, pages * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    maps_.emplace_back(p, pages * page_);
    return static_cast<uint8_t*>(p);
  }
  void TearDown() override {
    for (auto [p, n] : maps_) munmap(p, n);
  }
  Runs Take(const uint8_t* base, size_t size) {
    Runs runs;
    Status st = watch_->TakeWritten(base, size, &runs);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return runs;
  }

  std::unique_ptr<WriteWatch> watch_;
  size_t page_ = 0;
  std::vector<std::pair<void*, size_t>> maps_;
};

TEST_F(WriteWatchTest, ReportsEachWrittenPageOnceWhoeverWrites) {
  uint8_t* p = Map(64);
  p[5 * page_] = 1;  // Populated before the watch: still starts clean.
  ASSERT_TRUE(watch_->Watch(p, 64 * page_).ok());
  EXPECT_EQ(Take(p, 64 * page_), Runs{});
  p[0] = 1;
  p[3 * page_ + 17] = 2;
  *static_cast<volatile uint8_t*>(&p[4 * page_]) = p[4 * page_];  // Same value: still a write.
  p[63 * page_ + page_ - 1] = 3;
  // A write by the kernel on this process's behalf.
  const int zero = open("/dev/zero", O_RDONLY);
  ASSERT_GE(zero, 0);
  ASSERT_EQ(read(zero, p + 10 * page_ + 8, 64), 64);
  close(zero);
  const Runs want{{0, page_}, {3 * page_, 2 * page_}, {10 * page_, page_}, {63 * page_, page_}};
  EXPECT_EQ(Take(p, 64 * page_), want);
  EXPECT_EQ(Take(p, 64 * page_), Runs{}) << "taking makes the pages clean again";
  p[7 * page_] = 1;
  EXPECT_EQ(Take(p, 64 * page_), (Runs{{7 * page_, page_}}));
}

TEST_F(WriteWatchTest, ClipsToTheSizeAndAsksAboutPartOfARange) {
  uint8_t* p = Map(8);
  ASSERT_TRUE(watch_->Watch(p, 8 * page_).ok());
  p[7 * page_ + 5] = 1;
  p[page_] = 1;
  // Seven pages and 100 bytes: the last run ends at the size.
  EXPECT_EQ(Take(p, 7 * page_ + 100), (Runs{{page_, page_}, {7 * page_, 100}}));
  p[2 * page_] = 1;
  p[6 * page_] = 1;
  EXPECT_EQ(Take(p + 2 * page_, 2 * page_), (Runs{{0, page_}})) << "page 6 lies outside and stays written";
  EXPECT_EQ(Take(p, 8 * page_), (Runs{{6 * page_, page_}}));
}

TEST_F(WriteWatchTest, ReportsMoreRunsThanOneScanHolds) {
  constexpr size_t kPages = 1200;
  uint8_t* p = Map(kPages);
  ASSERT_TRUE(watch_->Watch(p, kPages * page_).ok());
  Runs want;
  for (size_t i = 0; i < kPages; i += 2) {
    p[i * page_] = 1;
    want.emplace_back(i * page_, page_);
  }
  EXPECT_EQ(Take(p, kPages * page_), want);
}

TEST_F(WriteWatchTest, FailsWhereItCannotTell) {
  uint8_t* p = Map(4);
  Runs runs{{1, 2}};
  EXPECT_FALSE(watch_->TakeWritten(p, 4 * page_, &runs).ok()) << "never watched";
  EXPECT_TRUE(runs.empty());
  ASSERT_TRUE(watch_->Watch(p, 4 * page_).ok());
  // Mapped over: the new pages are not watched.
  ASSERT_NE(mmap(p + page_, page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            MAP_FAILED);
  EXPECT_FALSE(watch_->TakeWritten(p, 4 * page_, &runs).ok());
  EXPECT_TRUE(watch_->TakeWritten(p + 2 * page_, 2 * page_, &runs).ok()) << "the rest still is";
  EXPECT_FALSE(watch_->TakeWritten(p + 1, page_, &runs).ok()) << "not page-aligned";
}

TEST_F(WriteWatchTest, AForkedChildCannotAsk) {
  uint8_t* p = Map(2);
  ASSERT_TRUE(watch_->Watch(p, 2 * page_).ok());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    p[0] = 1;
    Runs runs;
    _exit(watch_->TakeWritten(p, 2 * page_, &runs).ok() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child must be told it cannot ask";
  EXPECT_EQ(Take(p, 2 * page_), Runs{}) << "the child's write is its own";
}

}  // namespace
}  // namespace hipr
