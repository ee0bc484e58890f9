// Faults in twin code. A GPU that dereferences a bad address ends the
// program with a memory access fault; a twin doing the same on the sim
// raises SIGSEGV or SIGBUS in the session process. Left alone that kills
// the process with "signal 11" and nothing else; with these handlers the
// fault first names itself: the kernel (demangled), the block and thread
// that faulted, the signal and the faulting address, handed to the
// process's reporter (the session process writes it to the worker log and
// to its ledger slot, from which the zygote tells the client), before the
// signal takes its default course and ends the process as before.
//
// How the handler knows what ran: the executor sets the calling OS
// thread's TwinFaultScope to the kernel and thread before each switch into
// a fiber and clears it when the block is done. A fault with no scope set
// (not in twin code) is left to the previous handler untouched.
//
// The handler runs on an alternate signal stack (TwinAltStack, one per OS
// thread that runs blocks), so a fiber whose stack overflowed into its
// guard page is still reported. It only formats into a fixed buffer and
// calls the reporter: async-signal-safe code throughout.
#pragma once

#include <signal.h>

#include <cstddef>

#include "worker_service/sim/twin/twin_abi.h"

namespace hipr::worker::sim {

// What the calling OS thread is running (nullptr kernel: no twin code).
struct TwinFaultScope {
  const char* kernel = nullptr;  // Demangled name; outlives the launch.
  const HiprTwinThread* thread = nullptr;
};
// The calling OS thread's scope; the executor writes it.
TwinFaultScope& CurrentTwinFaultScope();

// Receives one report line (no trailing newline), from the signal handler:
// must be async-signal-safe.
using TwinFaultReporter = void (*)(const char* line, size_t size);

// Installs the SIGSEGV and SIGBUS handlers once per process (later calls do
// nothing) and sets the reporter (nullptr: the line goes to stderr).
void InstallTwinFaultHandlers(TwinFaultReporter reporter);

// An alternate signal stack for the calling OS thread while it lives (the
// one it had before, a sanitizer's say, is put back when it goes).
class TwinAltStack {
 public:
  TwinAltStack();
  ~TwinAltStack();
  TwinAltStack(const TwinAltStack&) = delete;
  TwinAltStack& operator=(const TwinAltStack&) = delete;

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  stack_t previous_{};
};

// The report for a fault at `address` with signal `signo` in `thread` of
// `kernel`, written into out[0..capacity) (truncated, always terminated);
// returns its length. Async-signal-safe.
size_t FormatTwinFault(char* out, size_t capacity, const char* kernel, const HiprTwinThread& thread, int signo,
                       const void* address);

}  // namespace hipr::worker::sim
