// Test program: with no reachable worker (HIPR_SERVER unset, empty, or a
// closed port), HIP calls return hipErrorNoDevice quickly and consistently,
// and no real HIP/HSA library is mapped. Linked against the stub, so its
// DT_NEEDED libamdhip64.so.5 is satisfied by the drop-in symlink (or by the
// preloaded stub under LD_PRELOAD).
#include <hip/hip_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

namespace {

int failures = 0;

void Check(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  const auto start = std::chrono::steady_clock::now();
  int count = -1;
  Check(hipGetDeviceCount(&count) == hipErrorNoDevice, "hipGetDeviceCount returns hipErrorNoDevice");
  Check(count == 0, "and sets *count to 0");
  Check(hipGetLastError() == hipErrorNoDevice, "hipGetLastError reports it");
  Check(hipGetLastError() == hipSuccess, "and resets it");
  void* p = reinterpret_cast<void*>(1);
  Check(hipMalloc(&p, 1 << 20) == hipErrorNoDevice, "hipMalloc returns hipErrorNoDevice");
  Check(p == reinterpret_cast<void*>(1), "and does not write its output");
  Check(hipDeviceSynchronize() == hipErrorNoDevice, "hipDeviceSynchronize returns hipErrorNoDevice");
  hipStream_t s = nullptr;
  Check(hipStreamCreate(&s) == hipErrorNoDevice, "hipStreamCreate returns hipErrorNoDevice");
  Check(hipSetDevice(0) == hipErrorNoDevice, "hipSetDevice returns hipErrorNoDevice");
  Check(std::strcmp(hipGetErrorName(hipErrorNoDevice), "hipErrorNoDevice") == 0,
        "hipGetErrorName works without a worker");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("      %.3f s for all calls\n", seconds);
  Check(seconds < 5.0, "no call hangs (one connection attempt at most)");

  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool stub = false;
  bool real = false;
  while (std::getline(maps, line)) {
    if (line.find("libhip_client_stub.so") != std::string::npos) stub = true;
    if (line.find("libhsa-runtime") != std::string::npos || line.find("libamdhip64") != std::string::npos)
      real = true;
  }
  Check(stub, "the hipr stub is mapped");
  Check(!real, "no real libamdhip64 / libhsa-runtime is mapped");
  return failures == 0 ? 0 : 1;
}
