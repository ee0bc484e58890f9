#include "client_stub/graph.h"

#include <algorithm>
#include <deque>
#include <mutex>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "client_stub/api_common.h"
#include "client_stub/stats.h"
#include "protocol/codec.h"

namespace hipr::client {
namespace {

struct Graph;

struct Node {
  GraphOp op;
  int device = 0;
  Graph* graph = nullptr;
  std::vector<Node*> deps;
  std::vector<Node*> dependents;
};

struct Graph {
  std::vector<std::unique_ptr<Node>> nodes;  // In creation order.
};

struct Exec {
  uint64_t id = 0;  // The worker's graph id (when on_worker).
  int device = 0;
  std::vector<GraphOp> ops;  // In launch order.
  bool on_worker = false;
};

// One capture sequence: the streams that joined it share it.
struct CaptureSeq {
  unsigned long long id = 0;
  Graph* graph = nullptr;  // Owned until EndCapture hands it out.
  int device = 0;
  uint64_t origin = 0;
  hipStreamCaptureMode mode = hipStreamCaptureModeGlobal;
  bool invalidated = false;
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

class Registry {
 public:
  static Registry& Get() {
    static Registry* r = new Registry;  // Leaked: used until exit.
    return *r;
  }

  std::mutex mu;
  std::atomic<int> captures{0};  // Live capturing streams; 0 keeps the launch path lock-free.
  std::unordered_set<Graph*> graphs;
  std::unordered_set<Node*> nodes;
  std::unordered_set<Exec*> execs;
  std::unordered_map<uint64_t, StreamCapture> streams;  // By protocol stream id.
  std::unordered_map<uint64_t, CapturedEvent> events;   // By protocol event id.
  unsigned long long next_capture = 1;
  std::atomic<uint64_t> next_exec{1};

  Graph* FindGraph(hipGraph_t g) {
    auto* p = reinterpret_cast<Graph*>(g);
    return graphs.count(p) != 0 ? p : nullptr;
  }
  Node* FindNode(hipGraphNode_t n) {
    auto* p = reinterpret_cast<Node*>(n);
    return nodes.count(p) != 0 ? p : nullptr;
  }

  Node* AddNode(Graph* g, int device, GraphOp op, const std::vector<Node*>& deps) {
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

  void DeleteGraph(Graph* g) {
    for (auto& n : g->nodes) nodes.erase(n.get());
    graphs.erase(g);
    delete g;
  }

  // A capture's graph under construction (not yet a live graph).
  void DeleteGraphOf(const std::shared_ptr<CaptureSeq>& seq) {
    for (auto& n : seq->graph->nodes) nodes.erase(n.get());
    delete seq->graph;
    seq->graph = nullptr;
  }

  // Ends every stream's part in `seq` (and forgets its events).
  void EndSeq(const std::shared_ptr<CaptureSeq>& seq) {
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
};

constinit thread_local hipStreamCaptureMode t_capture_mode = hipStreamCaptureModeGlobal;

template <class T>
hipError_t FillList(const std::vector<T*>& items, hipGraphNode_t* out, size_t* count) {
  if (count == nullptr) return hipErrorInvalidValue;
  if (out != nullptr) {
    for (size_t i = 0; i < *count; ++i)
      out[i] = i < items.size() ? reinterpret_cast<hipGraphNode_t>(items[i]) : nullptr;
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

// Graph frames stay well inside the body limits (wire.h): nodes go in
// chunks, each node's body must fit a msgpack bin.
constexpr size_t kNodesPerFrame = 1024;
constexpr size_t kBodyBytesPerFrame = 512u << 10;
constexpr size_t kMaxNodeBody = 60u << 10;

// Sends `exec` to the worker as one or more kGraphCreate frames; false when a
// node cannot travel that way (then the client replays it).
bool BuildWorkerGraph(const Exec& exec, std::vector<msg::GraphCreateRequest>* frames) {
  msg::GraphCreateRequest cur{exec.id, exec.device, {}, false};
  size_t bytes = 0;
  for (const GraphOp& op : exec.ops) {
    msg::GraphNode n;
    if (const auto* l = std::get_if<msg::LaunchRequest>(&op)) {
      n = {static_cast<uint16_t>(wire::Op::kLaunchKernel), EncodeBody(*l)};
    } else if (const auto* m = std::get_if<msg::MemsetRequest>(&op)) {
      n = {static_cast<uint16_t>(wire::Op::kMemset), EncodeBody(*m)};
    } else if (const auto* c = std::get_if<msg::CopyOnDeviceRequest>(&op)) {
      n = {static_cast<uint16_t>(wire::Op::kCopyOnDevice), EncodeBody(*c)};
    } else if (std::holds_alternative<HostFnNode>(op)) {
      n = {static_cast<uint16_t>(wire::Op::kStreamHostCallback), {}};
    } else if (std::holds_alternative<EmptyNode>(op)) {
      continue;
    } else {
      return false;  // Host copies.
    }
    if (n.body.size() > kMaxNodeBody) return false;
    if (cur.nodes.size() == kNodesPerFrame || bytes + n.body.size() > kBodyBytesPerFrame) {
      frames->push_back(std::move(cur));
      cur = msg::GraphCreateRequest{exec.id, exec.device, {}, true};
      bytes = 0;
    }
    bytes += n.body.size() + 8;
    cur.nodes.push_back(std::move(n));
  }
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
hipError_t Replay(Session& s, const Exec& exec, hipStream_t stream, int device, uint64_t stream_id, HostCopyFn copy) {
  for (const GraphOp& op : exec.ops) {
    Status st;
    if (const auto* l = std::get_if<msg::LaunchRequest>(&op)) {
      msg::LaunchRequest r = *l;
      r.device = device;
      r.stream = stream_id;
      st = s.Post(wire::Op::kLaunchKernel, r);
      if (st.ok()) stats::Add(stats::Get().launches);
    } else if (const auto* m = std::get_if<msg::MemsetRequest>(&op)) {
      msg::MemsetRequest r = *m;
      r.device = device;
      r.stream = stream_id;
      st = s.Post(wire::Op::kMemset, r);
    } else if (const auto* c = std::get_if<msg::CopyOnDeviceRequest>(&op)) {
      msg::CopyOnDeviceRequest r = *c;
      r.device = device;
      r.stream = stream_id;
      r.want_reply = false;
      st = s.Post(wire::Op::kCopyOnDevice, r);
    } else if (const auto* h = std::get_if<HostCopyNode>(&op)) {
      if (hipError_t e = copy(*h, stream); e != hipSuccess) return e;
    } else if (const auto* f = std::get_if<HostFnNode>(&op)) {
      st = s.PostHostCallback(device, stream_id, HostFunction(*f, stream));
    }
    if (!st.ok()) return ToHipError(st);
  }
  return hipSuccess;
}

}  // namespace

hipGraphNodeType NodeTypeOf(const GraphOp& op) {
  if (std::holds_alternative<msg::LaunchRequest>(op)) return hipGraphNodeTypeKernel;
  if (std::holds_alternative<msg::MemsetRequest>(op)) return hipGraphNodeTypeMemset;
  if (std::holds_alternative<msg::CopyOnDeviceRequest>(op) || std::holds_alternative<HostCopyNode>(op))
    return hipGraphNodeTypeMemcpy;
  if (std::holds_alternative<HostFnNode>(op)) return hipGraphNodeTypeHost;
  return hipGraphNodeTypeEmpty;
}

bool AnyCapture() { return Registry::Get().captures.load(std::memory_order_relaxed) != 0; }

bool CaptureNode(int device, uint64_t stream, GraphOp op, hipError_t* result) {
  Registry& r = Registry::Get();
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lock(r.mu);
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
  if (c.seq->invalidated) {
    *result = hipErrorStreamCaptureInvalidated;
    return true;
  }
  Node* n = r.AddNode(c.seq->graph, device, std::move(op), c.deps);
  c.deps = {n};
  *result = hipSuccess;
  return true;
}

bool CaptureEventRecord(int device, uint64_t stream, uint64_t event, hipError_t* result) {
  Registry& r = Registry::Get();
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lock(r.mu);
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

bool CaptureStreamWaitEvent(int device, uint64_t stream, uint64_t event, hipError_t* result) {
  Registry& r = Registry::Get();
  if (r.captures.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard lock(r.mu);
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

hipError_t CheckNotCapturing(int device, uint64_t stream, bool any_capture) {
  Registry& r = Registry::Get();
  if (r.captures.load(std::memory_order_relaxed) == 0) return hipSuccess;
  std::lock_guard lock(r.mu);
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

hipError_t BeginCapture(int device, uint64_t stream, unsigned stream_flags, hipStreamCaptureMode mode) {
  if (mode < hipStreamCaptureModeGlobal || mode > hipStreamCaptureModeRelaxed) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  if (r.streams.count(stream) != 0) return hipErrorIllegalState;
  auto seq = std::make_shared<CaptureSeq>();
  seq->id = r.next_capture++;
  seq->graph = new Graph;
  seq->device = device;
  seq->origin = stream;
  seq->mode = mode;
  StreamCapture c;
  c.seq = std::move(seq);
  c.blocking = (stream_flags & hipStreamNonBlocking) == 0;
  r.streams.emplace(stream, std::move(c));
  r.captures.fetch_add(1, std::memory_order_relaxed);
  return hipSuccess;
}

hipError_t EndCapture(uint64_t stream, hipGraph_t* graph) {
  if (graph == nullptr) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  auto it = r.streams.find(stream);
  if (it == r.streams.end()) return hipErrorIllegalState;
  std::shared_ptr<CaptureSeq> seq = it->second.seq;
  if (seq->origin != stream) {
    seq->invalidated = true;
    return hipErrorStreamCaptureUnmatched;
  }
  r.EndSeq(seq);
  if (seq->invalidated) {
    r.DeleteGraphOf(seq);
    *graph = nullptr;
    return hipErrorStreamCaptureInvalidated;
  }
  r.graphs.insert(seq->graph);  // Its nodes are live since they were captured.
  *graph = reinterpret_cast<hipGraph_t>(seq->graph);
  return hipSuccess;
}

hipError_t CaptureInfo(uint64_t stream, hipStreamCaptureStatus* status, unsigned long long* id, hipGraph_t* graph,
                       const hipGraphNode_t** deps, size_t* dep_count) {
  if (status == nullptr) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
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

hipStreamCaptureMode ExchangeThreadCaptureMode(hipStreamCaptureMode mode) {
  return std::exchange(t_capture_mode, mode);
}

hipError_t GraphCreate(hipGraph_t* graph) {
  if (graph == nullptr) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  auto* g = new Graph;
  r.graphs.insert(g);
  *graph = reinterpret_cast<hipGraph_t>(g);
  return hipSuccess;
}

hipError_t GraphDestroy(hipGraph_t graph) {
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  r.DeleteGraph(g);
  return hipSuccess;
}

hipError_t GraphAddNode(hipGraph_t graph, const hipGraphNode_t* deps, size_t dep_count, int device, GraphOp op,
                        hipGraphNode_t* out) {
  if (out == nullptr || (dep_count > 0 && deps == nullptr)) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  std::vector<Node*> d;
  for (size_t i = 0; i < dep_count; ++i) {
    Node* n = r.FindNode(deps[i]);
    if (n == nullptr || n->graph != g) return hipErrorInvalidValue;
    if (std::find(d.begin(), d.end(), n) == d.end()) d.push_back(n);
  }
  *out = reinterpret_cast<hipGraphNode_t>(r.AddNode(g, device, std::move(op), d));
  return hipSuccess;
}

hipError_t GraphAddDependencies(hipGraph_t graph, const hipGraphNode_t* from, const hipGraphNode_t* to,
                                size_t count) {
  if (count > 0 && (from == nullptr || to == nullptr)) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
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

hipError_t GraphGetNodes(hipGraph_t graph, hipGraphNode_t* out, size_t* count, bool roots_only) {
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  Graph* g = r.FindGraph(graph);
  if (g == nullptr) return hipErrorInvalidValue;
  std::vector<Node*> list;
  for (auto& n : g->nodes)
    if (!roots_only || n->deps.empty()) list.push_back(n.get());
  return FillList(list, out, count);
}

hipError_t GraphGetEdges(hipGraph_t graph, hipGraphNode_t* from, hipGraphNode_t* to, size_t* count) {
  if (count == nullptr || ((from == nullptr) != (to == nullptr))) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
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
  }
  *count = a.size();
  return hipSuccess;
}

hipError_t NodeGetType(hipGraphNode_t node, hipGraphNodeType* type) {
  if (type == nullptr) return hipErrorInvalidValue;
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  *type = NodeTypeOf(n->op);
  return hipSuccess;
}

hipError_t NodeGetDependencies(hipGraphNode_t node, hipGraphNode_t* out, size_t* count, bool dependents) {
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  return FillList(dependents ? n->dependents : n->deps, out, count);
}

hipError_t NodeGetOp(hipGraphNode_t node, GraphOp* op) {
  Registry& r = Registry::Get();
  std::lock_guard lock(r.mu);
  Node* n = r.FindNode(node);
  if (n == nullptr) return hipErrorInvalidValue;
  *op = n->op;
  return hipSuccess;
}

hipError_t GraphInstantiate(hipGraph_t graph, hipGraphExec_t* exec, hipGraphNode_t* error_node) {
  if (exec == nullptr) return hipErrorInvalidValue;
  if (error_node != nullptr) *error_node = nullptr;
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  Registry& r = Registry::Get();
  auto e = std::make_unique<Exec>();
  {
    std::lock_guard lock(r.mu);
    Graph* g = r.FindGraph(graph);
    if (g == nullptr) return hipErrorInvalidValue;
    std::vector<const Node*> order;
    if (!Order(*g, &order)) return hipErrorInvalidValue;  // A cycle.
    bool have_device = false;
    for (const Node* n : order) {
      if (std::holds_alternative<EmptyNode>(n->op)) continue;
      if (!have_device) {
        e->device = n->device;
        have_device = true;
      } else if (n->device != e->device) {
        // Every node of one executable graph replays on the launch's device.
        HIPR_LOG_ONCE(kWarn, "hipGraphInstantiate: a graph spanning devices is not supported; "
                                       "returning hipErrorNotSupported");
        if (error_node != nullptr) *error_node = reinterpret_cast<hipGraphNode_t>(const_cast<Node*>(n));
        return hipErrorNotSupported;
      }
    }
    for (const Node* n : order) e->ops.push_back(n->op);
  }
  e->id = r.next_exec.fetch_add(1, std::memory_order_relaxed);
  std::vector<msg::GraphCreateRequest> frames;
  e->on_worker = BuildWorkerGraph(*e, &frames);
  if (e->on_worker) {
    for (const auto& f : frames)
      if (Status st = s->Post(wire::Op::kGraphCreate, f); !st.ok()) return ToHipError(st);
  }
  std::lock_guard lock(r.mu);
  r.execs.insert(e.get());
  *exec = reinterpret_cast<hipGraphExec_t>(e.release());
  return hipSuccess;
}

hipError_t GraphExecDestroy(hipGraphExec_t exec) {
  Registry& r = Registry::Get();
  std::unique_ptr<Exec> e;
  {
    std::lock_guard lock(r.mu);
    auto* p = reinterpret_cast<Exec*>(exec);
    if (r.execs.erase(p) == 0) return hipErrorInvalidValue;
    e.reset(p);
  }
  if (!e->on_worker) return hipSuccess;
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  return ToHipError(s->Post(wire::Op::kGraphDestroy, msg::GraphRequest{e->id}));
}

void GraphsLockForFork() { Registry::Get().mu.lock(); }

void GraphsUnlockInParent() { Registry::Get().mu.unlock(); }

void GraphsResetInChild() {
  Registry& r = Registry::Get();
  new (&r.mu) std::mutex();
  for (auto& [stream, capture] : r.streams)
    if (capture.seq->origin == stream) r.DeleteGraphOf(capture.seq);
  r.streams.clear();
  r.events.clear();
  r.captures.store(0, std::memory_order_relaxed);
  for (Exec* e : r.execs) e->on_worker = false;
}

hipError_t GraphLaunch(hipGraphExec_t exec, hipStream_t stream, int device, uint64_t stream_id, HostCopyFn copy) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  Registry& r = Registry::Get();
  const Exec* e = nullptr;
  {
    std::lock_guard lock(r.mu);
    auto* p = reinterpret_cast<Exec*>(exec);
    if (r.execs.count(p) == 0) return hipErrorInvalidValue;
    e = p;  // Destroying an exec while launching it is the application's race, as natively.
  }
  if (device != e->device && !e->ops.empty()) return hipErrorInvalidValue;
  {
    // Launching a graph into a capture (a child graph node) is not supported.
    std::lock_guard lock(r.mu);
    if (r.streams.count(stream_id) != 0) {
      HIPR_LOG_ONCE(kWarn, "hipGraphLaunch into a capturing stream is not supported; "
                                     "returning hipErrorStreamCaptureUnsupported");
      return hipErrorStreamCaptureUnsupported;
    }
  }
  if (!e->on_worker) return Replay(*s, *e, stream, device, stream_id, copy);
  msg::GraphLaunchRequest req{e->id, device, stream_id, {}};
  for (const GraphOp& op : e->ops)
    if (const auto* h = std::get_if<HostFnNode>(&op)) req.callbacks.push_back(s->AddHostCallback(HostFunction(*h, stream)));
  Status st = s->Post(wire::Op::kGraphLaunch, req);
  if (!st.ok()) {
    for (uint64_t id : req.callbacks) s->DropHostCallback(id);
    return ToHipError(st);
  }
  stats::Add(stats::Get().graph_launches);
  return hipSuccess;
}

}  // namespace hipr::client
