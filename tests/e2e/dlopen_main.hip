// dlopen_main: built with RUNPATH $ORIGIN/plugins. Under LD_PRELOAD of the
// stub, which interposes dlopen:
//  * dlopen("libplugin.so") must still find $ORIGIN/plugins/libplugin.so
//    (the stub must keep this caller's RUNPATH), and the plugin must work;
//  * dlopen of libamdhip64 names must hand back the stub: dlsym(handle,
//    "hipMalloc") is the stub's hipMalloc.
#include <dlfcn.h>

#include <string>

#include "common.h"

namespace {

void CheckLibamdhipHandle(const char* name, void* stub_malloc) {
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  CHECK(h != nullptr, "dlopen(\"%s\") failed: %s", name, dlerror());
  void* sym = dlsym(h, "hipMalloc");
  CHECK(sym != nullptr, "dlsym(dlopen(\"%s\"), \"hipMalloc\") failed: %s", name, dlerror());
  std::string file = e2e::DefiningFile(sym);
  CHECK(e2e::Basename(file) == e2e::kStubFile, "dlopen(\"%s\"): hipMalloc lives in %s, not the stub", name,
        file.c_str());
  CHECK(sym == stub_malloc, "dlopen(\"%s\"): hipMalloc is %p, the preloaded stub's is %p", name, sym, stub_malloc);
  // The handle works like the library it stands for.
  using MallocFn = hipError_t (*)(void**, size_t);
  using FreeFn = hipError_t (*)(void*);
  void* p = nullptr;
  HIP_OK(reinterpret_cast<MallocFn>(sym)(&p, 4096));
  auto free_fn = reinterpret_cast<FreeFn>(dlsym(h, "hipFree"));
  CHECK(free_fn != nullptr, "dlsym(dlopen(\"%s\"), \"hipFree\"): %s", name, dlerror());
  HIP_OK(free_fn(p));
  printf("  dlopen(\"%s\") -> the stub (%s)\n", name, file.c_str());
  // Not dlclose'd: closing the runtime while in use is what real programs avoid too.
}

}  // namespace

int main() {
  void* stub_malloc = dlsym(RTLD_DEFAULT, "hipMalloc");
  CHECK(stub_malloc != nullptr, "dlsym(RTLD_DEFAULT, hipMalloc): %s", dlerror());
  e2e::CheckHipIsStub();
  void* linked_malloc = reinterpret_cast<void*>(static_cast<hipError_t (*)(void**, size_t)>(&hipMalloc));
  CHECK(linked_malloc == stub_malloc, "&hipMalloc %p differs from dlsym's %p", linked_malloc, stub_malloc);

  // 1. A plugin found only through this program's RUNPATH.
  void* plugin = dlopen("libplugin.so", RTLD_NOW | RTLD_LOCAL);
  CHECK(plugin != nullptr, "dlopen(\"libplugin.so\") failed (RUNPATH $ORIGIN/plugins lost?): %s", dlerror());
  Dl_info info{};
  void* roundtrip_sym = dlsym(plugin, "plugin_roundtrip");
  CHECK(roundtrip_sym != nullptr, "dlsym(plugin_roundtrip): %s", dlerror());
  CHECK(dladdr(roundtrip_sym, &info) != 0, "dladdr(plugin_roundtrip) failed");
  printf("  libplugin.so loaded from %s\n", info.dli_fname);
  CHECK(strstr(info.dli_fname, "/plugins/libplugin.so") != nullptr, "libplugin.so came from %s", info.dli_fname);
  auto roundtrip = reinterpret_cast<int (*)(size_t)>(roundtrip_sym);
  auto plugin_malloc = reinterpret_cast<void* (*)()>(dlsym(plugin, "plugin_hipmalloc_address"));
  CHECK(plugin_malloc != nullptr, "dlsym(plugin_hipmalloc_address): %s", dlerror());
  CHECK(plugin_malloc() == stub_malloc, "the plugin's hipMalloc is %p, the stub's %p", plugin_malloc(), stub_malloc);
  const size_t sizes[] = {1, 4096, (size_t{5} << 20) + 3};
  for (size_t n : sizes) {
    int step = roundtrip(n);
    CHECK(step == 0, "the plugin's round trip of %zu bytes failed at step %d", n, step);
  }
  printf("  the plugin's hipMalloc/hipMemcpy round trips passed\n");

  // 2. The runtime's own names, as frameworks and ctypes-style loaders open it.
  CheckLibamdhipHandle("libamdhip64.so.5", stub_malloc);
  CheckLibamdhipHandle("libamdhip64.so", stub_malloc);
  CheckLibamdhipHandle("/usr/lib/x86_64-linux-gnu/libamdhip64.so.5", stub_malloc);

  // 3. Other names still go to the real dlopen, with their errors.
  void* missing = dlopen("libhipr-e2e-does-not-exist.so", RTLD_NOW);
  CHECK(missing == nullptr, "dlopen of a missing library succeeded");
  const char* err = dlerror();
  CHECK(err != nullptr && strstr(err, "libhipr-e2e-does-not-exist.so") != nullptr, "dlerror() is '%s'",
        err ? err : "(null)");
  printf("[dlopen_main] plugin via RUNPATH and libamdhip64 handles OK\n");
  return e2e::Finish("dlopen_main");
}
