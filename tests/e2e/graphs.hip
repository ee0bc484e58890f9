// graphs: stream capture and executable graphs.
//
//  * A captured graph of memset, kernels, a device-to-device copy and a host
//    node, replayed 100 times: every replay's results and the host node's
//    count are checked (the worker holds this graph: one frame per launch).
//  * A captured graph with host-memory copies reads its pinned input and
//    writes its output at each launch, not at capture time.
//  * Capture across two streams (fork/join through events) and the explicit
//    graph API give the same graph shapes and results.
//  * Independent branches of a graph run concurrently, as on a GPU: a
//    kernel of one branch spins until a kernel of the other sets a flag;
//    run one after the other, it gives up (after a bounded spin) and says
//    so.
//  * Capture rules: status and ids, a synchronize inside a capture
//    invalidates it, the legacy null stream may not join a capture
//    implicitly, a capture cannot depend on an event recorded outside it.
#include <hip/hip_runtime.h>

#include <atomic>
#include <vector>

#include "common.h"

__global__ void add_to(float* y, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += x[i];
}

__global__ void scale(float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= a;
}

// Spins (at most `spins` reads) until *flag is set; *seen says whether it was.
__global__ void wait_for_flag(unsigned* flag, int spins, int* seen) {
  int i = 0;
  while (i < spins && atomicAdd(flag, 0u) == 0) ++i;
  *seen = i < spins ? 1 : 0;
}

__global__ void set_flag(unsigned* flag) { atomicExch(flag, 1u); }

namespace {

constexpr int kN = 1000;
constexpr int kBlock = 256;
constexpr int kGrid = (kN + kBlock - 1) / kBlock;
constexpr int kReplays = 100;

std::atomic<int> g_host_calls{0};

void CountHostCall(void* user) {
  g_host_calls.fetch_add(1);
  static_cast<std::atomic<int>*>(user)->fetch_add(1);
}

void CountCallback(hipStream_t, hipError_t status, void* user) {
  if (status == hipSuccess) static_cast<std::atomic<int>*>(user)->fetch_add(1);
}

std::vector<float> Read(const float* d, int n) {
  std::vector<float> h(n);
  HIP_OK(hipMemcpy(h.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
  return h;
}

hipGraphNodeType TypeOf(hipGraphNode_t n) {
  hipGraphNodeType t = hipGraphNodeTypeCount;
  HIP_OK(hipGraphNodeGetType(n, &t));
  return t;
}

// tmp = 0; tmp += x; tmp *= 2; out = tmp; total += out; host node.
void CheckCapturedGraphReplayed() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  float *x, *tmp, *out, *total;
  HIP_OK(hipMalloc(&x, kN * sizeof(float)));
  HIP_OK(hipMalloc(&tmp, kN * sizeof(float)));
  HIP_OK(hipMalloc(&out, kN * sizeof(float)));
  HIP_OK(hipMalloc(&total, kN * sizeof(float)));
  std::vector<float> hx(kN);
  for (int i = 0; i < kN; ++i) hx[i] = static_cast<float>(i % 97) * 0.5f;
  HIP_OK(hipMemcpy(x, hx.data(), kN * sizeof(float), hipMemcpyHostToDevice));
  HIP_OK(hipMemset(total, 0, kN * sizeof(float)));
  HIP_OK(hipDeviceSynchronize());

  std::atomic<int> host_runs{0};
  hipStreamCaptureStatus status;
  HIP_OK(hipStreamIsCapturing(s, &status));
  CHECK(status == hipStreamCaptureStatusNone, "status %d before capture", status);
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_OK(hipStreamIsCapturing(s, &status));
  CHECK(status == hipStreamCaptureStatusActive, "status %d during capture", status);
  unsigned long long id = 0;
  HIP_OK(hipStreamGetCaptureInfo(s, &status, &id));
  CHECK(id != 0, "capture id 0");
  HIP_OK(hipMemsetAsync(tmp, 0, kN * sizeof(float), s));
  hipLaunchKernelGGL(add_to, dim3(kGrid), dim3(kBlock), 0, s, tmp, x, kN);
  HIP_OK(hipGetLastError());
  hipLaunchKernelGGL(scale, dim3(kGrid), dim3(kBlock), 0, s, tmp, 2.0f, kN);
  HIP_OK(hipMemcpyAsync(out, tmp, kN * sizeof(float), hipMemcpyDeviceToDevice, s));
  hipLaunchKernelGGL(add_to, dim3(kGrid), dim3(kBlock), 0, s, total, out, kN);
  HIP_OK(hipStreamAddCallback(s, CountCallback, &host_runs, 0));
  hipGraph_t graph = nullptr;
  HIP_OK(hipStreamEndCapture(s, &graph));
  CHECK(graph != nullptr, "no graph");
  HIP_OK(hipStreamIsCapturing(s, &status));
  CHECK(status == hipStreamCaptureStatusNone, "status %d after capture", status);
  // Nothing ran at capture time.
  HIP_OK(hipStreamSynchronize(s));
  CHECK(Read(total, kN)[kN - 1] == 0.0f && host_runs.load() == 0, "captured work ran at capture time");

  size_t count = 0;
  HIP_OK(hipGraphGetNodes(graph, nullptr, &count));
  CHECK(count == 6, "%zu nodes, expected 6", count);
  std::vector<hipGraphNode_t> nodes(count);
  HIP_OK(hipGraphGetNodes(graph, nodes.data(), &count));
  const hipGraphNodeType want[] = {hipGraphNodeTypeMemset, hipGraphNodeTypeKernel, hipGraphNodeTypeKernel,
                                   hipGraphNodeTypeMemcpy, hipGraphNodeTypeKernel, hipGraphNodeTypeHost};
  for (size_t i = 0; i < count; ++i) CHECK(TypeOf(nodes[i]) == want[i], "node %zu has type %d", i, TypeOf(nodes[i]));
  size_t roots = 0;
  HIP_OK(hipGraphGetRootNodes(graph, nullptr, &roots));
  CHECK(roots == 1, "%zu roots of a captured chain", roots);
  size_t edges = 0;
  HIP_OK(hipGraphGetEdges(graph, nullptr, nullptr, &edges));
  CHECK(edges == 5, "%zu edges of a 6-node chain", edges);

  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  HIP_OK(hipGraphDestroy(graph));  // The executable graph stands alone.
  for (int r = 0; r < kReplays; ++r) HIP_OK(hipGraphLaunch(exec, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(host_runs.load() == kReplays, "the host node ran %d times in %d launches", host_runs.load(), kReplays);
  const std::vector<float> got_out = Read(out, kN);
  const std::vector<float> got_total = Read(total, kN);
  for (int i = 0; i < kN; ++i) {
    CHECK(got_out[i] == 2 * hx[i], "out[%d] = %g, expected %g", i, got_out[i], 2 * hx[i]);
    CHECK(got_total[i] == kReplays * 2 * hx[i], "total[%d] = %g after %d replays, expected %g", i, got_total[i],
          kReplays, kReplays * 2 * hx[i]);
  }
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_EXPECT(hipGraphLaunch(exec, s), hipErrorInvalidValue);
  printf("a captured graph of 6 nodes replayed %d times: every result right\n", kReplays);
  for (float* p : {x, tmp, out, total}) HIP_OK(hipFree(p));
  HIP_OK(hipStreamDestroy(s));
}

// Host copies in a graph read and write host memory at each launch.
void CheckHostCopiesAtLaunchTime() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  float *in_h, *out_h, *d;
  HIP_OK(hipHostMalloc(&in_h, kN * sizeof(float), 0));
  HIP_OK(hipHostMalloc(&out_h, kN * sizeof(float), 0));
  HIP_OK(hipMalloc(&d, kN * sizeof(float)));
  for (int i = 0; i < kN; ++i) in_h[i] = -1.0f;
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_OK(hipMemcpyAsync(d, in_h, kN * sizeof(float), hipMemcpyHostToDevice, s));
  hipLaunchKernelGGL(scale, dim3(kGrid), dim3(kBlock), 0, s, d, 3.0f, kN);
  HIP_OK(hipMemcpyAsync(out_h, d, kN * sizeof(float), hipMemcpyDeviceToHost, s));
  hipGraph_t graph;
  HIP_OK(hipStreamEndCapture(s, &graph));
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiateWithFlags(&exec, graph, 0));
  for (int round = 1; round <= 3; ++round) {
    for (int i = 0; i < kN; ++i) in_h[i] = static_cast<float>(round * 1000 + i);
    HIP_OK(hipGraphLaunch(exec, s));
    HIP_OK(hipStreamSynchronize(s));
    for (int i = 0; i < kN; ++i)
      CHECK(out_h[i] == 3.0f * (round * 1000 + i), "round %d: out[%d] = %g", round, i, out_h[i]);
  }
  printf("a graph with host copies read its input and wrote its output at each of 3 launches\n");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));
  HIP_OK(hipHostFree(in_h));
  HIP_OK(hipHostFree(out_h));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

// Fork/join across two streams: a = x (s1); b = x (s2, forked); a += b (s1
// after the join); a *= 2.  Then the same graph through the explicit API.
void CheckForkJoinAndExplicit() {
  hipStream_t s1, s2;
  HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t fork, join;
  HIP_OK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
  HIP_OK(hipEventCreateWithFlags(&join, hipEventDisableTiming));
  float *x, *a, *b;
  HIP_OK(hipMalloc(&x, kN * sizeof(float)));
  HIP_OK(hipMalloc(&a, kN * sizeof(float)));
  HIP_OK(hipMalloc(&b, kN * sizeof(float)));
  std::vector<float> hx(kN);
  for (int i = 0; i < kN; ++i) hx[i] = static_cast<float>(i);
  HIP_OK(hipMemcpy(x, hx.data(), kN * sizeof(float), hipMemcpyHostToDevice));

  HIP_OK(hipStreamBeginCapture(s1, hipStreamCaptureModeThreadLocal));
  HIP_OK(hipEventRecord(fork, s1));
  HIP_OK(hipStreamWaitEvent(s2, fork, 0));
  hipStreamCaptureStatus status;
  HIP_OK(hipStreamIsCapturing(s2, &status));
  CHECK(status == hipStreamCaptureStatusActive, "the forked stream does not capture (status %d)", status);
  HIP_OK(hipMemcpyAsync(a, x, kN * sizeof(float), hipMemcpyDeviceToDevice, s1));
  HIP_OK(hipMemcpyAsync(b, x, kN * sizeof(float), hipMemcpyDeviceToDevice, s2));
  HIP_OK(hipEventRecord(join, s2));
  HIP_OK(hipStreamWaitEvent(s1, join, 0));
  hipLaunchKernelGGL(add_to, dim3(kGrid), dim3(kBlock), 0, s1, a, b, kN);
  hipLaunchKernelGGL(scale, dim3(kGrid), dim3(kBlock), 0, s1, a, 2.0f, kN);
  hipGraph_t graph;
  HIP_OK(hipStreamEndCapture(s1, &graph));
  HIP_OK(hipStreamIsCapturing(s2, &status));
  CHECK(status == hipStreamCaptureStatusNone, "the joined stream still captures (status %d)", status);
  size_t roots = 0;
  HIP_OK(hipGraphGetRootNodes(graph, nullptr, &roots));
  CHECK(roots == 2, "%zu roots of a fork", roots);
  std::vector<hipGraphNode_t> nodes(4);
  size_t count = nodes.size();
  HIP_OK(hipGraphGetNodes(graph, nodes.data(), &count));
  CHECK(count == 4, "%zu nodes", count);
  size_t deps = 0;
  HIP_OK(hipGraphNodeGetDependencies(nodes[2], nullptr, &deps));
  CHECK(TypeOf(nodes[2]) == hipGraphNodeTypeKernel && deps == 2, "the join kernel has %zu dependencies", deps);
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  HIP_OK(hipMemsetAsync(a, 0, kN * sizeof(float), s1));  // s1 does not wait for the null stream.
  HIP_OK(hipGraphLaunch(exec, s1));
  HIP_OK(hipStreamSynchronize(s1));
  std::vector<float> got = Read(a, kN);
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 4 * hx[i], "fork/join: a[%d] = %g", i, got[i]);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));

  // The explicit API: memset a; kernel a += x; host node; a *= 2 after both.
  std::atomic<int> host_runs{0};
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  hipGraphNode_t set, add, host, mul;
  hipMemsetParams mp = {};
  mp.dst = a;
  mp.elementSize = 4;
  mp.width = kN;
  mp.height = 1;
  mp.value = 0;
  HIP_OK(hipGraphAddMemsetNode(&set, g, nullptr, 0, &mp));
  int n = kN;
  void* add_args[] = {&a, &x, &n};
  hipKernelNodeParams kp = {};
  kp.func = reinterpret_cast<void*>(add_to);
  kp.gridDim = dim3(kGrid);
  kp.blockDim = dim3(kBlock);
  kp.kernelParams = add_args;
  HIP_OK(hipGraphAddKernelNode(&add, g, &set, 1, &kp));
  hipHostNodeParams hp = {CountHostCall, &host_runs};
  HIP_OK(hipGraphAddHostNode(&host, g, &set, 1, &hp));
  float two = 2.0f;
  void* mul_args[] = {&a, &two, &n};
  kp.func = reinterpret_cast<void*>(scale);
  kp.kernelParams = mul_args;
  HIP_OK(hipGraphAddKernelNode(&mul, g, nullptr, 0, &kp));
  const hipGraphNode_t from[] = {add, host};
  const hipGraphNode_t to[] = {mul, mul};
  HIP_OK(hipGraphAddDependencies(g, from, to, 2));
  HIP_EXPECT(hipGraphAddDependencies(g, from, to, 1), hipErrorInvalidValue);  // Already there.
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  for (int r = 0; r < 3; ++r) HIP_OK(hipGraphLaunch(exec, s2));
  HIP_OK(hipStreamSynchronize(s2));
  got = Read(a, kN);
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 2 * hx[i], "explicit graph: a[%d] = %g", i, got[i]);
  CHECK(host_runs.load() == 3, "the explicit host node ran %d times", host_runs.load());
  printf("fork/join capture (2 roots, a 2-way join) and the explicit graph API gave the right results\n");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  for (float* p : {x, a, b}) HIP_OK(hipFree(p));
  HIP_OK(hipEventDestroy(fork));
  HIP_OK(hipEventDestroy(join));
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipStreamDestroy(s2));
}

void CheckCaptureRules() {
  hipStream_t s, blocking;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipStreamCreate(&blocking));
  float* d;
  HIP_OK(hipMalloc(&d, kN * sizeof(float)));
  hipGraph_t graph = nullptr;

  // A synchronize inside a capture is refused and spoils the capture.
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_EXPECT(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipErrorIllegalState);
  hipLaunchKernelGGL(scale, dim3(kGrid), dim3(kBlock), 0, s, d, 2.0f, kN);
  HIP_EXPECT(hipStreamSynchronize(s), hipErrorStreamCaptureUnsupported);
  hipStreamCaptureStatus status;
  HIP_OK(hipStreamIsCapturing(s, &status));
  CHECK(status == hipStreamCaptureStatusInvalidated, "status %d after a synchronize in capture", status);
  HIP_EXPECT(hipStreamEndCapture(s, &graph), hipErrorStreamCaptureInvalidated);
  CHECK(graph == nullptr, "an invalidated capture returned a graph");

  // The legacy null stream would wait for a capturing blocking stream.
  HIP_OK(hipStreamBeginCapture(blocking, hipStreamCaptureModeRelaxed));
  HIP_EXPECT(hipMemsetAsync(d, 0, 4, nullptr), hipErrorStreamCaptureImplicit);
  HIP_EXPECT(hipStreamEndCapture(blocking, &graph), hipErrorStreamCaptureInvalidated);

  // A capture cannot wait for an event recorded outside it.
  hipEvent_t outside;
  HIP_OK(hipEventCreate(&outside));
  HIP_OK(hipEventRecord(outside, blocking));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_EXPECT(hipStreamWaitEvent(s, outside, 0), hipErrorStreamCaptureIsolation);
  HIP_EXPECT(hipStreamEndCapture(s, &graph), hipErrorStreamCaptureInvalidated);
  HIP_EXPECT(hipStreamBeginCapture(nullptr, hipStreamCaptureModeGlobal), hipErrorStreamCaptureUnsupported);
  HIP_EXPECT(hipStreamEndCapture(s, &graph), hipErrorIllegalState);

  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  HIP_OK(hipThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == hipStreamCaptureModeGlobal, "the thread's old capture mode was %d", mode);
  HIP_OK(hipThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == hipStreamCaptureModeRelaxed, "exchange gave back %d", mode);

  // Streams work normally after all that.
  HIP_OK(hipMemsetAsync(d, 0, kN * sizeof(float), s));
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipEventDestroy(outside));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipStreamDestroy(blocking));
  printf("capture rules: synchronize, implicit null-stream sync and outside events are refused\n");
}

}  // namespace

// Captured across two streams: s1 spins until the flag is set; s2, a
// branch of its own, sets it.
void CheckBranchesRunConcurrently() {
  hipStream_t s1, s2;
  HIP_OK(hipStreamCreateWithFlags(&s1, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&s2, hipStreamNonBlocking));
  hipEvent_t fork, join;
  HIP_OK(hipEventCreateWithFlags(&fork, hipEventDisableTiming));
  HIP_OK(hipEventCreateWithFlags(&join, hipEventDisableTiming));
  unsigned* flag;
  int* seen;
  HIP_OK(hipMalloc(&flag, sizeof(unsigned)));
  HIP_OK(hipMalloc(&seen, sizeof(int)));
  constexpr int kSpins = 20 * 1000 * 1000;
  HIP_OK(hipStreamBeginCapture(s1, hipStreamCaptureModeThreadLocal));
  HIP_OK(hipEventRecord(fork, s1));
  HIP_OK(hipStreamWaitEvent(s2, fork, 0));
  hipLaunchKernelGGL(wait_for_flag, dim3(1), dim3(1), 0, s1, flag, kSpins, seen);
  hipLaunchKernelGGL(set_flag, dim3(1), dim3(1), 0, s2, flag);
  HIP_OK(hipEventRecord(join, s2));
  HIP_OK(hipStreamWaitEvent(s1, join, 0));
  hipGraph_t graph;
  HIP_OK(hipStreamEndCapture(s1, &graph));
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  for (int launch = 0; launch < 3; ++launch) {
    HIP_OK(hipMemsetAsync(flag, 0, sizeof(unsigned), s1));
    HIP_OK(hipMemsetAsync(seen, 0xff, sizeof(int), s1));
    HIP_OK(hipGraphLaunch(exec, s1));
    HIP_OK(hipStreamSynchronize(s1));
    int got = -1;
    HIP_OK(hipMemcpy(&got, seen, sizeof got, hipMemcpyDeviceToHost));
    CHECK(got == 1, "launch %d: the spinning branch %s", launch,
          got == 0 ? "never saw the other branch's flag: the branches ran one after the other" : "did not run");
  }
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));
  HIP_OK(hipFree(flag));
  HIP_OK(hipFree(seen));
  HIP_OK(hipEventDestroy(fork));
  HIP_OK(hipEventDestroy(join));
  HIP_OK(hipStreamDestroy(s1));
  HIP_OK(hipStreamDestroy(s2));
  printf("independent branches ran concurrently: one spun until the other set its flag, at each of 3 launches\n");
}

int main() {
  CheckCapturedGraphReplayed();
  CheckHostCopiesAtLaunchTime();
  CheckForkJoinAndExplicit();
  CheckBranchesRunConcurrently();
  CheckCaptureRules();
  CHECK(g_host_calls.load() == 3, "host function ran %d times", g_host_calls.load());
  return e2e::Finish("graphs");
}
