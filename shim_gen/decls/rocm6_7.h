// rocm6_7.h - declarations of the HIP runtime functions that AMD's
// libamdhip64.so.6 (ROCm 6.4) and libamdhip64.so.7 (ROCm 7.x) export but
// Debian 12's HIP 5.2 headers (/usr/include/hip) do not declare.
//
// Not a public header and not compiled into the stub: shim_gen/gen_exports.py
// parses it with libclang (-x c++ -std=c++17 -D__HIP_PLATFORM_AMD__) AFTER
// Debian's <hip/hip_runtime_api.h>, <hip/hip_ext.h>,
// <hip/amd_detail/amd_hip_runtime.h>, <hip/amd_detail/hip_runtime_prof.h> and
// <hip/hiprtc.h>, to learn each function's return type (and its parameters).
// A hipError_t function that client_stub/abi/handwritten.txt does not name
// gets a generated entry point returning hipErrorNotSupported.
//
// Written for hipr from the functions' published signatures; nothing here is
// copied from AMD's headers. Public sources consulted:
//   ROCm/rocm-systems projects/hip/include/hip/hip_runtime_api.h and
//     projects/hip/include/hip/driver_types.h (develop, 7.2 era): types and
//     declarations of the 6.4/7.x additions;
//   ROCm/rocm-systems projects/clr/hipamd/include/hip/amd_detail/hip_api_trace.hpp
//     (develop, 7.x): the runtime's own function-pointer type for each API;
//   ROCm/HIP include/hip/hip_runtime_api.h, include/hip/hip_deprecated.h
//     (amd-staging after rocm-6.2.2, i.e. 6.3 era): hipDeviceProp_tR0600 and
//     hipDeviceProp_tR0000 (the latter identical to 5.2's hipDeviceProp_t);
//   ROCm/HIP include/hip/linker_types.h and include/hip/hiprtc.h (6.4 era):
//     hipJitInputType, hipLibraryOption, the hiprtc link functions;
//   ROCm/clr hipamd/include/hip/amd_detail/amd_hip_runtime_pt_api.h and
//     hipamd/src/hip_intercept.cpp (amd-staging, 6.3 era): the _spt forms,
//     hipRegisterTracerCallback;
//   ROCm/roctracer inc/ext/prof_protocol.h: activity_domain_t;
//   ROCm/rocm-systems projects/clr/hipamd/src/hip_library.cpp (develop):
//     hipKernelGetName, hipKernelGetLibrary, hipLibraryEnumerateKernels (7.2),
//     which hip_api_trace.hpp above does not yet list.
//
// Types: a type the 5.2 headers already have with the same meaning is used
// as is (hipMemLocation, hipPointer_attribute, hipJitOption, HIP_MEMCPY3D,
// hipMemPoolProps, hipDeviceProp_t = the 5.x layout, ...). Types 5.2 lacks are
// declared below, in plain C style: complete where a parameter passes them by
// value or where their layout is small and fixed, otherwise incomplete.
// hipDeviceProp_t grew in 6.0; its 6.x/7.x layout is declared only under the
// name hipDeviceProp_tR0600.
//
// Not hipError_t:
//   hipRegisterTracerCallback        void
//   hiprtcGetBitcode                 hiprtcResult
//   hiprtcGetBitcodeSize             hiprtcResult
//   hiprtcLinkCreate                 hiprtcResult
//   hiprtcLinkAddFile                hiprtcResult
//   hiprtcLinkAddData                hiprtcResult
//   hiprtcLinkComplete               hiprtcResult
//   hiprtcLinkDestroy                hiprtcResult
// (hipDrvGetErrorName/hipDrvGetErrorString do return hipError_t; the text
// comes back through a const char** out parameter.)
//
// Trailing comments give the symbol's ELF version node in libamdhip64
// (client_stub/abi/libamdhip64.so.{6,7}.symbols), i.e. the release that
// first exported it; the _spt forms take the same parameters as their base
// function.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

// ============================================================================
// Types the 5.2 headers lack
// ============================================================================

// ---- Handles ----------------------------------------------------------------
typedef struct hipUserObject* hipUserObject_t;
typedef struct ihipLinkState_t* hipLinkState_t;
typedef struct ihipLibrary_t* hipLibrary_t;
typedef struct ihipKernel_t* hipKernel_t;
typedef struct ihiprtcLinkState* hiprtcLinkState;

// ---- Device -------------------------------------------------------------------
// Device properties as 6.0 laid them out (hipGetDevicePropertiesR0600). The
// 5.x layout is 5.2's hipDeviceProp_t (hipGetDevicePropertiesR0000).
typedef struct hipDeviceProp_tR0600 {
  char name[256];
  hipUUID uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int deviceOverlap;
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;
  int integrated;
  int canMapHostMemory;
  int computeMode;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseHipArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingHipArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int reserved[63];
  int hipReserved[32];
  // AMD-only members.
  char gcnArchName[256];
  size_t maxSharedMemoryPerMultiProcessor;
  int clockInstructionRate;
  hipDeviceArch_t arch;
  unsigned int* hdpMemFlushCntl;
  unsigned int* hdpRegFlushCntl;
  int cooperativeMultiDeviceUnmatchedFunc;
  int cooperativeMultiDeviceUnmatchedGridDim;
  int cooperativeMultiDeviceUnmatchedBlockDim;
  int cooperativeMultiDeviceUnmatchedSharedMem;
  int isLargeBar;
  int asicRevision;
} hipDeviceProp_tR0600;

// Status out-parameter of hipGetProcAddress.
typedef enum hipDriverProcAddressQueryResult {
  HIP_GET_PROC_ADDRESS_SUCCESS = 0,
  HIP_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  HIP_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2
} hipDriverProcAddressQueryResult;

// Status out-parameter of hipGetDriverEntryPoint (7.1); AMD spells the last
// enumerator "Sufficent".
typedef enum hipDriverEntryPointQueryResult {
  hipDriverEntryPointSuccess = 0,
  hipDriverEntryPointSymbolNotFound = 1,
  hipDriverEntryPointVersionNotSufficent = 2
} hipDriverEntryPointQueryResult;

// Tracing domain passed to the hipRegisterTracerCallback callback (roctracer).
typedef enum activity_domain_t {
  ACTIVITY_DOMAIN_HSA_API = 0,
  ACTIVITY_DOMAIN_HSA_OPS = 1,
  ACTIVITY_DOMAIN_HIP_OPS = 2,
  ACTIVITY_DOMAIN_HCC_OPS = ACTIVITY_DOMAIN_HIP_OPS,
  ACTIVITY_DOMAIN_HIP_VDI = ACTIVITY_DOMAIN_HIP_OPS,
  ACTIVITY_DOMAIN_HIP_API = 3,
  ACTIVITY_DOMAIN_KFD_API = 4,
  ACTIVITY_DOMAIN_EXT_API = 5,
  ACTIVITY_DOMAIN_ROCTX = 6,
  ACTIVITY_DOMAIN_HSA_EVT = 7,
  ACTIVITY_DOMAIN_NUMBER
} activity_domain_t;

// ---- Launch configuration and attributes ----------------------------------------
typedef enum hipLaunchAttributeID {
  hipLaunchAttributeIgnore = 0,
  hipLaunchAttributeAccessPolicyWindow = 1,
  hipLaunchAttributeCooperative = 2,
  hipLaunchAttributeSynchronizationPolicy = 3,
  hipLaunchAttributeClusterDimension = 4,
  hipLaunchAttributeClusterSchedulingPolicyPreference = 5,
  hipLaunchAttributePriority = 8,
  hipLaunchAttributeMemSyncDomainMap = 9,
  hipLaunchAttributeMemSyncDomain = 10
} hipLaunchAttributeID;

// A 64-byte union; 7.x gives it further int-sized or small members (sync
// policy, memory-sync domain, cluster scheduling policy) within the padding.
typedef union hipLaunchAttributeValue {
  char pad[64];
  hipAccessPolicyWindow accessPolicyWindow;
  int cooperative;
  int priority;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
} hipLaunchAttributeValue;

// One attribute: an 8-byte id slot, then the value.
typedef struct hipLaunchAttribute_st {
  hipLaunchAttributeID id;
  char pad[8 - sizeof(hipLaunchAttributeID)];
  union {
    hipLaunchAttributeValue val;
    hipLaunchAttributeValue value;
  };
} hipLaunchAttribute;

// hipLaunchKernelExC's configuration.
typedef struct hipLaunchConfig_st {
  dim3 gridDim;
  dim3 blockDim;
  size_t dynamicSmemBytes;
  hipStream_t stream;
  hipLaunchAttribute* attrs;
  unsigned int numAttrs;
} hipLaunchConfig_t;

// hipDrvLaunchKernelEx's configuration.
typedef struct HIP_LAUNCH_CONFIG_st {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  hipStream_t hStream;
  hipLaunchAttribute* attrs;
  unsigned int numAttrs;
} HIP_LAUNCH_CONFIG;

// One device's launch for hipModuleLaunchCooperativeKernelMultiDevice.
typedef struct hipFunctionLaunchParams_t {
  hipFunction_t function;
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  hipStream_t hStream;
  void** kernelParams;
} hipFunctionLaunchParams;

// ---- Stream memory operations ---------------------------------------------------
typedef enum hipStreamBatchMemOpType {
  hipStreamMemOpWaitValue32 = 0x1,
  hipStreamMemOpWriteValue32 = 0x2,
  hipStreamMemOpFlushRemoteWrites = 0x3,
  hipStreamMemOpWaitValue64 = 0x4,
  hipStreamMemOpWriteValue64 = 0x5,
  hipStreamMemOpBarrier = 0x6
} hipStreamBatchMemOpType;

// One operation of hipStreamBatchMemOp (a 48-byte union).
typedef union hipStreamBatchMemOpParams_union {
  hipStreamBatchMemOpType operation;
  struct hipStreamMemOpWaitValueParams_t {
    hipStreamBatchMemOpType operation;
    hipDeviceptr_t address;
    union {
      uint32_t value;
      uint64_t value64;
    };
    unsigned int flags;
    hipDeviceptr_t alias;
  } waitValue;
  struct hipStreamMemOpWriteValueParams_t {
    hipStreamBatchMemOpType operation;
    hipDeviceptr_t address;
    union {
      uint32_t value;
      uint64_t value64;
    };
    unsigned int flags;
    hipDeviceptr_t alias;
  } writeValue;
  struct hipStreamMemOpFlushRemoteWritesParams_t {
    hipStreamBatchMemOpType operation;
    unsigned int flags;
  } flushRemoteWrites;
  struct hipStreamMemOpMemoryBarrierParams_t {
    hipStreamBatchMemOpType operation;
    unsigned int flags;
  } memoryBarrier;
  uint64_t pad[6];
} hipStreamBatchMemOpParams;

// ---- Memory ---------------------------------------------------------------------
// Handle type asked of hipMemGetHandleForAddressRange.
typedef enum hipMemRangeHandleType {
  hipMemRangeHandleTypeDmaBufFd = 0x1,
  hipMemRangeHandleTypeMax = 0x7fffffff
} hipMemRangeHandleType;

// Peer 3D copy (hipMemcpy3DPeer[Async]).
typedef struct hipMemcpy3DPeerParms {
  hipArray_t srcArray;
  hipPos srcPos;
  hipPitchedPtr srcPtr;
  int srcDevice;
  hipArray_t dstArray;
  hipPos dstPos;
  hipPitchedPtr dstPtr;
  int dstDevice;
  hipExtent extent;
} hipMemcpy3DPeerParms;

// Batched copies (hipMemcpyBatchAsync, hipMemcpy3DBatchAsync).
typedef enum hipMemcpySrcAccessOrder {
  hipMemcpySrcAccessOrderInvalid = 0x0,
  hipMemcpySrcAccessOrderStream = 0x1,
  hipMemcpySrcAccessOrderDuringApiCall = 0x2,
  hipMemcpySrcAccessOrderAny = 0x3,
  hipMemcpySrcAccessOrderMax = 0x7fffffff
} hipMemcpySrcAccessOrder;

typedef struct hipMemcpyAttributes {
  hipMemcpySrcAccessOrder srcAccessOrder;
  hipMemLocation srcLocHint;
  hipMemLocation dstLocHint;
  unsigned int flags;
} hipMemcpyAttributes;

typedef enum hipMemcpy3DOperandType {
  hipMemcpyOperandTypePointer = 0x1,
  hipMemcpyOperandTypeArray = 0x2,
  hipMemcpyOperandTypeMax = 0x7fffffff
} hipMemcpy3DOperandType;

typedef struct hipOffset3D {
  size_t x;
  size_t y;
  size_t z;
} hipOffset3D;

typedef struct hipMemcpy3DOperand {
  hipMemcpy3DOperandType type;
  union {
    struct {
      void* ptr;
      size_t rowLength;
      size_t layerHeight;
      hipMemLocation locHint;
    } ptr;
    struct {
      hipArray_t array;
      hipOffset3D offset;
    } array;
  } op;
} hipMemcpy3DOperand;

typedef struct hipMemcpy3DBatchOp {
  hipMemcpy3DOperand src;
  hipMemcpy3DOperand dst;
  hipExtent extent;
  hipMemcpySrcAccessOrder srcAccessOrder;
  unsigned int flags;
} hipMemcpy3DBatchOp;

// ---- Graphs ---------------------------------------------------------------------
typedef enum hipGraphMemAttributeType {
  hipGraphMemAttrUsedMemCurrent = 0,
  hipGraphMemAttrUsedMemHigh = 1,
  hipGraphMemAttrReservedMemCurrent = 2,
  hipGraphMemAttrReservedMemHigh = 3
} hipGraphMemAttributeType;

typedef enum hipGraphInstantiateResult {
  hipGraphInstantiateSuccess = 0,
  hipGraphInstantiateError = 1,
  hipGraphInstantiateInvalidStructure = 2,
  hipGraphInstantiateNodeOperationNotSupported = 3,
  hipGraphInstantiateMultipleDevicesNotSupported = 4
} hipGraphInstantiateResult;

typedef struct hipGraphInstantiateParams {
  hipGraphNode_t errNode_out;
  unsigned long long flags;
  hipGraphInstantiateResult result_out;
  hipStream_t uploadStream;
} hipGraphInstantiateParams;

// An edge's ports and type (hipStreamBeginCaptureToGraph); 8 bytes.
typedef struct hipGraphEdgeData {
  unsigned char from_port;
  unsigned char reserved[5];
  unsigned char to_port;
  unsigned char type;
} hipGraphEdgeData;

typedef struct hipMemAllocNodeParams {
  hipMemPoolProps poolProps;
  const hipMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
} hipMemAllocNodeParams;

typedef struct hipExternalSemaphoreSignalNodeParams {
  hipExternalSemaphore_t* extSemArray;
  const hipExternalSemaphoreSignalParams* paramsArray;
  unsigned int numExtSems;
} hipExternalSemaphoreSignalNodeParams;

typedef struct hipExternalSemaphoreWaitNodeParams {
  hipExternalSemaphore_t* extSemArray;
  const hipExternalSemaphoreWaitParams* paramsArray;
  unsigned int numExtSems;
} hipExternalSemaphoreWaitNodeParams;

typedef struct hipBatchMemOpNodeParams {
  hipCtx_t ctx;
  unsigned int count;
  hipStreamBatchMemOpParams* paramArray;
  unsigned int flags;
} hipBatchMemOpNodeParams;

// Generic node parameters (hipGraphAddNode & co.): a type tag and a union of
// every node kind's parameters; only ever passed by pointer.
typedef struct hipGraphNodeParams hipGraphNodeParams;

// ---- Modules, libraries and the JIT linker ------------------------------------------
typedef enum hipJitInputType {
  hipJitInputCubin = 0,
  hipJitInputPtx = 1,
  hipJitInputFatBinary = 2,
  hipJitInputObject = 3,
  hipJitInputLibrary = 4,
  hipJitInputNvvm = 5,
  hipJitNumLegacyInputTypes = 6,
  hipJitInputLLVMBitcode = 100,
  hipJitInputLLVMBundledBitcode = 101,
  hipJitInputLLVMArchivesOfBundledBitcode = 102,
  hipJitInputSpirv = 103,
  hipJitNumInputTypes = 10
} hipJitInputType;

typedef enum hipLibraryOption_e {
  hipLibraryHostUniversalFunctionAndDataTable = 0,
  hipLibraryBinaryIsPreserved = 1
} hipLibraryOption;

// ---- hiprtc linker ------------------------------------------------------------------
// Since 6.4 hiprtc's linker option and input types are the HIP JIT types
// under other names (hiprtc.h #defines them; 6.0-6.3 had separate enums with
// the same values for the options they share).
typedef hipJitOption hiprtcJIT_option;
typedef hipJitInputType hiprtcJITInputType;

// ============================================================================
// Functions
// ============================================================================
extern "C" {

// ---- Device -------------------------------------------------------------------------
hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_t* prop, int device);                 // hip_4.2, 5.x layout
hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600* prop, int device);            // hip_6.0, 6.x layout
hipError_t hipChooseDeviceR0000(int* device, const hipDeviceProp_t* prop);                 // hip_4.2
hipError_t hipChooseDeviceR0600(int* device, const hipDeviceProp_tR0600* prop);            // hip_6.0
hipError_t hipSetValidDevices(int* devices, int count);                                    // hip_6.2
hipError_t hipDeviceSetLimit(enum hipLimit_t limit, size_t value);                         // hip_5.3
hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t* max_width, const hipChannelFormatDesc* desc,
                                               int device);                                // hip_4.2
hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void* value);  // hip_4.5
hipError_t hipDeviceSetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void* value);  // hip_4.5
hipError_t hipDeviceGraphMemTrim(int device);                                              // hip_4.5

// ---- Errors, entry points, tracing ------------------------------------------------------
hipError_t hipExtGetLastError(void);                                                       // hip_6.0
hipError_t hipDrvGetErrorName(hipError_t error, const char** name);                        // hip_5.3
hipError_t hipDrvGetErrorString(hipError_t error, const char** text);                      // hip_5.3
hipError_t hipGetProcAddress(const char* symbol, void** fn, int hip_version, uint64_t flags,
                             hipDriverProcAddressQueryResult* status);                     // hip_6.1
hipError_t hipGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags,
                                  hipDriverEntryPointQueryResult* status);                 // hip_7.1
hipError_t hipGetDriverEntryPoint_spt(const char* symbol, void** fn, unsigned long long flags,
                                      hipDriverEntryPointQueryResult* status);             // hip_7.1
void hipRegisterTracerCallback(int (*callback)(activity_domain_t domain, uint32_t operation,
                                               void* data));                               // hip_5.3

// ---- Streams and events -------------------------------------------------------------------
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);                    // hip_4.2
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long* id);                     // hip_7.1
// 7.x spells the attribute types hipStreamAttrID / hipStreamAttrValue (macros for these).
hipError_t hipStreamGetAttribute(hipStream_t stream, hipLaunchAttributeID attr,
                                 hipLaunchAttributeValue* value);                          // hip_7.1
hipError_t hipStreamSetAttribute(hipStream_t stream, hipLaunchAttributeID attr,
                                 const hipLaunchAttributeValue* value);                    // hip_7.1
hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src);                      // hip_7.2
hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback, void* user_data,
                                    unsigned int flags);                                   // hip_5.3
hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void* user_data);     // hip_5.3
hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count, hipStreamBatchMemOpParams* ops,
                               unsigned int flags);                                        // hip_6.4
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);                       // hip_5.2
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags);  // hip_6.4

// ---- Stream capture -------------------------------------------------------------------------
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode);       // hip_5.3
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph);                 // hip_5.3
hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus* status);   // hip_5.3
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus* status,
                                       unsigned long long* id);                            // hip_5.3
hipError_t hipStreamGetCaptureInfo_v2_spt(hipStream_t stream, hipStreamCaptureStatus* status,
                                          unsigned long long* id, hipGraph_t* graph,
                                          const hipGraphNode_t** dependencies,
                                          size_t* dependency_count);                       // hip_5.3
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph,
                                        const hipGraphNode_t* dependencies,
                                        const hipGraphEdgeData* edge_data, size_t dependency_count,
                                        hipStreamCaptureMode mode);                        // hip_6.1

// ---- Memory: management, advice, pointers ----------------------------------------------------
hipError_t hipMemAdvise_v2(const void* ptr, size_t count, hipMemoryAdvise advice,
                           hipMemLocation location);                                       // hip_7.1
hipError_t hipMemPrefetchAsync_v2(const void* ptr, size_t count, hipMemLocation location,
                                  unsigned int flags, hipStream_t stream);                 // hip_7.1
hipError_t hipMemGetHandleForAddressRange(void* handle, hipDeviceptr_t ptr, size_t size,
                                          hipMemRangeHandleType handle_type,
                                          unsigned long long flags);                       // hip_6.5
hipError_t hipPointerSetAttribute(const void* value, hipPointer_attribute attribute,
                                  hipDeviceptr_t ptr);                                     // hip_4.2

// ---- Memory: set -------------------------------------------------------------------------------
hipError_t hipMemsetAsync_spt(void* dst, int value, size_t size, hipStream_t stream);      // hip_5.3
hipError_t hipMemset2DAsync_spt(void* dst, size_t pitch, int value, size_t width, size_t height,
                                hipStream_t stream);                                       // hip_5.3
hipError_t hipMemset3DAsync_spt(hipPitchedPtr dst, int value, hipExtent extent,
                                hipStream_t stream);                                       // hip_5.3
hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width,
                         size_t height);                                                   // hip_7.1
hipError_t hipMemsetD2D8Async(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width,
                              size_t height, hipStream_t stream);                          // hip_7.1
hipError_t hipMemsetD2D16(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width,
                          size_t height);                                                  // hip_7.1
hipError_t hipMemsetD2D16Async(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width,
                               size_t height, hipStream_t stream);                         // hip_7.1
hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width,
                          size_t height);                                                  // hip_7.1
hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width,
                               size_t height, hipStream_t stream);                         // hip_7.1

// ---- Memory: copy ------------------------------------------------------------------------------
hipError_t hipMemcpy2DAsync_spt(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                                size_t width, size_t height, hipMemcpyKind kind,
                                hipStream_t stream);                                       // hip_5.3
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                       size_t src_pitch, size_t width, size_t height, hipMemcpyKind kind,
                                       hipStream_t stream);                                // hip_5.3
hipError_t hipMemcpy2DFromArrayAsync_spt(void* dst, size_t dst_pitch, hipArray_const_t src,
                                         size_t w_offset, size_t h_offset, size_t width, size_t height,
                                         hipMemcpyKind kind, hipStream_t stream);          // hip_5.3
hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms* params, hipStream_t stream);       // hip_5.3
hipError_t hipMemcpyFromArray_spt(void* dst, hipArray_const_t src, size_t w_offset, size_t h_offset,
                                  size_t count, hipMemcpyKind kind);                       // hip_5.3
hipError_t hipMemcpyToSymbolAsync_spt(const void* symbol, const void* src, size_t size, size_t offset,
                                      hipMemcpyKind kind, hipStream_t stream);             // hip_5.3
hipError_t hipMemcpyFromSymbolAsync_spt(void* dst, const void* symbol, size_t size, size_t offset,
                                        hipMemcpyKind kind, hipStream_t stream);           // hip_5.3
hipError_t hipMemcpy2DArrayToArray(hipArray_t dst, size_t w_offset_dst, size_t h_offset_dst,
                                   hipArray_const_t src, size_t w_offset_src, size_t h_offset_src,
                                   size_t width, size_t height, hipMemcpyKind kind);       // hip_6.2
hipError_t hipMemcpyAtoA(hipArray_t dst, size_t dst_offset, hipArray_t src, size_t src_offset,
                         size_t count);                                                    // hip_6.2
hipError_t hipMemcpyAtoD(hipDeviceptr_t dst, hipArray_t src, size_t src_offset, size_t count);  // hip_6.2
hipError_t hipMemcpyDtoA(hipArray_t dst, size_t dst_offset, hipDeviceptr_t src, size_t count);  // hip_6.2
hipError_t hipMemcpyAtoHAsync(void* dst, hipArray_t src, size_t src_offset, size_t count,
                              hipStream_t stream);                                         // hip_6.2
hipError_t hipMemcpyHtoAAsync(hipArray_t dst, size_t dst_offset, const void* src, size_t count,
                              hipStream_t stream);                                         // hip_6.2
hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms* params);                                  // hip_7.1
hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms* params, hipStream_t stream);         // hip_7.1
hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count,
                               hipMemcpyAttributes* attrs, size_t* attr_indices, size_t attr_count,
                               size_t* fail_index, hipStream_t stream);                    // hip_7.1
hipError_t hipMemcpy3DBatchAsync(size_t count, hipMemcpy3DBatchOp* ops, size_t* fail_index,
                                 unsigned long long flags, hipStream_t stream);            // hip_7.1

// ---- Arrays and texture references ----------------------------------------------------------------
hipError_t hipArrayGetInfo(hipChannelFormatDesc* desc, hipExtent* extent, unsigned int* flags,
                           hipArray_t array);                                              // hip_5.6
hipError_t hipArrayGetDescriptor(HIP_ARRAY_DESCRIPTOR* descriptor, hipArray_t array);      // hip_5.6
hipError_t hipArray3DGetDescriptor(HIP_ARRAY3D_DESCRIPTOR* descriptor, hipArray_t array);  // hip_5.6
hipError_t hipTexRefGetArray(hipArray_t* array, const textureReference* tex_ref);          // hip_4.2
hipError_t hipTexRefGetBorderColor(float* color, const textureReference* tex_ref);         // hip_4.2

// ---- Launch and occupancy -----------------------------------------------------------------------
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* kernel, void** args);  // hip_6.5
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void** params,
                                void** extra);                                             // hip_6.5
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int grid_x, unsigned int grid_y,
                                            unsigned int grid_z, unsigned int block_x,
                                            unsigned int block_y, unsigned int block_z,
                                            unsigned int shared_bytes, hipStream_t stream,
                                            void** params);                                // hip_5.5
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams* launches,
                                                       unsigned int device_count,
                                                       unsigned int flags);                // hip_5.5
hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* kernel, int blocks,
                                                    int block_size);                       // hip_7.2

// ---- Modules, libraries, kernels ------------------------------------------------------------------
hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin);                // hip_7.1
hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t module);             // hip_7.1
hipError_t hipGetFuncBySymbol(hipFunction_t* function, const void* symbol);                // hip_6.2
hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption* jit_options,
                              void** jit_values, unsigned int jit_count,
                              hipLibraryOption* library_options, void** library_values,
                              unsigned int library_count);                                 // hip_7.2
hipError_t hipLibraryLoadFromFile(hipLibrary_t* library, const char* path, hipJitOption* jit_options,
                                  void** jit_values, unsigned int jit_count,
                                  hipLibraryOption* library_options, void** library_values,
                                  unsigned int library_count);                             // hip_7.2
hipError_t hipLibraryUnload(hipLibrary_t library);                                         // hip_7.2
hipError_t hipLibraryGetKernel(hipKernel_t* kernel, hipLibrary_t library, const char* name);  // hip_7.2
hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t library);            // hip_7.2
hipError_t hipLibraryEnumerateKernels(hipKernel_t* kernels, unsigned int count,
                                      hipLibrary_t library);                               // hip_7.2
hipError_t hipKernelGetLibrary(hipLibrary_t* library, hipKernel_t kernel);                 // hip_7.2
hipError_t hipKernelGetName(const char** name, hipKernel_t kernel);                        // hip_7.2

// ---- JIT linker ------------------------------------------------------------------------------------
hipError_t hipLinkCreate(unsigned int option_count, hipJitOption* options, void** values,
                         hipLinkState_t* state);                                           // hip_6.4
hipError_t hipLinkAddData(hipLinkState_t state, hipJitInputType type, void* data, size_t size,
                          const char* name, unsigned int option_count, hipJitOption* options,
                          void** values);                                                  // hip_6.4
hipError_t hipLinkAddFile(hipLinkState_t state, hipJitInputType type, const char* path,
                          unsigned int option_count, hipJitOption* options, void** values);  // hip_6.4
hipError_t hipLinkComplete(hipLinkState_t state, void** binary, size_t* size);             // hip_6.4
hipError_t hipLinkDestroy(hipLinkState_t state);                                           // hip_6.4

// ---- Graphs: instantiate, launch, generic nodes -------------------------------------------------------
hipError_t hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t stream);                    // hip_5.3
hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream);                        // hip_5.3
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph,
                                         hipGraphInstantiateParams* params);               // hip_6.1
hipError_t hipGraphExecGetFlags(hipGraphExec_t exec, unsigned long long* flags);           // hip_6.2
hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                           size_t dependency_count, hipGraphNodeParams* params);           // hip_5.5
hipError_t hipGraphNodeSetParams(hipGraphNode_t node, hipGraphNodeParams* params);         // hip_6.2
hipError_t hipGraphExecNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                     hipGraphNodeParams* params);                          // hip_6.2
hipError_t hipGraphNodeGetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int* enabled);  // hip_5.3
hipError_t hipGraphNodeSetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int enabled);   // hip_5.3
hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t src, hipGraphNode_t dst);       // hip_5.3
hipError_t hipGraphDebugDotPrint(hipGraph_t graph, const char* path, unsigned int flags);  // hip_5.3

// ---- Graphs: memory nodes -------------------------------------------------------------------------------
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                   size_t dependency_count, hipMemAllocNodeParams* params);  // hip_5.5
hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t node, hipMemAllocNodeParams* params);  // hip_5.5
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                  size_t dependency_count, void* ptr);                     // hip_5.5
hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t node, void* ptr_out);               // hip_5.5
hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                    size_t dependency_count, const HIP_MEMCPY3D* params,
                                    hipCtx_t ctx);                                         // hip_5.6
hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                    size_t dependency_count, const hipMemsetParams* params,
                                    hipCtx_t ctx);                                         // hip_5.6
hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph,
                                     const hipGraphNode_t* dependencies, size_t dependency_count,
                                     hipDeviceptr_t ptr);                                  // hip_6.2
hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t node, HIP_MEMCPY3D* params);      // hip_6.0
hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t node, const HIP_MEMCPY3D* params);  // hip_6.0
hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                              const HIP_MEMCPY3D* params, hipCtx_t ctx);   // hip_6.2
hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                              const hipMemsetParams* params, hipCtx_t ctx);  // hip_6.2

// ---- Graphs: batch memory-operation nodes -------------------------------------------------------------------
hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t* node, hipGraph_t graph,
                                     const hipGraphNode_t* dependencies, size_t dependency_count,
                                     const hipBatchMemOpNodeParams* params);               // hip_6.4
hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t node, hipBatchMemOpNodeParams* params_out);  // hip_6.4
hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t node, hipBatchMemOpNodeParams* params);      // hip_6.4
hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                               const hipBatchMemOpNodeParams* params);     // hip_6.4

// ---- Graphs: external-semaphore nodes --------------------------------------------------------------------------
hipError_t hipGraphAddExternalSemaphoresSignalNode(hipGraphNode_t* node, hipGraph_t graph,
                                                   const hipGraphNode_t* dependencies,
                                                   size_t dependency_count,
                                                   const hipExternalSemaphoreSignalNodeParams* params);  // hip_5.3
hipError_t hipGraphAddExternalSemaphoresWaitNode(hipGraphNode_t* node, hipGraph_t graph,
                                                 const hipGraphNode_t* dependencies,
                                                 size_t dependency_count,
                                                 const hipExternalSemaphoreWaitNodeParams* params);  // hip_5.3
hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(
    hipGraphNode_t node, hipExternalSemaphoreSignalNodeParams* params_out);                // hip_5.3
hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(
    hipGraphNode_t node, const hipExternalSemaphoreSignalNodeParams* params);              // hip_5.3
hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(
    hipGraphNode_t node, hipExternalSemaphoreWaitNodeParams* params_out);                  // hip_5.3
hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(
    hipGraphNode_t node, const hipExternalSemaphoreWaitNodeParams* params);                // hip_5.3
hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(
    hipGraphExec_t exec, hipGraphNode_t node, const hipExternalSemaphoreSignalNodeParams* params);  // hip_5.3
hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(
    hipGraphExec_t exec, hipGraphNode_t node, const hipExternalSemaphoreWaitNodeParams* params);    // hip_5.3

// ---- Graphs: user objects ---------------------------------------------------------------------------------------
hipError_t hipUserObjectCreate(hipUserObject_t* object, void* ptr, hipHostFn_t destroy,
                               unsigned int initial_refcount, unsigned int flags);         // hip_5.3
hipError_t hipUserObjectRelease(hipUserObject_t object, unsigned int count);               // hip_5.3
hipError_t hipUserObjectRetain(hipUserObject_t object, unsigned int count);                // hip_5.3
hipError_t hipGraphRetainUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count,
                                    unsigned int flags);                                   // hip_5.3
hipError_t hipGraphReleaseUserObject(hipGraph_t graph, hipUserObject_t object,
                                     unsigned int count);                                  // hip_5.3

// ---- hiprtc (exported by libamdhip64 too; return hiprtcResult) ----------------------------------------------------
hiprtcResult hiprtcGetBitcode(hiprtcProgram program, char* bitcode);                       // hip_5.3
hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram program, size_t* size);                    // hip_5.3
hiprtcResult hiprtcLinkCreate(unsigned int option_count, hiprtcJIT_option* options, void** values,
                              hiprtcLinkState* state);                                     // hip_4.2
hiprtcResult hiprtcLinkAddFile(hiprtcLinkState state, hiprtcJITInputType type, const char* path,
                               unsigned int option_count, hiprtcJIT_option* options,
                               void** values);                                             // hip_4.2
hiprtcResult hiprtcLinkAddData(hiprtcLinkState state, hiprtcJITInputType type, void* image, size_t size,
                               const char* name, unsigned int option_count, hiprtcJIT_option* options,
                               void** values);                                             // hip_4.2
hiprtcResult hiprtcLinkComplete(hiprtcLinkState state, void** binary, size_t* size);       // hip_4.2
hiprtcResult hiprtcLinkDestroy(hiprtcLinkState state);                                     // hip_4.2

}  // extern "C"
