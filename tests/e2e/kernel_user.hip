// kernel_user: a program that links the kernel library libkern.so
// (DT_NEEDED) and runs memory checks through the stub. Launches are not
// supported by hipr yet: they must return exactly hipErrorNotSupported and
// leave device memory alone. (Update this test when launches land.)
#include <vector>

#include "common.h"

extern "C" hipError_t kern_launch_scale(float* data, float factor, int n);
extern "C" hipError_t kern_launch_fill(int* data, int value, int n);

int main() {
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

  // Kernels registered by libkern.so's constructor: launches are refused.
  hipError_t e = kern_launch_scale(d, 2.0f, n);
  CHECK(e == hipErrorNotSupported, "launching e2e_scale returned %s, expected hipErrorNotSupported "
        "(if launches are supported now, update this test)", e2e::ErrName(e));
  e = kern_launch_fill(reinterpret_cast<int*>(d), 7, n);
  CHECK(e == hipErrorNotSupported, "launching e2e_fill<int> returned %s, expected hipErrorNotSupported",
        e2e::ErrName(e));
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipMemcpy(got.data(), d, bytes, hipMemcpyDeviceToHost));
  CHECK(memcmp(got.data(), src.data(), bytes) == 0, "device data changed after refused launches");
  HIP_OK(hipFree(d));
  printf("[kernel_user] memory checks passed; launches from libkern.so -> hipErrorNotSupported\n");
  return e2e::Finish("kernel_user");
}
