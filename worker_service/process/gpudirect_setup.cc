#include "worker_service/process/gpudirect_setup.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "protocol/rdma/gpudirect.h"
#include "worker_service/device/device_factory.h"
#include "worker_service/hip/hip_gpudirect.h"

namespace hipr::worker {
namespace {

constexpr unsigned kProbeSeconds = 20;

// In the child: the probe's answer.
GpuDirectCapability ProbeInChild(const WorkerConfig& config) {
  GpuDirectCapability cap;
  void* module = nullptr;
  if (Status st = LoadHipModule(config, &module); !st.ok()) {
    cap.detail = st.message();
    return cap;
  }
  // The module links the HIP runtime; dlsym on it searches that too. The
  // verbs function comes from whatever libibverbs this binary runs with.
  return ProbeGpuDirect(ResolveHipDmaBufApi(module), rdma::ResolveRegDmaBufMr(RTLD_DEFAULT));
}

}  // namespace

std::string DescribeGpuDirect(const WorkerConfig& config) {
  const std::string sim_note =
      config.device == "sim" ? "; --device sim needs none (its device memory is host memory)" : "";
  int pipefd[2];
  if (pipe2(pipefd, O_CLOEXEC) != 0) return std::string("not probed: pipe: ") + std::strerror(errno);
  const pid_t pid = fork();
  if (pid < 0) {
    close(pipefd[0]);
    close(pipefd[1]);
    return std::string("not probed: fork: ") + std::strerror(errno);
  }
  if (pid == 0) {
    close(pipefd[0]);
    alarm(kProbeSeconds);  // A runtime that hangs in its initialisation ends the child.
    const GpuDirectCapability cap = ProbeInChild(config);
    const char flag = cap.available ? '1' : '0';
    (void)!write(pipefd[1], &flag, 1);
    (void)!write(pipefd[1], cap.detail.data(), cap.detail.size());
    _exit(0);
  }
  close(pipefd[1]);
  std::string answer;
  char buf[1024];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) != 0) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    answer.append(buf, static_cast<size_t>(n));
  }
  close(pipefd[0]);
  int ws = 0;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  if (answer.empty()) {
    const std::string how = WIFSIGNALED(ws) ? std::string("signal ") + strsignal(WTERMSIG(ws))
                                            : "exit status " + std::to_string(WEXITSTATUS(ws));
    return "unavailable: the probe process ended without answering (" + how + ")" + sim_note;
  }
  GpuDirectCapability cap;
  cap.available = answer[0] == '1';
  cap.detail = answer.substr(1);
  return cap.Describe() +
         (cap.available ? "; not used yet: bulk copies still stage through pinned host memory"
                        : "; bulk copies stage through pinned host memory") +
         sim_note + " [unverified on hardware]";
}

}  // namespace hipr::worker
