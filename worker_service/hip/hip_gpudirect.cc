#include "worker_service/hip/hip_gpudirect.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

namespace hipr::worker {
namespace {

constexpr uint64_t kPage = 4096;

template <typename Fn>
void Resolve(void* handle, const char* name, Fn* out) {
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
}

// HIP_VERSION = major * 10000000 + minor * 100000 + patch (hip_version.h).
std::string VersionText(int v) {
  return std::to_string(v / 10000000) + "." + std::to_string(v / 100000 % 100) + "." + std::to_string(v % 100000);
}

std::string Basename(const char* path) {
  const std::string p = path;
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

}  // namespace

HipDmaBufApi ResolveHipDmaBufApi(void* handle) {
  HipDmaBufApi api;
  Resolve(handle, "hipMemGetHandleForAddressRange", &api.get_handle_for_address_range);
  Resolve(handle, "hipMemGetAddressRange", &api.get_address_range);
  Resolve(handle, "hipGetDeviceCount", &api.get_device_count);
  Resolve(handle, "hipDeviceGetAttribute", &api.device_get_attribute);
  Resolve(handle, "hipRuntimeGetVersion", &api.runtime_get_version);
  api.runtime = "HIP";
  int version = 0;
  if (api.runtime_get_version != nullptr && api.runtime_get_version(&version) == 0 && version > 0)
    api.runtime += " " + VersionText(version);
  Dl_info info{};
  if (api.runtime_get_version != nullptr &&
      dladdr(reinterpret_cast<void*>(api.runtime_get_version), &info) != 0 && info.dli_fname != nullptr)
    api.runtime += " (" + Basename(info.dli_fname) + ")";
  return api;
}

std::string GpuDirectCapability::Describe() const {
  return (available ? "available: " : "unavailable: ") + detail;
}

GpuDirectCapability ProbeGpuDirect(const HipDmaBufApi& hip, rdma::RegDmaBufMrFn reg) {
  GpuDirectCapability cap;
  if (hip.get_handle_for_address_range == nullptr) {
    cap.detail = hip.runtime +
                 " has no hipMemGetHandleForAddressRange (dma-buf export of device memory, added in HIP 7.0)";
    return cap;
  }
  if (reg == nullptr) {
    cap.detail = "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 has it)";
    return cap;
  }
  if (hip.get_device_count == nullptr || hip.device_get_attribute == nullptr) {
    cap.detail = hip.runtime + " lacks hipGetDeviceCount or hipDeviceGetAttribute";
    return cap;
  }
  int count = 0;
  if (int e = hip.get_device_count(&count); e != 0 || count <= 0) {
    cap.detail = "no GPU (hipGetDeviceCount: error " + std::to_string(e) + ", " + std::to_string(count) + " devices)";
    return cap;
  }
  std::vector<int> with;
  std::string failures;
  for (int d = 0; d < count; ++d) {
    int value = 0;
    const int e = hip.device_get_attribute(&value, kHipDeviceAttributeDmaBufSupported, d);
    if (e != 0)
      failures += "; GPU " + std::to_string(d) + ": hipDeviceGetAttribute(hipDeviceAttributeDmaBufSupported) error " +
                  std::to_string(e);
    else if (value != 0)
      with.push_back(d);
  }
  if (with.empty()) {
    cap.detail = "no GPU of " + std::to_string(count) +
                 " reports hipDeviceAttributeDmaBufSupported (amdgpu kernel driver without dma-buf export?)" + failures;
    return cap;
  }
  std::string gpus;
  for (int d : with) gpus += (gpus.empty() ? "" : ",") + std::to_string(d);
  cap.available = true;
  cap.detail = "dma-buf (" + hip.runtime + "; GPU " + gpus + " of " + std::to_string(count) +
               "; the NIC's provider is asked at the first registration)" + failures;
  return cap;
}

Status RegisterDeviceMemory(const HipDmaBufApi& hip, rdma::RegDmaBufMrFn reg, ibv_pd* pd, uint64_t address,
                            size_t length, int access, ibv_mr** out) {
  if (hip.get_handle_for_address_range == nullptr)
    return Status(StatusCode::kNotSupported,
                  hip.runtime + " has no hipMemGetHandleForAddressRange (dma-buf export of device memory)");
  if (hip.get_address_range == nullptr)
    return Status(StatusCode::kNotSupported, hip.runtime + " has no hipMemGetAddressRange");
  if (reg == nullptr)
    return Status(StatusCode::kNotSupported, "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 has it)");
  if (length == 0 || address + length < address) return InvalidArgument("device memory registration: empty range");

  void* base_ptr = nullptr;
  size_t size = 0;
  if (int e = hip.get_address_range(&base_ptr, &size, reinterpret_cast<void*>(address)); e != 0)
    return Status(StatusCode::kInvalidDevicePointer,
                  "hipMemGetAddressRange(" + std::to_string(address) + ") failed: error " + std::to_string(e) +
                      " (not device memory of this process?)");
  const uint64_t base = reinterpret_cast<uintptr_t>(base_ptr);
  if (address < base || address + length > base + size)
    return Status(StatusCode::kInvalidDevicePointer, "device memory registration: range runs past its allocation");
  if (base % kPage != 0)
    return InvalidArgument("device memory registration: allocation base " + std::to_string(base) +
                           " is not page-aligned");
  const uint64_t first = address / kPage * kPage;
  const uint64_t end = std::min<uint64_t>((address + length + kPage - 1) / kPage * kPage, base + size);

  int fd = -1;
  if (int e = hip.get_handle_for_address_range(&fd, base_ptr, size, kHipMemRangeHandleTypeDmaBufFd, 0); e != 0) {
    // A failing export should write nothing; close anything it did write.
    if (fd >= 0) close(fd);
    return Status(StatusCode::kNotSupported, "hipMemGetHandleForAddressRange(dma-buf, " + std::to_string(size) +
                                                 " bytes) failed: error " + std::to_string(e));
  }
  if (fd < 0) return Status(StatusCode::kInternal, "hipMemGetHandleForAddressRange returned no fd");
  // The region holds its own reference to the dma-buf: ours goes either way.
  const Status st = rdma::RegisterDmaBuf(reg, pd, fd, first - base, end - first, first, access, out);
  close(fd);
  return st;
}

}  // namespace hipr::worker
