#include "protocol/rdma/gpudirect.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace hipr::rdma {

RegDmaBufMrFn ResolveRegDmaBufMr(void* handle) {
  return reinterpret_cast<RegDmaBufMrFn>(dlsym(handle, "ibv_reg_dmabuf_mr"));
}

Status RegisterDmaBuf(RegDmaBufMrFn reg, ibv_pd* pd, int fd, uint64_t offset, size_t length, uint64_t iova,
                      int access, ibv_mr** out) {
  if (reg == nullptr)
    return Status(StatusCode::kNotSupported, "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 has it)");
  if (pd == nullptr || fd < 0 || length == 0) return InvalidArgument("dma-buf registration: no pd, fd or length");
  if ((access & ~kDmaBufAccessFlags) != 0) {
    char flags[16];
    std::snprintf(flags, sizeof flags, "0x%x", static_cast<unsigned>(access & ~kDmaBufAccessFlags));
    return InvalidArgument(std::string("dma-buf registration: access flags ") + flags + " are not allowed");
  }
  // ibv_reg_dmabuf_mr(3): "iova ... must have the same page offset as offset".
  constexpr uint64_t kPage = 4096;
  if ((iova % kPage) != (offset % kPage))
    return InvalidArgument("dma-buf registration: iova and offset differ in their page offset");
  errno = 0;
  ibv_mr* mr = reg(pd, offset, length, iova, fd, access);
  if (mr == nullptr) {
    const int err = errno;
    const std::string what = "ibv_reg_dmabuf_mr(offset " + std::to_string(offset) + ", length " +
                             std::to_string(length) + ") failed: " + (err != 0 ? std::strerror(err) : "no errno");
    if (err == EOPNOTSUPP || err == ENOSYS || err == EPROTONOSUPPORT)
      return Status(StatusCode::kNotSupported,
                    what + " (this NIC's provider or kernel cannot import dma-bufs: Linux >= 5.12 and a provider "
                           "with dma-buf support, e.g. mlx5, are needed)");
    if (err == ENOMEM) return Status(StatusCode::kResourceExhausted, what);
    return Status(StatusCode::kInternal, what);
  }
  *out = mr;
  return Status::Ok();
}

}  // namespace hipr::rdma
