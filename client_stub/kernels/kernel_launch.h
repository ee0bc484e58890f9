// Kernel launch on the client: the checks native HIP makes before it queues
// a kernel (decided here from the device's properties and the kernel's
// code-object metadata, so a bad launch fails in the call itself), packing
// of the explicit kernel arguments at the offsets the metadata gives, and
// the fire-and-forget kLaunchKernel. Also the occupancy model and function
// attributes, which are answered from the same metadata with no round trip.
//
// Errors match HIP 5.2 (ROCm hipamd src/hip_module.cpp, the library the stub
// stands in for): a zero grid or block dimension is hipErrorInvalidValue; a
// block over the device's limit hipErrorInvalidConfiguration; over the
// kernel's max_flat_workgroup_size (its launch bounds) hipErrorLaunchFailure;
// a global size over 2^32-1 hipErrorInvalidConfiguration; static plus
// dynamic shared memory over the device's per-block limit
// hipErrorInvalidValue (5.2 let such launches fail on the device; newer clr
// refuses them up front); a cooperative launch on a device without
// cooperative groups hipErrorLaunchFailure, larger than can be resident at
// once hipErrorCooperativeLaunchTooLarge.
//
// Thread-safety: the functions are stateless (CodeModule is thread-safe).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "client_stub/client.h"
#include "client_stub/kernels/code_module.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/session/managed_hooks.h"
#include "client_stub/session/remote.h"
#include "protocol/code_object/code_object.h"
#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::client {

// A launch's shape and where it runs (the stream already resolved).
struct LaunchSpec {
  int device = 0;
  uint64_t stream = 0;                 // Protocol stream id; 0: the null stream.
  std::array<uint32_t, 3> grid{1, 1, 1};   // In blocks.
  std::array<uint32_t, 3> block{1, 1, 1};  // Threads per block.
  uint64_t shared_bytes = 0;           // Dynamic shared memory.
  uint32_t flags = 0;                  // msg::LaunchFlags.
  uint64_t start_event = 0;            // Protocol event ids; 0: none.
  uint64_t stop_event = 0;
  // Work-items per dimension when the last block is partial
  // (hipExtModuleLaunchKernel); all zero: grid * block.
  std::array<uint32_t, 3> global{};
  // What the application named the kernel by (host stub or hipFunction_t),
  // for a graph node made from this launch; may be null.
  const void* func = nullptr;
};

// Fills spec->grid and ->block from dim3s given in blocks; a global size
// (grid * block) over 2^32-1 in any dimension is
// hipErrorInvalidConfiguration.
hipError_t SetShape(dim3 grid, dim3 block, LaunchSpec* spec);

// How the application hands over the explicit arguments.
struct KernelArgs {
  // hipLaunchKernel's args / hipModuleLaunchKernel's kernelParams: one
  // pointer per explicit argument, in order.
  void** pointers = nullptr;
  // The extra / hipSetupArgument form: one buffer laid out as the kernarg
  // segment (each argument at its metadata offset).
  const void* buffer = nullptr;
  size_t buffer_size = 0;
  bool has_buffer = false;
  // hipSetupArgument's buffer: bytes past its end read as zero instead of
  // failing the launch.
  bool short_buffer_reads_zero = false;
};

// Parses hipModuleLaunchKernel's `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER,
// _SIZE, in any order, then _END) into args. hipErrorInvalidValue when
// malformed.
hipError_t ParseExtra(void** extra, KernelArgs* args);

// Packs exactly the explicit argument bytes (kernel.explicit_kernarg_size())
// into *out: each argument's metadata `.size` bytes at its `.offset`, the
// gaps zero. hipErrorInvalidValue when arguments are missing (no pointers for
// a kernel with parameters, a null argument pointer, a buffer shorter than
// the explicit segment).
Status PackKernargs(const co::KernelInfo& kernel, const KernelArgs& args, std::vector<uint8_t>* out);

// The launch-configuration checks above, in native HIP's order.
Status CheckLaunch(const msg::DeviceInfo& device, const co::KernelInfo& kernel, const LaunchSpec& spec);

// A graph's kernel node: the request LaunchKernel would post (checked,
// packed, bound, and naming its kernel, since a node may reach the worker
// first), spec.func, and where each explicit argument lies in the request.
Status BuildKernelNode(Remote& session, CodeModule& module, const std::string& name, const LaunchSpec& spec,
                       const KernelArgs& args, KernelNode* node);

// Checks, packs, binds (the module's first use in the session loads it) and
// posts kLaunchKernel for kernel `name` of `module`. Blocks only on a first
// use; otherwise fire-and-forget: errors of the kernel itself surface at the
// next synchronizing call. While spec.stream captures, the launch becomes a
// node of the capture's graph instead (`graphs`). `client`: whose managed
// memory the kernel may read (`managed`).
Status LaunchKernel(Client& client, Remote& session, ManagedHooks& managed, GraphRegistry& graphs, CodeModule& module,
                    const std::string& name, const LaunchSpec& spec, const KernelArgs& args);

// ---- Occupancy and attributes --------------------------------------------
//
// A simple model, documented here rather than copied: a compute unit has
// `simds` SIMDs (max threads per CU / (wave size * waves per SIMD)), each
// holding up to 8 waves (gfx9; 16 on gfx10+), fewer when the kernel's VGPRs
// (rounded up to 8) exhaust the SIMD's register file (512 per lane on gfx90a
// and gfx94x, else 256). Blocks per CU are the waves that fit divided by the
// block's waves, further limited by LDS (static group segment plus dynamic
// shared memory against the CU's shared memory). SGPRs, scratch and
// wave-slot fragmentation are ignored, so the answers are upper bounds.

// Blocks of `block_size` threads resident on one CU; 0 when the block is
// over the device's limit. REQUIRES: block_size > 0.
int MaxActiveBlocksPerCu(const msg::DeviceInfo& device, const co::KernelInfo& kernel, int block_size,
                         size_t dynamic_shared);

// The block size (up to `block_size_limit`, or the kernel's and device's
// limit when <= 0) that maximizes occupancy, and the grid that fills the
// device with it.
void MaxPotentialBlockSize(const msg::DeviceInfo& device, const co::KernelInfo& kernel, size_t dynamic_shared,
                           int block_size_limit, int* grid_size, int* block_size);

// hipFuncAttributes from the metadata: shared = group segment, local =
// private segment, max threads = max_flat_workgroup_size, regs = VGPRs.
hipFuncAttributes FunctionAttributes(const msg::DeviceInfo& device, const co::KernelInfo& kernel);
// One attribute; hipErrorInvalidValue for an unknown one.
hipError_t FunctionAttribute(const msg::DeviceInfo& device, const co::KernelInfo& kernel,
                             hipFunction_attribute attribute, int* value);

}  // namespace hipr::client
