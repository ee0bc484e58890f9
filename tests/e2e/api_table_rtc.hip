// api_table_rtc: the runtime-compilation functions (hiprtc and the hiprtc /
// hip JIT linkers, client_stub/api/api_rtc.cc), one table row each (api_table.h).
//
//  * rtc/rtc_kernels.hip (its directory in HIPR_RTC_DIR) compiled with a
//    header handed over by name, a -D option and two name expressions; the
//    lowered names are the real mangled names; the code object is an AMDGPU
//    ELF; compiling for the current device by default gives the same bytes as
//    naming its target. It loads as a module and its kernels run on the
//    worker (the sim runs them through the twin the build made of the same
//    source: tests/e2e/CMakeLists.txt), results read back.
//  * A compile error: HIPRTC_ERROR_COMPILATION with the compiler's message,
//    file and line in the log. Bad handles and misuse: hiprtc's errors.
//  * Relocatable programs (-fgpu-rdc): their bitcode linked by hiprtcLink*
//    and hipLink* into a code object that loads; an unresolved symbol fails
//    the link with the linker's message in the error log buffer.
//
// Linked against the stub: the bitcode and link functions are ROCm 6.x's.
#include <hip/hip_runtime.h>
#include <hip/hiprtc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "api_table.h"

extern "C" {
hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char* bitcode);
hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t* size);
typedef struct ihiprtcLinkState* hiprtcLinkState;
hiprtcResult hiprtcLinkCreate(unsigned int n, hipJitOption* options, void** values, hiprtcLinkState* state);
hiprtcResult hiprtcLinkAddData(hiprtcLinkState state, int type, void* image, size_t size, const char* name,
                               unsigned int n, hipJitOption* options, void** values);
hiprtcResult hiprtcLinkAddFile(hiprtcLinkState state, int type, const char* path, unsigned int n,
                               hipJitOption* options, void** values);
hiprtcResult hiprtcLinkComplete(hiprtcLinkState state, void** binary, size_t* size);
hiprtcResult hiprtcLinkDestroy(hiprtcLinkState state);
typedef struct ihipLinkState_t* hipLinkState_t;
hipError_t hipLinkCreate(unsigned int n, hipJitOption* options, void** values, hipLinkState_t* state);
hipError_t hipLinkAddData(hipLinkState_t state, int type, void* data, size_t size, const char* name,
                          unsigned int n, hipJitOption* options, void** values);
hipError_t hipLinkAddFile(hipLinkState_t state, int type, const char* path, unsigned int n, hipJitOption* options,
                          void** values);
hipError_t hipLinkComplete(hipLinkState_t state, void** binary, size_t* size);
hipError_t hipLinkDestroy(hipLinkState_t state);
}

#define RTC_OK(call)                                                                  \
  do {                                                                                \
    hiprtcResult rtc_r_ = (call);                                                     \
    CHECK(rtc_r_ == HIPRTC_SUCCESS, "%s -> %s", #call, hiprtcGetErrorString(rtc_r_)); \
  } while (0)
#define RTC_EXPECT(call, want)                                                          \
  do {                                                                                  \
    hiprtcResult rtc_r_ = (call);                                                       \
    CHECK(rtc_r_ == (want), "%s -> %s, expected %s", #call, hiprtcGetErrorString(rtc_r_), \
          hiprtcGetErrorString(want));                                                  \
  } while (0)

namespace {

constexpr int kInputLLVMBitcode = 100;  // hiprtcJITInputType / hipJitInputType (6.x).
constexpr int kInputObject = 3;
const auto kLinkingError = static_cast<hiprtcResult>(100);  // HIPRTC_ERROR_LINKING.

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CHECK(in.good(), "cannot read %s", path.c_str());
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string Log(hiprtcProgram prog) {
  size_t size = 0;
  RTC_OK(hiprtcGetProgramLogSize(prog, &size));
  CHECK(size >= 1, "log size %zu", size);
  std::string log(size, '\0');
  RTC_OK(hiprtcGetProgramLog(prog, log.data()));
  CHECK(log.back() == '\0', "the log is not NUL-terminated");
  log.pop_back();
  return log;
}

std::vector<char> Code(hiprtcProgram prog) {
  size_t size = 0;
  RTC_OK(hiprtcGetCodeSize(prog, &size));
  std::vector<char> code(size);
  RTC_OK(hiprtcGetCode(prog, code.data()));
  return code;
}

std::string RtcDir() {
  const char* dir = getenv("HIPR_RTC_DIR");
  CHECK(dir != nullptr, "HIPR_RTC_DIR (the directory of rtc_kernels.hip) is not set");
  return dir;
}

// The program the twin was built for: exactly these inputs
// (tests/e2e/CMakeLists.txt, hipr-rtc-compile).
hiprtcProgram CreateKernels() {
  const std::string dir = RtcDir();
  static const std::string source = ReadFile(dir + "/rtc_kernels.hip");
  static const std::string header = ReadFile(dir + "/rtc_scale.h");
  const char* headers[] = {header.c_str()};
  const char* names[] = {"rtc_scale.h"};
  hiprtcProgram prog = nullptr;
  RTC_OK(hiprtcCreateProgram(&prog, source.c_str(), "rtc_kernels.hip", 1, headers, names));
  RTC_OK(hiprtcAddNameExpression(prog, "scale<float>"));
  RTC_OK(hiprtcAddNameExpression(prog, "&scale<int>"));
  return prog;
}


// rtc_kernels.hip compiled as the twin's code object was; the program stays
// alive for the lowered names.
struct Compiled {
  hiprtcProgram prog = nullptr;
  std::vector<char> code;
};

Compiled CompileKernels() {
  Compiled c;
  c.prog = CreateKernels();
  const char* options[] = {"-DFACTOR=3"};
  hiprtcResult r = hiprtcCompileProgram(c.prog, 1, options);
  CHECK(r == HIPRTC_SUCCESS, "hiprtcCompileProgram -> %s:\n%s", hiprtcGetErrorString(r), Log(c.prog).c_str());
  c.code = Code(c.prog);
  return c;
}

hiprtcProgram CompileError() {
  const char* bad = "extern \"C\" __global__ void k(int* p) {\n  p[0] = undeclared_name;\n}\n";
  hiprtcProgram prog = nullptr;
  RTC_OK(hiprtcCreateProgram(&prog, bad, "bad.hip", 0, nullptr, nullptr));
  RTC_EXPECT(hiprtcCompileProgram(prog, 0, nullptr), HIPRTC_ERROR_COMPILATION);
  return prog;
}

void CreateProgram() {
  hiprtcProgram prog = CreateKernels();
  CHECK(prog != nullptr, "no program");
  size_t size = 0;
  RTC_EXPECT(hiprtcGetCodeSize(prog, &size), HIPRTC_ERROR_INVALID_PROGRAM);  // Not compiled yet.
  RTC_OK(hiprtcDestroyProgram(&prog));
  hiprtcProgram none = nullptr;
  RTC_EXPECT(hiprtcCreateProgram(nullptr, "x", "x", 0, nullptr, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_EXPECT(hiprtcCreateProgram(&none, nullptr, "x", 0, nullptr, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_EXPECT(hiprtcCreateProgram(&none, "x", "x", 1, nullptr, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  CHECK(none == nullptr, "a failed hiprtcCreateProgram produced a program");
}

void DestroyProgram() {
  hiprtcProgram prog = nullptr;
  RTC_OK(hiprtcCreateProgram(&prog, "__global__ void k() {}\n", "k.hip", 0, nullptr, nullptr));
  hiprtcProgram stale = prog;
  RTC_OK(hiprtcDestroyProgram(&prog));
  CHECK(prog == nullptr, "hiprtcDestroyProgram left the handle set");
  RTC_EXPECT(hiprtcDestroyProgram(&stale), HIPRTC_ERROR_INVALID_PROGRAM);
  RTC_EXPECT(hiprtcCompileProgram(stale, 0, nullptr), HIPRTC_ERROR_INVALID_PROGRAM);
  size_t size = 0;
  RTC_EXPECT(hiprtcGetProgramLogSize(stale, &size), HIPRTC_ERROR_INVALID_PROGRAM);
  RTC_EXPECT(hiprtcDestroyProgram(nullptr), HIPRTC_ERROR_INVALID_PROGRAM);
}

void AddNameExpression() {
  Compiled c = CompileKernels();
  RTC_EXPECT(hiprtcAddNameExpression(c.prog, "scale<double>"), HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION);
  hiprtcProgram prog = CreateKernels();
  RTC_EXPECT(hiprtcAddNameExpression(prog, ""), HIPRTC_ERROR_INVALID_INPUT);
  RTC_EXPECT(hiprtcAddNameExpression(nullptr, "k"), HIPRTC_ERROR_INVALID_PROGRAM);
  RTC_OK(hiprtcDestroyProgram(&prog));
  RTC_OK(hiprtcDestroyProgram(&c.prog));
}

// Compiles, loads and runs: the kernels' results read back from the worker.
void CompileProgram() {
  Compiled c = CompileKernels();
  const char* lowered_float = nullptr;
  RTC_OK(hiprtcGetLoweredName(c.prog, "scale<float>", &lowered_float));
  hipModule_t module = nullptr;
  HIP_OK(hipModuleLoadData(&module, c.code.data()));
  hipFunction_t scale_float = nullptr, fill = nullptr;
  HIP_OK(hipModuleGetFunction(&scale_float, module, lowered_float));
  HIP_OK(hipModuleGetFunction(&fill, module, "fill_roots"));
  constexpr int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  float* d = nullptr;
  HIP_OK(hipMalloc(&d, n * sizeof(float)));
  HIP_OK(hipMemcpy(d, host.data(), n * sizeof(float), hipMemcpyHostToDevice));
  float factor = 2.0f;
  int count = n;
  void* args[] = {&d, &factor, &count};
  HIP_OK(hipModuleLaunchKernel(scale_float, (n + 255) / 256, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
  HIP_OK(hipMemcpy(host.data(), d, n * sizeof(float), hipMemcpyDeviceToHost));
  for (int i = 0; i < n; ++i) CHECK(host[i] == 2.0f * i + 3.0f, "scale<float>: p[%d] = %g", i, host[i]);
  int* di = nullptr;
  HIP_OK(hipMalloc(&di, 64 * sizeof(int)));
  int base = 100;
  void* fill_args[] = {&di, &base};
  HIP_OK(hipModuleLaunchKernel(fill, 1, 1, 1, 64, 1, 1, 0, nullptr, fill_args, nullptr));
  int roots[64];
  HIP_OK(hipMemcpy(roots, di, sizeof(roots), hipMemcpyDeviceToHost));
  for (int i = 0; i < 64; ++i) {
    int root = 0;
    while ((root + 1) * (root + 1) <= i) ++root;
    CHECK(roots[i] == 100 + root, "fill_roots: p[%d] = %d, expected %d", i, roots[i], 100 + root);
  }
  printf("hiprtcCompileProgram: rtc_kernels.hip (%zu bytes of code object) ran scale<float> over %d floats and "
         "fill_roots (sqrtf from the device library) on the worker\n", c.code.size(), n);
  HIP_OK(hipFree(d));
  HIP_OK(hipFree(di));
  HIP_OK(hipModuleUnload(module));
  RTC_OK(hiprtcDestroyProgram(&c.prog));

  // A target the device libraries do not know is a compile error, explained.
  hiprtcProgram prog = nullptr;
  RTC_OK(hiprtcCreateProgram(&prog, "__global__ void k() {}\n", "k.hip", 0, nullptr, nullptr));
  const char* options[] = {"--offload-arch=sm_80"};
  RTC_EXPECT(hiprtcCompileProgram(prog, 1, options), HIPRTC_ERROR_COMPILATION);
  std::string log = Log(prog);
  CHECK(log.find("sm_80") != std::string::npos, "the log does not name the bad target:\n%s", log.c_str());
  RTC_EXPECT(hiprtcCompileProgram(prog, 1, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcDestroyProgram(&prog));
}

void GetLoweredName() {
  hiprtcProgram prog = CreateKernels();
  const char* lowered = nullptr;
  RTC_EXPECT(hiprtcGetLoweredName(prog, "scale<float>", &lowered), HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION);
  RTC_OK(hiprtcDestroyProgram(&prog));
  Compiled c = CompileKernels();
  const char* lowered_float = nullptr;
  const char* lowered_int = nullptr;
  RTC_OK(hiprtcGetLoweredName(c.prog, "scale<float>", &lowered_float));
  RTC_OK(hiprtcGetLoweredName(c.prog, "&scale<int>", &lowered_int));
  CHECK(strcmp(lowered_float, "_Z5scaleIfEvPT_S0_i") == 0, "lowered scale<float>: %s", lowered_float);
  CHECK(strcmp(lowered_int, "_Z5scaleIiEvPT_S0_i") == 0, "lowered &scale<int>: %s", lowered_int);
  RTC_EXPECT(hiprtcGetLoweredName(c.prog, "scale<char>", &lowered), HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID);
  RTC_OK(hiprtcDestroyProgram(&c.prog));
}

void GetCodeSize() {
  Compiled c = CompileKernels();
  size_t size = 0;
  RTC_OK(hiprtcGetCodeSize(c.prog, &size));
  CHECK(size == c.code.size() && size > 64, "code size %zu", size);
  RTC_EXPECT(hiprtcGetCodeSize(c.prog, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcDestroyProgram(&c.prog));
  hiprtcProgram bad = CompileError();
  RTC_EXPECT(hiprtcGetCodeSize(bad, &size), HIPRTC_ERROR_INVALID_PROGRAM);
  RTC_OK(hiprtcDestroyProgram(&bad));
}

void GetCode() {
  Compiled c = CompileKernels();
  const std::vector<char>& code = c.code;
  CHECK(memcmp(code.data(), "\x7f" "ELF", 4) == 0, "not an ELF (%zu bytes)", code.size());
  uint16_t machine = 0;
  memcpy(&machine, code.data() + 18, 2);
  CHECK(machine == 224, "e_machine %u, expected EM_AMDGPU (224)", machine);
  // The default target is the current device's: naming it gives the same bytes.
  hipDeviceProp_t props{};
  HIP_OK(hipGetDeviceProperties(&props, 0));
  std::string arch = std::string("--offload-arch=") + props.gcnArchName;
  hiprtcProgram again = CreateKernels();
  const char* options[] = {arch.c_str(), "-DFACTOR=3"};
  RTC_OK(hiprtcCompileProgram(again, 2, options));
  CHECK(Code(again) == code, "compiling for %s gave other bytes than the default target", props.gcnArchName);
  RTC_EXPECT(hiprtcGetCode(again, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcDestroyProgram(&again));
  RTC_OK(hiprtcDestroyProgram(&c.prog));
}

void GetProgramLogSize() {
  hiprtcProgram bad = CompileError();
  size_t size = 0;
  RTC_OK(hiprtcGetProgramLogSize(bad, &size));
  CHECK(size > 20, "a failed compilation's log has %zu bytes", size);
  RTC_EXPECT(hiprtcGetProgramLogSize(bad, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcDestroyProgram(&bad));
}

void GetProgramLog() {
  hiprtcProgram bad = CompileError();
  std::string log = Log(bad);
  CHECK(log.find("bad.hip:2:") != std::string::npos && log.find("undeclared_name") != std::string::npos,
        "the log does not point at bad.hip line 2:\n%s", log.c_str());
  RTC_EXPECT(hiprtcGetProgramLog(bad, nullptr), HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcDestroyProgram(&bad));
}

std::vector<char> Bitcode(const char* source, const char* name) {
  hiprtcProgram prog = nullptr;
  RTC_OK(hiprtcCreateProgram(&prog, source, name, 0, nullptr, nullptr));
  const char* options[] = {"-fgpu-rdc"};
  hiprtcResult r = hiprtcCompileProgram(prog, 1, options);
  CHECK(r == HIPRTC_SUCCESS, "%s -fgpu-rdc -> %s:\n%s", name, hiprtcGetErrorString(r), Log(prog).c_str());
  size_t size = 0;
  RTC_OK(hiprtcGetBitcodeSize(prog, &size));
  std::vector<char> bc(size);
  RTC_OK(hiprtcGetBitcode(prog, bc.data()));
  CHECK(size > 4 && memcmp(bc.data(), "BC\xC0\xDE", 4) == 0, "%s: not LLVM bitcode (%zu bytes)", name, size);
  RTC_OK(hiprtcDestroyProgram(&prog));
  return bc;
}

const std::vector<char>& UserBitcode() {
  static const std::vector<char> bc = Bitcode(
      "__device__ int rtc_helper(int x);\n"
      "extern \"C\" __global__ void linked(int* p) { p[threadIdx.x] = rtc_helper(threadIdx.x); }\n",
      "user.hip");
  return bc;
}

const std::vector<char>& HelperBitcode() {
  static const std::vector<char> bc = Bitcode("__device__ int rtc_helper(int x) { return 7 * x + 1; }\n",
                                              "helper.hip");
  return bc;
}

void GetBitcodeSize() {
  CHECK(UserBitcode().size() > 100, "user.hip's bitcode: %zu bytes", UserBitcode().size());
  Compiled c = CompileKernels();  // Without -fgpu-rdc: bitcode too, and code.
  size_t size = 0;
  RTC_OK(hiprtcGetBitcodeSize(c.prog, &size));
  CHECK(size > 100 && !c.code.empty(), "bitcode %zu bytes, code %zu", size, c.code.size());
  RTC_OK(hiprtcDestroyProgram(&c.prog));
  hiprtcProgram bad = CompileError();
  RTC_EXPECT(hiprtcGetBitcodeSize(bad, &size), HIPRTC_ERROR_INVALID_PROGRAM);
  RTC_OK(hiprtcDestroyProgram(&bad));
}

void GetBitcode() {
  CHECK(memcmp(HelperBitcode().data(), "BC\xC0\xDE", 4) == 0, "not bitcode");
  hiprtcProgram bad = CompileError();
  char byte = 0;
  RTC_EXPECT(hiprtcGetBitcode(bad, &byte), HIPRTC_ERROR_INVALID_PROGRAM);
  RTC_OK(hiprtcDestroyProgram(&bad));
}

// The linked code object: loads, has the kernel and not the device function.
void CheckLinked(const void* binary, size_t size) {
  CHECK(size > 64 && memcmp(binary, "\x7f" "ELF", 4) == 0, "linked: not an ELF (%zu bytes)", size);
  hipModule_t module = nullptr;
  HIP_OK(hipModuleLoadData(&module, binary));
  hipFunction_t fn = nullptr;
  HIP_OK(hipModuleGetFunction(&fn, module, "linked"));
  HIP_EXPECT(hipModuleGetFunction(&fn, module, "rtc_helper"), hipErrorNotFound);
  HIP_OK(hipModuleUnload(module));
}

struct LinkLog {
  char text[4096] = {};
  hipJitOption options[2] = {hipJitOptionErrorLogBuffer, hipJitOptionErrorLogBufferSizeBytes};
  void* values[2] = {text, reinterpret_cast<void*>(sizeof(text))};
};

void LinkCreate() {
  LinkLog log;
  hiprtcLinkState state = nullptr;
  RTC_OK(hiprtcLinkCreate(2, log.options, log.values, &state));
  CHECK(state != nullptr, "no link state");
  RTC_EXPECT(hiprtcLinkCreate(2, nullptr, nullptr, &state), HIPRTC_ERROR_INVALID_INPUT);
  // An unresolved symbol fails the link, the linker's message in the log buffer.
  RTC_OK(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()), UserBitcode().size(),
                           "user", 0, nullptr, nullptr));
  void* binary = nullptr;
  size_t size = 0;
  RTC_EXPECT(hiprtcLinkComplete(state, &binary, &size), kLinkingError);
  CHECK(strstr(log.text, "rtc_helper") != nullptr, "the error log does not name rtc_helper: %s", log.text);
  RTC_OK(hiprtcLinkDestroy(state));
}

void LinkAddData() {
  hiprtcLinkState state = nullptr;
  RTC_OK(hiprtcLinkCreate(0, nullptr, nullptr, &state));
  char junk[64] = "not bitcode";
  RTC_EXPECT(hiprtcLinkAddData(state, kInputLLVMBitcode, junk, sizeof(junk), "junk", 0, nullptr, nullptr),
             kLinkingError);
  RTC_EXPECT(hiprtcLinkAddData(state, kInputObject, junk, sizeof(junk), "object", 0, nullptr, nullptr),
             HIPRTC_ERROR_INVALID_INPUT);
  RTC_EXPECT(hiprtcLinkAddData(state, kInputLLVMBitcode, nullptr, 0, "none", 0, nullptr, nullptr),
             HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()), UserBitcode().size(),
                           "user", 0, nullptr, nullptr));
  RTC_OK(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(HelperBitcode().data()),
                           HelperBitcode().size(), "helper", 0, nullptr, nullptr));
  void* binary = nullptr;
  size_t size = 0;
  RTC_OK(hiprtcLinkComplete(state, &binary, &size));
  CheckLinked(binary, size);
  RTC_OK(hiprtcLinkDestroy(state));
}

void LinkAddFile() {
  char path[] = "/tmp/hipr-rtc-helper-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp failed");
  CHECK(write(fd, HelperBitcode().data(), HelperBitcode().size()) == static_cast<ssize_t>(HelperBitcode().size()),
        "write failed");
  close(fd);
  hiprtcLinkState state = nullptr;
  RTC_OK(hiprtcLinkCreate(0, nullptr, nullptr, &state));
  RTC_OK(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()), UserBitcode().size(),
                           "user", 0, nullptr, nullptr));
  RTC_OK(hiprtcLinkAddFile(state, kInputLLVMBitcode, path, 0, nullptr, nullptr));
  unlink(path);
  RTC_EXPECT(hiprtcLinkAddFile(state, kInputLLVMBitcode, "/nonexistent/x.bc", 0, nullptr, nullptr),
             HIPRTC_ERROR_INVALID_INPUT);
  void* binary = nullptr;
  size_t size = 0;
  RTC_OK(hiprtcLinkComplete(state, &binary, &size));
  CheckLinked(binary, size);
  RTC_OK(hiprtcLinkDestroy(state));
}

void LinkComplete() {
  hiprtcLinkState state = nullptr;
  RTC_OK(hiprtcLinkCreate(0, nullptr, nullptr, &state));
  void* binary = nullptr;
  size_t size = 0;
  RTC_EXPECT(hiprtcLinkComplete(state, &binary, &size), kLinkingError);  // Nothing to link.
  RTC_OK(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()), UserBitcode().size(),
                           "user", 0, nullptr, nullptr));
  RTC_OK(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(HelperBitcode().data()),
                           HelperBitcode().size(), "helper", 0, nullptr, nullptr));
  RTC_EXPECT(hiprtcLinkComplete(state, nullptr, &size), HIPRTC_ERROR_INVALID_INPUT);
  RTC_OK(hiprtcLinkComplete(state, &binary, &size));
  CheckLinked(binary, size);
  RTC_OK(hiprtcLinkDestroy(state));
}

void LinkDestroy() {
  hiprtcLinkState state = nullptr;
  RTC_OK(hiprtcLinkCreate(0, nullptr, nullptr, &state));
  RTC_OK(hiprtcLinkDestroy(state));
  RTC_EXPECT(hiprtcLinkDestroy(state), HIPRTC_ERROR_INVALID_INPUT);
  RTC_EXPECT(hiprtcLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()),
                               UserBitcode().size(), "user", 0, nullptr, nullptr),
             HIPRTC_ERROR_INVALID_INPUT);
}

// hipLink*: the same linker in hipError_t.
void HipLinkCreate() {
  hipLinkState_t state = nullptr;
  HIP_OK(hipLinkCreate(0, nullptr, nullptr, &state));
  CHECK(state != nullptr, "no link state");
  HIP_EXPECT(hipLinkCreate(1, nullptr, nullptr, &state), hipErrorInvalidValue);
  HIP_OK(hipLinkDestroy(state));
}

void HipLinkAddData() {
  hipLinkState_t state = nullptr;
  HIP_OK(hipLinkCreate(0, nullptr, nullptr, &state));
  char junk[64] = "object";
  HIP_EXPECT(hipLinkAddData(state, kInputObject, junk, sizeof(junk), "object", 0, nullptr, nullptr),
             hipErrorInvalidValue);
  HIP_OK(hipLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()), UserBitcode().size(),
                        "user", 0, nullptr, nullptr));
  HIP_OK(hipLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(HelperBitcode().data()), HelperBitcode().size(),
                        "helper", 0, nullptr, nullptr));
  void* binary = nullptr;
  size_t size = 0;
  HIP_OK(hipLinkComplete(state, &binary, &size));
  CheckLinked(binary, size);
  HIP_OK(hipLinkDestroy(state));
}

void HipLinkAddFile() {
  hipLinkState_t state = nullptr;
  HIP_OK(hipLinkCreate(0, nullptr, nullptr, &state));
  HIP_EXPECT(hipLinkAddFile(state, kInputLLVMBitcode, "/nonexistent/x.bc", 0, nullptr, nullptr),
             hipErrorInvalidValue);
  char path[] = "/tmp/hipr-rtc-user-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp failed");
  CHECK(write(fd, UserBitcode().data(), UserBitcode().size()) == static_cast<ssize_t>(UserBitcode().size()),
        "write failed");
  close(fd);
  HIP_OK(hipLinkAddFile(state, kInputLLVMBitcode, path, 0, nullptr, nullptr));
  unlink(path);
  void* binary = nullptr;
  size_t size = 0;
  HIP_EXPECT(hipLinkComplete(state, &binary, &size), hipErrorInvalidConfiguration);  // rtc_helper undefined.
  HIP_OK(hipLinkDestroy(state));
}

void HipLinkComplete() {
  hipLinkState_t state = nullptr;
  HIP_OK(hipLinkCreate(0, nullptr, nullptr, &state));
  HIP_OK(hipLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(UserBitcode().data()), UserBitcode().size(),
                        "user", 0, nullptr, nullptr));
  HIP_OK(hipLinkAddData(state, kInputLLVMBitcode, const_cast<char*>(HelperBitcode().data()), HelperBitcode().size(),
                        "helper", 0, nullptr, nullptr));
  size_t size = 0;
  HIP_EXPECT(hipLinkComplete(state, nullptr, &size), hipErrorInvalidValue);
  void* binary = nullptr;
  HIP_OK(hipLinkComplete(state, &binary, &size));
  CheckLinked(binary, size);
  HIP_OK(hipLinkDestroy(state));
}

void HipLinkDestroy() {
  hipLinkState_t state = nullptr;
  HIP_OK(hipLinkCreate(0, nullptr, nullptr, &state));
  HIP_OK(hipLinkDestroy(state));
  HIP_EXPECT(hipLinkDestroy(state), hipErrorInvalidHandle);
}

const e2e::Row kRows[] = {
    {"hiprtcCreateProgram", CreateProgram},
    {"hiprtcDestroyProgram", DestroyProgram},
    {"hiprtcAddNameExpression", AddNameExpression},
    {"hiprtcCompileProgram", CompileProgram},
    {"hiprtcGetLoweredName", GetLoweredName},
    {"hiprtcGetCodeSize", GetCodeSize},
    {"hiprtcGetCode", GetCode},
    {"hiprtcGetProgramLogSize", GetProgramLogSize},
    {"hiprtcGetProgramLog", GetProgramLog},
    {"hiprtcGetBitcodeSize", GetBitcodeSize},
    {"hiprtcGetBitcode", GetBitcode},
    {"hiprtcLinkCreate", LinkCreate},
    {"hiprtcLinkAddData", LinkAddData},
    {"hiprtcLinkAddFile", LinkAddFile},
    {"hiprtcLinkComplete", LinkComplete},
    {"hiprtcLinkDestroy", LinkDestroy},
    {"hipLinkCreate", HipLinkCreate},
    {"hipLinkAddData", HipLinkAddData},
    {"hipLinkAddFile", HipLinkAddFile},
    {"hipLinkComplete", HipLinkComplete},
    {"hipLinkDestroy", HipLinkDestroy},
};

}  // namespace

int main() { return e2e::RunRows("api_table_rtc", kRows); }
