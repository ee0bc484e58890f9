#include "worker_service/sim/twin/twin_fault.h"

#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace hipr::worker::sim {
namespace {

// initial-exec TLS (the worker links this statically): reading it in a
// signal handler allocates nothing.
constinit thread_local TwinFaultScope t_scope;

constinit std::atomic<TwinFaultReporter> g_reporter{nullptr};
// The dispositions found at installation, index 0 SIGSEGV, 1 SIGBUS.
struct sigaction g_previous[2];

constexpr size_t kAltStackBytes = 64 * 1024;

// Appends to a fixed buffer; async-signal-safe.
class LineWriter {
 public:
  LineWriter(char* out, size_t capacity) : out_(out), capacity_(capacity) {
    if (capacity_ > 0) out_[0] = '\0';
  }
  void Str(const char* s) {
    for (; s != nullptr && *s != '\0'; ++s) Char(*s);
  }
  void Dec(uint64_t v) {
    char digits[20];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (n > 0) Char(digits[--n]);
  }
  void Hex(uint64_t v) {
    Str("0x");
    char digits[16];
    int n = 0;
    do {
      digits[n++] = "0123456789abcdef"[v & 0xf];
      v >>= 4;
    } while (v != 0);
    while (n > 0) Char(digits[--n]);
  }
  void Dim(const HiprTwinDim3& d) {
    Char('(');
    Dec(d.x);
    Str(", ");
    Dec(d.y);
    Str(", ");
    Dec(d.z);
    Char(')');
  }
  size_t size() const { return size_; }

 private:
  void Char(char c) {
    if (size_ + 1 >= capacity_) return;  // Truncated; the terminator stays.
    out_[size_++] = c;
    out_[size_] = '\0';
  }
  char* out_;
  size_t capacity_;
  size_t size_ = 0;
};

void OnFault(int signo, siginfo_t* info, void* context) {
  const TwinFaultScope& scope = t_scope;
  if (scope.kernel != nullptr && scope.thread != nullptr) {
    char line[768];
    const size_t n = FormatTwinFault(line, sizeof line, scope.kernel, *scope.thread, signo, info->si_addr);
    if (TwinFaultReporter report = g_reporter.load(std::memory_order_acquire); report != nullptr) {
      report(line, n);
    } else {
      (void)!write(STDERR_FILENO, line, n);
      (void)!write(STDERR_FILENO, "\n", 1);
    }
  }
  // Hand the fault on as if these handlers were not there.
  const struct sigaction& previous = g_previous[signo == SIGBUS ? 1 : 0];
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signo, info, context);
    return;
  }
  if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signo);
    return;
  }
  // The default action: returning re-runs the faulting access, which now
  // ends the process by the same signal; one sent by kill() is raised again.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(signo, &dfl, nullptr);
  if (info->si_code <= 0) raise(signo);
}

}  // namespace

TwinFaultScope& CurrentTwinFaultScope() { return t_scope; }

void InstallTwinFaultHandlers(TwinFaultReporter reporter) {
  if (reporter != nullptr) g_reporter.store(reporter, std::memory_order_release);
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &OnFault;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_previous[0]);
    sigaction(SIGBUS, &sa, &g_previous[1]);
  });
}

TwinAltStack::TwinAltStack() {
  void* p = mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return;  // Faults are then reported from the fiber's own stack.
  stack_t ss{};
  ss.ss_sp = p;
  ss.ss_size = kAltStackBytes;
  if (sigaltstack(&ss, &previous_) != 0) {
    munmap(p, kAltStackBytes);
    return;
  }
  base_ = p;
  bytes_ = kAltStackBytes;
}

TwinAltStack::~TwinAltStack() {
  if (base_ == nullptr) return;
  if ((previous_.ss_flags & SS_DISABLE) == 0 && previous_.ss_sp != nullptr) {
    sigaltstack(&previous_, nullptr);
  } else {
    stack_t ss{};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
  }
  munmap(base_, bytes_);
}

size_t FormatTwinFault(char* out, size_t capacity, const char* kernel, const HiprTwinThread& thread, int signo,
                       const void* address) {
  LineWriter w(out, capacity);
  w.Str("kernel ");
  w.Str(kernel);
  w.Str(" faulted in block ");
  w.Dim(thread.block_idx);
  w.Str(", thread ");
  w.Dim(thread.thread_idx);
  w.Str(": ");
  w.Str(signo == SIGBUS ? "SIGBUS" : signo == SIGSEGV ? "SIGSEGV" : "signal");
  w.Str(" at address ");
  w.Hex(reinterpret_cast<uintptr_t>(address));
  w.Str(" (a memory access fault on a GPU; the session ends)");
  return w.size();
}

}  // namespace hipr::worker::sim
