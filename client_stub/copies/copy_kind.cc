#include "client_stub/copies/copy_kind.h"

namespace hipr::client {

bool ValidKind(hipMemcpyKind kind) {
  return (kind >= hipMemcpyHostToHost && kind <= hipMemcpyDefault) || kind == kMemcpyDeviceToDeviceNoCU;
}

bool KindClaimsDevice(hipMemcpyKind kind, bool source) {
  if (kind == hipMemcpyDeviceToDevice || kind == kMemcpyDeviceToDeviceNoCU) return true;
  return kind == (source ? hipMemcpyDeviceToHost : hipMemcpyHostToDevice);
}

hipError_t CheckCopyKind(hipMemcpyKind kind, KindRule rule, CopySideClass dst, CopySideClass src) {
  const bool dst_known = dst != CopySideClass::kPageable;
  const bool src_known = src != CopySideClass::kPageable;
  if (rule == KindRule::kPointers) {
    if (!dst_known && !src_known && kind != hipMemcpyHostToHost && kind != hipMemcpyDefault)
      return hipErrorInvalidValue;
    return hipSuccess;
  }
  if ((KindClaimsDevice(kind, false) && !dst_known) || (KindClaimsDevice(kind, true) && !src_known))
    return hipErrorInvalidValue;
  return hipSuccess;
}

hipError_t CheckSymbolKind(hipMemcpyKind kind, bool to_symbol) {
  if (kind == hipMemcpyDeviceToDevice || kind == kMemcpyDeviceToDeviceNoCU) return hipSuccess;
  if (kind == (to_symbol ? hipMemcpyHostToDevice : hipMemcpyDeviceToHost)) return hipSuccess;
  return hipErrorInvalidMemcpyDirection;
}

}  // namespace hipr::client
