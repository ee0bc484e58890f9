// What a copy's hipMemcpyKind decides, as ROCm's runtime (clr) decides it.
// The direction never comes from the kind: the pointers decide it (device
// memory, host memory the runtime knows because hipHostMalloc or
// hipHostRegister made it, or pageable host memory it does not know). The
// kind only makes a copy fail:
//
//  * any copy: a kind outside 0..4 and 1024 (hipMemcpyDeviceToDeviceNoCU,
//    ROCm 6.1+) is hipErrorInvalidMemcpyDirection (entry points check it
//    before or after their size test, as clr does);
//  * 1-D copies (hipMemcpy*, hipMemcpyHtoD/DtoH/DtoD, peer copies, symbol
//    copies once their kind is accepted; KindRule::kPointers): only between
//    two pageable buffers, where any kind but HostToHost or Default is
//    hipErrorInvalidValue (clr's IsHtoHMemcpyValid; ROCm 6.3 skips it when
//    XNACK makes host memory GPU-accessible, which a remote GPU never is);
//  * 2-D and 3-D copies (hipMemcpy2D*, hipMemcpy3D*, array copies, the
//    driver structs; KindRule::kClaimed): the kind claims sides as device
//    memory (HostToDevice the destination, DeviceToHost the source,
//    DeviceToDevice both), and a claimed side must be memory the runtime
//    knows, else hipErrorInvalidValue; a side claimed as host memory that is
//    device memory is copied as device memory;
//  * symbol copies (ROCm 5.3+): to a symbol only HostToDevice, DeviceToDevice
//    or NoCU, from a symbol only DeviceToHost, DeviceToDevice or NoCU; any
//    other kind, hipMemcpyDefault included, is hipErrorInvalidMemcpyDirection.
//    (Debian's 5.2 runtime took any kind here; hipr follows the later
//    releases, which every 6.x/7.x program and most 5.x ones meet.)
//
// Pure functions; thread-safe.
#pragma once

#include <hip/hip_runtime_api.h>

namespace hipr::client {

// ROCm 6.1's hipMemcpyDeviceToDeviceNoCU (not in Debian's 5.2 header): a
// device-to-device copy that prefers the copy engines.
inline constexpr hipMemcpyKind kMemcpyDeviceToDeviceNoCU = static_cast<hipMemcpyKind>(1024);

enum class KindRule { kPointers, kClaimed };
enum class CopySideClass { kDevice, kPinned, kPageable };

// 0..4 or 1024.
bool ValidKind(hipMemcpyKind kind);

// hipSuccess, or the error clr gives for `kind` between these two sides.
// REQUIRES: ValidKind(kind).
hipError_t CheckCopyKind(hipMemcpyKind kind, KindRule rule, CopySideClass dst, CopySideClass src);

// True when `kind` names the source (or the destination) as device memory.
bool KindClaimsDevice(hipMemcpyKind kind, bool source);

// hipMemcpyToSymbol* (to_symbol) and hipMemcpyFromSymbol* kinds: hipSuccess
// or hipErrorInvalidMemcpyDirection.
hipError_t CheckSymbolKind(hipMemcpyKind kind, bool to_symbol);

}  // namespace hipr::client
