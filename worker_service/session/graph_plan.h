// GraphPlan: how a graph launch spreads independent branches over streams.
//
// The client sends an executable graph's nodes in an order their edges
// allow, with each node's dependencies (msg::GraphNode::deps). A launch
// runs on the launch's stream (lane 0) and up to kMaxLanes - 1 streams of
// the session's own (lanes 1...), so that branches that do not depend on
// each other run concurrently, as on a GPU. A node continues the lane of a
// dependency that is that lane's last node so far (a chain stays on one
// stream and needs no event); otherwise it starts a new lane while there
// are lanes left, or joins its first dependency's lane. It waits for each
// dependency on another lane through an event recorded right after that
// dependency; a new lane's first node without dependencies waits for the
// launch's start (the fork event, recorded on the launch stream before any
// node); and the launch stream waits, after the last node, for the last
// node of every other lane (the join). A chain, or a graph without edges,
// plans to lane 0 alone: exactly the serial replay.
#pragma once

#include <cstdint>
#include <vector>

namespace hipr::worker {

struct GraphPlan {
  static constexpr int kMaxLanes = 4;

  int lanes = 1;
  std::vector<uint8_t> lane;                 // Per node.
  std::vector<std::vector<uint32_t>> waits;  // Per node: nodes on other lanes whose events it waits for.
  std::vector<bool> fork_wait;               // Per node: waits for the fork event first.
  std::vector<bool> record_after;            // Per node: its event is recorded right after it.
  std::vector<uint32_t> joins;               // Last node of each lane but 0; the launch stream waits for each.

  // Plans nodes whose dependencies are `deps` (each index below the node's
  // own: the caller checked).
  static GraphPlan Make(const std::vector<std::vector<uint32_t>>& deps);
};

}  // namespace hipr::worker
