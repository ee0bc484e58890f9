// Bounded child processes (child_process.h): output, exit, signals, and a
// timeout that kills what the child started as well.
#include "worker_service/node_check/child_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

namespace hipr::worker::node_check {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

TEST(ChildProcessTest, ReturnsTheExitCodeAndBothOutputs) {
  ChildOutcome out = RunProgram({"/bin/sh", "-c", "echo to-out; echo to-err >&2; exit 3"}, milliseconds(5000));
  EXPECT_EQ(out.end, ChildOutcome::End::kExited);
  EXPECT_EQ(out.code, 3);
  EXPECT_NE(out.output.find("to-out\n"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("to-err\n"), std::string::npos) << out.output;
}

TEST(ChildProcessTest, AProgramThatCannotRunExits127AndSaysWhy) {
  ChildOutcome out = RunProgram({"/nonexistent/hipr-no-such-program"}, milliseconds(5000));
  EXPECT_EQ(out.end, ChildOutcome::End::kExited);
  EXPECT_EQ(out.code, 127);
  EXPECT_NE(out.output.find("cannot run /nonexistent/hipr-no-such-program"), std::string::npos) << out.output;
}

TEST(ChildProcessTest, ATimeoutKillsTheChildAndWhatItStarted) {
  // The shell's own children hold the pipe too: killing only the shell
  // would leave the read waiting on them.
  const Clock::time_point start = Clock::now();
  ChildOutcome out = RunProgram({"/bin/sh", "-c", "echo started; sleep 30 & sleep 30; echo never"}, milliseconds(300));
  const auto took = Clock::now() - start;
  EXPECT_EQ(out.end, ChildOutcome::End::kTimedOut);
  EXPECT_EQ(out.output, "started\n");
  EXPECT_LT(took, std::chrono::seconds(5));
}

TEST(ChildProcessTest, AStragglerHoldingTheOutputDoesNotHoldTheCaller) {
  // The child exits at once; its background child keeps stdout open.
  const Clock::time_point start = Clock::now();
  ChildOutcome out = RunProgram({"/bin/sh", "-c", "sleep 30 & echo done"}, milliseconds(10000));
  EXPECT_EQ(out.end, ChildOutcome::End::kExited);
  EXPECT_EQ(out.code, 0);
  EXPECT_EQ(out.output, "done\n");
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
}

TEST(ChildProcessTest, ACrashInTheBodyIsASignalNotACrashOfTheCaller) {
  ChildOutcome out = RunInChild(
      [] {
        signal(SIGABRT, SIG_DFL);
        std::abort();
        return 0;
      },
      milliseconds(5000));
  EXPECT_EQ(out.end, ChildOutcome::End::kSignaled);
  EXPECT_EQ(out.code, SIGABRT);
}

TEST(ChildProcessTest, OutputIsCapped) {
  ChildOutcome out = RunProgram({"/bin/sh", "-c", "yes | head -c 100000"}, milliseconds(5000), 1000);
  EXPECT_EQ(out.end, ChildOutcome::End::kExited);
  EXPECT_EQ(out.output.size(), 1000u);
}

}  // namespace
}  // namespace hipr::worker::node_check
