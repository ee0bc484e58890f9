// kernel_user: a program that links the kernel library libkern.so
// (DT_NEEDED) and runs memory checks and the library's kernels through the
// stub. With a twin of libkern's code object on the worker the kernels must
// compute the right values; with `--no-twin` (a worker without one) each
// launch must fail with hipErrorNoBinaryForGpu and leave memory alone.
#include <vector>

#include "common.h"

extern "C" hipError_t kern_launch_scale(float* data, float factor, int n);
extern "C" hipError_t kern_launch_fill(int* data, int value, int n);

int main(int argc, char** argv) {
  const bool no_twin = argc > 1 && strcmp(argv[1], "--no-twin") == 0;
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count >= 1, "device count %d", count);
  hipDeviceProp_t prop;
  HIP_OK(hipGetDeviceProperties(&prop, 0));
  CHECK(strncmp(prop.gcnArchName, "gfx90a", 6) == 0, "gcnArchName is '%s'", prop.gcnArchName);

  const int n = 1 << 20;
  const size_t bytes = n * sizeof(float);
  std::vector<float> src(n), got(n);
  for (int i = 0; i < n; ++i) src[i] = static_cast<float>(i) * 0.5f;
  float* d = nullptr;
  HIP_OK(hipMalloc(&d, bytes));
  e2e::CheckNotHostAccessible(d, bytes, "kernel data");
  HIP_OK(hipMemcpy(d, src.data(), bytes, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), src.data(), bytes) == 0, "round trip differs");
  HIP_OK(hipMemset(d + 10, 0, 100 * sizeof(float)));
  HIP_OK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) {
    float want = (i >= 10 && i < 110) ? 0.0f : src[i];
    CHECK(got[i] == want, "element %d is %f after the memset, expected %f", i, static_cast<double>(got[i]),
          static_cast<double>(want));
  }
  HIP_OK(hipMemcpy(d, src.data(), bytes, hipMemcpyHostToDevice));

  // Kernels registered by libkern.so's constructor.
  hipError_t e = kern_launch_scale(d, 2.0f, n);
  hipError_t e2 = kern_launch_fill(reinterpret_cast<int*>(d) + n / 2, 7, n / 2);
  if (no_twin) {
    CHECK(e == hipErrorNoBinaryForGpu, "launching e2e_scale without a twin returned %s, expected "
          "hipErrorNoBinaryForGpu", e2e::ErrName(e));
    CHECK(e2 == hipErrorNoBinaryForGpu, "launching e2e_fill<int> without a twin returned %s", e2e::ErrName(e2));
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
    CHECK(memcmp(got.data(), src.data(), bytes) == 0, "device data changed after refused launches");
    printf("[kernel_user] memory checks passed; launches without a twin -> hipErrorNoBinaryForGpu\n");
  } else {
    HIP_OK(e);
    HIP_OK(e2);
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
    for (int i = 0; i < n / 2; ++i)
      CHECK(got[i] == src[i] * 2.0f, "e2e_scale: element %d is %f, expected %f", i, static_cast<double>(got[i]),
            static_cast<double>(src[i] * 2.0f));
    const int* ints = reinterpret_cast<const int*>(got.data());
    for (int i = n / 2; i < n; ++i) CHECK(ints[i] == 7, "e2e_fill<int>: element %d is %d, expected 7", i, ints[i]);
    printf("[kernel_user] memory checks and libkern.so's kernels passed\n");
  }
  HIP_OK(hipFree(d));
  return e2e::Finish("kernel_user");
}
