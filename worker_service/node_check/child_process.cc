#include "worker_service/node_check/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace hipr::worker::node_check {
namespace {

using Clock = std::chrono::steady_clock;

void WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

// The child's side: its own process group (so a timeout kills what it
// started too), stdin from /dev/null, stdout and stderr to `out`.
[[noreturn]] void BecomeChild(int out, int unused_read_end, const std::function<int()>& body) {
  setpgid(0, 0);
  close(unused_read_end);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
  dup2(out, STDOUT_FILENO);
  dup2(out, STDERR_FILENO);
  if (out != STDOUT_FILENO && out != STDERR_FILENO) close(out);
  _exit(body());
}

}  // namespace

ChildOutcome RunInChild(const std::function<int()>& body, std::chrono::milliseconds timeout, size_t max_output) {
  ChildOutcome outcome;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    outcome.error = std::string("pipe: ") + std::strerror(errno);
    return outcome;
  }
  const Clock::time_point deadline = Clock::now() + timeout;
  pid_t pid = fork();
  if (pid < 0) {
    outcome.error = std::string("fork: ") + std::strerror(errno);
    close(fds[0]);
    close(fds[1]);
    return outcome;
  }
  if (pid == 0) BecomeChild(fds[1], fds[0], body);
  setpgid(pid, pid);  // Also here: the group must exist before any kill(-pid).
  close(fds[1]);

  // Read until end of output and exit, or the deadline. A child that has
  // exited is left unreaped (WNOWAIT) until its group is killed, so its pid,
  // the group's id, cannot be reused in between.
  bool eof = false, exited = false, timed_out = false;
  char buf[4096];
  while (!(eof && exited)) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (!exited) {
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
        exited = true;
    }
    if (eof) {
      // Output closed but the child still runs: poll its exit.
      usleep(10 * 1000);
      continue;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min<long long>(left, exited ? 100 : 50)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) {
      // The child exited but something it started keeps the pipe open:
      // what was printed is in, do not wait for the straggler.
      if (exited && ready == 0) eof = true;
      continue;
    }
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
      continue;
    }
    size_t keep = std::min(static_cast<size_t>(n), max_output - std::min(max_output, outcome.output.size()));
    outcome.output.append(buf, keep);
  }
  close(fds[0]);
  kill(-pid, SIGKILL);  // The group: the child on a timeout, stragglers otherwise.
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    outcome.end = ChildOutcome::End::kTimedOut;
  } else if (WIFEXITED(status)) {
    outcome.end = ChildOutcome::End::kExited;
    outcome.code = WEXITSTATUS(status);
  } else {
    outcome.end = ChildOutcome::End::kSignaled;
    outcome.code = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
  return outcome;
}

ChildOutcome RunProgram(const std::vector<std::string>& argv, std::chrono::milliseconds timeout, size_t max_output) {
  if (argv.empty()) {
    ChildOutcome outcome;
    outcome.error = "no program";
    return outcome;
  }
  // Built before the fork: the child only calls execv and write.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  return RunInChild(
      [&] {
        execv(args[0], args.data());
        WriteAll(STDERR_FILENO, std::string("cannot run ") + args[0] + ": " + std::strerror(errno) + "\n");
        return 127;
      },
      timeout, max_output);
}

}  // namespace hipr::worker::node_check
