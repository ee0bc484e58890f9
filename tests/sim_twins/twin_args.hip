// Twin test program: by-value structs and many arguments of mixed sizes and
// alignments, whose kernarg layout the twin must reproduce exactly.
#include <hip/hip_runtime.h>

#include <cstdint>

struct Mixed {
  char c;
  double d;
  short s;
  int* p;
};

struct alignas(16) Wide {
  float v[4];
};

namespace twin_test {
struct Pair {
  int a;
  int b;
};
}  // namespace twin_test

// Every argument lands in `out` (integers) or `dout` (floating point) so
// the test can check that it arrived intact.
__global__ void many_args(Mixed m, char c, short s, double d, long long* out, long long ll, unsigned char uc, float f,
                          Wide w, int64_t i64, twin_test::Pair pair, float4 v4, int3 v3, double* dout) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  long long ints[] = {c, s, ll, uc, i64, m.c, m.s, pair.a, pair.b, v3.x, v3.y, v3.z};
  for (int i = 0; i < 12; ++i) out[i] = ints[i];
  float4 v = v4 + make_float4(1.0f, 1.0f, 1.0f, 1.0f);
  double reals[] = {d, f, m.d, w.v[0], w.v[1], w.v[2], w.v[3], v.x, v.y, v.z, v.w};
  for (int i = 0; i < 11; ++i) dout[i] = reals[i];
  *m.p = m.c + m.s;
}

extern "C" __global__ void no_args() {}

int main() {
  long long* out = nullptr;
  double* dout = nullptr;
  (void)hipMalloc(&out, 12 * sizeof(long long));
  (void)hipMalloc(&dout, 11 * sizeof(double));
  many_args<<<1, 1>>>(Mixed{}, 'a', 2, 3.0, out, 4, 5, 6.0f, Wide{}, 7, twin_test::Pair{8, 9},
                      make_float4(1, 2, 3, 4), make_int3(1, 2, 3), dout);
  no_args<<<1, 1>>>();
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
