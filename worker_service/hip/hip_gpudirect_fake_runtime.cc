// Tests only (hip_gpudirect_test.cc): a stand-in HIP runtime exporting the
// functions hip_gpudirect.cc resolves, as HIP >= 7.0 does. One allocation
// of 64 MiB at kFakeBase on two GPUs, of which GPU 1 reports dma-buf
// support; exports hand out a real fd (an eventfd) so leaks are visible.
// hipr_fake_* let the test steer it and see what it was asked.
#include <sys/eventfd.h>

#include <cstddef>
#include <cstdint>

namespace {

constexpr uintptr_t kFakeBase = uintptr_t{0x7f1200000000};
constexpr size_t kFakeSize = size_t{64} << 20;

struct ExportCall {
  int calls = 0;
  void* dptr = nullptr;
  size_t size = 0;
  unsigned type = 0;
  unsigned long long flags = 0;
  int fd = -1;
};

ExportCall last_export;
int export_error = 0;  // Nonzero: exports fail with it.

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int hipRuntimeGetVersion(int* version) {
  *version = 70051831;  // HIP 7.0.51831.
  return 0;
}

__attribute__((visibility("default"))) int hipGetDeviceCount(int* count) {
  *count = 2;
  return 0;
}

__attribute__((visibility("default"))) int hipDeviceGetAttribute(int* value, int attribute, int device) {
  if (attribute != 93 || device < 0 || device > 1) return 1;  // hipErrorInvalidValue.
  *value = device == 1 ? 1 : 0;
  return 0;
}

__attribute__((visibility("default"))) int hipMemGetAddressRange(void** base, size_t* size, void* dptr) {
  const uintptr_t p = reinterpret_cast<uintptr_t>(dptr);
  if (p < kFakeBase || p >= kFakeBase + kFakeSize) return 1;
  *base = reinterpret_cast<void*>(kFakeBase);
  *size = kFakeSize;
  return 0;
}

__attribute__((visibility("default"))) int hipMemGetHandleForAddressRange(void* handle, void* dptr, size_t size,
                                                                          unsigned type, unsigned long long flags) {
  last_export = {last_export.calls + 1, dptr, size, type, flags, -1};
  if (export_error != 0) return export_error;
  const int fd = eventfd(0, EFD_CLOEXEC);
  if (fd < 0) return 2;  // hipErrorOutOfMemory.
  *static_cast<int*>(handle) = fd;
  last_export.fd = fd;
  return 0;
}

__attribute__((visibility("default"))) uintptr_t hipr_fake_base() { return kFakeBase; }
__attribute__((visibility("default"))) size_t hipr_fake_size() { return kFakeSize; }
__attribute__((visibility("default"))) void hipr_fake_set_export_error(int error) { export_error = error; }
// What the last export was asked, and the fd it returned (-1: none).
__attribute__((visibility("default"))) int hipr_fake_last_export(void** dptr, size_t* size, unsigned* type,
                                                                 unsigned long long* flags, int* fd) {
  *dptr = last_export.dptr;
  *size = last_export.size;
  *type = last_export.type;
  *flags = last_export.flags;
  *fd = last_export.fd;
  return last_export.calls;
}

}  // extern "C"
