// newer_entry_points: HIP functions Debian's 5.2 library does not export but
// ROCm >= 5.3 does, which the stub exports for 6.x/7.x programs. Debian's
// headers declare some of them; the rest are declared here from their
// documented signatures. The program links against the stub (Debian's
// libamdhip64.so.5 lacks these symbols), as such programs do against the
// drop-in libamdhip64.so.
//
//  * hipLaunchHostFunc: in stream order between kernels, on the client, and
//    captured into a graph as a host node.
//  * hipStreamGetDevice, hipEventRecord_spt.
//  * hipModuleLaunchCooperativeKernel on a hipModuleLoad'ed function
//    (module_kernels.co, path in argv[1]), and its residency limit.
//  * hipGetProcAddress: the stub's own functions, R0600 twins for 6.x.
#include <hip/hip_runtime.h>

#include <dlfcn.h>

#include <atomic>
#include <vector>

#include "common.h"

extern "C" {
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);
hipError_t hipGetProcAddress(const char* symbol, void** fn, int version, uint64_t flags, int* status);
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                            unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                            hipStream_t stream, void** params);
}

__global__ void set_to(int* p, int v) { *p = v; }

namespace {

struct Probe {
  int* host_copy;  // Pinned: written by the copy before the host function.
  int seen = -1;
  std::atomic<int> calls{0};
};

void ReadValue(void* user) {
  auto* probe = static_cast<Probe*>(user);
  probe->seen = *probe->host_copy;
  probe->calls.fetch_add(1);
}

void CheckHostFunc() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  int* d;
  HIP_OK(hipMalloc(&d, sizeof(int)));
  Probe probe;
  HIP_OK(hipHostMalloc(&probe.host_copy, sizeof(int), 0));
  *probe.host_copy = 0;
  // The host function runs after the copy before it and before the kernel
  // after it has changed anything it reads.
  hipLaunchKernelGGL(set_to, dim3(1), dim3(1), 0, s, d, 41);
  HIP_OK(hipMemcpyAsync(probe.host_copy, d, sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_OK(hipLaunchHostFunc(s, ReadValue, &probe));
  hipLaunchKernelGGL(set_to, dim3(1), dim3(1), 0, s, d, 42);
  HIP_OK(hipMemcpyAsync(probe.host_copy, d, sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(probe.calls.load() == 1 && probe.seen == 41, "the host function saw %d (%d calls), expected 41 once",
        probe.seen, probe.calls.load());
  CHECK(*probe.host_copy == 42, "the copy after the host function gave %d", *probe.host_copy);
  HIP_EXPECT(hipLaunchHostFunc(s, nullptr, &probe), hipErrorInvalidValue);

  // Captured: a host node, run at every launch of the graph.
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(set_to, dim3(1), dim3(1), 0, s, d, 7);
  HIP_OK(hipMemcpyAsync(probe.host_copy, d, sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_OK(hipLaunchHostFunc(s, ReadValue, &probe));
  hipGraph_t graph;
  HIP_OK(hipStreamEndCapture(s, &graph));
  CHECK(probe.calls.load() == 1, "a captured host function ran at capture time");
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiate(&exec, graph, nullptr, nullptr, 0));
  for (int i = 0; i < 3; ++i) HIP_OK(hipGraphLaunch(exec, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(probe.calls.load() == 4 && probe.seen == 7, "graph host node: %d calls, saw %d", probe.calls.load(),
        probe.seen);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(graph));
  HIP_OK(hipHostFree(probe.host_copy));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  printf("hipLaunchHostFunc ran in stream order, and as a captured graph's host node\n");
}

void CheckStreamQueries() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipDevice_t device = -1;
  HIP_OK(hipStreamGetDevice(s, &device));
  CHECK(device == 0, "hipStreamGetDevice gave %d", device);
  device = -1;
  HIP_OK(hipStreamGetDevice(nullptr, &device));
  CHECK(device == 0, "hipStreamGetDevice(null stream) gave %d", device);
  HIP_EXPECT(hipStreamGetDevice(s, nullptr), hipErrorInvalidValue);
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  HIP_OK(hipEventRecord_spt(e, s));
  HIP_OK(hipEventSynchronize(e));
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamGetDevice(s, &device), hipErrorContextIsDestroyed);  // Destroyed (as clr).
  printf("hipStreamGetDevice and hipEventRecord_spt answered\n");
}

void CheckModuleCooperativeLaunch(const char* module_path) {
  hipModule_t module;
  HIP_OK(hipModuleLoad(&module, module_path));
  hipFunction_t add;
  HIP_OK(hipModuleGetFunction(&add, module, "add_vec"));
  constexpr int kN = 4096;
  float *a, *b, *c;
  HIP_OK(hipMalloc(&a, kN * sizeof(float)));
  HIP_OK(hipMalloc(&b, kN * sizeof(float)));
  HIP_OK(hipMalloc(&c, kN * sizeof(float)));
  std::vector<float> ha(kN), hb(kN);
  for (int i = 0; i < kN; ++i) {
    ha[i] = static_cast<float>(i);
    hb[i] = static_cast<float>(2 * i);
  }
  HIP_OK(hipMemcpy(a, ha.data(), kN * sizeof(float), hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(b, hb.data(), kN * sizeof(float), hipMemcpyHostToDevice));
  int n = kN;
  void* params[] = {&a, &b, &c, &n};
  HIP_OK(hipModuleLaunchCooperativeKernel(add, kN / 256, 1, 1, 256, 1, 1, 0, nullptr, params));
  std::vector<float> got(kN);
  HIP_OK(hipMemcpy(got.data(), c, kN * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < kN; ++i) CHECK(got[i] == 3.0f * i, "cooperative module launch: c[%d] = %g", i, got[i]);
  // More blocks than can be resident at once.
  HIP_EXPECT(hipModuleLaunchCooperativeKernel(add, 1u << 20, 1, 1, 256, 1, 1, 0, nullptr, params),
             hipErrorCooperativeLaunchTooLarge);
  for (float* p : {a, b, c}) HIP_OK(hipFree(p));
  HIP_OK(hipModuleUnload(module));
  printf("hipModuleLaunchCooperativeKernel ran, and refused a grid too large to be resident\n");
}

void CheckProcAddress() {
  void* fn = nullptr;
  int status = -1;
  HIP_OK(hipGetProcAddress("hipMalloc", &fn, 600, 0, &status));
  CHECK(fn != nullptr && fn == dlsym(RTLD_DEFAULT, "hipMalloc") && status == 0, "hipMalloc: %p, status %d", fn,
        status);
  using MallocFn = hipError_t (*)(void**, size_t);
  void* p = nullptr;
  HIP_OK(reinterpret_cast<MallocFn>(fn)(&p, 256));
  HIP_OK(hipFree(p));
  HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 600, 0, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600"), "6.x hipGetDeviceProperties is not the R0600 twin");
  HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 502, 0, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDeviceProperties"), "5.x hipGetDeviceProperties is not the plain one");
  HIP_EXPECT(hipGetProcAddress("hipNoSuchFunction", &fn, 600, 0, &status), hipErrorInvalidValue);
  CHECK(fn == nullptr && status == 1, "a missing symbol gave %p, status %d", fn, status);
  // HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2): the _spt form where there is one, as clr.
  HIP_OK(hipGetProcAddress("hipMemcpy", &fn, 600, 2, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMemcpy_spt"), "per-thread hipMemcpy is not hipMemcpy_spt");
  HIP_OK(hipGetProcAddress("hipMemcpy", &fn, 600, 1, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMemcpy"), "legacy-stream hipMemcpy is not hipMemcpy");
  HIP_OK(hipGetProcAddress("hipMalloc", &fn, 600, 2, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMalloc"), "per-thread hipMalloc (no _spt form) is not hipMalloc");
  HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 600, 2, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600"), "per-thread hipGetDeviceProperties is not R0600");
  HIP_EXPECT(hipGetProcAddress("hipMalloc", &fn, 600, 4, &status), hipErrorInvalidValue);
  HIP_EXPECT(hipGetProcAddress("", &fn, 600, 0, &status), hipErrorInvalidValue);
  printf("hipGetProcAddress handed out the stub's own functions, R0600 twins for 6.x\n");
}

}  // namespace

int main(int argc, char** argv) {
  CHECK(argc == 2, "usage: newer_entry_points MODULE.co");
  CheckHostFunc();
  CheckStreamQueries();
  CheckModuleCooperativeLaunch(argv[1]);
  CheckProcAddress();
  return e2e::Finish("newer_entry_points");
}
