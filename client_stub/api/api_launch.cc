// Launches of kernels registered by their host stubs: <<<>>> (push/pop of
// the call configuration, then hipLaunchKernel), the old
// hipConfigureCall/hipSetupArgument/hipLaunchByPtr flow,
// hip_impl::hipLaunchKernelGGLImpl, hipExtLaunchKernel and cooperative
// launches; the static kernels' attributes and occupancy, and kernel names.
//
// Each launch is checked on the client (kernel_launch.h) and then posted
// fire-and-forget; only a module's first use in the session waits for the
// worker (kModuleLoad). Unknown host functions are
// hipErrorInvalidDeviceFunction, as in HIP.
#include <algorithm>
#include <cstring>
#include <vector>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/kernels/kernel_launch.h"
#include "client_stub/kernels/kernel_registry.h"
#include "client_stub/kernels/launch_attributes.h"

using namespace hipr;
using namespace hipr::client;

#ifndef hipOccupancyDisableCachingOverride
#define hipOccupancyDisableCachingOverride 0x01  // Newer headers define it; 5.2's lack it.
#endif

namespace {

// The <<<>>> configuration stack of the calling thread: pushed by the
// launch site (or hipConfigureCall), popped by the kernel's host stub (or
// hipLaunchByPtr). Constant-initialised thread_locals only: these run in
// threads and constructors the stub never saw start.
struct CallConfiguration {
  dim3 grid;
  dim3 block;
  size_t shared_mem;
  hipStream_t stream;
};
constexpr int kMaxCallDepth = 16;
constinit thread_local CallConfiguration t_call_stack[kMaxCallDepth] = {};
constinit thread_local int t_call_depth = 0;
// hipSetupArgument's kernarg bytes for the next hipLaunchByPtr.
constinit thread_local std::vector<uint8_t> t_setup_args;

hipError_t ResolveEvent(hipEvent_t event, uint64_t* id) {
  *id = 0;
  if (event == nullptr) return hipSuccess;
  EventRecord record;
  if (!Client::Get().handles().FindEvent(event, &record)) return hipErrorInvalidHandle;
  *id = record.id;
  // The launch records it (counted even if the launch is then refused:
  // that only costs a later query its local answer).
  Client::Get().handles().NoteEventRecorded(event);
  return hipSuccess;
}

// The failure of a launch the client refused: logged (info) with its reason.
hipError_t Refused(const char* api, const Status& st) {
  if (!st.ok()) HIPR_LOG_INFO("%s: %s", api, st.message().c_str());
  return ToHipError(st);
}

struct RegisteredLaunch {
  const void* host_function = nullptr;
  dim3 grid;
  dim3 block;
  size_t shared_bytes = 0;
  hipStream_t stream = nullptr;
  hipEvent_t start = nullptr;
  hipEvent_t stop = nullptr;
  uint32_t flags = 0;
};

hipError_t LaunchRegistered(const char* api, const RegisteredLaunch& l, const KernelArgs& args) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  RegisteredKernel kernel;
  if (l.host_function == nullptr || !Kernels().FindRegisteredKernel(l.host_function, &kernel)) {
    HIPR_LOG_INFO("%s: %p is not a registered kernel", api, l.host_function);
    return hipErrorInvalidDeviceFunction;
  }
  LaunchSpec spec;
  if (hipError_t e = SetShape(l.grid, l.block, &spec); e != hipSuccess) return e;
  StreamTarget target;
  if (hipError_t e = ResolveStream(l.stream, &target); e != hipSuccess) return e;
  if (hipError_t e = CheckDevice(*s, target.device); e != hipSuccess) return e;
  spec.device = target.device;
  spec.stream = target.id;
  spec.shared_bytes = l.shared_bytes;
  spec.flags = l.flags;
  spec.func = l.host_function;
  if (hipError_t e = ResolveEvent(l.start, &spec.start_event); e != hipSuccess) return e;
  if (hipError_t e = ResolveEvent(l.stop, &spec.stop_event); e != hipSuccess) return e;
  return Refused(api, LaunchKernel(Client::Get(), *s, Managed(), Graphs(), *kernel.module, *kernel.name, spec, args));
}

hipError_t LaunchWithArgs(const char* api, const void* f, dim3 grid, dim3 block, void** args, size_t shared,
                          hipStream_t stream, uint32_t flags = 0) {
  RegisteredLaunch l;
  l.host_function = f;
  l.grid = grid;
  l.block = block;
  l.shared_bytes = shared;
  l.stream = stream;
  l.flags = flags;
  KernelArgs a;
  a.pointers = args;
  return LaunchRegistered(api, l, a);
}

// The code object metadata of a registered kernel for the calling thread's
// device.
hipError_t RegisteredKernelInfo(const void* f, Remote** session, const msg::DeviceInfo** device,
                                std::shared_ptr<const IsaImage>* image, const co::KernelInfo** kernel) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  RegisteredKernel k;
  if (f == nullptr || !Kernels().FindRegisteredKernel(f, &k)) return hipErrorInvalidDeviceFunction;
  int d = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &d); e != hipSuccess) return e;
  *device = &s->devices()[d];
  Status st = k.module->Image((*device)->gcn_arch_name, image);
  if (!st.ok()) return ToHipError(st);
  *kernel = (*image)->FindKernel(*k.name);
  if (*kernel == nullptr) return hipErrorInvalidDeviceFunction;
  *session = s;
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t __hipPushCallConfiguration(dim3 grid_dim, dim3 block_dim, size_t shared_mem,
                                                  hipStream_t stream) {
  if (t_call_depth == kMaxCallDepth) {
    HIPR_LOG_ERROR("__hipPushCallConfiguration: more than %d nested kernel launches", kMaxCallDepth);
    return Result(hipErrorInvalidConfiguration);
  }
  t_call_stack[t_call_depth++] = CallConfiguration{grid_dim, block_dim, shared_mem, stream};
  return Result(hipSuccess);
}

HIPR_EXPORT hipError_t __hipPopCallConfiguration(dim3* grid_dim, dim3* block_dim, size_t* shared_mem,
                                                 hipStream_t* stream) {
  if (t_call_depth == 0) return Result(hipErrorInvalidConfiguration);
  if (grid_dim == nullptr || block_dim == nullptr || shared_mem == nullptr || stream == nullptr)
    return Result(hipErrorInvalidValue);
  const CallConfiguration& c = t_call_stack[--t_call_depth];
  *grid_dim = c.grid;
  *block_dim = c.block;
  *shared_mem = c.shared_mem;
  *stream = c.stream;
  return Result(hipSuccess);
}

HIPR_EXPORT hipError_t hipLaunchKernel(const void* f, dim3 grid, dim3 block, void** args, size_t shared,
                                       hipStream_t stream) {
  return ApiCall("hipLaunchKernel",
                 [&] { return LaunchWithArgs("hipLaunchKernel", f, grid, block, args, shared, stream); });
}

HIPR_EXPORT hipError_t hipLaunchKernel_spt(const void* f, dim3 grid, dim3 block, void** args, size_t shared,
                                           hipStream_t stream) {
  return ApiCall("hipLaunchKernel_spt", [&] {
    return LaunchWithArgs("hipLaunchKernel_spt", f, grid, block, args, shared,
                          stream == nullptr ? hipStreamPerThread : stream);
  });
}

HIPR_EXPORT hipError_t hipExtLaunchKernel(const void* f, dim3 grid, dim3 block, void** args, size_t shared,
                                          hipStream_t stream, hipEvent_t start, hipEvent_t stop, int flags) {
  return ApiCall("hipExtLaunchKernel", [&] {
    RegisteredLaunch l;
    l.host_function = f;
    l.grid = grid;
    l.block = block;
    l.shared_bytes = shared;
    l.stream = stream;
    l.start = start;
    l.stop = stop;
    KernelArgs a;
    a.pointers = args;
    return LaunchRegistered("hipExtLaunchKernel", l, a);
  });
}

HIPR_EXPORT hipError_t hipLaunchCooperativeKernel(const void* f, dim3 grid, dim3 block, void** args,
                                                  unsigned int shared, hipStream_t stream) {
  return ApiCall("hipLaunchCooperativeKernel", [&] {
    return LaunchWithArgs("hipLaunchCooperativeKernel", f, grid, block, args, shared, stream,
                          msg::kLaunchCooperative);
  });
}

HIPR_EXPORT hipError_t hipLaunchCooperativeKernel_spt(const void* f, dim3 grid, dim3 block, void** args,
                                                      uint32_t shared, hipStream_t stream) {
  return ApiCall("hipLaunchCooperativeKernel_spt", [&] {
    return LaunchWithArgs("hipLaunchCooperativeKernel_spt", f, grid, block, args, shared,
                          stream == nullptr ? hipStreamPerThread : stream, msg::kLaunchCooperative);
  });
}

// ROCm 6.5+: a registered kernel launched with a configuration and an
// attribute list (launch_attributes.h: cooperative is the one attribute
// honoured, as in ROCm's runtime).
HIPR_EXPORT hipError_t hipLaunchKernelExC(const HiprLaunchConfig* config, const void* f, void** args) {
  return ApiCall("hipLaunchKernelExC", [&] {
    if (f == nullptr) return hipErrorInvalidDeviceFunction;
    if (config == nullptr) return hipErrorInvalidConfiguration;
    uint32_t flags = 0;
    if (hipError_t e = LaunchFlagsOf("hipLaunchKernelExC", config->attrs, config->num_attrs, &flags); e != hipSuccess)
      return e;
    return LaunchWithArgs("hipLaunchKernelExC", f, config->grid, config->block, args, config->dynamic_shared_bytes,
                          config->stream, flags);
  });
}

HIPR_EXPORT hipError_t hipConfigureCall(dim3 grid, dim3 block, size_t shared, hipStream_t stream) {
  return ApiCall("hipConfigureCall", [&] {
    if (t_call_depth == kMaxCallDepth) return hipErrorInvalidConfiguration;
    t_call_stack[t_call_depth++] = CallConfiguration{grid, block, shared, stream};
    t_setup_args.clear();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipSetupArgument(const void* arg, size_t size, size_t offset) {
  return ApiCall("hipSetupArgument", [&] {
    if ((arg == nullptr && size != 0) || offset > wire::kMaxMsgpackBin || size > wire::kMaxMsgpackBin - offset)
      return hipErrorInvalidValue;
    if (t_setup_args.size() < offset + size) t_setup_args.resize(offset + size);
    if (size != 0) std::memcpy(t_setup_args.data() + offset, arg, size);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipLaunchByPtr(const void* f) {
  return ApiCall("hipLaunchByPtr", [&] {
    if (t_call_depth == 0) return hipErrorInvalidConfiguration;
    const CallConfiguration c = t_call_stack[--t_call_depth];
    std::vector<uint8_t> bytes;
    bytes.swap(t_setup_args);
    RegisteredLaunch l;
    l.host_function = f;
    l.grid = c.grid;
    l.block = c.block;
    l.shared_bytes = c.shared_mem;
    l.stream = c.stream;
    KernelArgs a;
    a.has_buffer = true;
    a.short_buffer_reads_zero = true;  // Arguments never set read as zero.
    a.buffer = bytes.data();
    a.buffer_size = bytes.size();
    return LaunchRegistered("hipLaunchByPtr", l, a);
  });
}

namespace hip_impl {

// HIP-Clang's old grid launcher (declared inline and hidden in the stale
// amd_detail/functional_grid_launch.hpp, exported by libamdhip64.so.5 as
// _ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv):
// `kernarg` is hipModuleLaunchKernel's `extra` (a packed buffer), the
// function the registered host stub. Returns nothing: its error is the
// thread's last error.
__attribute__((visibility("default"))) void hipLaunchKernelGGLImpl(std::uintptr_t function_address,
                                                                   const dim3& num_blocks,
                                                                   const dim3& dim_blocks,
                                                                   std::uint32_t shared_mem_bytes,
                                                                   hipStream_t stream, void** kernarg) {
  (void)ApiCall("hip_impl::hipLaunchKernelGGLImpl", [&] {
    KernelArgs a;
    if (kernarg != nullptr) {
      if (hipError_t e = ParseExtra(kernarg, &a); e != hipSuccess) return e;
    }
    RegisteredLaunch l;
    l.host_function = reinterpret_cast<const void*>(function_address);
    l.grid = num_blocks;
    l.block = dim_blocks;
    l.shared_bytes = shared_mem_bytes;
    l.stream = stream;
    return LaunchRegistered("hip_impl::hipLaunchKernelGGLImpl", l, a);
  });
}

}  // namespace hip_impl

HIPR_EXPORT hipError_t hipFuncGetAttributes(hipFuncAttributes* attr, const void* f) {
  return ApiCall("hipFuncGetAttributes", [&] {
    if (attr == nullptr) return hipErrorInvalidValue;
    Remote* s = nullptr;
    const msg::DeviceInfo* d = nullptr;
    std::shared_ptr<const IsaImage> image;
    const co::KernelInfo* k = nullptr;
    if (hipError_t e = RegisteredKernelInfo(f, &s, &d, &image, &k); e != hipSuccess) return e;
    *attr = FunctionAttributes(*d, *k);
    return hipSuccess;
  });
}

// HIP 5.2 accepts and ignores these for any function; hipr checks that the
// function is a registered kernel.
HIPR_EXPORT hipError_t hipFuncSetAttribute(const void* f, hipFuncAttribute attr, int value) {
  return ApiCall("hipFuncSetAttribute", [&] {
    RegisteredKernel k;
    return f != nullptr && Kernels().FindRegisteredKernel(f, &k) ? hipSuccess : hipErrorInvalidDeviceFunction;
  });
}

HIPR_EXPORT hipError_t hipFuncSetCacheConfig(const void* f, hipFuncCache_t config) {
  return ApiCall("hipFuncSetCacheConfig", [&] {
    RegisteredKernel k;
    return f != nullptr && Kernels().FindRegisteredKernel(f, &k) ? hipSuccess : hipErrorInvalidDeviceFunction;
  });
}

HIPR_EXPORT hipError_t hipFuncSetSharedMemConfig(const void* f, hipSharedMemConfig config) {
  return ApiCall("hipFuncSetSharedMemConfig", [&] {
    RegisteredKernel k;
    return f != nullptr && Kernels().FindRegisteredKernel(f, &k) ? hipSuccess : hipErrorInvalidDeviceFunction;
  });
}

namespace {

// An unknown (or null) kernel in the occupancy calls: 5.x's runtime
// answered hipErrorInvalidValue, clr since 5.5 hipErrorInvalidDeviceFunction.
hipError_t UnknownKernelFor(hipError_t e, int major) {
  return e == hipErrorInvalidDeviceFunction && major < 6 ? hipErrorInvalidValue : e;
}

hipError_t OccupancyBlocks(int* num_blocks, const void* f, int block_size, size_t dynamic_shared, int major) {
  if (num_blocks == nullptr) return hipErrorInvalidValue;
  Remote* s = nullptr;
  const msg::DeviceInfo* d = nullptr;
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo* k = nullptr;
  if (hipError_t e = RegisteredKernelInfo(f, &s, &d, &image, &k); e != hipSuccess)
    return UnknownKernelFor(e, major);
  if (block_size <= 0) return hipErrorInvalidValue;
  *num_blocks = MaxActiveBlocksPerCu(*d, *k, block_size, dynamic_shared);
  return hipSuccess;
}

}  // namespace

// ROCm 7.2: the most dynamic shared memory a block of `block_size` threads
// may use while `blocks` such blocks stay resident on one CU, by the same
// occupancy model (0 when that many do not fit at all).
HIPR_EXPORT hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* f, int blocks,
                                                                int block_size) {
  return ApiCall("hipOccupancyAvailableDynamicSMemPerBlock", [&] {
    if (bytes == nullptr || blocks <= 0 || block_size <= 0) return hipErrorInvalidValue;
    Remote* s = nullptr;
    const msg::DeviceInfo* d = nullptr;
    std::shared_ptr<const IsaImage> image;
    const co::KernelInfo* k = nullptr;
    if (hipError_t e = RegisteredKernelInfo(f, &s, &d, &image, &k); e != hipSuccess) return e;
    const uint64_t limit = d->shared_mem_per_block > k->group_segment_fixed_size
                               ? d->shared_mem_per_block - k->group_segment_fixed_size
                               : 0;
    if (MaxActiveBlocksPerCu(*d, *k, block_size, 0) < blocks) {
      *bytes = 0;
      return hipSuccess;
    }
    // Blocks that fit only fall as the dynamic size grows: the largest size
    // that still fits `blocks`.
    uint64_t lo = 0;
    uint64_t hi = limit;
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo + 1) / 2;
      if (MaxActiveBlocksPerCu(*d, *k, block_size, mid) >= blocks)
        lo = mid;
      else
        hi = mid - 1;
    }
    *bytes = lo;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, const void* f,
                                                                    int block_size, size_t dynamic_shared) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipOccupancyMaxActiveBlocksPerMultiprocessor",
                 [&] { return OccupancyBlocks(num_blocks, f, block_size, dynamic_shared, major); });
}

HIPR_EXPORT hipError_t hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* num_blocks, const void* f,
                                                                             int block_size,
                                                                             size_t dynamic_shared,
                                                                             unsigned int flags) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", [&] {
    if (flags != hipOccupancyDefault && flags != hipOccupancyDisableCachingOverride) return hipErrorInvalidValue;
    return OccupancyBlocks(num_blocks, f, block_size, dynamic_shared, major);
  });
}

HIPR_EXPORT hipError_t hipOccupancyMaxPotentialBlockSize(int* grid_size, int* block_size, const void* f,
                                                         size_t dynamic_shared, int block_size_limit) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipOccupancyMaxPotentialBlockSize", [&] {
    if (grid_size == nullptr || block_size == nullptr) return hipErrorInvalidValue;
    Remote* s = nullptr;
    const msg::DeviceInfo* d = nullptr;
    std::shared_ptr<const IsaImage> image;
    const co::KernelInfo* k = nullptr;
    if (hipError_t e = RegisteredKernelInfo(f, &s, &d, &image, &k); e != hipSuccess)
      return UnknownKernelFor(e, major);
    MaxPotentialBlockSize(*d, *k, dynamic_shared, block_size_limit, grid_size, block_size);
    return hipSuccess;
  });
}

// Names: valid for the life of the process (registration keeps them).
HIPR_EXPORT const char* hipKernelNameRefByPtr(const void* host_function, hipStream_t stream) {
  try {
    RegisteredKernel k;
    return host_function != nullptr && Kernels().FindRegisteredKernel(host_function, &k) ? k.name->c_str() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

HIPR_EXPORT const char* hipKernelNameRef(const hipFunction_t function) {
  try {
    ModuleFunction f;
    return Kernels().FindModuleFunction(function, &f) ? f.name->c_str() : nullptr;
  } catch (...) {
    return nullptr;
  }
}

// Kernels on several devices at once, each on its own entry's stream (their
// devices must differ). The launches are independent (as natively, no
// synchronization across them is implied); flags must be 0.
HIPR_EXPORT hipError_t hipExtLaunchMultiKernelMultiDevice(hipLaunchParams* list, int count, unsigned int flags) {
  return ApiCall("hipExtLaunchMultiKernelMultiDevice", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (list == nullptr || count <= 0 || count > s->device_count() || flags != 0) return hipErrorInvalidValue;
    std::vector<int> devices;
    for (int i = 0; i < count; ++i) {
      StreamTarget target;
      if (hipError_t e = ResolveStream(list[i].stream, &target); e != hipSuccess) return e;
      if (std::find(devices.begin(), devices.end(), target.device) != devices.end()) return hipErrorInvalidDevice;
      devices.push_back(target.device);
      RegisteredKernel kernel;
      if (list[i].func == nullptr || !Kernels().FindRegisteredKernel(list[i].func, &kernel))
        return hipErrorInvalidDeviceFunction;
    }
    for (int i = 0; i < count; ++i) {
      const hipLaunchParams& p = list[i];
      if (hipError_t e = LaunchWithArgs("hipExtLaunchMultiKernelMultiDevice", p.func, p.gridDim, p.blockDim, p.args,
                                        p.sharedMem, p.stream);
          e != hipSuccess)
        return e;
    }
    return hipSuccess;
  });
}
