// Copies whose hipMemcpyKind does not match the pointers, in every family:
// the bytes go where the pointers say, byte-exact, as ROCm's runtime moves
// them (client_stub/copies/copy_kind.h); and the mismatches ROCm still refuses are
// refused with its errors, nothing moved.
#include "common.h"

constexpr size_t kN = 3 * 4096 + 77;

__device__ uint8_t g_bytes[kN];

// Never launched: a twin (which places g_bytes on the sim) needs a kernel.
__global__ void Touch(uint8_t* p) { p[0] = g_bytes[0]; }

namespace {

constexpr uint8_t kUntouched = 0xee;

std::vector<uint8_t> Pattern(uint64_t seed) {
  std::vector<uint8_t> v(kN);
  e2e::FillPattern(v.data(), kN, seed);
  return v;
}

std::vector<uint8_t> Read(const void* d, size_t n = kN) {
  std::vector<uint8_t> v(n);
  HIP_OK(hipMemcpy(v.data(), d, n, hipMemcpyDefault));
  return v;
}

void* Dev() {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, kN));
  HIP_OK(hipMemset(d, kUntouched, kN));
  return d;
}

void Same(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, const char* what) {
  CHECK(got.size() == want.size() && memcmp(got.data(), want.data(), want.size()) == 0, "%s: bytes differ", what);
}

// hipMemcpy, hipMemcpyAsync, hipMemcpyWithStream, hipMemcpyHtoD/DtoH/DtoD:
// every wrong kind between device and host memory moves the bytes.
void OneDimensional() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  const hipMemcpyKind wrong_up[] = {hipMemcpyHostToHost, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice};
  const hipMemcpyKind wrong_down[] = {hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToDevice};
  int seed = 1;
  for (hipMemcpyKind k : wrong_up) {
    void* d = Dev();
    std::vector<uint8_t> src = Pattern(seed++);
    HIP_OK(hipMemcpy(d, src.data(), kN, k));
    Same(Read(d), src, "hipMemcpy up with a wrong kind");
    src = Pattern(seed++);
    HIP_OK(hipMemcpyAsync(d, src.data(), kN, k, s));
    HIP_OK(hipStreamSynchronize(s));
    Same(Read(d), src, "hipMemcpyAsync up with a wrong kind");
    src = Pattern(seed++);
    HIP_OK(hipMemcpyWithStream(d, src.data(), kN, k, s));
    Same(Read(d), src, "hipMemcpyWithStream up with a wrong kind");
    HIP_OK(hipFree(d));
  }
  for (hipMemcpyKind k : wrong_down) {
    void* d = Dev();
    std::vector<uint8_t> want = Pattern(seed++);
    HIP_OK(hipMemcpy(d, want.data(), kN, hipMemcpyHostToDevice));
    std::vector<uint8_t> got(kN, kUntouched);
    HIP_OK(hipMemcpy(got.data(), d, kN, k));
    Same(got, want, "hipMemcpy down with a wrong kind");
    std::fill(got.begin(), got.end(), kUntouched);
    HIP_OK(hipMemcpyAsync(got.data(), d, kN, k, s));
    HIP_OK(hipStreamSynchronize(s));
    Same(got, want, "hipMemcpyAsync down with a wrong kind");
    HIP_OK(hipFree(d));
  }
  // Device to device named host to host.
  void* a = Dev();
  void* b = Dev();
  std::vector<uint8_t> want = Pattern(seed++);
  HIP_OK(hipMemcpy(a, want.data(), kN, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpy(b, a, kN, hipMemcpyHostToHost));
  Same(Read(b), want, "hipMemcpy device to device named host to host");
  // The driver forms: their fixed kind is wrong for these pointers.
  std::vector<uint8_t> src = Pattern(seed++);
  HIP_OK(hipMemcpyDtoH(a, src.data(), kN));  // Host to device.
  Same(Read(a), src, "hipMemcpyDtoH from host memory into device memory");
  std::vector<uint8_t> got(kN, kUntouched);
  HIP_OK(hipMemcpyHtoD(got.data(), a, kN));  // Device to host.
  Same(got, src, "hipMemcpyHtoD from device memory into host memory");
  std::fill(got.begin(), got.end(), kUntouched);
  HIP_OK(hipMemcpyDtoD(got.data(), b, kN));  // Device to host.
  Same(got, want, "hipMemcpyDtoD into host memory");
  // Still refused: two pageable buffers under a device kind (hipErrorInvalidValue),
  // a kind out of range (hipErrorInvalidMemcpyDirection); nothing moves.
  std::vector<uint8_t> h1 = Pattern(seed++), h2(kN, kUntouched);
  for (hipMemcpyKind k : {hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice})
    HIP_EXPECT(hipMemcpy(h2.data(), h1.data(), kN, k), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpyHtoD(h2.data(), h1.data(), kN), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy(a, h1.data(), kN, static_cast<hipMemcpyKind>(5)), hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(hipMemcpyAsync(a, h1.data(), 0, static_cast<hipMemcpyKind>(-1), s), hipErrorInvalidMemcpyDirection);
  HIP_OK(hipMemcpy(a, h1.data(), 0, static_cast<hipMemcpyKind>(5)));  // Size 0 first: success, as clr.
  CHECK_BYTES_EQUAL(h2.data(), kN, kUntouched, "destination of refused host-to-host copies");
  Same(Read(a), src, "device memory after refused copies");
  // hipMemcpyDeviceToDeviceNoCU (ROCm 6.1's 1024) is a valid kind.
  HIP_OK(hipMemcpy(b, a, kN, static_cast<hipMemcpyKind>(1024)));
  Same(Read(b), src, "hipMemcpyDeviceToDeviceNoCU");
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
  HIP_OK(hipStreamDestroy(s));
}

// 2-D and 3-D: a side the kind calls host memory that is device memory is
// copied as device memory; a side it calls device memory must be device (or
// pinned) memory.
void TwoAndThreeDimensional() {
  const size_t w = 96, h = 40, pitch_h = 128;
  void* d = nullptr;
  size_t pitch = 0;
  HIP_OK(hipMallocPitch(&d, &pitch, w, h));
  std::vector<uint8_t> src(pitch_h * h);
  e2e::FillPattern(src.data(), src.size(), 31);
  // Host to device called host to host.
  HIP_OK(hipMemcpy2D(d, pitch, src.data(), pitch_h, w, h, hipMemcpyHostToHost));
  std::vector<uint8_t> back(pitch_h * h, kUntouched);
  // Device to host called host to device: the pageable destination is called
  // device memory, which a 2-D copy refuses; called host to host, it moves.
  HIP_EXPECT(hipMemcpy2D(back.data(), pitch_h, d, pitch, w, h, hipMemcpyHostToDevice), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(back.data(), back.size(), kUntouched, "destination of a refused hipMemcpy2D");
  HIP_OK(hipMemcpy2D(back.data(), pitch_h, d, pitch, w, h, hipMemcpyHostToHost));
  for (size_t y = 0; y < h; ++y)
    CHECK(memcmp(back.data() + y * pitch_h, src.data() + y * pitch_h, w) == 0, "hipMemcpy2D row %zu", y);
  // Pinned memory is memory the runtime knows: it may be called device memory.
  void* pinned = nullptr;
  HIP_OK(hipHostMalloc(&pinned, pitch_h * h));
  memset(pinned, kUntouched, pitch_h * h);
  HIP_OK(hipMemcpy2D(pinned, pitch_h, d, pitch, w, h, hipMemcpyDeviceToDevice));
  for (size_t y = 0; y < h; ++y)
    CHECK(memcmp(static_cast<uint8_t*>(pinned) + y * pitch_h, src.data() + y * pitch_h, w) == 0,
          "hipMemcpy2D into pinned memory called device memory, row %zu", y);
  // Pageable memory called device memory: refused, nothing moved.
  std::vector<uint8_t> keep(pitch_h * h, kUntouched);
  HIP_EXPECT(hipMemcpy2D(keep.data(), pitch_h, d, pitch, w, h, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy2D(d, pitch, keep.data(), pitch_h, w, h, hipMemcpyDeviceToHost), hipErrorInvalidValue);
  HIP_EXPECT(hipMemcpy2D(d, pitch, keep.data(), pitch_h, w, h, static_cast<hipMemcpyKind>(9)),
             hipErrorInvalidMemcpyDirection);
  CHECK_BYTES_EQUAL(keep.data(), keep.size(), kUntouched, "destination of a refused hipMemcpy2D");

  // 3-D: two slices, device to device called host to host.
  const size_t depth = 2;
  hipPitchedPtr a{}, b{};
  HIP_OK(hipMalloc3D(&a, make_hipExtent(w, h, depth)));
  HIP_OK(hipMalloc3D(&b, make_hipExtent(w, h, depth)));
  std::vector<uint8_t> box(w * h * depth);
  e2e::FillPattern(box.data(), box.size(), 32);
  hipMemcpy3DParms up{};
  up.srcPtr = make_hipPitchedPtr(box.data(), w, w, h);
  up.dstPtr = a;
  up.extent = make_hipExtent(w, h, depth);
  up.kind = hipMemcpyDeviceToDevice;  // The host side is refused under this kind...
  HIP_EXPECT(hipMemcpy3D(&up), hipErrorInvalidValue);
  up.kind = hipMemcpyHostToHost;  // ... and copied under this one (the device side upgraded).
  HIP_OK(hipMemcpy3D(&up));
  hipMemcpy3DParms across{};
  across.srcPtr = a;
  across.dstPtr = b;
  across.extent = make_hipExtent(w, h, depth);
  across.kind = hipMemcpyHostToHost;
  HIP_OK(hipMemcpy3D(&across));
  std::vector<uint8_t> out(w * h * depth, kUntouched);
  hipMemcpy3DParms down{};
  down.srcPtr = b;
  down.dstPtr = make_hipPitchedPtr(out.data(), w, w, h);
  down.extent = make_hipExtent(w, h, depth);
  down.kind = hipMemcpyHostToDevice;  // Calls the pageable destination device memory: refused.
  HIP_EXPECT(hipMemcpy3D(&down), hipErrorInvalidValue);
  CHECK_BYTES_EQUAL(out.data(), out.size(), kUntouched, "destination of a refused hipMemcpy3D");
  down.kind = hipMemcpyHostToHost;
  HIP_OK(hipMemcpy3D(&down));
  CHECK(memcmp(out.data(), box.data(), box.size()) == 0, "hipMemcpy3D with wrong kinds");
  HIP_OK(hipFree(a.ptr));
  HIP_OK(hipFree(b.ptr));
  HIP_OK(hipHostFree(pinned));
  HIP_OK(hipFree(d));
}

// Symbols: the kinds ROCm 5.3+ accepts, with pointers that do not match them.
void Symbols() {
  std::vector<uint8_t> src = Pattern(41);
  HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(g_bytes), src.data(), kN, 0, hipMemcpyDeviceToDevice));
  std::vector<uint8_t> got(kN, kUntouched);
  HIP_OK(hipMemcpyFromSymbol(got.data(), HIP_SYMBOL(g_bytes), kN, 0, hipMemcpyDeviceToDevice));
  Same(got, src, "symbol copies from and to host memory called device memory");
  void* d = Dev();
  HIP_OK(hipMemcpyToSymbol(HIP_SYMBOL(g_bytes), d, kN, 0, hipMemcpyHostToDevice));  // From device memory.
  HIP_OK(hipMemcpyFromSymbol(got.data(), HIP_SYMBOL(g_bytes), kN, 0, hipMemcpyDeviceToHost));
  CHECK_BYTES_EQUAL(got.data(), kN, kUntouched, "hipMemcpyToSymbol from device memory called host memory");
  HIP_EXPECT(hipMemcpyToSymbol(HIP_SYMBOL(g_bytes), src.data(), kN, 0, hipMemcpyDefault),
             hipErrorInvalidMemcpyDirection);
  HIP_EXPECT(hipMemcpyFromSymbol(got.data(), HIP_SYMBOL(g_bytes), kN, 0, hipMemcpyHostToDevice),
             hipErrorInvalidMemcpyDirection);
  HIP_OK(hipFree(d));
}

// Peer copies: the device numbers are only range-checked.
void Peer() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count >= 2, "the scenario runs two sim devices (got %d)", count);
  void* a = Dev();
  HIP_OK(hipSetDevice(1));
  void* b = Dev();
  HIP_OK(hipSetDevice(0));
  std::vector<uint8_t> src = Pattern(51);
  HIP_OK(hipMemcpy(a, src.data(), kN, hipMemcpyHostToDevice));
  HIP_OK(hipMemcpyPeer(b, 0, a, 1, kN));  // The numbers are the wrong way round.
  Same(Read(b), src, "hipMemcpyPeer with swapped device numbers");
  std::vector<uint8_t> got(kN, kUntouched);
  HIP_OK(hipMemcpyPeer(got.data(), 1, b, 0, kN));  // Into host memory.
  Same(got, src, "hipMemcpyPeer into host memory");
  HIP_EXPECT(hipMemcpyPeer(b, 5, a, 0, kN), hipErrorInvalidDevice);
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

}  // namespace

int main() {
  OneDimensional();
  TwoAndThreeDimensional();
  Symbols();
  Peer();
  return e2e::Finish("copy_kinds");
}
