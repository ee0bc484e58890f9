// GPUDirect RDMA on the hip device: GPU memory registered with the NIC, so
// bulk copies could skip the worker's pinned staging. The route is dma-buf:
// the HIP runtime exports a device range as a dma-buf fd
// (hipMemGetHandleForAddressRange, HIP >= 7.0) and libibverbs registers it
// (ibv_reg_dmabuf_mr, protocol/rdma/gpudirect.h). Design, the legacy
// peer-memory route and sources: docs/architecture.md, "GPUDirect RDMA
// (design; unverified on hardware)".
//
// Nothing here links the HIP runtime: its functions are resolved at run time
// from a dlopen handle (HipDmaBufApi), so this builds and runs against
// Debian's HIP 5.2, which lacks the export, and tests substitute fakes.
// Today only the start-up probe uses it; the bulk path does not register
// device memory yet.
//
// UNVERIFIED ON HARDWARE: written without an AMD GPU or an RDMA NIC; the
// probe's answer on HIP 5.2 and the call sequence (with fakes) are tested.
//
// Thread-safety: the functions are thread-safe where the runtime functions
// they call are (HIP's are).
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "protocol/rdma/gpudirect.h"
#include "protocol/status.h"

namespace hipr::worker {

// Values of HIP >= 7.0's enums (hip_runtime_api.h), which HIP 5.2's headers
// lack: hipMemRangeHandleTypeDmaBufFd, hipDeviceAttributeDmaBufSupported.
inline constexpr unsigned kHipMemRangeHandleTypeDmaBufFd = 1;
inline constexpr int kHipDeviceAttributeDmaBufSupported = 93;

// The HIP runtime functions this needs, as C types (hipError_t is an int,
// 0 = hipSuccess; device pointers are void*). Null where the runtime lacks one.
struct HipDmaBufApi {
  // hipMemGetHandleForAddressRange(void* handle, hipDeviceptr_t, size_t,
  // hipMemRangeHandleType, unsigned long long flags): writes an int fd.
  int (*get_handle_for_address_range)(void* handle, void* dptr, size_t size, unsigned type,
                                      unsigned long long flags) = nullptr;
  // hipMemGetAddressRange(hipDeviceptr_t* base, size_t* size, hipDeviceptr_t).
  int (*get_address_range)(void** base, size_t* size, void* dptr) = nullptr;
  int (*get_device_count)(int* count) = nullptr;
  int (*device_get_attribute)(int* value, int attribute, int device) = nullptr;
  int (*runtime_get_version)(int* version) = nullptr;
  // For messages: "HIP 5.2.21153 (libamdhip64.so.5)", or what is known.
  std::string runtime;
};

// Resolves from `handle` (a dlopen handle of the runtime, or of a module
// that links it: dlsym searches its dependencies too). Calls
// hipRuntimeGetVersion to name the runtime; nothing else.
HipDmaBufApi ResolveHipDmaBufApi(void* handle);

struct GpuDirectCapability {
  bool available = false;
  std::string detail;  // Available: the route and GPUs; otherwise: why not.
  // "available: dma-buf (...)" or "unavailable: <why>".
  std::string Describe() const;
};

// Whether GPU memory can be registered by dma-buf: the runtime exports
// (hipMemGetHandleForAddressRange), libibverbs imports (`reg` non-null), and
// at least one GPU reports hipDeviceAttributeDmaBufSupported. Initialises
// the HIP runtime when the first two hold: call it in a throwaway process
// (docs/architecture.md, "Processes on the worker"). Whether the NIC's
// provider accepts dma-bufs is only learnt by registering.
GpuDirectCapability ProbeGpuDirect(const HipDmaBufApi& hip, rdma::RegDmaBufMrFn reg);

// Registers device memory [address, address + length) with `pd`, rounded
// out to 4 KiB pages, addressed by the NIC at the device address itself
// (iova = address, page-rounded): exports the whole allocation holding the
// range as a dma-buf, registers the range at its offset in it, closes the
// fd. Exporting whole allocations makes the offset right whether the
// runtime's dma-buf starts at the pointer asked for or at its allocation,
// which HIP does is not verified. On success *out is the region (free it
// with ibv_dereg_mr before the memory is freed); on any failure no fd is
// left open and *out is untouched.
Status RegisterDeviceMemory(const HipDmaBufApi& hip, rdma::RegDmaBufMrFn reg, ibv_pd* pd, uint64_t address,
                            size_t length, int access, ibv_mr** out);

}  // namespace hipr::worker
