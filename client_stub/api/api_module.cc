// The module API (hipModuleLoad*, hipModuleGetFunction/Global,
// hipModuleLaunchKernel, hipExtModuleLaunchKernel, attributes, occupancy)
// and device variables of registered code (hipGetSymbolAddress/Size,
// hipMemcpyTo/FromSymbol).
//
// hipModuleLoad* read and check the image on the client (the file is read
// here: the worker has no access to this machine's files), for the calling
// thread's device, and keep its bytes; the worker sees the module only at its
// first use (a launch or hipModuleGetGlobal). hipModuleGetFunction is local.
// Symbols are a registered variable's host address; their first use loads
// their module on the calling thread's device.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include <hip/hip_ext.h>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/api/copy_paths.h"
#include "client_stub/api/module_symbols.h"
#include "client_stub/copies/copy_kind.h"
#include "client_stub/kernels/kernel_launch.h"
#include "client_stub/kernels/kernel_registry.h"
#include "client_stub/kernels/launch_attributes.h"

using namespace hipr;
using namespace hipr::client;

#ifndef hipOccupancyDisableCachingOverride
#define hipOccupancyDisableCachingOverride 0x01  // Newer headers define it; 5.2's lack it.
#endif

namespace {

Status ReadFile(const char* path, std::vector<uint8_t>* out) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return HipStatus(hipErrorFileNotFound, std::string("cannot open '") + path + "': " + std::strerror(errno));
  struct stat st {};
  Status result = Status::Ok();
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) > co::kMaxCodeObjectBytes) {
    result = HipStatus(hipErrorInvalidImage, std::string("'") + path + "' is not a regular file of a usable size");
  } else {
    out->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (done < out->size()) {
      ssize_t n = read(fd, out->data() + done, out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        result = HipStatus(hipErrorFileNotFound, std::string("cannot read '") + path + "'");
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  close(fd);
  return result;
}

// Makes a module of `image` and checks it has a usable code object for the
// calling thread's device (as HIP builds it for that device at load).
hipError_t NewModule(hipModule_t* module, std::vector<uint8_t> image, std::string name) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  CodeModule* m = CodeModule::NewLoaded(std::move(image), std::move(name), ApiModuleHooks());
  std::shared_ptr<const IsaImage> isa;
  Status st = m->Image(s->devices()[device].gcn_arch_name, &isa);
  if (!st.ok()) {
    m->Retire();
    return ToHipError(st);
  }
  *module = reinterpret_cast<hipModule_t>(m);
  return hipSuccess;
}

hipError_t LoadData(hipModule_t* module, const void* image) {
  if (module == nullptr || image == nullptr) return hipErrorInvalidValue;
  // No size is given: the image's headers say how long it is.
  const auto* p = static_cast<const uint8_t*>(image);
  // Only the readable memory that holds the image: headers that claim more
  // (a hostile e_shnum) are refused, never read past the caller's buffer.
  const uint64_t room = ReadableBytesAt(p, co::kMaxCodeObjectBytes);
  uint64_t size = 0;
  Status st = co::ImageSize(co::Bytes(p, room), &size);
  if (!st.ok()) {
    HIPR_LOG_ERROR("hipModuleLoadData: not a code object or offload bundle: %s", st.message().c_str());
    return hipErrorInvalidImage;
  }
  char name[64];
  std::snprintf(name, sizeof name, "image %p", image);
  return NewModule(module, std::vector<uint8_t>(p, p + size), name);
}

// The metadata of a module function's kernel on the calling thread's device.
hipError_t FunctionKernel(hipFunction_t f, const msg::DeviceInfo** device, std::shared_ptr<const IsaImage>* image,
                          const co::KernelInfo** kernel) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  ModuleFunction mf;
  if (!Kernels().FindModuleFunction(f, &mf)) return hipErrorInvalidResourceHandle;
  int d = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &d); e != hipSuccess) return e;
  *device = &s->devices()[d];
  if (Status st = mf.module->Image((*device)->gcn_arch_name, image); !st.ok()) return ToHipError(st);
  *kernel = (*image)->FindKernel(*mf.name);
  return *kernel == nullptr ? hipErrorInvalidDeviceFunction : hipSuccess;
}

struct ModuleLaunch {
  hipFunction_t f = nullptr;
  LaunchSpec spec;  // Shape and flags set; device and stream resolved here.
  hipStream_t stream = nullptr;
  void** params = nullptr;
  void** extra = nullptr;
  hipEvent_t start = nullptr;
  hipEvent_t stop = nullptr;
  // A block past the device's threads per block is hipErrorInvalidValue
  // here (clr since 5.6, for 6.x/7.x callers) rather than kernel_launch.h's
  // hipErrorInvalidConfiguration (5.2's answer).
  bool block_limit_invalid_value = false;
};

hipError_t LaunchModuleFunction(const char* api, ModuleLaunch l) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (l.f == nullptr) return hipErrorInvalidImage;  // As HIP 5.2.
  ModuleFunction mf;
  if (!Kernels().FindModuleFunction(l.f, &mf)) return hipErrorInvalidResourceHandle;
  if (l.params != nullptr && l.extra != nullptr) return hipErrorInvalidValue;
  KernelArgs args;
  args.pointers = l.params;
  if (l.extra != nullptr) {
    if (hipError_t e = ParseExtra(l.extra, &args); e != hipSuccess) return e;
  }
  StreamTarget target;
  if (hipError_t e = ResolveStream(l.stream, &target); e != hipSuccess) return e;
  if (hipError_t e = CheckDevice(*s, target.device); e != hipSuccess) return e;
  if (l.block_limit_invalid_value) {
    const int max_threads = s->devices()[target.device].max_threads_per_block;
    const uint64_t threads = uint64_t{l.spec.block[0]} * l.spec.block[1] * l.spec.block[2];
    if (max_threads > 0 && threads > static_cast<uint64_t>(max_threads)) return hipErrorInvalidValue;
  }
  l.spec.device = target.device;
  l.spec.stream = target.id;
  l.spec.func = l.f;
  for (auto [event, id] : {std::pair{l.start, &l.spec.start_event}, std::pair{l.stop, &l.spec.stop_event}}) {
    *id = 0;
    if (event == nullptr) continue;
    EventRecord record;
    if (!Client::Get().handles().FindEvent(event, &record)) return hipErrorInvalidHandle;
    *id = record.id;
    Client::Get().handles().NoteEventRecorded(event);  // As in api_launch.cc.
  }
  Status st = LaunchKernel(Client::Get(), *s, Managed(), Graphs(), *mf.module, *mf.name, l.spec, args);
  if (!st.ok()) HIPR_LOG_INFO("%s: %s", api, st.message().c_str());
  return ToHipError(st);
}

// hipExtModuleLaunchKernel's global sizes are in work-items; one that is not
// a multiple of the block leaves the last block of that dimension partial.
// The request carries the block count and the global size.
hipError_t ExtLaunch(const char* api, ModuleLaunch l, const uint32_t global[3], const uint32_t local[3]) {
  bool partial = false;
  for (int i = 0; i < 3; ++i) {
    if (global[i] == 0 || local[i] == 0) return hipErrorInvalidValue;
    l.spec.grid[i] = global[i] / local[i] + (global[i] % local[i] != 0 ? 1 : 0);
    l.spec.block[i] = local[i];
    partial = partial || global[i] % local[i] != 0;
  }
  if (partial) l.spec.global = {global[0], global[1], global[2]};
  return LaunchModuleFunction(api, l);
}

}  // namespace

namespace {

hipError_t CopyToSymbol(const void* symbol, const void* src, size_t count, size_t offset, hipMemcpyKind kind,
                        hipStream_t stream, bool async) {
  if (hipError_t e = CheckSymbolKind(kind, /*to_symbol=*/true); e != hipSuccess) return e;
  void* address = nullptr;
  size_t size = 0;
  if (hipError_t e = ResolveSymbol(symbol, &address, &size); e != hipSuccess) return e;
  if (offset > size || count > size - offset) return hipErrorInvalidValue;
  return CopyMemory(static_cast<char*>(address) + offset, src, count, kind, stream, async);
}

hipError_t CopyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset, hipMemcpyKind kind,
                          hipStream_t stream, bool async) {
  if (hipError_t e = CheckSymbolKind(kind, /*to_symbol=*/false); e != hipSuccess) return e;
  void* address = nullptr;
  size_t size = 0;
  if (hipError_t e = ResolveSymbol(symbol, &address, &size); e != hipSuccess) return e;
  if (offset > size || count > size - offset) return hipErrorInvalidValue;
  return CopyMemory(dst, static_cast<const char*>(address) + offset, count, kind, stream, async);
}

}  // namespace

HIPR_EXPORT hipError_t hipModuleLoad(hipModule_t* module, const char* fname) {
  return ApiCall("hipModuleLoad", [&] {
    // An empty name names nothing: hipErrorInvalidValue, as clr.
    if (module == nullptr || fname == nullptr || fname[0] == '\0') return hipErrorInvalidValue;
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    std::vector<uint8_t> bytes;
    if (Status st = ReadFile(fname, &bytes); !st.ok()) {
      HIPR_LOG_INFO("hipModuleLoad: %s", st.message().c_str());
      return ToHipError(st);
    }
    return NewModule(module, std::move(bytes), fname);
  });
}

HIPR_EXPORT hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  return ApiCall("hipModuleLoadData", [&] { return LoadData(module, image); });
}

// ROCm 7.1: a fat binary (offload bundle, compressed or not) or a code
// object, as hipModuleLoadData takes them.
HIPR_EXPORT hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin) {
  return ApiCall("hipModuleLoadFatBinary", [&] { return LoadData(module, fatbin); });
}

HIPR_EXPORT hipError_t hipModuleLoadDataEx(hipModule_t* module, const void* image, unsigned int num_options,
                                           hipJitOption* options, void** option_values) {
  // JIT options do not apply to code objects (HIP ignores them too).
  return ApiCall("hipModuleLoadDataEx", [&] { return LoadData(module, image); });
}

HIPR_EXPORT hipError_t hipModuleUnload(hipModule_t module) {
  return ApiCall("hipModuleUnload", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (module == nullptr) return hipErrorInvalidResourceHandle;
    CodeModule* m = LoadedModule(module);
    if (m == nullptr) return hipErrorNotFound;
    Kernels().ForgetModuleFunctions(m);
    m->Retire();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  return ApiCall("hipModuleGetFunction", [&] {
    if (function == nullptr || name == nullptr || name[0] == '\0') return hipErrorInvalidValue;
    Remote* s = nullptr;
    CodeModule* m = nullptr;
    int device = 0;
    if (hipError_t e = OpenModule(module, &s, &m, &device); e != hipSuccess) return e;
    std::shared_ptr<const IsaImage> image;
    if (Status st = m->Image(s->devices()[device].gcn_arch_name, &image); !st.ok()) return ToHipError(st);
    if (image->FindKernel(name) == nullptr) {
      HIPR_LOG_INFO("hipModuleGetFunction: module %s has no kernel '%s'", m->name().c_str(), name);
      return hipErrorNotFound;
    }
    *function = Kernels().GetModuleFunction(m, name);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipModuleGetGlobal(hipDeviceptr_t* dptr, size_t* bytes, hipModule_t module,
                                          const char* name) {
  return ApiCall("hipModuleGetGlobal", [&] {
    if ((dptr == nullptr && bytes == nullptr) || name == nullptr || name[0] == '\0') return hipErrorInvalidValue;
    void* address = nullptr;
    size_t size = 0;
    if (hipError_t e = ModuleGlobal(module, name, &address, &size); e != hipSuccess) return e;
    if (dptr != nullptr) *dptr = address;
    if (bytes != nullptr) *bytes = size;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t bx,
                                             uint32_t by, uint32_t bz, uint32_t shared, hipStream_t stream,
                                             void** params, void** extra) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipModuleLaunchKernel", [&] {
    // As clr: a grid past the device's (2^31 - 1 blocks in x, 65536 in y
    // and z) is refused before anything else is looked at.
    if (gx > uint32_t{INT32_MAX} || gy > 65536 || gz > 65536) return hipErrorInvalidValue;
    ModuleLaunch l;
    l.block_limit_invalid_value = major >= 6;
    if (hipError_t e = SetShape(dim3(gx, gy, gz), dim3(bx, by, bz), &l.spec); e != hipSuccess) return e;
    l.f = f;
    l.spec.shared_bytes = shared;
    l.stream = stream;
    l.params = params;
    l.extra = extra;
    return LaunchModuleFunction("hipModuleLaunchKernel", l);
  });
}

// ROCm 5.5+ (not in 5.2's headers or library; the stub exports it for 6.x
// and 7.x programs): hipModuleLaunchKernel with a cooperative grid, checked
// against what can be resident at once (kernel_launch.h).
HIPR_EXPORT hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx, unsigned int gy,
                                                        unsigned int gz, unsigned int bx, unsigned int by,
                                                        unsigned int bz, unsigned int shared, hipStream_t stream,
                                                        void** params) {
  return ApiCall("hipModuleLaunchCooperativeKernel", [&] {
    ModuleLaunch l;
    if (hipError_t e = SetShape(dim3(gx, gy, gz), dim3(bx, by, bz), &l.spec); e != hipSuccess) return e;
    l.f = f;
    l.spec.shared_bytes = shared;
    l.spec.flags = msg::kLaunchCooperative;
    l.stream = stream;
    l.params = params;
    return LaunchModuleFunction("hipModuleLaunchCooperativeKernel", l);
  });
}

// ROCm 6.5+: hipModuleLaunchKernel with a configuration and an attribute
// list (launch_attributes.h). Arguments come as kernelParams or, as for
// hipModuleLaunchKernel, as `extra`.
HIPR_EXPORT hipError_t hipDrvLaunchKernelEx(const HiprDrvLaunchConfig* config, hipFunction_t f, void** params,
                                            void** extra) {
  return ApiCall("hipDrvLaunchKernelEx", [&] {
    if (f == nullptr) return hipErrorInvalidResourceHandle;
    if (config == nullptr) return hipErrorInvalidValue;
    ModuleLaunch l;
    const dim3 grid(config->grid[0], config->grid[1], config->grid[2]);
    const dim3 block(config->block[0], config->block[1], config->block[2]);
    if (hipError_t e = SetShape(grid, block, &l.spec); e != hipSuccess) return e;
    if (hipError_t e = LaunchFlagsOf("hipDrvLaunchKernelEx", config->attrs, config->num_attrs, &l.spec.flags);
        e != hipSuccess)
      return e;
    l.f = f;
    l.spec.shared_bytes = config->shared_bytes;
    l.stream = config->stream;
    l.params = params;
    l.extra = extra;
    return LaunchModuleFunction("hipDrvLaunchKernelEx", l);
  });
}

// Exported C++-mangled, as 5.x's hip_ext.h declares it.
__attribute__((visibility("default"))) hipError_t hipExtModuleLaunchKernel(
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
    hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop, uint32_t flags) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipExtModuleLaunchKernel", [&] {
    // flags (hipExtAnyOrderLaunch) only relax ordering: ignoring it is safe.
    ModuleLaunch l;
    l.block_limit_invalid_value = major >= 6;
    l.f = f;
    l.spec.shared_bytes = shared;
    l.stream = stream;
    l.params = params;
    l.extra = extra;
    l.start = start;
    l.stop = stop;
    const uint32_t global[3] = {gx, gy, gz};
    const uint32_t local[3] = {lx, ly, lz};
    return ExtLaunch("hipExtModuleLaunchKernel", l, global, local);
  });
}

namespace {

// hipHccModuleLaunchKernel's path, for both of its exported names (the
// C++ one is deprecated in hip_ext.h, so the C alias does not call it).
hipError_t HccModuleLaunch(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly,
                           uint32_t lz, size_t shared, hipStream_t stream, void** params, void** extra,
                           hipEvent_t start, hipEvent_t stop) {
  return ApiCall("hipHccModuleLaunchKernel", [&] {
    ModuleLaunch l;
    l.f = f;
    l.spec.shared_bytes = shared;
    l.stream = stream;
    l.params = params;
    l.extra = extra;
    l.start = start;
    l.stop = stop;
    const uint32_t global[3] = {gx, gy, gz};
    const uint32_t local[3] = {lx, ly, lz};
    return ExtLaunch("hipHccModuleLaunchKernel", l, global, local);
  });
}

}  // namespace

__attribute__((visibility("default"))) hipError_t hipHccModuleLaunchKernel(
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
    hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
  return HccModuleLaunch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop);
}

HIPR_EXPORT hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attribute, hipFunction_t f) {
  return ApiCall("hipFuncGetAttribute", [&] {
    if (value == nullptr || f == nullptr) return hipErrorInvalidValue;
    const msg::DeviceInfo* d = nullptr;
    std::shared_ptr<const IsaImage> image;
    const co::KernelInfo* k = nullptr;
    if (hipError_t e = FunctionKernel(f, &d, &image, &k); e != hipSuccess) return e;
    return FunctionAttribute(*d, *k, attribute, value);
  });
}

namespace {

hipError_t ModuleBlocks(int* num_blocks, hipFunction_t f, int block_size, size_t dynamic_shared) {
  if (num_blocks == nullptr || block_size <= 0) return hipErrorInvalidValue;
  const msg::DeviceInfo* d = nullptr;
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo* k = nullptr;
  if (hipError_t e = FunctionKernel(f, &d, &image, &k); e != hipSuccess) return e;
  *num_blocks = MaxActiveBlocksPerCu(*d, *k, block_size, dynamic_shared);
  return hipSuccess;
}

hipError_t ModuleBlockSize(int* grid_size, int* block_size, hipFunction_t f, size_t dynamic_shared, int limit) {
  if (grid_size == nullptr || block_size == nullptr) return hipErrorInvalidValue;
  const msg::DeviceInfo* d = nullptr;
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo* k = nullptr;
  if (hipError_t e = FunctionKernel(f, &d, &image, &k); e != hipSuccess) return e;
  MaxPotentialBlockSize(*d, *k, dynamic_shared, limit, grid_size, block_size);
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* num_blocks, hipFunction_t f,
                                                                          int block_size, size_t dynamic_shared) {
  return ApiCall("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor",
                 [&] { return ModuleBlocks(num_blocks, f, block_size, dynamic_shared); });
}

HIPR_EXPORT hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* num_blocks,
                                                                                   hipFunction_t f, int block_size,
                                                                                   size_t dynamic_shared,
                                                                                   unsigned int flags) {
  return ApiCall("hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", [&] {
    if (flags != hipOccupancyDefault && flags != hipOccupancyDisableCachingOverride) return hipErrorInvalidValue;
    return ModuleBlocks(num_blocks, f, block_size, dynamic_shared);
  });
}

HIPR_EXPORT hipError_t hipModuleOccupancyMaxPotentialBlockSize(int* grid_size, int* block_size, hipFunction_t f,
                                                               size_t dynamic_shared, int limit) {
  return ApiCall("hipModuleOccupancyMaxPotentialBlockSize",
                 [&] { return ModuleBlockSize(grid_size, block_size, f, dynamic_shared, limit); });
}

HIPR_EXPORT hipError_t hipModuleOccupancyMaxPotentialBlockSizeWithFlags(int* grid_size, int* block_size,
                                                                        hipFunction_t f, size_t dynamic_shared,
                                                                        int limit, unsigned int flags) {
  return ApiCall("hipModuleOccupancyMaxPotentialBlockSizeWithFlags", [&] {
    if (flags != hipOccupancyDefault && flags != hipOccupancyDisableCachingOverride) return hipErrorInvalidValue;
    return ModuleBlockSize(grid_size, block_size, f, dynamic_shared, limit);
  });
}

HIPR_EXPORT hipError_t hipGetSymbolAddress(void** dev_ptr, const void* symbol) {
  return ApiCall("hipGetSymbolAddress", [&] {
    if (dev_ptr == nullptr) return hipErrorInvalidValue;
    size_t size = 0;
    return ResolveSymbol(symbol, dev_ptr, &size);
  });
}

HIPR_EXPORT hipError_t hipGetSymbolSize(size_t* size, const void* symbol) {
  return ApiCall("hipGetSymbolSize", [&] {
    if (size == nullptr) return hipErrorInvalidValue;
    void* address = nullptr;
    return ResolveSymbol(symbol, &address, size);
  });
}

HIPR_EXPORT hipError_t hipMemcpyToSymbol(const void* symbol, const void* src, size_t count, size_t offset,
                                         hipMemcpyKind kind) {
  return ApiCall("hipMemcpyToSymbol",
                 [&] { return CopyToSymbol(symbol, src, count, offset, kind, nullptr, /*async=*/false); });
}

HIPR_EXPORT hipError_t hipMemcpyToSymbol_spt(const void* symbol, const void* src, size_t count, size_t offset,
                                             hipMemcpyKind kind) {
  return ApiCall("hipMemcpyToSymbol_spt", [&] {
    return CopyToSymbol(symbol, src, count, offset, kind, hipStreamPerThread, /*async=*/false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyToSymbolAsync(const void* symbol, const void* src, size_t count, size_t offset,
                                              hipMemcpyKind kind, hipStream_t stream) {
  return ApiCall("hipMemcpyToSymbolAsync",
                 [&] { return CopyToSymbol(symbol, src, count, offset, kind, stream, /*async=*/true); });
}

HIPR_EXPORT hipError_t hipMemcpyToSymbolAsync_spt(const void* symbol, const void* src, size_t count, size_t offset,
                                                  hipMemcpyKind kind, hipStream_t stream) {
  return hipMemcpyToSymbolAsync(symbol, src, count, offset, kind, stream == nullptr ? hipStreamPerThread : stream);
}

HIPR_EXPORT hipError_t hipMemcpyFromSymbol(void* dst, const void* symbol, size_t count, size_t offset,
                                           hipMemcpyKind kind) {
  return ApiCall("hipMemcpyFromSymbol",
                 [&] { return CopyFromSymbol(dst, symbol, count, offset, kind, nullptr, /*async=*/false); });
}

HIPR_EXPORT hipError_t hipMemcpyFromSymbol_spt(void* dst, const void* symbol, size_t count, size_t offset,
                                               hipMemcpyKind kind) {
  return ApiCall("hipMemcpyFromSymbol_spt", [&] {
    return CopyFromSymbol(dst, symbol, count, offset, kind, hipStreamPerThread, /*async=*/false);
  });
}

HIPR_EXPORT hipError_t hipMemcpyFromSymbolAsync(void* dst, const void* symbol, size_t count, size_t offset,
                                                hipMemcpyKind kind, hipStream_t stream) {
  return ApiCall("hipMemcpyFromSymbolAsync",
                 [&] { return CopyFromSymbol(dst, symbol, count, offset, kind, stream, /*async=*/true); });
}

HIPR_EXPORT hipError_t hipMemcpyFromSymbolAsync_spt(void* dst, const void* symbol, size_t count, size_t offset,
                                                    hipMemcpyKind kind, hipStream_t stream) {
  return hipMemcpyFromSymbolAsync(dst, symbol, count, offset, kind, stream == nullptr ? hipStreamPerThread : stream);
}

// ROCm 6.2: the module function behind a registered kernel's host stub.
HIPR_EXPORT hipError_t hipGetFuncBySymbol(hipFunction_t* function, const void* symbol) {
  return ApiCall("hipGetFuncBySymbol", [&] {
    if (function == nullptr) return hipErrorInvalidValue;
    RegisteredKernel kernel;
    if (symbol == nullptr || !Kernels().FindRegisteredKernel(symbol, &kernel)) return hipErrorInvalidDeviceFunction;
    *function = Kernels().GetModuleFunction(kernel.module, *kernel.name);
    return *function != nullptr ? hipSuccess : hipErrorInvalidDeviceFunction;
  });
}

// ROCm 6.x/7.x also export hip_ext.h's launches under their C names.
extern "C" __attribute__((visibility("default"))) hipError_t HiprExtModuleLaunchKernelC(
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
    hipStream_t stream, void** params, void** extra, hipEvent_t start, hipEvent_t stop,
    uint32_t flags) __asm__("hipExtModuleLaunchKernel");
extern "C" hipError_t HiprExtModuleLaunchKernelC(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                                 uint32_t ly, uint32_t lz, size_t shared, hipStream_t stream,
                                                 void** params, void** extra, hipEvent_t start, hipEvent_t stop,
                                                 uint32_t flags) {
  return hipExtModuleLaunchKernel(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop, flags);
}

extern "C" __attribute__((visibility("default"))) hipError_t HiprHccModuleLaunchKernelC(
    hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx, uint32_t ly, uint32_t lz, size_t shared,
    hipStream_t stream, void** params, void** extra, hipEvent_t start,
    hipEvent_t stop) __asm__("hipHccModuleLaunchKernel");
extern "C" hipError_t HiprHccModuleLaunchKernelC(hipFunction_t f, uint32_t gx, uint32_t gy, uint32_t gz, uint32_t lx,
                                                 uint32_t ly, uint32_t lz, size_t shared, hipStream_t stream,
                                                 void** params, void** extra, hipEvent_t start, hipEvent_t stop) {
  return HccModuleLaunch(f, gx, gy, gz, lx, ly, lz, shared, stream, params, extra, start, stop);
}

// ROCm 7.1: how many kernels a loaded module has (for the current device's
// architecture, the code object a launch would use).
HIPR_EXPORT hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t module) {
  return ApiCall("hipModuleGetFunctionCount", [&] {
    if (count == nullptr) return hipErrorInvalidValue;
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (module == nullptr) return hipErrorInvalidResourceHandle;
    CodeModule* m = LoadedModule(module);
    if (m == nullptr) return hipErrorInvalidResourceHandle;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    std::shared_ptr<const IsaImage> image;
    if (Status st = m->Image(s->devices()[device].gcn_arch_name, &image); !st.ok()) return ToHipError(st);
    *count = static_cast<unsigned>(image->kernels.size());
    return hipSuccess;
  });
}

// --- ROCm 7.2 libraries ----------------------------------------------------
// A library is a loaded module bound to the device current at its load (as
// ROCm's runtime builds it for one device); its kernels are that module's
// functions, so a hipKernel_t is a hipFunction_t and launches with
// hipModuleLaunchKernel or hipDrvLaunchKernelEx. Library records are never
// freed: a stale handle is refused, never dereferenced.
// 7.2's handle types (Debian's 5.2 headers lack them).
typedef struct ihipLibrary_t* hipLibrary_t;
typedef struct ihipKernel_t* hipKernel_t;

namespace {

struct Library {
  CodeModule* module = nullptr;
  int device = 0;
};

std::mutex& LibraryMutex() {
  static std::mutex mu;
  return mu;
}
std::unordered_set<const Library*>& LiveLibraries() {
  static auto* live = new std::unordered_set<const Library*>;  // Never destroyed: used at exit.
  return *live;
}

bool FindLibrary(hipLibrary_t handle, Library* out) {
  std::lock_guard lock(LibraryMutex());
  const auto* l = reinterpret_cast<const Library*>(handle);
  if (handle == nullptr || LiveLibraries().count(l) == 0) return false;
  *out = *l;
  return true;
}

// The live library whose module is `module`; null when none.
hipLibrary_t LibraryOfModule(const CodeModule* module) {
  std::lock_guard lock(LibraryMutex());
  for (const Library* l : LiveLibraries())
    if (l->module == module) return reinterpret_cast<hipLibrary_t>(const_cast<Library*>(l));
  return nullptr;
}

// JIT options do not apply to code objects; ROCm's runtime refuses them
// here (hipErrorInvalidValue). Library options are hints about host-side
// tables and keeping the image, which a copy on the client makes moot.
hipError_t NewLibrary(hipLibrary_t* library, hipModule_t module) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  auto* l = new Library{reinterpret_cast<CodeModule*>(module), 0};
  if (hipError_t e = CurrentDeviceOf(*s, &l->device); e != hipSuccess) {
    l->module->Retire();
    delete l;
    return e;
  }
  std::lock_guard lock(LibraryMutex());
  LiveLibraries().insert(l);
  *library = reinterpret_cast<hipLibrary_t>(l);
  return hipSuccess;
}

// The library's code object for its device.
hipError_t LibraryImage(const Library& l, std::shared_ptr<const IsaImage>* image) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (l.device >= s->device_count()) return hipErrorInvalidDevice;
  return ToHipError(l.module->Image(s->devices()[l.device].gcn_arch_name, image));
}

}  // namespace

HIPR_EXPORT hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption* jit_options,
                                          void** jit_values, unsigned int num_jit_options, int* library_options,
                                          void** library_values, unsigned int num_library_options) {
  return ApiCall("hipLibraryLoadData", [&] {
    if (library == nullptr || code == nullptr || num_jit_options > 0) return hipErrorInvalidValue;
    hipModule_t module = nullptr;
    if (hipError_t e = LoadData(&module, code); e != hipSuccess) return e;
    return NewLibrary(library, module);
  });
}

HIPR_EXPORT hipError_t hipLibraryLoadFromFile(hipLibrary_t* library, const char* path, hipJitOption* jit_options,
                                              void** jit_values, unsigned int num_jit_options,
                                              int* library_options, void** library_values,
                                              unsigned int num_library_options) {
  return ApiCall("hipLibraryLoadFromFile", [&] {
    if (library == nullptr || path == nullptr || num_jit_options > 0) return hipErrorInvalidValue;
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    std::vector<uint8_t> bytes;
    if (Status st = ReadFile(path, &bytes); !st.ok()) {
      HIPR_LOG_INFO("hipLibraryLoadFromFile: %s", st.message().c_str());
      // ROCm's runtime: a file that does not exist is an invalid value.
      return ToHipError(st) == hipErrorFileNotFound ? hipErrorInvalidValue : ToHipError(st);
    }
    hipModule_t module = nullptr;
    if (hipError_t e = NewModule(&module, std::move(bytes), path); e != hipSuccess) return e;
    return NewLibrary(library, module);
  });
}

HIPR_EXPORT hipError_t hipLibraryUnload(hipLibrary_t library) {
  return ApiCall("hipLibraryUnload", [&] {
    const auto* l = reinterpret_cast<const Library*>(library);
    CodeModule* module = nullptr;
    {
      std::lock_guard lock(LibraryMutex());
      if (library == nullptr || LiveLibraries().erase(l) == 0) return hipErrorInvalidResourceHandle;
      module = l->module;
    }
    Kernels().ForgetModuleFunctions(module);
    module->Retire();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t library) {
  return ApiCall("hipLibraryGetKernelCount", [&] {
    Library l;
    if (count == nullptr || !FindLibrary(library, &l)) return hipErrorInvalidValue;
    std::shared_ptr<const IsaImage> image;
    if (hipError_t e = LibraryImage(l, &image); e != hipSuccess) return e;
    *count = static_cast<unsigned>(image->info.kernels.size());
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipLibraryGetKernel(hipKernel_t* kernel, hipLibrary_t library, const char* name) {
  return ApiCall("hipLibraryGetKernel", [&] {
    Library l;
    if (kernel == nullptr || name == nullptr || !FindLibrary(library, &l)) return hipErrorInvalidValue;
    std::shared_ptr<const IsaImage> image;
    if (hipError_t e = LibraryImage(l, &image); e != hipSuccess) return e;
    if (image->FindKernel(name) == nullptr) {
      HIPR_LOG_INFO("hipLibraryGetKernel: library %s has no kernel '%s'", l.module->name().c_str(), name);
      return hipErrorNotFound;
    }
    *kernel = reinterpret_cast<hipKernel_t>(Kernels().GetModuleFunction(l.module, name));
    return hipSuccess;
  });
}

// The first `count` kernels in the code object's metadata order (fewer when
// the library has fewer).
HIPR_EXPORT hipError_t hipLibraryEnumerateKernels(hipKernel_t* kernels, unsigned int count, hipLibrary_t library) {
  return ApiCall("hipLibraryEnumerateKernels", [&] {
    Library l;
    if (kernels == nullptr || !FindLibrary(library, &l)) return hipErrorInvalidValue;
    std::shared_ptr<const IsaImage> image;
    if (hipError_t e = LibraryImage(l, &image); e != hipSuccess) return e;
    const auto& all = image->info.kernels;
    for (size_t i = 0; i < all.size() && i < count; ++i)
      kernels[i] = reinterpret_cast<hipKernel_t>(Kernels().GetModuleFunction(l.module, all[i].name));
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipKernelGetLibrary(hipLibrary_t* library, hipKernel_t kernel) {
  return ApiCall("hipKernelGetLibrary", [&] {
    if (library == nullptr || kernel == nullptr) return hipErrorInvalidValue;
    ModuleFunction f;
    if (!Kernels().FindModuleFunction(reinterpret_cast<hipFunction_t>(kernel), &f)) return hipErrorInvalidHandle;
    hipLibrary_t owner = LibraryOfModule(f.module);
    if (owner == nullptr) return hipErrorInvalidHandle;  // A hipModuleLoad function, not a library's.
    *library = owner;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipKernelGetName(const char** name, hipKernel_t kernel) {
  return ApiCall("hipKernelGetName", [&] {
    if (name == nullptr || kernel == nullptr) return hipErrorInvalidValue;
    ModuleFunction f;
    if (!Kernels().FindModuleFunction(reinterpret_cast<hipFunction_t>(kernel), &f) ||
        LibraryOfModule(f.module) == nullptr)
      return hipErrorInvalidHandle;
    *name = f.name->c_str();
    return hipSuccess;
  });
}
