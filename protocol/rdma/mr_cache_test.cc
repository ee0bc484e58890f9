// MrCache on the verbs double: hits, misses, merging and invalidation.
#include "protocol/rdma/mr_cache.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

#include "protocol/rdma/verbs_double/verbs_double.h"

namespace hipr::rdma {
namespace {

class MrCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    ASSERT_EQ(n, 1);
    ctx_ = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    ASSERT_NE(ctx_, nullptr);
    pd_ = ibv_alloc_pd(ctx_);
    ASSERT_NE(pd_, nullptr);
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    mem_ = static_cast<uint8_t*>(mmap(nullptr, 16 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(mem_, MAP_FAILED);
  }
  void TearDown() override {
    cache_.reset();  // Deregisters what it holds, so the PD can go.
    EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
    EXPECT_EQ(ibv_close_device(ctx_), 0);
    munmap(mem_, 16 * page_);
  }

  verbs_double::Fabric fabric_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  size_t page_ = 0;
  uint8_t* mem_ = nullptr;
  std::unique_ptr<MrCache> cache_;
};

TEST_F(MrCacheTest, HitsWithinARegionAndMissesOutside) {
  cache_ = std::make_unique<MrCache>(pd_, IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* first = nullptr;
  ASSERT_TRUE(cache_->Find(mem_ + 100, 1000, &first).ok());
  EXPECT_EQ(cache_->stats().misses, 1u);
  // Whole pages were registered: anything within them hits.
  ibv_mr* again = nullptr;
  ASSERT_TRUE(cache_->Find(mem_ + 8, page_ - 8, &again).ok());
  EXPECT_EQ(again, first);
  EXPECT_EQ(cache_->stats().hits, 1u);
  EXPECT_LE(reinterpret_cast<uint8_t*>(first->addr), mem_);
  // Past the region: a miss, merged with the first into one region.
  ibv_mr* wider = nullptr;
  ASSERT_TRUE(cache_->Find(mem_ + page_ / 2, 3 * page_, &wider).ok());
  EXPECT_EQ(cache_->stats().misses, 2u);
  EXPECT_EQ(cache_->stats().regions, 1u);
  EXPECT_LE(reinterpret_cast<uint8_t*>(wider->addr), mem_);
  EXPECT_GE(reinterpret_cast<uint8_t*>(wider->addr) + wider->length, mem_ + page_ / 2 + 3 * page_);
}

TEST_F(MrCacheTest, InvalidateDropsOverlappingRegionsOnly) {
  cache_ = std::make_unique<MrCache>(pd_, IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* a = nullptr;
  ibv_mr* b = nullptr;
  ASSERT_TRUE(cache_->Find(mem_, page_, &a).ok());
  ASSERT_TRUE(cache_->Find(mem_ + 8 * page_, page_, &b).ok());
  EXPECT_EQ(cache_->stats().regions, 2u);
  cache_->Invalidate(mem_ + 8 * page_ + 10, 1);
  EXPECT_EQ(cache_->stats().regions, 1u);
  EXPECT_EQ(cache_->stats().invalidations, 1u);
  ibv_mr* hit = nullptr;
  ASSERT_TRUE(cache_->Find(mem_, 10, &hit).ok());
  EXPECT_EQ(hit, a);
  ibv_mr* back = nullptr;
  ASSERT_TRUE(cache_->Find(mem_ + 8 * page_, page_, &back).ok());
  EXPECT_EQ(cache_->stats().misses, 3u) << "an invalidated range registers anew";
}

TEST_F(MrCacheTest, HeldRegionsOutliveInvalidationUntilReleased) {
  cache_ = std::make_unique<MrCache>(pd_, IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* held = nullptr;
  ASSERT_TRUE(cache_->Hold(mem_, 2 * page_, &held).ok());
  const uint32_t key = held->lkey;
  // Other memory in the same pages is forgotten: out of the cache, but
  // still registered for whoever holds it.
  cache_->Invalidate(mem_ + page_ + 8, 8);
  EXPECT_EQ(cache_->stats().regions, 0u);
  EXPECT_EQ(cache_->stats().invalidations, 1u);
  EXPECT_EQ(held->lkey, key);
  ibv_mr* fresh = nullptr;
  ASSERT_TRUE(cache_->Find(mem_, 2 * page_, &fresh).ok());
  EXPECT_EQ(cache_->stats().misses, 2u) << "a dropped region is registered anew";
  // A miss that merges with a held region leaves the hold alone too.
  ibv_mr* again = nullptr;
  ASSERT_TRUE(cache_->Hold(mem_, page_, &again).ok());
  ibv_mr* wider = nullptr;
  ASSERT_TRUE(cache_->Find(mem_ + page_, 4 * page_, &wider).ok());
  EXPECT_EQ(cache_->stats().regions, 1u);
  EXPECT_EQ(again->lkey, fresh->lkey);
  cache_->Release(again);
  cache_->Release(held);  // Deregistered now (the double would refuse a second dereg).
  EXPECT_EQ(cache_->stats().regions, 1u);
}

TEST_F(MrCacheTest, UnmappedMemoryIsAnError) {
  cache_ = std::make_unique<MrCache>(pd_, IBV_ACCESS_LOCAL_WRITE);
  ASSERT_EQ(munmap(mem_ + 12 * page_, 4 * page_), 0);
  ibv_mr* mr = nullptr;
  Status st = cache_->Find(mem_ + 11 * page_, 2 * page_, &mr);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_EQ(cache_->stats().regions, 0u);
  ASSERT_EQ(mmap(mem_ + 12 * page_, 4 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
            mem_ + 12 * page_);
}

}  // namespace
}  // namespace hipr::rdma
