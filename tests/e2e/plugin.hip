// libplugin.so: a HIP plugin that exists only in dlopen_main's
// $ORIGIN/plugins, found through dlopen_main's RUNPATH.
#include <vector>

#include "common.h"

// A verified round trip of n bytes; 0 on success, else the failing step.
extern "C" int plugin_roundtrip(size_t n) {
  std::vector<uint8_t> src(n), got(n, 0);
  e2e::FillPattern(src.data(), n, 0x9106 + n);
  void* d = nullptr;
  if (hipMalloc(&d, n) != hipSuccess) return 1;
  if (hipMemcpy(d, src.data(), n, hipMemcpyHostToDevice) != hipSuccess) return 2;
  if (hipMemcpy(got.data(), d, n, hipMemcpyDeviceToHost) != hipSuccess) return 3;
  if (memcmp(got.data(), src.data(), n) != 0) return 4;
  if (hipFree(d) != hipSuccess) return 5;
  return 0;
}

// hipMalloc as this library resolves it.
extern "C" void* plugin_hipmalloc_address() {
  return reinterpret_cast<void*>(static_cast<hipError_t (*)(void**, size_t)>(&hipMalloc));
}
