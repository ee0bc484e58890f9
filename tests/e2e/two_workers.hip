// One program, the devices of several workers (HIPR_SERVER=a:p,b:q; run_e2e.py
// scenario two_workers): kernels on every device, peer copies between every
// pair in both directions (blocking, async, and hipMemcpy's device-to-device
// kind), a stream of one device waiting for an event of another, and what
// peer access the devices report.
//
//   two_workers --devices N [--peers i-j,...] [--lose D]
//
// --peers: the pairs that can access each other's memory (devices of one
// worker); every other pair must answer no, and hipDeviceEnablePeerAccess
// must refuse it. --lose D: after the first round the program pauses
// (E2E_LOSE) while the driver kills D's worker; then every call on D (and on
// the devices --peers pairs with it) must fail with hipErrorNoDevice and
// every other device must go on working.
#include "common.h"

namespace {

__global__ void Fill(int* p, int value, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = value + static_cast<int>(i % 1000);
}

__global__ void AddOne(int* p, size_t n) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] += 1;
}

constexpr size_t kInts = 1 << 16;
constexpr size_t kBytes = kInts * sizeof(int);
constexpr size_t kBigBytes = size_t{72} << 20;  // More than one 64 MiB piece.

unsigned Blocks(size_t n) { return static_cast<unsigned>((n + 255) / 256); }

// Expects buffer `p` (device memory of `device`) to hold Fill(value) + add.
void ExpectFilled(int device, const int* p, int value, int add, const char* what) {
  std::vector<int> host(kInts);
  HIP_OK(hipSetDevice(device));
  HIP_OK(hipMemcpy(host.data(), p, kBytes, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < kInts; ++i)
    CHECK(host[i] == value + static_cast<int>(i % 1000) + add, "%s: element %zu is %d, expected %d", what, i, host[i],
          value + static_cast<int>(i % 1000) + add);
}

bool Listed(const std::vector<std::pair<int, int>>& peers, int a, int b) {
  for (const auto& [x, y] : peers)
    if ((x == a && y == b) || (x == b && y == a)) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  int devices = 0;
  int lose = -1;
  std::vector<std::pair<int, int>> peers;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--devices") == 0) devices = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--lose") == 0) lose = atoi(argv[i + 1]);
    if (strcmp(argv[i], "--peers") == 0)
      for (const char* p = argv[i + 1]; *p != '\0';) {
        int a = 0, b = 0, used = 0;
        CHECK(sscanf(p, "%d-%d%n", &a, &b, &used) == 2, "bad --peers %s", argv[i + 1]);
        peers.emplace_back(a, b);
        p += used;
        if (*p == ',') ++p;
      }
  }
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == devices, "hipGetDeviceCount: %d devices, expected %d", count, devices);
  printf("devices: %d\n", count);

  // Peer access: only devices of one worker.
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      int can = -1;
      HIP_OK(hipDeviceCanAccessPeer(&can, a, b));
      CHECK(can == (Listed(peers, a, b) ? 1 : 0), "hipDeviceCanAccessPeer(%d, %d) = %d", a, b, can);
      HIP_OK(hipSetDevice(a));
      if (can == 0) {
        HIP_EXPECT(hipDeviceEnablePeerAccess(b, 0), hipErrorInvalidDevice);
      } else {
        HIP_OK(hipDeviceEnablePeerAccess(b, 0));
        HIP_OK(hipDeviceDisablePeerAccess(b));
      }
    }
  printf("peer access: only within a worker\n");

  // A buffer per device, filled by a kernel there and raised by one more.
  std::vector<int*> buf(count), copy(count);
  std::vector<hipStream_t> streams(count);
  for (int d = 0; d < count; ++d) {
    HIP_OK(hipSetDevice(d));
    HIP_OK(hipMalloc(&buf[d], kBytes));
    HIP_OK(hipMalloc(&copy[d], kBytes));
    HIP_OK(hipStreamCreate(&streams[d]));
    Fill<<<Blocks(kInts), 256, 0, streams[d]>>>(buf[d], 100 * (d + 1), kInts);
    AddOne<<<Blocks(kInts), 256, 0, streams[d]>>>(buf[d], kInts);
  }
  for (int d = 0; d < count; ++d) {
    HIP_OK(hipSetDevice(d));
    HIP_OK(hipStreamSynchronize(streams[d]));
    ExpectFilled(d, buf[d], 100 * (d + 1), 1, "a kernel's result");
  }
  printf("kernels: ran on every device\n");

  // Peer copies between every pair, both directions, three ways.
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      HIP_OK(hipSetDevice(a));
      HIP_OK(hipMemset(copy[b], 0, kBytes));
      HIP_OK(hipMemcpyPeer(copy[b], b, buf[a], a, kBytes));
      ExpectFilled(b, copy[b], 100 * (a + 1), 1, "hipMemcpyPeer");
      // Async on the destination's stream, and a kernel after it there.
      HIP_OK(hipSetDevice(b));
      HIP_OK(hipMemcpyPeerAsync(copy[b], b, buf[a], a, kBytes, streams[b]));
      AddOne<<<Blocks(kInts), 256, 0, streams[b]>>>(copy[b], kInts);
      HIP_OK(hipStreamSynchronize(streams[b]));
      ExpectFilled(b, copy[b], 100 * (a + 1), 2, "hipMemcpyPeerAsync, then a kernel on its stream");
      // hipMemcpy's device-to-device kind, from the source's device.
      HIP_OK(hipSetDevice(a));
      HIP_OK(hipMemcpy(copy[b], buf[a], kBytes, hipMemcpyDeviceToDevice));
      ExpectFilled(b, copy[b], 100 * (a + 1), 1, "hipMemcpy device to device");
    }
  printf("peer copies: every pair, both directions\n");

  // A stream of the last device waits for an event of the first: the
  // kernel there runs after the first device's kernel and copy.
  if (count > 1) {
    const int first = 0, last = count - 1;
    hipEvent_t done;
    HIP_OK(hipSetDevice(first));
    HIP_OK(hipEventCreate(&done));
    Fill<<<Blocks(kInts), 256, 0, streams[first]>>>(buf[first], 5000, kInts);
    HIP_OK(hipEventRecord(done, streams[first]));
    HIP_OK(hipSetDevice(last));
    HIP_OK(hipStreamWaitEvent(streams[last], done, 0));
    HIP_OK(hipMemcpyAsync(copy[last], buf[first], kBytes, hipMemcpyDefault, streams[last]));
    AddOne<<<Blocks(kInts), 256, 0, streams[last]>>>(copy[last], kInts);
    HIP_OK(hipStreamSynchronize(streams[last]));
    ExpectFilled(last, copy[last], 5000, 1, "work ordered after another device's event");
    HIP_OK(hipEventDestroy(done));
    printf("streams: device %d waited for an event of device %d\n", last, first);

    // A large copy, byte for byte.
    std::vector<uint8_t> host(kBigBytes), back(kBigBytes);
    e2e::FillPattern(host.data(), kBigBytes, 39);
    void* big_first = nullptr;
    void* big_last = nullptr;
    HIP_OK(hipSetDevice(first));
    HIP_OK(hipMalloc(&big_first, kBigBytes));
    HIP_OK(hipMemcpy(big_first, host.data(), kBigBytes, hipMemcpyHostToDevice));
    HIP_OK(hipSetDevice(last));
    HIP_OK(hipMalloc(&big_last, kBigBytes));
    HIP_OK(hipMemcpyPeer(big_last, last, big_first, first, kBigBytes));
    HIP_OK(hipMemcpy(back.data(), big_last, kBigBytes, hipMemcpyDeviceToHost));
    CHECK_PATTERN(back.data(), kBigBytes, 39, "a 72 MiB peer copy");
    HIP_OK(hipFree(big_last));
    HIP_OK(hipSetDevice(first));
    HIP_OK(hipFree(big_first));
    printf("large copy: 72 MiB from device %d to device %d\n", first, last);
  }

  if (lose >= 0) {
    e2e::Handshake("LOSE");  // The driver kills that device's worker.
    // A read of the device's memory is the first call that must reach its
    // worker (a small hipMalloc may be served from memory leased before).
    std::vector<int> host(kInts);
    int* p = nullptr;
    HIP_OK(hipSetDevice(lose));
    HIP_EXPECT(hipMemcpy(host.data(), buf[lose], kBytes, hipMemcpyDeviceToHost), hipErrorNoDevice);
    HIP_EXPECT(hipMalloc(&p, kBytes), hipErrorNoDevice);
    HIP_EXPECT(hipMemset(buf[lose], 0, kBytes), hipErrorNoDevice);
    HIP_EXPECT(hipDeviceSynchronize(), hipErrorNoDevice);
    for (int d = 0; d < count; ++d) {
      if (d == lose) continue;
      HIP_OK(hipSetDevice(d));
      if (Listed(peers, d, lose)) {  // The same worker's.
        HIP_EXPECT(hipMemcpy(host.data(), buf[d], kBytes, hipMemcpyDeviceToHost), hipErrorNoDevice);
        continue;
      }
      AddOne<<<Blocks(kInts), 256, 0, streams[d]>>>(buf[d], kInts);
      HIP_OK(hipStreamSynchronize(streams[d]));
      // Device 0's buffer was filled again (5000) before its event.
      const bool refilled = d == 0 && count > 1;
      ExpectFilled(d, buf[d], refilled ? 5000 : 100 * (d + 1), refilled ? 1 : 2, "a device of a worker still there");
    }
    printf("lost: device %d and its worker's others fail with hipErrorNoDevice, the rest work\n", lose);
    printf("E2E_PASS two_workers\n");
    return 0;
  }
  for (int d = 0; d < count; ++d) {
    HIP_OK(hipSetDevice(d));
    HIP_OK(hipFree(buf[d]));
    HIP_OK(hipFree(copy[d]));
    HIP_OK(hipStreamDestroy(streams[d]));
  }
  return e2e::Finish("two_workers");
}
