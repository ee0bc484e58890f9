#include "worker_service/session/graph_plan.h"

#include <gtest/gtest.h>

namespace hipr::worker {
namespace {

using Deps = std::vector<std::vector<uint32_t>>;

TEST(GraphPlan, AChainStaysOnTheLaunchStream) {
  const GraphPlan p = GraphPlan::Make(Deps{{}, {0}, {1}, {2}});
  EXPECT_EQ(p.lanes, 1);
  EXPECT_EQ(p.lane, (std::vector<uint8_t>{0, 0, 0, 0}));
  EXPECT_TRUE(p.joins.empty());
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(p.waits[i].empty());
    EXPECT_FALSE(p.record_after[i]);
    EXPECT_FALSE(p.fork_wait[i]);
  }
}

TEST(GraphPlan, ForkAndJoin) {
  // 0 -> {1, 2, 3} -> 4
  const GraphPlan p = GraphPlan::Make(Deps{{}, {0}, {0}, {0}, {1, 2, 3}});
  EXPECT_EQ(p.lanes, 3);
  EXPECT_EQ(p.lane, (std::vector<uint8_t>{0, 0, 1, 2, 0}));
  EXPECT_EQ(p.waits[2], std::vector<uint32_t>{0});
  EXPECT_EQ(p.waits[3], std::vector<uint32_t>{0});
  EXPECT_EQ(p.waits[4], (std::vector<uint32_t>{2, 3}));
  EXPECT_TRUE(p.record_after[0]);
  EXPECT_FALSE(p.record_after[1]) << "node 4 follows it on its lane";
  EXPECT_EQ(p.joins, (std::vector<uint32_t>{2, 3}));
  EXPECT_FALSE(p.fork_wait[2]) << "it waits for node 0, after the launch's start";
}

TEST(GraphPlan, IndependentRootsWaitForTheLaunchStart) {
  const GraphPlan p = GraphPlan::Make(Deps{{}, {}, {}});
  EXPECT_EQ(p.lane, (std::vector<uint8_t>{0, 1, 2}));
  EXPECT_FALSE(p.fork_wait[0]);
  EXPECT_TRUE(p.fork_wait[1]);
  EXPECT_TRUE(p.fork_wait[2]);
  EXPECT_EQ(p.joins, (std::vector<uint32_t>{1, 2}));
}

TEST(GraphPlan, PastTheLastLaneBranchesShareOne) {
  Deps d = {{}};
  for (uint32_t i = 0; i < 6; ++i) d.push_back({0});
  const GraphPlan p = GraphPlan::Make(d);
  EXPECT_EQ(p.lanes, GraphPlan::kMaxLanes);
  // 1 continues lane 0; 2, 3, 4 open lanes 1-3; 5 and 6 go where node 0 is.
  EXPECT_EQ(p.lane, (std::vector<uint8_t>{0, 0, 1, 2, 3, 0, 0}));
  EXPECT_TRUE(p.waits[5].empty()) << "node 0 is earlier on its own lane";
  // Every edge is honoured: a dependency is earlier on the same lane or waited for.
  for (size_t i = 0; i < d.size(); ++i)
    for (uint32_t dep : d[i])
      if (p.lane[dep] != p.lane[i]) {
        bool waited = false;
        for (uint32_t w : p.waits[i]) waited |= p.lane[w] == p.lane[dep] && w >= dep;
        EXPECT_TRUE(waited) << "node " << i << " on " << dep;
      }
}

TEST(GraphPlan, OneWaitPerOtherLane) {
  // Two branches of two nodes each, then a node after all four.
  const GraphPlan p = GraphPlan::Make(Deps{{}, {}, {0}, {1}, {0, 1, 2, 3}});
  EXPECT_EQ(p.lane, (std::vector<uint8_t>{0, 1, 0, 1, 0}));
  EXPECT_EQ(p.waits[4], std::vector<uint32_t>{3}) << "node 1 is before 3 on lane 1";
}

}  // namespace
}  // namespace hipr::worker
