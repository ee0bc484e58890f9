// Which libamdhip64 major (5, 6 or 7) the code calling an entry point was
// built for. One stub file serves every major (docs/architecture.md, "ABI and
// majors"); a few functions kept their name but changed meaning between
// majors (client_stub/abi/per_major.txt), and answer per calling object, not
// per process, since one process may hold a 5.x program and a 6.x library.
//
// The calling object is found from the call's return address (dladdr1 with
// RTLD_DL_LINKMAP). Its major is the first of these that gives one:
//  1. HIPR_ABI_MAJOR, when set (5, 6 or 7): every caller, no detection.
//  2. The N of its DT_NEEDED libamdhip64.so.N: the name its link recorded.
//     (A program linked against the stub itself needs libamdhip64.so.5 and
//     may reference every major's nodes: it is a 5.x program.)
//  3. The version nodes its undefined symbols reference in a libamdhip64*
//     file (DT_VERNEED): hip_6.x means 6, hip_7.x means 7. Nodes below 6
//     decide nothing (a 6.x program that calls only old functions references
//     only hip_4.2-era nodes).
//  4. For a DT_NEEDED with no N (PyTorch's wheels rename the runtime to
//     libamdhip64.so): the runtime file that name would have resolved to,
//     searched along the object's own path list (RPATH, LD_LIBRARY_PATH,
//     RUNPATH, system directories, as dlinfo(RTLD_DI_SERINFO) gives it; not
//     ld.so.cache), skipping the stub's own drop-in names, read from disk and
//     never loaded: its SONAME's N, else its highest hip_N.M version
//     definition.
//  5. Fallbacks, for code with no libamdhip64 of its own (it reached HIP
//     through dlopen or through another library): the N of the last
//     dlopen("libamdhip64.so.N") the stub served, else the main program's
//     major by steps 2-4, else 5.
//
// Cost: the first call from an object reads its dynamic section (and, for
// step 4, stats and maps one file); later calls find its address range in a
// short table (shared lock, a few compares). An object unloaded and another
// loaded over the same addresses keeps the first one's answer (no dlclose
// hook); that is documented, not handled.
//
// Thread-safety: every function may be called from any thread.
#pragma once

#include <string>
#include <string_view>

namespace hipr::client {

// The major the object containing `return_address` was built for.
int CallerMajor(const void* return_address);

// dlopen("libamdhip64.so.N") was served by the stub (dlopen_interpose.cc):
// objects without libamdhip64 of their own default to N from now on. N = 0
// (an unversioned name) is ignored.
void NoteDlopenMajor(int major);

// The N of "libamdhip64.so.N[...]" (a path's last component), or 0.
int MajorOfName(const char* name);

// The major of the HIP runtime file at `path` as read from disk (never
// loaded): its SONAME's N, else its highest hip_N.M version definition; 0
// when it says neither, is not a file, or is the stub itself. Triton, for
// one, dlopens torch/lib/libamdhip64.so by path.
int RuntimeFileMajor(const char* path);

// The N of a version node "hip_N.M", or 0.
int MajorOfVersionNode(std::string_view node);

// The HIP_VERSION (major * 10^7 + minor * 10^5 + patch, as ROCm formats
// hipRuntimeGetVersion and hipDriverGetVersion) to tell a caller of `major`
// when the worker's runtime is `worker_version`: that version when its major
// is the caller's; else a release of the caller's major, so that a caller
// never sees another major than the ABI it gets: the first one (6.0.0,
// 7.0.0) when the worker is older, the last one (5.7.1, 6.4.3) when newer.
// A worker_version <= 0 (none known) counts as this stub's HIP_VERSION.
int VersionForMajor(int worker_version, int major);

// A session to `worker` opened: its device kind and runtime version (the
// hello's). Against a `hip` worker (a real HIP runtime; the sim serves every
// major), every object loaded now, and every one that first calls later,
// whose major is above the runtime's gets one warning naming it, its major
// and the runtime's: calls that runtime lacks fail, and code objects its
// compiler's default makes may not load. The worker of the last session
// opened is the one compared against.
void NoteWorkerRuntime(const std::string& worker, const std::string& device_kind, int runtime_version);

// HIPR_ABI_MAJOR's value: 5, 6 or 7, or 0 when unset. Read on first use from
// the environment (calls may come from other libraries' constructors, before
// any Config exists); a bad value is logged once and ignored.
int MajorOverride();

}  // namespace hipr::client

// The major of the code that called the current function; use in an
// exported entry point itself (not in a lambda or helper it calls).
#define HIPR_CALLER_MAJOR() ::hipr::client::CallerMajor(__builtin_return_address(0))
