// Declarations of the HIP runtime functions that AMD's libamdhip64.so.6
// (ROCm 6.4) and libamdhip64.so.7 (ROCm 7.x) export but Debian 12's HIP 5.2
// headers do not declare (client_stub/abi/libamdhip64.so.{6,7}.symbols).
//
// shim_gen/gen_exports.py parses this file with libclang after Debian's HIP
// headers (-x c++ -D__HIP_PLATFORM_AMD__) to learn each function's return
// type: a hipError_t function the stub does not implement by hand gets a
// generated entry point that returns hipErrorNotSupported. Written for hipr
// from the functions' documented signatures (ROCm HIP API reference, and
// the parameter lists in ROCm/clr's hipamd sources); nothing here is copied
// from AMD's headers. Types the 5.2 headers lack are declared incomplete
// (every one is passed by pointer) or, where passed by value, as the
// integer or struct they are.
//
// Not hipError_t (hand-written in client_stub/handwritten_unsupported.cc):
//   hipRegisterTracerCallback (void), hiprtcGetBitcode, hiprtcGetBitcodeSize,
//   hiprtcLinkAddData, hiprtcLinkAddFile, hiprtcLinkComplete,
//   hiprtcLinkCreate, hiprtcLinkDestroy (hiprtcResult).
// Functions the stub implements by hand are declared here too, so the file
// covers every name Debian's headers lack.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

// ---- Types 5.2 lacks (all passed by pointer unless noted) -------------------
typedef struct hipDeviceProp_tR0600 hipDeviceProp_tR0600;
typedef struct HIP_LAUNCH_CONFIG_st HIP_LAUNCH_CONFIG;
typedef struct hipLaunchConfig_st hipLaunchConfig_t;
typedef struct hipGraphNodeParams hipGraphNodeParams;
typedef struct hipGraphInstantiateParams hipGraphInstantiateParams;
typedef struct hipMemAllocNodeParams hipMemAllocNodeParams;
typedef struct hipExternalSemaphoreSignalNodeParams hipExternalSemaphoreSignalNodeParams;
typedef struct hipExternalSemaphoreWaitNodeParams hipExternalSemaphoreWaitNodeParams;
typedef struct hipBatchMemOpNodeParams hipBatchMemOpNodeParams;
typedef union hipStreamBatchMemOpParams_union hipStreamBatchMemOpParams;
typedef struct hipMemcpy3DPeerParms hipMemcpy3DPeerParms;
typedef struct hipMemcpyAttributes hipMemcpyAttributes;
typedef struct hipMemcpy3DBatchOp hipMemcpy3DBatchOp;
typedef union hipLaunchAttributeValue hipLaunchAttributeValue;
typedef struct ihipUserObject* hipUserObject_t;
typedef struct ihipLinkState_t* hipLinkState_t;
typedef struct ihipLibrary_t* hipLibrary_t;
typedef struct ihipKernel_t* hipKernel_t;
typedef struct ihiprtcLinkState* hiprtcLinkState;
typedef struct hipGraphEdgeData hipGraphEdgeData;
typedef struct hipFunctionLaunchParams_t hipFunctionLaunchParams;
// Enumerations passed by value: int-sized.
typedef int hipDriverProcAddressQueryResult;
typedef int hipGraphMemAttributeType;
typedef int hipLaunchAttributeID;
typedef int hipJitInputType;
typedef int hipLibraryOption;
typedef int hipMemRangeHandleType;
typedef int hiprtcJITInputType;
typedef int hiprtcJIT_option;
typedef int hipPointer_attribute_v6;

extern "C" {

// ---- Device --------------------------------------------------------------
hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_t* prop, int device);           // 5.x layout
hipError_t hipGetDevicePropertiesR0600(hipDeviceProp_tR0600* prop, int device);      // 6.x layout
hipError_t hipChooseDeviceR0000(int* device, const hipDeviceProp_t* prop);
hipError_t hipChooseDeviceR0600(int* device, const hipDeviceProp_tR0600* prop);
hipError_t hipDeviceSetLimit(enum hipLimit_t limit, size_t value);
hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t* max_width, const hipChannelFormatDesc* desc, int device);
hipError_t hipDeviceGetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void* value);
hipError_t hipDeviceSetGraphMemAttribute(int device, hipGraphMemAttributeType attr, void* value);
hipError_t hipDeviceGraphMemTrim(int device);
hipError_t hipSetValidDevices(int* devices, int count);
hipError_t hipExtGetLastError(void);
hipError_t hipDrvGetErrorName(hipError_t error, const char** name);
hipError_t hipDrvGetErrorString(hipError_t error, const char** text);
hipError_t hipGetProcAddress(const char* symbol, void** fn, int version, uint64_t flags,
                             hipDriverProcAddressQueryResult* status);
hipError_t hipGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags,
                                  hipDriverProcAddressQueryResult* status);
hipError_t hipGetDriverEntryPoint_spt(const char* symbol, void** fn, unsigned long long flags,
                                      hipDriverProcAddressQueryResult* status);
void hipRegisterTracerCallback(int (*callback)(int domain, uint32_t operation, void* data));

// ---- Streams and events ----------------------------------------------------
hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device);
hipError_t hipStreamGetId(hipStream_t stream, unsigned long long* id);
hipError_t hipStreamGetAttribute(hipStream_t stream, hipLaunchAttributeID attr, hipLaunchAttributeValue* value);
hipError_t hipStreamSetAttribute(hipStream_t stream, hipLaunchAttributeID attr, const hipLaunchAttributeValue* value);
hipError_t hipStreamCopyAttributes(hipStream_t dst, hipStream_t src);
hipError_t hipStreamAddCallback_spt(hipStream_t stream, hipStreamCallback_t callback, void* user_data,
                                    unsigned int flags);
hipError_t hipLaunchHostFunc_spt(hipStream_t stream, hipHostFn_t fn, void* user_data);
hipError_t hipStreamBatchMemOp(hipStream_t stream, unsigned int count, hipStreamBatchMemOpParams* params,
                               unsigned int flags);
hipError_t hipEventRecord_spt(hipEvent_t event, hipStream_t stream);
hipError_t hipEventRecordWithFlags(hipEvent_t event, hipStream_t stream, unsigned int flags);

// ---- Stream capture (per-thread forms and capture into a graph) ------------
hipError_t hipStreamBeginCapture_spt(hipStream_t stream, hipStreamCaptureMode mode);
hipError_t hipStreamEndCapture_spt(hipStream_t stream, hipGraph_t* graph);
hipError_t hipStreamIsCapturing_spt(hipStream_t stream, hipStreamCaptureStatus* status);
hipError_t hipStreamGetCaptureInfo_spt(hipStream_t stream, hipStreamCaptureStatus* status, unsigned long long* id);
hipError_t hipStreamGetCaptureInfo_v2_spt(hipStream_t stream, hipStreamCaptureStatus* status,
                                          unsigned long long* id, hipGraph_t* graph,
                                          const hipGraphNode_t** dependencies, size_t* count);
hipError_t hipStreamBeginCaptureToGraph(hipStream_t stream, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                        const hipGraphEdgeData* edge_data, size_t count, hipStreamCaptureMode mode);

// ---- Memory ------------------------------------------------------------------
hipError_t hipMemAdvise_v2(const void* ptr, size_t count, hipMemoryAdvise advice, hipMemLocation location);
hipError_t hipMemPrefetchAsync_v2(const void* ptr, size_t count, hipMemLocation location, unsigned int flags,
                                  hipStream_t stream);
hipError_t hipMemGetHandleForAddressRange(void* handle, hipDeviceptr_t ptr, size_t size,
                                          hipMemRangeHandleType type, unsigned long long flags);
hipError_t hipPointerSetAttribute(const void* value, hipPointer_attribute_v6 attribute, hipDeviceptr_t ptr);
hipError_t hipMemsetAsync_spt(void* dst, int value, size_t size, hipStream_t stream);
hipError_t hipMemset2DAsync_spt(void* dst, size_t pitch, int value, size_t width, size_t height, hipStream_t stream);
hipError_t hipMemset3DAsync_spt(hipPitchedPtr dst, int value, hipExtent extent, hipStream_t stream);
hipError_t hipMemsetD2D8(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width, size_t height);
hipError_t hipMemsetD2D8Async(hipDeviceptr_t dst, size_t pitch, unsigned char value, size_t width, size_t height,
                              hipStream_t stream);
hipError_t hipMemsetD2D16(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width, size_t height);
hipError_t hipMemsetD2D16Async(hipDeviceptr_t dst, size_t pitch, unsigned short value, size_t width,
                               size_t height, hipStream_t stream);
hipError_t hipMemsetD2D32(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width, size_t height);
hipError_t hipMemsetD2D32Async(hipDeviceptr_t dst, size_t pitch, unsigned int value, size_t width,
                               size_t height, hipStream_t stream);

// ---- Copies ------------------------------------------------------------------
hipError_t hipMemcpy2DAsync_spt(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                                size_t height, hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy2DToArrayAsync_spt(hipArray_t dst, size_t w_offset, size_t h_offset, const void* src,
                                       size_t spitch, size_t width, size_t height, hipMemcpyKind kind,
                                       hipStream_t stream);
hipError_t hipMemcpy2DFromArrayAsync_spt(void* dst, size_t dpitch, hipArray_const_t src, size_t w_offset,
                                         size_t h_offset, size_t width, size_t height, hipMemcpyKind kind,
                                         hipStream_t stream);
hipError_t hipMemcpy3DAsync_spt(const hipMemcpy3DParms* params, hipStream_t stream);
hipError_t hipMemcpyFromArray_spt(void* dst, hipArray_const_t src, size_t w_offset, size_t h_offset, size_t count,
                                  hipMemcpyKind kind);
hipError_t hipMemcpyToSymbolAsync_spt(const void* symbol, const void* src, size_t size, size_t offset,
                                      hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpyFromSymbolAsync_spt(void* dst, const void* symbol, size_t size, size_t offset,
                                        hipMemcpyKind kind, hipStream_t stream);
hipError_t hipMemcpy2DArrayToArray(hipArray_t dst, size_t w_offset_dst, size_t h_offset_dst, hipArray_const_t src,
                                   size_t w_offset_src, size_t h_offset_src, size_t width, size_t height,
                                   hipMemcpyKind kind);
hipError_t hipMemcpyAtoA(hipArray_t dst, size_t dst_offset, hipArray_t src, size_t src_offset, size_t count);
hipError_t hipMemcpyAtoD(hipDeviceptr_t dst, hipArray_t src, size_t src_offset, size_t count);
hipError_t hipMemcpyDtoA(hipArray_t dst, size_t dst_offset, hipDeviceptr_t src, size_t count);
hipError_t hipMemcpyAtoHAsync(void* dst, hipArray_t src, size_t src_offset, size_t count, hipStream_t stream);
hipError_t hipMemcpyHtoAAsync(hipArray_t dst, size_t dst_offset, const void* src, size_t count, hipStream_t stream);
hipError_t hipMemcpy3DPeer(hipMemcpy3DPeerParms* params);
hipError_t hipMemcpy3DPeerAsync(hipMemcpy3DPeerParms* params, hipStream_t stream);
hipError_t hipMemcpyBatchAsync(void** dsts, void** srcs, size_t* sizes, size_t count, hipMemcpyAttributes* attrs,
                               size_t* attr_indices, size_t attr_count, size_t* fail_index, hipStream_t stream);
hipError_t hipMemcpy3DBatchAsync(size_t count, hipMemcpy3DBatchOp* ops, size_t* fail_index, unsigned long long flags,
                                 hipStream_t stream);

// ---- Arrays and textures ------------------------------------------------------
hipError_t hipArrayGetInfo(hipChannelFormatDesc* desc, hipExtent* extent, unsigned int* flags, hipArray_t array);
hipError_t hipArrayGetDescriptor(HIP_ARRAY_DESCRIPTOR* descriptor, hipArray_t array);
hipError_t hipArray3DGetDescriptor(HIP_ARRAY3D_DESCRIPTOR* descriptor, hipArray_t array);
hipError_t hipTexRefGetArray(hipArray_t* array, const textureReference* tex_ref);
hipError_t hipTexRefGetBorderColor(float* color, const textureReference* tex_ref);

// ---- Modules, libraries, kernels, linking ---------------------------------------
hipError_t hipModuleLaunchCooperativeKernel(hipFunction_t f, unsigned int grid_x, unsigned int grid_y,
                                            unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                                            unsigned int block_z, unsigned int shared_bytes, hipStream_t stream,
                                            void** params);
hipError_t hipModuleLaunchCooperativeKernelMultiDevice(hipFunctionLaunchParams* launches, unsigned int count,
                                                       unsigned int flags);
hipError_t hipModuleLoadFatBinary(hipModule_t* module, const void* fatbin);
hipError_t hipModuleGetFunctionCount(unsigned int* count, hipModule_t module);
hipError_t hipGetFuncBySymbol(hipFunction_t* function, const void* symbol);
hipError_t hipDrvLaunchKernelEx(const HIP_LAUNCH_CONFIG* config, hipFunction_t f, void** params, void** extra);
hipError_t hipLaunchKernelExC(const hipLaunchConfig_t* config, const void* f, void** args);
hipError_t hipOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* f, int blocks, int block_size);
hipError_t hipLibraryLoadData(hipLibrary_t* library, const void* code, hipJitOption* jit_options,
                              void** jit_values, unsigned int jit_count, hipLibraryOption* library_options,
                              void** library_values, unsigned int library_count);
hipError_t hipLibraryLoadFromFile(hipLibrary_t* library, const char* path, hipJitOption* jit_options,
                                  void** jit_values, unsigned int jit_count, hipLibraryOption* library_options,
                                  void** library_values, unsigned int library_count);
hipError_t hipLibraryUnload(hipLibrary_t library);
hipError_t hipLibraryGetKernel(hipKernel_t* kernel, hipLibrary_t library, const char* name);
hipError_t hipLibraryGetKernelCount(unsigned int* count, hipLibrary_t library);
hipError_t hipLibraryEnumerateKernels(hipKernel_t* kernels, unsigned int count, hipLibrary_t library);
hipError_t hipKernelGetLibrary(hipLibrary_t* library, hipKernel_t kernel);
hipError_t hipKernelGetName(const char** name, hipKernel_t kernel);
hipError_t hipLinkCreate(unsigned int count, hipJitOption* options, void** values, hipLinkState_t* state);
hipError_t hipLinkAddData(hipLinkState_t state, hipJitInputType type, void* data, size_t size, const char* name,
                          unsigned int count, hipJitOption* options, void** values);
hipError_t hipLinkAddFile(hipLinkState_t state, hipJitInputType type, const char* path, unsigned int count,
                          hipJitOption* options, void** values);
hipError_t hipLinkComplete(hipLinkState_t state, void** binary, size_t* size);
hipError_t hipLinkDestroy(hipLinkState_t state);

// ---- Graphs --------------------------------------------------------------------
hipError_t hipGraphLaunch_spt(hipGraphExec_t exec, hipStream_t stream);
hipError_t hipGraphUpload(hipGraphExec_t exec, hipStream_t stream);
hipError_t hipGraphAddNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies, size_t count,
                           hipGraphNodeParams* params);
hipError_t hipGraphNodeSetParams(hipGraphNode_t node, hipGraphNodeParams* params);
hipError_t hipGraphExecNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node, hipGraphNodeParams* params);
hipError_t hipGraphInstantiateWithParams(hipGraphExec_t* exec, hipGraph_t graph, hipGraphInstantiateParams* params);
hipError_t hipGraphExecGetFlags(hipGraphExec_t exec, unsigned long long* flags);
hipError_t hipGraphNodeGetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int* enabled);
hipError_t hipGraphNodeSetEnabled(hipGraphExec_t exec, hipGraphNode_t node, unsigned int enabled);
hipError_t hipGraphKernelNodeCopyAttributes(hipGraphNode_t dst, hipGraphNode_t src);
hipError_t hipGraphDebugDotPrint(hipGraph_t graph, const char* path, unsigned int flags);
hipError_t hipGraphAddMemAllocNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                   size_t count, hipMemAllocNodeParams* params);
hipError_t hipGraphMemAllocNodeGetParams(hipGraphNode_t node, hipMemAllocNodeParams* params);
hipError_t hipGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                  size_t count, void* ptr);
hipError_t hipGraphMemFreeNodeGetParams(hipGraphNode_t node, void* ptr);
hipError_t hipGraphAddExternalSemaphoresSignalNode(hipGraphNode_t* node, hipGraph_t graph,
                                                   const hipGraphNode_t* dependencies, size_t count,
                                                   const hipExternalSemaphoreSignalNodeParams* params);
hipError_t hipGraphAddExternalSemaphoresWaitNode(hipGraphNode_t* node, hipGraph_t graph,
                                                 const hipGraphNode_t* dependencies, size_t count,
                                                 const hipExternalSemaphoreWaitNodeParams* params);
hipError_t hipGraphExternalSemaphoresSignalNodeGetParams(hipGraphNode_t node,
                                                         hipExternalSemaphoreSignalNodeParams* params);
hipError_t hipGraphExternalSemaphoresSignalNodeSetParams(hipGraphNode_t node,
                                                         const hipExternalSemaphoreSignalNodeParams* params);
hipError_t hipGraphExternalSemaphoresWaitNodeGetParams(hipGraphNode_t node,
                                                       hipExternalSemaphoreWaitNodeParams* params);
hipError_t hipGraphExternalSemaphoresWaitNodeSetParams(hipGraphNode_t node,
                                                       const hipExternalSemaphoreWaitNodeParams* params);
hipError_t hipGraphExecExternalSemaphoresSignalNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                             const hipExternalSemaphoreSignalNodeParams* params);
hipError_t hipGraphExecExternalSemaphoresWaitNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                                           const hipExternalSemaphoreWaitNodeParams* params);
hipError_t hipGraphAddBatchMemOpNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                     size_t count, const hipBatchMemOpNodeParams* params);
hipError_t hipGraphBatchMemOpNodeGetParams(hipGraphNode_t node, hipBatchMemOpNodeParams* params);
hipError_t hipGraphBatchMemOpNodeSetParams(hipGraphNode_t node, hipBatchMemOpNodeParams* params);
hipError_t hipGraphExecBatchMemOpNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                               const hipBatchMemOpNodeParams* params);
hipError_t hipDrvGraphAddMemcpyNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                    size_t count, const HIP_MEMCPY3D* params, hipCtx_t ctx);
hipError_t hipDrvGraphAddMemsetNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                    size_t count, const hipMemsetParams* params, hipCtx_t ctx);
hipError_t hipDrvGraphAddMemFreeNode(hipGraphNode_t* node, hipGraph_t graph, const hipGraphNode_t* dependencies,
                                     size_t count, hipDeviceptr_t ptr);
hipError_t hipDrvGraphMemcpyNodeGetParams(hipGraphNode_t node, HIP_MEMCPY3D* params);
hipError_t hipDrvGraphMemcpyNodeSetParams(hipGraphNode_t node, const HIP_MEMCPY3D* params);
hipError_t hipDrvGraphExecMemcpyNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node, const HIP_MEMCPY3D* params,
                                              hipCtx_t ctx);
hipError_t hipDrvGraphExecMemsetNodeSetParams(hipGraphExec_t exec, hipGraphNode_t node,
                                              const hipMemsetParams* params, hipCtx_t ctx);
hipError_t hipUserObjectCreate(hipUserObject_t* object, void* ptr, hipHostFn_t destroy, unsigned int count,
                               unsigned int flags);
hipError_t hipUserObjectRelease(hipUserObject_t object, unsigned int count);
hipError_t hipUserObjectRetain(hipUserObject_t object, unsigned int count);
hipError_t hipGraphRetainUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count,
                                    unsigned int flags);
hipError_t hipGraphReleaseUserObject(hipGraph_t graph, hipUserObject_t object, unsigned int count);

// ---- hiprtc (ROCm 6.x; a separate library in 7.x) ----------------------------------
hiprtcResult hiprtcGetBitcode(hiprtcProgram program, char* bitcode);
hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram program, size_t* size);
hiprtcResult hiprtcLinkCreate(unsigned int count, hiprtcJIT_option* options, void** values,
                              hiprtcLinkState* state);
hiprtcResult hiprtcLinkAddFile(hiprtcLinkState state, hiprtcJITInputType type, const char* path,
                               unsigned int count, hiprtcJIT_option* options, void** values);
hiprtcResult hiprtcLinkAddData(hiprtcLinkState state, hiprtcJITInputType type, void* image, size_t size,
                               const char* name, unsigned int count, hiprtcJIT_option* options, void** values);
hiprtcResult hiprtcLinkComplete(hiprtcLinkState state, void** binary, size_t* size);
hiprtcResult hiprtcLinkDestroy(hiprtcLinkState state);

}  // extern "C"
