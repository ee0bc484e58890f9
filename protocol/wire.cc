#include "protocol/wire.h"

namespace hipr::wire {
namespace {

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

}  // namespace

void EncodeHeader(const FrameHeader& h, uint8_t out[sizeof(FrameHeader)]) {
  Put32(out + 0, h.magic);
  Put16(out + 4, h.version);
  Put16(out + 6, h.op);
  Put32(out + 8, h.request_id);
  Put32(out + 12, h.payload_length);
}

FrameHeader DecodeHeader(const uint8_t in[sizeof(FrameHeader)]) {
  return FrameHeader{Get32(in), Get16(in + 4), Get16(in + 6), Get32(in + 8), Get32(in + 12)};
}

const char* OpName(uint16_t code) {
  switch (static_cast<Op>(code & ~kReplyBit)) {
    case Op::kDeviceSynchronize: return "DeviceSynchronize";
    case Op::kDeviceReset: return "DeviceReset";
    case Op::kMemGetInfo: return "MemGetInfo";
    case Op::kMalloc: return "Malloc";
    case Op::kFree: return "Free";
    case Op::kMemset: return "Memset";
    case Op::kHostRegister: return "HostRegister";
    case Op::kHostUnregister: return "HostUnregister";
    case Op::kIpcGetMemHandle: return "IpcGetMemHandle";
    case Op::kIpcOpenMemHandle: return "IpcOpenMemHandle";
    case Op::kIpcCloseMemHandle: return "IpcCloseMemHandle";
    case Op::kTextureCreate: return "TextureCreate";
    case Op::kTextureDestroy: return "TextureDestroy";
    case Op::kVmmReserve: return "VmmReserve";
    case Op::kVmmFree: return "VmmFree";
    case Op::kVmmCreate: return "VmmCreate";
    case Op::kVmmRelease: return "VmmRelease";
    case Op::kVmmMap: return "VmmMap";
    case Op::kVmmUnmap: return "VmmUnmap";
    case Op::kVmmSetAccess: return "VmmSetAccess";
    case Op::kVmmExport: return "VmmExport";
    case Op::kVmmImport: return "VmmImport";
    case Op::kCopyToDevice: return "CopyToDevice";
    case Op::kCopyFromDevice: return "CopyFromDevice";
    case Op::kCopyOnDevice: return "CopyOnDevice";
    case Op::kModuleLoad: return "ModuleLoad";
    case Op::kModuleUnload: return "ModuleUnload";
    case Op::kLaunchKernel: return "LaunchKernel";
    case Op::kStreamCreate: return "StreamCreate";
    case Op::kStreamDestroy: return "StreamDestroy";
    case Op::kStreamSynchronize: return "StreamSynchronize";
    case Op::kStreamQuery: return "StreamQuery";
    case Op::kStreamWaitEvent: return "StreamWaitEvent";
    case Op::kStreamHostCallback: return "StreamHostCallback";
    case Op::kHostCallbackDone: return "HostCallbackDone";
    case Op::kStreamWaitValue: return "StreamWaitValue";
    case Op::kStreamWriteValue: return "StreamWriteValue";
    case Op::kEventCreate: return "EventCreate";
    case Op::kEventDestroy: return "EventDestroy";
    case Op::kEventRecord: return "EventRecord";
    case Op::kEventSynchronize: return "EventSynchronize";
    case Op::kEventQuery: return "EventQuery";
    case Op::kEventElapsedTime: return "EventElapsedTime";
    case Op::kIpcGetEventHandle: return "IpcGetEventHandle";
    case Op::kIpcOpenEventHandle: return "IpcOpenEventHandle";
    case Op::kGraphCreate: return "GraphCreate";
    case Op::kGraphLaunch: return "GraphLaunch";
    case Op::kGraphDestroy: return "GraphDestroy";
    case Op::kApiCall: return "ApiCall";
    case Op::kHello: return "Hello";
    case Op::kGoodbye: return "Goodbye";
    case Op::kHeartbeat: return "Heartbeat";
    case Op::kData: return "Data";
    case Op::kFatal: return "Fatal";
    case Op::kOutput: return "Output";
    case Op::kHostCallbackReady: return "HostCallbackReady";
    case Op::kShmSetup: return "ShmSetup";
    case Op::kDataLz4: return "DataLz4";
    case Op::kAuth: return "Auth";
  }
  return nullptr;
}

}  // namespace hipr::wire
