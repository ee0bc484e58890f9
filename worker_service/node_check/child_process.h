// Bounded child processes for hipr-node's checks that can hang or crash the
// process that makes them: running rocm-smi (which blocks in the driver when
// a GPU hangs) and loading the HIP runtime (whose constructors run in the
// loading process).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace hipr::worker::node_check {

struct ChildOutcome {
  enum class End { kExited, kSignaled, kTimedOut, kNotStarted };
  End end = End::kNotStarted;
  int code = 0;        // Exit status (kExited) or signal number (kSignaled).
  std::string output;  // stdout and stderr interleaved, at most max_output bytes.
  std::string error;   // kNotStarted: why.
};

// Forks; the child, in a process group of its own with stdin from /dev/null
// and stdout and stderr on one pipe, runs `body` and _exit()s with what it
// returns (never running atexit handlers or static destructors: a library
// loaded by `body` does not get to run its exit code). Blocks until the
// child has exited and its output is read, or `timeout` has passed: then the
// child's whole process group is killed (SIGKILL) and the outcome is
// kTimedOut with what it printed so far. REQUIRES: a single-threaded caller
// (fork).
ChildOutcome RunInChild(const std::function<int()>& body, std::chrono::milliseconds timeout,
                        size_t max_output = 64 * 1024);

// RunInChild() of execv(argv[0], argv); argv[0] is a path. A program that
// cannot be executed exits 127 with the reason on its stderr.
ChildOutcome RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                        size_t max_output = 64 * 1024);

}  // namespace hipr::worker::node_check
