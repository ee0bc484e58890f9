// api_table_runtime: one row per hand-written runtime function (devices,
// contexts, streams, events, errors, launches, functions, modules, graphs
// and the helpers answered in the client), against a sim worker with two
// devices; see api_table.h. Linked against the stub for the 6.x additions.
//
// Module rows load module_kernels.co (built with `hipcc --genco` next to
// this program, the code object module_api uses; its sim twin is built with
// the others) from this program's own directory.
#include <hip/hip_runtime.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <sys/mman.h>

#include "api_table.h"

// ROCm 6.4's batched stream memory operations, the parameters by layout.
union HiprBatchMemOp {
  int operation;
  struct {
    int operation;
    void* address;
    union {
      uint32_t value;
      uint64_t value64;
    };
    unsigned flags;
    void* alias;
  } value_op;
  uint64_t pad[6];
};
static_assert(sizeof(HiprBatchMemOp) == 48, "hipStreamBatchMemOpParams is 48 bytes");
enum : int { kOpWait32 = 1, kOpWrite32 = 2, kOpFlush = 3, kOpWait64 = 4, kOpWrite64 = 5, kOpBarrier = 6 };
// Graph memory nodes (ROCm 5.5+), their parameters by layout.
struct HiprMemAllocNodeParams {
  hipMemPoolProps poolProps;
  const hipMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
};
extern "C" {
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                   size_t dep_count, HiprMemAllocNodeParams* params);
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                  size_t dep_count, void* ptr);
hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                     size_t dep_count, hipDeviceptr_t ptr);
hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t node, HiprMemAllocNodeParams* params);
hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t node, void* ptr_out);
hipError_t hipDeviceGetGraphMemAttribute(int device, int attr, void* value);
hipError_t hipDeviceSetGraphMemAttribute(int device, int attr, void* value);
}
enum : int { kGraphMemUsedCurrent = 0, kGraphMemUsedHigh = 1, kGraphMemReservedCurrent = 2, kGraphMemReservedHigh = 3 };
// Memory nodes' types, 6.x numbers for every caller (5.x has none).
constexpr int kMemAllocNodeType = 10;
constexpr int kMemFreeNodeType = 11;

struct HiprBatchMemOpNodeParams {
  hipCtx_t ctx;
  unsigned int count;
  union HiprBatchMemOp* paramArray;
  unsigned int flags;
};
extern "C" {
hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps,
                                     size_t dep_count, const HiprBatchMemOpNodeParams* params);
hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t node, HiprBatchMemOpNodeParams* params);
hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t node, HiprBatchMemOpNodeParams* params);
hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                               const HiprBatchMemOpNodeParams* params);
}
constexpr int kBatchMemOpNodeType = 14;  // 6.x's number, for every caller.

extern "C" hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count, HiprBatchMemOp* ops,
                                          unsigned int flags);

extern "C" {
hipError_t hipGetDevicePropertiesR0600(void* prop, int device);
hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_t* prop, int device);
hipError_t hipChooseDeviceR0600(int* device, const void* prop);
hipError_t hipChooseDeviceR0000(int* device, const hipDeviceProp_t* prop);
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);
hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void* user_data);
hipError_t hipGetProcAddress(const char* symbol, void** fn, int version, uint64_t flags, int* status);
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                                            unsigned int bx, unsigned int by, unsigned int bz, unsigned int shared,
                                            hipStream_t stream, void** params);
const char* hipGetCmdName(uint32_t id);
// ROCm >= 5.3 graph and capture entry points (hipGraphEdgeData and
// hipGraphInstantiateParams declared below by layout).
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph);
hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus* status);
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id);
hipError_t hipStreamGetCaptureInfo_v2_spt(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id,
                                          hipGraph_t* graph, const hipGraphNode_t** deps, size_t* count);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph, const hipGraphNode_t* deps,
                                        const void* edge_data, size_t count, hipStreamCaptureMode mode);
hipError_t hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t stream);
hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t src, hipGraphNode_t dst);
hipError_t hipGraphDebugDotPrint(hipGraph_t graph, const char* path, unsigned int flags);
hipError_t hipGraphExecGetFlags(hipGraphExec_t exec, unsigned long long* flags);
hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream);
hipError_t hipGraphNodeGetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int* enabled);
hipError_t hipGraphNodeSetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int enabled);
struct HiprInstantiateParams {
  hipGraphNode_t error_node;
  unsigned long long flags;
  int result;  // hipGraphInstantiateResult
  hipStream_t upload_stream;
};
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph, HiprInstantiateParams* params);
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags);
hipError_t hipDrvGetErrorName(hipError_t error, const char** name);
hipError_t hipDrvGetErrorString(hipError_t error, const char** text);
hipError_t hipExtGetLastError(void);
hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback, void* user_data,
                                    unsigned int flags);
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long* id);
hipError_t hipGetFuncBySymbol(hipFunction_t* function, const void* symbol);
hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t module);
// ROCm 6.5's launch configurations and 7.1's stream attributes, by layout.
union HiprLaunchAttributeValue {
  char pad[64];
  int cooperative;
  int priority;
  int sync_policy;
};
struct HiprLaunchAttribute {
  int id;  // hipLaunchAttributeID: 0 ignore, 1 access policy window, 2 cooperative, 3 sync policy, 8 priority.
  char pad[4];
  HiprLaunchAttributeValue value;
};
struct HiprLaunchConfig {
  dim3 grid;
  dim3 block;
  size_t dynamic_shared_bytes;
  hipStream_t stream;
  HiprLaunchAttribute* attrs;
  unsigned int num_attrs;
};
struct HiprDrvLaunchConfig {
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int shared_bytes;
  hipStream_t stream;
  HiprLaunchAttribute* attrs;
  unsigned int num_attrs;
};
hipError_t hipLaunchKernelExC(const HiprLaunchConfig* config, const void* f, void** args);
hipError_t hipDrvLaunchKernelEx(const HiprDrvLaunchConfig* config, hipFunction_t f, void** params, void** extra);
hipError_t hipStreamGetAttribute(hipStream_t stream, int attr, HiprLaunchAttributeValue* value);
hipError_t hipStreamSetAttribute(hipStream_t stream, int attr, const HiprLaunchAttributeValue* value);
hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src);
hipError_t hipGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags, int* status);
hipError_t hipGetDriverEntryPoint_spt(const char* symbol, void** fn, unsigned long long flags, int* status);
hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t* max_width, const hipChannelFormatDesc* desc, int device);
// ROCm 7.2's libraries.
typedef struct ihipLibrary_t* hipLibrary_t;
typedef struct ihipKernel_t* hipKernel_t;
hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption* jit_options, void** jit_values,
                              unsigned int num_jit_options, int* library_options, void** library_values,
                              unsigned int num_library_options);
hipError_t hipLibraryLoadFromFile(hipLibrary_t* library, const char* path, hipJitOption* jit_options,
                                  void** jit_values, unsigned int num_jit_options, int* library_options,
                                  void** library_values, unsigned int num_library_options);
hipError_t hipLibraryUnload(hipLibrary_t library);
hipError_t hipLibraryGetKernel(hipKernel_t* kernel, hipLibrary_t library, const char* name);
hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t library);
hipError_t hipLibraryEnumerateKernels(hipKernel_t* kernels, unsigned int count, hipLibrary_t library);
hipError_t hipKernelGetLibrary(hipLibrary_t* library, hipKernel_t kernel);
hipError_t hipKernelGetName(const char** name, hipKernel_t kernel);
// ROCm 6.2's generic node parameters, by layout.
struct HiprMemcpyNodeParams {
  int flags;
  int reserved[3];
  hipMemcpy3DParms copy;
};
struct HiprGraphNodeParams {
  HiprGraphNodeParams() : reserved1{} {}  // All zero (dim3 makes the union need a constructor).
  int type = 0;
  int reserved0[3] = {};
  union {
    long long reserved1[29];
    hipKernelNodeParams kernel;
    HiprMemcpyNodeParams memcpy;
    hipMemsetParams memset;
    hipHostNodeParams host;
    hipGraph_t graph;
    hipEvent_t event;
  };
  long long reserved2 = 0;
};
typedef struct HiprUserObject* HiprUserObject_t;
hipError_t hipUserObjectCreate(HiprUserObject_t* object, void* ptr, hipHostFn_t destroy, unsigned int refs,
                               unsigned int flags);
hipError_t hipUserObjectRetain(HiprUserObject_t object, unsigned int count);
hipError_t hipUserObjectRelease(HiprUserObject_t object, unsigned int count);
hipError_t hipGraphRetainUserObject(hipGraph_t graph, HiprUserObject_t object, unsigned int count, unsigned int flags);
hipError_t hipGraphReleaseUserObject(hipGraph_t graph, HiprUserObject_t object, unsigned int count);
hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t count,
                           HiprGraphNodeParams* params);
hipError_t hipGraphNodeSetParams(hipGraphNode_t node, HiprGraphNodeParams* params);
hipError_t hipGraphExecNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node, HiprGraphNodeParams* params);
hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t count,
                                    const HIP_MEMCPY3D* params, hipCtx_t ctx);
hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t node, HIP_MEMCPY3D* params);
hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t node, const HIP_MEMCPY3D* params);
hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node, const HIP_MEMCPY3D* params,
                                              hipCtx_t ctx);
// The driver-API memset nodes take CUDA's field order (6.x's
// HIP_MEMSET_NODE_PARAMS, 7.x's hipMemsetParams), not 5.x's hipMemsetParams.
struct HiprMemsetNodeParams {
  void* dst;
  size_t pitch;
  unsigned int value;
  unsigned int elementSize;
  size_t width;
  size_t height;
};
hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* deps, size_t count,
                                    const HiprMemsetNodeParams* params, hipCtx_t ctx);
hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                              const HiprMemsetNodeParams* params, hipCtx_t ctx);
hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* kernel, int blocks, int block_size);
// hiprtc.h's, with its enum as int (same ABI): the sim twin build of this
// file knows only hip_runtime.h.
hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin);
int hiprtcVersion(int* major, int* minor);
const char* hiprtcGetErrorString(int result);
}

// hiprtcResult and hip_prof_str.h's API ids.
constexpr int HIPRTC_SUCCESS = 0;
constexpr int HIPRTC_ERROR_INVALID_INPUT = 3;
constexpr int HIPRTC_ERROR_COMPILATION = 6;
constexpr uint32_t HIP_API_ID_hipLaunchKernel = 107;
constexpr uint32_t HIP_API_ID_hipMalloc = 108;

// For the graph memcpy-to/from-symbol rows.
__device__ int g_graph_symbol[1000];

// For the launch, function-attribute, occupancy and graph rows.
__global__ void Fill(int* out, int value, int n) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < n) out[i] = value;
}

namespace {

// ---- Helpers -----------------------------------------------------------------

// hipStreamLegacy of the 6.x and 7.x headers: the legacy null stream by name.
const hipStream_t kStreamLegacy = reinterpret_cast<hipStream_t>(1);

constexpr int kN = 1000;
constexpr int kBlock = 128;
constexpr int kGrid = (kN + kBlock - 1) / kBlock;

int* NewInts(int n = kN) {
  int* d = nullptr;
  HIP_OK(hipMalloc(&d, n * sizeof(int)));
  // A synchronous copy, not hipMemset: a memset on the null stream may still
  // be queued when a non-blocking stream's kernel runs, and overwrite it.
  const std::vector<int> zeros(static_cast<size_t>(n), 0);
  HIP_OK(hipMemcpy(d, zeros.data(), n * sizeof(int), hipMemcpyHostToDevice));
  return d;
}

std::vector<int> ReadInts(const int* d, int n = kN) {
  std::vector<int> h(n);
  HIP_OK(hipMemcpy(h.data(), d, n * sizeof(int), hipMemcpyDeviceToHost));
  return h;
}

#define CHECK_ALL(d, value, what)                                                                   \
  do {                                                                                              \
    std::vector<int> got_ = ReadInts(d);                                                            \
    for (int i_ = 0; i_ < kN; ++i_)                                                                 \
      CHECK(got_[i_] == (value), "%s: element %d is %d, expected %d", what, i_, got_[i_], (value)); \
  } while (0)

// A host function that sleeps, then sets its flag: a synchronize that
// returns before it finished would see the flag still 0.
void SleepThenSet(void* p) {
  usleep(60 * 1000);
  static_cast<std::atomic<int>*>(p)->store(1);
}

// A host function that holds its stream until the gate opens.
struct Gate {
  std::atomic<int> open{0};
  std::atomic<int> entered{0};
};
void WaitAtGate(void* p) {
  auto* g = static_cast<Gate*>(p);
  g->entered.store(1);
  while (g->open.load() == 0) usleep(1000);
}
void WaitEntered(Gate& g) {
  for (int i = 0; i < 5000 && g.entered.load() == 0; ++i) usleep(1000);
  CHECK(g.entered.load() == 1, "the gate's host function never ran");
}

void NotAKernel() {}

hipDeviceProp_t Props(int device) {
  hipDeviceProp_t p{};
  HIP_OK(hipGetDeviceProperties(&p, device));
  return p;
}

std::string ModulePath() {
  char exe[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  CHECK(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
  std::string path(exe, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "module_kernels.co";
}

std::vector<char> ReadFile(const std::string& path) {
  FILE* f = fopen(path.c_str(), "rb");
  CHECK(f != nullptr, "cannot open %s: %s", path.c_str(), strerror(errno));
  std::vector<char> bytes;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
  fclose(f);
  return bytes;
}

// The stub's own definition of `name` (not a same-named one elsewhere).
void* StubSymbol(const char* name) {
  Dl_info info{};
  CHECK(dladdr(dlsym(RTLD_DEFAULT, "hipMalloc"), &info) != 0 && info.dli_fname != nullptr, "dladdr(hipMalloc)");
  void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  CHECK(self != nullptr, "dlopen(%s, RTLD_NOLOAD): %s", info.dli_fname, dlerror());
  void* fn = dlsym(self, name);
  CHECK(fn != nullptr, "the stub does not export %s", name);
  dlclose(self);
  return fn;
}

// add_vec of module_kernels.co on kN floats: c = a + b.
struct ModuleVectors {
  std::vector<float> a, b;
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  int n = kN;
  void* params[4];
  ModuleVectors() : a(kN), b(kN) {
    for (int i = 0; i < kN; ++i) {
      a[i] = static_cast<float>(i);
      b[i] = static_cast<float>(3 * i + 1);
    }
    HIP_OK(hipMalloc(&da, kN * sizeof(float)));
    HIP_OK(hipMalloc(&db, kN * sizeof(float)));
    HIP_OK(hipMalloc(&dc, kN * sizeof(float)));
    HIP_OK(hipMemcpy(da, a.data(), kN * sizeof(float), hipMemcpyHostToDevice));
    HIP_OK(hipMemcpy(db, b.data(), kN * sizeof(float), hipMemcpyHostToDevice));
    HIP_OK(hipMemset(dc, 0, kN * sizeof(float)));
    params[0] = &da;
    params[1] = &db;
    params[2] = &dc;
    params[3] = &n;
  }
  ~ModuleVectors() {
    for (float* p : {da, db, dc}) HIP_OK(hipFree(p));
  }
  void CheckSum(const char* how) {
    std::vector<float> c(kN);
    HIP_OK(hipMemcpy(c.data(), dc, kN * sizeof(float), hipMemcpyDeviceToHost));
    for (int i = 0; i < kN; ++i) CHECK(c[i] == a[i] + b[i], "%s: c[%d] = %g, expected %g", how, i, c[i], a[i] + b[i]);
    HIP_OK(hipMemset(dc, 0, kN * sizeof(float)));
  }
};

struct LoadedModule {
  hipModule_t module = nullptr;
  hipFunction_t add = nullptr;
  LoadedModule() {
    HIP_OK(hipModuleLoad(&module, ModulePath().c_str()));
    HIP_OK(hipModuleGetFunction(&add, module, "add_vec"));
  }
  ~LoadedModule() { HIP_OK(hipModuleUnload(module)); }
};

// ---- Devices -------------------------------------------------------------------

void GetDeviceCount() {
  int n = -1;
  HIP_OK(hipGetDeviceCount(&n));
  CHECK(n == 2, "%d devices", n);
  HIP_EXPECT(hipGetDeviceCount(nullptr), hipErrorInvalidValue);
}

void DeviceGetTexture1DLinearMaxWidth() {
  int bytes = 0;
  HIP_OK(hipDeviceGetAttribute(&bytes, hipDeviceAttributeMaxTexture1DLinear, 1));
  CHECK(bytes > 0 && bytes == Props(1).maxTexture1DLinear, "attribute %d, properties %d", bytes,
        Props(1).maxTexture1DLinear);
  size_t width = 0;
  hipChannelFormatDesc f1 = hipCreateChannelDesc(32, 0, 0, 0, hipChannelFormatKindFloat);
  HIP_OK(hipDeviceGetTexture1DLinearMaxWidth(&width, &f1, 1));
  CHECK(width == static_cast<size_t>(bytes) / 4, "float: %zu elements of %d bytes", width, bytes);
  hipChannelFormatDesc f4 = hipCreateChannelDesc(32, 32, 32, 32, hipChannelFormatKindFloat);
  HIP_OK(hipDeviceGetTexture1DLinearMaxWidth(&width, &f4, 0));
  CHECK(width == static_cast<size_t>(Props(0).maxTexture1DLinear) / 16, "float4: %zu elements", width);
  hipChannelFormatDesc none = hipCreateChannelDesc(0, 0, 0, 0, hipChannelFormatKindNone);
  width = 9;
  HIP_EXPECT(hipDeviceGetTexture1DLinearMaxWidth(&width, &none, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceGetTexture1DLinearMaxWidth(&width, &f1, 2), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceGetTexture1DLinearMaxWidth(&width, nullptr, 0), hipErrorInvalidValue);
  CHECK(width == 9, "failed calls wrote %zu", width);
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

void Init() {
  HIP_OK(hipInit(0));
  int n = 0;
  HIP_OK(hipGetDeviceCount(&n));
  CHECK(n == 2, "%d devices after hipInit", n);
  HIP_EXPECT(hipInit(1), hipErrorInvalidValue);  // Flags must be 0.
}

void DeviceGet() {
  hipDevice_t d = -1;
  HIP_OK(hipDeviceGet(&d, 1));
  CHECK(d == 1, "hipDeviceGet(1) gave %d", d);
  d = 77;
  HIP_EXPECT(hipDeviceGet(&d, 2), hipErrorInvalidDevice);
  CHECK(d == 77, "a failed hipDeviceGet wrote %d", d);
  HIP_EXPECT(hipDeviceGet(nullptr, 0), hipErrorInvalidValue);
}

void DeviceGetAttribute() {
  const hipDeviceProp_t p = Props(1);
  int v = -1;
  HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMultiprocessorCount, 1));
  CHECK(v > 0 && v == p.multiProcessorCount, "multiprocessors %d, properties say %d", v, p.multiProcessorCount);
  HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 1));
  CHECK(v == p.warpSize, "warp size %d, properties say %d", v, p.warpSize);
  HIP_OK(hipDeviceGetAttribute(&v, hipDeviceAttributeMaxThreadsPerBlock, 0));
  CHECK(v == Props(0).maxThreadsPerBlock, "max threads per block %d", v);
  v = 12345;
  HIP_EXPECT(hipDeviceGetAttribute(&v, hipDeviceAttributeWarpSize, 2), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceGetAttribute(nullptr, hipDeviceAttributeWarpSize, 0), hipErrorInvalidValue);
  CHECK(v == 12345, "a failed hipDeviceGetAttribute wrote %d", v);
}

void DeviceGetName() {
  const hipDeviceProp_t p = Props(0);
  char name[256];
  memset(name, 'x', sizeof name);
  HIP_OK(hipDeviceGetName(name, sizeof name, 0));
  CHECK(strcmp(name, p.name) == 0 && name[0] != '\0', "name \"%s\", properties say \"%s\"", name, p.name);
  char small[4];
  memset(small, 'x', sizeof small);
  HIP_OK(hipDeviceGetName(small, sizeof small, 0));
  CHECK(small[3] == '\0' && strncmp(small, p.name, 3) == 0, "truncated name \"%.4s\"", small);
  HIP_EXPECT(hipDeviceGetName(name, 0, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceGetName(name, sizeof name, 2), hipErrorInvalidDevice);
}

void DeviceComputeCapability() {
  const hipDeviceProp_t p = Props(1);
  int major = -1, minor = -1;
  HIP_OK(hipDeviceComputeCapability(&major, &minor, 1));
  CHECK(major == p.major && minor == p.minor && major > 0, "%d.%d, properties say %d.%d", major, minor, p.major,
        p.minor);
  major = -7;
  HIP_EXPECT(hipDeviceComputeCapability(&major, &minor, 2), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceComputeCapability(nullptr, &minor, 0), hipErrorInvalidValue);
  CHECK(major == -7, "a failed call wrote major %d", major);
}

void GetDeviceProperties() {
  hipDeviceProp_t p{};
  HIP_OK(hipGetDeviceProperties(&p, 0));
  CHECK(p.name[0] != '\0' && p.totalGlobalMem > 0 && p.maxThreadsPerBlock > 0 && p.warpSize > 0,
        "properties: name \"%s\", %zu bytes, %d threads, warp %d", p.name, p.totalGlobalMem, p.maxThreadsPerBlock,
        p.warpSize);
  int threads = 0;
  HIP_OK(hipDeviceGetAttribute(&threads, hipDeviceAttributeMaxThreadsPerBlock, 0));
  CHECK(threads == p.maxThreadsPerBlock, "properties and attribute disagree: %d vs %d", p.maxThreadsPerBlock, threads);
  HIP_EXPECT(hipGetDeviceProperties(nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipGetDeviceProperties(&p, 2), hipErrorInvalidDevice);
}

void GetDevicePropertiesR0000() {
  const hipDeviceProp_t want = Props(1);
  hipDeviceProp_t p{};
  HIP_OK(hipGetDevicePropertiesR0000(&p, 1));
  CHECK(strcmp(p.name, want.name) == 0 && p.totalGlobalMem == want.totalGlobalMem &&
            p.multiProcessorCount == want.multiProcessorCount,
        "R0000 properties differ from the plain ones: \"%s\" %zu", p.name, p.totalGlobalMem);
  HIP_EXPECT(hipGetDevicePropertiesR0000(&p, 2), hipErrorInvalidDevice);
}

// ROCm 6's hipDeviceProp_tR0600: name at 0, totalGlobalMem at 288,
// gcnArchName at 1160.
void GetDevicePropertiesR0600() {
  const hipDeviceProp_t want = Props(0);
  std::vector<unsigned char> buf(8192, 0xab);
  HIP_OK(hipGetDevicePropertiesR0600(buf.data(), 0));
  const char* name = reinterpret_cast<const char*>(buf.data());
  size_t total = 0;
  memcpy(&total, buf.data() + 288, sizeof total);
  const char* arch = reinterpret_cast<const char*>(buf.data() + 1160);
  CHECK(strcmp(name, want.name) == 0, "R0600 name \"%s\", expected \"%s\"", name, want.name);
  CHECK(total == want.totalGlobalMem, "R0600 totalGlobalMem %zu, expected %zu", total, want.totalGlobalMem);
  CHECK(strcmp(arch, want.gcnArchName) == 0, "R0600 gcnArchName \"%s\", expected \"%s\"", arch, want.gcnArchName);
  CHECK(buf[8191] == 0xab, "R0600 wrote past any plausible struct size");
  HIP_EXPECT(hipGetDevicePropertiesR0600(nullptr, 0), hipErrorInvalidValue);
}

// Asks for the larger of the two devices' memories: the device chosen has it.
template <class Fn>
void CheckChoose(Fn choose) {
  const size_t m0 = Props(0).totalGlobalMem;
  const size_t m1 = Props(1).totalGlobalMem;
  const size_t most = m0 > m1 ? m0 : m1;
  int d = -1;
  HIP_OK(choose(&d, most));
  CHECK(d == 0 || d == 1, "chose device %d", d);
  CHECK(Props(d).totalGlobalMem >= most, "chose device %d with %zu bytes, asked for %zu", d, Props(d).totalGlobalMem,
        most);
}

void ChooseDevice() {
  CheckChoose([](int* d, size_t mem) {
    hipDeviceProp_t want{};
    want.totalGlobalMem = mem;
    return hipChooseDevice(d, &want);
  });
  int d = 42;
  HIP_EXPECT(hipChooseDevice(&d, nullptr), hipErrorInvalidValue);
  CHECK(d == 42, "a failed hipChooseDevice wrote %d", d);
}

void ChooseDeviceR0000() {
  CheckChoose([](int* d, size_t mem) {
    hipDeviceProp_t want{};
    want.totalGlobalMem = mem;
    return hipChooseDeviceR0000(d, &want);
  });
  int d = 42;
  HIP_EXPECT(hipChooseDeviceR0000(&d, nullptr), hipErrorInvalidValue);
  CHECK(d == 42, "a failed hipChooseDeviceR0000 wrote %d", d);
}

void ChooseDeviceR0600() {
  CheckChoose([](int* d, size_t mem) {
    std::vector<unsigned char> want(8192, 0);
    memcpy(want.data() + 288, &mem, sizeof mem);
    return hipChooseDeviceR0600(d, want.data());
  });
  int d = 42;
  HIP_EXPECT(hipChooseDeviceR0600(&d, nullptr), hipErrorInvalidValue);
  CHECK(d == 42, "a failed hipChooseDeviceR0600 wrote %d", d);
}

void DeviceGetUuid() {
  hipUUID u0{}, u1{}, zero{};
  HIP_OK(hipDeviceGetUuid(&u0, 0));
  HIP_OK(hipDeviceGetUuid(&u1, 1));
  CHECK(memcmp(u0.bytes, u1.bytes, sizeof u0.bytes) != 0, "the two devices have one UUID");
  CHECK(memcmp(u0.bytes, zero.bytes, sizeof u0.bytes) != 0, "device 0's UUID is all zero");
  hipUUID again{};
  HIP_OK(hipDeviceGetUuid(&again, 0));
  CHECK(memcmp(u0.bytes, again.bytes, sizeof u0.bytes) == 0, "device 0's UUID changed");
  HIP_EXPECT(hipDeviceGetUuid(&u0, 2), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceGetUuid(nullptr, 0), hipErrorInvalidValue);
}

void DeviceGetPCIBusId() {
  char bus0[32] = {}, bus1[32] = {};
  HIP_OK(hipDeviceGetPCIBusId(bus0, sizeof bus0, 0));
  HIP_OK(hipDeviceGetPCIBusId(bus1, sizeof bus1, 1));
  const hipDeviceProp_t p = Props(1);
  char want[32];
  snprintf(want, sizeof want, "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  CHECK(strcmp(bus1, want) == 0, "device 1's bus id \"%s\", properties say \"%s\"", bus1, want);
  CHECK(strcmp(bus0, bus1) != 0, "both devices have bus id %s", bus0);
  HIP_EXPECT(hipDeviceGetPCIBusId(bus0, 8, 0), hipErrorInvalidValue);  // Too short.
  HIP_EXPECT(hipDeviceGetPCIBusId(bus0, sizeof bus0, 2), hipErrorInvalidDevice);
}

void DeviceGetByPCIBusId() {
  for (int d = 0; d < 2; ++d) {
    char bus[32] = {};
    HIP_OK(hipDeviceGetPCIBusId(bus, sizeof bus, d));
    int found = -1;
    HIP_OK(hipDeviceGetByPCIBusId(&found, bus));
    CHECK(found == d, "hipDeviceGetByPCIBusId(\"%s\") gave %d, expected %d", bus, found, d);
  }
  int found = 9;
  HIP_EXPECT(hipDeviceGetByPCIBusId(&found, "not a bus id"), hipErrorInvalidValue);
  CHECK(found == 9, "a failed lookup wrote %d", found);
}

void DeviceCanAccessPeer() {
  int can = -1;
  HIP_OK(hipDeviceCanAccessPeer(&can, 0, 1));
  CHECK(can == 1, "sim device 0 cannot access device 1");
  HIP_OK(hipDeviceCanAccessPeer(&can, 1, 0));
  CHECK(can == 1, "sim device 1 cannot access device 0");
  HIP_OK(hipDeviceCanAccessPeer(&can, 1, 1));
  CHECK(can == 0, "a device is its own peer");
  can = 5;
  HIP_EXPECT(hipDeviceCanAccessPeer(&can, 0, 2), hipErrorInvalidDevice);
  CHECK(can == 5, "a failed call wrote %d", can);
}

void DeviceGetP2PAttribute() {
  int v = -1;
  HIP_OK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 1, 0));
  CHECK(v == 1, "access supported %d", v);
  HIP_OK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrNativeAtomicSupported, 0, 1));
  CHECK(v == 1, "native atomics %d", v);
  HIP_OK(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrHipArrayAccessSupported, 0, 1));
  CHECK(v == 0, "array access %d", v);
  v = 8;
  HIP_EXPECT(hipDeviceGetP2PAttribute(&v, hipDevP2PAttrAccessSupported, 0, 0), hipErrorInvalidDevice);
  CHECK(v == 8, "a failed call wrote %d", v);
}

void DeviceEnablePeerAccess() {
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipDeviceEnablePeerAccess(0, 0));
  HIP_EXPECT(hipDeviceEnablePeerAccess(0, 0), hipErrorPeerAccessAlreadyEnabled);
  HIP_EXPECT(hipDeviceEnablePeerAccess(1, 0), hipErrorInvalidDevice);  // Itself.
  HIP_EXPECT(hipDeviceEnablePeerAccess(0, 1), hipErrorInvalidValue);
  HIP_OK(hipDeviceDisablePeerAccess(0));
}

void DeviceDisablePeerAccess() {
  HIP_EXPECT(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);
  HIP_OK(hipDeviceEnablePeerAccess(1, 0));
  HIP_OK(hipDeviceDisablePeerAccess(1));
  HIP_EXPECT(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);  // Really disabled.
  HIP_OK(hipDeviceEnablePeerAccess(1, 0));                                  // And can be enabled again.
  HIP_OK(hipDeviceDisablePeerAccess(1));
  HIP_EXPECT(hipDeviceDisablePeerAccess(2), hipErrorInvalidDevice);
}

void DeviceSetCacheConfig() {
  HIP_OK(hipDeviceSetCacheConfig(hipFuncCachePreferL1));
  HIP_EXPECT(hipDeviceSetCacheConfig(static_cast<hipFuncCache_t>(99)), hipErrorInvalidValue);
  hipFuncCache_t c = hipFuncCachePreferShared;
  HIP_OK(hipDeviceGetCacheConfig(&c));
  CHECK(c == hipFuncCachePreferNone, "cache config %d after setting one (the GPU has no such choice)", c);
}

void DeviceGetCacheConfig() {
  hipFuncCache_t c = hipFuncCachePreferEqual;
  HIP_OK(hipDeviceGetCacheConfig(&c));
  CHECK(c == hipFuncCachePreferNone, "cache config %d", c);
  HIP_EXPECT(hipDeviceGetCacheConfig(nullptr), hipErrorInvalidValue);
}

void DeviceGetStreamPriorityRange() {
  int least = 99, greatest = 99;
  HIP_OK(hipDeviceGetStreamPriorityRange(&least, &greatest));
  CHECK(least == 1 && greatest == -1, "priority range [%d, %d]", least, greatest);
  least = 99;
  HIP_OK(hipDeviceGetStreamPriorityRange(&least, nullptr));
  CHECK(least == 1, "least priority alone %d", least);
}

void DriverGetVersion() {
  int v = -1;
  HIP_OK(hipDriverGetVersion(&v));
  CHECK(v > 0, "driver version %d", v);
  HIP_EXPECT(hipDriverGetVersion(nullptr), hipErrorInvalidValue);
}

void RuntimeGetVersion() {
  int v = -1;
  HIP_OK(hipRuntimeGetVersion(&v));
  CHECK(v > 0, "runtime version %d", v);
  HIP_EXPECT(hipRuntimeGetVersion(nullptr), hipErrorInvalidValue);
}

void SetDeviceFlags() {
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleYield));
  unsigned flags = 0;
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleYield, "flags 0x%x after setting yield", flags);
  HIP_EXPECT(hipSetDeviceFlags(hipDeviceScheduleSpin | hipDeviceScheduleYield), hipErrorInvalidValue);
  HIP_EXPECT(hipSetDeviceFlags(0x40000000u), hipErrorInvalidValue);
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleYield, "a refused hipSetDeviceFlags left 0x%x", flags);
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) != hipDeviceScheduleYield, "device 0 took device 1's flags (0x%x)", flags);
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleAuto));
}

void GetDeviceFlags() {
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
  unsigned flags = 0;
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleBlockingSync, "flags 0x%x", flags);
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleAuto));
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleAuto, "flags 0x%x after auto", flags);
  HIP_EXPECT(hipGetDeviceFlags(nullptr), hipErrorInvalidValue);
}

void DeviceSynchronize() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  std::atomic<int> done{0};
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 5, kN);
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));
  HIP_OK(hipDeviceSynchronize());
  CHECK(done.load() == 1, "hipDeviceSynchronize returned before a non-blocking stream's work finished");
  CHECK_ALL(d, 5, "kernel before hipDeviceSynchronize");
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

// ---- Context stack and deprecated context management ---------------------------

hipCtx_t Primary(int device) {
  hipCtx_t ctx = nullptr;
  HIP_OK(hipDevicePrimaryCtxRetain(&ctx, device));
  return ctx;
}

int Current() {
  int d = -1;
  HIP_OK(hipGetDevice(&d));
  return d;
}

void CtxPushCurrent() {
  hipCtx_t c1 = Primary(1);
  HIP_OK(hipCtxPushCurrent(c1));
  CHECK(Current() == 1, "hipCtxPushCurrent(primary context of 1) left device %d current", Current());
  hipCtx_t cur = nullptr;
  HIP_OK(hipCtxGetCurrent(&cur));
  CHECK(cur == c1, "the pushed context is not current");
  int dummy = 0;
  HIP_EXPECT(hipCtxPushCurrent(nullptr), hipErrorInvalidContext);
  HIP_EXPECT(hipCtxPushCurrent(reinterpret_cast<hipCtx_t>(&dummy)), hipErrorInvalidContext);
  CHECK(Current() == 1, "a refused push changed the device to %d", Current());
  hipCtx_t popped = nullptr;
  HIP_OK(hipCtxPopCurrent(&popped));
  CHECK(popped == c1, "pop returned another context than the pushed one");
  HIP_EXPECT(hipCtxPopCurrent(&popped), hipErrorInvalidContext);  // The refused pushes pushed nothing.
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

void CtxPopCurrent() {
  hipCtx_t c0 = Primary(0), c1 = Primary(1);
  HIP_OK(hipCtxPushCurrent(c0));
  HIP_OK(hipCtxPushCurrent(c1));
  hipCtx_t popped = nullptr;
  HIP_OK(hipCtxPopCurrent(&popped));
  CHECK(popped == c1, "pop returned another context than the top one");
  CHECK(Current() == 0, "after the pop device %d is current, not the previous context's 0", Current());
  HIP_OK(hipCtxPopCurrent(nullptr));  // The output is optional.
  hipCtx_t untouched = reinterpret_cast<hipCtx_t>(0x1234);
  HIP_EXPECT(hipCtxPopCurrent(&untouched), hipErrorInvalidContext);  // Empty stack.
  CHECK(untouched == reinterpret_cast<hipCtx_t>(0x1234), "a failed pop wrote a context");
  HIP_OK(hipDevicePrimaryCtxRelease(0));
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

void CtxCreate() {
  hipCtx_t ctx = nullptr;
  HIP_OK(hipCtxCreate(&ctx, hipDeviceScheduleYield, 1));
  CHECK(ctx == Primary(1), "hipCtxCreate did not hand out device 1's primary context");
  HIP_OK(hipDevicePrimaryCtxRelease(1));
  CHECK(Current() == 1, "the created context is not current (device %d)", Current());
  unsigned flags = 0;
  HIP_OK(hipCtxGetFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleYield, "hipCtxCreate's flags read back as %#x", flags);
  // Every flag given is kept (clr), not just the scheduling ones.
  hipCtx_t mapped = nullptr;
  const unsigned all = hipDeviceScheduleBlockingSync | hipDeviceMapHost;
  HIP_OK(hipCtxCreate(&mapped, all, 1));
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK(flags == all, "hipCtxCreate(%#x) read back as %#x", all, flags);
  HIP_OK(hipCtxPopCurrent(&mapped));
  HIP_OK(hipDevicePrimaryCtxRelease(1));
  hipCtx_t untouched = reinterpret_cast<hipCtx_t>(0x1234);
  HIP_EXPECT(hipCtxCreate(&untouched, 0, 2), hipErrorInvalidValue);  // As clr: no device 2.
  HIP_EXPECT(hipCtxCreate(&untouched, 0x40000000u, 0), hipErrorInvalidValue);
  CHECK(untouched == reinterpret_cast<hipCtx_t>(0x1234), "a failed hipCtxCreate wrote a context");
  HIP_EXPECT(hipCtxCreate(nullptr, 0, 0), hipErrorInvalidValue);
  CHECK(Current() == 1, "a refused hipCtxCreate changed the device to %d", Current());
  HIP_OK(hipCtxDestroy(ctx));
  HIP_EXPECT(hipCtxPopCurrent(nullptr), hipErrorInvalidContext);  // Only the refused ones pushed nothing.
  HIP_OK(hipSetDeviceFlags(0));
}

void CtxDestroy() {
  hipCtx_t c0 = nullptr, c1 = nullptr;
  HIP_OK(hipCtxCreate(&c0, 0, 0));
  HIP_OK(hipCtxCreate(&c1, 0, 1));
  CHECK(Current() == 1, "device %d current after creating device 1's context", Current());
  HIP_OK(hipCtxDestroy(c1));
  CHECK(Current() == 0, "destroying the top context left device %d current, not 0", Current());
  hipCtx_t cur = nullptr;
  HIP_OK(hipCtxGetCurrent(&cur));
  CHECK(cur == c0, "the context under the destroyed one is not current");
  int dummy = 0;
  HIP_EXPECT(hipCtxDestroy(nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipCtxDestroy(reinterpret_cast<hipCtx_t>(&dummy)), hipErrorInvalidContext);
  HIP_OK(hipCtxDestroy(c0));
  HIP_EXPECT(hipCtxPopCurrent(nullptr), hipErrorInvalidContext);  // Both left the stack.
}

void CtxSynchronize() {
  hipStream_t s;
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  std::atomic<int> done{0};
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 6, kN);
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));
  HIP_OK(hipCtxSynchronize());
  CHECK(done.load() == 1, "hipCtxSynchronize returned before the current device's work finished");
  CHECK_ALL(d, 6, "kernel before hipCtxSynchronize");
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void CtxGetFlags() {
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleBlockingSync));
  unsigned flags = 0;
  HIP_OK(hipCtxGetFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleBlockingSync, "flags %#x", flags);
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipCtxGetFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) != hipDeviceScheduleBlockingSync, "device 0's flags on device 1: %#x", flags);
  HIP_EXPECT(hipCtxGetFlags(nullptr), hipErrorInvalidValue);
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipSetDeviceFlags(0));
}

void CtxGetApiVersion() {
  int runtime = 0, v = 0;
  HIP_OK(hipRuntimeGetVersion(&runtime));
  HIP_OK(hipCtxGetApiVersion(Primary(1), &v));
  CHECK(v == runtime && v > 0, "api version %d, runtime %d", v, runtime);
  int dummy = 0, untouched = -7;
  HIP_EXPECT(hipCtxGetApiVersion(reinterpret_cast<hipCtx_t>(&dummy), &untouched), hipErrorInvalidContext);
  CHECK(untouched == -7, "a failed hipCtxGetApiVersion wrote %d", untouched);
  HIP_EXPECT(hipCtxGetApiVersion(Primary(0), nullptr), hipErrorInvalidValue);
  HIP_OK(hipDevicePrimaryCtxRelease(0));
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

void CtxSetCacheConfig() {
  HIP_OK(hipCtxSetCacheConfig(hipFuncCachePreferShared));
  HIP_EXPECT(hipCtxSetCacheConfig(static_cast<hipFuncCache_t>(99)), hipErrorInvalidValue);
  hipFuncCache_t c = hipFuncCachePreferL1;
  HIP_OK(hipCtxGetCacheConfig(&c));
  CHECK(c == hipFuncCachePreferNone, "AMD GPUs have no cache knob, yet %d read back", c);
}

void CtxGetCacheConfig() {
  hipFuncCache_t c = hipFuncCachePreferL1, dev = hipFuncCachePreferShared;
  HIP_OK(hipCtxGetCacheConfig(&c));
  HIP_OK(hipDeviceGetCacheConfig(&dev));
  CHECK(c == dev && c == hipFuncCachePreferNone, "context %d, device %d", c, dev);
  HIP_EXPECT(hipCtxGetCacheConfig(nullptr), hipErrorInvalidValue);
}

void CtxEnablePeerAccess() {
  hipCtx_t p0 = Primary(0), p1 = Primary(1);
  HIP_OK(hipCtxEnablePeerAccess(p1, 0));
  HIP_EXPECT(hipCtxEnablePeerAccess(p1, 0), hipErrorPeerAccessAlreadyEnabled);
  HIP_EXPECT(hipCtxEnablePeerAccess(p0, 0), hipErrorInvalidDevice);  // Itself.
  HIP_EXPECT(hipCtxEnablePeerAccess(p1, 1), hipErrorInvalidValue);
  int dummy = 0;
  HIP_EXPECT(hipCtxEnablePeerAccess(reinterpret_cast<hipCtx_t>(&dummy), 0), hipErrorInvalidContext);
  HIP_OK(hipDeviceDisablePeerAccess(1));  // The device-level state is the same one.
  HIP_OK(hipDevicePrimaryCtxRelease(0));
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

void CtxDisablePeerAccess() {
  hipCtx_t p1 = Primary(1);
  HIP_EXPECT(hipCtxDisablePeerAccess(p1), hipErrorPeerAccessNotEnabled);
  HIP_OK(hipDeviceEnablePeerAccess(1, 0));
  HIP_OK(hipCtxDisablePeerAccess(p1));
  HIP_EXPECT(hipDeviceDisablePeerAccess(1), hipErrorPeerAccessNotEnabled);  // Really disabled.
  int dummy = 0;
  HIP_EXPECT(hipCtxDisablePeerAccess(reinterpret_cast<hipCtx_t>(&dummy)), hipErrorInvalidContext);
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

// ---- Contexts --------------------------------------------------------------------

void CtxGetCurrent() {
  hipCtx_t c0 = nullptr, c1 = nullptr, p1 = nullptr;
  HIP_OK(hipCtxGetCurrent(&c0));
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipCtxGetCurrent(&c1));
  HIP_OK(hipDevicePrimaryCtxRetain(&p1, 1));
  CHECK(c0 != nullptr && c0 != c1 && c1 == p1, "contexts %p (0), %p (1), primary of 1 %p", (void*)c0, (void*)c1,
        (void*)p1);
  HIP_OK(hipDevicePrimaryCtxRelease(1));
  HIP_EXPECT(hipCtxGetCurrent(nullptr), hipErrorInvalidValue);
}

void CtxSetCurrent() {
  hipCtx_t ctx = nullptr;
  HIP_OK(hipDevicePrimaryCtxRetain(&ctx, 1));
  HIP_OK(hipCtxSetCurrent(ctx));
  int device = -1;
  HIP_OK(hipGetDevice(&device));
  CHECK(device == 1, "hipCtxSetCurrent(primary context of 1) left device %d current", device);
  int dummy = 0;
  HIP_EXPECT(hipCtxSetCurrent(reinterpret_cast<hipCtx_t>(&dummy)), hipErrorInvalidContext);
  HIP_OK(hipGetDevice(&device));
  CHECK(device == 1, "a refused hipCtxSetCurrent changed the device to %d", device);
  // As clr: the context took the top of the thread's (empty) context stack;
  // nullptr pops it and leaves the current device alone.
  HIP_OK(hipCtxSetCurrent(nullptr));
  HIP_OK(hipGetDevice(&device));
  CHECK(device == 1, "hipCtxSetCurrent(nullptr) changed the device to %d", device);
  HIP_EXPECT(hipCtxPopCurrent(nullptr), hipErrorInvalidContext);
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

void CtxGetDevice() {
  hipDevice_t d = -1;
  HIP_OK(hipCtxGetDevice(&d));
  CHECK(d == 0, "hipCtxGetDevice gave %d", d);
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipCtxGetDevice(&d));
  CHECK(d == 1, "hipCtxGetDevice gave %d after hipSetDevice(1)", d);
  HIP_EXPECT(hipCtxGetDevice(nullptr), hipErrorInvalidValue);
}

void DevicePrimaryCtxRetain() {
  hipCtx_t a = nullptr, b = nullptr;
  HIP_OK(hipDevicePrimaryCtxRetain(&a, 0));
  HIP_OK(hipDevicePrimaryCtxRetain(&b, 1));
  CHECK(a != nullptr && b != nullptr && a != b, "primary contexts %p and %p", (void*)a, (void*)b);
  hipCtx_t current = nullptr;
  HIP_OK(hipCtxGetCurrent(&current));
  CHECK(current == a, "device 0's current context is not its primary context");
  hipCtx_t untouched = reinterpret_cast<hipCtx_t>(0x1234);
  HIP_EXPECT(hipDevicePrimaryCtxRetain(&untouched, 5), hipErrorInvalidDevice);
  CHECK(untouched == reinterpret_cast<hipCtx_t>(0x1234), "a failed retain wrote a context");
  HIP_EXPECT(hipDevicePrimaryCtxRetain(nullptr, 0), hipErrorInvalidValue);
  HIP_OK(hipDevicePrimaryCtxRelease(0));
  HIP_OK(hipDevicePrimaryCtxRelease(1));
}

void DevicePrimaryCtxRelease() {
  hipCtx_t ctx = nullptr;
  HIP_OK(hipDevicePrimaryCtxRetain(&ctx, 1));
  HIP_OK(hipDevicePrimaryCtxRelease(1));
  unsigned flags = 0;
  int active = 0;
  HIP_OK(hipDevicePrimaryCtxGetState(1, &flags, &active));
  CHECK(active == 1, "the primary context went inactive on release (HIP keeps it)");
  HIP_EXPECT(hipDevicePrimaryCtxRelease(2), hipErrorInvalidDevice);
}

void DevicePrimaryCtxGetState() {
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleSpin));
  unsigned flags = 99;
  int active = -1;
  HIP_OK(hipDevicePrimaryCtxGetState(1, &flags, &active));
  CHECK(active == 1 && (flags & hipDeviceScheduleMask) == hipDeviceScheduleSpin, "state: flags 0x%x, active %d", flags,
        active);
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleAuto));
  HIP_EXPECT(hipDevicePrimaryCtxGetState(1, nullptr, &active), hipErrorInvalidValue);
  HIP_EXPECT(hipDevicePrimaryCtxGetState(2, &flags, &active), hipErrorInvalidDevice);
}

void DevicePrimaryCtxSetFlags() {
  HIP_EXPECT(hipDevicePrimaryCtxSetFlags(0, hipDeviceScheduleYield), hipErrorContextAlreadyInUse);
  unsigned flags = 0;
  int active = 0;
  HIP_OK(hipDevicePrimaryCtxGetState(0, &flags, &active));
  CHECK((flags & hipDeviceScheduleMask) != hipDeviceScheduleYield, "a refused hipDevicePrimaryCtxSetFlags took effect");
  HIP_EXPECT(hipDevicePrimaryCtxSetFlags(2, 0), hipErrorInvalidDevice);
}

// ---- Streams -------------------------------------------------------------------------

void StreamCreate() {
  hipStream_t s = nullptr;
  HIP_OK(hipStreamCreate(&s));
  CHECK(s != nullptr, "no stream");
  unsigned flags = 99;
  int priority = 99;
  HIP_OK(hipStreamGetFlags(s, &flags));
  HIP_OK(hipStreamGetPriority(s, &priority));
  CHECK(flags == hipStreamDefault && priority == 0, "a new stream has flags %u, priority %d", flags, priority);
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 11, kN);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 11, "kernel on a new stream");
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamCreate(nullptr), hipErrorInvalidValue);
}

void StreamCreateWithFlags() {
  hipStream_t s = nullptr;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  unsigned flags = 0;
  HIP_OK(hipStreamGetFlags(s, &flags));
  CHECK(flags == hipStreamNonBlocking, "flags %u", flags);
  HIP_OK(hipStreamDestroy(s));
  hipStream_t untouched = reinterpret_cast<hipStream_t>(0x1);
  HIP_EXPECT(hipStreamCreateWithFlags(&untouched, 0x8), hipErrorInvalidValue);
  CHECK(untouched == reinterpret_cast<hipStream_t>(0x1), "a refused create wrote a stream");
}

void StreamCreateWithPriority() {
  hipStream_t hi, lo, clamped;
  HIP_OK(hipStreamCreateWithPriority(&hi, hipStreamNonBlocking, -1));
  HIP_OK(hipStreamCreateWithPriority(&lo, hipStreamDefault, 1));
  HIP_OK(hipStreamCreateWithPriority(&clamped, hipStreamDefault, -20));
  int p = 99;
  unsigned flags = 99;
  HIP_OK(hipStreamGetPriority(hi, &p));
  HIP_OK(hipStreamGetFlags(hi, &flags));
  CHECK(p == -1 && flags == hipStreamNonBlocking, "high: priority %d, flags %u", p, flags);
  HIP_OK(hipStreamGetPriority(lo, &p));
  CHECK(p == 1, "low: priority %d", p);
  HIP_OK(hipStreamGetPriority(clamped, &p));
  CHECK(p == -1, "priority -20 was not clamped to -1: %d", p);
  for (hipStream_t s : {hi, lo, clamped}) HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamCreateWithPriority(nullptr, 0, 0), hipErrorInvalidValue);
}

void StreamGetAttribute() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithPriority(&s, hipStreamDefault, -1));
  HiprLaunchAttributeValue v{};
  HIP_OK(hipStreamGetAttribute(s, 8, &v));
  CHECK(v.priority == -1, "priority attribute %d", v.priority);
  HIP_OK(hipStreamGetAttribute(s, 3, &v));
  CHECK(v.sync_policy == 1, "a new stream's sync policy %d (expected Auto)", v.sync_policy);
  HIP_OK(hipStreamGetAttribute(nullptr, 8, &v));
  CHECK(v.priority == 0, "null stream priority attribute %d", v.priority);
  HIP_EXPECT(hipStreamGetAttribute(s, 1, &v), hipErrorInvalidValue);  // Access policy window.
  HIP_EXPECT(hipStreamGetAttribute(s, 3, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamGetAttribute(s, 3, &v), hipErrorInvalidHandle);
}

void StreamSetAttribute() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HiprLaunchAttributeValue v{};
  v.sync_policy = 3;  // Yield.
  HIP_OK(hipStreamSetAttribute(s, 3, &v));
  HiprLaunchAttributeValue got{};
  HIP_OK(hipStreamGetAttribute(s, 3, &got));
  CHECK(got.sync_policy == 3, "sync policy %d after setting Yield", got.sync_policy);
  HIP_OK(hipStreamGetAttribute(nullptr, 3, &got));
  CHECK(got.sync_policy == 1, "setting a stream's policy changed the null stream's to %d", got.sync_policy);
  v.sync_policy = 4;
  HIP_OK(hipStreamSetAttribute(nullptr, 3, &v));
  HIP_OK(hipStreamGetAttribute(nullptr, 3, &got));
  CHECK(got.sync_policy == 4, "null stream policy %d", got.sync_policy);
  v.sync_policy = 1;
  HIP_OK(hipStreamSetAttribute(nullptr, 3, &v));
  v.sync_policy = 5;
  HIP_EXPECT(hipStreamSetAttribute(s, 3, &v), hipErrorInvalidValue);
  v.priority = 1;
  HIP_EXPECT(hipStreamSetAttribute(s, 8, &v), hipErrorInvalidValue);  // Fixed at creation.
  HIP_EXPECT(hipStreamSetAttribute(s, 3, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamGetAttribute(s, 3, &got));
  CHECK(got.sync_policy == 3, "refused calls changed the policy to %d", got.sync_policy);
  // Not while the stream captures.
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  v.sync_policy = 2;
  HIP_EXPECT(hipStreamSetAttribute(s, 3, &v), hipErrorStreamCaptureUnsupported);
  hipGraph_t g = nullptr;
  HIP_OK(hipStreamEndCapture(s, &g));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamSetAttribute(s, 3, &v), hipErrorInvalidHandle);
}

void StreamCopyAttributes() {
  hipStream_t a, b;
  HIP_OK(hipStreamCreate(&a));
  HIP_OK(hipStreamCreate(&b));
  HiprLaunchAttributeValue v{};
  v.sync_policy = 2;  // Spin.
  HIP_OK(hipStreamSetAttribute(a, 3, &v));
  HIP_OK(hipStreamCopyAttributes(b, a));
  HiprLaunchAttributeValue got{};
  HIP_OK(hipStreamGetAttribute(b, 3, &got));
  CHECK(got.sync_policy == 2, "copied policy %d", got.sync_policy);
  HIP_OK(hipStreamCopyAttributes(b, nullptr));  // The null stream's: Auto.
  HIP_OK(hipStreamGetAttribute(b, 3, &got));
  CHECK(got.sync_policy == 1, "policy %d after copying the null stream's", got.sync_policy);
  HIP_OK(hipStreamDestroy(a));
  HIP_EXPECT(hipStreamCopyAttributes(b, a), hipErrorInvalidHandle);
  HIP_OK(hipStreamDestroy(b));
}

// Every compute unit of `device` as a mask of `words` words.
std::vector<uint32_t> AllUnits(int device, size_t words) {
  std::vector<uint32_t> m(words, 0);
  for (int u = 0; u < Props(device).multiProcessorCount; ++u) m[u / 32] |= 1u << (u % 32);
  return m;
}

void ExtStreamCreateWithCUMask() {
  hipStream_t s = nullptr;
  const uint32_t mask[2] = {0x5u, 0x1u};  // Units 0, 2 and 32.
  HIP_OK(hipExtStreamCreateWithCUMask(&s, 2, mask));
  std::vector<uint32_t> got(4, 0xdeadu);
  HIP_OK(hipExtStreamGetCUMask(s, 4, got.data()));
  CHECK(got[0] == 0x5u && got[1] == (Props(0).multiProcessorCount > 32 ? 0x1u : 0u) && got[2] == 0 && got[3] == 0,
        "mask read back %x %x %x %x", got[0], got[1], got[2], got[3]);
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 23, kN);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 23, "kernel on a CU-masked stream");
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  // Units past the device's are dropped.
  std::vector<uint32_t> every(8, ~0u);
  HIP_OK(hipExtStreamCreateWithCUMask(&s, 8, every.data()));
  HIP_OK(hipExtStreamGetCUMask(s, 4, got.data()));
  CHECK(std::vector<uint32_t>(got.begin(), got.begin() + 4) == AllUnits(0, 4), "an all-ones mask read back %x %x",
        got[0], got[1]);
  HIP_OK(hipStreamDestroy(s));
  const uint32_t none[1] = {0};
  hipStream_t untouched = reinterpret_cast<hipStream_t>(0x1);
  HIP_EXPECT(hipExtStreamCreateWithCUMask(&untouched, 1, none), hipErrorInvalidValue);
  HIP_EXPECT(hipExtStreamCreateWithCUMask(&untouched, 0, mask), hipErrorInvalidValue);
  HIP_EXPECT(hipExtStreamCreateWithCUMask(&untouched, 1, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipExtStreamCreateWithCUMask(nullptr, 1, mask), hipErrorInvalidValue);
  CHECK(untouched == reinterpret_cast<hipStream_t>(0x1), "a refused create wrote a stream");
}

void ExtStreamGetCUMask() {
  std::vector<uint32_t> got(4, 0xdeadu);
  HIP_OK(hipExtStreamGetCUMask(nullptr, 4, got.data()));  // The null stream: every unit.
  CHECK(got == AllUnits(0, 4), "null stream mask %x %x %x %x", got[0], got[1], got[2], got[3]);
  hipStream_t s = nullptr;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipExtStreamGetCUMask(s, 4, got.data()));
  CHECK(got == AllUnits(0, 4), "a plain stream's mask %x", got[0]);
  HIP_EXPECT(hipExtStreamGetCUMask(s, 0, got.data()), hipErrorInvalidValue);
  HIP_EXPECT(hipExtStreamGetCUMask(s, 4, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipExtStreamGetCUMask(s, 4, got.data()), hipErrorInvalidHandle);
}

void StreamDestroy() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipStreamDestroy(s));
  unsigned flags = 0;
  // A handle that is no live stream: hipErrorContextIsDestroyed, as clr.
  HIP_EXPECT(hipStreamGetFlags(s, &flags), hipErrorContextIsDestroyed);
  HIP_EXPECT(hipStreamDestroy(s), hipErrorContextIsDestroyed);
  HIP_EXPECT(hipStreamDestroy(nullptr), hipErrorInvalidHandle);
  HIP_EXPECT(hipStreamDestroy(kStreamLegacy), hipErrorInvalidHandle);
  // Nor may a copy, a host function or an event record name it.
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, 64));
  std::vector<uint8_t> h(64, 1);
  HIP_EXPECT(hipMemcpyAsync(d, h.data(), h.size(), hipMemcpyHostToDevice, s), hipErrorContextIsDestroyed);
  HIP_EXPECT(hipMemcpyHtoDAsync(d, h.data(), h.size(), s), hipErrorContextIsDestroyed);
  HIP_EXPECT(hipMemcpyWithStream(h.data(), d, h.size(), hipMemcpyDeviceToHost, s), hipErrorContextIsDestroyed);
  HIP_EXPECT(hipLaunchHostFunc(s, [](void*) {}, nullptr), hipErrorContextIsDestroyed);
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  HIP_EXPECT(hipEventRecord(e, s), hipErrorContextIsDestroyed);
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipFree(d));
}

void StreamGetFlags() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  unsigned flags = 0;
  HIP_OK(hipStreamGetFlags(s, &flags));
  CHECK(flags == hipStreamNonBlocking, "flags %u", flags);
  HIP_OK(hipStreamGetFlags(hipStreamPerThread, &flags));
  CHECK(flags == hipStreamDefault, "per-thread stream flags %u", flags);
  flags = 77;
  HIP_EXPECT(hipStreamGetFlags(nullptr, &flags), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamGetFlags(s, nullptr), hipErrorInvalidValue);
  CHECK(flags == 77, "a failed call wrote %u", flags);
  HIP_OK(hipStreamDestroy(s));
}

void StreamGetFlagsSpt() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  unsigned flags = 0;
  HIP_OK(hipStreamGetFlags_spt(s, &flags));
  CHECK(flags == hipStreamNonBlocking, "flags %u", flags);
  flags = 77;
  HIP_OK(hipStreamGetFlags_spt(nullptr, &flags));  // The per-thread stream.
  CHECK(flags == hipStreamDefault, "the per-thread stream's flags %u", flags);
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamGetFlags_spt(s, &flags), hipErrorContextIsDestroyed);
}

void StreamGetPriority() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithPriority(&s, 0, 1));
  int p = 99;
  HIP_OK(hipStreamGetPriority(s, &p));
  CHECK(p == 1, "priority %d", p);
  HIP_OK(hipStreamGetPriority(nullptr, &p));
  CHECK(p == 0, "null stream priority %d", p);
  HIP_EXPECT(hipStreamGetPriority(s, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamGetPriority(kStreamLegacy, &p));
  CHECK(p == 0, "hipStreamLegacy priority %d", p);
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamGetPriority(s, &p), hipErrorContextIsDestroyed);
}

void StreamGetPrioritySpt() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithPriority(&s, 0, -1));
  int p = 99;
  HIP_OK(hipStreamGetPriority_spt(s, &p));
  CHECK(p == -1, "priority %d", p);
  p = 99;
  HIP_OK(hipStreamGetPriority_spt(nullptr, &p));
  CHECK(p == 0, "per-thread stream priority %d", p);
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamGetPriority_spt(s, &p), hipErrorContextIsDestroyed);
}

void StreamQuery() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipStreamQuery(s));  // Idle.
  Gate gate;
  HIP_OK(hipLaunchHostFunc(s, WaitAtGate, &gate));
  WaitEntered(gate);
  HIP_EXPECT(hipStreamQuery(s), hipErrorNotReady);
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipStreamQuery(s));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamQuery(s), hipErrorContextIsDestroyed);
  // The null stream is the current device's: device 1's, held by a host
  // function, is busy; device 0's is idle, also after a call there.
  HIP_OK(hipSetDevice(1));
  Gate held;
  HIP_OK(hipLaunchHostFunc(nullptr, WaitAtGate, &held));
  WaitEntered(held);
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipStreamQuery(nullptr));
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  HIP_OK(hipMemGetInfo(&free_bytes, &total_bytes));
  HIP_OK(hipSetDevice(1));
  HIP_EXPECT(hipStreamQuery(nullptr), hipErrorNotReady);
  held.open.store(1);
  HIP_OK(hipStreamSynchronize(nullptr));
  HIP_OK(hipStreamQuery(nullptr));
  HIP_OK(hipSetDevice(0));
}

void StreamQuerySpt() {
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  HIP_OK(hipStreamQuery_spt(nullptr));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(hipStreamPerThread, WaitAtGate, &gate));
  WaitEntered(gate);
  HIP_EXPECT(hipStreamQuery_spt(nullptr), hipErrorNotReady);  // null: the per-thread stream.
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  HIP_OK(hipStreamQuery_spt(nullptr));
}

void StreamSynchronize() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  std::atomic<int> done{0};
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 21, kN);
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(done.load() == 1, "hipStreamSynchronize returned before the stream's host function finished");
  CHECK_ALL(d, 21, "kernel before hipStreamSynchronize");
  // hipStreamLegacy is the legacy null stream: it waits for the blocking
  // stream's work.
  done.store(0);
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));
  HIP_OK(hipStreamSynchronize(kStreamLegacy));
  CHECK(done.load() == 1, "hipStreamSynchronize(hipStreamLegacy) returned before a blocking stream's work");
  HIP_OK(hipStreamQuery(kStreamLegacy));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamSynchronize(s), hipErrorContextIsDestroyed);
  // The null stream is the current device's, whichever device the last
  // call before used: device 1's host function, a call on device 0, then
  // device 1's null stream synchronized.
  std::atomic<int> late{0};
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipLaunchHostFunc(nullptr, SleepThenSet, &late));
  HIP_OK(hipSetDevice(0));
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  HIP_OK(hipMemGetInfo(&free_bytes, &total_bytes));
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipStreamSynchronize(nullptr));
  CHECK(late.load() == 1, "hipStreamSynchronize(null) on device 1 returned before its host function finished");
  HIP_OK(hipSetDevice(0));
}

void StreamSynchronizeSpt() {
  std::atomic<int> done{0};
  HIP_OK(hipLaunchHostFunc(hipStreamPerThread, SleepThenSet, &done));
  HIP_OK(hipStreamSynchronize_spt(nullptr));  // null: the per-thread stream.
  CHECK(done.load() == 1, "hipStreamSynchronize_spt returned before the per-thread stream's work finished");
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamSynchronize_spt(s), hipErrorContextIsDestroyed);
}

// `wait(stream, event, flags)`: the stream waits for a gated stream's event.
template <class Wait>
void CheckStreamWaitEvent(Wait wait, hipStream_t waiter) {
  hipStream_t gated;
  HIP_OK(hipStreamCreateWithFlags(&gated, hipStreamNonBlocking));
  hipEvent_t e;
  HIP_OK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(gated, WaitAtGate, &gate));
  HIP_OK(hipEventRecord(e, gated));
  HIP_OK(wait(waiter, e, 0));
  std::atomic<int> after{0};
  HIP_OK(hipLaunchHostFunc(waiter, SleepThenSet, &after));
  WaitEntered(gate);
  usleep(100 * 1000);
  CHECK(after.load() == 0, "the waiting stream ran past hipStreamWaitEvent before the event");
  HIP_EXPECT(hipStreamQuery(waiter), hipErrorNotReady);
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(waiter));
  CHECK(after.load() == 1, "the waiting stream's work did not run");
  HIP_EXPECT(wait(waiter, e, 1), hipErrorInvalidValue);
  HIP_EXPECT(wait(waiter, nullptr, 0), hipErrorInvalidHandle);
  HIP_OK(hipStreamSynchronize(gated));
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(gated));
}

// Stream memory operations. The waits run on non-blocking streams: a held
// blocking stream would hold the null stream, and every blocking call, too.
uint64_t ReadValue(const void* d, size_t bytes, hipStream_t s) {
  uint64_t v = 0;
  HIP_OK(hipMemcpyAsync(&v, d, bytes, hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  return v;
}

void StreamWriteValue32() {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, 16));
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  // On s: a memset on the null stream is not ordered with a non-blocking
  // stream, and could land after the write.
  HIP_OK(hipMemsetAsync(d, 0, 16, s));
  HIP_OK(hipStreamWriteValue32(s, static_cast<char*>(d) + 4, 0xABCD1234u, 0));
  CHECK(ReadValue(d, 8, s) == 0xABCD123400000000ull, "hipStreamWriteValue32 wrote %#llx",
        static_cast<unsigned long long>(ReadValue(d, 8, s)));
  std::vector<uint32_t> host(4, 0);
  HIP_EXPECT(hipStreamWriteValue32(s, host.data(), 1, 0), hipErrorInvalidValue);  // Host memory.
  HIP_EXPECT(hipStreamWriteValue32(s, static_cast<char*>(d) + 2, 1, 0), hipErrorInvalidValue);  // Unaligned.
  HIP_EXPECT(hipStreamWriteValue32(s, static_cast<char*>(d) + 16, 1, 0), hipErrorInvalidValue);  // Past the end.
  CHECK(ReadValue(d, 8, s) == 0xABCD123400000000ull, "a refused write changed memory");
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void StreamWriteValue64() {
  void* d = nullptr;
  HIP_OK(hipMalloc(&d, 16));
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipStreamWriteValue64(s, static_cast<char*>(d) + 8, 0x0123456789ABCDEFull, 0));
  CHECK(ReadValue(static_cast<char*>(d) + 8, 8, s) == 0x0123456789ABCDEFull, "hipStreamWriteValue64 wrote wrong");
  HIP_EXPECT(hipStreamWriteValue64(s, static_cast<char*>(d) + 4, 1, 0), hipErrorInvalidValue);  // Unaligned.
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

HiprBatchMemOp ValueOp(int operation, void* address, uint64_t value, unsigned flags = 0) {
  HiprBatchMemOp op = {};
  op.value_op.operation = operation;
  op.value_op.address = address;
  if (operation == kOpWait64 || operation == kOpWrite64)
    op.value_op.value64 = value;
  else
    op.value_op.value = static_cast<uint32_t>(value);
  op.value_op.flags = flags;
  return op;
}

void StreamBatchMemOp() {
  void* flag = nullptr;
  void* out = nullptr;
  HIP_OK(hipMalloc(&flag, 16));
  HIP_OK(hipMalloc(&out, 8));
  hipStream_t a, b;
  HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  // In array order: write 1, wait for 1, write 0 (met at once, then reset),
  // a barrier and a flush, and a 64-bit write.
  HIP_OK(hipMemsetAsync(flag, 0xff, 16, a));
  HiprBatchMemOp seq[] = {ValueOp(kOpWrite32, flag, 1), ValueOp(kOpWait32, flag, 1, hipStreamWaitValueEq),
                          ValueOp(kOpWrite32, flag, 0), {}, {},
                          ValueOp(kOpWrite64, static_cast<char*>(flag) + 8, 0x1122334455667788ull)};
  seq[3].operation = kOpBarrier;
  seq[4].operation = kOpFlush;
  HIP_OK(hipStreamBatchMemOp(a, 6, seq, 0));
  CHECK(ReadValue(flag, 8, a) == 0xffffffff00000000ull, "the batch left %#llx, not its last write",
        static_cast<unsigned long long>(ReadValue(flag, 8, a)));
  CHECK(ReadValue(static_cast<char*>(flag) + 8, 8, a) == 0x1122334455667788ull, "the 64-bit write did not land");
  // A batched wait holds its stream until another stream meets it.
  HIP_OK(hipMemsetAsync(out, 0, 8, b));
  HIP_OK(hipStreamSynchronize(b));
  HiprBatchMemOp wait[] = {ValueOp(kOpWait64, static_cast<char*>(flag) + 8, 0x2000000000000000ull,
                                   hipStreamWaitValueGte)};
  HIP_OK(hipStreamBatchMemOp(a, 1, wait, 0));
  HIP_OK(hipMemsetAsync(out, 7, 8, a));
  usleep(30 * 1000);
  CHECK(hipStreamQuery(a) == hipErrorNotReady, "the stream went past an unmet batched wait");
  CHECK(ReadValue(out, 8, b) == 0, "work after an unmet batched wait ran");
  HIP_OK(hipStreamWriteValue64(b, static_cast<char*>(flag) + 8, 0x2000000000000001ull, 0));
  HIP_OK(hipStreamSynchronize(a));
  CHECK(ReadValue(out, 8, b) == 0x0707070707070707ull, "work after the batched wait did not run");
  // Refusals queue nothing: the good write before a bad operation did not land.
  std::vector<uint32_t> host(2, 0);
  HiprBatchMemOp bad[] = {ValueOp(kOpWrite32, flag, 42), ValueOp(kOpWrite32, host.data(), 1)};
  HIP_EXPECT(hipStreamBatchMemOp(a, 2, bad, 0), hipErrorInvalidValue);
  bad[1] = ValueOp(kOpWait32, flag, 1, 7);  // No such condition.
  HIP_EXPECT(hipStreamBatchMemOp(a, 2, bad, 0), hipErrorInvalidValue);
  bad[1].operation = 9;
  HIP_EXPECT(hipStreamBatchMemOp(a, 2, bad, 0), hipErrorInvalidValue);
  bad[1] = ValueOp(kOpWrite64, static_cast<char*>(flag) + 4, 1);  // Unaligned.
  HIP_EXPECT(hipStreamBatchMemOp(a, 2, bad, 0), hipErrorInvalidValue);
  CHECK(ReadValue(flag, 4, a) == 0, "a refused batch wrote its first operation");
  HIP_EXPECT(hipStreamBatchMemOp(a, 0, seq, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamBatchMemOp(a, 257, seq, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamBatchMemOp(a, 1, nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamBatchMemOp(a, 1, seq, 1), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(a));
  HIP_OK(hipStreamDestroy(b));
  HIP_OK(hipFree(flag));
  HIP_OK(hipFree(out));
}

hipGraphExec_t Instantiate(hipGraph_t g);  // Below, with the graph rows.
void LaunchAndWait(hipGraphExec_t exec);

// A graph of one batch node: write 64 bits, write a flag, wait for it,
// flush; then the node's parameters read back, changed in the graph and in
// the executable graph.
void GraphAddBatchMemOpNode() {
  uint64_t* mem = nullptr;
  HIP_OK(hipMalloc(&mem, 16));
  HIP_OK(hipMemset(mem, 0, 16));
  HiprBatchMemOp ops[4] = {ValueOp(kOpWrite64, mem, 0x1122334455667788ull), ValueOp(kOpWrite32, mem + 1, 7),
                           ValueOp(kOpWait32, mem + 1, 7, hipStreamWaitValueEq), {}};
  ops[3].operation = kOpFlush;
  HiprBatchMemOpNodeParams params = {nullptr, 4, ops, 0};
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  hipGraphNode_t node = nullptr;
  HIP_OK(hipGraphAddBatchMemOpNode(&node, g, nullptr, 0, &params));
  hipGraphNodeType type = hipGraphNodeTypeCount;
  HIP_OK(hipGraphNodeGetType(node, &type));
  CHECK(type == kBatchMemOpNodeType, "batch node type %d", type);
  hipGraphExec_t exec = Instantiate(g);
  LaunchAndWait(exec);
  uint64_t back[2] = {};
  HIP_OK(hipMemcpy(back, mem, sizeof back, hipMemcpyDeviceToHost));
  CHECK(back[0] == 0x1122334455667788ull && back[1] == 7, "the batch node wrote %#llx and %llu",
        static_cast<unsigned long long>(back[0]), static_cast<unsigned long long>(back[1]));
  // A batched wait in a graph holds the stream it is launched on.
  hipGraph_t held = nullptr;
  HIP_OK(hipGraphCreate(&held, 0));
  HiprBatchMemOp wait[1] = {ValueOp(kOpWait64, mem, 0x2000000000000000ull, hipStreamWaitValueGte)};
  HiprBatchMemOpNodeParams wait_params = {nullptr, 1, wait, 0};
  hipGraphNode_t w = nullptr;
  HIP_OK(hipGraphAddBatchMemOpNode(&w, held, nullptr, 0, &wait_params));
  hipMemsetParams ms = {};
  ms.dst = mem + 1;
  ms.elementSize = 4;
  ms.value = 0x55;
  ms.width = 2;
  ms.height = 1;
  hipGraphNode_t after = nullptr;
  HIP_OK(hipGraphAddMemsetNode(&after, held, &w, 1, &ms));
  hipGraphExec_t held_exec = Instantiate(held);
  hipStream_t a, b;
  HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  HIP_OK(hipGraphLaunch(held_exec, a));
  usleep(30 * 1000);
  CHECK(hipStreamQuery(a) == hipErrorNotReady, "a graph went past its unmet batched wait");
  CHECK(ReadValue(mem + 1, 8, b) == 7, "work after a graph's unmet batched wait ran");
  HIP_OK(hipStreamWriteValue64(b, mem, 0x2000000000000001ull, 0));
  HIP_OK(hipStreamSynchronize(a));
  CHECK(ReadValue(mem + 1, 8, b) == 0x5500000055ull, "the graph's work after its wait did not run");
  HIP_OK(hipGraphExecDestroy(held_exec));
  HIP_OK(hipGraphDestroy(held));
  HIP_OK(hipStreamDestroy(a));
  HIP_OK(hipStreamDestroy(b));
  // Bad parameters.
  hipGraphNode_t n = nullptr;
  HiprBatchMemOpNodeParams bad = {nullptr, 0, ops, 0};
  HIP_EXPECT(hipGraphAddBatchMemOpNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);
  bad = {nullptr, 1, nullptr, 0};
  HIP_EXPECT(hipGraphAddBatchMemOpNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);
  bad = {nullptr, 4, ops, 1};
  HIP_EXPECT(hipGraphAddBatchMemOpNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);
  uint64_t host = 0;
  HiprBatchMemOp on_host[1] = {ValueOp(kOpWrite64, &host, 1)};
  bad = {nullptr, 1, on_host, 0};
  HIP_EXPECT(hipGraphAddBatchMemOpNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphAddBatchMemOpNode(&n, g, nullptr, 0, nullptr), hipErrorInvalidValue);
  CHECK(n == nullptr, "a refused batch node was handed out");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(mem));
}

// One graph with a batch node and a copy to host memory, so the client
// replays it: the parameters read back, then changed in the graph (a new
// executable graph sees it) and in the executable graph.
void GraphBatchMemOpNodeParams() {
  uint32_t* mem = nullptr;
  HIP_OK(hipMalloc(&mem, 8));
  HIP_OK(hipMemset(mem, 0, 8));
  HiprBatchMemOp ops[2] = {ValueOp(kOpWrite32, mem, 41), {}};
  ops[1].operation = kOpBarrier;
  HiprBatchMemOpNodeParams params = {nullptr, 2, ops, 0};
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  hipGraphNode_t node = nullptr;
  HIP_OK(hipGraphAddBatchMemOpNode(&node, g, nullptr, 0, &params));
  uint32_t host = 0;
  hipGraphNode_t down = nullptr;
  HIP_OK(hipGraphAddMemcpyNode1D(&down, g, &node, 1, &host, mem, sizeof host, hipMemcpyDeviceToHost));
  HiprBatchMemOpNodeParams got = {};
  HIP_OK(hipGraphBatchMemOpNodeGetParams(node, &got));
  CHECK(got.count == 2 && got.flags == 0 && got.paramArray != nullptr && got.paramArray != ops &&
            memcmp(got.paramArray, ops, sizeof ops) == 0,
        "read back %u operations", got.count);
  hipGraphExec_t exec = Instantiate(g);
  LaunchAndWait(exec);
  CHECK(host == 41, "the replayed batch node wrote %u", host);
  ops[0].value_op.value = 42;
  HIP_OK(hipGraphBatchMemOpNodeSetParams(node, &params));
  hipGraphExec_t exec2 = Instantiate(g);
  LaunchAndWait(exec2);
  CHECK(host == 42, "after SetParams the batch node wrote %u", host);
  LaunchAndWait(exec);
  CHECK(host == 41, "the older executable graph changed with its graph: %u", host);
  ops[0].value_op.value = 43;
  HIP_OK(hipGraphExecBatchMemOpNodeSetParams(exec, node, &params));
  LaunchAndWait(exec);
  CHECK(host == 43, "after ExecSetParams the batch node wrote %u", host);
  HiprBatchMemOpNodeParams bad = {nullptr, 2, ops, 3};
  HIP_EXPECT(hipGraphBatchMemOpNodeSetParams(node, &bad), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphExecBatchMemOpNodeSetParams(exec, node, &bad), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphBatchMemOpNodeGetParams(down, &got), hipErrorInvalidValue);  // A copy node.
  HIP_EXPECT(hipGraphBatchMemOpNodeGetParams(node, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphExecDestroy(exec2));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(mem));
}

uint64_t GraphMemUsed(int device, int attr = kGraphMemUsedCurrent) {
  uint64_t v = ~0ull;
  HIP_OK(hipDeviceGetGraphMemAttribute(device, attr, &v));
  return v;
}

HiprMemAllocNodeParams AllocParams(int device, size_t bytes) {
  HiprMemAllocNodeParams p = {};
  p.poolProps.allocType = hipMemAllocationTypePinned;
  p.poolProps.location.type = hipMemLocationTypeDevice;
  p.poolProps.location.id = device;
  p.bytesize = bytes;
  return p;
}

// alloc -> memset -> copy to host -> free, on device 1; launched twice.
void GraphAddMemAllocNode() {
  const uint64_t used_before = GraphMemUsed(1);
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  hipMemAccessDesc access = {};
  access.location.type = hipMemLocationTypeDevice;
  access.location.id = 0;
  access.flags = hipMemAccessFlagsProtReadWrite;
  HiprMemAllocNodeParams params = AllocParams(1, 8192);
  params.accessDescs = &access;
  params.accessDescCount = 1;
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  CHECK(params.dptr != nullptr, "no address from the allocation node");
  hipPointerAttribute_t attr = {};
  HIP_OK(hipPointerGetAttributes(&attr, params.dptr));
  CHECK(attr.memoryType == hipMemoryTypeDevice && attr.device == 1, "the node's memory: type %d on device %d",
        static_cast<int>(attr.memoryType), attr.device);
  CHECK(GraphMemUsed(1) - used_before == 8192, "graph memory in use grew by %llu",
        static_cast<unsigned long long>(GraphMemUsed(1) - used_before));
  hipMemsetParams ms = {};
  ms.dst = params.dptr;
  ms.elementSize = 4;
  ms.value = 0x600DF00Du;
  ms.width = 2048;
  ms.height = 1;
  hipGraphNode_t set = nullptr;
  HIP_OK(hipGraphAddMemsetNode(&set, g, &alloc, 1, &ms));
  std::vector<uint32_t> host(2048, 0);
  hipGraphNode_t down = nullptr;
  HIP_OK(hipGraphAddMemcpyNode1D(&down, g, &set, 1, host.data(), params.dptr, 8192, hipMemcpyDeviceToHost));
  hipGraphNode_t free_node = nullptr;
  HIP_OK(hipGraphAddMemFreeNode(&free_node, g, &down, 1, params.dptr));
  hipGraphNodeType type = hipGraphNodeTypeCount;
  HIP_OK(hipGraphNodeGetType(alloc, &type));
  CHECK(type == kMemAllocNodeType, "allocation node type %d", type);
  HIP_OK(hipGraphNodeGetType(free_node, &type));
  CHECK(type == kMemFreeNodeType, "free node type %d", type);
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  HIP_OK(hipSetDevice(1));  // The graph's device: launched on its null stream.
  for (int launch = 0; launch < 2; ++launch) {
    std::fill(host.begin(), host.end(), 0u);
    HIP_OK(hipGraphLaunch(exec, nullptr));
    HIP_OK(hipStreamSynchronize(nullptr));
    for (size_t i = 0; i < host.size(); ++i)
      CHECK(host[i] == 0x600DF00Du, "launch %d: word %zu is %#x", launch, i, host[i]);
    // hipFree of graph memory ends the application's use; the graph keeps it.
    if (launch == 0) HIP_OK(hipFree(params.dptr));
  }
  HIP_OK(hipSetDevice(0));
  // The executable graph holds the memory after its graph is gone.
  HIP_OK(hipGraphDestroy(g));
  CHECK(GraphMemUsed(1) - used_before == 8192, "graph memory went with the graph but not its executable graph");
  HIP_OK(hipGraphExecDestroy(exec));
  CHECK(GraphMemUsed(1) == used_before, "graph memory in use is %llu after its graphs went, was %llu",
        static_cast<unsigned long long>(GraphMemUsed(1)), static_cast<unsigned long long>(used_before));
  // Bad parameters.
  HIP_OK(hipGraphCreate(&g, 0));
  hipGraphNode_t n = nullptr;
  HiprMemAllocNodeParams bad = AllocParams(0, 0);
  HIP_EXPECT(hipGraphAddMemAllocNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);  // Zero bytes.
  bad = AllocParams(2, 64);
  HIP_EXPECT(hipGraphAddMemAllocNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);  // No device 2.
  bad = AllocParams(0, 64);
  bad.poolProps.allocType = hipMemAllocationTypeInvalid;
  HIP_EXPECT(hipGraphAddMemAllocNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);
  bad = AllocParams(0, 64);
  bad.accessDescCount = 1;  // With no descriptors.
  HIP_EXPECT(hipGraphAddMemAllocNode(&n, g, nullptr, 0, &bad), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphAddMemAllocNode(&n, g, nullptr, 0, nullptr), hipErrorInvalidValue);
  CHECK(n == nullptr, "a refused node was handed out");
  HIP_OK(hipGraphDestroy(g));
}

void GraphMemAllocNodeGetParams() {
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  hipMemAccessDesc access[2] = {};
  for (int d = 0; d < 2; ++d) {
    access[d].location.type = hipMemLocationTypeDevice;
    access[d].location.id = d;
    access[d].flags = hipMemAccessFlagsProtReadWrite;
  }
  HiprMemAllocNodeParams params = AllocParams(0, 1000);
  params.accessDescs = access;
  params.accessDescCount = 2;
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  HiprMemAllocNodeParams back = {};
  HIP_OK(hipGraphMemAllocNodeGetParams(alloc, &back));
  CHECK(back.dptr == params.dptr && back.bytesize == 1000 && back.poolProps.location.id == 0 &&
            back.accessDescCount == 2 && back.accessDescs != nullptr && back.accessDescs[1].location.id == 1,
        "read back: %p, %zu bytes, device %d, %zu descriptors", back.dptr, back.bytesize, back.poolProps.location.id,
        back.accessDescCount);
  hipGraphNode_t empty = nullptr;
  HIP_OK(hipGraphAddEmptyNode(&empty, g, nullptr, 0));
  HIP_EXPECT(hipGraphMemAllocNodeGetParams(empty, &back), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphMemAllocNodeGetParams(alloc, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

void GraphAddMemFreeNode() {
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  HiprMemAllocNodeParams params = AllocParams(0, 256);
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  hipGraphNode_t free_node = nullptr;
  HIP_OK(hipGraphAddMemFreeNode(&free_node, g, &alloc, 1, params.dptr));
  void* plain = nullptr;
  HIP_OK(hipMalloc(&plain, 256));
  hipGraphNode_t n = nullptr;
  HIP_EXPECT(hipGraphAddMemFreeNode(&n, g, nullptr, 0, plain), hipErrorInvalidValue);  // Not graph memory.
  HIP_EXPECT(hipGraphAddMemFreeNode(&n, g, nullptr, 0, static_cast<char*>(params.dptr) + 8), hipErrorInvalidValue);
  CHECK(n == nullptr, "a refused free node was handed out");
  HIP_OK(hipFree(plain));
  HIP_OK(hipGraphDestroy(g));
}

void DrvGraphAddMemFreeNode() {
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  HiprMemAllocNodeParams params = AllocParams(1, 512);
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  hipGraphNode_t free_node = nullptr;
  HIP_OK(hipDrvGraphAddMemFreeNode(&free_node, g, &alloc, 1, params.dptr));
  void* got = nullptr;
  HIP_OK(hipGraphMemFreeNodeGetParams(free_node, &got));
  CHECK(got == params.dptr, "the driver-API free node frees %p, not %p", got, params.dptr);
  hipGraphNode_t n = nullptr;
  HIP_EXPECT(hipDrvGraphAddMemFreeNode(&n, g, nullptr, 0, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

void GraphMemFreeNodeGetParams() {
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  HiprMemAllocNodeParams params = AllocParams(0, 128);
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  hipGraphNode_t free_node = nullptr;
  HIP_OK(hipGraphAddMemFreeNode(&free_node, g, &alloc, 1, params.dptr));
  void* got = nullptr;
  HIP_OK(hipGraphMemFreeNodeGetParams(free_node, &got));
  CHECK(got == params.dptr, "the free node frees %p, not %p", got, params.dptr);
  HIP_EXPECT(hipGraphMemFreeNodeGetParams(alloc, &got), hipErrorInvalidValue);  // An allocation node.
  HIP_EXPECT(hipGraphMemFreeNodeGetParams(free_node, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

void DeviceGetGraphMemAttribute() {
  const uint64_t before = GraphMemUsed(0);
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  HiprMemAllocNodeParams params = AllocParams(0, 1u << 20);
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  CHECK(GraphMemUsed(0) == before + (1u << 20), "in use: %llu", static_cast<unsigned long long>(GraphMemUsed(0)));
  CHECK(GraphMemUsed(0, kGraphMemReservedCurrent) == GraphMemUsed(0), "reserved differs from used");
  CHECK(GraphMemUsed(0, kGraphMemUsedHigh) >= before + (1u << 20), "the high watermark is below what is in use");
  HIP_OK(hipGraphDestroy(g));
  CHECK(GraphMemUsed(0) == before, "in use after the graph went: %llu", static_cast<unsigned long long>(GraphMemUsed(0)));
  CHECK(GraphMemUsed(0, kGraphMemReservedHigh) >= before + (1u << 20), "the high watermark forgot the peak");
  uint64_t v = 0;
  HIP_EXPECT(hipDeviceGetGraphMemAttribute(0, 9, &v), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceGetGraphMemAttribute(5, kGraphMemUsedCurrent, &v), hipErrorInvalidDevice);
  HIP_EXPECT(hipDeviceGetGraphMemAttribute(0, kGraphMemUsedCurrent, nullptr), hipErrorInvalidValue);
}

void DeviceSetGraphMemAttribute() {
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  HiprMemAllocNodeParams params = AllocParams(1, 4096);
  hipGraphNode_t alloc = nullptr;
  HIP_OK(hipGraphAddMemAllocNode(&alloc, g, nullptr, 0, &params));
  HIP_OK(hipGraphDestroy(g));
  uint64_t zero = 0;
  uint64_t five = 5;
  HIP_OK(hipDeviceSetGraphMemAttribute(1, kGraphMemUsedHigh, &zero));
  CHECK(GraphMemUsed(1, kGraphMemUsedHigh) == GraphMemUsed(1), "a reset watermark is %llu, in use %llu",
        static_cast<unsigned long long>(GraphMemUsed(1, kGraphMemUsedHigh)),
        static_cast<unsigned long long>(GraphMemUsed(1)));
  HIP_OK(hipDeviceSetGraphMemAttribute(1, kGraphMemReservedHigh, &zero));
  HIP_EXPECT(hipDeviceSetGraphMemAttribute(0, kGraphMemUsedHigh, &five), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceSetGraphMemAttribute(0, kGraphMemUsedCurrent, &zero), hipErrorInvalidValue);
  HIP_EXPECT(hipDeviceSetGraphMemAttribute(2, kGraphMemUsedHigh, &zero), hipErrorInvalidDevice);
}

// Queues a wait on `a`, then a memset after it; checks the memset waits
// until `release` (written by stream `b`) satisfies the wait. `pre` is the
// value in place before, `release` one that meets the condition.
void ExpectWaitHolds(hipStream_t a, hipStream_t b, void* flag, void* out, size_t bytes, uint64_t pre,
                     uint64_t release, unsigned flags, uint64_t value, uint64_t mask, const char* what) {
  HIP_OK(hipMemsetAsync(out, 0, 8, b));
  if (bytes == 4)
    HIP_OK(hipStreamWriteValue32(b, flag, static_cast<uint32_t>(pre), 0));
  else
    HIP_OK(hipStreamWriteValue64(b, flag, pre, 0));
  HIP_OK(hipStreamSynchronize(b));
  if (bytes == 4)
    HIP_OK(hipStreamWaitValue32(a, flag, static_cast<uint32_t>(value), flags, static_cast<uint32_t>(mask)));
  else
    HIP_OK(hipStreamWaitValue64(a, flag, value, flags, mask));
  HIP_OK(hipMemsetAsync(out, 7, 8, a));
  usleep(30 * 1000);
  CHECK(hipStreamQuery(a) == hipErrorNotReady, "%s: the stream went past an unmet wait", what);
  CHECK(ReadValue(out, 8, b) == 0, "%s: work after an unmet wait ran", what);
  if (bytes == 4)
    HIP_OK(hipStreamWriteValue32(b, flag, static_cast<uint32_t>(release), 0));
  else
    HIP_OK(hipStreamWriteValue64(b, flag, release, 0));
  HIP_OK(hipStreamSynchronize(a));
  CHECK(ReadValue(out, 8, b) == 0x0707070707070707ull, "%s: work after the wait did not run", what);
}

void StreamWaitValue32() {
  void* flag = nullptr;
  void* out = nullptr;
  HIP_OK(hipMalloc(&flag, 8));
  HIP_OK(hipMalloc(&out, 8));
  hipStream_t a, b;
  HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  ExpectWaitHolds(a, b, flag, out, 4, 4, 5, hipStreamWaitValueGte, 5, 0xffffffffu, "Gte");
  ExpectWaitHolds(a, b, flag, out, 4, 0x12, 0x1234, hipStreamWaitValueEq, 0x34, 0xff, "Eq under a mask");
  ExpectWaitHolds(a, b, flag, out, 4, 0xf0, 0x0f, hipStreamWaitValueAnd, 0x01, 0xffffffffu, "And");
  // Nor: ~((v & mask) | (value & mask)) != 0 over all 32 bits (so a
  // narrower mask always meets it): met once any bit of v is clear.
  ExpectWaitHolds(a, b, flag, out, 4, 0xffffffffu, 0xfffffffeu, hipStreamWaitValueNor, 0, 0xffffffffu, "Nor");
  std::vector<uint32_t> host(2, 0);
  HIP_EXPECT(hipStreamWaitValue32(a, host.data(), 0, hipStreamWaitValueGte, 0xffffffffu), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamWaitValue32(a, flag, 0, 4, 0xffffffffu), hipErrorInvalidValue);  // No such condition.
  HIP_EXPECT(hipStreamWaitValue32(a, static_cast<char*>(flag) + 1, 0, 0, 0xffffffffu), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(a));  // The refused waits queued nothing.
  HIP_OK(hipStreamDestroy(a));
  HIP_OK(hipStreamDestroy(b));
  HIP_OK(hipFree(flag));
  HIP_OK(hipFree(out));
}

void StreamWaitValue64() {
  void* flag = nullptr;
  void* out = nullptr;
  HIP_OK(hipMalloc(&flag, 8));
  HIP_OK(hipMalloc(&out, 8));
  hipStream_t a, b;
  HIP_OK(hipStreamCreateWithFlags(&a, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&b, hipStreamNonBlocking));
  // The high half decides: a 32-bit wait would have been met by `pre`.
  ExpectWaitHolds(a, b, flag, out, 8, 0x00000001FFFFFFFFull, 0x0000000200000000ull, hipStreamWaitValueGte,
                  0x0000000200000000ull, ~0ull, "64-bit Gte");
  HIP_EXPECT(hipStreamWaitValue64(a, static_cast<char*>(flag) + 4, 0, 0, ~0ull), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(a));
  HIP_OK(hipStreamDestroy(b));
  HIP_OK(hipFree(flag));
  HIP_OK(hipFree(out));
}

void StreamWaitEvent() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  CheckStreamWaitEvent([](hipStream_t st, hipEvent_t e, unsigned f) { return hipStreamWaitEvent(st, e, f); }, s);
  HIP_OK(hipStreamDestroy(s));
  // The null stream that waits is the current device's, not the event's nor
  // the one a call just before used: device 1's null stream waits for an
  // event of a held stream of device 0, after a call on device 0.
  hipStream_t gated;
  HIP_OK(hipStreamCreateWithFlags(&gated, hipStreamNonBlocking));
  Gate held;
  HIP_OK(hipLaunchHostFunc(gated, WaitAtGate, &held));
  WaitEntered(held);
  hipEvent_t e;
  HIP_OK(hipEventCreateWithFlags(&e, hipEventDisableTiming));
  HIP_OK(hipEventRecord(e, gated));
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  HIP_OK(hipMemGetInfo(&free_bytes, &total_bytes));
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipStreamWaitEvent(nullptr, e, 0));
  HIP_EXPECT(hipStreamQuery(nullptr), hipErrorNotReady);
  held.open.store(1);
  HIP_OK(hipStreamSynchronize(nullptr));
  HIP_OK(hipStreamQuery(nullptr));
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(gated));
}

void StreamWaitEventSpt() {
  CheckStreamWaitEvent([](hipStream_t st, hipEvent_t e, unsigned f) { return hipStreamWaitEvent_spt(st, e, f); },
                       hipStreamPerThread);
}

struct CallbackProbe {
  hipStream_t stream = nullptr;
  hipError_t status = hipErrorUnknown;
  int* host = nullptr;
  int seen = -1;
  std::atomic<int> calls{0};
};

void RecordCallback(hipStream_t stream, hipError_t status, void* user) {
  auto* p = static_cast<CallbackProbe*>(user);
  p->stream = stream;
  p->status = status;
  p->seen = *p->host;
  p->calls.fetch_add(1);
}

void StreamAddCallback() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  CallbackProbe probe;
  HIP_OK(hipHostMalloc(&probe.host, sizeof(int), 0));
  *probe.host = 0;
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 31, kN);
  HIP_OK(hipMemcpyAsync(probe.host, d + 7, sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamAddCallback(s, RecordCallback, &probe, 0));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(probe.calls.load() == 1 && probe.seen == 31 && probe.stream == s && probe.status == hipSuccess,
        "callback: %d calls, saw %d, stream %p (want %p), status %d", probe.calls.load(), probe.seen,
        (void*)probe.stream, (void*)s, probe.status);
  HIP_EXPECT(hipStreamAddCallback(s, RecordCallback, &probe, 1), hipErrorInvalidValue);
  HIP_EXPECT(hipStreamAddCallback(s, nullptr, &probe, 0), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  CHECK(probe.calls.load() == 1, "a refused callback ran");
  HIP_OK(hipHostFree(probe.host));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void StreamGetDevice() {
  hipStream_t s0, s1;
  HIP_OK(hipStreamCreate(&s0));
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipStreamCreate(&s1));
  HIP_OK(hipSetDevice(0));
  hipDevice_t d = -1;
  HIP_OK(hipStreamGetDevice(s1, &d));
  CHECK(d == 1, "a device-1 stream is on %d", d);
  HIP_OK(hipStreamGetDevice(s0, &d));
  CHECK(d == 0, "a device-0 stream is on %d", d);
  HIP_OK(hipStreamGetDevice(nullptr, &d));
  CHECK(d == 0, "the null stream is on %d", d);
  HIP_EXPECT(hipStreamGetDevice(s1, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s0));
  HIP_OK(hipStreamDestroy(s1));
  HIP_EXPECT(hipStreamGetDevice(s1, &d), hipErrorContextIsDestroyed);
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipStreamGetDevice(kStreamLegacy, &d));  // The legacy null stream: the current device's.
  CHECK(d == 1, "hipStreamLegacy is on %d with device 1 current", d);
  HIP_OK(hipSetDevice(0));
}

void GetStreamDeviceId() {
  hipStream_t s1;
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipStreamCreate(&s1));
  HIP_OK(hipSetDevice(0));
  CHECK(hipGetStreamDeviceId(s1) == 1, "device-1 stream: %d", hipGetStreamDeviceId(s1));
  CHECK(hipGetStreamDeviceId(nullptr) == 0, "null stream: %d", hipGetStreamDeviceId(nullptr));
  HIP_OK(hipSetDevice(1));
  CHECK(hipGetStreamDeviceId(nullptr) == 1, "null stream after hipSetDevice(1): %d", hipGetStreamDeviceId(nullptr));
  HIP_OK(hipStreamDestroy(s1));
  CHECK(hipGetStreamDeviceId(s1) == -1, "destroyed stream: %d", hipGetStreamDeviceId(s1));
}

void LaunchHostFunc() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  CallbackProbe probe;
  HIP_OK(hipHostMalloc(&probe.host, sizeof(int), 0));
  *probe.host = 0;
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 41, kN);
  HIP_OK(hipMemcpyAsync(probe.host, d, sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_OK(hipLaunchHostFunc(
      s, [](void* u) { RecordCallback(nullptr, hipSuccess, u); }, &probe));
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 42, kN);
  HIP_OK(hipMemcpyAsync(probe.host, d, sizeof(int), hipMemcpyDeviceToHost, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK(probe.calls.load() == 1 && probe.seen == 41 && *probe.host == 42, "host function saw %d (%d calls), then %d",
        probe.seen, probe.calls.load(), *probe.host);
  HIP_EXPECT(hipLaunchHostFunc(s, nullptr, &probe), hipErrorInvalidValue);
  HIP_OK(hipHostFree(probe.host));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void LaunchHostFuncSpt() {
  Gate gate;
  HIP_OK(hipLaunchHostFunc_spt(nullptr, WaitAtGate, &gate));  // null: the per-thread stream.
  WaitEntered(gate);
  HIP_EXPECT(hipStreamQuery(hipStreamPerThread), hipErrorNotReady);
  gate.open.store(1);
  std::atomic<int> done{0};
  HIP_OK(hipLaunchHostFunc_spt(nullptr, SleepThenSet, &done));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(done.load() == 1, "the per-thread stream's host function did not run by its synchronize");
  HIP_EXPECT(hipLaunchHostFunc_spt(nullptr, nullptr, nullptr), hipErrorInvalidValue);
}

// ---- Events -----------------------------------------------------------------------------

void EventCreate() {
  hipEvent_t a = nullptr, b = nullptr;
  HIP_OK(hipEventCreate(&a));
  HIP_OK(hipEventCreate(&b));
  CHECK(a != nullptr && b != nullptr && a != b, "events %p %p", (void*)a, (void*)b);
  HIP_OK(hipEventRecord(a, nullptr));
  HIP_OK(hipEventRecord(b, nullptr));
  HIP_OK(hipEventSynchronize(b));
  float ms = -1;
  HIP_OK(hipEventElapsedTime(&ms, a, b));  // A default event times.
  CHECK(ms >= 0, "elapsed %f", ms);
  HIP_OK(hipEventDestroy(a));
  HIP_OK(hipEventDestroy(b));
  HIP_EXPECT(hipEventCreate(nullptr), hipErrorInvalidValue);
}

void EventCreateWithFlags() {
  hipEvent_t a, b;
  HIP_OK(hipEventCreateWithFlags(&a, hipEventDisableTiming));
  HIP_OK(hipEventCreateWithFlags(&b, hipEventBlockingSync));
  HIP_OK(hipEventRecord(a, nullptr));
  HIP_OK(hipEventRecord(b, nullptr));
  HIP_OK(hipEventSynchronize(b));
  HIP_OK(hipEventQuery(a));
  float ms = -1;
  HIP_EXPECT(hipEventElapsedTime(&ms, a, b), hipErrorInvalidHandle);  // a does not time.
  CHECK(ms == -1, "a refused elapsed time wrote %f", ms);
  hipEvent_t untouched = reinterpret_cast<hipEvent_t>(0x1);
  HIP_EXPECT(hipEventCreateWithFlags(&untouched, hipEventInterprocess), hipErrorInvalidValue);  // Must not time.
  HIP_EXPECT(hipEventCreateWithFlags(&untouched, 0x4000), hipErrorInvalidValue);
  // hipEventDisableSystemFence (0x20000000) is a release flag: alone or
  // with others, but not with a second release flag.
  constexpr unsigned kDisableSystemFence = 0x20000000;
  HIP_EXPECT(hipEventCreateWithFlags(&untouched, kDisableSystemFence | hipEventReleaseToSystem), hipErrorInvalidValue);
  CHECK(untouched == reinterpret_cast<hipEvent_t>(0x1), "a refused create wrote an event");
  hipEvent_t fenceless;
  HIP_OK(hipEventCreateWithFlags(&fenceless, kDisableSystemFence | hipEventDisableTiming));
  HIP_OK(hipEventRecord(fenceless, kStreamLegacy));
  HIP_OK(hipEventSynchronize(fenceless));
  HIP_OK(hipEventDestroy(fenceless));
  HIP_OK(hipEventDestroy(a));
  HIP_OK(hipEventDestroy(b));
}

void EventDestroy() {
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  HIP_OK(hipEventRecord(e, nullptr));
  HIP_OK(hipEventDestroy(e));
  HIP_EXPECT(hipEventQuery(e), hipErrorInvalidHandle);
  HIP_EXPECT(hipEventDestroy(e), hipErrorContextIsDestroyed);  // As clr: no such event any more.
  HIP_EXPECT(hipEventDestroy(nullptr), hipErrorInvalidHandle);
}

void EventElapsedTime() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipEvent_t start, stop;
  HIP_OK(hipEventCreate(&start));
  HIP_OK(hipEventCreate(&stop));
  std::atomic<int> done{0};
  HIP_OK(hipEventRecord(start, s));
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));  // 60 ms between the two.
  HIP_OK(hipEventRecord(stop, s));
  HIP_OK(hipEventSynchronize(stop));
  float ms = -1;
  HIP_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 40.0f && ms < 10000.0f, "elapsed %f ms around a 60 ms host function", ms);
  float back = 0;
  HIP_OK(hipEventElapsedTime(&back, stop, start));
  CHECK(back <= -40.0f, "reversed elapsed %f ms", back);
  HIP_EXPECT(hipEventElapsedTime(nullptr, start, stop), hipErrorInvalidValue);
  HIP_EXPECT(hipEventElapsedTime(&ms, start, nullptr), hipErrorInvalidHandle);
  HIP_OK(hipEventDestroy(start));
  HIP_OK(hipEventDestroy(stop));
  HIP_OK(hipStreamDestroy(s));
}

void EventQuery() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(s, WaitAtGate, &gate));
  HIP_OK(hipEventRecord(e, s));
  WaitEntered(gate);
  HIP_EXPECT(hipEventQuery(e), hipErrorNotReady);
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipEventQuery(e));
  // Recorded in a capturing stream: hipErrorCapturedEvent, and the capture
  // is invalidated (clr; hip-tests CheckingSyncDuringCapture).
  for (bool sync : {false, true}) {
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
    HIP_OK(hipEventRecord(e, s));
    HIP_EXPECT(sync ? hipEventSynchronize(e) : hipEventQuery(e), hipErrorCapturedEvent);
    hipGraph_t g = nullptr;
    HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
    CHECK(g == nullptr, "an invalidated capture gave a graph");
  }
  HIP_OK(hipEventRecord(e, s));  // Outside a capture again.
  HIP_OK(hipEventSynchronize(e));
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipEventQuery(nullptr), hipErrorInvalidHandle);
}

template <class Record>
void CheckEventRecord(Record record, hipStream_t s) {
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  std::atomic<int> done{0};
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));
  HIP_OK(record(e, s));
  HIP_OK(hipEventSynchronize(e));
  CHECK(done.load() == 1, "the event completed before the work recorded ahead of it");
  HIP_OK(hipEventQuery(e));
  hipEvent_t other;
  HIP_OK(hipSetDevice(1));
  HIP_OK(hipEventCreate(&other));
  HIP_OK(hipSetDevice(0));
  HIP_EXPECT(record(other, s), hipErrorInvalidHandle);  // A device-1 event on a device-0 stream.
  HIP_EXPECT(record(nullptr, s), hipErrorInvalidHandle);
  HIP_OK(hipEventDestroy(other));
  HIP_OK(hipEventDestroy(e));
}

void EventRecord() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  CheckEventRecord([](hipEvent_t e, hipStream_t st) { return hipEventRecord(e, st); }, s);
  HIP_OK(hipStreamDestroy(s));
}

void EventRecordSpt() {
  CheckEventRecord([](hipEvent_t e, hipStream_t) { return hipEventRecord_spt(e, nullptr); }, hipStreamPerThread);
}

void EventSynchronize() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  std::atomic<int> done{0};
  HIP_OK(hipLaunchHostFunc(s, SleepThenSet, &done));
  HIP_OK(hipEventRecord(e, s));
  HIP_OK(hipEventSynchronize(e));
  CHECK(done.load() == 1, "hipEventSynchronize returned before the work ahead of the event");
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipEventSynchronize(e), hipErrorInvalidHandle);
}

// ---- Errors -------------------------------------------------------------------------------

void GetErrorName() {
  CHECK(strcmp(hipGetErrorName(hipSuccess), "hipSuccess") == 0, "%s", hipGetErrorName(hipSuccess));
  CHECK(strcmp(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue") == 0, "%s",
        hipGetErrorName(hipErrorInvalidValue));
  CHECK(strcmp(hipGetErrorName(hipErrorNotReady), "hipErrorNotReady") == 0, "%s", hipGetErrorName(hipErrorNotReady));
  CHECK(strcmp(hipGetErrorName(static_cast<hipError_t>(123456)), "hipErrorUnknown") == 0, "unknown code: %s",
        hipGetErrorName(static_cast<hipError_t>(123456)));
}

void GetErrorString() {
  CHECK(strcmp(hipGetErrorString(hipSuccess), "no error") == 0, "%s", hipGetErrorString(hipSuccess));
  CHECK(strcmp(hipGetErrorString(hipErrorInvalidValue), "invalid argument") == 0, "%s",
        hipGetErrorString(hipErrorInvalidValue));
  CHECK(strcmp(hipGetErrorString(hipErrorOutOfMemory), "out of memory") == 0, "%s",
        hipGetErrorString(hipErrorOutOfMemory));
  CHECK(strcmp(hipGetErrorString(static_cast<hipError_t>(123456)), "unknown error") == 0, "%s",
        hipGetErrorString(static_cast<hipError_t>(123456)));
}

void GetLastError() {
  (void)hipGetLastError();  // Start clean.
  HIP_OK(hipGetLastError());
  HIP_EXPECT(hipSetDevice(7), hipErrorInvalidDevice);
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidDevice);
  HIP_OK(hipGetLastError());                                                     // Taken: reset.
  hipLaunchKernelGGL(Fill, dim3(1), dim3(1u << 20), 0, nullptr, nullptr, 0, 0);  // Too big a block.
  CHECK(hipGetLastError() != hipSuccess, "an impossible launch left no last error");
  HIP_OK(hipGetLastError());
}

void PeekAtLastError() {
  (void)hipGetLastError();
  HIP_OK(hipPeekAtLastError());
  HIP_EXPECT(hipDeviceGet(nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipPeekAtLastError(), hipErrorInvalidValue);
  HIP_EXPECT(hipPeekAtLastError(), hipErrorInvalidValue);  // Not reset.
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidValue);
  HIP_OK(hipPeekAtLastError());
}

// ---- Launches ---------------------------------------------------------------------------

void LaunchKernel() {
  int* d = NewInts();
  int value = 51, n = kN;
  void* args[] = {&d, &value, &n};
  HIP_OK(hipLaunchKernel(reinterpret_cast<const void*>(Fill), dim3(kGrid), dim3(kBlock), args, 0, nullptr));
  CHECK_ALL(d, 51, "hipLaunchKernel");
  HIP_EXPECT(hipLaunchKernel(reinterpret_cast<const void*>(NotAKernel), dim3(1), dim3(1), args, 0, nullptr),
             hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipLaunchKernel(nullptr, dim3(1), dim3(1), args, 0, nullptr), hipErrorInvalidDeviceFunction);
  CHECK_ALL(d, 51, "after refused launches");
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void LaunchKernelSpt() {
  int* d = NewInts();
  int value = 52, n = kN;
  void* args[] = {&d, &value, &n};
  Gate gate;
  HIP_OK(hipLaunchHostFunc(hipStreamPerThread, WaitAtGate, &gate));
  // null: the per-thread stream, held by the gate.
  HIP_OK(hipLaunchKernel_spt(reinterpret_cast<const void*>(Fill), dim3(kGrid), dim3(kBlock), args, 0, nullptr));
  WaitEntered(gate);
  HIP_EXPECT(hipStreamQuery(hipStreamPerThread), hipErrorNotReady);
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK_ALL(d, 52, "hipLaunchKernel_spt");
  HIP_EXPECT(hipLaunchKernel_spt(nullptr, dim3(1), dim3(1), args, 0, nullptr), hipErrorInvalidDeviceFunction);
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void ExtLaunchKernel() {
  int* d = NewInts();
  int value = 53, n = kN;
  void* args[] = {&d, &value, &n};
  hipEvent_t start, stop;
  HIP_OK(hipEventCreate(&start));
  HIP_OK(hipEventCreate(&stop));
  HIP_OK(hipExtLaunchKernel(reinterpret_cast<const void*>(Fill), dim3(kGrid), dim3(kBlock), args, 0, nullptr, start,
                            stop, 0));
  HIP_OK(hipEventSynchronize(stop));
  float ms = -1;
  HIP_OK(hipEventElapsedTime(&ms, start, stop));
  CHECK(ms >= 0, "elapsed %f", ms);
  CHECK_ALL(d, 53, "hipExtLaunchKernel");
  HIP_EXPECT(hipExtLaunchKernel(reinterpret_cast<const void*>(NotAKernel), dim3(1), dim3(1), args, 0, nullptr, nullptr,
                                nullptr, 0),
             hipErrorInvalidDeviceFunction);
  HIP_OK(hipEventDestroy(start));
  HIP_OK(hipEventDestroy(stop));
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void LaunchCooperativeKernel() {
  int* d = NewInts();
  int value = 54, n = kN;
  void* args[] = {&d, &value, &n};
  HIP_OK(hipLaunchCooperativeKernel(reinterpret_cast<const void*>(Fill), dim3(kGrid), dim3(kBlock), args, 0, nullptr));
  CHECK_ALL(d, 54, "hipLaunchCooperativeKernel");
  HIP_EXPECT(
      hipLaunchCooperativeKernel(reinterpret_cast<const void*>(Fill), dim3(1u << 24), dim3(kBlock), args, 0, nullptr),
      hipErrorCooperativeLaunchTooLarge);
  CHECK_ALL(d, 54, "after a refused cooperative launch");
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void LaunchCooperativeKernelSpt() {
  int* d = NewInts();
  int value = 55, n = kN;
  void* args[] = {&d, &value, &n};
  HIP_OK(
      hipLaunchCooperativeKernel_spt(reinterpret_cast<const void*>(Fill), dim3(kGrid), dim3(kBlock), args, 0, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK_ALL(d, 55, "hipLaunchCooperativeKernel_spt");
  HIP_EXPECT(hipLaunchCooperativeKernel_spt(reinterpret_cast<const void*>(Fill), dim3(1u << 24), dim3(kBlock), args, 0,
                                            nullptr),
             hipErrorCooperativeLaunchTooLarge);
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

// Fill's arguments as hipSetupArgument lays them out.
void SetupFillArgs(int* d, int value, int n) {
  HIP_OK(hipSetupArgument(&d, sizeof d, 0));
  HIP_OK(hipSetupArgument(&value, sizeof value, 8));
  HIP_OK(hipSetupArgument(&n, sizeof n, 12));
}

void ConfigureCall() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipConfigureCall(dim3(3, 2, 1), dim3(64, 2, 1), 128, s));
  dim3 grid, block;
  size_t shared = 0;
  hipStream_t got = nullptr;
  HIP_OK(__hipPopCallConfiguration(&grid, &block, &shared, &got));
  CHECK(grid.x == 3 && grid.y == 2 && block.x == 64 && block.y == 2 && shared == 128 && got == s,
        "configuration read back as (%u,%u) (%u,%u) %zu", grid.x, grid.y, block.x, block.y, shared);
  int* d = NewInts();
  HIP_OK(hipConfigureCall(dim3(kGrid), dim3(kBlock), 0, s));
  SetupFillArgs(d, 61, kN);
  HIP_OK(hipLaunchByPtr(reinterpret_cast<const void*>(Fill)));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 61, "hipConfigureCall + hipLaunchByPtr");
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void SetupArgument() {
  int* d = NewInts();
  HIP_OK(hipConfigureCall(dim3(kGrid), dim3(kBlock), 0, nullptr));
  int value = 62, n = kN;
  // Out of order, and the count first written as 0 then overwritten.
  int zero = 0;
  HIP_OK(hipSetupArgument(&zero, sizeof zero, 12));
  HIP_OK(hipSetupArgument(&value, sizeof value, 8));
  HIP_OK(hipSetupArgument(&d, sizeof d, 0));
  HIP_OK(hipSetupArgument(&n, sizeof n, 12));
  HIP_EXPECT(hipSetupArgument(nullptr, 4, 16), hipErrorInvalidValue);
  HIP_OK(hipLaunchByPtr(reinterpret_cast<const void*>(Fill)));
  CHECK_ALL(d, 62, "arguments from hipSetupArgument");
  HIP_OK(hipFree(d));
}

void LaunchByPtr() {
  int* d = NewInts();
  HIP_EXPECT(hipLaunchByPtr(reinterpret_cast<const void*>(Fill)), hipErrorInvalidConfiguration);  // Not configured.
  HIP_OK(hipConfigureCall(dim3(kGrid), dim3(kBlock), 0, nullptr));
  SetupFillArgs(d, 63, kN);
  HIP_OK(hipLaunchByPtr(reinterpret_cast<const void*>(Fill)));
  CHECK_ALL(d, 63, "hipLaunchByPtr");
  HIP_OK(hipConfigureCall(dim3(1), dim3(1), 0, nullptr));
  HIP_EXPECT(hipLaunchByPtr(reinterpret_cast<const void*>(NotAKernel)), hipErrorInvalidDeviceFunction);
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void PushCallConfiguration() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(__hipPushCallConfiguration(dim3(7, 1, 1), dim3(32, 4, 2), 256, s));
  HIP_OK(__hipPushCallConfiguration(dim3(1, 9, 1), dim3(16, 1, 1), 0, nullptr));  // Nested.
  dim3 grid, block;
  size_t shared = 1;
  hipStream_t got = s;
  HIP_OK(__hipPopCallConfiguration(&grid, &block, &shared, &got));
  CHECK(grid.y == 9 && block.x == 16 && shared == 0 && got == nullptr, "inner configuration (%u,%u) %u %zu", grid.x,
        grid.y, block.x, shared);
  HIP_OK(__hipPopCallConfiguration(&grid, &block, &shared, &got));
  CHECK(grid.x == 7 && block.x == 32 && block.y == 4 && block.z == 2 && shared == 256 && got == s,
        "outer configuration (%u) (%u,%u,%u) %zu", grid.x, block.x, block.y, block.z, shared);
  // <<<>>> pushes and the launch pops: the kernel ran with the pushed dims.
  int* d = NewInts();
  Fill<<<kGrid, kBlock, 0, s>>>(d, 64, kN);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 64, "<<<>>> launch");
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void PopCallConfiguration() {
  dim3 grid(5, 5, 5), block(5, 5, 5);
  size_t shared = 5;
  hipStream_t got = nullptr;
  HIP_EXPECT(__hipPopCallConfiguration(&grid, &block, &shared, &got), hipErrorInvalidConfiguration);  // Empty.
  CHECK(grid.x == 5 && shared == 5, "a failed pop wrote a configuration");
  HIP_OK(__hipPushCallConfiguration(dim3(2, 3, 4), dim3(8, 1, 1), 64, nullptr));
  HIP_EXPECT(__hipPopCallConfiguration(nullptr, &block, &shared, &got), hipErrorInvalidValue);
  HIP_OK(__hipPopCallConfiguration(&grid, &block, &shared, &got));
  CHECK(grid.x == 2 && grid.y == 3 && grid.z == 4 && block.x == 8 && shared == 64, "popped (%u,%u,%u) %u %zu", grid.x,
        grid.y, grid.z, block.x, shared);
  HIP_EXPECT(__hipPopCallConfiguration(&grid, &block, &shared, &got), hipErrorInvalidConfiguration);
  (void)hipGetLastError();
}

void LaunchKernelGGLImpl() {
  using Impl = void (*)(uintptr_t, const dim3&, const dim3&, uint32_t, hipStream_t, void**);
  auto impl = reinterpret_cast<Impl>(
      dlsym(RTLD_DEFAULT, "_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv"));
  CHECK(impl != nullptr, "hip_impl::hipLaunchKernelGGLImpl is not exported");
  int* d = NewInts();
  struct {
    int* out;
    int value;
    int n;
  } packed{d, 65, kN};
  size_t size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  (void)hipGetLastError();
  impl(reinterpret_cast<uintptr_t>(&Fill), dim3(kGrid), dim3(kBlock), 0, nullptr, extra);
  HIP_OK(hipGetLastError());
  CHECK_ALL(d, 65, "hip_impl::hipLaunchKernelGGLImpl");
  impl(reinterpret_cast<uintptr_t>(&NotAKernel), dim3(1), dim3(1), 0, nullptr, extra);
  HIP_EXPECT(hipGetLastError(), hipErrorInvalidDeviceFunction);  // Its error is the last error.
  HIP_OK(hipFree(d));
}

// ---- Function attributes and occupancy --------------------------------------------------

void FuncGetAttributes() {
  hipFuncAttributes a{};
  HIP_OK(hipFuncGetAttributes(&a, reinterpret_cast<const void*>(Fill)));
  const hipDeviceProp_t p = Props(0);
  CHECK(a.maxThreadsPerBlock > 0 && a.maxThreadsPerBlock <= p.maxThreadsPerBlock && a.numRegs >= 0,
        "attributes: %d threads, %d registers", a.maxThreadsPerBlock, a.numRegs);
  hipFuncAttributes untouched{};
  untouched.maxThreadsPerBlock = -3;
  HIP_EXPECT(hipFuncGetAttributes(&untouched, reinterpret_cast<const void*>(NotAKernel)),
             hipErrorInvalidDeviceFunction);
  CHECK(untouched.maxThreadsPerBlock == -3, "a failed call wrote attributes");
  HIP_EXPECT(hipFuncGetAttributes(nullptr, reinterpret_cast<const void*>(Fill)), hipErrorInvalidValue);
}

void FuncSetAttribute() {
  HIP_OK(hipFuncSetAttribute(reinterpret_cast<const void*>(Fill), hipFuncAttributeMaxDynamicSharedMemorySize, 1024));
  HIP_EXPECT(
      hipFuncSetAttribute(reinterpret_cast<const void*>(NotAKernel), hipFuncAttributeMaxDynamicSharedMemorySize, 1024),
      hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipFuncSetAttribute(nullptr, hipFuncAttributeMaxDynamicSharedMemorySize, 0),
             hipErrorInvalidDeviceFunction);
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, d, 71, kN);
  CHECK_ALL(d, 71, "a launch after hipFuncSetAttribute");
  HIP_OK(hipFree(d));
}

void FuncSetCacheConfig() {
  HIP_OK(hipFuncSetCacheConfig(reinterpret_cast<const void*>(Fill), hipFuncCachePreferShared));
  HIP_EXPECT(hipFuncSetCacheConfig(reinterpret_cast<const void*>(NotAKernel), hipFuncCachePreferShared),
             hipErrorInvalidDeviceFunction);
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, d, 72, kN);
  CHECK_ALL(d, 72, "a launch after hipFuncSetCacheConfig");
  HIP_OK(hipFree(d));
}

void OccupancyMaxActiveBlocksPerMultiprocessor() {
  int blocks = -1;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(Fill), 128, 0));
  CHECK(blocks > 0, "%d blocks of 128", blocks);
  int big = -1;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&big, reinterpret_cast<const void*>(Fill), 1024, 0));
  CHECK(big > 0 && big <= blocks, "%d blocks of 1024, %d of 128", big, blocks);
  blocks = -9;
  HIP_EXPECT(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(Fill), 0, 0),
             hipErrorInvalidValue);
  HIP_EXPECT(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(NotAKernel), 128, 0),
             hipErrorInvalidValue);
  CHECK(blocks == -9, "a failed call wrote %d", blocks);
}

void OccupancyMaxActiveBlocksPerMultiprocessorWithFlags() {
  int plain = -1, flagged = -1;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&plain, reinterpret_cast<const void*>(Fill), 256, 0));
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&flagged, reinterpret_cast<const void*>(Fill), 256, 0,
                                                               hipOccupancyDefault));
  CHECK(flagged > 0 && flagged == plain, "with flags %d, without %d", flagged, plain);
  flagged = -9;
  HIP_EXPECT(hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&flagged, reinterpret_cast<const void*>(Fill), 256,
                                                                   0, 0x80),
             hipErrorInvalidValue);
  CHECK(flagged == -9, "a failed call wrote %d", flagged);
}

void OccupancyMaxPotentialBlockSize() {
  int grid = -1, block = -1;
  HIP_OK(hipOccupancyMaxPotentialBlockSize(&grid, &block, reinterpret_cast<const void*>(Fill), 0, 0));
  const hipDeviceProp_t p = Props(0);
  CHECK(grid > 0 && block > 0 && block <= p.maxThreadsPerBlock, "grid %d, block %d", grid, block);
  HIP_OK(hipOccupancyMaxPotentialBlockSize(&grid, &block, reinterpret_cast<const void*>(Fill), 0, 64));
  CHECK(block > 0 && block <= 64, "block %d under a limit of 64", block);
  grid = -5;
  HIP_EXPECT(hipOccupancyMaxPotentialBlockSize(&grid, nullptr, reinterpret_cast<const void*>(Fill), 0, 0),
             hipErrorInvalidValue);
  HIP_EXPECT(hipOccupancyMaxPotentialBlockSize(&grid, &block, reinterpret_cast<const void*>(NotAKernel), 0, 0),
             hipErrorInvalidValue);
  CHECK(grid == -5, "a failed call wrote %d", grid);
}

void KernelNameRefByPtr() {
  const char* name = hipKernelNameRefByPtr(reinterpret_cast<const void*>(Fill), nullptr);
  CHECK(name != nullptr && strcmp(name, "_Z4FillPiii") == 0, "Fill's name %s", name != nullptr ? name : "(null)");
  CHECK(hipKernelNameRefByPtr(reinterpret_cast<const void*>(NotAKernel), nullptr) == nullptr,
        "a host function has a kernel name");
  CHECK(hipKernelNameRefByPtr(nullptr, nullptr) == nullptr, "null has a kernel name");
}

// ---- Modules ------------------------------------------------------------------------------

void ModuleLoad() {
  hipModule_t m = nullptr;
  HIP_OK(hipModuleLoad(&m, ModulePath().c_str()));
  hipFunction_t f = nullptr;
  HIP_OK(hipModuleGetFunction(&f, m, "add_vec"));
  ModuleVectors v;
  HIP_OK(hipModuleLaunchKernel(f, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params, nullptr));
  v.CheckSum("hipModuleLoad");
  HIP_OK(hipModuleUnload(m));
  hipModule_t untouched = reinterpret_cast<hipModule_t>(0x1);
  CHECK(hipModuleLoad(&untouched, "/nonexistent/module.co") != hipSuccess, "loaded a missing file");
  CHECK(untouched == reinterpret_cast<hipModule_t>(0x1), "a failed load wrote a module");
  HIP_EXPECT(hipModuleLoad(nullptr, ModulePath().c_str()), hipErrorInvalidValue);
}

void ModuleLoadData() {
  std::vector<char> image = ReadFile(ModulePath());
  hipModule_t m = nullptr;
  HIP_OK(hipModuleLoadData(&m, image.data()));
  hipFunction_t f = nullptr;
  HIP_OK(hipModuleGetFunction(&f, m, "add_vec"));
  ModuleVectors v;
  HIP_OK(hipModuleLaunchKernel(f, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params, nullptr));
  v.CheckSum("hipModuleLoadData");
  HIP_OK(hipModuleUnload(m));
  std::vector<char> junk(4096, 0x5a);
  HIP_EXPECT(hipModuleLoadData(&m, junk.data()), hipErrorInvalidImage);
  HIP_EXPECT(hipModuleLoadData(nullptr, image.data()), hipErrorInvalidValue);
  // An ELF header at the end of readable memory declaring 0xffff sections
  // past it: refused, never read past the caller's memory.
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  auto* pages = static_cast<uint8_t*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  CHECK(pages != MAP_FAILED, "mmap");
  CHECK(mprotect(pages + page, page, PROT_NONE) == 0, "mprotect");
  uint8_t* elf = pages + page - 64;
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64};
  memcpy(elf, ident, sizeof ident);
  const uint16_t type = 3, machine = 224, ehsize = 64, shentsize = 64, shnum = 0xffff;
  const uint64_t shoff = 64;
  memcpy(elf + 16, &type, 2);
  memcpy(elf + 18, &machine, 2);
  memcpy(elf + 40, &shoff, 8);
  memcpy(elf + 52, &ehsize, 2);
  memcpy(elf + 58, &shentsize, 2);
  memcpy(elf + 60, &shnum, 2);
  HIP_EXPECT(hipModuleLoadData(&m, elf), hipErrorInvalidImage);
  munmap(pages, 2 * page);
  // Unloaded modules give their image's bytes back: 2000 load/unload cycles
  // of this image grow the process by far less than 2000 copies of it.
  auto rss = [] {
    long pages_now = 0, resident = 0;
    FILE* f = fopen("/proc/self/statm", "r");
    CHECK(f != nullptr && fscanf(f, "%ld %ld", &pages_now, &resident) == 2, "/proc/self/statm");
    fclose(f);
    return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  };
  const size_t before = rss();
  constexpr int kCycles = 2000;
  for (int i = 0; i < kCycles; ++i) {
    HIP_OK(hipModuleLoadData(&m, image.data()));
    HIP_OK(hipModuleUnload(m));
  }
  const size_t grown = rss() > before ? rss() - before : 0;
  CHECK(grown < image.size() * kCycles / 4, "%d load/unload cycles of a %zu-byte image grew RSS by %zu bytes", kCycles,
        image.size(), grown);
}

void ModuleLoadFatBinary() {
  std::vector<char> image = ReadFile(ModulePath());  // An offload bundle.
  hipModule_t m = nullptr;
  HIP_OK(hipModuleLoadFatBinary(&m, image.data()));
  hipFunction_t f = nullptr;
  HIP_OK(hipModuleGetFunction(&f, m, "add_vec"));
  ModuleVectors v;
  HIP_OK(hipModuleLaunchKernel(f, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params, nullptr));
  v.CheckSum("hipModuleLoadFatBinary");
  HIP_OK(hipModuleUnload(m));
  std::vector<char> junk(4096, 0x5a);
  HIP_EXPECT(hipModuleLoadFatBinary(&m, junk.data()), hipErrorInvalidImage);
  HIP_EXPECT(hipModuleLoadFatBinary(&m, nullptr), hipErrorInvalidValue);
}

void ModuleLoadDataEx() {
  std::vector<char> image = ReadFile(ModulePath());
  hipModule_t m = nullptr;
  HIP_OK(hipModuleLoadDataEx(&m, image.data(), 0, nullptr, nullptr));
  hipFunction_t f = nullptr;
  HIP_OK(hipModuleGetFunction(&f, m, "add_vec"));
  ModuleVectors v;
  HIP_OK(hipModuleLaunchKernel(f, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params, nullptr));
  v.CheckSum("hipModuleLoadDataEx");
  HIP_OK(hipModuleUnload(m));
  std::vector<char> junk(4096, 0x5a);
  HIP_EXPECT(hipModuleLoadDataEx(&m, junk.data(), 0, nullptr, nullptr), hipErrorInvalidImage);
}

void ModuleUnload() {
  hipModule_t m = nullptr;
  HIP_OK(hipModuleLoad(&m, ModulePath().c_str()));
  hipFunction_t f = nullptr;
  HIP_OK(hipModuleGetFunction(&f, m, "add_vec"));
  HIP_OK(hipModuleUnload(m));
  HIP_EXPECT(hipModuleGetFunction(&f, m, "add_vec"), hipErrorNotFound);  // Gone.
  HIP_EXPECT(hipModuleUnload(m), hipErrorNotFound);
  HIP_EXPECT(hipModuleUnload(nullptr), hipErrorInvalidResourceHandle);
}

void ModuleGetFunction() {
  LoadedModule lm;
  hipFunction_t scaled = nullptr;
  HIP_OK(hipModuleGetFunction(&scaled, lm.module, "scaled_add"));
  CHECK(scaled != nullptr && scaled != lm.add, "functions %p %p", (void*)scaled, (void*)lm.add);
  const char* name = hipKernelNameRef(scaled);
  CHECK(name != nullptr && strcmp(name, "scaled_add") == 0, "function name %s", name != nullptr ? name : "(null)");
  hipFunction_t missing = reinterpret_cast<hipFunction_t>(0x1);
  HIP_EXPECT(hipModuleGetFunction(&missing, lm.module, "no_such_kernel"), hipErrorNotFound);
  CHECK(missing == reinterpret_cast<hipFunction_t>(0x1), "a failed lookup wrote a function");
  HIP_EXPECT(hipModuleGetFunction(&missing, lm.module, ""), hipErrorInvalidValue);
  HIP_EXPECT(hipModuleGetFunction(&missing, nullptr, "add_vec"), hipErrorInvalidResourceHandle);
}

void ModuleGetGlobal() {
  LoadedModule lm;
  hipDeviceptr_t g = nullptr;
  size_t size = 0;
  HIP_OK(hipModuleGetGlobal(&g, &size, lm.module, "module_scale"));
  CHECK(g != nullptr && size == sizeof(float), "module_scale at %p, %zu bytes", g, size);
  float scale = 0;
  HIP_OK(hipMemcpyDtoH(&scale, g, sizeof scale));
  CHECK(scale == 2.0f, "module_scale starts at %f", scale);
  size_t only_size = 0;
  HIP_OK(hipModuleGetGlobal(nullptr, &only_size, lm.module, "module_scale"));
  CHECK(only_size == sizeof(float), "size alone %zu", only_size);
  hipDeviceptr_t untouched = reinterpret_cast<hipDeviceptr_t>(0x1);
  HIP_EXPECT(hipModuleGetGlobal(&untouched, &size, lm.module, "no_such_global"), hipErrorNotFound);
  CHECK(untouched == reinterpret_cast<hipDeviceptr_t>(0x1), "a failed lookup wrote an address");
  HIP_EXPECT(hipModuleGetGlobal(nullptr, nullptr, lm.module, "module_scale"), hipErrorInvalidValue);
}

HiprLaunchAttribute Attribute(int id, int value) {
  HiprLaunchAttribute a{};
  a.id = id;
  a.value.cooperative = value;  // Every int-sized member sits at offset 0.
  return a;
}

void LaunchKernelExC() {
  int* d = NewInts();
  int value = 56, n = kN;
  void* args[] = {&d, &value, &n};
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HiprLaunchConfig config{dim3(kGrid), dim3(kBlock), 0, s, nullptr, 0};
  HIP_OK(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(Fill), args));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 56, "hipLaunchKernelExC without attributes");
  // Cooperative, with an ignored entry before it: the cooperative limit applies.
  HiprLaunchAttribute coop[] = {Attribute(0, 0), Attribute(2, 1)};
  config.attrs = coop;
  config.num_attrs = 2;
  value = 57;
  HIP_OK(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(Fill), args));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 57, "hipLaunchKernelExC cooperative");
  HiprLaunchConfig huge = config;
  huge.grid = dim3(1u << 24);
  HIP_EXPECT(hipLaunchKernelExC(&huge, reinterpret_cast<const void*>(Fill), args), hipErrorCooperativeLaunchTooLarge);
  // Attributes ROCm does not honour are refused, as ROCm refuses them.
  HiprLaunchAttribute priority[] = {Attribute(8, -1)};
  config.attrs = priority;
  config.num_attrs = 1;
  value = 58;
  HIP_EXPECT(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(Fill), args), hipErrorInvalidConfiguration);
  config.attrs = nullptr;
  HIP_EXPECT(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(Fill), args), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 57, "after refused hipLaunchKernelExC calls");
  HIP_EXPECT(hipLaunchKernelExC(nullptr, reinterpret_cast<const void*>(Fill), args), hipErrorInvalidConfiguration);
  config.num_attrs = 0;
  HIP_EXPECT(hipLaunchKernelExC(&config, nullptr, args), hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipLaunchKernelExC(&config, reinterpret_cast<const void*>(NotAKernel), args),
             hipErrorInvalidDeviceFunction);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
  (void)hipGetLastError();
}

void DrvLaunchKernelEx() {
  LoadedModule lm;
  ModuleVectors v;
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HiprDrvLaunchConfig config{{kGrid, 1, 1}, {kBlock, 1, 1}, 0, s, nullptr, 0};
  HIP_OK(hipDrvLaunchKernelEx(&config, lm.add, v.params, nullptr));
  HIP_OK(hipStreamSynchronize(s));
  v.CheckSum("hipDrvLaunchKernelEx(kernelParams)");
  struct {
    const float* a;
    const float* b;
    float* c;
    int n;
  } packed{v.da, v.db, v.dc, kN};
  size_t size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  HiprLaunchAttribute coop[] = {Attribute(2, 1)};
  config.attrs = coop;
  config.num_attrs = 1;
  HIP_OK(hipDrvLaunchKernelEx(&config, lm.add, nullptr, extra));
  HIP_OK(hipStreamSynchronize(s));
  v.CheckSum("hipDrvLaunchKernelEx(extra, cooperative)");
  HiprDrvLaunchConfig huge = config;
  huge.grid[0] = 1u << 24;
  HIP_EXPECT(hipDrvLaunchKernelEx(&huge, lm.add, v.params, nullptr), hipErrorCooperativeLaunchTooLarge);
  HiprLaunchAttribute window[] = {Attribute(1, 0)};
  config.attrs = window;
  HIP_EXPECT(hipDrvLaunchKernelEx(&config, lm.add, v.params, nullptr), hipErrorInvalidConfiguration);
  config.num_attrs = 0;
  HIP_EXPECT(hipDrvLaunchKernelEx(&config, lm.add, v.params, extra), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvLaunchKernelEx(&config, nullptr, v.params, nullptr), hipErrorInvalidResourceHandle);
  HIP_EXPECT(hipDrvLaunchKernelEx(nullptr, lm.add, v.params, nullptr), hipErrorInvalidValue);
  config.block[0] = 0;
  HIP_EXPECT(hipDrvLaunchKernelEx(&config, lm.add, v.params, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamSynchronize(s));
  std::vector<float> c(kN);
  HIP_OK(hipMemcpy(c.data(), v.dc, kN * sizeof(float), hipMemcpyDeviceToHost));
  CHECK(c[0] == 0 && c[kN - 1] == 0, "a refused hipDrvLaunchKernelEx ran: c[0] = %g", c[0]);
  HIP_OK(hipStreamDestroy(s));
  (void)hipGetLastError();
}

void ModuleLaunchKernel() {
  LoadedModule lm;
  ModuleVectors v;
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipModuleLaunchKernel(lm.add, kGrid, 1, 1, kBlock, 1, 1, 0, s, v.params, nullptr));
  HIP_OK(hipStreamSynchronize(s));
  v.CheckSum("hipModuleLaunchKernel(kernelParams)");
  struct {
    const float* a;
    const float* b;
    float* c;
    int n;
  } packed{v.da, v.db, v.dc, kN};
  size_t size = sizeof packed;
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, &packed, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_END};
  HIP_OK(hipModuleLaunchKernel(lm.add, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, nullptr, extra));
  v.CheckSum("hipModuleLaunchKernel(extra)");
  HIP_EXPECT(hipModuleLaunchKernel(lm.add, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params, extra),
             hipErrorInvalidValue);
  HIP_EXPECT(hipModuleLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, v.params, nullptr), hipErrorInvalidImage);
  HIP_OK(hipStreamDestroy(s));
  (void)hipGetLastError();
}

void ModuleLaunchCooperativeKernel() {
  LoadedModule lm;
  ModuleVectors v;
  HIP_OK(hipModuleLaunchCooperativeKernel(lm.add, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params));
  v.CheckSum("hipModuleLaunchCooperativeKernel");
  HIP_EXPECT(hipModuleLaunchCooperativeKernel(lm.add, 1u << 24, 1, 1, kBlock, 1, 1, 0, nullptr, v.params),
             hipErrorCooperativeLaunchTooLarge);
  (void)hipGetLastError();
}

// ---- Libraries (ROCm 7.2) -----------------------------------------------------------

hipLibrary_t LoadLibrary() {
  hipLibrary_t lib = nullptr;
  HIP_OK(hipLibraryLoadFromFile(&lib, ModulePath().c_str(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  return lib;
}

// Runs add_vec through a library kernel: a hipKernel_t launches as a hipFunction_t.
void RunLibraryKernel(hipKernel_t k, const char* how) {
  ModuleVectors v;
  HIP_OK(hipModuleLaunchKernel(reinterpret_cast<hipFunction_t>(k), kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params,
                               nullptr));
  v.CheckSum(how);
}

void LibraryLoadData() {
  std::vector<char> image = ReadFile(ModulePath());
  hipLibrary_t lib = nullptr;
  HIP_OK(hipLibraryLoadData(&lib, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  image.assign(image.size(), 0);  // The library keeps its own copy.
  hipKernel_t k = nullptr;
  HIP_OK(hipLibraryGetKernel(&k, lib, "add_vec"));
  RunLibraryKernel(k, "hipLibraryLoadData");
  HIP_OK(hipLibraryUnload(lib));
  std::vector<char> junk(4096, 0x5a);
  HIP_EXPECT(hipLibraryLoadData(&lib, junk.data(), nullptr, nullptr, 0, nullptr, nullptr, 0), hipErrorInvalidImage);
  image = ReadFile(ModulePath());
  hipJitOption opt = hipJitOptionMaxRegisters;
  void* val = nullptr;
  HIP_EXPECT(hipLibraryLoadData(&lib, image.data(), &opt, &val, 1, nullptr, nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipLibraryLoadData(&lib, nullptr, nullptr, nullptr, 0, nullptr, nullptr, 0), hipErrorInvalidValue);
  HIP_EXPECT(hipLibraryLoadData(nullptr, image.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
             hipErrorInvalidValue);
}

void LibraryLoadFromFile() {
  hipLibrary_t lib = LoadLibrary();
  hipKernel_t k = nullptr;
  HIP_OK(hipLibraryGetKernel(&k, lib, "scaled_add"));
  const char* name = nullptr;
  HIP_OK(hipKernelGetName(&name, k));
  CHECK(name != nullptr && std::strcmp(name, "scaled_add") == 0, "kernel name %s", name ? name : "(null)");
  HIP_OK(hipLibraryUnload(lib));
  HIP_EXPECT(hipLibraryLoadFromFile(&lib, "/nonexistent/hipr.co", nullptr, nullptr, 0, nullptr, nullptr, 0),
             hipErrorInvalidValue);
  char junk[] = "/tmp/hipr-not-a-code-object-XXXXXX";
  int fd = mkstemp(junk);
  CHECK(fd >= 0 && write(fd, "not a code object", 17) == 17, "cannot write %s", junk);
  close(fd);
  HIP_EXPECT(hipLibraryLoadFromFile(&lib, junk, nullptr, nullptr, 0, nullptr, nullptr, 0), hipErrorInvalidImage);
  unlink(junk);
}

void LibraryUnload() {
  hipLibrary_t lib = LoadLibrary();
  hipKernel_t k = nullptr;
  HIP_OK(hipLibraryGetKernel(&k, lib, "add_vec"));
  HIP_OK(hipLibraryUnload(lib));
  unsigned count = 99;
  HIP_EXPECT(hipLibraryGetKernelCount(&count, lib), hipErrorInvalidValue);
  CHECK(count == 99, "a stale library reported %u kernels", count);
  ModuleVectors v;
  HIP_EXPECT(hipModuleLaunchKernel(reinterpret_cast<hipFunction_t>(k), kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, v.params,
                                   nullptr),
             hipErrorInvalidResourceHandle);
  HIP_EXPECT(hipLibraryUnload(lib), hipErrorInvalidResourceHandle);
  HIP_EXPECT(hipLibraryUnload(nullptr), hipErrorInvalidResourceHandle);
  (void)hipGetLastError();
}

void LibraryGetKernel() {
  hipLibrary_t lib = LoadLibrary();
  hipKernel_t a = nullptr, b = nullptr;
  HIP_OK(hipLibraryGetKernel(&a, lib, "add_vec"));
  HIP_OK(hipLibraryGetKernel(&b, lib, "add_vec"));
  CHECK(a != nullptr && a == b, "two lookups gave %p and %p", static_cast<void*>(a), static_cast<void*>(b));
  RunLibraryKernel(a, "hipLibraryGetKernel");
  HIP_EXPECT(hipLibraryGetKernel(&b, lib, "no_such_kernel"), hipErrorNotFound);
  HIP_EXPECT(hipLibraryGetKernel(&b, lib, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipLibraryGetKernel(&b, nullptr, "add_vec"), hipErrorInvalidValue);
  HIP_OK(hipLibraryUnload(lib));
}

void LibraryGetKernelCount() {
  hipLibrary_t lib = LoadLibrary();
  LoadedModule lm;
  unsigned from_library = 0, from_module = 0;
  HIP_OK(hipLibraryGetKernelCount(&from_library, lib));
  HIP_OK(hipModuleGetFunctionCount(&from_module, lm.module));
  CHECK(from_library >= 2 && from_library == from_module, "library %u kernels, module %u", from_library, from_module);
  HIP_EXPECT(hipLibraryGetKernelCount(nullptr, lib), hipErrorInvalidValue);
  HIP_OK(hipLibraryUnload(lib));
}

void LibraryEnumerateKernels() {
  hipLibrary_t lib = LoadLibrary();
  unsigned count = 0;
  HIP_OK(hipLibraryGetKernelCount(&count, lib));
  std::vector<hipKernel_t> all(count + 2, nullptr);
  HIP_OK(hipLibraryEnumerateKernels(all.data(), count + 2, lib));
  bool saw_add = false;
  for (unsigned i = 0; i < count; ++i) {
    const char* name = nullptr;
    HIP_OK(hipKernelGetName(&name, all[i]));
    hipKernel_t again = nullptr;
    HIP_OK(hipLibraryGetKernel(&again, lib, name));
    CHECK(again == all[i], "kernel %u (%s) is not what hipLibraryGetKernel gives", i, name);
    for (unsigned j = 0; j < i; ++j) CHECK(all[j] != all[i], "kernels %u and %u are the same handle", j, i);
    saw_add = saw_add || std::strcmp(name, "add_vec") == 0;
  }
  CHECK(saw_add, "add_vec was not enumerated");
  CHECK(all[count] == nullptr && all[count + 1] == nullptr, "entries past the kernel count were written");
  std::vector<hipKernel_t> first(2, nullptr);
  HIP_OK(hipLibraryEnumerateKernels(first.data(), 1, lib));
  CHECK(first[0] == all[0] && first[1] == nullptr, "enumerating one kernel wrote %p, %p",
        static_cast<void*>(first[0]), static_cast<void*>(first[1]));
  HIP_EXPECT(hipLibraryEnumerateKernels(nullptr, 1, lib), hipErrorInvalidValue);
  HIP_OK(hipLibraryUnload(lib));
}

void KernelGetLibrary() {
  hipLibrary_t lib = LoadLibrary();
  hipKernel_t k = nullptr;
  HIP_OK(hipLibraryGetKernel(&k, lib, "add_vec"));
  hipLibrary_t owner = nullptr;
  HIP_OK(hipKernelGetLibrary(&owner, k));
  CHECK(owner == lib, "owner %p, library %p", static_cast<void*>(owner), static_cast<void*>(lib));
  LoadedModule lm;  // A module's function belongs to no library.
  HIP_EXPECT(hipKernelGetLibrary(&owner, reinterpret_cast<hipKernel_t>(lm.add)), hipErrorInvalidHandle);
  HIP_EXPECT(hipKernelGetLibrary(nullptr, k), hipErrorInvalidValue);
  HIP_OK(hipLibraryUnload(lib));
  HIP_EXPECT(hipKernelGetLibrary(&owner, k), hipErrorInvalidHandle);
}

void KernelGetName() {
  hipLibrary_t lib = LoadLibrary();
  hipKernel_t k = nullptr;
  HIP_OK(hipLibraryGetKernel(&k, lib, "add_vec"));
  const char* name = nullptr;
  HIP_OK(hipKernelGetName(&name, k));
  CHECK(name != nullptr && std::strcmp(name, "add_vec") == 0, "name %s", name ? name : "(null)");
  HIP_EXPECT(hipKernelGetName(nullptr, k), hipErrorInvalidValue);
  HIP_EXPECT(hipKernelGetName(&name, nullptr), hipErrorInvalidValue);
  HIP_OK(hipLibraryUnload(lib));
  HIP_EXPECT(hipKernelGetName(&name, k), hipErrorInvalidHandle);
}

void FuncGetAttribute() {
  LoadedModule lm;
  int threads = -1;
  HIP_OK(hipFuncGetAttribute(&threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, lm.add));
  CHECK(threads > 0 && threads <= Props(0).maxThreadsPerBlock, "max threads per block %d", threads);
  int regs = -1;
  HIP_OK(hipFuncGetAttribute(&regs, HIP_FUNC_ATTRIBUTE_NUM_REGS, lm.add));
  CHECK(regs >= 0, "registers %d", regs);
  int v = -4;
  HIP_EXPECT(hipFuncGetAttribute(&v, HIP_FUNC_ATTRIBUTE_NUM_REGS, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipFuncGetAttribute(nullptr, HIP_FUNC_ATTRIBUTE_NUM_REGS, lm.add), hipErrorInvalidValue);
  CHECK(v == -4, "a failed call wrote %d", v);
}

void ModuleOccupancyMaxActiveBlocksPerMultiprocessor() {
  LoadedModule lm;
  int blocks = -1;
  HIP_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, lm.add, 128, 0));
  int big = -1;
  HIP_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&big, lm.add, 1024, 0));
  CHECK(blocks > 0 && big > 0 && big <= blocks, "%d blocks of 128, %d of 1024", blocks, big);
  blocks = -9;
  HIP_EXPECT(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, lm.add, 0, 0), hipErrorInvalidValue);
  CHECK(blocks == -9, "a failed call wrote %d", blocks);
}

void ModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags() {
  LoadedModule lm;
  int plain = -1, flagged = -1;
  HIP_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(&plain, lm.add, 256, 0));
  HIP_OK(hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&flagged, lm.add, 256, 0, hipOccupancyDefault));
  CHECK(flagged > 0 && flagged == plain, "with flags %d, without %d", flagged, plain);
  flagged = -9;
  HIP_EXPECT(hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&flagged, lm.add, 256, 0, 0x80),
             hipErrorInvalidValue);
  CHECK(flagged == -9, "a failed call wrote %d", flagged);
}

void ModuleOccupancyMaxPotentialBlockSize() {
  LoadedModule lm;
  int grid = -1, block = -1;
  HIP_OK(hipModuleOccupancyMaxPotentialBlockSize(&grid, &block, lm.add, 0, 0));
  CHECK(grid > 0 && block > 0 && block <= Props(0).maxThreadsPerBlock, "grid %d, block %d", grid, block);
  HIP_OK(hipModuleOccupancyMaxPotentialBlockSize(&grid, &block, lm.add, 0, 32));
  CHECK(block > 0 && block <= 32, "block %d under a limit of 32", block);
  HIP_EXPECT(hipModuleOccupancyMaxPotentialBlockSize(nullptr, &block, lm.add, 0, 0), hipErrorInvalidValue);
}

void ModuleOccupancyMaxPotentialBlockSizeWithFlags() {
  LoadedModule lm;
  int grid = -1, block = -1, grid2 = -1, block2 = -1;
  HIP_OK(hipModuleOccupancyMaxPotentialBlockSize(&grid, &block, lm.add, 0, 0));
  HIP_OK(hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&grid2, &block2, lm.add, 0, 0, hipOccupancyDefault));
  CHECK(grid2 == grid && block2 == block && block2 > 0, "with flags %d x %d, without %d x %d", grid2, block2, grid,
        block);
  grid2 = -3;
  HIP_EXPECT(hipModuleOccupancyMaxPotentialBlockSizeWithFlags(&grid2, &block2, lm.add, 0, 0, 0x80),
             hipErrorInvalidValue);
  CHECK(grid2 == -3, "a failed call wrote %d", grid2);
}

void KernelNameRef() {
  LoadedModule lm;
  const char* name = hipKernelNameRef(lm.add);
  CHECK(name != nullptr && strcmp(name, "add_vec") == 0, "name %s", name != nullptr ? name : "(null)");
  CHECK(hipKernelNameRef(nullptr) == nullptr, "null has a name");
}

// ---- Graphs ------------------------------------------------------------------------------

hipGraphNodeType TypeOf(hipGraphNode_t n) {
  hipGraphNodeType t = hipGraphNodeTypeCount;
  HIP_OK(hipGraphNodeGetType(n, &t));
  return t;
}

hipKernelNodeParams FillParams(void** args, int grid = kGrid) {
  hipKernelNodeParams kp{};
  kp.func = reinterpret_cast<void*>(Fill);
  kp.gridDim = dim3(grid);
  kp.blockDim = dim3(kBlock);
  kp.kernelParams = args;
  return kp;
}

void RunGraph(hipGraph_t g, int times = 1) {
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  for (int i = 0; i < times; ++i) HIP_OK(hipGraphLaunch(exec, s));
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipGraphExecDestroy(exec));
}

void GraphCreate() {
  hipGraph_t g = nullptr;
  HIP_OK(hipGraphCreate(&g, 0));
  size_t count = 9;
  HIP_OK(hipGraphGetNodes(g, nullptr, &count));
  CHECK(g != nullptr && count == 0, "a new graph has %zu nodes", count);
  int* d = NewInts();
  int value = 81, n = kN;
  void* args[] = {&d, &value, &n};
  hipKernelNodeParams kp = FillParams(args);
  hipGraphNode_t k;
  HIP_OK(hipGraphAddKernelNode(&k, g, nullptr, 0, &kp));
  RunGraph(g);
  CHECK_ALL(d, 81, "a created graph's kernel");
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
  hipGraph_t untouched = reinterpret_cast<hipGraph_t>(0x1);
  HIP_EXPECT(hipGraphCreate(&untouched, 1), hipErrorInvalidValue);
  CHECK(untouched == reinterpret_cast<hipGraph_t>(0x1), "a refused create wrote a graph");
}

void GraphDestroy() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  hipGraphNode_t e;
  HIP_OK(hipGraphAddEmptyNode(&e, g, nullptr, 0));
  HIP_OK(hipGraphDestroy(g));
  size_t count = 0;
  CHECK(hipGraphGetNodes(g, nullptr, &count) != hipSuccess, "a destroyed graph still answers");
  CHECK(hipGraphDestroy(g) != hipSuccess, "a graph was destroyed twice");
}

void GraphAddKernelNode() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 82, n = kN;
  void* args[] = {&d, &value, &n};
  hipKernelNodeParams kp = FillParams(args);
  hipGraphNode_t k = nullptr;
  HIP_OK(hipGraphAddKernelNode(&k, g, nullptr, 0, &kp));
  CHECK(TypeOf(k) == hipGraphNodeTypeKernel, "type %d", TypeOf(k));
  value = 0;  // Arguments are captured when the node is added.
  RunGraph(g);
  CHECK_ALL(d, 82, "kernel node");
  kp.func = reinterpret_cast<void*>(NotAKernel);
  HIP_EXPECT(hipGraphAddKernelNode(&k, g, nullptr, 0, &kp), hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipGraphAddKernelNode(&k, g, nullptr, 0, nullptr), hipErrorInvalidValue);
  size_t count = 0;
  HIP_OK(hipGraphGetNodes(g, nullptr, &count));
  CHECK(count == 1, "refused nodes were added: %zu nodes", count);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphAddMemsetNode() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  hipMemsetParams mp{};
  mp.dst = d;
  mp.elementSize = 4;
  mp.width = kN;
  mp.height = 1;
  mp.value = 0x01020304;
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  CHECK(TypeOf(m) == hipGraphNodeTypeMemset, "type %d", TypeOf(m));
  RunGraph(g);
  CHECK_ALL(d, 0x01020304, "memset node");
  mp.elementSize = 3;
  HIP_EXPECT(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphAddMemcpyNode1D() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* src = NewInts();
  int* dst = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, src, 83, kN);
  HIP_OK(hipDeviceSynchronize());
  hipGraphNode_t c;
  HIP_OK(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, dst, src, kN * sizeof(int), hipMemcpyDeviceToDevice));
  CHECK(TypeOf(c) == hipGraphNodeTypeMemcpy, "type %d", TypeOf(c));
  std::vector<int> host(kN, 0);
  hipGraphNode_t down;
  HIP_OK(hipGraphAddMemcpyNode1D(&down, g, &c, 1, host.data(), dst, kN * sizeof(int), hipMemcpyDeviceToHost));
  RunGraph(g);
  CHECK_ALL(dst, 83, "memcpy node");
  for (int i = 0; i < kN; ++i) CHECK(host[i] == 83, "device-to-host memcpy node: host[%d] = %d", i, host[i]);
  HIP_EXPECT(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, dst, src, 0, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, dst, src, 4, static_cast<hipMemcpyKind>(42)),
             hipErrorInvalidMemcpyDirection);
  // More bytes than either allocation holds (clr; hip-tests).
  const size_t whole = kN * sizeof(int);
  HIP_EXPECT(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, dst, src + 1, whole, hipMemcpyDefault), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, dst + 1, src, whole, hipMemcpyDefault), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(src));
  HIP_OK(hipFree(dst));
}

void CountUp(void* p) { static_cast<std::atomic<int>*>(p)->fetch_add(1); }

void GraphAddHostNode() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  std::atomic<int> runs{0};
  hipHostNodeParams hp{CountUp, &runs};
  hipGraphNode_t h;
  HIP_OK(hipGraphAddHostNode(&h, g, nullptr, 0, &hp));
  CHECK(TypeOf(h) == hipGraphNodeTypeHost, "type %d", TypeOf(h));
  CHECK(runs.load() == 0, "a host node ran when added");
  RunGraph(g, 3);
  CHECK(runs.load() == 3, "the host node ran %d times in 3 launches", runs.load());
  hipHostNodeParams bad{nullptr, &runs};
  HIP_EXPECT(hipGraphAddHostNode(&h, g, nullptr, 0, &bad), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

void GraphHostNodeGetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  std::atomic<int> runs{0};
  hipHostNodeParams hp{CountUp, &runs};
  hipGraphNode_t h, e;
  HIP_OK(hipGraphAddHostNode(&h, g, nullptr, 0, &hp));
  HIP_OK(hipGraphAddEmptyNode(&e, g, nullptr, 0));
  hipHostNodeParams got{};
  HIP_OK(hipGraphHostNodeGetParams(h, &got));
  CHECK(got.fn == CountUp && got.userData == &runs, "params %p %p", reinterpret_cast<void*>(got.fn), got.userData);
  hipHostNodeParams untouched{nullptr, reinterpret_cast<void*>(0x1)};
  HIP_EXPECT(hipGraphHostNodeGetParams(e, &untouched), hipErrorInvalidValue);  // Not a host node.
  CHECK(untouched.userData == reinterpret_cast<void*>(0x1), "a failed call wrote params");
  HIP_EXPECT(hipGraphHostNodeGetParams(h, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

void GraphAddEmptyNode() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  std::atomic<int> runs{0};
  hipHostNodeParams hp{CountUp, &runs};
  hipGraphNode_t a, b, join;
  HIP_OK(hipGraphAddHostNode(&a, g, nullptr, 0, &hp));
  HIP_OK(hipGraphAddHostNode(&b, g, nullptr, 0, &hp));
  const hipGraphNode_t both[] = {a, b};
  HIP_OK(hipGraphAddEmptyNode(&join, g, both, 2));
  CHECK(TypeOf(join) == hipGraphNodeTypeEmpty, "type %d", TypeOf(join));
  size_t deps = 0;
  HIP_OK(hipGraphNodeGetDependencies(join, nullptr, &deps));
  CHECK(deps == 2, "the empty join node has %zu dependencies", deps);
  RunGraph(g);
  CHECK(runs.load() == 2, "host nodes ran %d times", runs.load());
  HIP_EXPECT(hipGraphAddEmptyNode(nullptr, g, nullptr, 0), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

// k1 -> k2 by hipGraphAddDependencies: k2's value is the one left.
void GraphAddDependencies() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int v1 = 1, v2 = 2, n = kN;
  void* a1[] = {&d, &v1, &n};
  void* a2[] = {&d, &v2, &n};
  hipKernelNodeParams p1 = FillParams(a1), p2 = FillParams(a2);
  hipGraphNode_t k1, k2;
  HIP_OK(hipGraphAddKernelNode(&k1, g, nullptr, 0, &p1));
  HIP_OK(hipGraphAddKernelNode(&k2, g, nullptr, 0, &p2));
  size_t roots = 0;
  HIP_OK(hipGraphGetRootNodes(g, nullptr, &roots));
  CHECK(roots == 2, "%zu roots before the edge", roots);
  HIP_OK(hipGraphAddDependencies(g, &k1, &k2, 1));
  HIP_OK(hipGraphGetRootNodes(g, nullptr, &roots));
  CHECK(roots == 1, "%zu roots after the edge", roots);
  HIP_EXPECT(hipGraphAddDependencies(g, &k1, &k2, 1), hipErrorInvalidValue);  // Already there.
  RunGraph(g);
  CHECK_ALL(d, 2, "k1 -> k2");
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

// A diamond: a -> (b, c) -> d.
struct Diamond {
  hipGraph_t g = nullptr;
  hipGraphNode_t a, b, c, d;
  Diamond() {
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphAddEmptyNode(&a, g, nullptr, 0));
    HIP_OK(hipGraphAddEmptyNode(&b, g, &a, 1));
    HIP_OK(hipGraphAddEmptyNode(&c, g, &a, 1));
    const hipGraphNode_t bc[] = {b, c};
    HIP_OK(hipGraphAddEmptyNode(&d, g, bc, 2));
  }
  ~Diamond() { HIP_OK(hipGraphDestroy(g)); }
};

bool Has(const std::vector<hipGraphNode_t>& v, hipGraphNode_t n) {
  for (hipGraphNode_t x : v)
    if (x == n) return true;
  return false;
}

void GraphGetNodes() {
  Diamond dm;
  size_t count = 0;
  HIP_OK(hipGraphGetNodes(dm.g, nullptr, &count));
  CHECK(count == 4, "%zu nodes", count);
  std::vector<hipGraphNode_t> nodes(count);
  HIP_OK(hipGraphGetNodes(dm.g, nodes.data(), &count));
  CHECK(Has(nodes, dm.a) && Has(nodes, dm.b) && Has(nodes, dm.c) && Has(nodes, dm.d), "a node is missing");
  HIP_EXPECT(hipGraphGetNodes(dm.g, nullptr, nullptr), hipErrorInvalidValue);
  // A shorter list is filled to its length, which stays (clr, CUDA); a
  // longer one gets nulls past the nodes and the real count.
  hipGraphNode_t some[3] = {};
  hipGraphNode_t guard = reinterpret_cast<hipGraphNode_t>(0x5eed);
  count = 2;
  some[2] = guard;
  HIP_OK(hipGraphGetNodes(dm.g, some, &count));
  CHECK(count == 2 && some[0] != nullptr && some[1] != nullptr && some[2] == guard, "a short list: count %zu", count);
  hipGraphNode_t more[6];
  count = 6;
  HIP_OK(hipGraphGetNodes(dm.g, more, &count));
  CHECK(count == 4 && more[4] == nullptr && more[5] == nullptr, "a long list: count %zu", count);
}

void GraphGetRootNodes() {
  Diamond dm;
  size_t count = 0;
  HIP_OK(hipGraphGetRootNodes(dm.g, nullptr, &count));
  CHECK(count == 1, "%zu roots", count);
  hipGraphNode_t root = nullptr;
  HIP_OK(hipGraphGetRootNodes(dm.g, &root, &count));
  CHECK(root == dm.a, "the root is not the first node");
  HIP_EXPECT(hipGraphGetRootNodes(dm.g, nullptr, nullptr), hipErrorInvalidValue);
}

void GraphGetEdges() {
  Diamond dm;
  size_t count = 0;
  HIP_OK(hipGraphGetEdges(dm.g, nullptr, nullptr, &count));
  CHECK(count == 4, "%zu edges", count);
  std::vector<hipGraphNode_t> from(count), to(count);
  HIP_OK(hipGraphGetEdges(dm.g, from.data(), to.data(), &count));
  int into_d = 0, out_of_a = 0;
  for (size_t i = 0; i < count; ++i) {
    into_d += to[i] == dm.d;
    out_of_a += from[i] == dm.a;
  }
  CHECK(into_d == 2 && out_of_a == 2, "edges: %d into d, %d out of a", into_d, out_of_a);
  HIP_EXPECT(hipGraphGetEdges(dm.g, nullptr, nullptr, nullptr), hipErrorInvalidValue);
}

void GraphNodeGetType() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  std::atomic<int> runs{0};
  hipHostNodeParams hp{CountUp, &runs};
  hipGraphNode_t e, h;
  HIP_OK(hipGraphAddEmptyNode(&e, g, nullptr, 0));
  HIP_OK(hipGraphAddHostNode(&h, g, nullptr, 0, &hp));
  hipGraphNodeType t = hipGraphNodeTypeCount;
  HIP_OK(hipGraphNodeGetType(e, &t));
  CHECK(t == hipGraphNodeTypeEmpty, "empty node type %d", t);
  HIP_OK(hipGraphNodeGetType(h, &t));
  CHECK(t == hipGraphNodeTypeHost, "host node type %d", t);
  HIP_EXPECT(hipGraphNodeGetType(h, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

void GraphNodeGetDependencies() {
  Diamond dm;
  size_t count = 0;
  HIP_OK(hipGraphNodeGetDependencies(dm.d, nullptr, &count));
  CHECK(count == 2, "d has %zu dependencies", count);
  std::vector<hipGraphNode_t> deps(count);
  HIP_OK(hipGraphNodeGetDependencies(dm.d, deps.data(), &count));
  CHECK(Has(deps, dm.b) && Has(deps, dm.c), "d's dependencies are not b and c");
  HIP_OK(hipGraphNodeGetDependencies(dm.a, nullptr, &count));
  CHECK(count == 0, "the root has %zu dependencies", count);
  HIP_EXPECT(hipGraphNodeGetDependencies(dm.a, nullptr, nullptr), hipErrorInvalidValue);
}

void GraphNodeGetDependentNodes() {
  Diamond dm;
  size_t count = 0;
  HIP_OK(hipGraphNodeGetDependentNodes(dm.a, nullptr, &count));
  CHECK(count == 2, "a has %zu dependents", count);
  std::vector<hipGraphNode_t> next(count);
  HIP_OK(hipGraphNodeGetDependentNodes(dm.a, next.data(), &count));
  CHECK(Has(next, dm.b) && Has(next, dm.c), "a's dependents are not b and c");
  HIP_OK(hipGraphNodeGetDependentNodes(dm.d, nullptr, &count));
  CHECK(count == 0, "the sink has %zu dependents", count);
  HIP_EXPECT(hipGraphNodeGetDependentNodes(dm.a, nullptr, nullptr), hipErrorInvalidValue);
}

hipGraph_t FillGraph(int* d, int* value) {
  static int n = kN;
  static void* args[3];
  args[0] = nullptr;
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  static int* dd;
  dd = d;
  args[0] = &dd;
  args[1] = value;
  args[2] = &n;
  hipKernelNodeParams kp = FillParams(args);
  hipGraphNode_t k;
  HIP_OK(hipGraphAddKernelNode(&k, g, nullptr, 0, &kp));
  return g;
}

void GraphInstantiate() {
  int* d = NewInts();
  int value = 84;
  hipGraph_t g = FillGraph(d, &value);
  hipGraphExec_t exec = nullptr;
  char log[64] = "untouched";
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, log, sizeof log));
  CHECK(exec != nullptr && log[0] == '\0', "exec %p, log \"%s\"", (void*)exec, log);
  HIP_OK(hipGraphDestroy(g));  // The executable graph stands alone.
  HIP_OK(hipGraphLaunch(exec, nullptr));
  HIP_OK(hipStreamSynchronize(nullptr));
  CHECK_ALL(d, 84, "instantiated graph");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_EXPECT(hipGraphInstantiate(nullptr, g, nullptr, nullptr, 0), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
}

void GraphInstantiateWithFlags() {
  int* d = NewInts();
  int value = 85;
  hipGraph_t g = FillGraph(d, &value);
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiateWithFlags(&exec, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
  HIP_OK(hipGraphLaunch(exec, nullptr));
  HIP_OK(hipStreamSynchronize(nullptr));
  CHECK_ALL(d, 85, "instantiated with flags");
  HIP_OK(hipGraphExecDestroy(exec));
  hipGraphExec_t untouched = reinterpret_cast<hipGraphExec_t>(0x1);
  HIP_EXPECT(hipGraphInstantiateWithFlags(&untouched, g, 0x100), hipErrorInvalidValue);
  CHECK(untouched == reinterpret_cast<hipGraphExec_t>(0x1), "a refused instantiate wrote an exec");
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphLaunch() {
  int* d = NewInts();
  int value = 86;
  hipGraph_t g = FillGraph(d, &value);
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  hipStream_t s;  // Non-blocking: the copy that reads d must not wait for it.
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(s, WaitAtGate, &gate));
  HIP_OK(hipGraphLaunch(exec, s));  // In stream order: after the gate.
  WaitEntered(gate);
  HIP_EXPECT(hipStreamQuery(s), hipErrorNotReady);
  CHECK(ReadInts(d)[0] == 0, "the graph ran before the work ahead of it in its stream");
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 86, "launched graph");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_EXPECT(hipGraphLaunch(exec, s), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphExecDestroy() {
  int* d = NewInts();
  int value = 87;
  hipGraph_t g = FillGraph(d, &value);
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  HIP_OK(hipGraphLaunch(exec, nullptr));
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipStreamSynchronize(nullptr));
  CHECK_ALL(d, 87, "a graph launched before its exec was destroyed");
  HIP_EXPECT(hipGraphLaunch(exec, nullptr), hipErrorInvalidValue);
  CHECK(hipGraphExecDestroy(exec) != hipSuccess, "an exec was destroyed twice");
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

// ---- Graph node parameters, structure and executable-graph updates ---------------------------

hipGraphNode_t AddFill(hipGraph_t g, int** d, int* value, const hipGraphNode_t* deps = nullptr, size_t n_deps = 0) {
  static int n = kN;
  void* args[] = {d, value, &n};
  hipKernelNodeParams kp = FillParams(args);
  hipGraphNode_t k = nullptr;
  HIP_OK(hipGraphAddKernelNode(&k, g, deps, n_deps, &kp));
  return k;
}

hipGraphExec_t Instantiate(hipGraph_t g) {
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiate(&exec, g, nullptr, nullptr, 0));
  return exec;
}

void LaunchAndWait(hipGraphExec_t exec) {
  HIP_OK(hipGraphLaunch(exec, nullptr));
  HIP_OK(hipStreamSynchronize(nullptr));
}

size_t NodeCount(hipGraph_t g, bool roots = false) {
  size_t count = 0;
  HIP_OK(roots ? hipGraphGetRootNodes(g, nullptr, &count) : hipGraphGetNodes(g, nullptr, &count));
  return count;
}

// The _spt capture entry points on the null stream capture the calling
// thread's per-thread stream.
void CaptureSpt() {
  int* d = NewInts();
  HIP_OK(hipStreamBeginCapture_spt(nullptr, hipStreamCaptureModeThreadLocal));
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  HIP_OK(hipStreamIsCapturing_spt(nullptr, &st));
  CHECK(st == hipStreamCaptureStatusActive, "the per-thread stream is not capturing (%d)", st);
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, hipStreamPerThread, d, 71, kN);
  unsigned long long id = 0;
  HIP_OK(hipStreamGetCaptureInfo_spt(nullptr, &st, &id));
  CHECK(st == hipStreamCaptureStatusActive && id != 0, "capture info: status %d id %llu", st, id);
  const hipGraphNode_t* deps = nullptr;
  size_t n_deps = 0;
  hipGraph_t capturing = nullptr;
  HIP_OK(hipStreamGetCaptureInfo_v2_spt(nullptr, &st, &id, &capturing, &deps, &n_deps));
  CHECK(capturing != nullptr && n_deps == 1, "capture info v2: graph %p, %zu dependencies", (void*)capturing, n_deps);
  hipGraph_t g = nullptr;
  HIP_OK(hipStreamEndCapture_spt(nullptr, &g));
  CHECK(g == capturing && NodeCount(g) == 1, "the per-thread capture's graph has %zu nodes", NodeCount(g));
  CHECK(ReadInts(d)[0] == 0, "captured work ran at capture time");
  hipGraphExec_t exec = Instantiate(g);
  HIP_OK(hipGraphLaunch_spt(exec, nullptr));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK_ALL(d, 71, "a graph captured and launched on the per-thread stream");
  HIP_EXPECT(hipStreamEndCapture_spt(nullptr, &g), hipErrorIllegalState);
  HIP_EXPECT(hipGraphLaunch_spt(nullptr, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void StreamBeginCaptureToGraph() {
  int* d = NewInts();
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  hipMemsetParams mp{};
  mp.dst = d;
  mp.elementSize = 4;
  mp.width = kN;
  mp.height = 1;
  mp.value = 5;
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipStreamBeginCaptureToGraph(s, g, &m, nullptr, 1, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 72, kN);
  hipGraph_t out = nullptr;
  HIP_OK(hipStreamEndCapture(s, &out));
  CHECK(out == g && NodeCount(g) == 2 && NodeCount(g, true) == 1,
        "capture into a graph: got %p for %p, %zu nodes, %zu roots", (void*)out, (void*)g, NodeCount(g), NodeCount(g, true));
  RunGraph(g);
  CHECK_ALL(d, 72, "the kernel captured after the memset node");
  const unsigned char ported[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  HIP_EXPECT(hipStreamBeginCaptureToGraph(s, g, &m, ported, 1, hipStreamCaptureModeGlobal), hipErrorNotSupported);
  HIP_EXPECT(hipStreamBeginCaptureToGraph(s, nullptr, nullptr, nullptr, 0, hipStreamCaptureModeGlobal),
             hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void StreamUpdateCaptureDependencies() {
  int* d = NewInts();
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_OK(hipMemsetAsync(d, 0, kN * sizeof(int), s));
  // Replace the stream's dependencies with none: the kernel becomes a root.
  HIP_OK(hipStreamUpdateCaptureDependencies(s, nullptr, 0, hipStreamSetCaptureDependencies));
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 73, kN);
  HIP_EXPECT(hipStreamUpdateCaptureDependencies(s, nullptr, 0, 7), hipErrorInvalidValue);
  hipGraph_t g = nullptr;
  HIP_OK(hipStreamEndCapture(s, &g));
  CHECK(NodeCount(g) == 2 && NodeCount(g, true) == 2, "%zu nodes, %zu roots after replacing the dependencies",
        NodeCount(g), NodeCount(g, true));
  HIP_EXPECT(hipStreamUpdateCaptureDependencies(s, nullptr, 0, hipStreamAddCaptureDependencies),
             hipErrorIllegalState);  // Not capturing.
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipFree(d));
}

void GraphKernelNodeGetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 74;
  hipGraphNode_t k = AddFill(g, &d, &value);
  value = 0;
  hipKernelNodeParams got{};
  HIP_OK(hipGraphKernelNodeGetParams(k, &got));
  CHECK(got.func == reinterpret_cast<void*>(Fill) && got.gridDim.x == kGrid && got.blockDim.x == kBlock &&
            got.kernelParams != nullptr,
        "params: func %p grid %u block %u", got.func, got.gridDim.x, got.blockDim.x);
  CHECK(*static_cast<int**>(got.kernelParams[0]) == d && *static_cast<int*>(got.kernelParams[1]) == 74 &&
            *static_cast<int*>(got.kernelParams[2]) == kN,
        "the node's arguments read back wrong");
  hipGraphNode_t e;
  HIP_OK(hipGraphAddEmptyNode(&e, g, nullptr, 0));
  HIP_EXPECT(hipGraphKernelNodeGetParams(e, &got), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphKernelNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 75;
  hipGraphNode_t k = AddFill(g, &d, &value);
  int n = kN, other = 76;
  void* args[] = {&d, &other, &n};
  hipKernelNodeParams kp = FillParams(args);
  HIP_OK(hipGraphKernelNodeSetParams(k, &kp));
  RunGraph(g);
  CHECK_ALL(d, 76, "a kernel node after SetParams");
  kp.func = reinterpret_cast<void*>(NotAKernel);
  HIP_EXPECT(hipGraphKernelNodeSetParams(k, &kp), hipErrorInvalidDeviceFunction);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphKernelNodeAttributes() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 77;
  hipGraphNode_t a = AddFill(g, &d, &value);
  hipGraphNode_t b = AddFill(g, &d, &value, &a, 1);
  hipKernelNodeAttrValue v{};
  v.accessPolicyWindow.base_ptr = d;
  v.accessPolicyWindow.num_bytes = kN * sizeof(int);
  v.accessPolicyWindow.hitRatio = 0.5f;
  v.accessPolicyWindow.hitProp = hipAccessPropertyPersisting;
  HIP_OK(hipGraphKernelNodeSetAttribute(a, hipKernelNodeAttributeAccessPolicyWindow, &v));
  hipKernelNodeAttrValue got{};
  HIP_OK(hipGraphKernelNodeGetAttribute(a, hipKernelNodeAttributeAccessPolicyWindow, &got));
  CHECK(got.accessPolicyWindow.base_ptr == d && got.accessPolicyWindow.hitRatio == 0.5f, "the window read back wrong");
  HIP_OK(hipGraphKernelNodeCopyAttributes(a, b));
  got = hipKernelNodeAttrValue{};
  HIP_OK(hipGraphKernelNodeGetAttribute(b, hipKernelNodeAttributeAccessPolicyWindow, &got));
  CHECK(got.accessPolicyWindow.num_bytes == kN * sizeof(int), "CopyAttributes did not copy the window");
  HIP_OK(hipGraphKernelNodeGetAttribute(b, hipKernelNodeAttributeCooperative, &got));
  CHECK(got.cooperative == 0, "a plain kernel node reads as cooperative");
  v.accessPolicyWindow.hitRatio = 2.0f;
  HIP_EXPECT(hipGraphKernelNodeSetAttribute(a, hipKernelNodeAttributeAccessPolicyWindow, &v), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphKernelNodeGetAttribute(a, static_cast<hipKernelNodeAttrID>(99), &got), hipErrorInvalidValue);
  RunGraph(g);
  CHECK_ALL(d, 77, "kernel nodes with attributes");
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

hipMemsetParams SetInts(int* d, unsigned value) {
  hipMemsetParams mp{};
  mp.dst = d;
  mp.elementSize = 4;
  mp.width = kN;
  mp.height = 1;
  mp.value = value;
  return mp;
}

void GraphMemsetNodeGetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  hipMemsetParams mp = SetInts(d, 78);
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  hipMemsetParams got{};
  HIP_OK(hipGraphMemsetNodeGetParams(m, &got));
  CHECK(got.dst == d && got.elementSize == 4 && got.width == kN && got.height == 1 && got.value == 78,
        "memset params read back: dst %p es %u width %zu value %u", got.dst, got.elementSize, got.width, got.value);
  HIP_EXPECT(hipGraphMemsetNodeGetParams(m, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphMemsetNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  hipMemsetParams mp = SetInts(d, 1);
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  mp.value = 79;
  HIP_OK(hipGraphMemsetNodeSetParams(m, &mp));
  RunGraph(g);
  CHECK_ALL(d, 79, "a memset node after SetParams");
  mp.elementSize = 3;
  HIP_EXPECT(hipGraphMemsetNodeSetParams(m, &mp), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

// kN ints seen as 2 slices of 5 rows of 100: the first 4 rows of each slice.
constexpr size_t kRow = 100 * sizeof(int);
hipMemcpy3DParms FourRowsOfEachSlice(int* dst, int* src) {
  hipMemcpy3DParms p{};
  p.srcPtr = make_hipPitchedPtr(src, kRow, 100, 5);
  p.dstPtr = make_hipPitchedPtr(dst, kRow, 100, 5);
  p.extent = make_hipExtent(kRow, 4, 2);
  p.kind = hipMemcpyDeviceToDevice;
  return p;
}

void CheckFourRows(int* d, int value, const char* what) {
  std::vector<int> got = ReadInts(d);
  for (int i = 0; i < kN; ++i) {
    const bool copied = (i / 100) % 5 != 4;
    CHECK(got[i] == (copied ? value : 0), "%s: element %d is %d", what, i, got[i]);
  }
}

void GraphAddMemcpyNode() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* src = NewInts();
  int* dst = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, src, 80, kN);
  HIP_OK(hipDeviceSynchronize());
  hipMemcpy3DParms p = FourRowsOfEachSlice(dst, src);
  hipGraphNode_t c;
  HIP_OK(hipGraphAddMemcpyNode(&c, g, nullptr, 0, &p));
  CHECK(TypeOf(c) == hipGraphNodeTypeMemcpy, "type %d", TypeOf(c));
  RunGraph(g);
  CheckFourRows(dst, 80, "a 3-D memcpy node");
  p.extent.height = 6;  // Past the slice.
  HIP_EXPECT(hipGraphAddMemcpyNode(&c, g, nullptr, 0, &p), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(src));
  HIP_OK(hipFree(dst));
}

void GraphMemcpyNodeGetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* src = NewInts();
  int* dst = NewInts();
  hipMemcpy3DParms p = FourRowsOfEachSlice(dst, src);
  hipGraphNode_t c, c1;
  HIP_OK(hipGraphAddMemcpyNode(&c, g, nullptr, 0, &p));
  hipMemcpy3DParms got{};
  HIP_OK(hipGraphMemcpyNodeGetParams(c, &got));
  CHECK(got.dstPtr.ptr == dst && got.srcPtr.ysize == 5 && got.extent.depth == 2 && got.kind == hipMemcpyDeviceToDevice,
        "3-D params read back wrong");
  HIP_OK(hipGraphAddMemcpyNode1D(&c1, g, nullptr, 0, dst, src, 40, hipMemcpyDeviceToDevice));
  HIP_OK(hipGraphMemcpyNodeGetParams(c1, &got));
  CHECK(got.srcPtr.ptr == src && got.extent.width == 40 && got.extent.height == 1 && got.extent.depth == 1,
        "a 1-D node's params read back wrong");
  hipGraphNode_t e;
  HIP_OK(hipGraphAddEmptyNode(&e, g, nullptr, 0));
  HIP_EXPECT(hipGraphMemcpyNodeGetParams(e, &got), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(src));
  HIP_OK(hipFree(dst));
}

void GraphMemcpyNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* dst = NewInts();
  int* unused = NewInts();
  hipGraphNode_t c;
  HIP_OK(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, unused, dst, 4, hipMemcpyDeviceToDevice));
  // Now from host memory, through the copy API at launch.
  std::vector<int> host(kN, 81);
  hipMemcpy3DParms p = FourRowsOfEachSlice(dst, host.data());
  p.kind = hipMemcpyHostToDevice;
  HIP_OK(hipGraphMemcpyNodeSetParams(c, &p));
  RunGraph(g);
  CheckFourRows(dst, 81, "a memcpy node set to a host-to-device 3-D copy");
  hipGraphNode_t e;
  HIP_OK(hipGraphAddEmptyNode(&e, g, nullptr, 0));
  HIP_EXPECT(hipGraphMemcpyNodeSetParams(e, &p), hipErrorInvalidValue);  // Not a memcpy node.
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(dst));
  HIP_OK(hipFree(unused));
}

void GraphMemcpyNodeSetParams1D() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* a = NewInts();
  int* b = NewInts();
  hipGraphNode_t c;
  HIP_OK(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, b, a, 4, hipMemcpyDeviceToDevice));
  std::vector<int> host(kN, 82);
  HIP_OK(hipGraphMemcpyNodeSetParams1D(c, b, host.data(), kN * sizeof(int), hipMemcpyHostToDevice));
  RunGraph(g);
  CHECK_ALL(b, 82, "a memcpy node after SetParams1D");
  HIP_EXPECT(hipGraphMemcpyNodeSetParams1D(c, b, a, 0, hipMemcpyDeviceToDevice), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

// to_symbol -> from_symbol: src's values through g_graph_symbol into dst.
struct SymbolGraph {
  hipGraph_t g = nullptr;
  hipGraphNode_t to = nullptr, from = nullptr;
  int* src = NewInts();
  int* dst = NewInts();
  SymbolGraph(int value) {
    hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, src, value, kN);
    HIP_OK(hipDeviceSynchronize());
    HIP_OK(hipGraphCreate(&g, 0));
    HIP_OK(hipGraphAddMemcpyNodeToSymbol(&to, g, nullptr, 0, HIP_SYMBOL(g_graph_symbol), src, kN * sizeof(int), 0,
                                         hipMemcpyDeviceToDevice));
    HIP_OK(hipGraphAddMemcpyNodeFromSymbol(&from, g, &to, 1, dst, HIP_SYMBOL(g_graph_symbol), kN * sizeof(int), 0,
                                           hipMemcpyDeviceToDevice));
  }
  ~SymbolGraph() {
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipFree(src));
    HIP_OK(hipFree(dst));
  }
};

void GraphAddMemcpyNodeToSymbol() {
  SymbolGraph sg(83);
  CHECK(TypeOf(sg.to) == hipGraphNodeTypeMemcpy, "type %d", TypeOf(sg.to));
  RunGraph(sg.g);
  std::vector<int> host(kN);
  HIP_OK(hipMemcpyFromSymbol(host.data(), HIP_SYMBOL(g_graph_symbol), kN * sizeof(int), 0, hipMemcpyDeviceToHost));
  CHECK(host[0] == 83 && host[kN - 1] == 83, "the symbol holds %d", host[0]);
  hipGraphNode_t bad;
  HIP_EXPECT(hipGraphAddMemcpyNodeToSymbol(&bad, sg.g, nullptr, 0, HIP_SYMBOL(g_graph_symbol), sg.src,
                                           (kN + 1) * sizeof(int), 0, hipMemcpyDeviceToDevice),
             hipErrorInvalidValue);
  HIP_EXPECT(hipGraphAddMemcpyNodeToSymbol(&bad, sg.g, nullptr, 0, sg.src, sg.src, 4, 0, hipMemcpyDeviceToDevice),
             hipErrorInvalidSymbol);
}

void GraphAddMemcpyNodeFromSymbol() {
  SymbolGraph sg(84);
  RunGraph(sg.g);
  CHECK_ALL(sg.dst, 84, "copied out of the symbol by a graph");
  hipGraphNode_t bad;
  HIP_EXPECT(hipGraphAddMemcpyNodeFromSymbol(&bad, sg.g, nullptr, 0, sg.dst, HIP_SYMBOL(g_graph_symbol), 8,
                                             kN * sizeof(int), hipMemcpyDeviceToDevice),
             hipErrorInvalidValue);
}

void GraphMemcpyNodeSetParamsToSymbol() {
  SymbolGraph sg(85);
  std::vector<int> host(kN, 86);
  HIP_OK(hipGraphMemcpyNodeSetParamsToSymbol(sg.to, HIP_SYMBOL(g_graph_symbol), host.data(), kN * sizeof(int), 0,
                                             hipMemcpyHostToDevice));
  RunGraph(sg.g);
  CHECK_ALL(sg.dst, 86, "a to-symbol node after SetParams");
  HIP_EXPECT(hipGraphMemcpyNodeSetParamsToSymbol(sg.to, sg.src, host.data(), 4, 0, hipMemcpyHostToDevice),
             hipErrorInvalidSymbol);
}

void GraphMemcpyNodeSetParamsFromSymbol() {
  SymbolGraph sg(87);
  std::vector<int> host(kN, 0);
  HIP_OK(hipGraphMemcpyNodeSetParamsFromSymbol(sg.from, host.data(), HIP_SYMBOL(g_graph_symbol), kN * sizeof(int), 0,
                                               hipMemcpyDeviceToHost));
  RunGraph(sg.g);
  CHECK(host[0] == 87 && host[kN - 1] == 87, "a from-symbol node set to host memory wrote %d", host[0]);
  CHECK(ReadInts(sg.dst)[0] == 0, "the old destination was still written");
  HIP_EXPECT(hipGraphMemcpyNodeSetParamsFromSymbol(sg.from, host.data(), sg.src, 4, 0, hipMemcpyDeviceToHost),
             hipErrorInvalidSymbol);
}

void GraphHostNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  std::atomic<int> first{0}, second{0};
  hipHostNodeParams hp{CountUp, &first};
  hipGraphNode_t h;
  HIP_OK(hipGraphAddHostNode(&h, g, nullptr, 0, &hp));
  hp.userData = &second;
  HIP_OK(hipGraphHostNodeSetParams(h, &hp));
  RunGraph(g, 2);
  CHECK(first.load() == 0 && second.load() == 2, "host node after SetParams: %d and %d runs", first.load(),
        second.load());
  hp.fn = nullptr;
  HIP_EXPECT(hipGraphHostNodeSetParams(h, &hp), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
}

// A graph that records `event` behind a gate on a stream of its own: the
// event is not complete until the gate opens.
void CheckRecordedInOrder(hipGraphExec_t exec, hipEvent_t event, const char* what) {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(s, WaitAtGate, &gate));
  HIP_OK(hipGraphLaunch(exec, s));
  WaitEntered(gate);
  CHECK(hipEventQuery(event) == hipErrorNotReady, "%s: the event completed before the gate opened", what);
  gate.open.store(1);
  HIP_OK(hipEventSynchronize(event));
  HIP_OK(hipEventQuery(event));
  HIP_OK(hipStreamSynchronize(s));
  HIP_OK(hipStreamDestroy(s));
}

struct EventGraph {
  hipGraph_t g = nullptr;
  hipGraphNode_t node = nullptr;
  hipEvent_t a = nullptr, b = nullptr;
  EventGraph(bool record) {
    HIP_OK(hipEventCreate(&a));
    HIP_OK(hipEventCreate(&b));
    HIP_OK(hipGraphCreate(&g, 0));
    if (record)
      HIP_OK(hipGraphAddEventRecordNode(&node, g, nullptr, 0, a));
    else
      HIP_OK(hipGraphAddEventWaitNode(&node, g, nullptr, 0, a));
  }
  ~EventGraph() {
    HIP_OK(hipGraphDestroy(g));
    HIP_OK(hipEventDestroy(a));
    HIP_OK(hipEventDestroy(b));
  }
};

void GraphAddEventRecordNode() {
  EventGraph eg(true);
  CHECK(TypeOf(eg.node) == hipGraphNodeTypeEventRecord, "type %d", TypeOf(eg.node));
  hipGraphExec_t exec = Instantiate(eg.g);
  CheckRecordedInOrder(exec, eg.a, "an event record node");
  HIP_OK(hipGraphExecDestroy(exec));
  hipGraphNode_t bad;
  HIP_EXPECT(hipGraphAddEventRecordNode(&bad, eg.g, nullptr, 0, nullptr), hipErrorInvalidValue);
}

// A wait node on an event a gated stream records holds the kernel after it.
void GraphAddEventWaitNode() {
  EventGraph eg(false);
  CHECK(TypeOf(eg.node) == hipGraphNodeTypeWaitEvent, "type %d", TypeOf(eg.node));
  int* d = NewInts();
  int value = 88;
  AddFill(eg.g, &d, &value, &eg.node, 1);
  hipGraphExec_t exec = Instantiate(eg.g);
  hipStream_t gated, s;
  HIP_OK(hipStreamCreateWithFlags(&gated, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(gated, WaitAtGate, &gate));
  HIP_OK(hipEventRecord(eg.a, gated));
  HIP_OK(hipGraphLaunch(exec, s));
  WaitEntered(gate);
  usleep(20000);
  CHECK(ReadInts(d)[0] == 0, "the kernel after the wait node ran before the event");
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 88, "the kernel after the wait node");
  HIP_OK(hipStreamSynchronize(gated));
  HIP_OK(hipStreamDestroy(gated));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipFree(d));
  hipGraphNode_t bad;
  HIP_EXPECT(hipGraphAddEventWaitNode(&bad, eg.g, nullptr, 0, nullptr), hipErrorInvalidValue);
}

void GraphEventRecordNodeGetEvent() {
  EventGraph eg(true);
  hipEvent_t got = nullptr;
  HIP_OK(hipGraphEventRecordNodeGetEvent(eg.node, &got));
  CHECK(got == eg.a, "the record node's event read back wrong");
  EventGraph wait(false);
  HIP_EXPECT(hipGraphEventRecordNodeGetEvent(wait.node, &got), hipErrorInvalidValue);
}

void GraphEventWaitNodeGetEvent() {
  EventGraph eg(false);
  hipEvent_t got = nullptr;
  HIP_OK(hipGraphEventWaitNodeGetEvent(eg.node, &got));
  CHECK(got == eg.a, "the wait node's event read back wrong");
  HIP_EXPECT(hipGraphEventWaitNodeGetEvent(eg.node, nullptr), hipErrorInvalidValue);
}

void GraphEventRecordNodeSetEvent() {
  EventGraph eg(true);
  HIP_OK(hipGraphEventRecordNodeSetEvent(eg.node, eg.b));
  hipEvent_t got = nullptr;
  HIP_OK(hipGraphEventRecordNodeGetEvent(eg.node, &got));
  CHECK(got == eg.b, "SetEvent did not take");
  hipGraphExec_t exec = Instantiate(eg.g);
  CheckRecordedInOrder(exec, eg.b, "a record node after SetEvent");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_EXPECT(hipGraphEventRecordNodeSetEvent(eg.node, nullptr), hipErrorInvalidValue);
}

void GraphEventWaitNodeSetEvent() {
  EventGraph eg(false);
  HIP_OK(hipGraphEventWaitNodeSetEvent(eg.node, eg.b));
  hipEvent_t got = nullptr;
  HIP_OK(hipGraphEventWaitNodeGetEvent(eg.node, &got));
  CHECK(got == eg.b, "SetEvent did not take");
  HIP_EXPECT(hipGraphEventWaitNodeSetEvent(eg.node, nullptr), hipErrorInvalidValue);
}

void GraphAddChildGraphNode() {
  int* d = NewInts();
  int value = 89;
  hipGraph_t child;
  HIP_OK(hipGraphCreate(&child, 0));
  AddFill(child, &d, &value);
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  hipMemsetParams mp = SetInts(d, 1);
  hipGraphNode_t m, c;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  HIP_OK(hipGraphAddChildGraphNode(&c, g, &m, 1, child));
  CHECK(TypeOf(c) == hipGraphNodeTypeGraph, "type %d", TypeOf(c));
  HIP_OK(hipGraphDestroy(child));  // The node holds its own copy.
  RunGraph(g);
  CHECK_ALL(d, 89, "a child graph after a memset node");
  HIP_EXPECT(hipGraphAddChildGraphNode(&c, g, nullptr, 0, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphChildGraphNodeGetGraph() {
  hipGraph_t child, g;
  HIP_OK(hipGraphCreate(&child, 0));
  hipGraphNode_t e1, e2, c;
  HIP_OK(hipGraphAddEmptyNode(&e1, child, nullptr, 0));
  HIP_OK(hipGraphAddEmptyNode(&e2, child, &e1, 1));
  HIP_OK(hipGraphCreate(&g, 0));
  HIP_OK(hipGraphAddChildGraphNode(&c, g, nullptr, 0, child));
  hipGraph_t inner = nullptr;
  HIP_OK(hipGraphChildGraphNodeGetGraph(c, &inner));
  CHECK(inner != nullptr && inner != child && NodeCount(inner) == 2, "the embedded graph: %p, %zu nodes",
        (void*)inner, inner != nullptr ? NodeCount(inner) : 0);
  HIP_EXPECT(hipGraphDestroy(inner), hipErrorInvalidValue);  // Owned by its node.
  HIP_EXPECT(hipGraphChildGraphNodeGetGraph(e1, &inner), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipGraphDestroy(child));
}

void GraphRemoveDependencies() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int v1 = 1, v2 = 2;
  hipGraphNode_t k1 = AddFill(g, &d, &v1);
  hipGraphNode_t k2 = AddFill(g, &d, &v2, &k1, 1);
  HIP_OK(hipGraphRemoveDependencies(g, &k1, &k2, 1));
  CHECK(NodeCount(g, true) == 2, "%zu roots after removing the edge", NodeCount(g, true));
  size_t edges = 9;
  HIP_OK(hipGraphGetEdges(g, nullptr, nullptr, &edges));
  CHECK(edges == 0, "%zu edges left", edges);
  HIP_EXPECT(hipGraphRemoveDependencies(g, &k1, &k2, 1), hipErrorInvalidValue);  // No such edge now.
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphDestroyNode() {
  Diamond dm;
  HIP_OK(hipGraphDestroyNode(dm.b));
  CHECK(NodeCount(dm.g) == 3, "%zu nodes after destroying one", NodeCount(dm.g));
  size_t deps = 0;
  HIP_OK(hipGraphNodeGetDependencies(dm.d, nullptr, &deps));
  CHECK(deps == 1, "the join still has %zu dependencies", deps);
  HIP_EXPECT(hipGraphDestroyNode(dm.b), hipErrorInvalidValue);
}

void GraphClone() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 90;
  hipGraphNode_t k = AddFill(g, &d, &value);
  hipGraph_t clone = nullptr;
  HIP_OK(hipGraphClone(&clone, g));
  HIP_OK(hipGraphDestroyNode(k));  // The clone keeps its own nodes.
  HIP_OK(hipGraphDestroy(g));
  CHECK(clone != nullptr && NodeCount(clone) == 1, "the clone has %zu nodes", NodeCount(clone));
  RunGraph(clone);
  CHECK_ALL(d, 90, "a cloned graph");
  HIP_EXPECT(hipGraphClone(nullptr, clone), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(clone));
  HIP_OK(hipFree(d));
}

void GraphNodeFindInClone() {
  Diamond dm;
  hipGraph_t clone;
  HIP_OK(hipGraphClone(&clone, dm.g));
  hipGraphNode_t found = nullptr;
  HIP_OK(hipGraphNodeFindInClone(&found, dm.d, clone));
  size_t deps = 0;
  HIP_OK(hipGraphNodeGetDependencies(found, nullptr, &deps));
  CHECK(found != dm.d && deps == 2, "the clone of the join: %p with %zu dependencies", (void*)found, deps);
  hipGraphNode_t later;
  HIP_OK(hipGraphAddEmptyNode(&later, dm.g, nullptr, 0));
  HIP_EXPECT(hipGraphNodeFindInClone(&found, later, clone), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(clone));
}

void GraphDebugDotPrint() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 1;
  hipGraphNode_t k = AddFill(g, &d, &value);
  hipGraphNode_t e;
  HIP_OK(hipGraphAddEmptyNode(&e, g, &k, 1));
  char path[] = "/tmp/hipr-graph-XXXXXX";
  const int fd = mkstemp(path);
  CHECK(fd >= 0, "mkstemp failed");
  close(fd);
  HIP_OK(hipGraphDebugDotPrint(g, path, 0));
  std::string text;
  if (FILE* f = fopen(path, "r")) {
    char buf[512];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
    fclose(f);
  }
  unlink(path);
  CHECK(text.find("digraph") != std::string::npos && text.find("Fill") != std::string::npos &&
            text.find("n0 -> n1") != std::string::npos,
        "the DOT file: %s", text.c_str());
  HIP_EXPECT(hipGraphDebugDotPrint(g, "/nonexistent-dir/graph.dot", 0), hipErrorOperatingSystem);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphExecGetFlags() {
  int* d = NewInts();
  int value = 1;
  hipGraph_t g = FillGraph(d, &value);
  hipGraphExec_t exec;
  HIP_OK(hipGraphInstantiateWithFlags(&exec, g, hipGraphInstantiateFlagAutoFreeOnLaunch));
  unsigned long long flags = 0;
  HIP_OK(hipGraphExecGetFlags(exec, &flags));
  CHECK(flags == hipGraphInstantiateFlagAutoFreeOnLaunch, "flags %llu", flags);
  HIP_EXPECT(hipGraphExecGetFlags(exec, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphUpload() {
  int* d = NewInts();
  int value = 91;
  hipGraph_t g = FillGraph(d, &value);
  hipGraphExec_t exec = Instantiate(g);
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HIP_OK(hipGraphUpload(exec, s));
  CHECK(ReadInts(d)[0] == 0, "an upload ran the graph");
  HIP_OK(hipGraphLaunch(exec, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 91, "launched after an upload");
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_EXPECT(hipGraphUpload(exec, s), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

// memset(1) -> kernel(92): with the kernel disabled the memset's value stays.
void GraphNodeEnabled() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  hipMemsetParams mp = SetInts(d, 1);
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  int value = 92;
  hipGraphNode_t k = AddFill(g, &d, &value, &m, 1);
  std::atomic<int> runs{0};
  hipHostNodeParams hp{CountUp, &runs};
  hipGraphNode_t h;
  HIP_OK(hipGraphAddHostNode(&h, g, &k, 1, &hp));
  hipGraphExec_t exec = Instantiate(g);
  unsigned enabled = 7;
  HIP_OK(hipGraphNodeGetEnabled(exec, k, &enabled));
  CHECK(enabled == 1, "a new node reads as enabled %u", enabled);
  HIP_OK(hipGraphNodeSetEnabled(exec, k, 0));
  HIP_OK(hipGraphNodeGetEnabled(exec, k, &enabled));
  CHECK(enabled == 0, "a disabled node reads as enabled %u", enabled);
  LaunchAndWait(exec);
  CHECK_ALL(d, 1, "a graph with its kernel disabled");
  HIP_OK(hipGraphNodeSetEnabled(exec, k, 1));
  LaunchAndWait(exec);
  CHECK_ALL(d, 92, "the kernel enabled again");
  CHECK(runs.load() == 2, "the host node ran %d times", runs.load());
  HIP_EXPECT(hipGraphNodeSetEnabled(exec, h, 0), hipErrorInvalidValue);  // Host nodes cannot be.
  HIP_EXPECT(hipGraphNodeGetEnabled(exec, h, &enabled), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphExecKernelNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 93;
  hipGraphNode_t k = AddFill(g, &d, &value);
  hipGraphExec_t exec = Instantiate(g);
  int n = kN, other = 94;
  void* args[] = {&d, &other, &n};
  hipKernelNodeParams kp = FillParams(args);
  HIP_OK(hipGraphExecKernelNodeSetParams(exec, k, &kp));
  LaunchAndWait(exec);
  CHECK_ALL(d, 94, "an exec's kernel after SetParams");
  hipKernelNodeParams got{};
  HIP_OK(hipGraphKernelNodeGetParams(k, &got));
  CHECK(*static_cast<int*>(got.kernelParams[1]) == 93, "the graph's own node changed with the exec");
  hipGraphNode_t stranger;
  HIP_OK(hipGraphAddEmptyNode(&stranger, g, nullptr, 0));  // Not in the exec.
  HIP_EXPECT(hipGraphExecKernelNodeSetParams(exec, stranger, &kp), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphExecMemsetNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  hipMemsetParams mp = SetInts(d, 1);
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  hipGraphExec_t exec = Instantiate(g);
  mp.value = 95;
  HIP_OK(hipGraphExecMemsetNodeSetParams(exec, m, &mp));
  LaunchAndWait(exec);
  CHECK_ALL(d, 95, "an exec's memset after SetParams");
  int value = 1;
  hipGraphNode_t k = AddFill(g, &d, &value);
  HIP_EXPECT(hipGraphExecMemsetNodeSetParams(exec, k, &mp), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphExecMemcpyNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* src = NewInts();
  int* dst = NewInts();
  hipGraphNode_t c;
  HIP_OK(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, src, dst, 4, hipMemcpyDeviceToDevice));
  hipGraphExec_t exec = Instantiate(g);
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, src, 96, kN);
  HIP_OK(hipDeviceSynchronize());
  hipMemcpy3DParms p = FourRowsOfEachSlice(dst, src);
  HIP_OK(hipGraphExecMemcpyNodeSetParams(exec, c, &p));
  LaunchAndWait(exec);
  CheckFourRows(dst, 96, "an exec's memcpy after SetParams");
  p.extent.width = kRow + 1;
  HIP_EXPECT(hipGraphExecMemcpyNodeSetParams(exec, c, &p), hipErrorInvalidPitchValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(src));
  HIP_OK(hipFree(dst));
}

void GraphExecMemcpyNodeSetParams1D() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* a = NewInts();
  int* b = NewInts();
  hipGraphNode_t c;
  HIP_OK(hipGraphAddMemcpyNode1D(&c, g, nullptr, 0, a, b, 4, hipMemcpyDeviceToDevice));
  hipGraphExec_t exec = Instantiate(g);
  std::vector<int> host(kN, 97);
  HIP_OK(hipGraphExecMemcpyNodeSetParams1D(exec, c, b, host.data(), kN * sizeof(int), hipMemcpyHostToDevice));
  LaunchAndWait(exec);
  CHECK_ALL(b, 97, "an exec's memcpy after SetParams1D");
  HIP_EXPECT(hipGraphExecMemcpyNodeSetParams1D(exec, c, b, a, 4, static_cast<hipMemcpyKind>(42)),
             hipErrorInvalidMemcpyDirection);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(a));
  HIP_OK(hipFree(b));
}

void GraphExecMemcpyNodeSetParamsToSymbol() {
  SymbolGraph sg(98);
  hipGraphExec_t exec = Instantiate(sg.g);
  std::vector<int> host(kN, 99);
  HIP_OK(hipGraphExecMemcpyNodeSetParamsToSymbol(exec, sg.to, HIP_SYMBOL(g_graph_symbol), host.data(),
                                                 kN * sizeof(int), 0, hipMemcpyHostToDevice));
  LaunchAndWait(exec);
  CHECK_ALL(sg.dst, 99, "an exec's to-symbol node after SetParams");
  HIP_EXPECT(hipGraphExecMemcpyNodeSetParamsToSymbol(exec, sg.to, HIP_SYMBOL(g_graph_symbol), host.data(),
                                                     4, kN * sizeof(int), hipMemcpyHostToDevice),
             hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
}

void GraphExecMemcpyNodeSetParamsFromSymbol() {
  SymbolGraph sg(100);
  hipGraphExec_t exec = Instantiate(sg.g);
  std::vector<int> host(kN, 0);
  HIP_OK(hipGraphExecMemcpyNodeSetParamsFromSymbol(exec, sg.from, host.data(), HIP_SYMBOL(g_graph_symbol),
                                                   kN * sizeof(int), 0, hipMemcpyDeviceToHost));
  LaunchAndWait(exec);
  CHECK(host[0] == 100 && host[kN - 1] == 100, "an exec's from-symbol node wrote %d", host[0]);
  HIP_EXPECT(hipGraphExecMemcpyNodeSetParamsFromSymbol(exec, sg.from, host.data(), sg.src, 4, 0,
                                                       hipMemcpyDeviceToHost),
             hipErrorInvalidSymbol);
  HIP_OK(hipGraphExecDestroy(exec));
}

void GraphExecHostNodeSetParams() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  std::atomic<int> first{0}, second{0};
  hipHostNodeParams hp{CountUp, &first};
  hipGraphNode_t h;
  HIP_OK(hipGraphAddHostNode(&h, g, nullptr, 0, &hp));
  hipGraphExec_t exec = Instantiate(g);
  LaunchAndWait(exec);
  hp.userData = &second;
  HIP_OK(hipGraphExecHostNodeSetParams(exec, h, &hp));
  LaunchAndWait(exec);
  CHECK(first.load() == 1 && second.load() == 1, "host node runs: %d then %d", first.load(), second.load());
  hp.fn = nullptr;
  HIP_EXPECT(hipGraphExecHostNodeSetParams(exec, h, &hp), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
}

void GraphExecEventRecordNodeSetEvent() {
  EventGraph eg(true);
  hipGraphExec_t exec = Instantiate(eg.g);
  HIP_OK(hipGraphExecEventRecordNodeSetEvent(exec, eg.node, eg.b));
  CheckRecordedInOrder(exec, eg.b, "an exec's record node after SetEvent");
  HIP_EXPECT(hipGraphExecEventRecordNodeSetEvent(exec, eg.node, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
}

void GraphExecEventWaitNodeSetEvent() {
  EventGraph eg(false);
  int* d = NewInts();
  int value = 101;
  AddFill(eg.g, &d, &value, &eg.node, 1);
  hipGraphExec_t exec = Instantiate(eg.g);
  HIP_OK(hipGraphExecEventWaitNodeSetEvent(exec, eg.node, eg.b));
  hipStream_t gated, s;
  HIP_OK(hipStreamCreateWithFlags(&gated, hipStreamNonBlocking));
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(gated, WaitAtGate, &gate));
  HIP_OK(hipEventRecord(eg.b, gated));
  HIP_OK(hipGraphLaunch(exec, s));
  WaitEntered(gate);
  usleep(20000);
  CHECK(ReadInts(d)[0] == 0, "the kernel ran before the event the exec now waits for");
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 101, "after the exec's wait node");
  HIP_OK(hipStreamSynchronize(gated));
  HIP_OK(hipStreamDestroy(gated));
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipGraphExecEventWaitNodeSetEvent(exec, eg.node, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipFree(d));
}

void GraphExecChildGraphNodeSetParams() {
  int* d = NewInts();
  int v1 = 102, v2 = 103;
  hipGraph_t child1, child2, other, g;
  HIP_OK(hipGraphCreate(&child1, 0));
  AddFill(child1, &d, &v1);
  HIP_OK(hipGraphCreate(&child2, 0));
  AddFill(child2, &d, &v2);
  HIP_OK(hipGraphCreate(&other, 0));
  hipGraphNode_t e;
  HIP_OK(hipGraphAddEmptyNode(&e, other, nullptr, 0));
  HIP_OK(hipGraphCreate(&g, 0));
  hipGraphNode_t c;
  HIP_OK(hipGraphAddChildGraphNode(&c, g, nullptr, 0, child1));
  hipGraphExec_t exec = Instantiate(g);
  HIP_OK(hipGraphExecChildGraphNodeSetParams(exec, c, child2));
  LaunchAndWait(exec);
  CHECK_ALL(d, 103, "an exec's child graph after SetParams");
  HIP_EXPECT(hipGraphExecChildGraphNodeSetParams(exec, c, other), hipErrorInvalidValue);  // Other topology.
  HIP_OK(hipGraphExecDestroy(exec));
  for (hipGraph_t x : {child1, child2, other, g}) HIP_OK(hipGraphDestroy(x));
  HIP_OK(hipFree(d));
}

void GraphExecUpdate() {
  int* d = NewInts();
  int v1 = 104, v2 = 105;
  hipGraph_t g1, g2, g3;
  HIP_OK(hipGraphCreate(&g1, 0));
  AddFill(g1, &d, &v1);
  HIP_OK(hipGraphCreate(&g2, 0));
  AddFill(g2, &d, &v2);
  HIP_OK(hipGraphCreate(&g3, 0));
  hipMemsetParams mp = SetInts(d, 1);
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g3, nullptr, 0, &mp));
  hipGraphExec_t exec = Instantiate(g1);
  hipGraphNode_t error_node = reinterpret_cast<hipGraphNode_t>(0x1);
  hipGraphExecUpdateResult result = hipGraphExecUpdateError;
  HIP_OK(hipGraphExecUpdate(exec, g2, &error_node, &result));
  CHECK(result == hipGraphExecUpdateSuccess && error_node == nullptr, "update result %d", result);
  LaunchAndWait(exec);
  CHECK_ALL(d, 105, "an exec updated from another graph");
  HIP_EXPECT(hipGraphExecUpdate(exec, g3, &error_node, &result), hipErrorGraphExecUpdateFailure);
  CHECK(result == hipGraphExecUpdateErrorNodeTypeChanged && error_node == m, "refused update: result %d", result);
  LaunchAndWait(exec);
  CHECK_ALL(d, 105, "an exec after a refused update");
  HIP_OK(hipGraphExecDestroy(exec));
  for (hipGraph_t x : {g1, g2, g3}) HIP_OK(hipGraphDestroy(x));
  HIP_OK(hipFree(d));
}

void GraphInstantiateWithParams() {
  int* d = NewInts();
  int value = 106;
  hipGraph_t g = FillGraph(d, &value);
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  HiprInstantiateParams p{reinterpret_cast<hipGraphNode_t>(0x1), 2 /* Upload */, 9, s};
  hipGraphExec_t exec = nullptr;
  HIP_OK(hipGraphInstantiateWithParams(&exec, g, &p));
  CHECK(exec != nullptr && p.result == 0 && p.error_node == nullptr, "result %d", p.result);
  HIP_OK(hipGraphLaunch(exec, s));
  HIP_OK(hipStreamSynchronize(s));
  CHECK_ALL(d, 106, "instantiated with params");
  p.flags = 4;  // Device launch.
  hipGraphExec_t refused = nullptr;
  HIP_EXPECT(hipGraphInstantiateWithParams(&refused, g, &p), hipErrorNotSupported);
  CHECK(p.result == 3 && refused == nullptr, "a device-launch graph: result %d", p.result);
  HIP_EXPECT(hipGraphInstantiateWithParams(&refused, g, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipStreamDestroy(s));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void EventRecordWithFlags() {
  hipStream_t s;
  HIP_OK(hipStreamCreate(&s));
  CheckEventRecord([](hipEvent_t e, hipStream_t st) { return hipEventRecordWithFlags(e, st, 0); }, s);
  // hipEventRecordExternal in a capture: an event record node.
  hipEvent_t e;
  HIP_OK(hipEventCreate(&e));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_OK(hipEventRecordWithFlags(e, s, 1));
  hipGraph_t g = nullptr;
  HIP_OK(hipStreamEndCapture(s, &g));
  hipGraphNode_t node = nullptr;
  size_t count = 1;
  HIP_OK(hipGraphGetNodes(g, &node, &count));
  CHECK(count == 1 && TypeOf(node) == hipGraphNodeTypeEventRecord, "the external record captured as %zu nodes", count);
  hipGraphExec_t exec = Instantiate(g);
  CheckRecordedInOrder(exec, e, "an external event record captured");
  HIP_EXPECT(hipEventRecordWithFlags(e, s, 5), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
}

void DrvGetErrorText() {
  const char* text = nullptr;
  HIP_OK(hipDrvGetErrorName(hipErrorInvalidValue, &text));
  CHECK(text != nullptr && strcmp(text, "hipErrorInvalidValue") == 0, "name %s", text);
  HIP_OK(hipDrvGetErrorString(hipErrorInvalidValue, &text));
  CHECK(text != nullptr && strcmp(text, "invalid argument") == 0, "text %s", text);
  HIP_OK(hipDrvGetErrorName(hipErrorUnknown, &text));
  CHECK(strcmp(text, "hipErrorUnknown") == 0, "name %s", text);
  const char* untouched = "untouched";
  text = untouched;
  HIP_EXPECT(hipDrvGetErrorName(static_cast<hipError_t>(123456), &text), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvGetErrorString(static_cast<hipError_t>(123456), &text), hipErrorInvalidValue);
  CHECK(text == untouched, "an unknown code wrote a text");
  HIP_EXPECT(hipDrvGetErrorName(hipSuccess, nullptr), hipErrorInvalidValue);
}

// IPC event handles within one process (e2e_ipc covers two): the opened
// event follows the exported one's record, made behind a gate.
void IpcEventHandles() {
  hipEvent_t ev, plain;
  HIP_OK(hipEventCreateWithFlags(&ev, hipEventDisableTiming | hipEventInterprocess));
  HIP_OK(hipEventCreate(&plain));
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  Gate gate;
  HIP_OK(hipLaunchHostFunc(s, WaitAtGate, &gate));
  HIP_OK(hipEventRecord(ev, s));
  hipIpcEventHandle_t handle{};
  HIP_OK(hipIpcGetEventHandle(&handle, ev));
  hipEvent_t opened = nullptr;
  HIP_OK(hipIpcOpenEventHandle(&opened, handle));
  WaitEntered(gate);
  CHECK(opened != nullptr && opened != ev, "the opened event is %p", (void*)opened);
  HIP_EXPECT(hipEventQuery(opened), hipErrorNotReady);
  gate.open.store(1);
  HIP_OK(hipEventSynchronize(opened));
  HIP_OK(hipEventQuery(opened));
  HIP_EXPECT(hipIpcGetEventHandle(&handle, plain), hipErrorInvalidConfiguration);
  hipIpcEventHandle_t zero{};
  hipEvent_t bad = nullptr;
  HIP_EXPECT(hipIpcOpenEventHandle(&bad, zero), hipErrorInvalidValue);
  CHECK(bad == nullptr, "a failed open wrote an event");
  HIP_OK(hipStreamSynchronize(s));
  for (hipEvent_t e : {ev, plain, opened}) HIP_OK(hipEventDestroy(e));
  HIP_OK(hipStreamDestroy(s));
}

void ExtGetLastError() {
  (void)hipExtGetLastError();
  HIP_EXPECT(hipSetDevice(999), hipErrorInvalidDevice);
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  // The last error, not the last call's result (hipGetLastError's 5.x rule).
  HIP_EXPECT(hipExtGetLastError(), hipErrorInvalidDevice);
  HIP_OK(hipExtGetLastError());  // Reset.
}

void GetFuncBySymbol() {
  hipFunction_t f = nullptr;
  HIP_OK(hipGetFuncBySymbol(&f, reinterpret_cast<const void*>(Fill)));
  CHECK(f != nullptr, "no function");
  // The function launches as a module function.
  int* d = NewInts();
  int value = 56, n = kN;
  void* args[] = {&d, &value, &n};
  HIP_OK(hipModuleLaunchKernel(f, kGrid, 1, 1, kBlock, 1, 1, 0, nullptr, args, nullptr));
  CHECK_ALL(d, 56, "a kernel launched through hipGetFuncBySymbol's function");
  hipFunction_t again = nullptr;
  HIP_OK(hipGetFuncBySymbol(&again, reinterpret_cast<const void*>(Fill)));
  CHECK(again == f, "two lookups gave two functions");
  HIP_EXPECT(hipGetFuncBySymbol(&again, reinterpret_cast<const void*>(NotAKernel)), hipErrorInvalidDeviceFunction);
  HIP_EXPECT(hipGetFuncBySymbol(nullptr, reinterpret_cast<const void*>(Fill)), hipErrorInvalidValue);
  HIP_OK(hipFree(d));
}

// One kernel per device, each on a stream of its device.
void ExtLaunchMultiKernelMultiDevice() {
  int* d[2];
  hipStream_t s[2];
  int values[2] = {57, 58}, n = kN;
  void* args[2][3];
  hipLaunchParams list[2];
  for (int dev = 0; dev < 2; ++dev) {
    HIP_OK(hipSetDevice(dev));
    d[dev] = NewInts();
    HIP_OK(hipStreamCreate(&s[dev]));
    args[dev][0] = &d[dev];
    args[dev][1] = &values[dev];
    args[dev][2] = &n;
    list[dev] = hipLaunchParams{reinterpret_cast<void*>(Fill), dim3(kGrid), dim3(kBlock), args[dev], 0, s[dev]};
  }
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipExtLaunchMultiKernelMultiDevice(list, 2, 0));
  for (int dev = 0; dev < 2; ++dev) {
    HIP_OK(hipStreamSynchronize(s[dev]));
    HIP_OK(hipSetDevice(dev));
    CHECK_ALL(d[dev], values[dev], "a kernel of a multi-device launch");
  }
  HIP_OK(hipSetDevice(0));
  hipLaunchParams same[2] = {list[0], list[0]};
  HIP_EXPECT(hipExtLaunchMultiKernelMultiDevice(same, 2, 0), hipErrorInvalidDevice);  // One device twice.
  HIP_EXPECT(hipExtLaunchMultiKernelMultiDevice(list, 2, 1), hipErrorInvalidValue);
  for (int dev = 0; dev < 2; ++dev) {
    HIP_OK(hipStreamDestroy(s[dev]));
    HIP_OK(hipFree(d[dev]));
  }
}

void ModuleGetFunctionCount() {
  LoadedModule lm;
  unsigned count = 0;
  HIP_OK(hipModuleGetFunctionCount(&count, lm.module));
  // module_kernels.hip has three: add_vec, scaled_add, mark_threads.
  CHECK(count == 3, "%u kernels", count);
  HIP_EXPECT(hipModuleGetFunctionCount(nullptr, lm.module), hipErrorInvalidValue);
  HIP_EXPECT(hipModuleGetFunctionCount(&count, nullptr), hipErrorInvalidResourceHandle);
}

void OccupancyAvailableDynamicSMemPerBlock() {
  size_t one = 0, two = 0;
  HIP_OK(hipOccupancyAvailableDynamicSMemPerBlock(&one, reinterpret_cast<const void*>(Fill), 1, kBlock));
  HIP_OK(hipOccupancyAvailableDynamicSMemPerBlock(&two, reinterpret_cast<const void*>(Fill), 2, kBlock));
  CHECK(one > 0 && two > 0 && two <= one, "available dynamic shared memory: %zu for one block, %zu for two", one, two);
  // The model agrees: that much still lets two blocks stay, a byte more not
  // always; never over the per-block limit.
  int blocks = 0;
  HIP_OK(hipOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(Fill), kBlock, two));
  CHECK(blocks >= 2, "with %zu bytes only %d blocks fit", two, blocks);
  hipDeviceProp_t prop;
  HIP_OK(hipGetDeviceProperties(&prop, 0));
  CHECK(one <= prop.sharedMemPerBlock, "%zu bytes over the per-block limit %zu", one, prop.sharedMemPerBlock);
  HIP_EXPECT(hipOccupancyAvailableDynamicSMemPerBlock(&one, reinterpret_cast<const void*>(Fill), 0, kBlock),
             hipErrorInvalidValue);
  HIP_EXPECT(hipOccupancyAvailableDynamicSMemPerBlock(&one, reinterpret_cast<const void*>(NotAKernel), 1, kBlock),
             hipErrorInvalidDeviceFunction);
}

// Driver-API memcpy nodes with this program's (5.x) HIP_MEMCPY3D: kN host
// ints as 2 slices of 5 rows of 100 into the device, 4 rows of each slice.
HIP_MEMCPY3D HostToDeviceRows(const int* host, int* d) {
  HIP_MEMCPY3D p{};
  p.srcMemoryType = hipMemoryTypeHost;
  p.srcHost = host;
  p.srcPitch = kRow;
  p.srcHeight = 5;
  p.dstMemoryType = hipMemoryTypeDevice;
  p.dstDevice = d;
  p.dstPitch = kRow;
  p.dstHeight = 5;
  p.WidthInBytes = kRow;
  p.Height = 4;
  p.Depth = 2;
  return p;
}

void DrvGraphMemcpyNodes() {
  int* d = NewInts();
  std::vector<int> first(kN, 61), second(kN, 62), third(kN, 63);
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  HIP_MEMCPY3D p = HostToDeviceRows(first.data(), d);
  hipGraphNode_t c;
  HIP_OK(hipDrvGraphAddMemcpyNode(&c, g, nullptr, 0, &p, nullptr));
  CHECK(TypeOf(c) == hipGraphNodeTypeMemcpy, "type %d", TypeOf(c));
  RunGraph(g);
  CheckFourRows(d, 61, "a driver-API memcpy node");
  HIP_MEMCPY3D got{};
  HIP_OK(hipDrvGraphMemcpyNodeGetParams(c, &got));
  CHECK(got.srcMemoryType == hipMemoryTypeHost && got.srcHost == first.data() && got.dstMemoryType == hipMemoryTypeDevice &&
            got.dstDevice == d && got.srcPitch == kRow && got.dstHeight == 5 && got.Height == 4 && got.Depth == 2,
        "the node's HIP_MEMCPY3D read back wrong");
  p.srcHost = second.data();
  HIP_OK(hipDrvGraphMemcpyNodeSetParams(c, &p));
  hipGraphExec_t exec = Instantiate(g);
  LaunchAndWait(exec);
  CheckFourRows(d, 62, "a driver-API memcpy node after SetParams");
  p.srcHost = third.data();
  HIP_OK(hipDrvGraphExecMemcpyNodeSetParams(exec, c, &p, nullptr));
  LaunchAndWait(exec);
  CheckFourRows(d, 63, "an exec's driver-API memcpy node after SetParams");
  p.dstMemoryType = hipMemoryTypeArray;
  HIP_EXPECT(hipDrvGraphAddMemcpyNode(&c, g, nullptr, 0, &p, nullptr), hipErrorNotSupported);
  p.dstMemoryType = static_cast<hipMemoryType>(42);
  HIP_EXPECT(hipDrvGraphMemcpyNodeSetParams(c, &p), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvGraphMemcpyNodeGetParams(c, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void DrvGraphMemsetNodes() {
  int* d = NewInts();
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  const hipMemsetParams rt = SetInts(d, 64);
  HiprMemsetNodeParams mp = {rt.dst, rt.pitch, rt.value, rt.elementSize, rt.width, rt.height};
  hipGraphNode_t m;
  HIP_OK(hipDrvGraphAddMemsetNode(&m, g, nullptr, 0, &mp, nullptr));
  hipGraphExec_t exec = Instantiate(g);
  LaunchAndWait(exec);
  CHECK_ALL(d, 64, "a driver-API memset node");
  mp.value = 65;
  HIP_OK(hipDrvGraphExecMemsetNodeSetParams(exec, m, &mp, nullptr));
  LaunchAndWait(exec);
  CHECK_ALL(d, 65, "an exec's driver-API memset node after SetParams");
  mp.elementSize = 3;
  HIP_EXPECT(hipDrvGraphAddMemsetNode(&m, g, nullptr, 0, &mp, nullptr), hipErrorInvalidValue);
  HIP_EXPECT(hipDrvGraphExecMemsetNodeSetParams(exec, m, &mp, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

// hipGraphAddNode: one node of each supported kind, chained, run once:
// memset(1) -> kernel(66) -> memcpy to a second buffer -> host -> event
// record -> event wait -> empty -> child graph (memset of a third buffer).
void GraphAddNodeGeneric() {
  int* a = NewInts();
  int* b = NewInts();
  int* c = NewInts();
  hipGraph_t g, child;
  HIP_OK(hipGraphCreate(&g, 0));
  HIP_OK(hipGraphCreate(&child, 0));
  hipMemsetParams cm = SetInts(c, 67);
  hipGraphNode_t inner;
  HIP_OK(hipGraphAddMemsetNode(&inner, child, nullptr, 0, &cm));
  hipEvent_t ev;
  HIP_OK(hipEventCreate(&ev));
  std::atomic<int> runs{0};
  int value = 66, n = kN;
  void* args[] = {&a, &value, &n};
  std::vector<HiprGraphNodeParams> params(8);
  params[0].type = hipGraphNodeTypeMemset;
  params[0].memset = SetInts(a, 1);
  params[1].type = hipGraphNodeTypeKernel;
  params[1].kernel = FillParams(args);
  params[2].type = hipGraphNodeTypeMemcpy;
  params[2].memcpy.copy.srcPtr = make_hipPitchedPtr(a, kN * sizeof(int), kN * sizeof(int), 1);
  params[2].memcpy.copy.dstPtr = make_hipPitchedPtr(b, kN * sizeof(int), kN * sizeof(int), 1);
  params[2].memcpy.copy.extent = make_hipExtent(kN * sizeof(int), 1, 1);
  params[2].memcpy.copy.kind = hipMemcpyDeviceToDevice;
  params[3].type = hipGraphNodeTypeHost;
  params[3].host = hipHostNodeParams{CountUp, &runs};
  params[4].type = hipGraphNodeTypeEventRecord;
  params[4].event = ev;
  params[5].type = hipGraphNodeTypeWaitEvent;
  params[5].event = ev;
  params[6].type = hipGraphNodeTypeEmpty;
  params[7].type = hipGraphNodeTypeGraph;
  params[7].graph = child;
  hipGraphNode_t prev = nullptr;
  for (size_t i = 0; i < params.size(); ++i) {
    hipGraphNode_t node = nullptr;
    HIP_OK(hipGraphAddNode(&node, g, prev != nullptr ? &prev : nullptr, prev != nullptr ? 1 : 0, &params[i]));
    CHECK(TypeOf(node) == params[i].type, "node %zu has type %d, made as %d", i, TypeOf(node), params[i].type);
    prev = node;
  }
  RunGraph(g);
  CHECK_ALL(a, 66, "the generic kernel node");
  CHECK_ALL(b, 66, "the generic memcpy node");
  CHECK_ALL(c, 67, "the generic child graph node");
  CHECK(runs.load() == 1, "the generic host node ran %d times", runs.load());
  HiprGraphNodeParams bad;
  bad.type = 11;  // 6.x's memory allocation node.
  hipGraphNode_t node;
  HIP_EXPECT(hipGraphAddNode(&node, g, nullptr, 0, &bad), hipErrorNotSupported);
  bad.type = 99;
  HIP_EXPECT(hipGraphAddNode(&node, g, nullptr, 0, &bad), hipErrorInvalidValue);
  HIP_EXPECT(hipGraphAddNode(&node, g, nullptr, 0, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipGraphDestroy(child));
  HIP_OK(hipEventDestroy(ev));
  for (int* d : {a, b, c}) HIP_OK(hipFree(d));
}

void GraphNodeSetParamsGeneric() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  int value = 68;
  hipGraphNode_t k = AddFill(g, &d, &value);
  int other = 69, n = kN;
  void* args[] = {&d, &other, &n};
  HiprGraphNodeParams p;
  p.type = hipGraphNodeTypeKernel;
  p.kernel = FillParams(args);
  HIP_OK(hipGraphNodeSetParams(k, &p));
  RunGraph(g);
  CHECK_ALL(d, 69, "a kernel node after hipGraphNodeSetParams");
  p.type = hipGraphNodeTypeMemset;
  p.memset = SetInts(d, 1);
  HIP_EXPECT(hipGraphNodeSetParams(k, &p), hipErrorInvalidValue);  // Another node type.
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

void GraphExecNodeSetParamsGeneric() {
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  int* d = NewInts();
  hipMemsetParams mp = SetInts(d, 1);
  hipGraphNode_t m;
  HIP_OK(hipGraphAddMemsetNode(&m, g, nullptr, 0, &mp));
  hipGraphExec_t exec = Instantiate(g);
  HiprGraphNodeParams p;
  p.type = hipGraphNodeTypeMemset;
  p.memset = SetInts(d, 70);
  HIP_OK(hipGraphExecNodeSetParams(exec, m, &p));
  LaunchAndWait(exec);
  CHECK_ALL(d, 70, "an exec's memset after hipGraphExecNodeSetParams");
  p.type = hipGraphNodeTypeEmpty;
  HIP_EXPECT(hipGraphExecNodeSetParams(exec, m, &p), hipErrorInvalidValue);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
}

// User objects: destroyed once, when the last reference goes.
constexpr unsigned kNoDestructorSync = 1;  // hipUserObjectNoDestructorSync
constexpr unsigned kGraphUserObjectMove = 1;  // hipGraphUserObjectMove

HiprUserObject_t NewUserObject(std::atomic<int>* destroyed, unsigned refs = 1) {
  HiprUserObject_t o = nullptr;
  HIP_OK(hipUserObjectCreate(&o, destroyed, CountUp, refs, kNoDestructorSync));
  return o;
}

void UserObjectCreate() {
  std::atomic<int> destroyed{0};
  HiprUserObject_t o = NewUserObject(&destroyed);
  CHECK(o != nullptr && destroyed.load() == 0, "a new user object: %p, destroyed %d", (void*)o, destroyed.load());
  HIP_OK(hipUserObjectRelease(o, 1));
  CHECK(destroyed.load() == 1, "the last release destroyed it %d times", destroyed.load());
  HiprUserObject_t bad = nullptr;
  HIP_EXPECT(hipUserObjectCreate(&bad, &destroyed, CountUp, 1, 0), hipErrorInvalidValue);  // Flags.
  HIP_EXPECT(hipUserObjectCreate(&bad, &destroyed, CountUp, 0, kNoDestructorSync), hipErrorInvalidValue);
  HIP_EXPECT(hipUserObjectCreate(&bad, &destroyed, nullptr, 1, kNoDestructorSync), hipErrorInvalidValue);
  CHECK(bad == nullptr, "a refused create wrote an object");
}

void UserObjectRetainRelease() {
  std::atomic<int> destroyed{0};
  HiprUserObject_t o = NewUserObject(&destroyed);
  HIP_OK(hipUserObjectRetain(o, 2));
  HIP_OK(hipUserObjectRelease(o, 2));
  CHECK(destroyed.load() == 0, "destroyed with a reference left");
  HIP_EXPECT(hipUserObjectRelease(o, 2), hipErrorInvalidValue);  // More than it has.
  HIP_EXPECT(hipUserObjectRetain(o, 0), hipErrorInvalidValue);
  HIP_OK(hipUserObjectRelease(o, 1));
  CHECK(destroyed.load() == 1, "destroyed %d times", destroyed.load());
  HIP_EXPECT(hipUserObjectRetain(o, 1), hipErrorInvalidValue);  // Gone.
}

// A graph's references: released with the graph, and an executable graph's
// only once the launch it made before its destruction has run.
void GraphRetainUserObject() {
  std::atomic<int> destroyed{0};
  HiprUserObject_t o = NewUserObject(&destroyed);
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  HIP_OK(hipGraphRetainUserObject(g, o, 1, kGraphUserObjectMove));  // The caller's reference moves.
  Gate gate;
  hipHostNodeParams hp{WaitAtGate, &gate};
  hipGraphNode_t h;
  HIP_OK(hipGraphAddHostNode(&h, g, nullptr, 0, &hp));
  hipGraph_t clone;
  HIP_OK(hipGraphClone(&clone, g));
  hipGraphExec_t exec = Instantiate(g);
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipGraphLaunch(exec, s));
  WaitEntered(gate);
  HIP_OK(hipGraphExecDestroy(exec));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipGraphDestroy(clone));
  CHECK(destroyed.load() == 0, "destroyed while a launch of its executable graph was still running");
  gate.open.store(1);
  HIP_OK(hipStreamSynchronize(s));
  for (int i = 0; i < 5000 && destroyed.load() == 0; ++i) usleep(1000);
  CHECK(destroyed.load() == 1, "destroyed %d times after the launch", destroyed.load());
  HIP_EXPECT(hipGraphRetainUserObject(nullptr, o, 1, 0), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
}

void GraphReleaseUserObject() {
  std::atomic<int> destroyed{0};
  HiprUserObject_t o = NewUserObject(&destroyed);
  hipGraph_t g;
  HIP_OK(hipGraphCreate(&g, 0));
  HIP_OK(hipGraphRetainUserObject(g, o, 2, 0));
  HIP_OK(hipUserObjectRelease(o, 1));  // The graph's two remain.
  HIP_OK(hipGraphReleaseUserObject(g, o, 1));
  CHECK(destroyed.load() == 0, "destroyed with the graph's reference left");
  HIP_EXPECT(hipGraphReleaseUserObject(g, o, 2), hipErrorInvalidValue);  // It holds one.
  HIP_OK(hipGraphReleaseUserObject(g, o, 1));
  CHECK(destroyed.load() == 1, "destroyed %d times", destroyed.load());
  HIP_OK(hipGraphDestroy(g));
  CHECK(destroyed.load() == 1, "destroyed again with the graph");
}

void StreamAddCallbackSpt() {
  std::atomic<int> runs{0};
  auto callback = [](hipStream_t stream, hipError_t status, void* p) {
    if (stream == hipStreamPerThread && status == hipSuccess) static_cast<std::atomic<int>*>(p)->fetch_add(1);
  };
  HIP_OK(hipStreamAddCallback_spt(nullptr, callback, &runs, 0));
  HIP_OK(hipStreamSynchronize(hipStreamPerThread));
  CHECK(runs.load() == 1, "the per-thread stream's callback ran %d times (with its stream and hipSuccess)",
        runs.load());
  HIP_EXPECT(hipStreamAddCallback_spt(nullptr, callback, &runs, 1), hipErrorInvalidValue);
}

void StreamGetId() {
  hipStream_t a, b;
  HIP_OK(hipStreamCreate(&a));
  HIP_OK(hipStreamCreate(&b));
  unsigned long long ia = 0, ib = 0, again = 0, null_id = 7, per_thread = 0;
  HIP_OK(hipStreamGetId(a, &ia));
  HIP_OK(hipStreamGetId(b, &ib));
  HIP_OK(hipStreamGetId(a, &again));
  HIP_OK(hipStreamGetId(nullptr, &null_id));
  HIP_OK(hipStreamGetId(hipStreamPerThread, &per_thread));
  CHECK(ia != ib && ia == again && ia != null_id && per_thread != null_id && per_thread != ia && per_thread != ib,
        "stream ids: %llu %llu %llu, null %llu, per-thread %llu", ia, ib, again, null_id, per_thread);
  HIP_EXPECT(hipStreamGetId(a, nullptr), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(a));
  HIP_OK(hipStreamDestroy(b));
  HIP_EXPECT(hipStreamGetId(a, &again), hipErrorInvalidHandle);
}

void StreamBeginCapture() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  int* d = NewInts();
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_EXPECT(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipErrorIllegalState);
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 91, kN);
  hipGraph_t g = nullptr;
  HIP_OK(hipStreamEndCapture(s, &g));
  CHECK(ReadInts(d)[0] == 0, "captured work ran at capture time");
  RunGraph(g);
  CHECK_ALL(d, 91, "captured kernel");
  HIP_EXPECT(hipStreamBeginCapture(nullptr, hipStreamCaptureModeGlobal), hipErrorStreamCaptureUnsupported);
  HIP_OK(hipGraphDestroy(g));
  // Destroying a capturing stream ends its capture (clr): nothing stays
  // refused, and neither end nor a new begin may name the stream.
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 93, kN);
  HIP_OK(hipStreamDestroy(s));
  HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorContextIsDestroyed);
  HIP_EXPECT(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal), hipErrorContextIsDestroyed);
  HIP_OK(hipDeviceSynchronize());
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, d, 94, kN);
  HIP_OK(hipGetLastError());
  CHECK_ALL(d, 94, "a null-stream kernel after a capturing stream was destroyed");
  // hipDeviceSynchronize during a capture, relaxed mode too, is refused and
  // invalidates it (clr).
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
  HIP_EXPECT(hipDeviceSynchronize(), hipErrorStreamCaptureUnsupported);
  HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorStreamCaptureInvalidated);
  HIP_OK(hipDeviceSynchronize());
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void StreamEndCapture() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  int* d = NewInts();
  hipGraph_t g = nullptr;
  HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorIllegalState);  // Not capturing.
  CHECK(g == nullptr, "a refused end wrote a graph");
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeThreadLocal));
  HIP_OK(hipMemsetAsync(d, 0, kN * sizeof(int), s));
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 92, kN);
  HIP_OK(hipStreamEndCapture(s, &g));
  size_t count = 0;
  HIP_OK(hipGraphGetNodes(g, nullptr, &count));
  CHECK(count == 2, "the captured graph has %zu nodes", count);
  hipStreamCaptureStatus st;
  HIP_OK(hipStreamIsCapturing(s, &st));
  CHECK(st == hipStreamCaptureStatusNone, "still capturing after the end (%d)", st);
  RunGraph(g);
  CHECK_ALL(d, 92, "ended capture's graph");
  HIP_OK(hipGraphDestroy(g));
  // The null stream cannot end a capture; a null graph is checked first.
  HIP_EXPECT(hipStreamEndCapture(nullptr, &g), hipErrorIllegalState);
  HIP_EXPECT(hipStreamEndCapture(s, nullptr), hipErrorInvalidValue);
  // A global capture ends on the thread that began it (clr): another
  // thread's end is refused and the capture goes on.
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipError_t other = hipSuccess;
  std::thread([&] { other = hipStreamEndCapture(s, &g); }).join();
  CHECK(other == hipErrorStreamCaptureWrongThread, "another thread's end returned %s", e2e::ErrName(other));
  HIP_OK(hipStreamEndCapture(s, &g));
  HIP_OK(hipGraphDestroy(g));
  // Work forked to another stream and not joined back: the end is refused
  // (hipErrorStreamCaptureUnjoined) and the capture goes on; joined, it ends.
  hipStream_t fork;
  HIP_OK(hipStreamCreateWithFlags(&fork, hipStreamNonBlocking));
  hipEvent_t e1, e2;
  HIP_OK(hipEventCreate(&e1));
  HIP_OK(hipEventCreate(&e2));
  for (bool rejoin_then_more : {false, true}) {
    HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
    hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 1, kN);
    HIP_OK(hipEventRecord(e1, s));
    HIP_OK(hipStreamWaitEvent(fork, e1, 0));
    hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, fork, d, 2, kN);
    if (rejoin_then_more) {
      HIP_OK(hipEventRecord(e2, fork));
      HIP_OK(hipStreamWaitEvent(s, e2, 0));
      hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, fork, d, 3, kN);  // After the join.
    }
    g = nullptr;
    HIP_EXPECT(hipStreamEndCapture(s, &g), hipErrorStreamCaptureUnjoined);
    HIP_OK(hipStreamIsCapturing(s, &st));
    CHECK(st == hipStreamCaptureStatusActive, "an unjoined end stopped the capture (%d)", st);
    HIP_OK(hipEventRecord(e2, fork));
    HIP_OK(hipStreamWaitEvent(s, e2, 0));
    HIP_OK(hipStreamEndCapture(s, &g));
    HIP_OK(hipGraphDestroy(g));
  }
  HIP_OK(hipEventDestroy(e1));
  HIP_OK(hipEventDestroy(e2));
  HIP_OK(hipStreamDestroy(fork));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void StreamIsCapturing() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
  HIP_OK(hipStreamIsCapturing(s, &st));
  CHECK(st == hipStreamCaptureStatusNone, "status %d before capture", st);
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeRelaxed));
  HIP_OK(hipStreamIsCapturing(s, &st));
  CHECK(st == hipStreamCaptureStatusActive, "status %d during capture", st);
  hipGraph_t g;
  HIP_OK(hipStreamEndCapture(s, &g));
  HIP_OK(hipStreamIsCapturing(s, &st));
  CHECK(st == hipStreamCaptureStatusNone, "status %d after capture", st);
  HIP_OK(hipStreamIsCapturing(nullptr, &st));
  CHECK(st == hipStreamCaptureStatusNone, "the null stream captures (%d)", st);
  HIP_EXPECT(hipStreamIsCapturing(s, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipStreamDestroy(s));
  // While a blocking stream captures, the legacy null stream (which would
  // wait for it) is refused (clr); a non-blocking one's capture is no matter.
  hipStream_t blocking;
  HIP_OK(hipStreamCreate(&blocking));
  HIP_OK(hipStreamBeginCapture(blocking, hipStreamCaptureModeRelaxed));
  HIP_EXPECT(hipStreamIsCapturing(nullptr, &st), hipErrorStreamCaptureImplicit);
  HIP_OK(hipStreamEndCapture(blocking, &g));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipStreamIsCapturing(nullptr, &st));
  HIP_OK(hipStreamDestroy(blocking));
}

void StreamGetCaptureInfo() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  hipStreamCaptureStatus st = hipStreamCaptureStatusActive;
  unsigned long long id1 = 0, id2 = 0;
  HIP_OK(hipStreamGetCaptureInfo(s, &st, &id1));
  CHECK(st == hipStreamCaptureStatusNone, "status %d before capture", st);
  hipGraph_t g;
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_OK(hipStreamGetCaptureInfo(s, &st, &id1));
  HIP_OK(hipStreamEndCapture(s, &g));
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  HIP_OK(hipStreamGetCaptureInfo(s, &st, &id2));
  CHECK(st == hipStreamCaptureStatusActive && id1 != 0 && id2 != 0 && id1 != id2, "status %d, ids %llu and %llu", st,
        id1, id2);
  HIP_OK(hipStreamEndCapture(s, &g));
  HIP_OK(hipGraphDestroy(g));
  HIP_EXPECT(hipStreamGetCaptureInfo(s, nullptr, &id1), hipErrorInvalidValue);
  HIP_OK(hipStreamDestroy(s));
}

void StreamGetCaptureInfoV2() {
  hipStream_t s;
  HIP_OK(hipStreamCreateWithFlags(&s, hipStreamNonBlocking));
  int* d = NewInts();
  HIP_OK(hipStreamBeginCapture(s, hipStreamCaptureModeGlobal));
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, s, d, 93, kN);
  hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
  unsigned long long id = 0;
  hipGraph_t capturing = nullptr;
  const hipGraphNode_t* deps = nullptr;
  size_t ndeps = 99;
  HIP_OK(hipStreamGetCaptureInfo_v2(s, &st, &id, &capturing, &deps, &ndeps));
  CHECK(st == hipStreamCaptureStatusActive && id != 0 && capturing != nullptr && ndeps == 1 && deps != nullptr,
        "status %d, id %llu, graph %p, %zu dependencies", st, id, (void*)capturing, ndeps);
  CHECK(TypeOf(deps[0]) == hipGraphNodeTypeKernel, "the capture's tail is a node of type %d", TypeOf(deps[0]));
  hipGraph_t g;
  HIP_OK(hipStreamEndCapture(s, &g));
  CHECK(g == capturing, "the graph under capture %p is not the graph ended %p", (void*)capturing, (void*)g);
  HIP_OK(hipStreamGetCaptureInfo_v2(s, &st, nullptr, nullptr, nullptr, nullptr));
  CHECK(st == hipStreamCaptureStatusNone, "status %d after capture", st);
  HIP_EXPECT(hipStreamGetCaptureInfo_v2(s, nullptr, nullptr, nullptr, nullptr, nullptr), hipErrorInvalidValue);
  HIP_OK(hipGraphDestroy(g));
  HIP_OK(hipFree(d));
  HIP_OK(hipStreamDestroy(s));
}

void ThreadExchangeStreamCaptureMode() {
  hipStreamCaptureMode mode = hipStreamCaptureModeRelaxed;
  HIP_OK(hipThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == hipStreamCaptureModeGlobal, "the thread's old mode was %d", mode);
  mode = hipStreamCaptureModeThreadLocal;
  HIP_OK(hipThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == hipStreamCaptureModeRelaxed, "exchange gave back %d, expected relaxed", mode);
  mode = hipStreamCaptureModeGlobal;
  HIP_OK(hipThreadExchangeStreamCaptureMode(&mode));
  CHECK(mode == hipStreamCaptureModeThreadLocal, "exchange gave back %d, expected thread-local", mode);
  auto bad = static_cast<hipStreamCaptureMode>(7);
  HIP_EXPECT(hipThreadExchangeStreamCaptureMode(&bad), hipErrorInvalidValue);
  CHECK(bad == static_cast<hipStreamCaptureMode>(7), "a refused exchange wrote %d", bad);
  HIP_EXPECT(hipThreadExchangeStreamCaptureMode(nullptr), hipErrorInvalidValue);
}

// ---- Local helpers --------------------------------------------------------------------------

void GetProcAddress() {
  void* fn = nullptr;
  int status = -1;
  HIP_OK(hipGetProcAddress("hipMalloc", &fn, 600, 0, &status));
  CHECK(fn != nullptr && fn == dlsym(RTLD_DEFAULT, "hipMalloc") && status == 0, "hipMalloc: %p, status %d", fn, status);
  using MallocFn = hipError_t (*)(void**, size_t);
  void* p = nullptr;
  HIP_OK(reinterpret_cast<MallocFn>(fn)(&p, 256));
  HIP_OK(hipFree(p));
  HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 600, 0, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600"), "6.x hipGetDeviceProperties is not the R0600 twin");
  HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 502, 0, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDeviceProperties"), "5.x hipGetDeviceProperties is not the plain one");
  HIP_EXPECT(hipGetProcAddress("hipNoSuchFunction", &fn, 600, 0, &status), hipErrorInvalidValue);
  CHECK(fn == nullptr && status == 1, "a missing symbol gave %p, status %d", fn, status);
  // HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (2): the _spt form where there is one, as clr.
  HIP_OK(hipGetProcAddress("hipMemcpy", &fn, 600, 2, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMemcpy_spt"), "per-thread hipMemcpy is not hipMemcpy_spt");
  HIP_OK(hipGetProcAddress("hipMemcpy", &fn, 600, 1, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMemcpy"), "legacy-stream hipMemcpy is not hipMemcpy");
  HIP_OK(hipGetProcAddress("hipMalloc", &fn, 600, 2, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMalloc"), "per-thread hipMalloc (no _spt form) is not hipMalloc");
  HIP_OK(hipGetProcAddress("hipGetDeviceProperties", &fn, 600, 2, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600"), "per-thread hipGetDeviceProperties is not R0600");
  HIP_EXPECT(hipGetProcAddress("hipMalloc", &fn, 600, 4, &status), hipErrorInvalidValue);
  HIP_EXPECT(hipGetProcAddress("", &fn, 600, 0, &status), hipErrorInvalidValue);
  HIP_EXPECT(hipGetProcAddress(nullptr, &fn, 600, 0, &status), hipErrorInvalidValue);
}

void GetDriverEntryPoint() {
  void* fn = nullptr;
  int status = -1;
  HIP_OK(hipGetDriverEntryPoint("hipGetDeviceCount", &fn, 0, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDeviceCount") && status == 0, "hipGetDeviceCount: %p, status %d", fn,
        status);
  int n = -1;
  HIP_OK(reinterpret_cast<hipError_t (*)(int*)>(fn)(&n));
  CHECK(n == 2, "through the entry point: %d devices", n);
  HIP_OK(hipGetDriverEntryPoint("hipGetDeviceProperties", &fn, 0, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipGetDevicePropertiesR0600"), "hipGetDeviceProperties is not the R0600 twin");
  HIP_OK(hipGetDriverEntryPoint("hipStreamSynchronize", &fn, 2, &status));  // Per-thread default stream.
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipStreamSynchronize_spt"), "per-thread flag did not give the _spt form");
  HIP_OK(hipGetDriverEntryPoint("hipStreamSynchronize", &fn, 1, &status));  // Legacy stream.
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipStreamSynchronize"), "legacy flag did not give the plain form");
  HIP_OK(hipGetDriverEntryPoint("hipMalloc", &fn, 2, &status));  // No _spt form: the plain one.
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipMalloc"), "hipMalloc with the per-thread flag: %p", fn);
  fn = reinterpret_cast<void*>(0x1);
  HIP_EXPECT(hipGetDriverEntryPoint("hipNoSuchFunction", &fn, 0, &status), hipErrorInvalidValue);
  CHECK(fn == nullptr && status == 1, "a missing symbol gave %p, status %d", fn, status);
  HIP_EXPECT(hipGetDriverEntryPoint("hipMalloc", &fn, 7, &status), hipErrorInvalidValue);
  HIP_EXPECT(hipGetDriverEntryPoint("", &fn, 0, &status), hipErrorInvalidValue);
  HIP_EXPECT(hipGetDriverEntryPoint("hipMalloc", nullptr, 0, &status), hipErrorInvalidValue);
}

void GetDriverEntryPointSpt() {
  void* fn = nullptr;
  int status = -1;
  HIP_OK(hipGetDriverEntryPoint_spt("hipStreamSynchronize", &fn, 0, nullptr));  // Default means per-thread.
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipStreamSynchronize_spt"), "default flag did not give the _spt form");
  HIP_OK(hipGetDriverEntryPoint_spt("hipStreamSynchronize", &fn, 1, &status));
  CHECK(fn == dlsym(RTLD_DEFAULT, "hipStreamSynchronize") && status == 0, "legacy flag: %p", fn);
  HIP_EXPECT(hipGetDriverEntryPoint_spt("hipNoSuchFunction", &fn, 0, &status), hipErrorInvalidValue);
  CHECK(status == 1, "status %d", status);
}

void GnuF2hIeee() {
  auto f2h = reinterpret_cast<uint16_t (*)(float)>(StubSymbol("__gnu_f2h_ieee"));
  CHECK(f2h(1.0f) == 0x3c00, "1.0 -> 0x%04x", f2h(1.0f));
  CHECK(f2h(-2.0f) == 0xc000, "-2.0 -> 0x%04x", f2h(-2.0f));
  CHECK(f2h(65504.0f) == 0x7bff, "65504 -> 0x%04x", f2h(65504.0f));
  CHECK(f2h(1e6f) == 0x7c00, "1e6 -> 0x%04x (expected +inf)", f2h(1e6f));
  CHECK(f2h(0.0f) == 0x0000, "0 -> 0x%04x", f2h(0.0f));
}

void GnuH2fIeee() {
  auto h2f = reinterpret_cast<float (*)(uint16_t)>(StubSymbol("__gnu_h2f_ieee"));
  CHECK(h2f(0x3c00) == 1.0f, "0x3c00 -> %f", h2f(0x3c00));
  CHECK(h2f(0xc000) == -2.0f, "0xc000 -> %f", h2f(0xc000));
  CHECK(h2f(0x3555) > 0.333f && h2f(0x3555) < 0.334f, "0x3555 -> %f", h2f(0x3555));
  CHECK(h2f(0x0001) == 5.9604644775390625e-8f, "smallest subnormal -> %g", h2f(0x0001));
}

void AmdDbgapiGetBuildId() {
  auto fn = reinterpret_cast<size_t (*)()>(StubSymbol("amd_dbgapi_get_build_id"));
  CHECK(fn() == static_cast<size_t>(HIP_VERSION_BUILD_ID), "build id %zu, headers say %zu", fn(),
        static_cast<size_t>(HIP_VERSION_BUILD_ID));
}

void AmdDbgapiGetBuildName() {
  auto fn = reinterpret_cast<const char* (*)()>(StubSymbol("amd_dbgapi_get_build_name"));
  CHECK(fn() != nullptr && strcmp(fn(), HIP_VERSION_BUILD_NAME) == 0, "build name \"%s\"", fn());
}

void AmdDbgapiGetGitHash() {
  auto fn = reinterpret_cast<const char* (*)()>(StubSymbol("amd_dbgapi_get_git_hash"));
  CHECK(fn() != nullptr && strcmp(fn(), HIP_VERSION_GITHASH) == 0, "git hash \"%s\"", fn());
}

void ApiName() {
  CHECK(strcmp(hipApiName(HIP_API_ID_hipMalloc), "hipMalloc") == 0, "%s", hipApiName(HIP_API_ID_hipMalloc));
  CHECK(strcmp(hipApiName(HIP_API_ID_hipLaunchKernel), "hipLaunchKernel") == 0, "%s",
        hipApiName(HIP_API_ID_hipLaunchKernel));
  CHECK(strcmp(hipApiName(0xfffffu), "unknown") == 0, "unknown id: %s", hipApiName(0xfffffu));
}

void GetCmdName() {
  CHECK(strcmp(hipGetCmdName(0x11f0), "KernelExecution") == 0, "%s", hipGetCmdName(0x11f0));
  CHECK(strcmp(hipGetCmdName(0x11f4), "CopyHostToDevice") == 0, "%s", hipGetCmdName(0x11f4));
  CHECK(strcmp(hipGetCmdName(0xbeef), "Unknown command type") == 0, "%s", hipGetCmdName(0xbeef));
}

void CreateChannelDesc() {
  hipChannelFormatDesc d = hipCreateChannelDesc(8, 16, 0, 32, hipChannelFormatKindFloat);
  CHECK(d.x == 8 && d.y == 16 && d.z == 0 && d.w == 32 && d.f == hipChannelFormatKindFloat, "desc %d %d %d %d %d", d.x,
        d.y, d.z, d.w, d.f);
  d = hipCreateChannelDesc(-1, 3, 5, 7, hipChannelFormatKindSigned);  // Stored verbatim.
  CHECK(d.x == -1 && d.y == 3 && d.z == 5 && d.w == 7 && d.f == hipChannelFormatKindSigned, "desc %d %d %d %d %d", d.x,
        d.y, d.z, d.w, d.f);
}

void HiprtcGetErrorString() {
  CHECK(strcmp(hiprtcGetErrorString(HIPRTC_SUCCESS), "HIPRTC_SUCCESS") == 0, "%s",
        hiprtcGetErrorString(HIPRTC_SUCCESS));
  CHECK(strcmp(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION), "HIPRTC_ERROR_COMPILATION") == 0, "%s",
        hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION));
  CHECK(hiprtcGetErrorString(9999) == nullptr, "an unknown code has a string");
}

void HiprtcVersion() {
  int major = -1, minor = -1;
  CHECK(hiprtcVersion(&major, &minor) == HIPRTC_SUCCESS, "hiprtcVersion failed");
  CHECK(major == 9 && minor == 0, "hiprtc version %d.%d", major, minor);
  major = -1;
  CHECK(hiprtcVersion(&major, nullptr) == HIPRTC_ERROR_INVALID_INPUT, "a null minor was accepted");
  CHECK(major == -1, "a failed call wrote major %d", major);
}

// ---- Registration -------------------------------------------------------------------------

// module_kernels.co (an offload bundle) registered as a fat binary, as a
// hipcc-compiled program's start-up code does for its own.
struct FatBinaryWrapper {
  uint32_t magic;
  uint32_t version;
  const void* binary;
  void* unused;
};

// The registration entry points, by their exported names (hipcc's own
// start-up code calls them too).
using RegisterFatBinaryFn = void** (*)(const void*);
using RegisterFunctionFn = void (*)(void**, const void*, char*, const char*, unsigned, void*, void*, dim3*, dim3*,
                                    int*);
using RegisterVarFn = void (*)(void**, void*, char*, char*, int, size_t, int, int);
using UnregisterFatBinaryFn = void (*)(void**);

struct RegisteredModule {
  std::vector<char> image;
  FatBinaryWrapper wrapper{};
  void** handle = nullptr;
  RegisteredModule() : image(ReadFile(ModulePath())) {
    wrapper = FatBinaryWrapper{0x48495046u, 1u, image.data(), nullptr};
    handle = reinterpret_cast<RegisterFatBinaryFn>(StubSymbol("__hipRegisterFatBinary"))(&wrapper);
    CHECK(handle != nullptr, "__hipRegisterFatBinary refused module_kernels.co");
  }
};

// Host-side stand-ins for add_vec and module_scale.
void AddVecStub() {}
float g_module_scale_shadow = 0;
char g_add_vec_name[] = "add_vec";
char g_scale_name[] = "module_scale";

void LaunchAddVec(ModuleVectors& v, hipError_t want) {
  hipError_t e =
      hipLaunchKernel(reinterpret_cast<const void*>(AddVecStub), dim3(kGrid), dim3(kBlock), v.params, 0, nullptr);
  CHECK(e == want, "launching the registered add_vec gave %s, expected %s", hipGetErrorName(e), hipGetErrorName(want));
}

// One row exercises the whole life of a registered fat binary; each of the
// three functions' own effect is asserted by its row (in order).
RegisteredModule* g_registered = nullptr;

void RegisterFatBinary() {
  g_registered = new RegisteredModule;
  FatBinaryWrapper bad{0x12345678u, 1u, g_registered->image.data(), nullptr};
  CHECK(reinterpret_cast<RegisterFatBinaryFn>(StubSymbol("__hipRegisterFatBinary"))(&bad) == nullptr,
        "a wrapper with the wrong magic was registered");
  // Nothing from it is launchable until a function is registered.
  ModuleVectors v;
  LaunchAddVec(v, hipErrorInvalidDeviceFunction);
  (void)hipGetLastError();
}

void RegisterFunction() {
  CHECK(g_registered != nullptr, "no registered fat binary (the __hipRegisterFatBinary row runs first)");
  reinterpret_cast<RegisterFunctionFn>(StubSymbol("__hipRegisterFunction"))(
      g_registered->handle, reinterpret_cast<const void*>(AddVecStub), g_add_vec_name, g_add_vec_name,
      static_cast<unsigned>(-1), nullptr, nullptr, nullptr, nullptr, nullptr);
  const char* name = hipKernelNameRefByPtr(reinterpret_cast<const void*>(AddVecStub), nullptr);
  CHECK(name != nullptr && strcmp(name, "add_vec") == 0, "registered name %s", name != nullptr ? name : "(null)");
  ModuleVectors v;
  LaunchAddVec(v, hipSuccess);
  v.CheckSum("add_vec registered by __hipRegisterFunction");
}

void RegisterVar() {
  CHECK(g_registered != nullptr, "no registered fat binary");
  reinterpret_cast<RegisterVarFn>(StubSymbol("__hipRegisterVar"))(g_registered->handle, &g_module_scale_shadow,
                                                                  g_scale_name, g_scale_name, 0, sizeof(float), 0, 0);
  size_t size = 0;
  HIP_OK(hipGetSymbolSize(&size, static_cast<const void*>(&g_module_scale_shadow)));
  CHECK(size == sizeof(float), "symbol size %zu", size);
  float scale = 0;
  HIP_OK(hipMemcpyFromSymbol(&scale, static_cast<const void*>(&g_module_scale_shadow), sizeof scale, 0,
                             hipMemcpyDeviceToHost));
  CHECK(scale == 2.0f, "module_scale read through the registered variable: %f", scale);
}

void UnregisterFatBinary() {
  CHECK(g_registered != nullptr, "no registered fat binary");
  reinterpret_cast<UnregisterFatBinaryFn>(StubSymbol("__hipUnregisterFatBinary"))(g_registered->handle);
  CHECK(hipKernelNameRefByPtr(reinterpret_cast<const void*>(AddVecStub), nullptr) == nullptr,
        "an unregistered kernel still has a name");
  ModuleVectors v;
  LaunchAddVec(v, hipErrorInvalidDeviceFunction);
  size_t size = 0;
  HIP_EXPECT(hipGetSymbolSize(&size, static_cast<const void*>(&g_module_scale_shadow)), hipErrorInvalidSymbol);
  (void)hipGetLastError();
  delete g_registered;
  g_registered = nullptr;
}

// hipr keeps no texture or surface objects: a registered texture or surface
// is a named device variable of its module, resolved by the symbol API.
template <class Register>
void CheckRegisteredAsVariable(Register reg, float* shadow, const char* what) {
  RegisteredModule m;
  size_t size = 0;
  HIP_EXPECT(hipGetSymbolSize(&size, static_cast<const void*>(shadow)), hipErrorInvalidSymbol);
  reg(m.handle, shadow);
  HIP_OK(hipGetSymbolSize(&size, static_cast<const void*>(shadow)));
  CHECK(size == sizeof(float), "%s: symbol size %zu", what, size);
  float value = 0;
  HIP_OK(hipMemcpyFromSymbol(&value, static_cast<const void*>(shadow), sizeof value, 0, hipMemcpyDeviceToHost));
  CHECK(value == 2.0f, "%s: module_scale read through it is %f", what, value);
  reinterpret_cast<UnregisterFatBinaryFn>(StubSymbol("__hipUnregisterFatBinary"))(m.handle);
  HIP_EXPECT(hipGetSymbolSize(&size, static_cast<const void*>(shadow)), hipErrorInvalidSymbol);
  (void)hipGetLastError();
}

float g_surface_shadow = 0;
float g_texture_shadow = 0;

void RegisterSurface() {
  using Fn = void (*)(void**, void*, char*, char*, int, int);
  CheckRegisteredAsVariable(
      [](void** handle, float* shadow) {
        reinterpret_cast<Fn>(StubSymbol("__hipRegisterSurface"))(handle, shadow, g_scale_name, g_scale_name, 1, 0);
      },
      &g_surface_shadow, "__hipRegisterSurface");
}

void RegisterTexture() {
  using Fn = void (*)(void**, void*, char*, char*, int, int, int);
  CheckRegisteredAsVariable(
      [](void** handle, float* shadow) {
        reinterpret_cast<Fn>(StubSymbol("__hipRegisterTexture"))(handle, shadow, g_scale_name, g_scale_name, 1, 0, 0);
      },
      &g_texture_shadow, "__hipRegisterTexture");
}

// Resets device 1 from device 0: device 1's memory goes, device 0's stays,
// and device 0 stays current.
void DevicePrimaryCtxReset() {
  void* keep = nullptr;
  HIP_OK(hipMalloc(&keep, 4096));
  HIP_OK(hipSetDevice(1));
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 4096));
  HIP_OK(hipSetDevice(0));
  HIP_OK(hipDevicePrimaryCtxReset(1));
  CHECK(Current() == 0, "hipDevicePrimaryCtxReset made device %d current", Current());
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  CHECK(hipMemGetAddressRange(&base, &size, p) != hipSuccess, "device 1's allocation survived its reset");
  (void)hipGetLastError();
  HIP_OK(hipMemGetAddressRange(&base, &size, keep));
  HIP_EXPECT(hipDevicePrimaryCtxReset(2), hipErrorInvalidDevice);
  HIP_OK(hipFree(keep));
}

// Last: forgets device 1's state.
void DeviceReset() {
  HIP_OK(hipSetDevice(1));
  void* p = nullptr;
  HIP_OK(hipMalloc(&p, 4096));
  // Managed memory goes too, and its host pages with it (reserved again,
  // no access), as hipFree would.
  int* m = nullptr;
  HIP_OK(hipMallocManaged(reinterpret_cast<void**>(&m), 8192, hipMemAttachGlobal));
  m[0] = 1;
  CHECK(e2e::MappingPerms(m) == "rw-p", "managed memory's host pages are %s", e2e::MappingPerms(m).c_str());
  HIP_OK(hipSetDeviceFlags(hipDeviceScheduleYield));
  HIP_OK(hipDeviceReset());
  unsigned flags = 77;
  HIP_OK(hipGetDeviceFlags(&flags));
  CHECK((flags & hipDeviceScheduleMask) == hipDeviceScheduleSpin, "flags %#x after hipDeviceReset (clr: spin)",
        flags);
  hipDeviceptr_t base = nullptr;
  size_t size = 0;
  CHECK(hipMemGetAddressRange(&base, &size, p) != hipSuccess, "an allocation survived hipDeviceReset");
  (void)hipGetLastError();
  hipPointerAttribute_t a{};
  CHECK(hipPointerGetAttributes(&a, m) != hipSuccess || a.isManaged == 0, "managed memory survived the reset");
  (void)hipGetLastError();
  // Reserved again inside a sim's window; a hip device has none (given back).
  CHECK(e2e::MappingPerms(m) == (e2e::OnHipDevice() ? "none" : "---p"), "after the reset managed memory's pages are %s",
        e2e::MappingPerms(m).c_str());
  // The device works after the reset.
  int* d = NewInts();
  hipLaunchKernelGGL(Fill, dim3(kGrid), dim3(kBlock), 0, nullptr, d, 99, kN);
  CHECK_ALL(d, 99, "a kernel after hipDeviceReset");
  HIP_OK(hipFree(d));
}

const e2e::Row kRows[] = {
    {"hipExtStreamCreateWithCUMask", ExtStreamCreateWithCUMask},
    {"hipExtStreamGetCUMask", ExtStreamGetCUMask},
    {"hipLibraryLoadData", LibraryLoadData},
    {"hipLibraryLoadFromFile", LibraryLoadFromFile},
    {"hipLibraryUnload", LibraryUnload},
    {"hipLibraryGetKernel", LibraryGetKernel},
    {"hipLibraryGetKernelCount", LibraryGetKernelCount},
    {"hipLibraryEnumerateKernels", LibraryEnumerateKernels},
    {"hipKernelGetLibrary", KernelGetLibrary},
    {"hipKernelGetName", KernelGetName},
    {"hipDeviceGetTexture1DLinearMaxWidth", DeviceGetTexture1DLinearMaxWidth},
    {"hipLaunchKernelExC", LaunchKernelExC},
    {"hipDrvLaunchKernelEx", DrvLaunchKernelEx},
    {"hipStreamGetAttribute", StreamGetAttribute},
    {"hipStreamSetAttribute", StreamSetAttribute},
    {"hipStreamCopyAttributes", StreamCopyAttributes},
    {"hipGetDriverEntryPoint", GetDriverEntryPoint},
    {"hipGetDriverEntryPoint_spt", GetDriverEntryPointSpt},
    {"hipGetDeviceCount", GetDeviceCount},
    {"hipGetDevice", GetDevice},
    {"hipSetDevice", SetDevice},
    {"hipInit", Init},
    {"hipDeviceGet", DeviceGet},
    {"hipDeviceGetAttribute", DeviceGetAttribute},
    {"hipDeviceGetName", DeviceGetName},
    {"hipDeviceComputeCapability", DeviceComputeCapability},
    {"hipGetDeviceProperties", GetDeviceProperties},
    {"hipGetDevicePropertiesR0000", GetDevicePropertiesR0000},
    {"hipGetDevicePropertiesR0600", GetDevicePropertiesR0600},
    {"hipChooseDevice", ChooseDevice},
    {"hipChooseDeviceR0000", ChooseDeviceR0000},
    {"hipChooseDeviceR0600", ChooseDeviceR0600},
    {"hipDeviceGetUuid", DeviceGetUuid},
    {"hipDeviceGetPCIBusId", DeviceGetPCIBusId},
    {"hipDeviceGetByPCIBusId", DeviceGetByPCIBusId},
    {"hipDeviceCanAccessPeer", DeviceCanAccessPeer},
    {"hipDeviceGetP2PAttribute", DeviceGetP2PAttribute},
    {"hipDeviceEnablePeerAccess", DeviceEnablePeerAccess},
    {"hipDeviceDisablePeerAccess", DeviceDisablePeerAccess},
    {"hipDeviceSetCacheConfig", DeviceSetCacheConfig},
    {"hipDeviceGetCacheConfig", DeviceGetCacheConfig},
    {"hipDeviceGetStreamPriorityRange", DeviceGetStreamPriorityRange},
    {"hipDriverGetVersion", DriverGetVersion},
    {"hipRuntimeGetVersion", RuntimeGetVersion},
    {"hipSetDeviceFlags", SetDeviceFlags},
    {"hipGetDeviceFlags", GetDeviceFlags},
    {"hipDeviceSynchronize", DeviceSynchronize},
    {"hipCtxGetCurrent", CtxGetCurrent},
    {"hipCtxSetCurrent", CtxSetCurrent},
    {"hipCtxGetDevice", CtxGetDevice},
    {"hipDevicePrimaryCtxRetain", DevicePrimaryCtxRetain},
    {"hipDevicePrimaryCtxRelease", DevicePrimaryCtxRelease},
    {"hipDevicePrimaryCtxGetState", DevicePrimaryCtxGetState},
    {"hipDevicePrimaryCtxSetFlags", DevicePrimaryCtxSetFlags},
    {"hipCtxPushCurrent", CtxPushCurrent},
    {"hipCtxPopCurrent", CtxPopCurrent},
    {"hipCtxCreate", CtxCreate},
    {"hipCtxDestroy", CtxDestroy},
    {"hipCtxSynchronize", CtxSynchronize},
    {"hipCtxGetFlags", CtxGetFlags},
    {"hipCtxGetApiVersion", CtxGetApiVersion},
    {"hipCtxSetCacheConfig", CtxSetCacheConfig},
    {"hipCtxGetCacheConfig", CtxGetCacheConfig},
    {"hipCtxEnablePeerAccess", CtxEnablePeerAccess},
    {"hipCtxDisablePeerAccess", CtxDisablePeerAccess},
    {"hipStreamCreate", StreamCreate},
    {"hipStreamCreateWithFlags", StreamCreateWithFlags},
    {"hipStreamCreateWithPriority", StreamCreateWithPriority},
    {"hipStreamDestroy", StreamDestroy},
    {"hipStreamGetFlags", StreamGetFlags},
    {"hipStreamGetFlags_spt", StreamGetFlagsSpt},
    {"hipStreamGetPriority", StreamGetPriority},
    {"hipStreamGetPriority_spt", StreamGetPrioritySpt},
    {"hipStreamQuery", StreamQuery},
    {"hipStreamQuery_spt", StreamQuerySpt},
    {"hipStreamSynchronize", StreamSynchronize},
    {"hipStreamSynchronize_spt", StreamSynchronizeSpt},
    {"hipStreamWaitEvent", StreamWaitEvent},
    {"hipStreamWaitValue32", StreamWaitValue32},
    {"hipStreamWaitValue64", StreamWaitValue64},
    {"hipStreamBatchMemOp", StreamBatchMemOp},
    {"hipGraphAddMemAllocNode", GraphAddMemAllocNode},
    {"hipGraphAddBatchMemOpNode", GraphAddBatchMemOpNode},
    {"hipGraphBatchMemOpNodeGetParams", GraphBatchMemOpNodeParams},
    {"hipGraphBatchMemOpNodeSetParams", GraphBatchMemOpNodeParams},
    {"hipGraphExecBatchMemOpNodeSetParams", GraphBatchMemOpNodeParams},
    {"hipGraphMemAllocNodeGetParams", GraphMemAllocNodeGetParams},
    {"hipGraphAddMemFreeNode", GraphAddMemFreeNode},
    {"hipDrvGraphAddMemFreeNode", DrvGraphAddMemFreeNode},
    {"hipGraphMemFreeNodeGetParams", GraphMemFreeNodeGetParams},
    {"hipDeviceGetGraphMemAttribute", DeviceGetGraphMemAttribute},
    {"hipDeviceSetGraphMemAttribute", DeviceSetGraphMemAttribute},
    {"hipStreamWriteValue32", StreamWriteValue32},
    {"hipStreamWriteValue64", StreamWriteValue64},
    {"hipStreamWaitEvent_spt", StreamWaitEventSpt},
    {"hipStreamAddCallback", StreamAddCallback},
    {"hipStreamGetDevice", StreamGetDevice},
    {"hipGetStreamDeviceId", GetStreamDeviceId},
    {"hipLaunchHostFunc", LaunchHostFunc},
    {"hipLaunchHostFunc_spt", LaunchHostFuncSpt},
    {"hipEventCreate", EventCreate},
    {"hipEventCreateWithFlags", EventCreateWithFlags},
    {"hipEventDestroy", EventDestroy},
    {"hipEventElapsedTime", EventElapsedTime},
    {"hipEventQuery", EventQuery},
    {"hipEventRecord", EventRecord},
    {"hipEventRecord_spt", EventRecordSpt},
    {"hipEventSynchronize", EventSynchronize},
    {"hipGetErrorName", GetErrorName},
    {"hipGetErrorString", GetErrorString},
    {"hipGetLastError", GetLastError},
    {"hipPeekAtLastError", PeekAtLastError},
    {"hipLaunchKernel", LaunchKernel},
    {"hipLaunchKernel_spt", LaunchKernelSpt},
    {"hipExtLaunchKernel", ExtLaunchKernel},
    {"hipLaunchCooperativeKernel", LaunchCooperativeKernel},
    {"hipLaunchCooperativeKernel_spt", LaunchCooperativeKernelSpt},
    {"hipConfigureCall", ConfigureCall},
    {"hipSetupArgument", SetupArgument},
    {"hipLaunchByPtr", LaunchByPtr},
    {"__hipPushCallConfiguration", PushCallConfiguration},
    {"__hipPopCallConfiguration", PopCallConfiguration},
    {"_ZN8hip_impl22hipLaunchKernelGGLImplEmRK4dim3S2_jP12ihipStream_tPPv", LaunchKernelGGLImpl},
    {"hipFuncGetAttributes", FuncGetAttributes},
    {"hipFuncSetAttribute", FuncSetAttribute},
    {"hipFuncSetCacheConfig", FuncSetCacheConfig},
    {"hipOccupancyMaxActiveBlocksPerMultiprocessor", OccupancyMaxActiveBlocksPerMultiprocessor},
    {"hipOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", OccupancyMaxActiveBlocksPerMultiprocessorWithFlags},
    {"hipOccupancyMaxPotentialBlockSize", OccupancyMaxPotentialBlockSize},
    {"hipKernelNameRefByPtr", KernelNameRefByPtr},
    {"hipModuleLoad", ModuleLoad},
    {"hipModuleLoadData", ModuleLoadData},
    {"hipModuleLoadFatBinary", ModuleLoadFatBinary},
    {"hipModuleLoadDataEx", ModuleLoadDataEx},
    {"hipModuleUnload", ModuleUnload},
    {"hipModuleGetFunction", ModuleGetFunction},
    {"hipModuleGetGlobal", ModuleGetGlobal},
    {"hipModuleLaunchKernel", ModuleLaunchKernel},
    {"hipModuleLaunchCooperativeKernel", ModuleLaunchCooperativeKernel},
    {"hipFuncGetAttribute", FuncGetAttribute},
    {"hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", ModuleOccupancyMaxActiveBlocksPerMultiprocessor},
    {"hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags",
     ModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags},
    {"hipModuleOccupancyMaxPotentialBlockSize", ModuleOccupancyMaxPotentialBlockSize},
    {"hipModuleOccupancyMaxPotentialBlockSizeWithFlags", ModuleOccupancyMaxPotentialBlockSizeWithFlags},
    {"hipKernelNameRef", KernelNameRef},
    {"hipGraphCreate", GraphCreate},
    {"hipGraphDestroy", GraphDestroy},
    {"hipGraphAddKernelNode", GraphAddKernelNode},
    {"hipGraphAddMemsetNode", GraphAddMemsetNode},
    {"hipGraphAddMemcpyNode1D", GraphAddMemcpyNode1D},
    {"hipGraphAddHostNode", GraphAddHostNode},
    {"hipGraphHostNodeGetParams", GraphHostNodeGetParams},
    {"hipGraphAddEmptyNode", GraphAddEmptyNode},
    {"hipGraphAddDependencies", GraphAddDependencies},
    {"hipGraphGetNodes", GraphGetNodes},
    {"hipGraphGetRootNodes", GraphGetRootNodes},
    {"hipGraphGetEdges", GraphGetEdges},
    {"hipGraphNodeGetType", GraphNodeGetType},
    {"hipGraphNodeGetDependencies", GraphNodeGetDependencies},
    {"hipGraphNodeGetDependentNodes", GraphNodeGetDependentNodes},
    {"hipGraphInstantiate", GraphInstantiate},
    {"hipGraphInstantiateWithFlags", GraphInstantiateWithFlags},
    {"hipGraphLaunch", GraphLaunch},
    {"hipGraphExecDestroy", GraphExecDestroy},
    {"hipStreamBeginCapture_spt", CaptureSpt},
    {"hipStreamEndCapture_spt", CaptureSpt},
    {"hipStreamIsCapturing_spt", CaptureSpt},
    {"hipStreamGetCaptureInfo_spt", CaptureSpt},
    {"hipStreamGetCaptureInfo_v2_spt", CaptureSpt},
    {"hipGraphLaunch_spt", CaptureSpt},
    {"hipStreamBeginCaptureToGraph", StreamBeginCaptureToGraph},
    {"hipStreamUpdateCaptureDependencies", StreamUpdateCaptureDependencies},
    {"hipGraphKernelNodeGetParams", GraphKernelNodeGetParams},
    {"hipGraphKernelNodeSetParams", GraphKernelNodeSetParams},
    {"hipGraphKernelNodeGetAttribute", GraphKernelNodeAttributes},
    {"hipGraphKernelNodeSetAttribute", GraphKernelNodeAttributes},
    {"hipGraphKernelNodeCopyAttributes", GraphKernelNodeAttributes},
    {"hipGraphMemsetNodeGetParams", GraphMemsetNodeGetParams},
    {"hipGraphMemsetNodeSetParams", GraphMemsetNodeSetParams},
    {"hipGraphAddMemcpyNode", GraphAddMemcpyNode},
    {"hipGraphMemcpyNodeGetParams", GraphMemcpyNodeGetParams},
    {"hipGraphMemcpyNodeSetParams", GraphMemcpyNodeSetParams},
    {"hipGraphMemcpyNodeSetParams1D", GraphMemcpyNodeSetParams1D},
    {"hipGraphAddMemcpyNodeToSymbol", GraphAddMemcpyNodeToSymbol},
    {"hipGraphAddMemcpyNodeFromSymbol", GraphAddMemcpyNodeFromSymbol},
    {"hipGraphMemcpyNodeSetParamsToSymbol", GraphMemcpyNodeSetParamsToSymbol},
    {"hipGraphMemcpyNodeSetParamsFromSymbol", GraphMemcpyNodeSetParamsFromSymbol},
    {"hipGraphHostNodeSetParams", GraphHostNodeSetParams},
    {"hipGraphAddEventRecordNode", GraphAddEventRecordNode},
    {"hipGraphAddEventWaitNode", GraphAddEventWaitNode},
    {"hipGraphEventRecordNodeGetEvent", GraphEventRecordNodeGetEvent},
    {"hipGraphEventWaitNodeGetEvent", GraphEventWaitNodeGetEvent},
    {"hipGraphEventRecordNodeSetEvent", GraphEventRecordNodeSetEvent},
    {"hipGraphEventWaitNodeSetEvent", GraphEventWaitNodeSetEvent},
    {"hipGraphAddChildGraphNode", GraphAddChildGraphNode},
    {"hipGraphChildGraphNodeGetGraph", GraphChildGraphNodeGetGraph},
    {"hipGraphRemoveDependencies", GraphRemoveDependencies},
    {"hipGraphDestroyNode", GraphDestroyNode},
    {"hipGraphClone", GraphClone},
    {"hipGraphNodeFindInClone", GraphNodeFindInClone},
    {"hipGraphDebugDotPrint", GraphDebugDotPrint},
    {"hipGraphExecGetFlags", GraphExecGetFlags},
    {"hipGraphUpload", GraphUpload},
    {"hipGraphNodeGetEnabled", GraphNodeEnabled},
    {"hipGraphNodeSetEnabled", GraphNodeEnabled},
    {"hipGraphExecKernelNodeSetParams", GraphExecKernelNodeSetParams},
    {"hipGraphExecMemsetNodeSetParams", GraphExecMemsetNodeSetParams},
    {"hipGraphExecMemcpyNodeSetParams", GraphExecMemcpyNodeSetParams},
    {"hipGraphExecMemcpyNodeSetParams1D", GraphExecMemcpyNodeSetParams1D},
    {"hipGraphExecMemcpyNodeSetParamsToSymbol", GraphExecMemcpyNodeSetParamsToSymbol},
    {"hipGraphExecMemcpyNodeSetParamsFromSymbol", GraphExecMemcpyNodeSetParamsFromSymbol},
    {"hipGraphExecHostNodeSetParams", GraphExecHostNodeSetParams},
    {"hipGraphExecEventRecordNodeSetEvent", GraphExecEventRecordNodeSetEvent},
    {"hipGraphExecEventWaitNodeSetEvent", GraphExecEventWaitNodeSetEvent},
    {"hipGraphExecChildGraphNodeSetParams", GraphExecChildGraphNodeSetParams},
    {"hipGraphExecUpdate", GraphExecUpdate},
    {"hipGraphInstantiateWithParams", GraphInstantiateWithParams},
    {"hipEventRecordWithFlags", EventRecordWithFlags},
    {"hipIpcGetEventHandle", IpcEventHandles},
    {"hipExtGetLastError", ExtGetLastError},
    {"hipStreamAddCallback_spt", StreamAddCallbackSpt},
    {"hipStreamGetId", StreamGetId},
    {"hipModuleGetFunctionCount", ModuleGetFunctionCount},
    {"hipGraphAddNode", GraphAddNodeGeneric},
    {"hipUserObjectCreate", UserObjectCreate},
    {"hipUserObjectRetain", UserObjectRetainRelease},
    {"hipUserObjectRelease", UserObjectRetainRelease},
    {"hipGraphRetainUserObject", GraphRetainUserObject},
    {"hipGraphReleaseUserObject", GraphReleaseUserObject},
    {"hipGraphNodeSetParams", GraphNodeSetParamsGeneric},
    {"hipGraphExecNodeSetParams", GraphExecNodeSetParamsGeneric},
    {"hipDrvGraphAddMemcpyNode", DrvGraphMemcpyNodes},
    {"hipDrvGraphMemcpyNodeGetParams", DrvGraphMemcpyNodes},
    {"hipDrvGraphMemcpyNodeSetParams", DrvGraphMemcpyNodes},
    {"hipDrvGraphExecMemcpyNodeSetParams", DrvGraphMemcpyNodes},
    {"hipDrvGraphAddMemsetNode", DrvGraphMemsetNodes},
    {"hipDrvGraphExecMemsetNodeSetParams", DrvGraphMemsetNodes},
    {"hipOccupancyAvailableDynamicSMemPerBlock", OccupancyAvailableDynamicSMemPerBlock},
    {"hipGetFuncBySymbol", GetFuncBySymbol},
    {"hipExtLaunchMultiKernelMultiDevice", ExtLaunchMultiKernelMultiDevice},
    {"hipIpcOpenEventHandle", IpcEventHandles},
    {"hipDrvGetErrorName", DrvGetErrorText},
    {"hipDrvGetErrorString", DrvGetErrorText},
    {"hipStreamBeginCapture", StreamBeginCapture},
    {"hipStreamEndCapture", StreamEndCapture},
    {"hipStreamIsCapturing", StreamIsCapturing},
    {"hipStreamGetCaptureInfo", StreamGetCaptureInfo},
    {"hipStreamGetCaptureInfo_v2", StreamGetCaptureInfoV2},
    {"hipThreadExchangeStreamCaptureMode", ThreadExchangeStreamCaptureMode},
    {"hipGetProcAddress", GetProcAddress},
    {"__gnu_f2h_ieee", GnuF2hIeee},
    {"__gnu_h2f_ieee", GnuH2fIeee},
    {"amd_dbgapi_get_build_id", AmdDbgapiGetBuildId},
    {"amd_dbgapi_get_build_name", AmdDbgapiGetBuildName},
    {"amd_dbgapi_get_git_hash", AmdDbgapiGetGitHash},
    {"hipApiName", ApiName},
    {"hipGetCmdName", GetCmdName},
    {"hipCreateChannelDesc", CreateChannelDesc},
    {"hiprtcGetErrorString", HiprtcGetErrorString},
    {"hiprtcVersion", HiprtcVersion},
    {"__hipRegisterFatBinary", RegisterFatBinary},
    {"__hipRegisterFunction", RegisterFunction},
    {"__hipRegisterVar", RegisterVar},
    {"__hipUnregisterFatBinary", UnregisterFatBinary},
    {"__hipRegisterSurface", RegisterSurface},
    {"__hipRegisterTexture", RegisterTexture},
    {"hipDevicePrimaryCtxReset", DevicePrimaryCtxReset},
    {"hipDeviceReset", DeviceReset},
};

}  // namespace

int main() {
  int count = 0;
  HIP_OK(hipGetDeviceCount(&count));
  CHECK(count == 2, "expected a worker with two sim devices, got %d", count);
  return e2e::RunRows("api_table_runtime", kRows);
}
