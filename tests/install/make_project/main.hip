// Host code only: this source has no kernels, so no twin of its own.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <vector>

hipError_t launch_vadd(const float* a, const float* b, float* c, int n);

int main() {
  const int n = 10000;
  std::vector<float> a(n), b(n), c(n);
  for (int i = 0; i < n; ++i) {
    a[i] = 0.25f * i;
    b[i] = 3.0f - i;
  }
  float *da, *db, *dc;
  if (hipMalloc(&da, n * 4) || hipMalloc(&db, n * 4) || hipMalloc(&dc, n * 4) ||
      hipMemcpy(da, a.data(), n * 4, hipMemcpyHostToDevice) || hipMemcpy(db, b.data(), n * 4, hipMemcpyHostToDevice) ||
      launch_vadd(da, db, dc, n) || hipMemcpy(c.data(), dc, n * 4, hipMemcpyDeviceToHost)) {
    std::fprintf(stderr, "FAIL: a HIP call failed\n");
    return 1;
  }
  for (int i = 0; i < n; ++i) {
    if (c[i] != a[i] + b[i]) {
      std::fprintf(stderr, "FAIL element %d: %g, want %g\n", i, c[i], a[i] + b[i]);
      return 1;
    }
  }
  std::printf("vadd: PASS (%d elements)\n", n);
  return 0;
}
