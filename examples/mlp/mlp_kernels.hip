// mlp_kernels.hip: the GPU half of the hipr MLP demo (examples/mlp/train.py).
//
// A small HIP extension library of the kind a Python framework loads with ctypes. Nothing in it is
// hipr-specific: it is built with Debian's hipcc exactly like a framework extension,
//
//   hipcc --offload-arch=gfx90a -O2 -std=c++17 -shared -fPIC -o libhipr_mlp.so mlp_kernels.hip
//
// so it carries DT_NEEDED libamdhip64.so.5 and a gfx90a fat binary. Under
// LD_PRELOAD=libhip_client_stub.so its HIP calls go to a hipr worker; on a worker without a GPU (the
// `sim` device) its kernels run through host-compiled twins of this very file. The kernels therefore
// keep to plain CUDA-style C++: threadIdx/blockIdx/blockDim/gridDim, __shared__, __syncthreads,
// float atomicAdd and expf/logf/fmaxf; no warp intrinsics, no printf, no __device__ variables.
//
// The C API (extern "C", for ctypes) works on a context that owns one stream; every entry returns a
// hipError_t as int (0 = hipSuccess). Launch entries report launch errors (hipGetLastError); errors
// of the work itself surface at the next synchronising entry (mlp_download, mlp_synchronize).
// All matrices are row-major float32; labels are int32.
#include <hip/hip_runtime.h>

#include <cstddef>
#include <new>

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

// C[M,N] = op(A)[M,K] * op(B)[K,N], tiled through shared memory. op(A) = A (stored M x K) or, with
// transA, A^T (A stored K x M); likewise op(B) = B (K x N) or B^T (B stored N x K). Launch with
// blockDim = (TILE, TILE) and gridDim = (ceil(N / TILE), ceil(M / TILE)).
template <int TILE>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K,
                             int transA, int transB) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ka = k0 + tx;  // column of op(A) this thread loads
    float a = 0.0f;
    if (row < M && ka < K) a = transA ? A[(size_t)ka * M + row] : A[(size_t)row * K + ka];
    As[ty][tx] = a;
    const int kb = k0 + ty;  // row of op(B) this thread loads
    float b = 0.0f;
    if (kb < K && col < N) b = transB ? B[(size_t)col * K + kb] : B[(size_t)kb * N + col];
    Bs[ty][tx] = b;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

// out[r, c] = act(Z[r, c] + bias[c]); act = ReLU when relu != 0, else identity. out may be Z.
__global__ void bias_act(const float* Z, const float* bias, float* out, int rows, int cols,
                         int relu) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const float v = Z[i] + bias[i % cols];
  out[i] = relu ? fmaxf(v, 0.0f) : v;
}

// One thread per sample: probs = softmax(logits), loss[r] = -log probs[r, labels[r]] (computed as
// logsumexp - logit, stably), and stats[0] += loss[r], stats[1] += 1 where argmax == label.
__global__ void softmax_xent(const float* logits, const int* labels, float* probs, float* loss,
                             float* stats, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* z = logits + (size_t)r * cols;
  float* p = probs + (size_t)r * cols;
  float zmax = z[0];
  int argmax = 0;
  for (int c = 1; c < cols; ++c) {
    if (z[c] > zmax) {
      zmax = z[c];
      argmax = c;
    }
  }
  float sum = 0.0f;
  for (int c = 0; c < cols; ++c) sum += expf(z[c] - zmax);
  const float inv = 1.0f / sum;
  for (int c = 0; c < cols; ++c) p[c] = expf(z[c] - zmax) * inv;
  const int y = labels[r];
  const float l = logf(sum) - (z[y] - zmax);
  loss[r] = l;
  atomicAdd(&stats[0], l);
  if (argmax == y) atomicAdd(&stats[1], 1.0f);
}

// Gradient of the batch-mean cross-entropy with respect to the logits: (probs - onehot) / rows.
__global__ void softmax_xent_grad(const float* probs, const int* labels, float* dlogits, int rows,
                                  int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  const int r = i / cols;
  const int c = i % cols;
  const float onehot = (c == labels[r]) ? 1.0f : 0.0f;
  dlogits[i] = (probs[i] - onehot) / (float)rows;
}

// dZ = dA where the ReLU output A is positive, else 0. dZ may be dA.
__global__ void relu_backward(const float* dA, const float* A, float* dZ, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  dZ[i] = A[i] > 0.0f ? dA[i] : 0.0f;
}

// out[c] = sum over r of X[r, c]: one block of BLOCK threads per column (gridDim.x = cols), a
// strided partial sum per thread, then a tree reduction in shared memory. BLOCK: a power of two.
template <int BLOCK>
__global__ void column_sum(const float* X, float* out, int rows, int cols) {
  __shared__ float partial[BLOCK];
  const int c = blockIdx.x;
  const int t = threadIdx.x;
  float s = 0.0f;
  for (int r = t; r < rows; r += BLOCK) s += X[(size_t)r * cols + c];
  partial[t] = s;
  __syncthreads();
  for (int stride = BLOCK / 2; stride > 0; stride /= 2) {
    if (t < stride) partial[t] += partial[t + stride];
    __syncthreads();
  }
  if (t == 0) out[c] = partial[0];
}

// Plain SGD: param -= lr * grad, element-wise over n values.
template <typename T>
__global__ void sgd_update(T* param, const T* grad, T lr, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) param[i] -= lr * grad[i];
}

// ---------------------------------------------------------------------------------------------
// Host side: the C API
// ---------------------------------------------------------------------------------------------

namespace {

constexpr int kTile = 16;         // matmul_tiled<kTile>: kTile x kTile threads per block
constexpr int kSumBlock = 64;     // column_sum<kSumBlock>: threads per block (one wavefront)
constexpr int kThreads = 256;     // threads per block of the element-wise kernels

int Blocks(int n, int per_block) { return (n + per_block - 1) / per_block; }

// Run before a launch so that a launch entry reports its own launch error, not an older one.
void ClearLastError() { (void)hipGetLastError(); }

int LaunchResult() { return static_cast<int>(hipGetLastError()); }

}  // namespace

struct mlp_context {
  int device = 0;
  hipStream_t stream = nullptr;
};

extern "C" {

// Creates a context on `device` with a stream of its own.
int mlp_create(int device, mlp_context** out) {
  if (out == nullptr) return hipErrorInvalidValue;
  *out = nullptr;
  hipError_t err = hipSetDevice(device);
  if (err != hipSuccess) return err;
  auto* ctx = new (std::nothrow) mlp_context;
  if (ctx == nullptr) return hipErrorOutOfMemory;
  ctx->device = device;
  err = hipStreamCreate(&ctx->stream);
  if (err != hipSuccess) {
    delete ctx;
    return err;
  }
  *out = ctx;
  return hipSuccess;
}

// Waits for the context's work, then destroys its stream and the context.
int mlp_destroy(mlp_context* ctx) {
  if (ctx == nullptr) return hipSuccess;
  hipError_t err = hipStreamSynchronize(ctx->stream);
  hipError_t err2 = hipStreamDestroy(ctx->stream);
  delete ctx;
  return err != hipSuccess ? err : err2;
}

const char* mlp_error_string(int err) { return hipGetErrorString(static_cast<hipError_t>(err)); }

// "<name> (<gcnArchName>)" of the context's device into buf (NUL-terminated, truncated to len).
int mlp_device_name(mlp_context* ctx, char* buf, int len) {
  if (ctx == nullptr || buf == nullptr || len <= 0) return hipErrorInvalidValue;
  hipDeviceProp_t prop;
  hipError_t err = hipGetDeviceProperties(&prop, ctx->device);
  if (err != hipSuccess) return err;
  int n = 0;
  auto put = [&](const char* s) {
    for (; *s != '\0' && n < len - 1; ++s) buf[n++] = *s;
  };
  put(prop.name);
  put(" (");
  put(prop.gcnArchName);
  put(")");
  buf[n] = '\0';
  return hipSuccess;
}

int mlp_synchronize(mlp_context* ctx) {
  if (ctx == nullptr) return hipErrorInvalidValue;
  return hipStreamSynchronize(ctx->stream);
}

int mlp_alloc(mlp_context* ctx, void** out, size_t bytes) {
  if (ctx == nullptr || out == nullptr) return hipErrorInvalidValue;
  return hipMalloc(out, bytes);
}

// Frees after the context's queued work is done (hipFree itself synchronises the device).
int mlp_free(mlp_context* ctx, void* ptr) {
  if (ctx == nullptr) return hipErrorInvalidValue;
  return hipFree(ptr);
}

// Host -> device, ordered on the context's stream; the source may be reused once this returns.
int mlp_upload(mlp_context* ctx, void* dst, const void* src, size_t bytes) {
  if (ctx == nullptr) return hipErrorInvalidValue;
  hipError_t err = hipMemcpyAsync(dst, src, bytes, hipMemcpyHostToDevice, ctx->stream);
  if (err != hipSuccess) return err;
  return hipStreamSynchronize(ctx->stream);
}

// Device -> host after all work queued before it; returns once the bytes are in dst.
int mlp_download(mlp_context* ctx, void* dst, const void* src, size_t bytes) {
  if (ctx == nullptr) return hipErrorInvalidValue;
  hipError_t err = hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToHost, ctx->stream);
  if (err != hipSuccess) return err;
  return hipStreamSynchronize(ctx->stream);
}

int mlp_zero(mlp_context* ctx, void* dst, size_t bytes) {
  if (ctx == nullptr) return hipErrorInvalidValue;
  return hipMemsetAsync(dst, 0, bytes, ctx->stream);
}

// C[M,N] = op(A) * op(B) (see matmul_tiled).
int mlp_matmul(mlp_context* ctx, const float* A, const float* B, float* C, int M, int N, int K,
               int transA, int transB) {
  if (ctx == nullptr || M < 0 || N < 0 || K < 0) return hipErrorInvalidValue;
  if (M == 0 || N == 0) return hipSuccess;
  ClearLastError();
  dim3 block(kTile, kTile);
  dim3 grid(Blocks(N, kTile), Blocks(M, kTile));
  matmul_tiled<kTile><<<grid, block, 0, ctx->stream>>>(A, B, C, M, N, K, transA, transB);
  return LaunchResult();
}

int mlp_bias_act(mlp_context* ctx, const float* Z, const float* bias, float* out, int rows, int cols,
                 int relu) {
  if (ctx == nullptr || rows < 0 || cols < 0) return hipErrorInvalidValue;
  const int n = rows * cols;
  if (n == 0) return hipSuccess;
  ClearLastError();
  bias_act<<<Blocks(n, kThreads), kThreads, 0, ctx->stream>>>(Z, bias, out, rows, cols, relu);
  return LaunchResult();
}

// stats: 2 floats the kernel adds to: [sum of the per-sample losses, number of correct argmaxes].
int mlp_softmax_xent(mlp_context* ctx, const float* logits, const int* labels, float* probs,
                     float* loss, float* stats, int rows, int cols) {
  if (ctx == nullptr || rows < 0 || cols <= 0) return hipErrorInvalidValue;
  if (rows == 0) return hipSuccess;
  ClearLastError();
  softmax_xent<<<Blocks(rows, kThreads), kThreads, 0, ctx->stream>>>(logits, labels, probs, loss,
                                                                     stats, rows, cols);
  return LaunchResult();
}

int mlp_softmax_xent_grad(mlp_context* ctx, const float* probs, const int* labels, float* dlogits,
                          int rows, int cols) {
  if (ctx == nullptr || rows < 0 || cols < 0) return hipErrorInvalidValue;
  const int n = rows * cols;
  if (n == 0) return hipSuccess;
  ClearLastError();
  softmax_xent_grad<<<Blocks(n, kThreads), kThreads, 0, ctx->stream>>>(probs, labels, dlogits, rows,
                                                                       cols);
  return LaunchResult();
}

int mlp_relu_backward(mlp_context* ctx, const float* dA, const float* A, float* dZ, int n) {
  if (ctx == nullptr || n < 0) return hipErrorInvalidValue;
  if (n == 0) return hipSuccess;
  ClearLastError();
  relu_backward<<<Blocks(n, kThreads), kThreads, 0, ctx->stream>>>(dA, A, dZ, n);
  return LaunchResult();
}

// out[c] = sum over rows of X[:, c] (the bias gradient).
int mlp_column_sum(mlp_context* ctx, const float* X, float* out, int rows, int cols) {
  if (ctx == nullptr || rows < 0 || cols < 0) return hipErrorInvalidValue;
  if (cols == 0) return hipSuccess;
  ClearLastError();
  column_sum<kSumBlock><<<cols, kSumBlock, 0, ctx->stream>>>(X, out, rows, cols);
  return LaunchResult();
}

// params -= lr * grads over n floats (train.py keeps all parameters in one buffer: one launch).
int mlp_sgd_update(mlp_context* ctx, float* params, const float* grads, float lr, int n) {
  if (ctx == nullptr || n < 0) return hipErrorInvalidValue;
  if (n == 0) return hipSuccess;
  ClearLastError();
  hipLaunchKernelGGL(sgd_update<float>, dim3(Blocks(n, kThreads)), dim3(kThreads), 0, ctx->stream,
                     params, grads, lr, n);
  return LaunchResult();
}

}  // extern "C"
