// QpInfo's wire form (rdma_connection.h): 64 bytes, little-endian.
#include <cstring>
#include <string>

#include "protocol/rdma/rdma_connection.h"

namespace hipr::rdma {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "fields are copied as host integers");

constexpr uint32_t kQpInfoMagic = 0x50515248;  // "HRQP"
constexpr uint16_t kQpInfoVersion = 3;  // 2: offers and RDMA READ; 3: cumulative grants, grant records.

template <class T>
void Put(uint8_t*& p, T v) {
  std::memcpy(p, &v, sizeof v);
  p += sizeof v;
}
template <class T>
T Get(const uint8_t*& p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  p += sizeof v;
  return v;
}

}  // namespace

void EncodeQpInfo(const QpInfo& info, uint8_t out[kQpInfoBytes]) {
  std::memset(out, 0, kQpInfoBytes);
  uint8_t* p = out;
  Put<uint32_t>(p, kQpInfoMagic);
  Put<uint16_t>(p, kQpInfoVersion);
  Put<uint8_t>(p, info.rd_atomic);
  Put<uint8_t>(p, 0);
  Put<uint32_t>(p, info.qpn);
  Put<uint32_t>(p, info.psn);
  std::memcpy(p, info.gid, 16);
  p += 16;
  Put<uint64_t>(p, info.ring_addr);
  Put<uint32_t>(p, info.ring_rkey);
  Put<uint32_t>(p, info.recv_buffers);
  Put<uint64_t>(p, info.ring_bytes);
  Put<uint32_t>(p, info.buffer_bytes);
}

Status DecodeQpInfo(const uint8_t* in, size_t len, QpInfo* out) {
  if (len < kQpInfoBytes) return ProtocolError("rdma: short queue-pair information");
  const uint8_t* p = in;
  if (Get<uint32_t>(p) != kQpInfoMagic) return ProtocolError("rdma: queue-pair information without its magic");
  const uint16_t version = Get<uint16_t>(p);
  if (version != kQpInfoVersion)
    return Status(StatusCode::kVersionMismatch, "rdma: queue-pair information version " + std::to_string(version));
  QpInfo info;
  info.rd_atomic = Get<uint8_t>(p);
  p += 1;
  info.qpn = Get<uint32_t>(p);
  info.psn = Get<uint32_t>(p);
  std::memcpy(info.gid, p, 16);
  p += 16;
  info.ring_addr = Get<uint64_t>(p);
  info.ring_rkey = Get<uint32_t>(p);
  info.recv_buffers = Get<uint32_t>(p);
  info.ring_bytes = Get<uint64_t>(p);
  info.buffer_bytes = Get<uint32_t>(p);
  // Limits before anything is sized by them.
  if (info.qpn == 0 || info.qpn > 0xFFFFFF || info.psn > 0xFFFFFF || info.recv_buffers < 8 ||
      info.recv_buffers > 4096 || info.buffer_bytes < 256 || info.buffer_bytes > (1u << 20) ||
      info.ring_bytes < (uint64_t{64} << 10) || info.ring_bytes > (uint64_t{1} << 32) || info.rd_atomic == 0)
    return ProtocolError("rdma: the peer's queue-pair information is out of range");
  *out = info;
  return Status::Ok();
}

}  // namespace hipr::rdma
