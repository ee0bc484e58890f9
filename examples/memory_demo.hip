// memory_demo: a first look at a remote GPU through hipr.
//
// An ordinary HIP program (nothing hipr-specific in it). Run it through the
// stub against a worker:
//
//   build/bin/hipr-worker --device sim --listen 127.0.0.1:18515 &
//   HIPR_SERVER=127.0.0.1:18515 LD_PRELOAD=build/lib/libhip_client_stub.so build/examples/memory_demo
//
// It prints the remote device, copies 64 MiB there and back (three times),
// memsets part of it, checks every byte, times the copies, and prints
// "demo OK". Any failure prints what went wrong and exits non-zero.
#include <hip/hip_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define HIP_CHECK(call)                                                                          \
  do {                                                                                           \
    hipError_t err_ = (call);                                                                    \
    if (err_ != hipSuccess) {                                                                    \
      std::fprintf(stderr, "demo FAILED: %s -> %s (%s)\n", #call, hipGetErrorName(err_),        \
                   hipGetErrorString(err_));                                                     \
      if (err_ == hipErrorNoDevice)                                                              \
        std::fprintf(stderr, "  (is a hipr-worker running, and does HIPR_SERVER point at it?)\n"); \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

namespace {

using Clock = std::chrono::steady_clock;

double MiBPerSecond(size_t bytes, Clock::duration took) {
  double s = std::chrono::duration<double>(took).count();
  return s > 0 ? static_cast<double>(bytes) / (1 << 20) / s : 0.0;
}

}  // namespace

int main() {
  int count = 0;
  HIP_CHECK(hipGetDeviceCount(&count));
  std::printf("hipr demo: %d device(s) visible\n", count);
  hipDeviceProp_t prop;
  HIP_CHECK(hipGetDeviceProperties(&prop, 0));
  std::printf("device 0: %s (%s), %.1f GiB of memory, %d compute units\n", prop.name, prop.gcnArchName,
              static_cast<double>(prop.totalGlobalMem) / (1u << 30), prop.multiProcessorCount);

  const size_t bytes = size_t{64} << 20;
  std::vector<unsigned char> host(bytes), back(bytes);
  for (size_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);

  void* device = nullptr;
  HIP_CHECK(hipMalloc(&device, bytes));
  std::printf("allocated 64 MiB at device address %p\n", device);

  // Three round trips: the first one also pays for first-touch page faults
  // on both sides, so the best of three is the steady-state rate.
  double best_h2d = 0, best_d2h = 0, first_h2d = 0, first_d2h = 0;
  for (int round = 0; round < 3; ++round) {
    auto t0 = Clock::now();
    HIP_CHECK(hipMemcpy(device, host.data(), bytes, hipMemcpyHostToDevice));
    auto t1 = Clock::now();
    HIP_CHECK(hipMemcpy(back.data(), device, bytes, hipMemcpyDeviceToHost));
    auto t2 = Clock::now();
    double h2d = MiBPerSecond(bytes, t1 - t0), d2h = MiBPerSecond(bytes, t2 - t1);
    if (round == 0) first_h2d = h2d, first_d2h = d2h;
    best_h2d = h2d > best_h2d ? h2d : best_h2d;
    best_d2h = d2h > best_d2h ? d2h : best_d2h;
    if (std::memcmp(host.data(), back.data(), bytes) != 0) {
      std::fprintf(stderr, "demo FAILED: the 64 MiB came back different (round trip %d)\n", round + 1);
      return 1;
    }
    std::memset(back.data(), 0, bytes);
  }
  std::printf("3 round trips of 64 MiB: all bytes identical\n");
  std::printf("host -> device: %8.1f MiB/s (best of 3; first %.1f MiB/s)\n", best_h2d, first_h2d);
  std::printf("device -> host: %8.1f MiB/s (best of 3; first %.1f MiB/s)\n", best_d2h, first_d2h);

  // Zero the middle 16 MiB on the device, read it all back, check each byte.
  const size_t offset = size_t{24} << 20, length = size_t{16} << 20;
  HIP_CHECK(hipMemset(static_cast<unsigned char*>(device) + offset, 0, length));
  HIP_CHECK(hipMemcpy(back.data(), device, bytes, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < bytes; ++i) {
    unsigned char want = (i >= offset && i < offset + length) ? 0 : host[i];
    if (back[i] != want) {
      std::fprintf(stderr, "demo FAILED: byte %zu is %u after the memset, expected %u\n", i, back[i], want);
      return 1;
    }
  }
  std::printf("memset of 16 MiB in the middle: checked\n");

  size_t free_bytes = 0, total_bytes = 0;
  HIP_CHECK(hipMemGetInfo(&free_bytes, &total_bytes));
  std::printf("device memory: %zu MiB free of %zu MiB\n", free_bytes >> 20, total_bytes >> 20);
  HIP_CHECK(hipFree(device));
  std::printf("demo OK\n");
  return 0;
}
