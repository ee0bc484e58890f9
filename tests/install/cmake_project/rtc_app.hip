// rtc_app: compiles rtc_kernel.hip at run time with hiprtc, loads the code
// object with the module API and runs axpy<float>.
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(cond, ...)                      \
  do {                                        \
    if (!(cond)) {                            \
      std::fprintf(stderr, "FAIL: " __VA_ARGS__); \
      std::fprintf(stderr, "\n");             \
      return 1;                               \
    }                                         \
  } while (0)

int main() {
  std::ifstream file(KERNEL_FILE);
  std::stringstream text;
  text << file.rdbuf();
  const std::string source = text.str();
  CHECK(!source.empty(), "cannot read %s", KERNEL_FILE);

  hiprtcProgram prog = nullptr;
  CHECK(hiprtcCreateProgram(&prog, source.c_str(), "rtc_kernel.hip", 0, nullptr, nullptr) == HIPRTC_SUCCESS,
        "hiprtcCreateProgram");
  CHECK(hiprtcAddNameExpression(prog, "axpy<float>") == HIPRTC_SUCCESS, "hiprtcAddNameExpression");
  const char* options[] = {"-DALPHA=2"};
  hiprtcResult r = hiprtcCompileProgram(prog, 1, options);
  if (r != HIPRTC_SUCCESS) {
    size_t size = 0;
    hiprtcGetProgramLogSize(prog, &size);
    std::string log(size, '\0');
    hiprtcGetProgramLog(prog, log.data());
    CHECK(false, "hiprtcCompileProgram: %s\n%s", hiprtcGetErrorString(r), log.c_str());
  }
  size_t code_size = 0;
  CHECK(hiprtcGetCodeSize(prog, &code_size) == HIPRTC_SUCCESS, "hiprtcGetCodeSize");
  std::vector<char> code(code_size);
  CHECK(hiprtcGetCode(prog, code.data()) == HIPRTC_SUCCESS, "hiprtcGetCode");
  const char* lowered = nullptr;
  CHECK(hiprtcGetLoweredName(prog, "axpy<float>", &lowered) == HIPRTC_SUCCESS, "hiprtcGetLoweredName");

  hipModule_t module = nullptr;
  hipFunction_t fn = nullptr;
  CHECK(hipModuleLoadData(&module, code.data()) == hipSuccess, "hipModuleLoadData");
  CHECK(hipModuleGetFunction(&fn, module, lowered) == hipSuccess, "hipModuleGetFunction %s", lowered);

  const int n = 256;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1.0f + i;
  }
  float *dx = nullptr, *dy = nullptr;
  CHECK(hipMalloc(&dx, n * sizeof(float)) == hipSuccess && hipMalloc(&dy, n * sizeof(float)) == hipSuccess,
        "hipMalloc");
  CHECK(hipMemcpy(dx, x.data(), n * sizeof(float), hipMemcpyHostToDevice) == hipSuccess &&
            hipMemcpy(dy, y.data(), n * sizeof(float), hipMemcpyHostToDevice) == hipSuccess,
        "hipMemcpy to the device");
  int count = n;
  void* args[] = {&dy, &dx, &count};
  CHECK(hipModuleLaunchKernel(fn, (n + 63) / 64, 1, 1, 64, 1, 1, 0, nullptr, args, nullptr) == hipSuccess,
        "hipModuleLaunchKernel");
  std::vector<float> out(n);
  CHECK(hipMemcpy(out.data(), dy, n * sizeof(float), hipMemcpyDeviceToHost) == hipSuccess, "hipMemcpy back");
  for (int i = 0; i < n; ++i) {
    const float want = 2.0f * x[i] + y[i];
    CHECK(out[i] == want, "element %d: %g, want %g", i, out[i], want);
  }
  hipFree(dx);
  hipFree(dy);
  hipModuleUnload(module);
  hiprtcDestroyProgram(&prog);
  std::printf("rtc_app: PASS (%d elements)\n", n);
  return 0;
}
