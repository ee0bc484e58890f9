// burst: one of many clients started at once (as a job's ranks start). It
// allocates, fills and reads back device memory, holds its session for
// HOLD_MS milliseconds (so that the worker's slots are taken while others
// arrive), and frees. run_e2e.py's burst scenario starts 64 of them.
//
// Usage: burst HOLD_MS
#include <cstdlib>
#include <vector>

#include "common.h"

int main(int argc, char** argv) {
  CHECK(argc == 2, "usage: burst HOLD_MS");
  const int hold_ms = atoi(argv[1]);
  constexpr size_t kBytes = 1 << 20;
  const int value = static_cast<int>(getpid() & 0x7f);
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, kBytes));
  HIP_OK(hipMemset(p, value, kBytes));
  std::vector<uint8_t> got(kBytes);
  HIP_OK(hipMemcpy(got.data(), p, kBytes, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < kBytes; ++i) CHECK(got[i] == value, "byte %zu is %d, expected %d", i, got[i], value);
  usleep(static_cast<useconds_t>(hold_ms) * 1000);
  HIP_OK(hipFree(p));
  printf("burst: served\n");
  return e2e::Finish("burst");
}
