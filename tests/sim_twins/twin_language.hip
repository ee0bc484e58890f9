// Twin test program: the language the rewriter and prelude must carry.
// Classes mixing host and device members, templates with non-type
// parameters, overloaded and namespaced kernels, kernels in an anonymous
// namespace, extern "C" host functions, math, atomics, vector types,
// lambdas in device code and __shared__ in a device function.
#include <hip/hip_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#define TWIN_SQUARE(x) ((x) * (x))

namespace twin_lang {

constexpr int kWidth = 64;
const float kHalf = 0.5f;

// A type with host-only members that call the HIP runtime: the twin keeps
// the type and its device members and drops the host ones.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { (void)hipMalloc(&data_, n * sizeof(float)); }
  void Release() { (void)hipFree(data_); }
  std::string Describe() const { return "buffer"; }
  __device__ float& at(int i) { return data_[i]; }
  __host__ __device__ float* data() const { return data_; }

 private:
  float* data_ = nullptr;
};

template <typename T, int kScale>
struct Scaler {
  __device__ T operator()(T v) const { return v * static_cast<T>(kScale); }
};

template <int kScale, typename T>
__global__ void __launch_bounds__(256) scale_by(T* __restrict__ data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] = Scaler<T, kScale>()(data[i]);
}

// Overloads: one name, two kernels.
__global__ void bump(int* p) { atomicAdd(p, 1); }
__global__ void bump(float* p) { atomicAdd(p, 0.5f); }

__device__ int BlockMax(int v) {
  __shared__ int best;  // In a device function: still one per block.
  if (threadIdx.x == 0) best = INT_MIN;
  __syncthreads();
  atomicMax(&best, v);
  __syncthreads();
  return best;
}

__global__ void block_max(const int* in, int* out) {
  int m = BlockMax(in[blockIdx.x * blockDim.x + threadIdx.x]);
  if (threadIdx.x == 0) out[blockIdx.x] = m;
}

}  // namespace twin_lang

namespace {
template <typename T>
__global__ void anon_copy(const T* in, T* out, int n) {
  auto at = [&](int i) { return in[i]; };  // A lambda in device code.
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = at(i);
}
}  // namespace

// Math, vector types, a CAS loop and a class with device members.
__global__ void math_mix(float* out, twin_lang::DeviceBuffer buf, float4 v) {
  using namespace std;
  const int i = threadIdx.x;
  float x = 0.25f * (i + 1);
  float4 w = v * 2.0f + make_float4(x, x, x, x);
  float r = expf(x) + __expf(x) + logf(x + 1) + sqrtf(x) + rsqrtf(x) + tanhf(x) + powf(x, 1.5f) +
            fabsf(-x) + fmaxf(x, twin_lang::kHalf) + fminf(x, twin_lang::kHalf) + __fdividef(x, 2.0f) +
            min(i, 3) + max(1.5f, x) + TWIN_SQUARE(x) + w.x + w.w;
  out[i] = r;
  buf.at(i) = static_cast<float>(twin_lang::kWidth) + x;
  // Atomic multiply by CAS.
  unsigned int* bits = reinterpret_cast<unsigned int*>(buf.data() + 63);
  unsigned int old = *bits, seen;
  do {
    seen = old;
    old = atomicCAS(bits, seen, __float_as_uint(__uint_as_float(seen) * 2.0f));
  } while (old != seen);
}

extern "C" int twin_lang_host_entry(int x) { return x + 1; }

int main() {
  twin_lang::DeviceBuffer buf(64);
  int* ip = nullptr;
  float* fp = nullptr;
  (void)hipMalloc(&ip, 1024);
  (void)hipMalloc(&fp, 1024);
  twin_lang::scale_by<3, float><<<1, 64>>>(buf.data(), 64);
  twin_lang::scale_by<2, int><<<1, 64>>>(ip, 64);
  twin_lang::bump<<<1, 1>>>(ip);
  twin_lang::bump<<<1, 1>>>(fp);
  twin_lang::block_max<<<2, 64>>>(ip, ip);
  anon_copy<double><<<1, 32>>>(reinterpret_cast<double*>(fp), reinterpret_cast<double*>(fp), 8);
  math_mix<<<1, 32>>>(fp, buf, make_float4(1, 2, 3, 4));
  buf.Release();
  std::printf("%s %d\n", buf.Describe().c_str(), twin_lang_host_entry(1));
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
