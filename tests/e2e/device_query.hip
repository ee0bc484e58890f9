// Every hipDeviceAttribute_t and every hipDeviceProp_t field, through the
// stub, against a sim worker of one model (run_e2e.py scenario device_query
// runs it for each model and for each ABI major through HIPR_ABI_MAJOR):
//
//   device_query MODEL MAJOR
//
// Prints each attribute's answer and each field of both property layouts,
// and checks: an attribute is refused exactly when ROCm's runtime refuses it
// in every release (or the caller's major does not have it); the answers
// equal the matching hipDeviceProp_t field (table below); and the facts
// equal what AMD publishes for MODEL (this file's own table, not the sim's).
#include <map>
#include <string>

#include "common.h"

// The 6.x name of hipGetDeviceProperties (node hip_6.0; not in Debian's header).
extern "C" hipError_t hipGetDevicePropertiesR0600(void* prop, int device);

namespace {

// ---- What ROCm refuses, and what each major has ---------------------------

// Attributes clr answers in no release (clr hipDeviceGetAttribute's default:).
bool RefusedEverywhere(int a) {
  switch (a) {
    case 21: case 33: case 34: case 35: case 36: case 37: case 38: case 40: case 45: case 46: case 47: case 48:
    case 52: case 54: case 55: case 64: case 77: case 80: case 86: case 10000: case 10001: case 10003: case 10004:
      return true;
    default: return false;
  }
}

// The attribute numbers of `major`'s enum (5.x: 5.3+'s).
std::vector<int> AttributesOf(int major) {
  std::vector<int> all;
  for (int a = 0; a <= 89; ++a) all.push_back(a);
  if (major >= 6) all.insert(all.end(), {90, 91});
  for (int a = 10000; a <= 10017; ++a) all.push_back(a);
  if (major >= 7) all.insert(all.end(), {92, 10018, 10019, 10020});
  return all;
}

// Answered by hipr only where the worker reports a fact (all sim models do).
int Attribute(int a, hipError_t* err) {
  int v = -12345;
  if (a == hipDeviceAttributeHdpMemFlushCntl || a == hipDeviceAttributeHdpRegFlushCntl) {
    void* p = reinterpret_cast<void*>(1);
    *err = hipDeviceGetAttribute(reinterpret_cast<int*>(&p), static_cast<hipDeviceAttribute_t>(a), 0);
    CHECK(*err != hipSuccess || p == nullptr, "attribute %d: HDP register pointer %p mapped here", a, p);
    return 0;
  }
  *err = hipDeviceGetAttribute(&v, static_cast<hipDeviceAttribute_t>(a), 0);
  return v;
}

// ---- AMD's published figures per model ------------------------------------

struct Published {
  const char* model;
  const char* name;
  const char* arch;
  int cus, clock_khz, memory_clock_khz, bus_bits, l2, minor, chip_id, asic_revision, threads_per_cu, regs,
      wall_clock_khz, image_support, xccs, vgprs;
};

// rocminfo/HIP dumps and AMD's specifications (docs/operations.md cites them).
const Published kPublished[] = {
    {"mi250x", "AMD Instinct MI250X", "gfx90a:sramecc+:xnack-", 110, 1700000, 1600000, 4096, 8 << 20, 0, 0x740c, 1,
     2048, 131072, 25000, 1, 1, 512},
    {"mi210", "AMD Instinct MI210", "gfx90a:sramecc+:xnack-", 104, 1700000, 1600000, 4096, 8 << 20, 0, 0x740f, 1,
     2048, 131072, 25000, 1, 1, 512},
    {"mi100", "AMD Instinct MI100", "gfx908:sramecc+:xnack-", 120, 1502000, 1200000, 4096, 8 << 20, 0, 0x738c, 2,
     2560, 65536, 25000, 1, 1, 256},
    {"mi300x", "AMD Instinct MI300X", "gfx942:sramecc+:xnack-", 304, 2100000, 1300000, 8192, 4 << 20, 4, 0x74a1, 1,
     2048, 131072, 100000, 0, 8, 512},
};

}  // namespace

int main(int argc, char** argv) {
  CHECK(argc == 3, "usage: device_query MODEL MAJOR");
  const std::string model = argv[1];
  const int major = atoi(argv[2]);
  const Published* want = nullptr;
  for (const Published& p : kPublished)
    if (model == p.model) want = &p;
  CHECK(want != nullptr, "unknown model %s", model.c_str());

  // Every attribute of this major's enum: refused exactly where ROCm refuses.
  std::map<int, int> attr;
  int answered = 0;
  for (int a : AttributesOf(major)) {
    hipError_t err = hipSuccess;
    const int v = Attribute(a, &err);
    if (RefusedEverywhere(a)) {
      CHECK(err == hipErrorInvalidValue, "attribute %d: ROCm refuses it, hipr returned %s", a, e2e::ErrName(err));
      printf("attr %5d refused (as ROCm)\n", a);
      continue;
    }
    CHECK(err == hipSuccess, "attribute %d: ROCm answers it, hipr returned %s", a, e2e::ErrName(err));
    attr[a] = v;
    ++answered;
    printf("attr %5d = %d\n", a, v);
  }
  // Attributes this major does not have are refused.
  if (major < 6) {
    hipError_t err = hipSuccess;
    (void)Attribute(90, &err);
    CHECK(err == hipErrorInvalidValue, "a 5.x caller got attribute 90 (6.0's HostRegisterSupported)");
  }
  if (major < 7) {
    hipError_t err = hipSuccess;
    (void)Attribute(10020, &err);
    CHECK(err == hipErrorInvalidValue, "a %d.x caller got attribute 10020 (7.1's PciChipId)", major);
  }

  // Both layouts, every field printed; the table compares attributes with fields.
  hipDeviceProp_t p5;
  HIP_OK(hipGetDeviceProperties(&p5, 0));
  unsigned char raw6[1472];
  HIP_OK(hipGetDevicePropertiesR0600(raw6, 0));
  auto i6 = [&](size_t off) {
    int v;
    memcpy(&v, raw6 + off, sizeof v);
    return v;
  };
  auto z6 = [&](size_t off) {
    size_t v;
    memcpy(&v, raw6 + off, sizeof v);
    return v;
  };
  printf("prop name=%s gcnArchName=%s totalGlobalMem=%zu sharedMemPerBlock=%zu regsPerBlock=%d warpSize=%d "
         "maxThreadsPerBlock=%d maxThreadsDim=%d,%d,%d maxGridSize=%d,%d,%d clockRate=%d memoryClockRate=%d "
         "memoryBusWidth=%d totalConstMem=%zu major=%d minor=%d multiProcessorCount=%d l2CacheSize=%d "
         "maxThreadsPerMultiProcessor=%d computeMode=%d clockInstructionRate=%d concurrentKernels=%d "
         "pciDomainID=%d pciBusID=%d pciDeviceID=%d maxSharedMemoryPerMultiProcessor=%zu isMultiGpuBoard=%d "
         "canMapHostMemory=%d gcnArch=%d integrated=%d cooperativeLaunch=%d cooperativeMultiDeviceLaunch=%d "
         "maxTexture1DLinear=%d maxTexture1D=%d maxTexture2D=%d,%d maxTexture3D=%d,%d,%d memPitch=%zu "
         "textureAlignment=%zu texturePitchAlignment=%zu kernelExecTimeoutEnabled=%d ECCEnabled=%d tccDriver=%d "
         "isLargeBar=%d asicRevision=%d managedMemory=%d directManagedMemAccessFromHost=%d "
         "concurrentManagedAccess=%d pageableMemoryAccess=%d pageableMemoryAccessUsesHostPageTables=%d\n",
         p5.name, p5.gcnArchName, p5.totalGlobalMem, p5.sharedMemPerBlock, p5.regsPerBlock, p5.warpSize,
         p5.maxThreadsPerBlock, p5.maxThreadsDim[0], p5.maxThreadsDim[1], p5.maxThreadsDim[2], p5.maxGridSize[0],
         p5.maxGridSize[1], p5.maxGridSize[2], p5.clockRate, p5.memoryClockRate, p5.memoryBusWidth, p5.totalConstMem,
         p5.major, p5.minor, p5.multiProcessorCount, p5.l2CacheSize, p5.maxThreadsPerMultiProcessor, p5.computeMode,
         p5.clockInstructionRate, p5.concurrentKernels, p5.pciDomainID, p5.pciBusID, p5.pciDeviceID,
         p5.maxSharedMemoryPerMultiProcessor, p5.isMultiGpuBoard, p5.canMapHostMemory, p5.gcnArch, p5.integrated,
         p5.cooperativeLaunch, p5.cooperativeMultiDeviceLaunch, p5.maxTexture1DLinear, p5.maxTexture1D,
         p5.maxTexture2D[0], p5.maxTexture2D[1], p5.maxTexture3D[0], p5.maxTexture3D[1], p5.maxTexture3D[2],
         p5.memPitch, p5.textureAlignment, p5.texturePitchAlignment, p5.kernelExecTimeoutEnabled, p5.ECCEnabled,
         p5.tccDriver, p5.isLargeBar, p5.asicRevision, p5.managedMemory, p5.directManagedMemAccessFromHost,
         p5.concurrentManagedAccess, p5.pageableMemoryAccess, p5.pageableMemoryAccessUsesHostPageTables);
  printf("propR0600");
  for (size_t off = 256; off + 4 <= sizeof raw6; off += 4) printf(" %zu:%d", off, i6(off));
  printf("\n");

  // Attribute == field, where both exist (5.2 layout, and R0600 offsets of
  // the fields 6.x added; offsets as the public bindings of AMD's header assert).
  struct Row {
    int attr;
    long long field;
    const char* what;
  };
  const Row rows[] = {
      {hipDeviceAttributeEccEnabled, p5.ECCEnabled, "ECCEnabled"},
      {hipDeviceAttributeCanMapHostMemory, p5.canMapHostMemory, "canMapHostMemory"},
      {hipDeviceAttributeClockRate, p5.clockRate, "clockRate"},
      {hipDeviceAttributeComputeMode, p5.computeMode, "computeMode"},
      {hipDeviceAttributeConcurrentKernels, p5.concurrentKernels, "concurrentKernels"},
      {hipDeviceAttributeConcurrentManagedAccess, p5.concurrentManagedAccess, "concurrentManagedAccess"},
      {hipDeviceAttributeCooperativeLaunch, p5.cooperativeLaunch, "cooperativeLaunch"},
      {hipDeviceAttributeCooperativeMultiDeviceLaunch, p5.cooperativeMultiDeviceLaunch, "cooperativeMultiDeviceLaunch"},
      {hipDeviceAttributeDirectManagedMemAccessFromHost, p5.directManagedMemAccessFromHost, "directManagedMemAccessFromHost"},
      {hipDeviceAttributeIntegrated, p5.integrated, "integrated"},
      {hipDeviceAttributeIsMultiGpuBoard, p5.isMultiGpuBoard, "isMultiGpuBoard"},
      {hipDeviceAttributeKernelExecTimeout, p5.kernelExecTimeoutEnabled, "kernelExecTimeoutEnabled"},
      {hipDeviceAttributeL2CacheSize, p5.l2CacheSize, "l2CacheSize"},
      {hipDeviceAttributeComputeCapabilityMajor, p5.major, "major"},
      {hipDeviceAttributeManagedMemory, p5.managedMemory, "managedMemory"},
      {hipDeviceAttributeMaxBlockDimX, p5.maxThreadsDim[0], "maxThreadsDim[0]"},
      {hipDeviceAttributeMaxBlockDimY, p5.maxThreadsDim[1], "maxThreadsDim[1]"},
      {hipDeviceAttributeMaxBlockDimZ, p5.maxThreadsDim[2], "maxThreadsDim[2]"},
      {hipDeviceAttributeMaxGridDimX, p5.maxGridSize[0], "maxGridSize[0]"},
      {hipDeviceAttributeMaxGridDimY, p5.maxGridSize[1], "maxGridSize[1]"},
      {hipDeviceAttributeMaxGridDimZ, p5.maxGridSize[2], "maxGridSize[2]"},
      {hipDeviceAttributeMaxTexture1DWidth, p5.maxTexture1D, "maxTexture1D"},
      {hipDeviceAttributeMaxTexture1DLinear, p5.maxTexture1DLinear, "maxTexture1DLinear"},
      {hipDeviceAttributeMaxTexture2DWidth, p5.maxTexture2D[0], "maxTexture2D[0]"},
      {hipDeviceAttributeMaxTexture2DHeight, p5.maxTexture2D[1], "maxTexture2D[1]"},
      {hipDeviceAttributeMaxTexture3DWidth, p5.maxTexture3D[0], "maxTexture3D[0]"},
      {hipDeviceAttributeMaxTexture3DHeight, p5.maxTexture3D[1], "maxTexture3D[1]"},
      {hipDeviceAttributeMaxTexture3DDepth, p5.maxTexture3D[2], "maxTexture3D[2]"},
      {hipDeviceAttributeMaxThreadsPerBlock, p5.maxThreadsPerBlock, "maxThreadsPerBlock"},
      {hipDeviceAttributeMaxThreadsPerMultiProcessor, p5.maxThreadsPerMultiProcessor, "maxThreadsPerMultiProcessor"},
      {hipDeviceAttributeMaxPitch, static_cast<long long>(p5.memPitch), "memPitch"},
      {hipDeviceAttributeMemoryBusWidth, p5.memoryBusWidth, "memoryBusWidth"},
      {hipDeviceAttributeMemoryClockRate, p5.memoryClockRate, "memoryClockRate"},
      {hipDeviceAttributeComputeCapabilityMinor, p5.minor, "minor"},
      {hipDeviceAttributeMultiprocessorCount, p5.multiProcessorCount, "multiProcessorCount"},
      {hipDeviceAttributePageableMemoryAccess, p5.pageableMemoryAccess, "pageableMemoryAccess"},
      {hipDeviceAttributePageableMemoryAccessUsesHostPageTables, p5.pageableMemoryAccessUsesHostPageTables,
       "pageableMemoryAccessUsesHostPageTables"},
      {hipDeviceAttributePciBusId, p5.pciBusID, "pciBusID"},
      {hipDeviceAttributePciDeviceId, p5.pciDeviceID, "pciDeviceID"},
      {hipDeviceAttributePciDomainID, p5.pciDomainID, "pciDomainID"},
      {hipDeviceAttributeMaxRegistersPerBlock, p5.regsPerBlock, "regsPerBlock"},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, static_cast<long long>(p5.sharedMemPerBlock), "sharedMemPerBlock"},
      {hipDeviceAttributeTextureAlignment, static_cast<long long>(p5.textureAlignment), "textureAlignment"},
      {hipDeviceAttributeTexturePitchAlignment, static_cast<long long>(p5.texturePitchAlignment), "texturePitchAlignment"},
      {hipDeviceAttributeTotalConstantMemory, static_cast<long long>(p5.totalConstMem), "totalConstMem"},
      {hipDeviceAttributeWarpSize, p5.warpSize, "warpSize"},
      {hipDeviceAttributeMaxSharedMemoryPerMultiprocessor, static_cast<long long>(p5.maxSharedMemoryPerMultiProcessor),
       "maxSharedMemoryPerMultiProcessor"},
      {hipDeviceAttributeCooperativeMultiDeviceUnmatchedFunc, p5.cooperativeMultiDeviceUnmatchedFunc, "unmatchedFunc"},
      {hipDeviceAttributeCooperativeMultiDeviceUnmatchedGridDim, p5.cooperativeMultiDeviceUnmatchedGridDim, "unmatchedGridDim"},
      {hipDeviceAttributeCooperativeMultiDeviceUnmatchedBlockDim, p5.cooperativeMultiDeviceUnmatchedBlockDim,
       "unmatchedBlockDim"},
      {hipDeviceAttributeCooperativeMultiDeviceUnmatchedSharedMem, p5.cooperativeMultiDeviceUnmatchedSharedMem,
       "unmatchedSharedMem"},
      {hipDeviceAttributeIsLargeBar, p5.isLargeBar, "isLargeBar"},
      {hipDeviceAttributeAsicRevision, p5.asicRevision, "asicRevision"},
      // Fields 6.x added (R0600 offsets).
      {hipDeviceAttributeAsyncEngineCount, i6(600), "asyncEngineCount"},
      {hipDeviceAttributeDeviceOverlap, i6(384), "deviceOverlap"},
      {hipDeviceAttributeMaxTexture1DMipmap, i6(412), "maxTexture1DMipmap"},
      {hipDeviceAttributeMaxSurface1D, i6(512), "maxSurface1D"},
      {hipDeviceAttributeMaxTextureCubemap, i6(480), "maxTextureCubemap"},
      {hipDeviceAttributeSurfaceAlignment, static_cast<long long>(z6(568)), "surfaceAlignment"},
      {hipDeviceAttributePersistingL2CacheMaxSize, i6(620), "persistingL2CacheMaxSize"},
      {hipDeviceAttributeStreamPrioritiesSupported, i6(628), "streamPrioritiesSupported"},
      {hipDeviceAttributeGlobalL1CacheSupported, i6(632), "globalL1CacheSupported"},
      {hipDeviceAttributeLocalL1CacheSupported, i6(636), "localL1CacheSupported"},
      {hipDeviceAttributeSharedMemPerMultiprocessor, static_cast<long long>(z6(640)), "sharedMemPerMultiprocessor"},
      {hipDeviceAttributeMaxRegistersPerMultiprocessor, i6(648), "regsPerMultiprocessor"},
      {hipDeviceAttributeMultiGpuBoardGroupID, i6(660), "multiGpuBoardGroupID"},
      {hipDeviceAttributeHostNativeAtomicSupported, i6(664), "hostNativeAtomicSupported"},
      {hipDeviceAttributeComputePreemptionSupported, i6(680), "computePreemptionSupported"},
      {hipDeviceAttributeCanUseHostPointerForRegisteredMem, i6(684), "canUseHostPointerForRegisteredMem"},
      {hipDeviceAttributeSharedMemPerBlockOptin, static_cast<long long>(z6(696)), "sharedMemPerBlockOptin"},
      {hipDeviceAttributeMaxBlocksPerMultiProcessor, i6(712), "maxBlocksPerMultiProcessor"},
      {hipDeviceAttributeAccessPolicyMaxWindowSize, i6(716), "accessPolicyMaxWindowSize"},
      {hipDeviceAttributeReservedSharedMemPerBlock, static_cast<long long>(z6(720)), "reservedSharedMemPerBlock"},
      {hipDeviceAttributeMemoryPoolsSupported, i6(744), "memoryPoolsSupported"},
      {hipDeviceAttributeLuidDeviceNodeMask, i6(280), "luidDeviceNodeMask"},
  };
  for (const Row& r : rows) {
    CHECK(attr.count(r.attr) == 1, "attribute %d (%s) was not answered", r.attr, r.what);
    CHECK(attr[r.attr] == r.field, "attribute %d is %d, hipDeviceProp_t::%s is %lld", r.attr, attr[r.attr], r.what,
          r.field);
  }
  if (major >= 6) {
    CHECK(attr[91] == static_cast<int>(i6(760)), "MemoryPoolSupportedHandleTypes %d, field %d", attr[91], i6(760));
    CHECK(attr[90] == i6(728), "HostRegisterSupported %d, field %d", attr[90], i6(728));
  }
  // The 6.x layout's shared fields agree with the 5.x one.
  CHECK(z6(288) == p5.totalGlobalMem, "R0600 totalGlobalMem");
  CHECK(strcmp(reinterpret_cast<const char*>(raw6), p5.name) == 0, "R0600 name");
  CHECK(strcmp(reinterpret_cast<const char*>(raw6 + 1160), p5.gcnArchName) == 0, "R0600 gcnArchName");
  CHECK(i6(388) == p5.multiProcessorCount && i6(1464) == p5.isLargeBar && i6(1468) == p5.asicRevision,
        "R0600 counts and flags");

  // The published figures.
  CHECK(strcmp(p5.name, want->name) == 0, "name '%s', AMD says '%s'", p5.name, want->name);
  CHECK(strcmp(p5.gcnArchName, want->arch) == 0, "gcnArchName '%s'", p5.gcnArchName);
  const struct {
    int attr;
    int value;
    const char* what;
  } facts[] = {
      {hipDeviceAttributeMultiprocessorCount, want->cus, "compute units"},
      {hipDeviceAttributePhysicalMultiProcessorCount, want->cus, "physical compute units"},
      {hipDeviceAttributeClockRate, want->clock_khz, "engine clock"},
      {hipDeviceAttributeMemoryClockRate, want->memory_clock_khz, "memory clock"},
      {hipDeviceAttributeMemoryBusWidth, want->bus_bits, "memory bus width"},
      {hipDeviceAttributeL2CacheSize, want->l2, "L2"},
      {hipDeviceAttributeComputeCapabilityMajor, 9, "major"},
      {hipDeviceAttributeComputeCapabilityMinor, want->minor, "minor"},
      {hipDeviceAttributeAsicRevision, want->asic_revision, "ASIC revision"},
      {hipDeviceAttributeMaxThreadsPerMultiProcessor, want->threads_per_cu, "threads per CU"},
      {hipDeviceAttributeMaxRegistersPerBlock, want->regs, "registers"},
      {hipDeviceAttributeImageSupport, want->image_support, "image support"},
      {10017, want->wall_clock_khz, "wall clock"},
      {hipDeviceAttributeWarpSize, 64, "wavefront"},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, 65536, "LDS"},
      {hipDeviceAttributeMaxBlocksPerMultiProcessor, want->threads_per_cu / 64, "blocks per CU (ROCm 7.1+)"},
      {hipDeviceAttributeTotalGlobalMem, 2147483647, "total memory, clamped as ROCm 6+"},
      {hipDeviceAttributeEccEnabled, 0, "ECC (clr reports 0)"},
      {hipDeviceAttributeUnifiedAddressing, 1, "unified addressing"},
      {hipDeviceAttributeCanUseStreamWaitValue, 1, "stream wait value"},
  };
  for (const auto& f : facts)
    CHECK(attr.count(f.attr) == 1 && attr[f.attr] == f.value, "%s: attribute %d is %d, published %d", f.what,
          f.attr, attr.count(f.attr) ? attr[f.attr] : -1, f.value);
  if (major >= 7) {
    CHECK(attr[10018] == want->xccs, "XCCs %d, published %d", attr[10018], want->xccs);
    CHECK(attr[10019] == want->vgprs, "VGPRs per thread %d, published %d", attr[10019], want->vgprs);
    CHECK(attr[10020] == want->chip_id, "PCI chip id %#x, published %#x", attr[10020], want->chip_id);
  }
  printf("device_query: %s as a %d.x caller: %d attributes answered, the rest refused as ROCm refuses them\n",
         model.c_str(), major, answered);
  return e2e::Finish("device_query");
}
