// Twin test program: shared memory and barriers. A block reduction over
// many blocks (static __shared__, __syncthreads, atomicAdd), dynamic shared
// memory (extern __shared__, also in a template, and HIP_DYNAMIC_SHARED), a 2-D tile
// transpose, and __syncthreads_count/_and/_or.
#include <hip/hip_runtime.h>

constexpr int kBlock = 256;
constexpr int kTile = 16;

__global__ void block_sum(const int* in, unsigned long long* total, int n) {
  __shared__ int partial[kBlock];
  const int t = threadIdx.x;
  const int i = blockIdx.x * blockDim.x + t;
  partial[t] = i < n ? in[i] : 0;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) atomicAdd(total, static_cast<unsigned long long>(partial[0]));
}

// Reverses each block's slice through dynamic shared memory.
__global__ void reverse_blocks(int* data) {
  extern __shared__ int slice[];
  const int t = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  slice[t] = data[base + t];
  __syncthreads();
  data[base + t] = slice[blockDim.x - 1 - t];
}

// Templates share one dynamic shared array of bytes.
template <typename T>
__global__ void rotate_left(T* data, int shift) {
  extern __shared__ unsigned char raw[];
  T* buffer = reinterpret_cast<T*>(raw);
  const int t = threadIdx.x;
  const int base = blockIdx.x * blockDim.x;
  buffer[t] = data[base + t];
  __syncthreads();
  data[base + t] = buffer[(t + shift) % blockDim.x];
}

__global__ void scale_dynamic(float* data, float factor) {
  HIP_DYNAMIC_SHARED(float, buffer)
  const int t = threadIdx.x;
  buffer[t] = data[blockIdx.x * blockDim.x + t] * factor;
  __syncthreads();
  data[blockIdx.x * blockDim.x + t] = buffer[blockDim.x - 1 - t];
}

__global__ void transpose(const float* in, float* out, int width, int height) {
  __shared__ float tile[kTile][kTile + 1];
  int x = blockIdx.x * kTile + threadIdx.x;
  int y = blockIdx.y * kTile + threadIdx.y;
  if (x < width && y < height) tile[threadIdx.y][threadIdx.x] = in[y * width + x];
  __syncthreads();
  x = blockIdx.y * kTile + threadIdx.x;
  y = blockIdx.x * kTile + threadIdx.y;
  if (x < height && y < width) out[y * height + x] = tile[threadIdx.x][threadIdx.y];
}

// counts[3*b + 0..2] = __syncthreads_count / _and / _or of flags in block b.
__global__ void vote(const int* flags, int* counts) {
  const int f = flags[blockIdx.x * blockDim.x + threadIdx.x];
  int count = __syncthreads_count(f);
  int all = __syncthreads_and(f);
  int any = __syncthreads_or(f);
  if (threadIdx.x == 0) {
    counts[3 * blockIdx.x] = count;
    counts[3 * blockIdx.x + 1] = all;
    counts[3 * blockIdx.x + 2] = any;
  }
}

// Launched with a partial last block (a global size in work-items): every
// thread that exists writes its block's size at its position in a grid of
// full-size blocks (strides = the full block size), and thread (0,0) of
// each block the number of threads that reached the barrier.
__global__ void mark_partial(int* out, int stride_x, int stride_y, int* counts) {
  const int x = blockIdx.x * stride_x + threadIdx.x;
  const int y = blockIdx.y * stride_y + threadIdx.y;
  out[y * (gridDim.x * stride_x) + x] = blockDim.x * 1000 + blockDim.y;
  const int arrived = __syncthreads_count(1);
  if (threadIdx.x == 0 && threadIdx.y == 0) counts[blockIdx.y * gridDim.x + blockIdx.x] = arrived;
}

int main() {
  int* d = nullptr;
  unsigned long long* total = nullptr;
  float* f = nullptr;
  (void)hipMalloc(&d, 1 << 20);
  (void)hipMalloc(&total, 8);
  (void)hipMalloc(&f, 1 << 20);
  block_sum<<<64, kBlock>>>(d, total, 64 * kBlock);
  reverse_blocks<<<4, 128, 128 * sizeof(int)>>>(d);
  rotate_left<int><<<4, 64, 64 * sizeof(int)>>>(d, 3);
  rotate_left<double><<<4, 64, 64 * sizeof(double)>>>(reinterpret_cast<double*>(f), 5);
  scale_dynamic<<<2, 32, 32 * sizeof(float)>>>(f, 2.0f);
  transpose<<<dim3(4, 3), dim3(kTile, kTile)>>>(f, f, 64, 48);
  vote<<<3, 128>>>(d, d);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}
