// Fibers for the kernel runner: stackful coroutines switched explicitly on
// one OS thread, and the stacks they run on.
//
// On x86-64 a switch saves the callee-saved registers, MXCSR and the x87
// control word and swaps stack pointers (a few nanoseconds, no system call).
// Elsewhere it falls back to ucontext (swapcontext, which also saves the
// signal mask with a system call). Define HIPR_FIBER_UCONTEXT to force the
// fallback.
//
// Thread-safety: a fiber runs only on the OS thread that created it. Fibers
// must not throw out of their entry function.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#if !defined(__x86_64__) && !defined(HIPR_FIBER_UCONTEXT)
#define HIPR_FIBER_UCONTEXT 1
#endif
#ifdef HIPR_FIBER_UCONTEXT
#include <ucontext.h>
#endif

namespace hipr::worker::sim {

struct FiberContext {
#ifdef HIPR_FIBER_UCONTEXT
  ucontext_t uc;
#else
  void* sp = nullptr;
#endif
};

using FiberEntry = void (*)(void* arg);

// Prepares `fiber` so that the first SwitchFiber to it calls entry(arg) on
// the stack [stack, stack + size). `entry` must never return: it ends by
// switching away for good.
void PrepareFiber(FiberContext* fiber, void* stack, size_t size, FiberEntry entry, void* arg);

// Saves the running context into `from` and resumes `to`. Returns when some
// fiber switches back to `from`.
void SwitchFiber(FiberContext* from, FiberContext* to);

// A reusable set of equally sized fiber stacks, mapped on demand in
// mmap(MAP_NORESERVE) regions of kStacksPerRegion stacks, each region with a
// guard page at its low end: a kernel that never synchronises uses one stack
// per OS thread, a 1024-thread block with barriers 1024. Stacks sit next to
// each other (a guard page per stack would cost two kernel VMAs each,
// thousands per thread); instead each stack has a canary at its low end that
// the runner checks (Intact()) when its fiber ends: an overflow is detected
// late, after it may have corrupted the stack below, and ends the process
// then. Memory stays mapped until the pool goes. Not thread-safe: one per OS
// thread.
class StackPool {
 public:
  static constexpr size_t kStacksPerRegion = 64;

  StackPool(size_t stack_bytes, size_t max_stacks);
  ~StackPool();
  StackPool(const StackPool&) = delete;
  StackPool& operator=(const StackPool&) = delete;

  // A free stack (its lowest address). REQUIRES: fewer than max_stacks taken.
  // Aborts the process if no memory can be mapped for it.
  void* Take();
  void Give(void* stack);
  size_t stack_bytes() const { return stack_bytes_; }
  // False when the fiber on `stack` ran past its low end (the canary is
  // damaged): the memory below it is corrupt.
  bool Intact(const void* stack) const;

 private:
  void MapRegion();

  const size_t stack_bytes_;
  const size_t max_stacks_;
  std::vector<void*> regions_;  // Each: guard page, then kStacksPerRegion stacks.
  size_t created_ = 0;          // Stacks handed out at least once.
  std::vector<void*> free_;     // Handed back, reused first (warm pages).
};

}  // namespace hipr::worker::sim
