// unreachable: no worker to talk to (HIPR_SERVER unset, or pointing at a
// closed port). Every call must fail fast with hipErrorNoDevice, the device
// count must read 0, and the stub must say why on stderr (the driver checks
// the wording).
#include "common.h"

int main() {
  const double t0 = e2e::NowSeconds();
  int count = -1;
  hipError_t e = hipGetDeviceCount(&count);
  const double first = e2e::NowSeconds() - t0;
  printf("E2E_FIRST_CALL %s count=%d after %.3f s\n", e2e::ErrName(e), count, first);
  fflush(stdout);
  CHECK(e == hipErrorNoDevice, "hipGetDeviceCount returned %s", e2e::ErrName(e));
  CHECK(count == 0, "hipGetDeviceCount set the count to %d", count);
  CHECK(first < 5.0, "hipGetDeviceCount took %.3f s", first);

  // Later calls fail the same way, at once.
  const double t1 = e2e::NowSeconds();
  void* p = nullptr;
  HIP_EXPECT(hipMalloc(&p, 4096), hipErrorNoDevice);
  count = -1;
  HIP_EXPECT(hipGetDeviceCount(&count), hipErrorNoDevice);
  CHECK(count == 0, "second hipGetDeviceCount set the count to %d", count);
  HIP_EXPECT(hipDeviceSynchronize(), hipErrorNoDevice);
  HIP_EXPECT(hipGetLastError(), hipErrorNoDevice);
  const double later = e2e::NowSeconds() - t1;
  CHECK(later < 1.0, "three calls on a dead session took %.3f s", later);
  printf("[unreachable] hipErrorNoDevice in %.3f s, later calls in %.3f s\n", first, later);
  return e2e::Finish("unreachable");
}
