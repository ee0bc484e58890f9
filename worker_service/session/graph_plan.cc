#include "worker_service/session/graph_plan.h"

#include <algorithm>

namespace hipr::worker {

GraphPlan GraphPlan::Make(const std::vector<std::vector<uint32_t>>& deps) {
  GraphPlan p;
  const size_t n = deps.size();
  p.lane.assign(n, 0);
  p.waits.assign(n, {});
  p.fork_wait.assign(n, false);
  p.record_after.assign(n, false);
  std::vector<int64_t> tail = {-1};  // Per lane: its last node so far.
  for (size_t i = 0; i < n; ++i) {
    const std::vector<uint32_t>& d = deps[i];
    int chosen = -1;
    for (uint32_t dep : d)
      if (tail[p.lane[dep]] == static_cast<int64_t>(dep)) {
        chosen = p.lane[dep];
        break;
      }
    if (chosen < 0) {
      if (d.empty() && tail[0] < 0) {
        chosen = 0;
      } else if (p.lanes < kMaxLanes) {
        chosen = p.lanes++;
        tail.push_back(-1);
        p.fork_wait[i] = d.empty();
      } else {
        chosen = d.empty() ? 0 : p.lane[d.front()];
      }
    }
    // One wait per other lane: for its latest dependency there (the lane
    // runs in order, so the earlier ones are done by then).
    std::vector<int64_t> latest(static_cast<size_t>(p.lanes), -1);
    for (uint32_t dep : d)
      if (p.lane[dep] != chosen) latest[p.lane[dep]] = std::max<int64_t>(latest[p.lane[dep]], dep);
    for (int64_t dep : latest) {
      if (dep < 0) continue;
      p.waits[i].push_back(static_cast<uint32_t>(dep));
      p.record_after[static_cast<size_t>(dep)] = true;
    }
    p.lane[i] = static_cast<uint8_t>(chosen);
    tail[static_cast<size_t>(chosen)] = static_cast<int64_t>(i);
  }
  for (int l = 1; l < p.lanes; ++l) {
    const int64_t t = tail[static_cast<size_t>(l)];
    if (t < 0) continue;
    p.joins.push_back(static_cast<uint32_t>(t));
    p.record_after[static_cast<size_t>(t)] = true;
  }
  return p;
}

}  // namespace hipr::worker
