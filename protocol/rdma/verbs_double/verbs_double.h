// A userspace double of the libibverbs subset hipr's RDMA transport uses, for
// tests on machines without an RDMA device (ours). Linked into tests in place
// of libibverbs: it defines the exported ibv_* functions with the signatures
// of <infiniband/verbs.h>, and fills each ibv_context's ops table for the
// ones verbs.h inlines (ibv_post_send, ibv_post_recv, ibv_poll_cq,
// ibv_req_notify_cq). Nothing of it is in the product.
//
// What it models: one device ("hipr_double0", one port, RoCE-like: addressed
// by GID) per process that sees the fabric directory; protection domains;
// memory regions (ibv_reg_mr refuses unmapped memory, as a pin would);
// completion queues with completion channels; async events; RC queue pairs
// with SEND (inline or not), RDMA WRITE and RDMA READ between processes.
//
// Verbs semantics enforced, as a NIC does:
//  - QP states RESET -> INIT -> RTR -> RTS (and any -> ERR/RESET) with the
//    attribute masks each transition requires; anything else is EINVAL.
//    ibv_post_send before RTS and ibv_post_recv in RESET fail with EINVAL;
//    in ERR every post completes at once with IBV_WC_WR_FLUSH_ERR.
//  - Local keys and bounds of every SGE (IBV_WC_LOC_PROT_ERR; a READ's
//    SGEs need IBV_ACCESS_LOCAL_WRITE); remote key, bounds and
//    IBV_ACCESS_REMOTE_WRITE (WRITE) or IBV_ACCESS_REMOTE_READ (READ) of the
//    target region and of the target QP's qp_access_flags, checked in the
//    target process: IBV_WC_REM_ACCESS_ERR at the requester, and the
//    responder's QP moves to ERR with IBV_EVENT_QP_ACCESS_ERR.
//  - READs: at most max_rd_atomic (RTS) in flight per QP, later requests
//    waiting behind them; max_rd_atomic and max_dest_rd_atomic at most 16
//    (ibv_query_device's max_qp_rd_atom). A READ posted on a QP with
//    max_rd_atomic 0, or inline, fails with EINVAL.
//  - A SEND larger than the receive: IBV_WC_REM_INV_REQ_ERR / LOC_LEN_ERR.
//  - Completions per QP in posting order.
//  - A SEND with no receive posted waits (RNR) and fails with
//    IBV_WC_RNR_RETRY_EXC_ERR after (rnr_retry + 1) RNR timers (7: never).
//  - No answer from the peer (dead, destroyed, or in ERR) for
//    4.096 us * 2^timeout * (retry_cnt + 1): IBV_WC_RETRY_EXC_ERR.
//  - Any error completion moves the QP to ERR and flushes every outstanding
//    request (IBV_WC_WR_FLUSH_ERR).
// Not modelled: atomics (post fails with EINVAL), the responder's
// max_dest_rd_atomic limit (it executes each READ at once), SRQs, UD,
// memory windows, the extended (ibv_*_ex) verbs (they report EOPNOTSUPP, as
// for a provider without them).
//
// Between processes: the fabric is a directory named by HIPR_VERBS_DOUBLE_DIR
// (no variable: no device). Each QP owns a shared-memory ring there that its
// peer writes packets into; an engine thread in the QP's own process executes
// them against that process's memory (verbs_double_internal.h). A file is
// unlinked as soon as its peer has mapped it; files of killed processes stay
// until the directory goes (Fabric below removes it).
#pragma once

#include <string>

namespace hipr::verbs_double {

inline constexpr const char* kFabricEnv = "HIPR_VERBS_DOUBLE_DIR";

// A fabric for one test process and the children it forks: a fresh directory
// under /dev/shm, named in HIPR_VERBS_DOUBLE_DIR while this lives, removed
// with whatever is left in it when it goes.
class Fabric {
 public:
  Fabric();
  ~Fabric();
  Fabric(const Fabric&) = delete;
  Fabric& operator=(const Fabric&) = delete;

  const std::string& dir() const { return dir_; }
  // Files now in the directory (wires not yet mapped by a peer, or leaked).
  int FileCount() const;

 private:
  std::string dir_;
  std::string previous_;
  bool had_previous_ = false;
};

}  // namespace hipr::verbs_double
