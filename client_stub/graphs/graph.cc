#include "client_stub/graphs/graph.h"

#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "client_stub/allocate/device_memory.h"
#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"
#include "client_stub/client.h"
#include "client_stub/session/hip_status.h"
#include "protocol/codec.h"

namespace hipr::client {
namespace {

// std::visit over a GraphOp with one lambda per node kind: a kind added to
// GraphOp without its lambda does not compile, so no visit falls back
// silently.
template <class... F>
struct Visitor : F... {
  using F::operator()...;
};
template <class... F>
Visitor(F...) -> Visitor<F...>;  // clang 15 deduces no aggregate's arguments.

// The node kinds Lower() expands or drops: none is among an executable
// graph's ops.
template <class T>
constexpr bool kLoweredAway = std::is_same_v<T, EmptyNode> || std::is_same_v<T, Memcpy3DNode> ||
                              std::is_same_v<T, ChildGraphNode> || std::is_same_v<T, MemAllocNode> ||
                              std::is_same_v<T, MemFreeNode> || std::is_same_v<T, BatchMemOpNode>;

struct Graph;

struct Node {
  GraphOp op;
  int device = 0;
  Graph* graph = nullptr;
  std::vector<Node*> deps;
  std::vector<Node*> dependents;
  const Node* origin = nullptr;  // The node this one is a clone of (compared, never dereferenced).
  std::vector<void*> param_pointers;  // hipGraphKernelNodeGetParams's kernelParams.
};

struct Graph {
  std::vector<std::unique_ptr<Node>> nodes;  // In creation order.
  std::unordered_map<UserObject*, uint64_t> user_refs;  // References this graph holds.
  Node* owner = nullptr;                     // The child graph node that owns this graph.
  const Graph* cloned_from = nullptr;        // Compared, never dereferenced.
};

// A node's operation as an executable graph runs it: kernels, memsets,
// copies, host functions and event nodes only (copies given in 3-D and
// child graphs are expanded, empty nodes dropped).
struct LoweredOp {
  int device = 0;
  GraphOp op;
};

// One node of the graph an executable graph was made from.
struct ExecNode {
  const void* key = nullptr;  // That node (compared, never dereferenced).
  size_t index = 0;           // Its place in the graph's creation order.
  hipGraphNodeType type = hipGraphNodeTypeEmpty;
  std::string shape;  // A child graph's topology (Topology below).
  std::vector<LoweredOp> ops;
  std::vector<size_t> deps;  // Its dependencies' creation indexes.
  bool enabled = true;
};

struct Exec {
  std::unordered_map<UserObject*, uint64_t> user_refs;  // Taken from the graph at instantiation.
  std::vector<std::shared_ptr<GraphMemory>> memory;      // Its memory nodes' memory, held while it lives.
  std::set<std::pair<int, uint64_t>> launched_on;       // (device, stream) of its launches.
  uint64_t id = 0;  // The worker's graph id (when on_worker).
  int device = 0;
  std::vector<ExecNode> nodes;  // In launch order.
  std::string topology;         // The source graph's (ExecUpdate compares).
  std::vector<GraphOp> ops;     // What a launch runs, in order: the enabled nodes' ops.
  // Per op: the ops (indexes in `ops`) that must finish before it starts,
  // from the graph's edges (a node's ops follow one another; a disabled or
  // empty node passes its dependencies on).
  std::vector<std::vector<uint32_t>> op_deps;
  bool on_worker = false;
  unsigned long long flags = 0;
};

}  // namespace

struct UserObject {
  void* ptr = nullptr;
  hipHostFn_t destroy = nullptr;
  uint64_t refs = 0;  // Under the graph registry's lock (Registry::mu).
};

namespace {

// One capture sequence: the streams that joined it share it.
struct CaptureSeq {
  unsigned long long id = 0;
  Graph* graph = nullptr;  // Owned until EndCapture hands it out.
  int device = 0;
  uint64_t origin = 0;
  hipStreamCaptureMode mode = hipStreamCaptureModeGlobal;
  bool invalidated = false;
  bool into_existing = false;  // hipStreamBeginCaptureToGraph: `graph` is a live graph.
  std::thread::id thread;      // Its hipStreamBeginCapture's (global and thread-local modes end there).
  bool deps_replaced = false;  // hipStreamUpdateCaptureDependencies replaced a stream's dependencies.
};

struct StreamCapture {
  std::shared_ptr<CaptureSeq> seq;
  std::vector<Node*> deps;  // What the stream's next node depends on.
  bool blocking = true;     // Not hipStreamNonBlocking: the null stream waits for it.
};

struct CapturedEvent {
  std::shared_ptr<CaptureSeq> seq;
  std::vector<Node*> deps;
};

}  // namespace

// The registry's state (graph.h GraphRegistry).
struct GraphRegistry::Impl {
  Mutex mu;
  std::atomic<int> captures{0};  // Live capturing streams; 0 keeps the launch path lock-free.
  std::unordered_set<Graph*> graphs HIPR_GUARDED_BY(mu);
  std::unordered_set<Node*> nodes HIPR_GUARDED_BY(mu);
  std::unordered_set<Exec*> execs HIPR_GUARDED_BY(mu);
  std::unordered_map<uint64_t, StreamCapture> streams HIPR_GUARDED_BY(mu);  // By protocol stream id.
  std::unordered_map<uint64_t, CapturedEvent> events HIPR_GUARDED_BY(mu);  // By protocol event id.
  std::unordered_set<UserObject*> user_objects HIPR_GUARDED_BY(mu);
  // Destructors of user objects whose last reference went, to run once the
  // lock is released (RunDestructors).
  std::vector<std::pair<hipHostFn_t, void*>> dying HIPR_GUARDED_BY(mu);
  unsigned long long next_capture HIPR_GUARDED_BY(mu) = 1;
  std::atomic<uint64_t> next_exec{1};

  Graph* FindGraph(hipGraph_t g) HIPR_REQUIRES(mu) {
    auto* p = reinterpret_cast<Graph*>(g);
    return graphs.count(p) != 0 ? p : nullptr;
  }
  Node* FindNode(hipGraphNode_t n) HIPR_REQUIRES(mu) {
    auto* p = reinterpret_cast<Node*>(n);
    return nodes.count(p) != 0 ? p : nullptr;
  }

  Node* AddNode(Graph* g, int device, GraphOp op, const std::vector<Node*>& deps) HIPR_REQUIRES(mu) {
    auto node = std::make_unique<Node>();
    node->op = std::move(op);
    node->device = device;
    node->graph = g;
    node->deps = deps;
    for (Node* d : deps) d->dependents.push_back(node.get());
    Node* raw = node.get();
    nodes.insert(raw);
    g->nodes.push_back(std::move(node));
    return raw;
  }

  // Drops `count` references; the last one queues the destructor.
  void Release(UserObject* o, uint64_t count) HIPR_REQUIRES(mu) {
    o->refs -= count;
    if (o->refs != 0) return;
    user_objects.erase(o);
    dying.emplace_back(o->destroy, o->ptr);
    delete o;
  }
  void ReleaseAll(const std::unordered_map<UserObject*, uint64_t>& refs) HIPR_REQUIRES(mu) {
    for (const auto& [o, count] : refs) Release(o, count);
  }
  // Adds the references `g` (and its child graphs) hold to *out, retaining them.
  void TakeRefs(const Graph& g, std::unordered_map<UserObject*, uint64_t>* out) HIPR_REQUIRES(mu) {
    for (const auto& [o, count] : g.user_refs) {
      o->refs += count;
      (*out)[o] += count;
    }
    for (const auto& n : g.nodes)
      if (const auto* c = std::get_if<ChildGraphNode>(&n->op)) TakeRefs(*reinterpret_cast<const Graph*>(c->graph), out);
  }

  void DeleteGraph(Graph* g) HIPR_REQUIRES(mu) {
    ReleaseAll(g->user_refs);
    for (auto& n : g->nodes) {
      if (const auto* c = std::get_if<ChildGraphNode>(&n->op)) DeleteGraph(reinterpret_cast<Graph*>(c->graph));
      nodes.erase(n.get());
    }
    graphs.erase(g);
    delete g;
  }

  // Removes `n` and its edges from its graph.
  void DeleteNode(Node* n) HIPR_REQUIRES(mu) {
    for (Node* d : n->deps) std::erase(d->dependents, n);
    for (Node* d : n->dependents) std::erase(d->deps, n);
    if (const auto* c = std::get_if<ChildGraphNode>(&n->op)) DeleteGraph(reinterpret_cast<Graph*>(c->graph));
    nodes.erase(n);
    std::erase_if(n->graph->nodes, [n](const std::unique_ptr<Node>& p) { return p.get() == n; });
  }

  // A live copy of `from`, its child graphs copied too.
  Graph* Clone(const Graph& from, Node* owner) HIPR_REQUIRES(mu) {
    auto* g = new Graph;
    g->owner = owner;
    g->cloned_from = &from;
    g->user_refs = from.user_refs;
    for (const auto& [o, count] : from.user_refs) o->refs += count;
    graphs.insert(g);
    std::unordered_map<const Node*, Node*> copy_of;
    for (const auto& n : from.nodes) {
      Node* c = AddNode(g, n->device, n->op, {});
      c->origin = n.get();
      if (auto* child = std::get_if<ChildGraphNode>(&c->op))
        child->graph = reinterpret_cast<hipGraph_t>(Clone(*reinterpret_cast<Graph*>(child->graph), c));
      copy_of[n.get()] = c;
    }
    // Edges may run from a later node to an earlier one.
    for (const auto& n : from.nodes) {
      Node* c = copy_of.at(n.get());
      for (const Node* d : n->deps) c->deps.push_back(copy_of.at(d));
      for (const Node* d : n->dependents) c->dependents.push_back(copy_of.at(d));
    }
    return g;
  }

  // A capture's graph under construction (not yet a live graph).
  void DeleteGraphOf(const std::shared_ptr<CaptureSeq>& seq) HIPR_REQUIRES(mu) {
    if (seq->into_existing) return;  // The application's graph keeps what was captured.
    graphs.insert(seq->graph);
    DeleteGraph(seq->graph);
    seq->graph = nullptr;
  }

  // Ends every stream's part in `seq` (and forgets its events).
  void EndSeq(const std::shared_ptr<CaptureSeq>& seq) HIPR_REQUIRES(mu) {
    for (auto it = streams.begin(); it != streams.end();) {
      if (it->second.seq == seq) {
        it = streams.erase(it);
        captures.fetch_sub(1, std::memory_order_relaxed);
      } else {
        ++it;
      }
    }
    std::erase_if(events, [&](const auto& e) { return e.second.seq == seq; });
  }

  // Graph memory by device: current and high-water bytes.
  Mutex memory_mu;
  std::map<int, std::pair<uint64_t, uint64_t>> memory_by_device HIPR_GUARDED_BY(memory_mu);
};

namespace {

using Registry = GraphRegistry::Impl;

// Whether a stream that joined `seq` (a fork) has captured work the origin
// stream's dependencies `origin_deps` do not include: ending the capture
// then leaves that work unjoined (clr: more than one leaf).
bool Unjoined(const Registry& r, const std::shared_ptr<CaptureSeq>& seq, const std::vector<Node*>& origin_deps)
    HIPR_REQUIRES(r.mu) {
  std::unordered_set<const Node*> joined;
  std::vector<const Node*> todo(origin_deps.begin(), origin_deps.end());
  while (!todo.empty()) {
    const Node* n = todo.back();
    todo.pop_back();
    if (!joined.insert(n).second) continue;
    todo.insert(todo.end(), n->deps.begin(), n->deps.end());
  }
  for (const auto& [id, c] : r.streams) {
    if (c.seq != seq || id == seq->origin) continue;
    for (const Node* d : c.deps)
      if (joined.count(d) == 0) return true;
  }
  return false;
}

constinit thread_local hipStreamCaptureMode t_capture_mode = hipStreamCaptureModeGlobal;

// Runs the destructors queued while the lock was held. REQUIRES: not mu.
void RunDestructors(Registry& r) {
  std::vector<std::pair<hipHostFn_t, void*>> dying;
  {
    MutexLock lock(r.mu);
    dying.swap(r.dying);
  }
  for (const auto& [destroy, ptr] : dying) destroy(ptr);
}

template <class T>
hipError_t FillList(const std::vector<T*>& items, hipGraphNode_t* out, size_t* count) {
  if (count == nullptr) return hipErrorInvalidValue;
  if (out != nullptr) {
    for (size_t i = 0; i < *count; ++i)
      out[i] = i < items.size() ? reinterpret_cast<hipGraphNode_t>(items[i]) : nullptr;
    // A shorter list than there are items keeps its length, as clr (and
    // CUDA): the caller learns only that it got *count of them.
    if (*count < items.size()) return hipSuccess;
  }
  *count = items.size();
  return hipSuccess;
}

// The nodes of `g` in an order their edges allow (creation order among the
// ready ones); false on a cycle.
bool Order(const Graph& g, std::vector<const Node*>* out) {
  std::unordered_map<const Node*, size_t> waiting;
  std::deque<const Node*> ready;
  for (const auto& n : g.nodes) {
    waiting[n.get()] = n->deps.size();
    if (n->deps.empty()) ready.push_back(n.get());
  }
  while (!ready.empty()) {
    const Node* n = ready.front();
    ready.pop_front();
    out->push_back(n);
    for (const Node* d : n->dependents)
      if (--waiting[d] == 0) ready.push_back(d);
  }
  return out->size() == g.nodes.size();
}

template <class T>
std::vector<uint8_t> EncodeBody(const T& m) {
  codec::BodyWriter w;
  w.Encode(m);
  return std::vector<uint8_t>(w.data(), w.data() + w.size());
}

// A graph node: the op's own request (protocol/ops.h says which ops a graph
// may hold).
template <wire::Op op, class T>
msg::GraphNode WorkerNode(const T& m) {
  static_assert(ops::Has<op>(ops::kGraphNode), "op cannot be a graph node (protocol/ops.h)");
  static_assert(ops::kRequestFits<op, T>, "this is not the request type of op (protocol/ops.h)");
  return {static_cast<uint16_t>(op), EncodeBody(m), {}};
}
// A host node: kStreamHostCallback with an empty body; the launch names
// its callback.
msg::GraphNode WorkerHostNode() {
  static_assert(ops::Has<wire::Op::kStreamHostCallback>(ops::kGraphNode));
  return {static_cast<uint16_t>(wire::Op::kStreamHostCallback), {}, {}};
}

// Graph frames stay well inside the body limits (wire.h): nodes go in
// chunks, each node's body must fit a msgpack bin.
constexpr size_t kNodesPerFrame = 1024;
constexpr size_t kBodyBytesPerFrame = 512u << 10;
constexpr size_t kMaxNodeBody = 60u << 10;

// Sends `exec` to the worker as one or more kGraphCreate frames; false when a
// node cannot travel that way (then the client replays it).
bool BuildWorkerGraph(const Exec& exec, std::vector<msg::GraphCreateRequest>* frames) {
  msg::GraphCreateRequest cur{exec.id, exec.device, {}, false, true};
  size_t bytes = 0;
  for (size_t i = 0; i < exec.ops.size(); ++i) {
    const GraphOp& op = exec.ops[i];
    std::optional<msg::GraphNode> node = std::visit(
        Visitor{
            [](const KernelNode& k) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kLaunchKernel>(k.request);
            },
            [](const EventRecordNode& r) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kEventRecord>(msg::EventRecordRequest{r.id, 0});
            },
            [](const EventWaitNode& w) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kStreamWaitEvent>(msg::StreamWaitEventRequest{0, w.id, 0});
            },
            [](const msg::MemsetRequest& m) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kMemset>(m);
            },
            [](const msg::CopyOnDeviceRequest& c) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kCopyOnDevice>(c);
            },
            [](const HostFnNode&) -> std::optional<msg::GraphNode> { return WorkerHostNode(); },
            [](const msg::StreamWaitValueRequest& w) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kStreamWaitValue>(w);
            },
            [](const msg::StreamWriteValueRequest& w) -> std::optional<msg::GraphNode> {
              return WorkerNode<wire::Op::kStreamWriteValue>(w);
            },
            // Host memory takes part: the client replays the graph.
            [](const HostCopyNode&) -> std::optional<msg::GraphNode> { return std::nullopt; },
            []<class T>(const T&) -> std::optional<msg::GraphNode>
              requires kLoweredAway<T>
            { return std::nullopt; },
        },
        op);
    if (!node) return false;
    msg::GraphNode n = std::move(*node);
    if (n.body.size() > kMaxNodeBody) return false;
    n.deps = exec.op_deps[i];
    if (cur.nodes.size() == kNodesPerFrame || bytes + n.body.size() + 4 * n.deps.size() > kBodyBytesPerFrame) {
      frames->push_back(std::move(cur));
      cur = msg::GraphCreateRequest{exec.id, exec.device, {}, true, true};
      bytes = 0;
    }
    bytes += n.body.size() + 4 * n.deps.size() + 8;
    cur.nodes.push_back(std::move(n));
    }  // namespace
  frames->push_back(std::move(cur));
  return true;
}

// Runs a host node's function for a launch on `stream`.
std::function<void(int32_t)> HostFunction(const HostFnNode& h, hipStream_t stream) {
  return [h, stream](int32_t) {
    if (h.stream_callback != nullptr)
      h.stream_callback(stream, hipSuccess, h.user_data);
    else
      h.fn(h.user_data);
  };
}

// Replays `exec` on the client, node by node, as the stream calls they were.
hipError_t Replay(HandleTable& handles, Remote& s, const Exec& exec, hipStream_t stream, int device,
                  uint64_t stream_id, HostCopyFn copy) {
  for (const GraphOp& op : exec.ops) {
    hipError_t host_error = hipSuccess;
    Status st = std::visit(
        Visitor{
            [&](const KernelNode& k) {
              msg::LaunchRequest r = k.request;
              r.device = device;
              r.stream = stream_id;
              Status posted = s.Post<wire::Op::kLaunchKernel>(r);
              if (posted.ok()) stats::Add(stats::Get().launches);
              return posted;
            },
            [&](const msg::MemsetRequest& m) {
              msg::MemsetRequest r = m;
              r.device = device;
              r.stream = stream_id;
              return s.Post<wire::Op::kMemset>(r);
            },
            [&](const msg::CopyOnDeviceRequest& c) {
              msg::CopyOnDeviceRequest r = c;
              r.device = device;
              r.stream = stream_id;
              r.want_reply = false;
              return s.Post<wire::Op::kCopyOnDevice>(r);
            },
            [&](const HostCopyNode& h) {
              host_error = copy(h, stream);
              return Status::Ok();
            },
            [&](const HostFnNode& f) { return s.PostHostCallback(device, stream_id, HostFunction(f, stream)); },
            [&](const EventRecordNode& ev) {
              handles.NoteEventRecorded(ev.event);
              return s.Post<wire::Op::kEventRecord>(device, msg::EventRecordRequest{ev.id, stream_id});
            },
            [&](const EventWaitNode& w) {
              return s.Post<wire::Op::kStreamWaitEvent>(msg::StreamWaitEventRequest{stream_id, w.id, 0, device});
            },
            [&](const msg::StreamWaitValueRequest& wv) {
              msg::StreamWaitValueRequest r = wv;
              r.device = device;
              r.stream = stream_id;
              return s.Post<wire::Op::kStreamWaitValue>(r);
            },
            [&](const msg::StreamWriteValueRequest& wr) {
              msg::StreamWriteValueRequest r = wr;
              r.device = device;
              r.stream = stream_id;
              return s.Post<wire::Op::kStreamWriteValue>(r);
            },
            []<class T>(const T&) requires kLoweredAway<T> {
              return Status(StatusCode::kInternal, "an executable graph holds a node kind that lowering removes");
            },
        },
        op);
    if (host_error != hipSuccess) return host_error;
    if (!st.ok()) return ToHipError(st);
  }
  return hipSuccess;
}

// Appends the memory of every allocation node of `g` (child graphs too).
void HoldMemory(const Graph& g, std::vector<std::shared_ptr<GraphMemory>>* out) {
  for (const auto& n : g.nodes) {
    if (const auto* a = std::get_if<MemAllocNode>(&n->op)) out->push_back(a->memory);
    if (const auto* c = std::get_if<ChildGraphNode>(&n->op)) HoldMemory(*reinterpret_cast<const Graph*>(c->graph), out);
  }
}

// Appends what `op` (on `device`) runs to *out. False when a child graph
// has a cycle.
bool Lower(int device, const GraphOp& op, std::vector<LoweredOp>* out) {
  // Every kind that runs as it is; a new kind must be placed here or below.
  auto as_is = [&](const auto&) {
    out->push_back(LoweredOp{device, op});
    return true;
  };
  return std::visit(
      Visitor{
          [&](const KernelNode& n) { return as_is(n); },
          [&](const msg::MemsetRequest& n) { return as_is(n); },
          [&](const msg::CopyOnDeviceRequest& n) { return as_is(n); },
          [&](const HostCopyNode& n) { return as_is(n); },
          [&](const HostFnNode& n) { return as_is(n); },
          [&](const EventRecordNode& n) { return as_is(n); },
          [&](const EventWaitNode& n) { return as_is(n); },
          [&](const msg::StreamWaitValueRequest& n) { return as_is(n); },
          [&](const msg::StreamWriteValueRequest& n) { return as_is(n); },
          // Memory nodes run nothing: their memory lives as long as the graph.
          [](const EmptyNode&) { return true; },
          [](const MemAllocNode&) { return true; },
          [](const MemFreeNode&) { return true; },
          [&](const Memcpy3DNode& c) {
            for (const CopyPiece& p : c.pieces)
              std::visit([&](const auto& piece) { out->push_back(LoweredOp{device, piece}); }, p);
            return true;
          },
          [&](const BatchMemOpNode& batch) {
            for (const StreamMemOp& m : batch.requests)
              std::visit(Visitor{[](std::monostate) {},
                                 [&](const auto& request) { out->push_back(LoweredOp{device, request}); }},
                         m);
            return true;
          },
          [&](const ChildGraphNode& child) {
            std::vector<const Node*> order;
            if (!Order(*reinterpret_cast<const Graph*>(child.graph), &order)) return false;
            for (const Node* n : order)
              if (!Lower(n->device, n->op, out)) return false;
            return true;
          },
      },
      op);
}

// What ExecUpdate and child graph updates compare: each node's type and
// dependencies (by creation index), child graphs included.
std::string Topology(const Graph& g) {
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < g.nodes.size(); ++i) index[g.nodes[i].get()] = i;
  std::string out = "[";
  for (const auto& n : g.nodes) {
    out += std::to_string(NodeTypeOf(n->op)) + "(";
    std::vector<size_t> deps;
    for (const Node* d : n->deps) deps.push_back(index.at(d));
    std::sort(deps.begin(), deps.end());
    for (size_t d : deps) out += std::to_string(d) + ",";
    out += ")";
    if (const auto* c = std::get_if<ChildGraphNode>(&n->op)) out += Topology(*reinterpret_cast<const Graph*>(c->graph));
  }
  return out + "]";
}

// An ExecNode for `n` (index `index` in creation order); false on a cycle
// in a child graph.
bool MakeExecNode(const Node& n, size_t index, ExecNode* out) {
  out->key = &n;
  out->index = index;
  out->type = NodeTypeOf(n.op);
  if (const auto* c = std::get_if<ChildGraphNode>(&n.op)) out->shape = Topology(*reinterpret_cast<const Graph*>(c->graph));
  out->ops.clear();
  return Lower(n.device, n.op, &out->ops);
}

// Sets e.device to the device every op of `e` runs on; false (with the
// first node that differs) when they span devices.
bool CheckOneDevice(Exec& e, const void** odd_node) {
  bool have_device = false;
  for (const ExecNode& n : e.nodes)
    for (const LoweredOp& op : n.ops) {
      if (!have_device) {
        e.device = op.device;
        have_device = true;
      } else if (op.device != e.device) {
        *odd_node = n.key;
        return false;
      }
    }
  return true;
}

// Rebuilds e.ops from the enabled nodes and, when the whole graph can run on
// the worker, the frames that send it there under a fresh id (*old_id: the
// worker graph to destroy first, 0 for none).
// Its frames name the graph's device as the program numbers it, so a graph
// runs on the worker only where the worker numbers the device alike (one
// worker, or the first of several); elsewhere the client replays it.
void Rebuild(const Remote* s, Exec& e, std::atomic<uint64_t>& next_id, uint64_t* old_id,
             std::vector<msg::GraphCreateRequest>* frames) {
  e.ops.clear();
  e.op_deps.clear();
  // Per node (by creation index): the ops a dependent of it waits for.
  std::unordered_map<size_t, std::vector<uint32_t>> tails;
  for (const ExecNode& n : e.nodes) {  // In an order the edges allow.
    std::vector<uint32_t> in;
    for (size_t d : n.deps) {
      auto t = tails.find(d);
      if (t != tails.end()) in.insert(in.end(), t->second.begin(), t->second.end());
    }
    std::sort(in.begin(), in.end());
    in.erase(std::unique(in.begin(), in.end()), in.end());
    if (!n.enabled || n.ops.empty()) {
      tails[n.index] = std::move(in);
      continue;
    }
    for (const LoweredOp& op : n.ops) {
      if (&op == &n.ops.front()) e.op_deps.push_back(in);
      else e.op_deps.push_back({static_cast<uint32_t>(e.ops.size() - 1)});
      e.ops.push_back(op.op);
    }
    tails[n.index] = {static_cast<uint32_t>(e.ops.size() - 1)};
  }
  *old_id = e.on_worker ? e.id : 0;
  e.id = next_id.fetch_add(1, std::memory_order_relaxed);
  frames->clear();
  const bool same_numbering = s != nullptr && e.device >= 0 && e.device < s->device_count() &&
                              s->LocalOf(e.device) == e.device;
  e.on_worker = same_numbering && BuildWorkerGraph(e, frames);
  if (!e.on_worker) frames->clear();
}

// Sends what Rebuild prepared (outside the registry's lock).
hipError_t Publish(Remote* s, int device, uint64_t old_id, const std::vector<msg::GraphCreateRequest>& frames) {
  if (old_id == 0 && frames.empty()) return hipSuccess;
  if (s == nullptr) return hipErrorNoDevice;
  if (old_id != 0)
    if (Status st = s->Post<wire::Op::kGraphDestroy>(device, msg::GraphRequest{old_id}); !st.ok())
      return ToHipError(st);
  for (const auto& f : frames)
    if (Status st = s->Post<wire::Op::kGraphCreate>(f); !st.ok()) return ToHipError(st);
  return hipSuccess;
}

}  // namespace

GraphRegistry::GraphRegistry() : impl_(new Impl) {}

GraphRegistry::~GraphRegistry() {
  {
    MutexLock lock(impl_->mu);
    for (Exec* e : impl_->execs) {
      impl_->ReleaseAll(e->user_refs);
      delete e;
    }
    impl_->execs.clear();
    while (!impl_->graphs.empty()) {
      Graph* g = *impl_->graphs.begin();
      while (g->owner != nullptr) g = g->owner->graph;  // Deleted with the graph whose node owns it.
      impl_->DeleteGraph(g);
    }
  }
  RunDestructors(*impl_);
  delete impl_;
}

void GraphRegistry::GraphMemoryUse(int device, uint64_t* current, uint64_t* high) {
  Registry& r = *impl_;
  MutexLock lock(r.memory_mu);
  auto it = r.memory_by_device.find(device);
  *current = it == r.memory_by_device.end() ? 0 : it->second.first;
  *high = it == r.memory_by_device.end() ? 0 : it->second.second;
}

void GraphRegistry::ResetGraphMemoryHigh(int device) {
  Registry& r = *impl_;
  MutexLock lock(r.memory_mu);
  auto& [current, high] = r.memory_by_device[device];
  high = current;
}

hipError_t GraphRegistry::NewGraphMemory(Client& c, Remote& s, int device, size_t size, const hipMemPoolProps* pool,
                                         const hipMemAccessDesc* access, size_t access_count,
                                         std::shared_ptr<GraphMemory>* out) {
  void* p = nullptr;
  if (hipError_t e = AllocateDevice(c, s, device, size, 0, AllocationRole::kGraph, &p); e != hipSuccess) return e;
  auto memory = std::make_shared<GraphMemory>(this, &c, &s, device, reinterpret_cast<uint64_t>(p), size);
  if (pool != nullptr) memory->pool = *pool;
  if (access_count > 0) memory->access.assign(access, access + access_count);
  *out = std::move(memory);
  return hipSuccess;
}

GraphMemory::GraphMemory(GraphRegistry* graphs, Client* client, const void* session, int device, uint64_t address,
                         uint64_t size)
    : graphs(graphs), client(client), session(session), device(device), address(address), size(size) {
  Registry& r = *graphs->impl_;
  MutexLock lock(r.memory_mu);
  auto& [current, high] = r.memory_by_device[device];
  current += size;
  high = std::max(high, current);
}

GraphMemory::~GraphMemory() {
  {
    Registry& r = *graphs->impl_;
    MutexLock lock(r.memory_mu);
    r.memory_by_device[device].first -= size;
  }
  Client& c = *client;
  DeviceAllocation a;
  // Gone already where a forked child abandoned its parent's allocations.
  if (!c.allocations().FindDevice(address, 0, &a) || !a.graph || a.base != address) return;
  (void)c.allocations().RemoveDevice(address, &a);
  Remote* s = c.LiveSession();
  if (s != nullptr && s == session) (void)s->Post<wire::Op::kFree>(a.device, msg::FreeRequest{address});
  if (a.outside_window) c.reservations().Release(a.base, a.size);
}

hipGraphNodeType NodeTypeOf(const GraphOp& op) {
  auto type = [](int t) { return static_cast<hipGraphNodeType>(t); };
  return std::visit(
      Visitor{
          [](const EmptyNode&) { return hipGraphNodeTypeEmpty; },
          [](const KernelNode&) { return hipGraphNodeTypeKernel; },
          [](const msg::MemsetRequest&) { return hipGraphNodeTypeMemset; },
          [](const msg::CopyOnDeviceRequest&) { return hipGraphNodeTypeMemcpy; },
          [](const HostCopyNode&) { return hipGraphNodeTypeMemcpy; },
          [](const Memcpy3DNode&) { return hipGraphNodeTypeMemcpy; },
          [](const HostFnNode&) { return hipGraphNodeTypeHost; },
          [](const EventRecordNode&) { return hipGraphNodeTypeEventRecord; },
          [](const EventWaitNode&) { return hipGraphNodeTypeWaitEvent; },
          [](const ChildGraphNode&) { return hipGraphNodeTypeGraph; },
          [&](const MemAllocNode&) { return type(kNodeTypeMemAlloc); },
          [&](const MemFreeNode&) { return type(kNodeTypeMemFree); },
          [&](const BatchMemOpNode&) { return type(kNodeTypeBatchMemOp); },
          // Waits and writes are what a batch node lowers to.
          [&](const msg::StreamWaitValueRequest&) { return type(kNodeTypeBatchMemOp); },
          [&](const msg::StreamWriteValueRequest&) { return type(kNodeTypeBatchMemOp); },
      },
      op);
}

bool GraphRegistry::AnyCapture() { return impl_->captures.load(std::memory_order_relaxed) != 0; }

bool GraphRegistry::CaptureNode(int device, uint64_t stream, GraphOp op, hipError_t* result) {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  MutexLock lock(r.mu);
  if (stream == 0) {
    // The legacy null stream waits for every blocking stream of its device:
    // it would wait for a capture that has no work to wait for yet.
    for (auto& [id, c] : r.streams) {
      if (c.seq->device == device && c.blocking) {
        c.seq->invalidated = true;
        *result = hipErrorStreamCaptureImplicit;
        return true;
      }
    }
    return false;
  }
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) return false;
  StreamCapture& c = it->second;
  if (c.seq->into_existing && r.graphs.count(c.seq->graph) == 0) c.seq->invalidated = true;  // Destroyed.
  if (c.seq->invalidated) {
    *result = hipErrorStreamCaptureInvalidated;
    return true;
  }
  Node* n = r.AddNode(c.seq->graph, device, std::move(op), c.deps);
  c.deps = {n};
  *result = hipSuccess;
  return true;
}

bool GraphRegistry::CaptureEventRecord(int device, uint64_t stream, uint64_t event, hipError_t* result) {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  MutexLock lock(r.mu);
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) {
    r.events.erase(event);  // Recorded outside any capture again.
    if (stream == 0) {
      hipError_t implicit = hipSuccess;
      for (auto& [id, c] : r.streams)
        if (c.seq->device == device && c.blocking) implicit = hipErrorStreamCaptureImplicit;
      if (implicit != hipSuccess) {
        *result = implicit;
        return true;
      }
    }
    return false;
  }
  r.events[event] = CapturedEvent{it->second.seq, it->second.deps};
  *result = it->second.seq->invalidated ? hipErrorStreamCaptureInvalidated : hipSuccess;
  return true;
}

bool GraphRegistry::CaptureStreamWaitEvent(int device, uint64_t stream, uint64_t event, hipError_t* result) {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  MutexLock lock(r.mu);
  auto ev = r.events.find(event);
  auto st = r.streams.find(stream);
  if (ev == r.events.end()) {
    if (st == r.streams.end()) return false;
    // A capture cannot depend on work outside it.
    st->second.seq->invalidated = true;
    *result = hipErrorStreamCaptureIsolation;
    return true;
  }
  if (stream == 0) {
    *result = hipErrorStreamCaptureImplicit;
    return true;
  }
  if (st == r.streams.end()) {
    // Fork: the stream joins the event's capture.
    if (ev->second.seq->device != device) {
      *result = hipErrorInvalidValue;
      return true;
    }
    StreamCapture join;
    join.seq = ev->second.seq;
    join.deps = ev->second.deps;
    r.streams.emplace(stream, std::move(join));
    r.captures.fetch_add(1, std::memory_order_relaxed);
    *result = hipSuccess;
    return true;
  }
  if (st->second.seq != ev->second.seq) {
    st->second.seq->invalidated = true;
    *result = hipErrorStreamCaptureMerge;
    return true;
  }
  // Join: the stream's next node waits for both.
  for (Node* d : ev->second.deps)
    if (std::find(st->second.deps.begin(), st->second.deps.end(), d) == st->second.deps.end())
      st->second.deps.push_back(d);
  *result = hipSuccess;
  return true;
}

hipError_t GraphRegistry::CheckNotCapturing(int device, uint64_t stream, bool any_capture) {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return hipSuccess;
  MutexLock lock(r.mu);
  for (auto& [id, c] : r.streams) {
    const bool hit = id == stream || (any_capture && c.seq->device == device &&
                                      c.seq->mode != hipStreamCaptureModeRelaxed);
    if (hit) {
      c.seq->invalidated = true;
      return hipErrorStreamCaptureUnsupported;
    }
  }
  return hipSuccess;
}

hipError_t GraphRegistry::CheckNoCapture() {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return hipSuccess;
  MutexLock lock(r.mu);
  if (r.streams.empty()) return hipSuccess;
  for (auto& [id, c] : r.streams) c.seq->invalidated = true;
  return hipErrorStreamCaptureUnsupported;
}

bool GraphRegistry::AnyBlockingCapture() {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  MutexLock lock(r.mu);
  for (const auto& [id, c] : r.streams)
    if (c.blocking) return true;
  return false;
}

void GraphRegistry::ForgetStream(uint64_t stream) {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return;
  MutexLock lock(r.mu);
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) return;
  std::shared_ptr<CaptureSeq> seq = it->second.seq;
  if (seq->origin == stream) {
    // The capture ends with its stream, on every stream that joined it; the
    // graph it was building goes too.
    r.EndSeq(seq);
    r.DeleteGraphOf(seq);
  } else {
    r.streams.erase(it);
    r.captures.fetch_sub(1, std::memory_order_relaxed);
  }
}

hipError_t GraphRegistry::CheckEventNotCaptured(uint64_t event) {
  Registry& r = *impl_;
  if (r.captures.load(std::memory_order_relaxed) == 0) return hipSuccess;
  MutexLock lock(r.mu);
  auto it = r.events.find(event);  // Erased when its capture ends.
  if (it == r.events.end() || it->second.seq->invalidated) return hipSuccess;
  it->second.seq->invalidated = true;
  return hipErrorCapturedEvent;
}

hipError_t GraphRegistry::BeginCapture(int device, uint64_t stream, unsigned stream_flags, hipStreamCaptureMode mode,
                                       hipGraph_t into, const hipGraphNode_t* deps, size_t dep_count) {
  if (mode < hipStreamCaptureModeGlobal || mode > hipStreamCaptureModeRelaxed) return hipErrorInvalidValue;
  if (dep_count > 0 && deps == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  if (r.streams.count(stream) != 0) return hipErrorIllegalState;
  auto seq = std::make_shared<CaptureSeq>();
  StreamCapture c;
  if (into != nullptr) {
    seq->graph = r.FindGraph(into);
    if (seq->graph == nullptr) return hipErrorInvalidValue;
    for (size_t i = 0; i < dep_count; ++i) {
      Node* n = r.FindNode(deps[i]);
      if (n == nullptr || n->graph != seq->graph) return hipErrorInvalidValue;
      if (std::find(c.deps.begin(), c.deps.end(), n) == c.deps.end()) c.deps.push_back(n);
    }
    seq->into_existing = true;
  } else {
    seq->graph = new Graph;
  }
  seq->id = r.next_capture++;
  seq->device = device;
  seq->origin = stream;
  seq->mode = mode;
  seq->thread = std::this_thread::get_id();
  c.seq = std::move(seq);
  c.blocking = (stream_flags & hipStreamNonBlocking) == 0;
  r.streams.emplace(stream, std::move(c));
  r.captures.fetch_add(1, std::memory_order_relaxed);
  return hipSuccess;
}

hipError_t GraphRegistry::EndCapture(uint64_t stream, hipGraph_t* graph) {
  if (graph == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) return hipErrorIllegalState;
  std::shared_ptr<CaptureSeq> seq = it->second.seq;
  if (seq->origin != stream) {
    seq->invalidated = true;
    return hipErrorStreamCaptureUnmatched;
  }
  // As clr: a global or thread-local capture ends on the thread that began
  // it; one that left forked work unjoined goes on capturing.
  if (seq->mode != hipStreamCaptureModeRelaxed && seq->thread != std::this_thread::get_id())
    return hipErrorStreamCaptureWrongThread;
  if (!seq->invalidated && !seq->into_existing && !seq->deps_replaced && Unjoined(r, seq, it->second.deps))
    return hipErrorStreamCaptureUnjoined;
  r.EndSeq(seq);
  if (seq->into_existing && r.graphs.count(seq->graph) == 0) seq->invalidated = true;  // Destroyed meanwhile.
  if (seq->invalidated) {
    r.DeleteGraphOf(seq);
    *graph = nullptr;
    return hipErrorStreamCaptureInvalidated;
  }
  r.graphs.insert(seq->graph);  // Its nodes are live since they were captured.
  *graph = reinterpret_cast<hipGraph_t>(seq->graph);
  return hipSuccess;
}

hipError_t GraphRegistry::CaptureInfo(uint64_t stream, hipStreamCaptureStatus* status, unsigned long long* id,
                                      hipGraph_t* graph, const hipGraphNode_t** deps, size_t* dep_count) {
  if (status == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) {
    *status = hipStreamCaptureStatusNone;
    return hipSuccess;
  }
  const StreamCapture& c = it->second;
  *status = c.seq->invalidated ? hipStreamCaptureStatusInvalidated : hipStreamCaptureStatusActive;
  if (id != nullptr) *id = c.seq->id;
  // The graph under construction is not a live handle yet: reported for
  // identification only, as natively.
  if (graph != nullptr) *graph = reinterpret_cast<hipGraph_t>(c.seq->graph);
  if (deps != nullptr) {
    // Stable until the stream's next captured call.
    static_assert(sizeof(Node*) == sizeof(hipGraphNode_t));
    *deps = reinterpret_cast<const hipGraphNode_t*>(c.deps.data());
  }
  if (dep_count != nullptr) *dep_count = c.deps.size();
  return hipSuccess;
}

hipError_t GraphRegistry::UpdateCaptureDependencies(uint64_t stream, const hipGraphNode_t* nodes, size_t count,
                                                    bool replace) {
  if (count > 0 && nodes == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) return hipErrorIllegalState;
  StreamCapture& c = it->second;
  std::vector<Node*> next = replace ? std::vector<Node*>{} : c.deps;
  for (size_t i = 0; i < count; ++i) {
    Node* n = r.FindNode(nodes[i]);
    if (n == nullptr || n->graph != c.seq->graph) return hipErrorInvalidValue;
    if (std::find(next.begin(), next.end(), n) == next.end()) next.push_back(n);
  }
  c.deps = std::move(next);
  if (replace) c.seq->deps_replaced = true;  // Dropped work is not unjoined (clr).
  return hipSuccess;
}

hipStreamCaptureMode GraphRegistry::ExchangeThreadCaptureMode(hipStreamCaptureMode mode) {
  return std::exchange(t_capture_mode, mode);
}

hipError_t GraphRegistry::GraphCreate(hipGraph_t* graph) {
  if (graph == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto* g = new Graph;
  r.graphs.insert(g);
  *graph = reinterpret_cast<hipGraph_t>(g);
  return hipSuccess;
}

hipError_t GraphRegistry::GraphDestroy(hipGraph_t graph) {
  Registry& r = *impl_;
  {
    MutexLock lock(r.mu);
    Graph* g = r.FindGraph(graph);
    if (g == nullptr || g->owner != nullptr) return hipErrorInvalidValue;  // A child graph goes with its node.
    r.DeleteGraph(g);
  }
  RunDestructors(r);
  return hipSuccess;
}

hipError_t GraphRegistry::GraphAddNode(hipGraph_t graph, const hipGraphNode_t* deps, size_t dep_count, int device,
                                       GraphOp op, hipGraphNode_t* out) {
  if (out == nullptr || (dep_count > 0 && deps == nullptr)) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  std::vector<Node*> d;
  for (size_t i = 0; i < dep_count; ++i) {
    Node* n = r.FindNode(deps[i]);
    if (n == nullptr || n->graph != g) return hipErrorInvalidValue;
    if (std::find(d.begin(), d.end(), n) == d.end()) d.push_back(n);
  }
  Graph* child = nullptr;
  if (const auto* c = std::get_if<ChildGraphNode>(&op)) {
    child = r.FindGraph(c->graph);
    if (child == nullptr) return hipErrorInvalidValue;
    std::vector<const Node*> order;
    if (!Order(*child, &order)) return hipErrorInvalidValue;  // A cycle.
  }
  Node* n = r.AddNode(g, device, std::move(op), d);
  if (child != nullptr)
    std::get<ChildGraphNode>(n->op).graph = reinterpret_cast<hipGraph_t>(r.Clone(*child, n));
  *out = reinterpret_cast<hipGraphNode_t>(n);
  return hipSuccess;
}

hipError_t GraphRegistry::GraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                               size_t count) {
  if (count > 0 && (from == nullptr || to == nullptr)) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    Node* a = r.FindNode(from[i]);
    Node* b = r.FindNode(to[i]);
    if (a == nullptr || b == nullptr || a->graph != g || b->graph != g || a == b) return hipErrorInvalidValue;
    if (std::find(b->deps.begin(), b->deps.end(), a) != b->deps.end()) return hipErrorInvalidValue;
  }
  for (size_t i = 0; i < count; ++i) {
    Node* a = r.FindNode(from[i]);
    Node* b = r.FindNode(to[i]);
    b->deps.push_back(a);
    a->dependents.push_back(b);
  }
  return hipSuccess;
}

hipError_t GraphRegistry::GraphRemoveDependencies(hipGraph_t graph, const hipGraphNode_t* from,
                                                  const hipGraphNode_t* to, size_t count) {
  if (count > 0 && (from == nullptr || to == nullptr)) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    Node* a = r.FindNode(from[i]);
    Node* b = r.FindNode(to[i]);
    if (a == nullptr || b == nullptr || a->graph != g || b->graph != g) return hipErrorInvalidValue;
    if (std::find(b->deps.begin(), b->deps.end(), a) == b->deps.end()) return hipErrorInvalidValue;
  }
  for (size_t i = 0; i < count; ++i) {
    Node* a = r.FindNode(from[i]);
    Node* b = r.FindNode(to[i]);
    std::erase(b->deps, a);
    std::erase(a->dependents, b);
  }
  return hipSuccess;
}

hipError_t GraphRegistry::DestroyNode(hipGraphNode_t node) {
  Registry& r = *impl_;
  {
    MutexLock lock(r.mu);
    Node* n = r.FindNode(node);
    if (n == nullptr) return hipErrorInvalidValue;
    for (const auto& [id, c] : r.streams)
      if (c.seq->graph == n->graph) return hipErrorInvalidValue;  // Being captured into.
    r.DeleteNode(n);  // A child graph node's graph releases its user objects.
  }
  RunDestructors(r);
  return hipSuccess;
}

hipError_t GraphRegistry::GraphClone(hipGraph_t graph, hipGraph_t* clone) {
  if (clone == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  *clone = reinterpret_cast<hipGraph_t>(r.Clone(*g, nullptr));
  return hipSuccess;
}

hipError_t GraphRegistry::NodeFindInClone(hipGraphNode_t node, hipGraph_t clone, hipGraphNode_t* out) {
  if (out == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Node* n = r.FindNode(node);
  Graph* g = r.FindGraph(clone);
  if (n == nullptr || g == nullptr || g->cloned_from != n->graph) return hipErrorInvalidValue;
  for (const auto& c : g->nodes) {
    if (c->origin == n) {
      *out = reinterpret_cast<hipGraphNode_t>(c.get());
      return hipSuccess;
    }
  }
  return hipErrorInvalidValue;  // Added to the original after the clone was made.
}

hipError_t GraphRegistry::GraphGetNodes(hipGraph_t graph, hipGraphNode_t* out, size_t* count, bool roots_only) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  std::vector<Node*> list;
  for (auto& n : g->nodes)
    if (!roots_only || n->deps.empty()) list.push_back(n.get());
  return FillList(list, out, count);
}

hipError_t GraphRegistry::GraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to, size_t* count) {
  if (count == nullptr || ((from == nullptr) != (to == nullptr))) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  std::vector<Node*> a;
  std::vector<Node*> b;
  for (auto& n : g->nodes)
    for (Node* d : n->deps) {
      a.push_back(d);
      b.push_back(n.get());
    }
  size_t n = *count;
  if (from != nullptr) {
    (void)FillList(a, from, &n);
    n = *count;
    (void)FillList(b, to, &n);
    if (*count < a.size()) return hipSuccess;  // As FillList: a short list keeps its length.
  }
  *count = a.size();
  return hipSuccess;
}

hipError_t GraphRegistry::NodeGetType(hipGraphNode_t node, hipGraphNodeType* type) {
  if (type == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  *type = NodeTypeOf(n->op);
  return hipSuccess;
}

hipError_t GraphRegistry::NodeGetDependencies(hipGraphNode_t node, hipGraphNode_t* out, size_t* count,
                                              bool dependents) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  return FillList(dependents ? n->dependents : n->deps, out, count);
}

hipError_t GraphRegistry::NodeGetOp(hipGraphNode_t node, GraphOp* op) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  *op = n->op;
  return hipSuccess;
}

hipError_t GraphRegistry::NodeSetOp(hipGraphNode_t node, GraphOp op) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr || NodeTypeOf(n->op) != NodeTypeOf(op) || std::holds_alternative<ChildGraphNode>(op))
    return hipErrorInvalidValue;
  if (const auto* old = std::get_if<KernelNode>(&n->op)) {
    auto& k = std::get<KernelNode>(op);
    k.access_policy = old->access_policy;
    k.request.flags |= old->request.flags & msg::kLaunchCooperative;
  }
  n->op = std::move(op);
  n->param_pointers.clear();
  return hipSuccess;
}

hipError_t GraphRegistry::KernelNodeGetParams(hipGraphNode_t node, hipKernelNodeParams* params) {
  if (params == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  auto* k = std::get_if<KernelNode>(&n->op);
  if (k == nullptr) return hipErrorInvalidValue;
  n->param_pointers.clear();
  for (uint32_t offset : k->arg_offsets) n->param_pointers.push_back(k->request.kernarg.data() + offset);
  *params = hipKernelNodeParams{};
  params->func = const_cast<void*>(k->func);
  params->gridDim = dim3(k->request.grid[0], k->request.grid[1], k->request.grid[2]);
  params->blockDim = dim3(k->request.block[0], k->request.block[1], k->request.block[2]);
  params->sharedMemBytes = k->request.shared_bytes;
  params->kernelParams = n->param_pointers.empty() ? nullptr : n->param_pointers.data();
  params->extra = nullptr;
  return hipSuccess;
}

namespace {
KernelNode* KernelOf(Registry& r, hipGraphNode_t node) HIPR_REQUIRES(r.mu) {
  Node* n = r.FindNode(node);
  return n == nullptr ? nullptr : std::get_if<KernelNode>(&n->op);
}
}  // namespace

hipError_t GraphRegistry::KernelNodeGetAttribute(hipGraphNode_t node, hipKernelNodeAttrID attr,
                                                 hipKernelNodeAttrValue* value) {
  if (value == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  KernelNode* k = KernelOf(r, node);
  if (k == nullptr) return hipErrorInvalidValue;
  switch (attr) {
    case hipKernelNodeAttributeAccessPolicyWindow: value->accessPolicyWindow = k->access_policy; return hipSuccess;
    case hipKernelNodeAttributeCooperative:
      value->cooperative = (k->request.flags & msg::kLaunchCooperative) != 0 ? 1 : 0;
      return hipSuccess;
  }
  return hipErrorInvalidValue;
}

hipError_t GraphRegistry::KernelNodeSetAttribute(hipGraphNode_t node, hipKernelNodeAttrID attr,
                                                 const hipKernelNodeAttrValue& value) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  KernelNode* k = KernelOf(r, node);
  if (k == nullptr) return hipErrorInvalidValue;
  switch (attr) {
    case hipKernelNodeAttributeAccessPolicyWindow: {
      // A cache hint: kept and reported back; the worker's device decides
      // its caching itself.
      const hipAccessPolicyWindow& w = value.accessPolicyWindow;
      if (w.hitRatio < 0.0f || w.hitRatio > 1.0f) return hipErrorInvalidValue;
      k->access_policy = w;
      return hipSuccess;
    }
    case hipKernelNodeAttributeCooperative:
      if (value.cooperative != 0)
        k->request.flags |= msg::kLaunchCooperative;
      else
        k->request.flags &= ~uint32_t{msg::kLaunchCooperative};
      return hipSuccess;
  }
  return hipErrorInvalidValue;
}

hipError_t GraphRegistry::KernelNodeCopyAttributes(hipGraphNode_t from, hipGraphNode_t to) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  KernelNode* a = KernelOf(r, from);
  KernelNode* b = KernelOf(r, to);
  if (a == nullptr || b == nullptr) return hipErrorInvalidValue;
  b->access_policy = a->access_policy;
  b->request.flags = (b->request.flags & ~uint32_t{msg::kLaunchCooperative}) | (a->request.flags & msg::kLaunchCooperative);
  return hipSuccess;
}

namespace {

std::string DotLabel(const Node& n) {
  char buf[160];
  if (const auto* k = std::get_if<KernelNode>(&n.op)) {
    std::snprintf(buf, sizeof buf, "kernel %s\\ngrid (%u,%u,%u) block (%u,%u,%u)", k->request.kernel.c_str(),
                  k->request.grid[0], k->request.grid[1], k->request.grid[2], k->request.block[0],
                  k->request.block[1], k->request.block[2]);
  } else if (const auto* m = std::get_if<msg::MemsetRequest>(&n.op)) {
    std::snprintf(buf, sizeof buf, "memset 0x%llx\\n%llu x %llu bytes, value 0x%x",
                  static_cast<unsigned long long>(m->dst.address), static_cast<unsigned long long>(m->dst.width),
                  static_cast<unsigned long long>(m->dst.height), m->value);
  } else if (const auto* c = std::get_if<msg::CopyOnDeviceRequest>(&n.op)) {
    std::snprintf(buf, sizeof buf, "memcpy device 0x%llx -> 0x%llx\\n%llu x %llu bytes",
                  static_cast<unsigned long long>(c->src.address), static_cast<unsigned long long>(c->dst.address),
                  static_cast<unsigned long long>(c->dst.width), static_cast<unsigned long long>(c->dst.height));
  } else if (const auto* h = std::get_if<HostCopyNode>(&n.op)) {
    std::snprintf(buf, sizeof buf, "memcpy %p -> %p\\n%zu x %zu bytes", h->src, h->dst, h->width, h->height);
  } else if (const auto* c3 = std::get_if<Memcpy3DNode>(&n.op)) {
    std::snprintf(buf, sizeof buf, "memcpy 3D\\n%zu x %zu x %zu bytes", c3->params.extent.width,
                  c3->params.extent.height, c3->params.extent.depth);
  } else if (std::holds_alternative<HostFnNode>(n.op)) {
    std::snprintf(buf, sizeof buf, "host function");
  } else if (const auto* r = std::get_if<EventRecordNode>(&n.op)) {
    std::snprintf(buf, sizeof buf, "event record %p", static_cast<void*>(r->event));
  } else if (const auto* w = std::get_if<EventWaitNode>(&n.op)) {
    std::snprintf(buf, sizeof buf, "event wait %p", static_cast<void*>(w->event));
  } else if (std::holds_alternative<ChildGraphNode>(n.op)) {
    std::snprintf(buf, sizeof buf, "child graph");
  } else {
    std::snprintf(buf, sizeof buf, "empty");
  }
  return buf;
}

// One graph's nodes and edges; child graphs as clusters.
void WriteDot(std::FILE* f, const Graph& g, const std::string& prefix, std::unordered_map<const Node*, std::string>* names) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = *g.nodes[i];
    const std::string name = prefix + std::to_string(i);
    (*names)[&n] = name;
    std::fprintf(f, "  %s [shape=box label=\"%s\"];\n", name.c_str(), DotLabel(n).c_str());
    if (const auto* c = std::get_if<ChildGraphNode>(&n.op)) {
      std::fprintf(f, "  subgraph cluster_%s {\n  label=\"child graph of %s\";\n", name.c_str(), name.c_str());
      WriteDot(f, *reinterpret_cast<const Graph*>(c->graph), name + "_", names);
      std::fprintf(f, "  }\n");
    }
  }
  for (const auto& n : g.nodes)
    for (const Node* d : n->deps) std::fprintf(f, "  %s -> %s;\n", names->at(d).c_str(), names->at(n.get()).c_str());
}

}  // namespace

hipError_t GraphRegistry::GraphDebugDot(hipGraph_t graph, const char* path) {
  if (path == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    HIPR_LOG_INFO("hipGraphDebugDotPrint: cannot write %s: %s", path, std::strerror(errno));
    return hipErrorOperatingSystem;
  }
  std::fprintf(f, "digraph hipGraph {\n");
  std::unordered_map<const Node*, std::string> names;
  WriteDot(f, *g, "n", &names);
  std::fprintf(f, "}\n");
  const bool ok = std::ferror(f) == 0;
  if (std::fclose(f) != 0 || !ok) {
    HIPR_LOG_INFO("hipGraphDebugDotPrint: writing %s failed: %s", path, std::strerror(errno));
    return hipErrorOperatingSystem;
  }
  return hipSuccess;
}

hipError_t GraphRegistry::GraphInstantiate(Remote* s, hipGraph_t graph, hipGraphExec_t* exec,
                                           hipGraphNode_t* error_node, unsigned long long flags) {
  if (exec == nullptr) return hipErrorInvalidValue;
  if (error_node != nullptr) *error_node = nullptr;
  if (s == nullptr) return hipErrorNoDevice;
  Registry& r = *impl_;
  auto e = std::make_unique<Exec>();
  e->flags = flags;
  uint64_t old_id = 0;
  std::vector<msg::GraphCreateRequest> frames;
  {
    MutexLock lock(r.mu);
    Graph* g = r.FindGraph(graph);
    if (g == nullptr) return hipErrorInvalidValue;
    std::vector<const Node*> order;
    if (!Order(*g, &order)) return hipErrorInvalidValue;  // A cycle.
    std::unordered_map<const Node*, size_t> index;
    for (size_t i = 0; i < g->nodes.size(); ++i) index[g->nodes[i].get()] = i;
    for (const Node* n : order) {
      ExecNode x;
      if (!MakeExecNode(*n, index.at(n), &x)) return hipErrorInvalidValue;
      for (const Node* d : n->deps) x.deps.push_back(index.at(d));
      e->nodes.push_back(std::move(x));
    }
    e->topology = Topology(*g);
    const void* odd = nullptr;
    if (!CheckOneDevice(*e, &odd)) {
      // Every node of one executable graph replays on the launch's device.
      HIPR_LOG_ONCE(kWarn, "hipGraphInstantiate: a graph spanning devices is not supported; "
                           "returning hipErrorNotSupported");
      if (error_node != nullptr) *error_node = reinterpret_cast<hipGraphNode_t>(const_cast<void*>(odd));
      return hipErrorNotSupported;
    }
    Rebuild(s, *e, r.next_exec, &old_id, &frames);
    r.TakeRefs(*g, &e->user_refs);
    HoldMemory(*g, &e->memory);
  }
  if (hipError_t err = Publish(s, e->device, old_id, frames); err != hipSuccess) {
    {
      MutexLock lock(r.mu);
      r.ReleaseAll(e->user_refs);
    }
    RunDestructors(r);
    return err;
  }
  MutexLock lock(r.mu);
  r.execs.insert(e.get());
  *exec = reinterpret_cast<hipGraphExec_t>(e.release());
  return hipSuccess;
}

hipError_t GraphRegistry::GraphExecDestroy(Remote* s, hipGraphExec_t exec) {
  Registry& r = *impl_;
  std::unique_ptr<Exec> e;
  {
    MutexLock lock(r.mu);
    auto* p = reinterpret_cast<Exec*>(exec);
    if (r.execs.erase(p) == 0) return hipErrorInvalidValue;
    e.reset(p);
  }
  if (!e->user_refs.empty()) {
    // Its user objects outlive the launches already made: released when
    // every stream it was launched on has reached this point.
    auto refs = std::make_shared<std::unordered_map<UserObject*, uint64_t>>(std::move(e->user_refs));
    auto pending = std::make_shared<std::atomic<size_t>>(e->launched_on.size() + 1);
    auto arrive = [&r, refs, pending] {
      if (pending->fetch_sub(1) != 1) return;
      {
        MutexLock lock(r.mu);
        r.ReleaseAll(*refs);
      }
      RunDestructors(r);
    };
    for (const auto& [device, stream] : e->launched_on)
      if (s == nullptr || !s->PostHostCallback(device, stream, [arrive](int32_t) { arrive(); }).ok()) arrive();
    arrive();
  }
  if (!e->on_worker) return hipSuccess;
  if (s == nullptr) return hipErrorNoDevice;
  return ToHipError(s->Post<wire::Op::kGraphDestroy>(e->device, msg::GraphRequest{e->id}));
}

hipError_t GraphRegistry::GraphExecGetFlags(hipGraphExec_t exec, unsigned long long* flags) {
  if (flags == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto* p = reinterpret_cast<Exec*>(exec);
  if (r.execs.count(p) == 0) return hipErrorInvalidValue;
  *flags = p->flags;
  return hipSuccess;
}

hipError_t GraphRegistry::GraphUpload(hipGraphExec_t exec, int device) {
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto* p = reinterpret_cast<Exec*>(exec);
  if (r.execs.count(p) == 0) return hipErrorInvalidValue;
  if (device != p->device && !p->ops.empty()) return hipErrorInvalidValue;
  return hipSuccess;
}

namespace {

// The exec's entry for `node`, or null.
ExecNode* FindExecNode(Exec& e, hipGraphNode_t node) {
  for (ExecNode& n : e.nodes)
    if (n.key == node) return &n;
  return nullptr;
}

// Applies `change` to the exec's entry for `node` under the lock, then
// republishes the exec.
template <class Change>
hipError_t ChangeExec(Registry& r, Remote* s, hipGraphExec_t exec, hipGraphNode_t node, Change change) {
  uint64_t old_id = 0;
  int exec_device = 0;
  std::vector<msg::GraphCreateRequest> frames;
  {
    MutexLock lock(r.mu);
    auto* e = reinterpret_cast<Exec*>(exec);
    if (r.execs.count(e) == 0) return hipErrorInvalidValue;
    ExecNode* n = FindExecNode(*e, node);
    if (n == nullptr) return hipErrorInvalidValue;
    ExecNode before = *n;
    if (hipError_t err = change(r, *n); err != hipSuccess) return err;
    const void* odd = nullptr;
    const int device = e->device;
    if (!CheckOneDevice(*e, &odd) || (e->device != device && !e->ops.empty())) {
      *n = std::move(before);
      e->device = device;
      return hipErrorInvalidValue;  // Another device than the rest.
    }
    Rebuild(s, *e, r.next_exec, &old_id, &frames);
    exec_device = e->device;
  }
  return Publish(s, exec_device, old_id, frames);
}

}  // namespace

hipError_t GraphRegistry::ExecSetNodeOp(Remote* s, hipGraphExec_t exec, hipGraphNode_t node, GraphOp op) {
  // ChangeExec calls this under r.mu (the analysis cannot follow a lock
  // into a lambda through a template parameter).
  return ChangeExec(*impl_, s, exec, node, [&](Registry& r, ExecNode& n) HIPR_NO_THREAD_SAFETY_ANALYSIS {
    if (n.type != NodeTypeOf(op)) return hipErrorInvalidValue;
    int device = 0;
    if (const auto* c = std::get_if<ChildGraphNode>(&op)) {
      Graph* g = r.FindGraph(c->graph);
      if (g == nullptr || Topology(*g) != n.shape) return hipErrorInvalidValue;
      std::vector<LoweredOp> ops;
      if (!Lower(device, op, &ops)) return hipErrorInvalidValue;
      n.ops = std::move(ops);
      return hipSuccess;
    }
    if (!n.ops.empty()) device = n.ops.front().device;
    // A kernel keeps the attributes it was instantiated with.
    if (auto* k = std::get_if<KernelNode>(&op); k != nullptr && !n.ops.empty()) {
      if (const auto* old = std::get_if<KernelNode>(&n.ops.front().op))
        k->request.flags = (k->request.flags & ~uint32_t{msg::kLaunchCooperative}) |
                           (old->request.flags & msg::kLaunchCooperative);
    }
    std::vector<LoweredOp> ops;
    (void)Lower(device, op, &ops);
    n.ops = std::move(ops);
    return hipSuccess;
  });
}

hipError_t GraphRegistry::ExecSetEnabled(Remote* s, hipGraphExec_t exec, hipGraphNode_t node, bool enabled) {
  return ChangeExec(*impl_, s, exec, node, [&](Registry&, ExecNode& n) {
    // As natively: kernel, memset and memcpy nodes can be turned off.
    if (n.type != hipGraphNodeTypeKernel && n.type != hipGraphNodeTypeMemset && n.type != hipGraphNodeTypeMemcpy)
      return hipErrorInvalidValue;
    n.enabled = enabled;
    return hipSuccess;
  });
}

hipError_t GraphRegistry::ExecGetEnabled(hipGraphExec_t exec, hipGraphNode_t node, bool* enabled) {
  if (enabled == nullptr) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto* e = reinterpret_cast<Exec*>(exec);
  if (r.execs.count(e) == 0) return hipErrorInvalidValue;
  const ExecNode* n = FindExecNode(*e, node);
  if (n == nullptr) return hipErrorInvalidValue;
  if (n->type != hipGraphNodeTypeKernel && n->type != hipGraphNodeTypeMemset && n->type != hipGraphNodeTypeMemcpy)
    return hipErrorInvalidValue;
  *enabled = n->enabled;
  return hipSuccess;
}

hipError_t GraphRegistry::ExecUpdate(Remote* s, hipGraphExec_t exec, hipGraph_t graph, hipGraphNode_t* error_node,
                                     hipGraphExecUpdateResult* result) {
  if (error_node == nullptr || result == nullptr) return hipErrorInvalidValue;
  *error_node = nullptr;
  Registry& r = *impl_;
  uint64_t old_id = 0;
  int exec_device = 0;
  std::vector<msg::GraphCreateRequest> frames;
  {
    MutexLock lock(r.mu);
    auto* e = reinterpret_cast<Exec*>(exec);
    Graph* g = r.FindGraph(graph);
    if (r.execs.count(e) == 0 || g == nullptr) return hipErrorInvalidValue;
    *result = hipGraphExecUpdateError;
    if (Topology(*g) != e->topology) {
      // Name the first node whose type differs, when that is the change.
      *result = hipGraphExecUpdateErrorTopologyChanged;
      for (const ExecNode& x : e->nodes) {
        if (x.index < g->nodes.size() && NodeTypeOf(g->nodes[x.index]->op) != x.type) {
          *result = hipGraphExecUpdateErrorNodeTypeChanged;
          *error_node = reinterpret_cast<hipGraphNode_t>(g->nodes[x.index].get());
          break;
        }
      }
      return hipErrorGraphExecUpdateFailure;
    }
    std::vector<ExecNode> next = e->nodes;
    for (ExecNode& x : next) {
      const Node& n = *g->nodes[x.index];
      ExecNode made;
      if (!MakeExecNode(n, x.index, &made)) return hipErrorGraphExecUpdateFailure;
      x.ops = std::move(made.ops);
      x.shape = std::move(made.shape);
    }
    std::swap(e->nodes, next);
    const void* odd = nullptr;
    const int device = e->device;
    if (!CheckOneDevice(*e, &odd) || (e->device != device && !e->ops.empty())) {
      std::swap(e->nodes, next);
      e->device = device;
      *result = hipGraphExecUpdateErrorNotSupported;
      for (const auto& n : g->nodes)
        if (n.get() == odd) *error_node = reinterpret_cast<hipGraphNode_t>(n.get());
      return hipErrorGraphExecUpdateFailure;
    }
    *result = hipGraphExecUpdateSuccess;
    Rebuild(s, *e, r.next_exec, &old_id, &frames);
    exec_device = e->device;
  }
  return Publish(s, exec_device, old_id, frames);
}

void GraphRegistry::LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { impl_->mu.lock(); }

void GraphRegistry::UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { impl_->mu.unlock(); }

// Only the child's one thread runs here, and it re-creates the lock.
void GraphRegistry::ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS {
  Registry& r = *impl_;
  new (&r.mu) Mutex();
  for (auto& [stream, capture] : r.streams)
    if (capture.seq->origin == stream) r.DeleteGraphOf(capture.seq);
  r.streams.clear();
  r.events.clear();
  r.captures.store(0, std::memory_order_relaxed);
  for (Exec* e : r.execs) e->on_worker = false;
}

hipError_t GraphRegistry::GraphLaunch(Client& c, Remote* s, ManagedHooks& managed, hipGraphExec_t exec,
                                      hipStream_t stream, int device, uint64_t stream_id, HostCopyFn copy) {
  if (s == nullptr) return hipErrorNoDevice;
  Registry& r = *impl_;
  const Exec* e = nullptr;
  {
    MutexLock lock(r.mu);
    auto* p = reinterpret_cast<Exec*>(exec);
    if (r.execs.count(p) == 0) return hipErrorInvalidValue;
    if (!p->user_refs.empty()) p->launched_on.emplace(device, stream_id);
    e = p;  // Destroying an exec while launching it is the application's race, as natively.
  }
  if (device != e->device && !e->ops.empty()) return hipErrorInvalidValue;
  {
    // Launching a graph into a capture (a child graph node) is not supported.
    MutexLock lock(r.mu);
    if (r.streams.count(stream_id) != 0) {
      HIPR_LOG_ONCE(kWarn, "hipGraphLaunch into a capturing stream is not supported; "
                                     "returning hipErrorStreamCaptureUnsupported");
      return hipErrorStreamCaptureUnsupported;
    }
  }
  if (!e->on_worker) return Replay(c.handles(), *s, *e, stream, device, stream_id, copy);
  msg::GraphLaunchRequest req{e->id, device, stream_id, {}};
  for (const GraphOp& op : e->ops) {
    if (const auto* h = std::get_if<HostFnNode>(&op)) req.callbacks.push_back(s->AddHostCallback(device, HostFunction(*h, stream)));
    // Counted before it is posted, as hipEventRecord does.
    if (const auto* ev = std::get_if<EventRecordNode>(&op)) c.handles().NoteEventRecorded(ev->event);
  }
  // A graph may read and write any managed memory, as a kernel may.
  if (!managed.empty()) {
    if (Status pushed = managed.Push(c, *s, device, stream_id); !pushed.ok()) return ToHipError(pushed);
    managed.MarkWritten(*s, device, stream_id);
  }
  Status st = s->Post<wire::Op::kGraphLaunch>(req);
  if (!st.ok()) {
    for (uint64_t id : req.callbacks) s->DropHostCallback(device, id);
    return ToHipError(st);
  }
  stats::Add(stats::Get().graph_launches);
  return hipSuccess;
}

}  // namespace hipr::client

namespace hipr::client {

hipError_t GraphRegistry::UserObjectCreate(UserObject** out, void* ptr, hipHostFn_t destroy, unsigned refs) {
  if (out == nullptr || destroy == nullptr || refs == 0) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  auto* o = new UserObject{ptr, destroy, refs};
  r.user_objects.insert(o);
  *out = o;
  return hipSuccess;
}

hipError_t GraphRegistry::UserObjectRetain(UserObject* object, unsigned count) {
  if (count == 0) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  if (r.user_objects.count(object) == 0) return hipErrorInvalidValue;
  object->refs += count;
  return hipSuccess;
}

hipError_t GraphRegistry::UserObjectRelease(UserObject* object, unsigned count) {
  if (count == 0) return hipErrorInvalidValue;
  Registry& r = *impl_;
  {
    MutexLock lock(r.mu);
    if (r.user_objects.count(object) == 0 || object->refs < count) return hipErrorInvalidValue;
    r.Release(object, count);
  }
  RunDestructors(r);
  return hipSuccess;
}

hipError_t GraphRegistry::GraphRetainUserObject(hipGraph_t graph, UserObject* object, unsigned count, bool move) {
  if (count == 0) return hipErrorInvalidValue;
  Registry& r = *impl_;
  MutexLock lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr || r.user_objects.count(object) == 0) return hipErrorInvalidValue;
  if (move && object->refs < count) return hipErrorInvalidValue;  // The caller holds fewer.
  if (!move) object->refs += count;
  g->user_refs[object] += count;
  return hipSuccess;
}

hipError_t GraphRegistry::GraphReleaseUserObject(hipGraph_t graph, UserObject* object, unsigned count) {
  if (count == 0) return hipErrorInvalidValue;
  Registry& r = *impl_;
  {
    MutexLock lock(r.mu);
    Graph* g = r.FindGraph(graph);
    if (g == nullptr || r.user_objects.count(object) == 0) return hipErrorInvalidValue;
    auto it = g->user_refs.find(object);
    if (it == g->user_refs.end() || it->second < count) return hipErrorInvalidValue;
    if ((it->second -= count) == 0) g->user_refs.erase(it);
    r.Release(object, count);
  }
  RunDestructors(r);
  return hipSuccess;
}

}  // namespace hipr::client
