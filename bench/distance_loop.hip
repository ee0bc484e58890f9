// hipr-bench-distance-loop: a training loop shaped like a framework's, for
// measuring hipr at a distance (bench/run-distance-bench). Per step: a
// blocking copy of the input batch from pageable memory, eight kernel
// launches (a forward pass, a loss, a backward pass and an update on a
// small linear model), a memset of the gradient, a scratch buffer allocated
// and freed (a caching allocator's churn), an event recorded, and the loss
// read back into host memory: the one result the host observes per step.
//
//   hipr-bench-distance-loop [STEPS]     (default 20)
//
// Prints "steps: N", "host observations: N" (the loss reads: what the
// program itself needs answered), the final loss, and "OK" when every
// step's loss matches a host computation of the same float arithmetic
// (relative 1e-4); exits 1 otherwise. Built with hipcc; on a sim worker the
// kernels run through their twin.
#include <hip/hip_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kFeatures = 64;
constexpr int kBatch = 256;
constexpr float kRate = 0.05f;

void Check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    std::fprintf(stderr, "hipr-bench-distance-loop: %s: %s\n", what, hipGetErrorString(e));
    std::exit(1);
  }
}

}  // namespace

// pred[i] = sum_j x[i][j] * w[j]
__global__ void forward(const float* x, const float* w, float* pred) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= kBatch) return;
  float s = 0;
  for (int j = 0; j < kFeatures; ++j) s += x[i * kFeatures + j] * w[j];
  pred[i] = s;
}

// err[i] = pred[i] - y[i]
__global__ void residual(const float* pred, const float* y, float* err) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kBatch) err[i] = pred[i] - y[i];
}

// sq[i] = err[i]^2
__global__ void square(const float* err, float* sq) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kBatch) sq[i] = err[i] * err[i];
}

// *loss = mean(sq), one thread, in index order (reproducible on the host).
__global__ void mean(const float* sq, float* loss) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  float s = 0;
  for (int i = 0; i < kBatch; ++i) s += sq[i];
  *loss = s / kBatch;
}

// grad[j] += 2/B * sum_i err[i] * x[i][j]
__global__ void gradient(const float* x, const float* err, float* grad) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= kFeatures) return;
  float s = 0;
  for (int i = 0; i < kBatch; ++i) s += err[i] * x[i * kFeatures + j];
  grad[j] += 2.0f / kBatch * s;
}

// A clip at +-1 (as frameworks clip gradients), into scratch.
__global__ void clip(const float* grad, float* scratch) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < kFeatures) scratch[j] = fminf(1.0f, fmaxf(-1.0f, grad[j]));
}

// w[j] -= rate * scratch[j]
__global__ void update(float* w, const float* scratch) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < kFeatures) w[j] -= kRate * scratch[j];
}

// step[0] += 1: the optimizer's step counter.
__global__ void count(float* step) {
  if (blockIdx.x == 0 && threadIdx.x == 0) step[0] += 1.0f;
}

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  if (steps <= 0) {
    std::fprintf(stderr, "usage: hipr-bench-distance-loop [STEPS > 0]\n");
    return 2;
  }
  // A fixed target model; each step's batch is a different deterministic draw.
  std::vector<float> target(kFeatures), w(kFeatures, 0.0f);
  for (int j = 0; j < kFeatures; ++j) target[j] = std::sin(0.37f * j);
  auto batch = [&](int step, std::vector<float>* x, std::vector<float>* y) {
    x->resize(kBatch * kFeatures);
    y->assign(kBatch, 0.0f);
    for (int i = 0; i < kBatch; ++i) {
      for (int j = 0; j < kFeatures; ++j) {
        (*x)[i * kFeatures + j] = std::cos(0.013f * (step * 7919 + i * 131 + j * 17));
        (*y)[i] += (*x)[i * kFeatures + j] * target[j];
      }
    }
  };

  float *dx, *dy, *dw, *dpred, *derr, *dsq, *dloss, *dgrad, *dstep;
  Check(hipMalloc(&dx, sizeof(float) * kBatch * kFeatures), "hipMalloc x");
  Check(hipMalloc(&dy, sizeof(float) * kBatch), "hipMalloc y");
  Check(hipMalloc(&dw, sizeof(float) * kFeatures), "hipMalloc w");
  Check(hipMalloc(&dpred, sizeof(float) * kBatch), "hipMalloc pred");
  Check(hipMalloc(&derr, sizeof(float) * kBatch), "hipMalloc err");
  Check(hipMalloc(&dsq, sizeof(float) * kBatch), "hipMalloc sq");
  Check(hipMalloc(&dloss, sizeof(float)), "hipMalloc loss");
  Check(hipMalloc(&dgrad, sizeof(float) * kFeatures), "hipMalloc grad");
  Check(hipMalloc(&dstep, sizeof(float)), "hipMalloc step");
  Check(hipMemset(dw, 0, sizeof(float) * kFeatures), "hipMemset w");
  Check(hipMemset(dstep, 0, sizeof(float)), "hipMemset step");
  hipEvent_t done;
  Check(hipEventCreate(&done), "hipEventCreate");

  const dim3 rows((kBatch + 63) / 64), cols((kFeatures + 63) / 64), block(64);
  std::vector<float> x, y;
  int observations = 0;
  float loss = 0;
  for (int step = 0; step < steps; ++step) {
    batch(step, &x, &y);
    Check(hipMemcpy(dx, x.data(), sizeof(float) * x.size(), hipMemcpyHostToDevice), "hipMemcpy x");
    Check(hipMemcpy(dy, y.data(), sizeof(float) * y.size(), hipMemcpyHostToDevice), "hipMemcpy y");
    float* scratch = nullptr;
    Check(hipMalloc(&scratch, sizeof(float) * kFeatures), "hipMalloc scratch");
    Check(hipMemsetAsync(dgrad, 0, sizeof(float) * kFeatures, nullptr), "hipMemsetAsync grad");
    hipLaunchKernelGGL(forward, rows, block, 0, nullptr, dx, dw, dpred);
    hipLaunchKernelGGL(residual, rows, block, 0, nullptr, dpred, dy, derr);
    hipLaunchKernelGGL(square, rows, block, 0, nullptr, derr, dsq);
    hipLaunchKernelGGL(mean, dim3(1), dim3(1), 0, nullptr, dsq, dloss);
    hipLaunchKernelGGL(gradient, cols, block, 0, nullptr, dx, derr, dgrad);
    hipLaunchKernelGGL(clip, cols, block, 0, nullptr, dgrad, scratch);
    hipLaunchKernelGGL(update, cols, block, 0, nullptr, dw, scratch);
    hipLaunchKernelGGL(count, dim3(1), dim3(1), 0, nullptr, dstep);
    Check(hipGetLastError(), "launch");
    Check(hipEventRecord(done, nullptr), "hipEventRecord");
    Check(hipMemcpy(&loss, dloss, sizeof loss, hipMemcpyDeviceToHost), "hipMemcpy loss");
    ++observations;
    Check(hipFree(scratch), "hipFree scratch");

    // The same float arithmetic on the host, in the same order.
    std::vector<float> err(kBatch), grad(kFeatures, 0.0f);
    float s = 0;
    for (int i = 0; i < kBatch; ++i) {
      float p = 0;
      for (int j = 0; j < kFeatures; ++j) p += x[i * kFeatures + j] * w[j];
      err[i] = p - y[i];
      s += err[i] * err[i];
    }
    const float want = s / kBatch;
    if (std::fabs(loss - want) > 1e-4f * std::fmax(1.0f, std::fabs(want))) {
      std::fprintf(stderr, "hipr-bench-distance-loop: step %d: loss %.7g, the host computes %.7g\n", step, loss, want);
      return 1;
    }
    for (int j = 0; j < kFeatures; ++j) {
      float g = 0;
      for (int i = 0; i < kBatch; ++i) g += err[i] * x[i * kFeatures + j];
      grad[j] += 2.0f / kBatch * g;
      w[j] -= kRate * std::fmin(1.0f, std::fmax(-1.0f, grad[j]));
    }
  }
  Check(hipEventSynchronize(done), "hipEventSynchronize");
  float counted = 0;
  Check(hipMemcpy(&counted, dstep, sizeof counted, hipMemcpyDeviceToHost), "hipMemcpy step");
  ++observations;
  if (counted != static_cast<float>(steps)) {
    std::fprintf(stderr, "hipr-bench-distance-loop: the device counted %g steps of %d\n", counted, steps);
    return 1;
  }
  for (float* p : {dx, dy, dw, dpred, derr, dsq, dloss, dgrad, dstep}) Check(hipFree(p), "hipFree");
  Check(hipEventDestroy(done), "hipEventDestroy");
  std::printf("steps: %d\nhost observations: %d\nfinal loss: %.6g\nOK\n", steps, observations, loss);
  return 0;
}
