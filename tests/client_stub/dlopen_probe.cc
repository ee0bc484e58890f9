// Test program for the stub's dlopen interposition (client_stub_dlopen_runpath;
// run with LD_PRELOAD=libhip_client_stub.so). Exits 0 when:
//  * dlopen really is the stub's (the interposition is active),
//  * dlopen("libfoo.so"), found only through this program's RUNPATH
//    $ORIGIN/libs, still loads: the stub's dlopen kept the caller's identity,
//  * dlopen of libamdhip64 names returns the stub itself, for any directory
//    or version suffix, and never the real runtime,
//  * unknown names still fail with a dlerror message.
#include <dlfcn.h>
#include <link.h>

#include <cstdio>
#include <cstring>

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

const char* ObjectOf(void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

bool IsStub(const char* path) { return std::strstr(path, "libhip_client_stub.so") != nullptr; }

}  // namespace

int main() {
  // Through the GOT: the definition the program's own dlopen calls reach.
  void* (*volatile our_dlopen)(const char*, int) = &dlopen;
  Check(IsStub(ObjectOf(reinterpret_cast<void*>(our_dlopen))), "dlopen resolves to the hipr stub");

  void* foo = dlopen("libfoo.so", RTLD_NOW);
  Check(foo != nullptr, "dlopen(\"libfoo.so\") found through the caller's RUNPATH $ORIGIN/libs");
  if (foo == nullptr) std::printf("      dlerror: %s\n", dlerror());
  if (foo != nullptr) {
    auto fn = reinterpret_cast<int (*)()>(dlsym(foo, "hipr_probe_foo"));
    Check(fn != nullptr && fn() == 42, "libfoo's symbol works");
  }

  const char* names[] = {"libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6",
                         "/opt/rocm/lib/libamdhip64.so.7"};
  for (const char* name : names) {
    void* h = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    char what[128];
    std::snprintf(what, sizeof what, "dlopen(\"%s\") gives the stub", name);
    void* sym = h != nullptr ? dlsym(h, "hipGetDeviceCount") : nullptr;
    Check(sym != nullptr && IsStub(ObjectOf(sym)), what);
  }

  void* none = dlopen("libhipr-no-such-library.so", RTLD_NOW);
  Check(none == nullptr && dlerror() != nullptr, "an unknown library still fails with dlerror");

  void* self = dlopen(nullptr, RTLD_NOW);
  Check(self != nullptr, "dlopen(NULL) still returns the main program");

  // The real runtime must not be mapped.
  bool real_loaded = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (std::strstr(info->dlpi_name, "libamdhip64") != nullptr ||
            std::strstr(info->dlpi_name, "libhsa-runtime") != nullptr)
          *static_cast<bool*>(data) = true;
        return 0;
      },
      &real_loaded);
  Check(!real_loaded, "no real libamdhip64 / libhsa-runtime is loaded");
  return failures == 0 ? 0 : 1;
}
