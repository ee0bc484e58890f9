// The stub's one non-HIP export, `dlopen` (unversioned, so that references to
// dlopen@GLIBC_* in the program and in Python bind to it under LD_PRELOAD).
//
// dlopen of any name whose basename starts with "libamdhip64" returns a
// handle to the stub itself, so ctypes-style loaders and libraries that
// dlopen the runtime reach the stub's functions and the real runtime never
// loads. Every other name goes to the real dlopen by a tail jump from the
// assembly trampoline (dlopen_trampoline.S): glibc then sees the original
// caller's return address, so the caller's $ORIGIN, RPATH and RUNPATH keep
// applying (a C wrapper calling the real dlopen would make glibc search with
// the stub's paths instead). gcc 12 has no musttail, hence the assembly.
#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>

#include "client_stub/abi/abi_major.h"
#include "client_stub/base/log.h"
#include "client_stub/abi/runtime_names.h"

// Both are referenced from dlopen_trampoline.S and must stay hidden (direct,
// PC-relative references; no PLT or GOT).
extern "C" {

// The real dlopen, resolved on first use; jumped to by the trampoline.
__attribute__((visibility("hidden"))) void* hipr_real_dlopen = nullptr;

// Returns the handle to give the caller, or nullptr to make the trampoline
// jump to the real dlopen with the caller's original arguments.
__attribute__((visibility("hidden"))) void* hipr_dlopen_decide(const char* file, int mode);

}  // extern "C"

namespace hipr::client {
namespace {

using DlopenFn = void* (*)(const char*, int);

DlopenFn RealDlopen() {
  // dlsym may race with itself harmlessly; every thread stores the same value.
  static constinit std::atomic<DlopenFn> real{nullptr};
  DlopenFn fn = real.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
    real.store(fn, std::memory_order_release);
    __atomic_store_n(&hipr_real_dlopen, reinterpret_cast<void*>(fn), __ATOMIC_RELEASE);
  }
  return fn;
}

bool NamesHipRuntime(const char* file) {
  const char* base = std::strrchr(file, '/');
  base = base == nullptr ? file : base + 1;
  return std::strncmp(base, "libamdhip64", 11) == 0;
}

// A new reference to the stub's own link map, whatever name it was loaded
// by (LD_PRELOAD path, or a drop-in libamdhip64.so.N symlink).
void* SelfHandle(DlopenFn real, int mode) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&hipr_dlopen_decide), &info) == 0 || info.dli_fname == nullptr)
    return nullptr;
  return real(info.dli_fname, (mode & ~RTLD_NOLOAD) | RTLD_NOLOAD);
}

// The stub's one constructor, run as soon as the loader has mapped it (under
// LD_PRELOAD: before any library the program dlopens later): every
// libamdhip64 name becomes the stub's (runtime_names.h).
__attribute__((constructor)) void ClaimNamesAtLoad() {
  ClaimRuntimeNames(RealDlopen());
  ReportForeignRuntimes();
}

}  // namespace
}  // namespace hipr::client

extern "C" void* hipr_dlopen_decide(const char* file, int mode) {
  using namespace hipr::client;
  DlopenFn real = RealDlopen();
  if (file == nullptr || real == nullptr || !NamesHipRuntime(file)) return nullptr;
  void* self = SelfHandle(real, mode);
  if (self != nullptr) {
    HIPR_LOG_DEBUG("dlopen(\"%s\") -> the hipr client stub", file);
    // Code that reaches HIP through this handle has no DT_NEEDED of its own:
    // it gets the major this name asked for (abi_major.h), or that of the
    // runtime file a path names (read, never loaded).
    int major = MajorOfName(file);
    if (major == 0 && std::strchr(file, '/') != nullptr) major = RuntimeFileMajor(file);
    NoteDlopenMajor(major);
  } else {
    HIPR_LOG_WARN("dlopen(\"%s\"): cannot open the hipr stub itself (%s); using the real dlopen", file,
                  dlerror());
  }
  return self;
}
