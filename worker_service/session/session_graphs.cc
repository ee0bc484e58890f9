// Session: executable graphs (kGraphCreate, kGraphLaunch, kGraphDestroy).
//
// The client captures and instantiates graphs itself and sends each
// executable graph once, as the requests of its nodes in an order their
// edges allow. A launch replays those nodes on the launch's stream through
// the same paths their own ops take (Launch, Memset, CopyOnDevice,
// AddHostCallback, EventRecord, StreamWaitEvent, StreamWaitValue,
// StreamWriteValue), so a graph costs one frame per launch and the device
// sees the work in a valid order. Independent branches run one after
// another on that stream: correct, not concurrent.
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
  Graph g;
  g.device = m.device;
  g.nodes.reserve(m.nodes.size());
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const msg::GraphNode& n = m.nodes[i];
    GraphNodeOp node;
    Status st = DecodeAnyNode(n, &node, std::make_index_sequence<ops::kGraphNodeCount>{});
    if (!st.ok())
      return Status(st.code(), "graph " + std::to_string(m.graph) + " node " + std::to_string(i) + ": " +
                                   st.message());
    if (std::holds_alternative<msg::StreamHostCallbackRequest>(node)) ++g.host_nodes;
    g.nodes.push_back(std::move(node));
  }
  graph_nodes_ += g.nodes.size();
  if (m.append) {
    Graph& into = existing->second;
    std::move(g.nodes.begin(), g.nodes.end(), std::back_inserter(into.nodes));
    into.host_nodes += g.host_nodes;
    return Status::Ok();
  }
  spdlog::debug("session {}: graph {} with {} nodes ({} host nodes)", id_, m.graph, g.nodes.size(), g.host_nodes);
  graphs_.emplace(m.graph, std::move(g));
  return Status::Ok();
}

Status Session::LaunchGraph(const msg::GraphLaunchRequest& m) {
  auto it = graphs_.find(m.graph);
  if (it == graphs_.end()) return Status(StatusCode::kInvalidHandle, "no graph " + std::to_string(m.graph));
  const Graph& g = it->second;
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
  for (const GraphNodeOp& node : g.nodes) {
    const bool host = std::holds_alternative<msg::StreamHostCallbackRequest>(node);
    if (!first.ok() && !host) continue;
    Status st = std::visit(
        [&](const auto& n) {
          auto r = n;
          Retarget(r, m.device, m.stream);
          if constexpr (std::is_same_v<decltype(r), msg::StreamHostCallbackRequest>) r.callback = m.callbacks[callback++];
          return Replay(std::move(r));
        },
        node);
    if (!st.ok() && first.ok()) first = st;
  }
  return first;
}

Status Session::DestroyGraph(uint64_t graph) {
  auto it = graphs_.find(graph);
  if (it == graphs_.end()) return Status(StatusCode::kInvalidHandle, "no graph " + std::to_string(graph) + " to destroy");
  graph_nodes_ -= it->second.nodes.size();
  graphs_.erase(it);
  return Status::Ok();
}

}  // namespace hipr::worker
