// module_api: the module API on a code object file built with `hipcc
// --genco` (module_kernels.co, path in argv[1]): hipModuleLoad and
// hipModuleLoadData, hipModuleGetFunction, hipModuleGetGlobal,
// hipModuleLaunchKernel with kernelParams and with `extra`, and
// hipExtModuleLaunchKernel with start/stop events and with a partial last
// block.
#include <hip/hip_ext.h>

#include <vector>

#include "common.h"

namespace {

constexpr int kN = 3000;

std::vector<char> ReadFile(const char* path) {
  FILE* f = fopen(path, "rb");
  CHECK(f != nullptr, "cannot open %s: %s", path, strerror(errno));
  std::vector<char> bytes;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  fclose(f);
  return bytes;
}

struct Buffers {
  std::vector<float> a, b;
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  Buffers() : a(kN), b(kN) {
    for (int i = 0; i < kN; ++i) {
      a[i] = static_cast<float>(i) * 0.5f;
      b[i] = static_cast<float>(kN - i);
    }
    HIP_OK(hipMalloc(&da, kN * sizeof(float)));
    HIP_OK(hipMalloc(&db, kN * sizeof(float)));
    HIP_OK(hipMalloc(&dc, kN * sizeof(float)));
    HIP_OK(hipMemcpy(da, a.data(), kN * sizeof(float), hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(db, b.data(), kN * sizeof(float), hipMemcpyHostToDevice));
  }
  std::vector<float> Result() {
    std::vector<float> c(kN);
    HIP_OK(hipMemcpy(c.data(), dc, kN * sizeof(float), hipMemcpyDeviceToHost));
    HIP_OK(hipMemset(dc, 0, kN * sizeof(float)));
    return c;
  }
};

// This process's resident bytes (VmRSS), 0 when unreadable.
size_t ResidentBytes() {
  FILE* f = fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  size_t kib = 0;
  while (fgets(line, sizeof line, f) != nullptr)
    if (sscanf(line, "VmRSS: %zu kB", &kib) == 1) break;
  fclose(f);
  return kib * 1024;
}

void CheckSum(Buffers& buf, const char* how) {
  std::vector<float> c = buf.Result();
  for (int i = 0; i < kN; ++i)
    CHECK(c[i] == buf.a[i] + buf.b[i], "%s: element %d is %f, expected %f", how, i, c[i], buf.a[i] + buf.b[i]);
  printf("[module_api] add_vec via %s: ok\n", how);
}

}  // namespace

int main(int argc, char** argv) {
  CHECK(argc == 2, "usage: module_api MODULE.co");
  Buffers buf;
  int n = kN;
  const unsigned blocks = (kN + 255) / 256;

  hipModule_t module = nullptr;
  HIP_OK(hipModuleLoad(&module, argv[1]));
  hipFunction_t add = nullptr, scaled = nullptr, missing = nullptr;
  HIP_OK(hipModuleGetFunction(&add, module, "add_vec"));
  HIP_OK(hipModuleGetFunction(&scaled, module, "scaled_add"));
  HIP_EXPECT(hipModuleGetFunction(&missing, module, "no_such_kernel"), hipErrorNotFound);

  // kernelParams: one pointer per argument.
  void* params[] = {&buf.da, &buf.db, &buf.dc, &n};
  HIP_OK(hipModuleLaunchKernel(add, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
  CheckSum(buf, "hipModuleLaunchKernel(kernelParams)");

  // extra: the packed argument buffer, laid out as the kernel expects.
  struct {
    const float* a;
    const float* b;
    float* c;
    int n;
  } packed{buf.da, buf.db, buf.dc, kN};
  size_t packed_size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &packed_size,
                   HIP_LAUNCH_PARAM_END};
  HIP_OK(hipModuleLaunchKernel(add, blocks, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
  CheckSum(buf, "hipModuleLaunchKernel(extra)");
  HIP_EXPECT(hipModuleLaunchKernel(add, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, extra), hipErrorInvalidValue);
  // A grid past the device's maximum (2^31 - 1, 65536, 65536 blocks) is
  // refused, as clr; a block past 1024 threads is hipErrorInvalidValue for a
  // 6.x/7.x caller (the scenario runs this program as one through
  // HIPR_ABI_MAJOR), 5.2's hipErrorInvalidConfiguration for a 5.x one.
  HIP_EXPECT(hipModuleLaunchKernel(add, 1u << 31, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipModuleLaunchKernel(add, 1, 65537, 1, 1, 1, 1, 0, nullptr, params, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipModuleLaunchKernel(add, 1, 1, 65537, 1, 1, 1, 0, nullptr, params, nullptr), hipErrorInvalidValue);
  const char* abi = getenv("HIPR_ABI_MAJOR");
  const hipError_t big_block = abi != nullptr && atoi(abi) >= 6 ? hipErrorInvalidValue : hipErrorInvalidConfiguration;
  HIP_EXPECT(hipModuleLaunchKernel(add, 1, 1, 1, 1025, 1, 1, 0, nullptr, params, nullptr), big_block);
  HIP_EXPECT(hipModuleLaunchKernel(add, 1, 1, 1, 16, 16, 16, 0, nullptr, params, nullptr), big_block);
  HIP_EXPECT(hipExtModuleLaunchKernel(add, 2048, 1, 1, 2048, 1, 1, 0, nullptr, params, nullptr, nullptr, nullptr, 0),
             big_block);
  // An empty file name names nothing (clr).
  hipModule_t none = nullptr;
  HIP_EXPECT(hipModuleLoad(&none, ""), hipErrorInvalidValue);

  // hipExtModuleLaunchKernel: global sizes in work-items, with events.
  hipEvent_t start, stop;
  HIP_OK(hipEventCreate(&start));
  HIP_OK(hipEventCreate(&stop));
  HIP_OK(hipExtModuleLaunchKernel(add, blocks * 256, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr, start, stop, 0));
  HIP_OK(hipEventSynchronize(stop));
  float ms = -1;
  HIP_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0, "elapsed time %f", ms);
  CheckSum(buf, "hipExtModuleLaunchKernel");

  // A global size that is not a multiple of the block: the last block is
  // partial (232 of 256 threads) and its blockDim says so.
  hipFunction_t mark = nullptr;
  HIP_OK(hipModuleGetFunction(&mark, module, "mark_threads"));
  int* marks = nullptr;
  HIP_OK(hipMalloc(&marks, 1024 * sizeof(int)));
  HIP_OK(hipMemset(marks, 0xff, 1024 * sizeof(int)));  // -1 everywhere.
  int stride = 256;
  void* mark_params[] = {&marks, &stride};
  HIP_OK(hipExtModuleLaunchKernel(mark, 1000, 1, 1, 256, 1, 1, 0, nullptr, mark_params, nullptr, nullptr, nullptr,
                                  0));
  std::vector<int> seen(1024);
  HIP_OK(hipMemcpy(seen.data(), marks, seen.size() * sizeof(int), hipMemcpyDeviceToHost));
  for (int i = 0; i < 1024; ++i) {
    const int want = i < 768 ? 256 : i < 1000 ? 232 : -1;
    CHECK(seen[i] == want, "partial last block: slot %d holds %d, expected %d", i, seen[i], want);
  }
  HIP_OK(hipFree(marks));

  // A module variable, read and changed through hipModuleGetGlobal.
  hipDeviceptr_t global = nullptr;
  size_t global_size = 0;
  HIP_OK(hipModuleGetGlobal(&global, &global_size, module, "module_scale"));
  CHECK(global_size == sizeof(float), "module_scale has size %zu", global_size);
  float scale = 0;
  HIP_OK(hipMemcpyDtoH(&scale, global, sizeof scale));
  CHECK(scale == 2.0f, "module_scale starts at %f, expected 2", scale);
  scale = -1.5f;
  HIP_OK(hipMemcpyHtoD(global, &scale, sizeof scale));
  char pad = 3;
  double offset = 0.25;
  void* scaled_params[] = {&buf.da, &pad, &offset, &buf.dc, &n};
  HIP_OK(hipModuleLaunchKernel(scaled, blocks, 1, 1, 256, 1, 1, 0, nullptr, scaled_params, nullptr));
  std::vector<float> c = buf.Result();
  for (int i = 0; i < kN; ++i) {
    float want = -1.5f * buf.a[i] + 0.25f + 3;
    CHECK(c[i] == want, "scaled_add: element %d is %f, expected %f", i, c[i], want);
  }
  printf("[module_api] hipModuleGetGlobal and a padded argument list: ok\n");
  HIP_OK(hipModuleUnload(module));

  // The same code object from memory.
  std::vector<char> image = ReadFile(argv[1]);
  hipModule_t from_memory = nullptr;
  HIP_OK(hipModuleLoadData(&from_memory, image.data()));
  hipFunction_t add2 = nullptr;
  HIP_OK(hipModuleGetFunction(&add2, from_memory, "add_vec"));
  HIP_OK(hipModuleLaunchKernel(add2, blocks, 1, 1, 256, 1, 1, 0, nullptr, params, nullptr));
  CheckSum(buf, "hipModuleLoadData");
  HIP_OK(hipModuleUnload(from_memory));

  // Load and unload cycles keep nothing: after a warm-up, thousands of them
  // leave the process's resident memory where it was (a leak of the image's
  // bytes per cycle would grow it by the image's size times the count).
  auto cycle = [&] {
    hipModule_t m = nullptr;
    HIP_OK(hipModuleLoadData(&m, image.data()));
    hipFunction_t f = nullptr;
    HIP_OK(hipModuleGetFunction(&f, m, "add_vec"));
    HIP_OK(hipModuleUnload(m));
  };
  // The stub keeps the last 64 unloaded modules and 1024 function records
  // (a handle used after its unload is refused, not undefined, meanwhile).
  for (int i = 0; i < 1500; ++i) cycle();
  const size_t before = ResidentBytes();
  constexpr int kCycles = 4000;
  for (int i = 0; i < kCycles; ++i) cycle();
  const size_t after = ResidentBytes();
  const double per_cycle = after > before ? double(after - before) / kCycles : 0.0;
  printf("[module_api] %d load/unload cycles of a %zu-byte image: resident %zu -> %zu bytes (%.0f per cycle)\n",
         kCycles, image.size(), before, after, per_cycle);
  CHECK(before > 0, "cannot read VmRSS");
  CHECK(per_cycle < 16.0, "each load/unload cycle keeps %.0f bytes", per_cycle);

  HIP_OK(hipEventDestroy(start));
  HIP_OK(hipEventDestroy(stop));
  return e2e::Finish("module_api");
}
