// rocm_libs: dlopens Debian's real ROCm libraries, librocsparse.so.0 and
// librocrand.so.1 (built by AMD's toolchain, thousands of kernels, DT_NEEDED
// libamdhip64.so.5), through the stub: their constructors register every
// kernel, which must cost little and ship nothing. Then one rocrand call
// makes the first use of one module: the stub ships exactly that code
// object, and, with no twin of rocrand's kernels on the sim worker, the
// launch fails naming the kernel (the driver checks the client's log and
// the worker's).
//
// The rocrand C API is declared here from its documented signatures (no
// -dev package needed): rocrand_create_generator, rocrand_generate_uniform,
// rocrand_destroy_generator.
#include <vector>

#include "common.h"

namespace {

using rocrand_generator = void*;
using CreateFn = int (*)(rocrand_generator*, int);
using UniformFn = int (*)(rocrand_generator, float*, size_t);
using DestroyFn = int (*)(rocrand_generator);
constexpr int kRngPseudoXorwow = 401;
constexpr int kStatusSuccess = 0;

void* Open(const char* name) {
  double t0 = e2e::NowSeconds();
  void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  CHECK(h != nullptr, "dlopen(%s): %s (install librocsparse0 and librocrand1)", name, dlerror());
  printf("[rocm_libs] dlopen(%s) took %.3f s\n", name, e2e::NowSeconds() - t0);
  return h;
}

}  // namespace

int main() {
  // Before the libraries: the stub is the runtime already.
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count >= 1, "no device");
  void* sparse = Open("librocsparse.so.0");
  void* rand = Open("librocrand.so.1");
  printf("ROCM_LIBS_LOADED\n");
  fflush(stdout);

  auto create = reinterpret_cast<CreateFn>(dlsym(rand, "rocrand_create_generator"));
  auto uniform = reinterpret_cast<UniformFn>(dlsym(rand, "rocrand_generate_uniform"));
  auto destroy = reinterpret_cast<DestroyFn>(dlsym(rand, "rocrand_destroy_generator"));
  CHECK(create && uniform && destroy, "librocrand.so.1 lacks its C API");
  rocrand_generator gen = nullptr;
  int st = create(&gen, kRngPseudoXorwow);
  printf("[rocm_libs] rocrand_create_generator(XORWOW) -> %d\n", st);
  float* d = nullptr;
  HIP_OK(hipMalloc(&d, 1024 * sizeof(float)));
  int gen_st = st == kStatusSuccess ? uniform(gen, d, 1024) : st;
  printf("[rocm_libs] rocrand_generate_uniform -> %d\n", gen_st);
  // Without a twin no rocrand kernel can run, so rocrand reports a failure
  // (a launch failure or an error from its initialisation kernel).
  CHECK(gen_st != kStatusSuccess, "rocrand generated numbers on a sim worker without its twins");
  if (gen != nullptr) destroy(gen);
  (void)hipGetLastError();
  HIP_OK(hipFree(d));
  (void)sparse;
  return e2e::Finish("rocm_libs");
}
