// Which libamdhip64 major (5, 6 or 7) the code calling an entry point was
// linked against. One stub file serves every major (docs/architecture.md, "ABI and majors"); a few
// functions kept their name but changed meaning between majors
// (hipPointerGetAttributes' hipMemoryType numbering, hipGetLastError), and
// answer per calling object, not per process, since one process may hold a
// 5.x program and a 6.x library at once.
//
// The calling object is found from the call's return address (dladdr1 with
// RTLD_DL_LINKMAP); its major is the N of its DT_NEEDED libamdhip64.so.N.
// An object with no such entry (it reached HIP through dlopen, or through
// another library) gets the major of the last dlopen("libamdhip64.so.N")
// the stub served, else that of the main program, else 5.
//
// Cost: the first call from an object walks its dynamic section; later calls
// find its address range in a short table (shared lock, a few compares).
// An object unloaded and another loaded over the same addresses keeps the
// first one's answer (no dlclose hook); that is documented, not handled.
//
// Thread-safety: every function may be called from any thread.
#pragma once

namespace hipr::client {

// The major the object containing `return_address` was linked against.
int CallerMajor(const void* return_address);

// dlopen("libamdhip64.so.N") was served by the stub (dlopen_interpose.cc):
// objects without DT_NEEDED libamdhip64 default to N from now on. N = 0
// (an unversioned name) is ignored.
void NoteDlopenMajor(int major);

// The N of "libamdhip64.so.N[...]" (a path's last component), or 0.
int MajorOfName(const char* name);

}  // namespace hipr::client

// The major of the code that called the current function; use in an
// exported entry point itself (not in a lambda or helper it calls).
#define HIPR_CALLER_MAJOR() ::hipr::client::CallerMajor(__builtin_return_address(0))
