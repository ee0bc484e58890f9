// host_only: HIP calls and no kernels, so no device code to twin.
#include <hip/hip_runtime.h>

#include <cstdio>
#include <cstring>

int main() {
  char in[64], out[64] = {};
  std::memset(in, 0x5a, sizeof in);
  void* d = nullptr;
  if (hipMalloc(&d, sizeof in) != hipSuccess || hipMemcpy(d, in, sizeof in, hipMemcpyHostToDevice) != hipSuccess ||
      hipMemcpy(out, d, sizeof out, hipMemcpyDeviceToHost) != hipSuccess || hipFree(d) != hipSuccess) {
    std::fprintf(stderr, "FAIL: a HIP call failed\n");
    return 1;
  }
  if (std::memcmp(in, out, sizeof in) != 0) {
    std::fprintf(stderr, "FAIL: the bytes came back different\n");
    return 1;
  }
  std::printf("host_only: PASS\n");
  return 0;
}
