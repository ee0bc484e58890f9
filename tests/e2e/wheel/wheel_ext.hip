// A HIP extension laid out the way PyTorch's ROCm wheels lay out theirs
// (run_e2e.py scenario wheel_preload; tests/e2e/CMakeLists.txt builds it):
// torchlike/lib/lib<name>.so needs the runtime under the unversioned name
// libamdhip64.so, carries DT_RPATH=$ORIGIN, and has a runtime file of that
// name beside it (a link-only ROCm 6 library whose every function aborts).
// Loaded from Python under LD_PRELOAD of the stub alone, it must get the stub
// and ROCm 6 answers, and the file beside it must never be mapped.
//
// Built twice from this source:
//   wheel_ext (WHEEL_REFERENCES_6): linked against the link-only .so.6 and
//     calling hipGetDevicePropertiesR0600, so it references node hip_6.0;
//   wheel_old: linked against Debian's 5.2 runtime, so it references only
//     hip_4.2-era nodes; its major comes from the runtime file beside it.
// WHEEL_BIAS differs between the two, so each has its own code object.
#include <hip/hip_runtime.h>

#include "common.h"

#ifndef WHEEL_BIAS
#error "WHEEL_BIAS must be defined"
#endif

#ifdef WHEEL_REFERENCES_6
// The 6.x name of hipGetDeviceProperties (node hip_6.0; not in Debian's header).
extern "C" hipError_t hipGetDevicePropertiesR0600(void* prop, int device);
#endif

namespace {

// ROCm 6's hipMemoryType numbering (Debian's 5.2 header has 5.x's).
constexpr int kHost6 = 1;
constexpr int kDevice6 = 2;
constexpr int kRuntime6 = 60000000;  // HIP_VERSION of 6.0.0.

__global__ void AxpyBias(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i] + WHEEL_BIAS;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int wheel_run(void) {
  e2e::CheckHipIsStub();
  constexpr int n = 1000;
  std::vector<float> x(n), y(n), out(n);
  for (int i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(3 * i + 1);
  }
  float* dx = nullptr;
  float* dy = nullptr;
  HIP_OK(hipMalloc(&dx, n * sizeof(float)));
  HIP_OK(hipMalloc(&dy, n * sizeof(float)));
  HIP_OK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice));
  AxpyBias<<<(n + 255) / 256, 256>>>(2.0f, dx, dy, n);
  HIP_OK(hipGetLastError());
  HIP_OK(hipMemcpy(out.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i)
    CHECK(out[i] == 2.0f * x[i] + y[i] + WHEEL_BIAS, "element %d: %f", i, out[i]);

  // ROCm 6 numbering, as PyTorch's Tensor.is_pinned() reads it.
  void* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, 4096));
  hipPointerAttribute_t a{};
  HIP_OK(hipPointerGetAttributes(&a, dx));
  CHECK(static_cast<int>(a.memoryType) == kDevice6, "device memory's type is %d, ROCm 6 says 2", a.memoryType);
  HIP_OK(hipPointerGetAttributes(&a, pinned));
  CHECK(static_cast<int>(a.memoryType) == kHost6, "pinned memory's type is %d, ROCm 6 says 1", a.memoryType);

  int runtime = 0;
  HIP_OK(hipRuntimeGetVersion(&runtime));
  CHECK(runtime >= kRuntime6, "hipRuntimeGetVersion says %d to a ROCm 6 library", runtime);

#ifdef WHEEL_REFERENCES_6
  unsigned char prop[1472 + 64];
  memset(prop, 0, sizeof prop);
  HIP_OK(hipGetDevicePropertiesR0600(prop, 0));
  CHECK(strncmp(reinterpret_cast<const char*>(prop), "AMD Instinct", 12) == 0, "R0600 name '%.64s'",
        reinterpret_cast<const char*>(prop));
#endif

  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(dx));
  HIP_OK(hipFree(dy));
  e2e::CheckMapsClean();
  return 0;
}
