#include "client_stub/copies/copy_engine.h"

#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"
#include "protocol/peer_link.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/session/managed_hooks.h"
#include "client_stub/session/hip_status.h"

namespace hipr::client {

bool CopyExtent(size_t pitch, size_t width, size_t height, uint64_t* out) {
  const uint64_t rows = height - 1;
  if (pitch != 0 && rows > (UINT64_MAX - width) / pitch) return false;
  *out = rows * pitch + width;
  return true;
}

namespace {

// One side of a copy as the allocation map sees it.
struct Place {
  bool device = false;
  int owner = 0;        // The device whose memory it is (when `device`).
  bool pinned = false;  // Host memory of hipHostMalloc/hipHostRegister.
  CopySideClass cls() const {
    return device ? CopySideClass::kDevice : pinned ? CopySideClass::kPinned : CopySideClass::kPageable;
  }
};

// Classifies [p, p + extent): wholly inside one device allocation, or host
// memory that touches no device address (window, allocation or reserved
// page). Anything else is hipErrorInvalidValue.
hipError_t Locate(Client& c, const void* p, uint64_t extent, Place* out) {
  const uint64_t a = reinterpret_cast<uint64_t>(p);
    DeviceAllocation d;
  if (c.allocations().FindDevice(a, extent, &d)) {
    out->device = true;
    out->owner = d.device;
    return hipSuccess;
  }
  if (c.windows().Overlaps(a, extent) || c.allocations().TouchesDevice(a, extent) ||
      c.reservations().Overlaps(a, extent))
    return hipErrorInvalidValue;
  out->device = false;
  PinnedAllocation pinned;
  out->pinned = c.allocations().FindPinned(a, extent, &pinned);
  return hipSuccess;
}

// True when every page of [p, p + n) is mapped (msync fails with ENOMEM on
// a hole); n > 0.
bool IsMapped(const void* p, uint64_t n) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t a = reinterpret_cast<uint64_t>(p);
  const uint64_t begin = a & ~(page - 1);
  if (a > UINT64_MAX - n) return false;
  return msync(reinterpret_cast<void*>(begin), a + n - begin, MS_ASYNC) == 0;
}

// The host side's rows as iovecs: one entry when they are contiguous.
std::vector<iovec> HostRows(const void* base, size_t pitch, size_t width, size_t height) {
  auto* p = static_cast<char*>(const_cast<void*>(base));
  if (pitch == width || height == 1) return {iovec{p, width * height}};
  std::vector<iovec> rows(height);
  for (size_t i = 0; i < height; ++i) rows[i] = iovec{p + i * pitch, width};
  return rows;
}

hipError_t CallReplyResult(const Status& st, const msg::CallReply& reply) {
  return st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
}

hipError_t Transfer(Client& c, Remote& s, const CopyRect& r, const Place& dst, const Place& src,
                    const StreamTarget& target, uint64_t dst_extent, uint64_t src_extent, CopyMode mode);

// Sends a validated copy (CopyRows).
hipError_t Transfer(Client& c, Remote& s, const CopyRect& r, const Place& dst, const Place& src,
                    const StreamTarget& target, uint64_t dst_extent, uint64_t src_extent, CopyMode mode) {
  const msg::Region dst_region{reinterpret_cast<uint64_t>(r.dst), r.dpitch, r.width, r.height};
  const msg::Region src_region{reinterpret_cast<uint64_t>(r.src), r.spitch, r.width, r.height};
  msg::CallReply reply;
  // Host rows inside one pinned allocation of the shm host segment are
  // named by offset: the worker holds that range registered (kHostRegister).
  HostSegment* segment = s.host_segment();
  auto in_segment = [&](const void* p, uint64_t extent, uint64_t* offset) {
    PinnedAllocation a;
    return segment != nullptr && c.allocations().FindPinned(reinterpret_cast<uint64_t>(p), extent, &a) &&
           a.in_host_segment && segment->Contains(p, extent, offset);
  };
  uint64_t offset = 0;
  if (dst.device && !src.device && in_segment(r.src, src_extent, &offset)) {
    // From the shm host segment: the worker reads the rows there, in stream
    // order (as a GPU reads pinned memory), so no bytes cross.
    msg::CopyToDeviceRequest req{target.device, target.id, dst_region, mode == CopyMode::kBlocking,
                                 msg::SharedHost{true, offset, r.spitch}};
    if (mode == CopyMode::kAsync) return ToHipError(s.PostCopy(req, nullptr, 0));
    return CallReplyResult(s.Call<wire::Op::kCopyToDevice>(req, &reply), reply);
  }
  if (!dst.device && src.device && in_segment(r.dst, dst_extent, &offset)) {
    // Into the shm host segment: the worker writes the rows there before it
    // replies; async copies complete by the stream's next synchronization.
    msg::CopyFromDeviceRequest req{target.device, target.id, src_region, msg::SharedHost{true, offset, r.dpitch}};
    if (mode == CopyMode::kAsync) return ToHipError(s.PostCopyFromDevice(req, nullptr, 0));
    return CallReplyResult(s.Call<wire::Op::kCopyFromDevice>(req, &reply), reply);
  }
  if (dst.device && !src.device) {
    const std::vector<iovec> rows = HostRows(r.src, r.spitch, r.width, r.height);
    msg::CopyToDeviceRequest req{target.device, target.id, dst_region, mode == CopyMode::kBlocking, {}};
    PinnedAllocation pinned;
    const bool from_pinned =
        c.allocations().FindPinned(reinterpret_cast<uint64_t>(r.src), src_extent, &pinned);
    if (mode == CopyMode::kAsync)
      return ToHipError(s.PostCopy(req, rows.data(), static_cast<int>(rows.size()), from_pinned));
    Status st = s.Call<wire::Op::kCopyToDevice>(req, &reply, rows.data(), static_cast<int>(rows.size()), nullptr,
                       0, from_pinned);
    return CallReplyResult(st, reply);
  }
  if (!dst.device && src.device) {
    const std::vector<iovec> rows = HostRows(r.dst, r.dpitch, r.width, r.height);
    msg::CopyFromDeviceRequest req{target.device, target.id, src_region, {}};
    PinnedAllocation pinned;
    const bool to_pinned = c.allocations().FindPinned(reinterpret_cast<uint64_t>(r.dst), dst_extent, &pinned);
    if (mode == CopyMode::kAsync && to_pinned) {
      // Into pinned memory: the bytes land later, before the stream's next
      // synchronization point reports completion.
      return ToHipError(s.PostCopyFromDevice(req, rows.data(), static_cast<int>(rows.size())));
    }
    Status st = s.Call<wire::Op::kCopyFromDevice>(req, &reply, nullptr, 0, rows.data(),
                       static_cast<int>(rows.size()), false, to_pinned);
    return CallReplyResult(st, reply);
  }
  msg::CopyOnDeviceRequest req{target.device, target.id, dst_region, src_region, mode == CopyMode::kBlocking};
  if (mode == CopyMode::kAsync) return ToHipError(s.Post<wire::Op::kCopyOnDevice>(req));
  return CallReplyResult(s.Call<wire::Op::kCopyOnDevice>(req, &reply), reply);
}

// Whether a blocking copy may return once its source is consumed
// (CopyRows): a 1-D copy of the hipMemcpy family (clr's ihipMemcpy, whose
// early return this follows; its 2-D and 3-D copies are not taken to),
// host to device from pageable memory, into memory whose
// copies only the client checks (not a virtual-memory mapping, whose access
// the worker enforces; not another process's memory opened through IPC;
// not memory whose pointer asks for synchronous operations), in a process
// without managed memory (a blocking copy refreshes its mirrors).
bool ReturnsOnceConsumed(Client& c, const CopyRect& r, KindRule rule, const Place& dst, const Place& src,
                         uint64_t dst_extent, const ManagedHooks& managed) {
  if (rule != KindRule::kPointers || r.height != 1) return false;
  if (!dst.device || src.device || src.pinned || !managed.empty()) return false;
  DeviceAllocation a;
  if (!c.allocations().FindDevice(reinterpret_cast<uint64_t>(r.dst), dst_extent, &a)) return false;
  return !a.vmm && !a.ipc_opened && !a.sync_memops;
}

// Peer copies may go straight from worker to worker (protocol/peer_link.h)
// until one fails to connect: then this process stages them for good.
std::atomic<bool> g_peer_copies_off{false};

// "host" of a HIPR_SERVER entry the peer link can use ("host:port" or
// "[v6]:port", maybe rdma://); empty where there is none (unix:).
std::string PeerHostOf(const std::string& server) {
  std::string_view s = server;
  if (s.starts_with("rdma://")) s.remove_prefix(7);
  if (s.starts_with("unix:")) return {};
  const size_t colon = s.rfind(':');
  return colon == std::string_view::npos ? std::string() : std::string(s.substr(0, colon));
}

// The bytes of a copy between two workers' memory, sent by the source's
// worker straight to the destination's: the destination opens a one-shot
// port (kPeerListen) and waits there for them (kPeerAccept); the source
// sends them (kPeerSend), and its reply says they are in place. False
// where it cannot be tried (*result untouched: stage it instead).
bool DirectPeerCopy(Client& c, Remote& s, const CopyRect& r, const Place& dst, const Place& src,
                    hipError_t* result) {
  if (!c.config().peer_copy || g_peer_copies_off.load(std::memory_order_relaxed)) return false;
  if (!s.SessionOf(src.owner).ListsCapability(wire::kCapabilityPeerCopy) ||
      !s.SessionOf(dst.owner).ListsCapability(wire::kCapabilityPeerCopy))
    return false;
  const std::string host = PeerHostOf(s.ServerOf(dst.owner));
  if (host.empty()) return false;
  // The destination's null stream is idle first: the worker takes the bytes
  // on its replay thread, which must not wait for work of the client's.
  msg::CallReply synced;
  Status st = s.Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{0, dst.owner}, &synced);
  if (!st.ok() || synced.error != hipSuccess) {
    *result = CallReplyResult(st, synced);
    return true;
  }
  msg::PeerListenReply port;
  st = s.Call<wire::Op::kPeerListen>(msg::PeerListenRequest{dst.owner}, &port);
  if (!st.ok()) {
    *result = ToHipError(st);
    return true;
  }
  if (port.error != hipSuccess) {
    HIPR_LOG_ONCE(kWarn, "the worker of device %d opens no port for peer copies (HIP error %d): copies between "
                         "workers pass through this process", dst.owner, port.error);
    g_peer_copies_off.store(true);
    return false;
  }
  const msg::Region dst_region{reinterpret_cast<uint64_t>(r.dst), r.dpitch, r.width, r.height};
  const msg::Region src_region{reinterpret_cast<uint64_t>(r.src), r.spitch, r.width, r.height};
  if (st = s.Post<wire::Op::kPeerAccept>(msg::PeerAcceptRequest{dst.owner, 0, dst_region, port.token}); st.ok())
    st = s.SessionOf(dst.owner).Flush();
  if (!st.ok()) {
    *result = ToHipError(st);
    return true;
  }
  const std::string address = host + ":" + std::to_string(port.port);
  msg::CallReply sent;
  st = s.Call<wire::Op::kPeerSend>(msg::PeerSendRequest{src.owner, 0, src_region, address, port.token}, &sent);
  if (st.ok() && sent.error == hipErrorUnknown) {
    // The source could not reach the destination's port (a firewall, an
    // address only the client can reach): call it off there, and stage
    // this copy and every later one.
    (void)peer::CancelPeer(address, port.token, 5000);
    HIPR_LOG_WARN("worker of device %d could not send to %s, the port the worker of device %d opened (its log says "
                  "why): copies between workers pass through this process from now on",
                  src.owner, address.c_str(), dst.owner);
    g_peer_copies_off.store(true);
    return false;
  }
  if (!st.ok()) (void)peer::CancelPeer(address, port.token, 5000);  // The source is lost: free the destination.
  *result = CallReplyResult(st, sent);
  if (*result == hipSuccess) stats::Add(stats::Get().cross_worker_direct_bytes, r.width * r.height);
  return true;
}

// A copy whose device memory is another worker's than the stream's
// (HIPR_SERVER lists several): the stream's earlier work finishes first,
// then each leg runs as a blocking copy on the null stream of the device
// whose memory it touches, so the next work on the stream follows it. A copy
// between two workers' memory goes from one to the other (DirectPeerCopy)
// where both offer it; otherwise it is staged through this process, which
// reads the source into a buffer, then writes it to the destination.
hipError_t CrossWorkerCopy(Client& c, Remote& s, ManagedHooks& managed, GraphRegistry& graphs, const CopyRect& r,
                           const Place& dst, const Place& src, const StreamTarget& target) {
  stats::Add(stats::Get().cross_worker_copies);
  msg::CallReply reply;
  Status st = s.Call<wire::Op::kStreamSynchronize>(msg::StreamRequest{target.id, target.device}, &reply);
  if (!st.ok() || reply.error != hipSuccess) return CallReplyResult(st, reply);
  auto leg = [&](const CopyRect& part, int device) {
    return CopyRows(c, s, managed, graphs, part, hipMemcpyDefault, KindRule::kPointers, StreamTarget{0, device},
                    CopyMode::kBlocking);
  };
  if (!(dst.device && src.device && !s.SameWorker(dst.owner, src.owner)))
    return leg(r, dst.device ? dst.owner : src.owner);
  if (hipError_t direct = hipSuccess; DirectPeerCopy(c, s, r, dst, src, &direct)) return direct;
  // A 1-D copy goes in pieces of at most kStageBytes; a 2-D one whole.
  constexpr size_t kStageBytes = size_t{64} << 20;
  const size_t piece = r.height == 1 ? std::min(r.width, kStageBytes) : r.width * r.height;
  std::vector<uint8_t> staged(piece);
  for (size_t done = 0; done < r.width * r.height; done += piece) {
    const size_t n = r.height == 1 ? std::min(piece, r.width - done) : r.width;
    const size_t rows = r.height == 1 ? 1 : r.height;
    const CopyRect in{staged.data(), n, static_cast<const char*>(r.src) + done, r.spitch, n, rows};
    if (hipError_t e = leg(in, src.owner); e != hipSuccess) return e;
    const CopyRect out{static_cast<char*>(r.dst) + done, r.dpitch, staged.data(), n, n, rows};
    if (hipError_t e = leg(out, dst.owner); e != hipSuccess) return e;
    stats::Add(stats::Get().cross_worker_staged_bytes, n * rows);
  }
  return hipSuccess;
}

}  // namespace

hipError_t CopyRows(Client& c, Remote& s, ManagedHooks& managed, GraphRegistry& graphs, const CopyRect& r,
                    hipMemcpyKind kind, KindRule rule, const StreamTarget& target, CopyMode mode) {
  uint64_t dst_extent = 0;
  uint64_t src_extent = 0;
  if (!CopyExtent(r.dpitch, r.width, r.height, &dst_extent) || !CopyExtent(r.spitch, r.width, r.height, &src_extent))
    return hipErrorInvalidValue;
  Place dst;
  Place src;
  if (hipError_t e = Locate(c, r.dst, dst_extent, &dst); e != hipSuccess) return e;
  if (hipError_t e = Locate(c, r.src, src_extent, &src); e != hipSuccess) return e;
  if (hipError_t e = CheckCopyKind(kind, rule, dst.cls(), src.cls()); e != hipSuccess) return e;
  // A pageable side the kind called device memory: the pointers win, but
  // such a pointer is often not memory at all; refuse an unmapped one here
  // rather than fail the socket (and the session) on it.
  if ((KindClaimsDevice(kind, /*source=*/false) && dst.cls() == CopySideClass::kPageable &&
       !IsMapped(r.dst, dst_extent)) ||
      (KindClaimsDevice(kind, /*source=*/true) && src.cls() == CopySideClass::kPageable &&
       !IsMapped(r.src, src_extent)))
    return hipErrorInvalidValue;
  // hipMemcpyDefault lets the pointers decide: one that is neither memory of
  // this process nor device memory of its session is most likely another
  // process's (another session's or worker's) device address. Reading it
  // would kill the program (native HIP does); refuse it instead.
  if (kind == hipMemcpyDefault) {
    const void* bad = dst.cls() == CopySideClass::kPageable && !IsMapped(r.dst, dst_extent)   ? r.dst
                      : src.cls() == CopySideClass::kPageable && !IsMapped(r.src, src_extent) ? r.src
                                                                                                : nullptr;
    if (bad != nullptr) {
      HIPR_LOG_ONCE(kWarn,
                    "a copy with hipMemcpyDefault names %p, which is neither memory of this process nor device "
                    "memory of its session (another process's device pointer?): hipErrorInvalidValue (logged once)",
                    bad);
      return hipErrorInvalidValue;
    }
  }

  if (s.worker_count() > 1 && ((dst.device && !s.SameWorker(dst.owner, target.device)) ||
                               (src.device && !s.SameWorker(src.owner, target.device)))) {
    if (graphs.AnyCapture())
      if (hipError_t e = graphs.CheckNotCapturing(target.device, target.id, true); e != hipSuccess) return e;
    return CrossWorkerCopy(c, s, managed, graphs, r, dst, src, target);
  }
  const msg::Region dst_region{reinterpret_cast<uint64_t>(r.dst), r.dpitch, r.width, r.height};
  const msg::Region src_region{reinterpret_cast<uint64_t>(r.src), r.spitch, r.width, r.height};
  msg::CallReply reply;
  if (graphs.AnyCapture()) {
    if (mode == CopyMode::kBlocking) {
      // A blocking copy waits for its stream: not while any capture runs
      // in global mode, as natively.
      if (hipError_t e = graphs.CheckNotCapturing(target.device, target.id, true); e != hipSuccess) return e;
    } else {
      GraphOp node = dst.device && src.device
                         ? GraphOp(msg::CopyOnDeviceRequest{target.device, target.id, dst_region, src_region, false})
                         : GraphOp(HostCopyNode{r.dst, r.dpitch, r.src, r.spitch, r.width, r.height, kind,
                                                rule == KindRule::kPointers});
      hipError_t captured = hipSuccess;
      if (graphs.CaptureNode(target.device, target.id, std::move(node), &captured)) return captured;
    }
  }
  if (!dst.device && !src.device) {
    for (size_t i = 0; i < r.height; ++i)
      std::memmove(static_cast<char*>(r.dst) + i * r.dpitch, static_cast<const char*>(r.src) + i * r.spitch,
                   r.width);
    return hipSuccess;
  }
  bool fence_after = false;
  if (mode == CopyMode::kBlocking && ReturnsOnceConsumed(c, r, rule, dst, src, dst_extent, managed)) {
    // ROCm's pageable host-to-device copy returns once its source is
    // consumed, not once the device has the bytes (clr: with direct
    // dispatch the top level does not wait for an unpinned copy). So does
    // hipr: the rows go to the transport before this returns, the copy runs
    // in its stream's order, and a failure on the worker comes back at the
    // next synchronizing call, as an async copy's does. No round trip; a
    // stream fence (session/stream_fences.h) orders every later call on
    // any stream after it, non-blocking streams included.
    mode = CopyMode::kAsync;
    fence_after = true;
  }
  if (mode == CopyMode::kBlocking) {
    // A blocking copy synchronises with the stream's earlier work; the
    // read-back of managed mirrors waits for that work first, so the copy
    // itself sees (and may overwrite) fresh mirrors.
    if (hipError_t e = AfterSync(c, s, managed, target.device, target.id, hipSuccess, ReadBack::kInStreamOrder); e != hipSuccess)
      return e;
  }
  // Managed memory (managed_vars.h): the host's changes reach the device
  // before the copy reads them; what it writes is read back at the stream's
  // synchronisation, for a blocking copy before it returns.
  bool managed_dst = false;
  if (!managed.empty()) {
    if (src.device) {
      if (Status st = managed.Push(c, s, target.device, target.id, r.src, src_extent); !st.ok()) return ToHipError(st);
    }
    if (dst.device && managed.Touches(r.dst, dst_extent)) {
      managed_dst = true;
      managed.MarkWritten(s, target.device, target.id, r.dst, dst_extent);
    }
  }
  // Into plain device memory, from device memory or from pageable memory
  // (consumed before this returns), the copy is work the host cannot
  // observe but through later device work (session/stream_ledger.h). From
  // pinned memory it is not: the host may reuse the source once the stream
  // is done, and the worker may read it late (the shm segment, rdma).
  if (dst.device && (src.device || !src.pinned)) {
    DeviceAllocation a;
    if (c.allocations().FindDevice(reinterpret_cast<uint64_t>(r.dst), dst_extent, &a) && PlainDeviceMemory(a))
      StreamLedger::Invisible();
  }
  // A blocking copy waits for its stream: on the null stream, maybe for
  // every stream of the device (Client::BeginSync). So does one into
  // pageable memory, async or not: the worker answers once the stream got
  // there.
  Client::SyncTicket ticket;
  if (mode == CopyMode::kBlocking || (src.device && !dst.device && !dst.pinned))
    ticket = c.BeginSync(target.device, target.id);
  hipError_t result = Transfer(c, s, r, dst, src, target, dst_extent, src_extent, mode);
  c.EndSync(ticket, result);
  if (result == hipSuccess && fence_after) result = ToHipError(c.fences().Raise(s, target.device, target.id));
  if (result != hipSuccess || !managed_dst || mode != CopyMode::kBlocking) return result;
  return AfterSync(c, s, managed, target.device, target.id, result);
}

}  // namespace hipr::client
