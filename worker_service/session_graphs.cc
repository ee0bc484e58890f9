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

#include "worker_service/session.h"

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
    Status st;
    switch (static_cast<Op>(n.op)) {
      case Op::kLaunchKernel: {
        msg::LaunchRequest r;
        st = DecodeNode(n, &r);
        if (st.ok() && r.kernel.empty()) st = InvalidArgument("a kernel node must name its kernel");
        g.nodes.emplace_back(std::move(r));
        break;
      }
      case Op::kMemset: {
        msg::MemsetRequest r;
        st = DecodeNode(n, &r);
        g.nodes.emplace_back(r);
        break;
      }
      case Op::kCopyOnDevice: {
        msg::CopyOnDeviceRequest r;
        st = DecodeNode(n, &r);
        r.want_reply = false;
        g.nodes.emplace_back(r);
        break;
      }
      case Op::kEventRecord: {
        msg::EventRecordRequest r;
        st = DecodeNode(n, &r);
        g.nodes.emplace_back(r);
        break;
      }
      case Op::kStreamWaitEvent: {
        msg::StreamWaitEventRequest r;
        st = DecodeNode(n, &r);
        if (st.ok() && r.flags != 0) st = InvalidArgument("an event wait node takes no flags");
        g.nodes.emplace_back(r);
        break;
      }
      case Op::kStreamWaitValue: {
        msg::StreamWaitValueRequest r;
        st = DecodeNode(n, &r);
        g.nodes.emplace_back(r);
        break;
      }
      case Op::kStreamWriteValue: {
        msg::StreamWriteValueRequest r;
        st = DecodeNode(n, &r);
        g.nodes.emplace_back(r);
        break;
      }
      case Op::kStreamHostCallback:
        g.nodes.emplace_back(HostNode{});
        ++g.host_nodes;
        break;
      default:
        st = InvalidArgument("op " + std::to_string(n.op) + " cannot be a graph node");
    }
    if (!st.ok())
      return Status(st.code(), "graph " + std::to_string(m.graph) + " node " + std::to_string(i) + ": " +
                                   st.message());
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
    Status st;
    if (std::holds_alternative<HostNode>(node)) {
      st = AddHostCallback(msg::StreamHostCallbackRequest{m.device, m.stream, m.callbacks[callback++]});
    } else if (!first.ok()) {
      continue;
    } else if (const auto* launch = std::get_if<msg::LaunchRequest>(&node)) {
      msg::LaunchRequest r = *launch;
      r.device = m.device;
      r.stream = m.stream;
      st = Launch(std::move(r));
    } else if (const auto* set = std::get_if<msg::MemsetRequest>(&node)) {
      st = device_->Memset(m.device, m.stream, set->dst, set->value, set->element_size);
    } else if (const auto* copy = std::get_if<msg::CopyOnDeviceRequest>(&node)) {
      st = device_->CopyOnDevice(m.device, m.stream, copy->dst, copy->src);
    } else if (const auto* record = std::get_if<msg::EventRecordRequest>(&node)) {
      st = device_->EventRecord(record->event, m.stream);
    } else if (const auto* wait = std::get_if<msg::StreamWaitEventRequest>(&node)) {
      st = device_->StreamWaitEvent(m.stream, wait->event, 0);
    } else if (const auto* wv = std::get_if<msg::StreamWaitValueRequest>(&node)) {
      st = device_->StreamWaitValue(m.device, m.stream, wv->address, wv->value, wv->mask, wv->flags, wv->bytes);
    } else if (const auto* wr = std::get_if<msg::StreamWriteValueRequest>(&node)) {
      st = device_->StreamWriteValue(m.device, m.stream, wr->address, wr->value, wr->bytes);
    }
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
