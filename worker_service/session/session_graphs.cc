// Session: executable graphs (kGraphCreate, kGraphLaunch, kGraphDestroy).
//
// The client captures and instantiates graphs itself and sends each
// executable graph once, as the requests of its nodes in an order their
// edges allow. A launch replays those nodes on the launch's stream through
// the same paths their own ops take (Launch, Memset, CopyOnDevice,
// AddHostCallback, EventRecord, StreamWaitEvent, StreamWaitValue,
// StreamWriteValue), so a graph costs one frame per launch and the device
// sees the work in a valid order. Where the client sent the graph's edges,
// independent branches run concurrently on streams of the session's own
// (graph_plan.h says how nodes are spread and ordered); without edges, or
// for a chain, every node runs on the launch's stream in turn.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <type_traits>
#include <utility>
#include <variant>

#include "worker_service/session/session.h"

namespace hipr::worker {
namespace {

using wire::Op;

// Nodes over every graph of a session, per graph allowed (--max-graphs-per-session).
constexpr size_t kMaxNodesPerGraph = 64;

// Ids of the streams and events a launch's branches run on: never ids a
// client makes (its count up from 1, its fence events from 2^62).
constexpr uint64_t kBranchIdBase = uint64_t{1} << 63;
constexpr uint32_t kNonBlocking = 1;       // hipStreamNonBlocking.
constexpr uint32_t kDisableTiming = 2;     // hipEventDisableTiming.

// A node that does not decode is a bad argument of this call (the frame
// itself was fine): the session goes on.
template <class T>
Status DecodeNode(const msg::GraphNode& n, T* out) {
  Status st = codec::DecodeBody(n.body.data(), n.body.size(), out);
  return st.ok() ? st : InvalidArgument(st.message());
}

// What a node must say beyond its op's own checks.
Status CheckNode(msg::LaunchRequest& r) {
  return r.kernel.empty() ? InvalidArgument("a kernel node must name its kernel") : Status::Ok();
}
Status CheckNode(msg::StreamWaitEventRequest& r) {
  return r.flags != 0 ? InvalidArgument("an event wait node takes no flags") : Status::Ok();
}
Status CheckNode(msg::CopyOnDeviceRequest& r) {
  r.want_reply = false;
  return Status::Ok();
}
template <class T>
Status CheckNode(T&) {
  return Status::Ok();
}

// The node as the request of `op`; a host node's body is not read (the
// launch names its callback).
template <Op op, class Node>
Status DecodeNodeAs(const msg::GraphNode& n, Node* out) {
  ops::Request<op> r;
  if constexpr (op != Op::kStreamHostCallback) HIPR_RETURN_IF_ERROR(DecodeNode(n, &r));
  Status st = CheckNode(r);
  *out = std::move(r);
  return st;
}

// Decodes `n` as whichever graph-node op it names.
template <class Node, size_t... I>
Status DecodeAnyNode(const msg::GraphNode& n, Node* out, std::index_sequence<I...>) {
  Status st = InvalidArgument("op " + std::to_string(n.op) + " cannot be a graph node");
  (void)((n.op == static_cast<uint16_t>(ops::kGraphNodeOps[I])
              ? (st = DecodeNodeAs<ops::kGraphNodeOps[I]>(n, out), true)
              : false) ||
         ...);
  return st;
}

// A node's request aimed at the launch's device and stream.
template <class T>
void Retarget(T& r, int32_t device, uint64_t stream) {
  if constexpr (requires { r.device; }) r.device = device;
  if constexpr (requires { r.stream; }) r.stream = stream;
}

}  // namespace

Status Session::CreateGraph(msg::GraphCreateRequest m) {
  auto existing = graphs_.find(m.graph);
  if (m.append ? existing == graphs_.end() : existing != graphs_.end())
    return InvalidArgument("graph id " + std::to_string(m.graph) + (m.append ? " does not exist" : " is in use"));
  if (!m.append && graphs_.size() >= static_cast<size_t>(config_.max_graphs_per_session))
    return OverLimit("graphs", graphs_.size(), config_.max_graphs_per_session, "--max-graphs-per-session");
  const size_t max_nodes = kMaxNodesPerGraph * static_cast<size_t>(config_.max_graphs_per_session);
  if (graph_nodes_ + m.nodes.size() > max_nodes)
    return OverLimit("graph nodes", graph_nodes_, static_cast<int>(std::min<size_t>(max_nodes, INT32_MAX)),
                     "64 x --max-graphs-per-session");
  if (m.append && existing->second.device != m.device)
    return InvalidArgument("graph " + std::to_string(m.graph) + " continued for another device");
  if (m.append && existing->second.has_deps != m.has_deps)
    return InvalidArgument("graph " + std::to_string(m.graph) + " continued with" + (m.has_deps ? "" : "out") +
                           " its edges");
  const size_t first = m.append ? existing->second.nodes.size() : 0;  // The first node's index in the graph.
  Graph g;
  g.device = m.device;
  g.has_deps = m.has_deps;
  g.nodes.reserve(m.nodes.size());
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const msg::GraphNode& n = m.nodes[i];
    GraphNodeOp node;
    Status st = DecodeAnyNode(n, &node, std::make_index_sequence<ops::kGraphNodeCount>{});
    for (uint32_t dep : m.has_deps ? n.deps : std::vector<uint32_t>{})
      if (st.ok() && dep >= first + i) st = InvalidArgument("depends on node " + std::to_string(dep) + ", not before it");
    if (!st.ok())
      return Status(st.code(), "graph " + std::to_string(m.graph) + " node " + std::to_string(first + i) + ": " +
                                   st.message());
    if (std::holds_alternative<msg::StreamHostCallbackRequest>(node)) ++g.host_nodes;
    g.nodes.push_back(std::move(node));
    if (m.has_deps) g.deps.push_back(n.deps);
  }
  graph_nodes_ += g.nodes.size();
  if (m.append) {
    Graph& into = existing->second;
    std::move(g.nodes.begin(), g.nodes.end(), std::back_inserter(into.nodes));
    std::move(g.deps.begin(), g.deps.end(), std::back_inserter(into.deps));
    into.host_nodes += g.host_nodes;
    ReleaseBranches(into);
    into.planned = false;
    return Status::Ok();
  }
  spdlog::debug("session {}: graph {} with {} nodes ({} host nodes)", id_, m.graph, g.nodes.size(), g.host_nodes);
  graphs_.emplace(m.graph, std::move(g));
  return Status::Ok();
}

Status Session::LaunchGraph(const msg::GraphLaunchRequest& m) {
  auto it = graphs_.find(m.graph);
  if (it == graphs_.end()) return Status(StatusCode::kInvalidHandle, "no graph " + std::to_string(m.graph));
  Graph& g = it->second;
  if (m.callbacks.size() != g.host_nodes)
    return InvalidArgument("graph " + std::to_string(m.graph) + " has " + std::to_string(g.host_nodes) +
                           " host nodes; the launch named " + std::to_string(m.callbacks.size()) + " callbacks");
  if (m.device != g.device)
    return InvalidArgument("graph " + std::to_string(m.graph) + " was made for device " + std::to_string(g.device));
  // After a node fails, the rest of the device work is skipped (its error is
  // the launch's), but host nodes are still put in stream order: the client
  // waits for each of them.
  Status first;
  size_t callback = 0;
  const bool branches = g.has_deps && PrepareBranches(g);
  auto keep = [&](Status st) {
    if (!st.ok() && first.ok()) first = std::move(st);
  };
  // The event waits and records of the branches go through the paths their
  // own ops take, as the nodes do.
  auto wait = [&](uint64_t stream, uint64_t event) { keep(Replay(msg::StreamWaitEventRequest{stream, event, 0, m.device})); };
  auto lane_stream = [&](size_t i) { return g.plan.lane[i] == 0 ? m.stream : g.lane_streams[g.plan.lane[i] - 1]; };
  if (branches && g.fork_event != 0) keep(Replay(msg::EventRecordRequest{g.fork_event, m.stream}));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNodeOp& node = g.nodes[i];
    const uint64_t stream = branches ? lane_stream(i) : m.stream;
    if (branches) {
      if (g.plan.fork_wait[i]) wait(stream, g.fork_event);
      for (uint32_t w : g.plan.waits[i]) wait(stream, g.node_events[w]);
    }
    const bool host = std::holds_alternative<msg::StreamHostCallbackRequest>(node);
    if (first.ok() || host) {
      keep(std::visit(
          [&](const auto& n) {
            auto r = n;
            Retarget(r, m.device, stream);
            if constexpr (std::is_same_v<decltype(r), msg::StreamHostCallbackRequest>) r.callback = m.callbacks[callback++];
            return Replay(std::move(r));
          },
          node));
    }
    if (branches && g.plan.record_after[i]) keep(Replay(msg::EventRecordRequest{g.node_events[i], stream}));
  }
  if (branches)
    for (uint32_t j : g.plan.joins) wait(m.stream, g.node_events[j]);
  return first;
}

bool Session::PrepareBranches(Graph& g) {
  if (!g.planned) {
    g.plan = GraphPlan::Make(g.deps);
    g.planned = true;
  }
  if (g.plan.lanes == 1) return false;  // A chain: the serial replay is the plan.
  if (!g.lane_streams.empty()) return true;
  // The lanes' streams count against the session's limits as the client's do.
  Status st;
  for (int l = 1; st.ok() && l < g.plan.lanes; ++l) {
    const uint64_t id = kBranchIdBase + ++next_hidden_id_;
    if (streams_.size() >= static_cast<size_t>(config_.max_streams_per_session))
      st = OverLimit("streams", streams_.size(), config_.max_streams_per_session, "--max-streams-per-session");
    else if (ledger_ != nullptr)
      st = ledger_->TakeStream(slot_, config_.max_streams);
    if (!st.ok()) break;
    st = device_->StreamCreate(g.device, id, kNonBlocking, 0, {});
    if (!st.ok()) {
      if (ledger_ != nullptr) ledger_->ReturnStream(slot_);
      break;
    }
    streams_[id] = g.device;
    g.lane_streams.push_back(id);
  }
  auto make_event = [&](uint64_t* out) {
    const uint64_t id = kBranchIdBase + ++next_hidden_id_;
    if (events_.size() >= static_cast<size_t>(config_.max_events_per_session))
      return OverLimit("events", events_.size(), config_.max_events_per_session, "--max-events-per-session");
    HIPR_RETURN_IF_ERROR(device_->EventCreate(g.device, id, kDisableTiming));
    events_[id] = g.device;
    *out = id;
    return Status::Ok();
  };
  g.node_events.assign(g.nodes.size(), 0);
  for (size_t i = 0; st.ok() && i < g.nodes.size(); ++i)
    if (g.plan.record_after[i]) st = make_event(&g.node_events[i]);
  if (st.ok() && std::find(g.plan.fork_wait.begin(), g.plan.fork_wait.end(), true) != g.plan.fork_wait.end())
    st = make_event(&g.fork_event);
  if (!st.ok()) {
    spdlog::info("session {}: a graph's independent branches run one after another: {}", id_, st.ToString());
    ReleaseBranches(g);
    g.has_deps = false;  // Not tried again.
    return false;
  }
  spdlog::debug("session {}: a graph of {} nodes runs on {} streams", id_, g.nodes.size(), g.plan.lanes);
  return true;
}

void Session::ReleaseBranches(Graph& g, bool on_device) {
  for (uint64_t s : g.lane_streams) {
    if (streams_.erase(s) == 0) continue;
    if (on_device) (void)device_->StreamDestroy(s);
    if (ledger_ != nullptr) ledger_->ReturnStream(slot_);
  }
  g.node_events.push_back(g.fork_event);
  for (uint64_t e : g.node_events)
    if (e != 0 && events_.erase(e) != 0 && on_device) (void)device_->EventDestroy(e);
  g.lane_streams.clear();
  g.node_events.clear();
  g.fork_event = 0;
}

Status Session::DestroyGraph(uint64_t graph) {
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Status(StatusCode::kInvalidHandle, "no graph " + std::to_string(graph) + " to destroy");
  graph_nodes_ -= it->second.nodes.size();
  ReleaseBranches(it->second);
  graphs_.erase(it);
  return Status::Ok();
}

}  // namespace hipr::worker
