// The verbs double's devices, contexts, protection domains, memory regions,
// completion queues, completion channels and async events. Queue pairs and
// the engine are in verbs_double_qp.cc. Every ibv_* here has the signature
// of <infiniband/verbs.h>; none lets an exception out.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>

#include "protocol/rdma/verbs_double/verbs_double.h"
#include "protocol/rdma/verbs_double/verbs_double_internal.h"

// verbs.h turns these names into macros that pick an implementation; the
// double defines the functions themselves.
#undef ibv_reg_mr
#undef ibv_query_port

namespace hipr::verbs_double {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Registry& GlobalRegistry() {
  // Never destroyed: engines of QPs an application leaks may still use it at exit.
  static Registry* r = [] {
    auto* reg = new Registry;
    // A child forked while an engine holds the lock would inherit it held:
    // fork with the table consistent, and give the child a fresh lock (its
    // parent's engines do not exist in it).
    pthread_atfork([] { GlobalRegistry().mu.lock(); }, [] { GlobalRegistry().mu.unlock(); },
                   [] { new (&GlobalRegistry().mu) std::shared_mutex; });
    return reg;
  }();
  return *r;
}

Mr* Registry::Find(uint32_t key) const {
  for (Mr* m : mrs)
    if (m->mr.lkey == key) return m;
  return nullptr;
}

uint32_t NewKey(const Registry& r) {
  static std::mt19937 rng(static_cast<uint32_t>(NowNs() ^ getpid()));
  for (;;) {
    uint32_t k = rng();
    if (k != 0 && r.Find(k) == nullptr) return k;
  }
}

void Cq::Push(const ibv_wc& wc) {
  bool fire = false;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (static_cast<int>(q.size()) >= capacity) {
      overrun = true;  // The consumer learns of it from ibv_poll_cq.
      return;
    }
    q.push_back(wc);
    fire = armed && channel != nullptr;
    armed = false;
  }
  if (fire) {
    {
      std::lock_guard<std::mutex> lock(channel->mu);
      channel->fired.push_back(this);
    }
    const uint64_t one = 1;
    (void)!write(channel->ch.fd, &one, sizeof one);
  }
}

void Context::RaiseAsync(const ibv_async_event& e) {
  {
    std::lock_guard<std::mutex> lock(async_mu);
    async_events.push_back(e);
  }
  const uint64_t one = 1;
  (void)!write(ctx.async_fd, &one, sizeof one);
}

namespace {

constexpr const char* kDeviceName = "hipr_double0";

ibv_device* Device() {
  static ibv_device* dev = [] {
    auto* d = new ibv_device{};
    d->node_type = IBV_NODE_CA;
    d->transport_type = IBV_TRANSPORT_IB;
    std::snprintf(d->name, sizeof d->name, "%s", kDeviceName);
    std::snprintf(d->dev_name, sizeof d->dev_name, "uverbs-double0");
    std::snprintf(d->dev_path, sizeof d->dev_path, "/nonexistent/hipr_verbs_double");
    std::snprintf(d->ibdev_path, sizeof d->ibdev_path, "/nonexistent/hipr_verbs_double");
    return d;
  }();
  return dev;
}

int PollCq(ibv_cq* cq, int n, ibv_wc* wc) {
  auto* c = reinterpret_cast<Cq*>(cq);
  std::lock_guard<std::mutex> lock(c->mu);
  if (c->overrun) return -1;
  int got = 0;
  while (got < n && !c->q.empty()) {
    wc[got++] = c->q.front();
    c->q.pop_front();
  }
  return got;
}

int ReqNotifyCq(ibv_cq* cq, int solicited_only) {
  auto* c = reinterpret_cast<Cq*>(cq);
  if (c->channel == nullptr) return EINVAL;
  std::lock_guard<std::mutex> lock(c->mu);
  c->armed = true;
  return 0;
}

bool Mapped(uintptr_t start, uint64_t length) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = start & ~(page - 1);
  const uintptr_t last = (start + length + page - 1) & ~(page - 1);
  std::vector<unsigned char> v((last - first) / page);
  // ENOMEM: part of the range is not mapped (the kernel's pin would fail).
  return mincore(reinterpret_cast<void*>(first), last - first, v.data()) == 0;
}

}  // namespace

// Defined in verbs_double_qp.cc: the ops the inline ibv_post_* call.
int PostSend(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad);
int PostRecv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad);

const char* FabricEnv() { return kFabricEnv; }

}  // namespace hipr::verbs_double

using namespace hipr::verbs_double;

ibv_device** ibv_get_device_list(int* num_devices) {
  try {
    const char* dir = std::getenv(kFabricEnv);
    const bool present = dir != nullptr && *dir != '\0' && access(dir, W_OK | X_OK) == 0;
    auto** list = static_cast<ibv_device**>(std::calloc(2, sizeof(ibv_device*)));
    if (list == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
    if (present) list[0] = Device();
    if (num_devices != nullptr) *num_devices = present ? 1 : 0;
    return list;
  } catch (...) {
    errno = ENOMEM;
    return nullptr;
  }
}

void ibv_free_device_list(ibv_device** list) { std::free(list); }

const char* ibv_get_device_name(ibv_device* device) { return device != nullptr ? device->name : nullptr; }

ibv_context* ibv_open_device(ibv_device* device) {
  const char* dir = std::getenv(kFabricEnv);
  if (device != Device() || dir == nullptr) {
    errno = ENODEV;
    return nullptr;
  }
  Context* c = new (std::nothrow) Context;
  if (c == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  try {
    c->dir = dir;
  } catch (...) {
    delete c;
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(&c->ctx, 0, sizeof c->ctx);
  c->ctx.device = device;
  c->ctx.ops.poll_cq = PollCq;
  c->ctx.ops.req_notify_cq = ReqNotifyCq;
  c->ctx.ops.post_send = PostSend;
  c->ctx.ops.post_recv = PostRecv;
  c->ctx.cmd_fd = -1;
  c->ctx.async_fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  c->ctx.num_comp_vectors = 1;
  c->ctx.abi_compat = nullptr;  // Not a verbs_context: the extended inline verbs say EOPNOTSUPP.
  pthread_mutex_init(&c->ctx.mutex, nullptr);
  if (c->ctx.async_fd < 0) {
    delete c;
    return nullptr;
  }
  // A GID per open device, as distinct hosts would have: fe80::pid:counter.
  static std::atomic<uint32_t> opened{0};
  std::memset(c->gid, 0, sizeof c->gid);
  c->gid[0] = 0xfe;
  c->gid[1] = 0x80;
  const uint32_t pid = static_cast<uint32_t>(getpid());
  const uint32_t n = ++opened;
  std::memcpy(c->gid + 8, &pid, 4);
  std::memcpy(c->gid + 12, &n, 4);
  return &c->ctx;
}

int ibv_close_device(ibv_context* context) {
  auto* c = reinterpret_cast<Context*>(context);
  if (c->users.load() != 0) return EBUSY;
  close(c->ctx.async_fd);
  pthread_mutex_destroy(&c->ctx.mutex);
  delete c;
  return 0;
}

int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  std::memset(attr, 0, sizeof *attr);
  std::snprintf(attr->fw_ver, sizeof attr->fw_ver, "hipr-verbs-double");
  attr->max_mr_size = kMaxMrBytes;
  attr->page_size_cap = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  attr->max_qp = 1 << 16;
  attr->max_qp_wr = kMaxQpWr;
  attr->max_sge = kMaxSge;
  attr->max_cq = 1 << 16;
  attr->max_cqe = kMaxCqe;
  attr->max_mr = 1 << 20;
  attr->max_pd = 1 << 16;
  attr->max_qp_rd_atom = kMaxRdAtomic;
  attr->max_qp_init_rd_atom = kMaxRdAtomic;
  attr->max_res_rd_atom = kMaxRdAtomic << 16;
  attr->phys_port_cnt = 1;
  return 0;
}

int ibv_query_port(ibv_context* context, uint8_t port_num, _compat_ibv_port_attr* compat) {
  if (port_num != 1) return EINVAL;
  // verbs.h's inline ibv_query_port passes a zeroed struct ibv_port_attr.
  auto* attr = reinterpret_cast<ibv_port_attr*>(compat);
  attr->state = IBV_PORT_ACTIVE;
  attr->max_mtu = IBV_MTU_4096;
  attr->active_mtu = IBV_MTU_4096;
  attr->gid_tbl_len = 1;
  attr->max_msg_sz = 1u << 31;
  attr->pkey_tbl_len = 1;
  attr->link_layer = IBV_LINK_LAYER_ETHERNET;  // RoCE-like: addressed by GID.
  attr->active_width = 2;
  attr->active_speed = 32;
  attr->phys_state = 5;  // LinkUp.
  return 0;
}

int ibv_query_gid(ibv_context* context, uint8_t port_num, int index, ibv_gid* gid) {
  if (port_num != 1 || index != 0) return -1;
  std::memcpy(gid->raw, reinterpret_cast<Context*>(context)->gid, 16);
  return 0;
}

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  Pd* p = new (std::nothrow) Pd;
  if (p == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  p->ctx = reinterpret_cast<Context*>(context);
  p->pd.context = context;
  p->pd.handle = 0;
  ++p->ctx->users;
  return &p->pd;
}

int ibv_dealloc_pd(ibv_pd* pd) {
  auto* p = reinterpret_cast<Pd*>(pd);
  if (p->users.load() != 0) return EBUSY;
  --p->ctx->users;
  delete p;
  return 0;
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned int access) {
  const unsigned known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                         IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;
  // Remote write or atomic access needs local write, as on every NIC.
  if ((access & ~known) != 0 || iova != reinterpret_cast<uintptr_t>(addr) || length == 0 || length > kMaxMrBytes ||
      ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))) {
    errno = EINVAL;
    return nullptr;
  }
  if (!Mapped(reinterpret_cast<uintptr_t>(addr), length)) {
    errno = EFAULT;
    return nullptr;
  }
  Mr* m = new (std::nothrow) Mr;
  if (m == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  m->pd = reinterpret_cast<Pd*>(pd);
  m->start = reinterpret_cast<uintptr_t>(addr);
  m->length = length;
  m->access = static_cast<int>(access);
  m->mr.context = pd->context;
  m->mr.pd = pd;
  m->mr.addr = addr;
  m->mr.length = length;
  m->mr.handle = 0;
  Registry& r = GlobalRegistry();
  try {
    std::unique_lock<std::shared_mutex> lock(r.mu);
    m->mr.lkey = m->mr.rkey = NewKey(r);
    r.mrs.push_back(m);
  } catch (...) {
    delete m;
    errno = ENOMEM;
    return nullptr;
  }
  ++m->pd->users;
  return &m->mr;
}

ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return ibv_reg_mr_iova2(pd, addr, length, reinterpret_cast<uintptr_t>(addr), static_cast<unsigned>(access));
}

int ibv_dereg_mr(ibv_mr* mr) {
  auto* m = reinterpret_cast<Mr*>(mr);
  Registry& r = GlobalRegistry();
  {
    // Waits for any engine copying into or out of it.
    std::unique_lock<std::shared_mutex> lock(r.mu);
    auto it = std::find(r.mrs.begin(), r.mrs.end(), m);
    if (it == r.mrs.end()) return EINVAL;
    r.mrs.erase(it);
  }
  --m->pd->users;
  delete m;
  return 0;
}

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  Channel* ch = new (std::nothrow) Channel;
  if (ch == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  ch->ch.context = context;
  ch->ch.refcnt = 0;
  // One count per event: ibv_get_cq_event reads one at a time.
  ch->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  if (ch->ch.fd < 0) {
    delete ch;
    return nullptr;
  }
  ++reinterpret_cast<Context*>(context)->users;
  return &ch->ch;
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  auto* ch = reinterpret_cast<Channel*>(channel);
  if (ch->ch.refcnt != 0) return EBUSY;
  close(ch->ch.fd);
  --reinterpret_cast<Context*>(ch->ch.context)->users;
  delete ch;
  return 0;
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context, ibv_comp_channel* channel,
                      int comp_vector) {
  if (cqe <= 0 || cqe > kMaxCqe || comp_vector != 0) {
    errno = EINVAL;
    return nullptr;
  }
  Cq* c = new (std::nothrow) Cq;
  if (c == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(&c->cq, 0, sizeof c->cq);
  c->cq.context = context;
  c->cq.channel = channel;
  c->cq.cq_context = cq_context;
  c->cq.cqe = cqe;
  pthread_mutex_init(&c->cq.mutex, nullptr);
  pthread_cond_init(&c->cq.cond, nullptr);
  c->capacity = cqe;
  c->channel = reinterpret_cast<Channel*>(channel);
  if (channel != nullptr) ++channel->refcnt;
  ++reinterpret_cast<Context*>(context)->users;
  return &c->cq;
}

int ibv_destroy_cq(ibv_cq* cq) {
  auto* c = reinterpret_cast<Cq*>(cq);
  if (c->users.load() != 0) return EBUSY;
  if (c->channel != nullptr) {
    std::lock_guard<std::mutex> lock(c->channel->mu);
    auto& f = c->channel->fired;
    f.erase(std::remove(f.begin(), f.end(), c), f.end());
    --c->channel->ch.refcnt;
  }
  --reinterpret_cast<Context*>(cq->context)->users;
  pthread_mutex_destroy(&c->cq.mutex);
  pthread_cond_destroy(&c->cq.cond);
  delete c;
  return 0;
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context) {
  auto* ch = reinterpret_cast<Channel*>(channel);
  uint64_t v;
  // Blocks unless the caller made the descriptor non-blocking.
  if (read(ch->ch.fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return -1;
  std::lock_guard<std::mutex> lock(ch->mu);
  if (ch->fired.empty()) {
    errno = EAGAIN;  // Its CQ was destroyed meanwhile.
    return -1;
  }
  Cq* c = ch->fired.front();
  ch->fired.pop_front();
  *cq = &c->cq;
  *cq_context = c->cq.cq_context;
  return 0;
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  auto* c = reinterpret_cast<Cq*>(cq);
  std::lock_guard<std::mutex> lock(c->mu);
  c->cq.comp_events_completed += nevents;
}

int ibv_get_async_event(ibv_context* context, ibv_async_event* event) {
  auto* c = reinterpret_cast<Context*>(context);
  uint64_t v;
  if (read(c->ctx.async_fd, &v, sizeof v) != static_cast<ssize_t>(sizeof v)) return -1;
  std::lock_guard<std::mutex> lock(c->async_mu);
  if (c->async_events.empty()) {
    errno = EAGAIN;
    return -1;
  }
  *event = c->async_events.front();
  c->async_events.pop_front();
  return 0;
}

void ibv_ack_async_event(ibv_async_event* event) {}

const char* ibv_wc_status_str(ibv_wc_status status) {
  switch (status) {
    case IBV_WC_SUCCESS: return "success";
    case IBV_WC_LOC_LEN_ERR: return "local length error";
    case IBV_WC_LOC_QP_OP_ERR: return "local QP operation error";
    case IBV_WC_LOC_EEC_OP_ERR: return "local EE context operation error";
    case IBV_WC_LOC_PROT_ERR: return "local protection error";
    case IBV_WC_WR_FLUSH_ERR: return "Work Request Flushed Error";
    case IBV_WC_MW_BIND_ERR: return "memory management operation error";
    case IBV_WC_BAD_RESP_ERR: return "bad response error";
    case IBV_WC_LOC_ACCESS_ERR: return "local access error";
    case IBV_WC_REM_INV_REQ_ERR: return "remote invalid request error";
    case IBV_WC_REM_ACCESS_ERR: return "remote access error";
    case IBV_WC_REM_OP_ERR: return "remote operation error";
    case IBV_WC_RETRY_EXC_ERR: return "transport retry counter exceeded";
    case IBV_WC_RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
    case IBV_WC_LOC_RDD_VIOL_ERR: return "local RDD violation error";
    case IBV_WC_REM_INV_RD_REQ_ERR: return "remote invalid RD request";
    case IBV_WC_REM_ABORT_ERR: return "aborted error";
    case IBV_WC_INV_EECN_ERR: return "invalid EE context number";
    case IBV_WC_INV_EEC_STATE_ERR: return "invalid EE context state";
    case IBV_WC_FATAL_ERR: return "fatal error";
    case IBV_WC_RESP_TIMEOUT_ERR: return "response timeout error";
    case IBV_WC_GENERAL_ERR: return "general error";
    default: return "unknown";
  }
}

const char* ibv_event_type_str(ibv_event_type event) {
  switch (event) {
    case IBV_EVENT_CQ_ERR: return "CQ error";
    case IBV_EVENT_QP_FATAL: return "local work queue catastrophic error";
    case IBV_EVENT_QP_REQ_ERR: return "invalid request local work queue error";
    case IBV_EVENT_QP_ACCESS_ERR: return "local access violation work queue error";
    case IBV_EVENT_COMM_EST: return "communication established";
    case IBV_EVENT_PORT_ACTIVE: return "port active";
    case IBV_EVENT_PORT_ERR: return "port error";
    case IBV_EVENT_DEVICE_FATAL: return "local catastrophic error";
    default: return "unknown";
  }
}
