// api_table_runtime: one row per hand-written runtime function (devices,
// contexts, streams, events, errors, launches, functions, modules, graphs
// and the helpers answered in the client), against a sim worker with two
// devices; see api_table.h. Linked against the stub for the 6.x additions.
#include <hip/hip_runtime.h>

#include <cstdint>
#include <cstring>

#include "api_table.h"

// For the launch, function-attribute, occupancy and graph rows.
__global__ void Fill(int* out, int value, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = value;
}

namespace {

void GetDeviceCount() {
  int n = -1;
  HIP_OK(hipGetDeviceCount(&n));
  CHECK(n == 2, "%d devices", n);
  HIP_EXPECT(hipGetDeviceCount(nullptr), hipErrorInvalidValue);
}

void GetDevice() {
  int d = -1;
  HIP_OK(hipGetDevice(&d));
  CHECK(d == 0, "current device %d", d);
  HIP_EXPECT(hipGetDevice(nullptr), hipErrorInvalidValue);
}

void SetDevice() {
  HIP_OK(hipSetDevice(1));
  int d = -1;
  HIP_OK(hipGetDevice(&d));
  CHECK(d == 1, "current device %d after hipSetDevice(1)", d);
  HIP_EXPECT(hipSetDevice(2), hipErrorInvalidDevice);
  HIP_OK(hipGetDevice(&d));
  CHECK(d == 1, "a failed hipSetDevice changed the device to %d", d);
}

const e2e::Row kRows[] = {
    {"hipGetDeviceCount", GetDeviceCount},
    {"hipGetDevice", GetDevice},
    {"hipSetDevice", SetDevice},
};

}  // namespace

int main() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == 2, "expected a worker with two sim devices, got %d", count);
  return e2e::RunRows("api_table_runtime", kRows);
}
