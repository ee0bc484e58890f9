#include "worker_service/sim/twin/twin_fault.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "worker_service/process/ledger.h"

namespace hipr::worker::sim {
namespace {

HiprTwinThread ThreadAt(HiprTwinDim3 block, HiprTwinDim3 thread) {
  HiprTwinThread t{};
  t.block_idx = block;
  t.thread_idx = thread;
  return t;
}

TEST(TwinFaultTest, TheReportNamesKernelBlockThreadSignalAndAddress) {
  char line[256];
  const HiprTwinThread t = ThreadAt({1, 2, 3}, {4, 5, 6});
  const size_t n =
      FormatTwinFault(line, sizeof line, "scale(float*, int)", t, SIGSEGV, reinterpret_cast<void*>(0x7f00dead0010));
  EXPECT_EQ(std::string(line, n),
            "kernel scale(float*, int) faulted in block (1, 2, 3), thread (4, 5, 6): SIGSEGV at address "
            "0x7f00dead0010 (a memory access fault on a GPU; the session ends)");
  EXPECT_EQ(std::strlen(line), n);
  const size_t bus = FormatTwinFault(line, sizeof line, "k", t, SIGBUS, nullptr);
  EXPECT_NE(std::string(line, bus).find("SIGBUS at address 0x0 "), std::string::npos) << line;
}

TEST(TwinFaultTest, AReportTooLongForItsBufferIsCutAndTerminated) {
  char line[24];
  std::memset(line, 'x', sizeof line);
  const HiprTwinThread t = ThreadAt({0, 0, 0}, {0, 0, 0});
  const size_t n = FormatTwinFault(line, sizeof line, "a_kernel_with_a_long_name", t, SIGSEGV, nullptr);
  EXPECT_EQ(n, sizeof line - 1);
  EXPECT_EQ(line[n], '\0');
  EXPECT_EQ(std::string(line), "kernel a_kernel_with_a_");
}

// The reporter of the child below: the session process's, in miniature.
Ledger* g_ledger = nullptr;
void ToLedger(const char* line, size_t size) { g_ledger->SetLastWords(0, line, size); }

// A fault in a thread whose scope names a kernel is reported, and the
// process still dies of the signal; a fault outside twin code reports
// nothing.
TEST(TwinFaultTest, AFaultInTwinCodeIsReportedAndStillEndsTheProcess) {
  std::unique_ptr<Ledger> ledger;
  ASSERT_TRUE(Ledger::Create(1, 0, &ledger).ok());
  g_ledger = ledger.get();
  for (const bool in_twin : {true, false}) {
    ledger->OpenSlot(0, 7);
    EXPECT_EQ(ledger->LastWords(0), "");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      InstallTwinFaultHandlers(&ToLedger);
      TwinAltStack alt;
      static const HiprTwinThread t = ThreadAt({9, 0, 0}, {31, 1, 0});
      if (in_twin) CurrentTwinFaultScope() = TwinFaultScope{"bad(int*)", &t};
      volatile uintptr_t unmapped = 0x10;  // Read at run time: no compiler sees a constant bad address.
      *reinterpret_cast<volatile int*>(unmapped) = 1;
      _exit(0);
    }
    int ws = 0;
    ASSERT_EQ(waitpid(pid, &ws, 0), pid);
    // Killed by the signal; under a sanitizer, whose handler comes after
    // ours in the chain, it reports the fault and exits with an error.
    ASSERT_FALSE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0) << "the faulting child exited 0";
    if (WIFSIGNALED(ws)) {
      EXPECT_EQ(WTERMSIG(ws), SIGSEGV);
    }
    if (in_twin) {
      EXPECT_EQ(ledger->LastWords(0),
                "kernel bad(int*) faulted in block (9, 0, 0), thread (31, 1, 0): SIGSEGV at address 0x10 "
                "(a memory access fault on a GPU; the session ends)");
    } else {
      EXPECT_EQ(ledger->LastWords(0), "");
    }
    ledger->CloseSlot(0);
    EXPECT_EQ(ledger->LastWords(0), "");
  }
}

TEST(TwinFaultTest, LastWordsAreCutToTheirSlot) {
  std::unique_ptr<Ledger> ledger;
  ASSERT_TRUE(Ledger::Create(2, 0, &ledger).ok());
  ledger->OpenSlot(1, 3);
  const std::string long_line(Ledger::kLastWordsBytes + 100, 'w');
  ledger->SetLastWords(1, long_line.data(), long_line.size());
  EXPECT_EQ(ledger->LastWords(1), long_line.substr(0, Ledger::kLastWordsBytes));
  EXPECT_EQ(ledger->LastWords(0), "");
}

}  // namespace
}  // namespace hipr::worker::sim
