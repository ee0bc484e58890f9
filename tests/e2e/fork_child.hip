// fork_child: a forked child (Python multiprocessing, data-loader workers)
// never touches the parent's connection. The parent opens its session,
// builds a graph the worker holds and queues work; the child's first HIP
// call opens a session of its own, where it copies, launches and replays
// the parent's graph (now replayed by the client: the child's session does
// not hold it); afterwards the parent's session still works, graph included.
#include <hip/hip_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

#include "common.h"

__global__ void add_n(int* p, int n, int count) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) p[i] += n;
}

namespace {

constexpr int kN = 4096;

// Sets d to 0, runs `exec` (d += 5) twice on `s`, and checks d == 10.
void RunGraph(hipGraphExec_t exec, hipStream_t s, int* d, const char* who) {
  HIP_OK(hipMemsetAsync(d, 0, kN * sizeof(int), s));
  HIP_OK(hipGraphLaunch(exec, s));
  HIP_OK(hipGraphLaunch(exec, s));
  std::vector<int> got(kN);
  HIP_OK(hipMemcpyAsync(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, s));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 10, "%s: graph result [%d] = %d", who, i, got[i]);
}

}  // namespace

int main() {
  // The parent's session, a graph the worker holds, work queued.
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, kN * sizeof(int)));
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(add_n, dim3(kN / 256), dim3(256), 0, s, d, 5, kN);
  hipGraph_t graph;
  HIP_OK(hipStreamEndCapture(s, &graph));
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  RunGraph(exec, s, d, "parent before fork");
  HIP_OK(hipMemsetAsync(d, 0x11, kN * sizeof(int), s));  // Queued, maybe not sent yet.

  fflush(stdout);
  pid_t child = fork();
  CHECK(child >= 0, "fork failed");
  if (child == 0) {
    // The parent's device memory, streams and graphs' worker side are the
    // parent's session's: the child starts over in a session of its own.
    int* c = nullptr;
    HIP_OK(hipMalloc(&c, kN * sizeof(int)));
    std::vector<int> src(kN, 7), got(kN, 0);
    HIP_OK(hipMemcpy(c, src.data(), kN * sizeof(int), hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(got.data(), c, kN * sizeof(int), hipMemcpyDeviceToHost));
    CHECK(got == src, "child: copy round trip differs");
    hipStream_t cs;
    HIP_OK(hipStreamCreateWithFlags(&cs, hipStreamNonBlocking));
    // The parent's graph writes through the parent's d, which the child's
    // session does not hold: the child captures its own.
    HIP_OK(hipStreamBeginCapture(cs, hipStreamCaptureModeGlobal));
    hipLaunchKernelGGL(add_n, dim3(kN / 256), dim3(256), 0, cs, c, 5, kN);
    hipGraph_t cg;
    HIP_OK(hipStreamEndCapture(cs, &cg));
    hipGraphExec_t ce;
    HIP_OK(hipGraphInstantiate(&ce, cg, nullptr, nullptr, 0));
    RunGraph(ce, cs, c, "child");
    HIP_OK(hipStreamSynchronize(cs));
    printf("child: its own session copied, captured and replayed a graph\n");
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  CHECK(waitpid(child, &status, 0) == child, "waitpid");
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status 0x%x)", status);
  // The parent's session is untouched: its queued memset, its graph, its copies.
  std::vector<int> got(kN);
  HIP_OK(hipMemcpyAsync(got.data(), d, kN * sizeof(int), hipMemcpyDeviceToHost, s));
  CHECK(got[0] == 0x11111111, "parent: the memset queued before fork gave 0x%x", got[0]);
  RunGraph(exec, s, d, "parent after the child");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  printf("parent: its session, queued work and graph were unaffected by the child\n");
  return e2e::Finish("fork_child");
}
