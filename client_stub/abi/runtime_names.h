// The names a HIP runtime goes by, claimed for the stub in the dynamic
// loader, so that no other libamdhip64 ever loads beside it.
//
// glibc satisfies a DT_NEEDED entry or a dlopen of a bare name from an
// already loaded object known by that name (its SONAME, or a name it was
// once found under) before it searches any RPATH, LD_LIBRARY_PATH or
// RUNPATH. The stub's SONAME is libamdhip64.so.5; PyTorch's ROCm wheels
// bundle the runtime as libamdhip64.so with DT_RPATH=$ORIGIN, and ROCm 6/7
// libraries need libamdhip64.so.6/.7. ClaimRuntimeNames dlopens each name
// with RTLD_NOLOAD from the stub, whose own DT_RPATH is $ORIGIN/hipr:$ORIGIN
// (where the drop-in symlinks to the stub lie): glibc finds the symlink,
// sees the file it already has, and records the name on the stub.
// RTLD_NOLOAD makes this safe: a name whose first match on that path is
// some other file loads nothing, and is reported.
//
// What it cannot cover: the main program's own DT_NEEDED entries are
// resolved before any code of the stub runs, so a program (not a library it
// dlopens) that needs libamdhip64.so.6 through an RPATH pointing at a real
// runtime still maps that runtime; ReportForeignRuntimes says so.
//
// Thread-safety: both run at load time and at session start; safe from any
// thread (the loader serialises dlopen).
#pragma once

namespace hipr::client {

using RealDlopenFn = void* (*)(const char*, int);

// Claims every libamdhip64 name for the stub through `real_dlopen` (glibc's
// dlopen, not the stub's interposer). Returns how many names the stub holds
// afterwards; each name it could not claim is logged once with the reason.
int ClaimRuntimeNames(RealDlopenFn real_dlopen);

// Logs once each HIP/HSA runtime file mapped in this process that is not the
// stub: a libamdhip64 at error level (calls may bind to it), the HSA runtime
// and thunk at warn level (ROCm libraries need them mapped; only direct
// callers miss a GPU). Returns how many there are.
int ReportForeignRuntimes();

}  // namespace hipr::client
