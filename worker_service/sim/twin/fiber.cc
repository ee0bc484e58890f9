#include "worker_service/sim/twin/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace hipr::worker::sim {
namespace {

constexpr size_t kCanaryBytes = 64;
constexpr uint64_t kCanary = 0xA5A5A5A5A5A5A5A5ull;

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

}  // namespace

#ifdef HIPR_FIBER_UCONTEXT

namespace {
// makecontext passes int arguments only: split the pointers.
void UcontextTrampoline(unsigned entry_hi, unsigned entry_lo, unsigned arg_hi, unsigned arg_lo) {
  auto join = [](unsigned hi, unsigned lo) { return (static_cast<uintptr_t>(hi) << 32) | lo; };
  auto entry = reinterpret_cast<FiberEntry>(join(entry_hi, entry_lo));
  entry(reinterpret_cast<void*>(join(arg_hi, arg_lo)));
  abort();  // Entries never return.
}
}  // namespace

void PrepareFiber(FiberContext* fiber, void* stack, size_t size, FiberEntry entry, void* arg) {
  getcontext(&fiber->uc);
  fiber->uc.uc_stack.ss_sp = stack;
  fiber->uc.uc_stack.ss_size = size;
  fiber->uc.uc_link = nullptr;
  auto e = reinterpret_cast<uintptr_t>(entry);
  auto a = reinterpret_cast<uintptr_t>(arg);
  makecontext(&fiber->uc, reinterpret_cast<void (*)()>(&UcontextTrampoline), 4, static_cast<unsigned>(e >> 32),
              static_cast<unsigned>(e), static_cast<unsigned>(a >> 32), static_cast<unsigned>(a));
}

void SwitchFiber(FiberContext* from, FiberContext* to) { swapcontext(&from->uc, &to->uc); }

#else  // x86-64 System V.

// hipr_fiber_switch(void** save_sp, void* new_sp): pushes what the callee
// must preserve, stores the stack pointer, loads the other one and pops.
// hipr_fiber_start: first "return" of a new fiber; entry in r13, arg in r12.
asm(R"(
  .text
  .p2align 4
  .type hipr_fiber_switch,@function
hipr_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size hipr_fiber_switch,.-hipr_fiber_switch

  .p2align 4
  .type hipr_fiber_start,@function
hipr_fiber_start:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size hipr_fiber_start,.-hipr_fiber_start
)");

extern "C" void hipr_fiber_switch(void** save_sp, void* new_sp);
extern "C" void hipr_fiber_start();

void PrepareFiber(FiberContext* fiber, void* stack, size_t size, FiberEntry entry, void* arg) {
  auto top = (reinterpret_cast<uintptr_t>(stack) + size) & ~uintptr_t{15};
  // hipr_fiber_start runs with rsp == top - 16 (16-byte aligned before its
  // call), so its return slot is at top - 24 and the saved registers below.
  auto* frame = reinterpret_cast<uint64_t*>(top - 24);
  frame[0] = reinterpret_cast<uint64_t>(&hipr_fiber_start);  // Return address.
  frame[-1] = 0;                                               // rbp
  frame[-2] = 0;                                               // rbx
  frame[-3] = reinterpret_cast<uint64_t>(arg);                 // r12
  frame[-4] = reinterpret_cast<uint64_t>(entry);               // r13
  frame[-5] = 0;                                               // r14
  frame[-6] = 0;                                               // r15
  // MXCSR (all exceptions masked, round to nearest) and the x87 control
  // word (extended precision, all masked): the ABI's initial values.
  frame[-7] = uint64_t{0x1F80} | (uint64_t{0x037F} << 32);
  fiber->sp = &frame[-7];
}

void SwitchFiber(FiberContext* from, FiberContext* to) { hipr_fiber_switch(&from->sp, to->sp); }

#endif

StackPool::StackPool(size_t stack_bytes, size_t max_stacks)
    : stack_bytes_((stack_bytes + PageSize() - 1) & ~(PageSize() - 1)), max_stacks_(max_stacks) {}

StackPool::~StackPool() {
  for (void* r : regions_) munmap(r, PageSize() + stack_bytes_ * kStacksPerRegion);
}

void StackPool::MapRegion() {
  const size_t bytes = PageSize() + stack_bytes_ * kStacksPerRegion;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK,
                 -1, 0);
  if (p == MAP_FAILED) {
    fprintf(stderr, "hipr sim: cannot map %zu bytes for kernel thread stacks: %s\n", bytes, strerror(errno));
    abort();
  }
  mprotect(p, PageSize(), PROT_NONE);
  regions_.push_back(p);
}

void* StackPool::Take() {
  if (!free_.empty()) {
    void* s = free_.back();
    free_.pop_back();
    return s;
  }
  if (created_ >= max_stacks_) abort();  // Callers size the pool.
  const size_t index = created_ % kStacksPerRegion;
  if (index == 0) MapRegion();
  // From the top of the region down, so the guard page sits below the last.
  uint8_t* s = static_cast<uint8_t*>(regions_.back()) + PageSize() + (kStacksPerRegion - 1 - index) * stack_bytes_;
  ++created_;
  memset(s, static_cast<int>(kCanary & 0xFF), kCanaryBytes);
  return s;
}

void StackPool::Give(void* stack) { free_.push_back(stack); }

bool StackPool::Intact(const void* stack) const {
  uint64_t words[kCanaryBytes / 8];
  memcpy(words, stack, sizeof(words));
  uint64_t diff = 0;
  for (uint64_t w : words) diff |= w ^ kCanary;
  return diff == 0;
}

}  // namespace hipr::worker::sim
