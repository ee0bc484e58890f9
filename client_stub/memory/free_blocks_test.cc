#include "client_stub/memory/free_blocks.h"

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

TEST(FreeBlocks, AKeptBlockIsReusedOnlyAfterASynchronisationThatFollowedItsFree) {
  FreeBlocks blocks(1 << 20);
  KeptBlock got;
  ASSERT_TRUE(blocks.Keep(0, KeptBlock{0x10000, 4096, 0}));
  EXPECT_FALSE(blocks.Take(0, 4096, &got)) << "work queued before the free may still use it";
  // A synchronisation sent before the free settles nothing.
  const uint64_t early = blocks.BeginSync(0);
  ASSERT_TRUE(blocks.Keep(0, KeptBlock{0x20000, 4096, 0}));
  const uint64_t late = blocks.BeginSync(0);
  blocks.EndSync(0, early);
  ASSERT_TRUE(blocks.Take(0, 4096, &got));
  EXPECT_EQ(got.base, 0x10000u);
  EXPECT_FALSE(blocks.Take(0, 4096, &got)) << "the second was freed after that synchronisation was sent";
  blocks.EndSync(0, late);
  ASSERT_TRUE(blocks.Take(0, 4096, &got));
  EXPECT_EQ(got.base, 0x20000u);
  EXPECT_FALSE(blocks.Take(0, 4096, &got)) << "each block is handed out once";
}

TEST(FreeBlocks, OnlyTheSameSizeOnTheSameDevice) {
  FreeBlocks blocks(1 << 20);
  ASSERT_TRUE(blocks.Keep(1, KeptBlock{0x10000, 8192, 1}));
  blocks.EndSync(1, blocks.BeginSync(1));
  KeptBlock got;
  EXPECT_FALSE(blocks.Take(1, 4096, &got));
  EXPECT_FALSE(blocks.Take(0, 8192, &got));
  blocks.EndSync(0, blocks.BeginSync(0));
  EXPECT_FALSE(blocks.Take(0, 8192, &got)) << "device 0's synchronisation settles nothing of device 1";
  EXPECT_TRUE(blocks.Take(1, 8192, &got));
}

TEST(FreeBlocks, KeepsAtMostTheLimitPerDevice) {
  FreeBlocks blocks(10000);
  EXPECT_TRUE(blocks.Keep(0, KeptBlock{0x10000, 6000, 0}));
  EXPECT_FALSE(blocks.Keep(0, KeptBlock{0x20000, 6000, 0})) << "over the limit";
  EXPECT_TRUE(blocks.Keep(1, KeptBlock{0x30000, 6000, 1})) << "each device has its own";
  EXPECT_FALSE(blocks.Keep(0, KeptBlock{0x40000, 20000, 0})) << "larger than the limit";
  FreeBlocks none(0);
  EXPECT_FALSE(none.Keep(0, KeptBlock{0x10000, 1, 0})) << "a limit of 0 keeps nothing";
}

TEST(FreeBlocks, TakeAllGivesEveryBlockBackAndFreesTheLimit) {
  FreeBlocks blocks(10000);
  ASSERT_TRUE(blocks.Keep(0, KeptBlock{0x10000, 6000, 0}));
  ASSERT_TRUE(blocks.Keep(1, KeptBlock{0x20000, 100, 1}));
  std::vector<KeptBlock> all = blocks.TakeAll(0);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].base, 0x10000u);
  EXPECT_TRUE(blocks.Keep(0, KeptBlock{0x30000, 6000, 0})) << "room again";
  EXPECT_EQ(blocks.TakeAll(-1).size(), 2u);
  KeptBlock got;
  blocks.EndSync(0, blocks.BeginSync(0));
  EXPECT_FALSE(blocks.Take(0, 6000, &got));
}

TEST(FreeBlocks, AForkedChildKeepsNothing) {
  FreeBlocks blocks(1 << 20);
  ASSERT_TRUE(blocks.Keep(0, KeptBlock{0x10000, 4096, 0}));
  blocks.LockForFork();
  blocks.ResetInChild();
  KeptBlock got;
  blocks.EndSync(0, blocks.BeginSync(0));
  EXPECT_FALSE(blocks.Take(0, 4096, &got)) << "the parent session's blocks";
  EXPECT_FALSE(blocks.Keep(0, KeptBlock{0x20000, 4096, 0}));
}

}  // namespace
}  // namespace hipr::client
