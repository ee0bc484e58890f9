// The verbs half of GPUDirect RDMA: registering memory that a dma-buf file
// descriptor stands for (ibv_reg_dmabuf_mr), so the NIC reads and writes it
// by DMA with no host copy. Any exporter's dma-buf will do; the worker's hip
// device gets one for GPU memory (worker_service/hip/hip_gpudirect.h).
// docs/architecture.md, "GPUDirect RDMA (design; unverified on hardware)".
//
// ibv_reg_dmabuf_mr (rdma-core >= 34, IBVERBS_1.12) is resolved at run time,
// never linked: the product still runs on an older libibverbs, and tests that
// link the verbs double (which lacks it) need nothing new.
//
// UNVERIFIED ON HARDWARE: no RDMA NIC (nor AMD GPU) exists where this was
// written; only the resolution and the error paths are tested, with fakes.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "protocol/status.h"

namespace hipr::rdma {

// ibv_reg_dmabuf_mr's type (libibverbs/verbs.h, rdma-core >= 34).
using RegDmaBufMrFn = ibv_mr* (*)(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access);

// The access flags ibv_reg_dmabuf_mr accepts (man ibv_reg_mr); others are
// refused before the call.
inline constexpr int kDmaBufAccessFlags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                                          IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_RELAXED_ORDERING;

// ibv_reg_dmabuf_mr from `handle` (a dlopen handle; RTLD_DEFAULT: whatever
// libibverbs this process has), or null where that library lacks it.
RegDmaBufMrFn ResolveRegDmaBufMr(void* handle);

// Registers bytes [offset, offset + length) of dma-buf `fd` with `pd`; the
// NIC sees them at `iova` (lkey/rkey addresses, which must have the same
// page offset as `offset`). `fd` stays the caller's: the registration holds
// its own reference to the dma-buf, so the caller may close it at once.
// On success *out is the region (free it with ibv_dereg_mr); otherwise *out
// is untouched and the status says why (kNotSupported where the NIC's
// provider or kernel cannot import dma-bufs: errno EOPNOTSUPP/ENOSYS).
Status RegisterDmaBuf(RegDmaBufMrFn reg, ibv_pd* pd, int fd, uint64_t offset, size_t length, uint64_t iova,
                      int access, ibv_mr** out);

}  // namespace hipr::rdma
