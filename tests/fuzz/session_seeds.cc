// session_seeds OUT_DIR: writes the seed corpus of session_fuzz: what a
// client sends after its hello, one family of ops per file (memory and
// copies, streams and events, host callbacks, graphs, modules and launches,
// virtual memory, IPC, textures, the generated calls, bulk lz4), each valid
// against the sim as the target sets it up (allocations at kWindowBase), plus
// damaged streams and hellos of the client's own. Exits 1 if it cannot write.
//
// session_seeds OUT_DIR --known-issues: writes instead one input per known
// issue (known_issues.txt), which hang or crash the target.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api_calls.h"  // Generated (worker_service/gen): ids and argument lists of kApiCall.
#include "protocol/code_object/code_object.h"
#include "protocol/code_object/code_object_test_util.h"
#include "protocol/messages.h"
#include "protocol/wire.h"
#include "tests/fuzz/frame_script.h"
#include "tests/fuzz/session_fuzz.h"

namespace {

using namespace hipr;
using fuzz::FrameScript;
using fuzz::kWindowBase;
using wire::Op;

// Byte 0 of an input (session_fuzz.cc): even puts the target's hello first.
constexpr uint8_t kAfterHello = 0;
constexpr uint8_t kOwnHello = 1;
constexpr uint64_t kMiB = uint64_t{1} << 20;
// Where the sim puts the first allocations of a session (first fit from the
// window's base, rounded to 4 KiB).
constexpr uint64_t kA = kWindowBase;
constexpr uint64_t kB = kWindowBase + kMiB;

bool ok = true;
std::filesystem::path dir;

void Write(const std::string& name, uint8_t first, FrameScript& s) {
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.put(static_cast<char>(first));
  out.write(reinterpret_cast<const char*>(s.bytes().data()), static_cast<std::streamsize>(s.bytes().size()));
  ok = ok && static_cast<bool>(out);
}

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 13);
  return b;
}

msg::Region Row(uint64_t address, uint64_t bytes) { return {address, 0, bytes, 1}; }

FrameScript& Goodbye(FrameScript& s, uint32_t id) { return s.Payload(static_cast<uint16_t>(Op::kGoodbye), id, {}); }

// Two allocations: kA on device 0, kB on device 1.
FrameScript& Allocate(FrameScript& s) {
  return s.Add(Op::kMalloc, 2, msg::MallocRequest{0, kMiB, 0}).Add(Op::kMalloc, 3, msg::MallocRequest{1, kMiB, 0});
}

void Memory() {
  FrameScript s;
  Allocate(s)
      .Add(Op::kCopyToDevice, 4, msg::CopyToDeviceRequest{0, 0, Row(kA, 100000), true, {}}, Bytes(100000, 1))
      .Add(Op::kCopyToDevice, 5, msg::CopyToDeviceRequest{0, 0, {kA + 200000, 256, 128, 16}, false, {}}, Bytes(2048, 2))
      .Add(Op::kMemset, 6, msg::MemsetRequest{0, 0, Row(kA + 65536, 1000), 0xab, 1})
      .Add(Op::kMemset, 7, msg::MemsetRequest{0, 0, {kA + 65536, 256, 64, 4}, 0x1234, 2})
      .Add(Op::kMemset, 8, msg::MemsetRequest{0, 0, Row(kA + 4096, 64), 0xdeadbeef, 4})
      .Add(Op::kCopyOnDevice, 9, msg::CopyOnDeviceRequest{0, 0, Row(kB, 4096), Row(kA, 4096), true})
      .Add(Op::kCopyOnDevice, 10, msg::CopyOnDeviceRequest{1, 0, {kB, 512, 100, 8}, {kA, 256, 100, 8}, false})
      .Add(Op::kCopyFromDevice, 11, msg::CopyFromDeviceRequest{0, 0, Row(kA, 70000), {}})
      .Add(Op::kCopyFromDevice, 12, msg::CopyFromDeviceRequest{1, 0, {kB, 512, 100, 8}, {}})
      .Add(Op::kMemGetInfo, 13, msg::DeviceRequest{1})
      .Add(Op::kFree, 14, msg::FreeRequest{kB})
      .Add(Op::kDeviceSynchronize, 15, msg::DeviceRequest{0});
  Goodbye(s, 16);
  Write("memory", kAfterHello, s);
  // Managed memory's read-back: of a managed allocation (watched on the sim),
  // of plain memory (sent whole), and a region that is not one row.
  FrameScript managed;
  managed.Add(Op::kMalloc, 2, msg::MallocRequest{0, kMiB, msg::kMallocManaged})
      .Add(Op::kMemset, 3, msg::MemsetRequest{0, 0, Row(kA + 8192, 64), 7, 1})
      .Add(Op::kCopyChangedFromDevice, 4, msg::CopyChangedRequest{0, 0, Row(kA, kMiB)})
      .Add(Op::kMalloc, 5, msg::MallocRequest{0, kMiB, 0})
      .Add(Op::kCopyChangedFromDevice, 6, msg::CopyChangedRequest{0, 0, Row(kA + kMiB, 4096)})
      .Add(Op::kCopyChangedFromDevice, 7, msg::CopyChangedRequest{0, 0, {kA, 512, 100, 8}});
  Goodbye(managed, 8);
  Write("managed_read_back", kAfterHello, managed);
  // hipr-smi's question, and one with a flag no worker knows.
  FrameScript status;
  Allocate(status)
      .Add(Op::kWorkerStatus, 4, msg::WorkerStatusRequest{})
      .Add(Op::kWorkerStatus, 5, msg::WorkerStatusRequest{0x80});
  Goodbye(status, 6);
  Write("worker_status", kAfterHello, status);
  // A reset of device 1 with work of device 1 only (a reset while another
  // device's stream still writes its memory is a known crash: KnownIssues).
  FrameScript reset;
  Allocate(reset)
      .Add(Op::kMemset, 4, msg::MemsetRequest{1, 0, Row(kB, 4096), 1, 1})
      .Add(Op::kStreamCreate, 5, msg::StreamCreateRequest{1, 7, 0, 0, {}})
      .Add(Op::kEventCreate, 6, msg::EventCreateRequest{1, 9, 0})
      .Add(Op::kDeviceReset, 7, msg::DeviceRequest{1})
      .Add(Op::kMemGetInfo, 8, msg::DeviceRequest{1})
      .Add(Op::kStreamQuery, 9, msg::StreamRequest{7});
  Goodbye(reset, 10);
  Write("device_reset", kAfterHello, reset);
  // A lease (granted past the two allocations, at kB + kMiB), allocations
  // placed in it and used, one outside it, a reset that returns it.
  FrameScript lease;
  const uint64_t l = kB + kMiB;
  Allocate(lease)
      .Add(Op::kMemLease, 4, msg::MemLeaseRequest{0, 4096, 4 * kMiB})
      .Add(Op::kMemLeasePlace, 5, msg::MemLeasePlaceRequest{0, l, 5000})
      .Add(Op::kMemLeasePlace, 6, msg::MemLeasePlaceRequest{0, l + 8192, 4096})
      .Add(Op::kMemLeasePlace, 7, msg::MemLeasePlaceRequest{1, l + 12288, 4096})
      .Add(Op::kMemset, 8, msg::MemsetRequest{0, 0, Row(l, 12288), 0x5a, 1})
      .Add(Op::kFree, 9, msg::FreeRequest{l + 8192})
      .Add(Op::kMemLeaseReturn, 10, msg::DeviceRequest{0})
      .Add(Op::kMemLeasePlace, 11, msg::MemLeasePlaceRequest{0, l + 16384, 4096})
      .Add(Op::kMemLease, 12, msg::MemLeaseRequest{1, 4096, 64 * kMiB})
      .Add(Op::kDeviceReset, 13, msg::DeviceRequest{1})
      .Add(Op::kMemGetInfo, 14, msg::DeviceRequest{1});
  Goodbye(lease, 15);
  Write("memory_lease", kAfterHello, lease);
  // Peer copies in a session that offers none (no peer address: the fuzz
  // harness's): refused, a port that is not there, nothing sent anywhere.
  FrameScript peer;
  Allocate(peer)
      .Add(Op::kPeerListen, 4, msg::PeerListenRequest{0})
      .Add(Op::kPeerAccept, 5, msg::PeerAcceptRequest{1, 0, Row(kB, 4096), std::vector<uint8_t>(32, 7)})
      .Add(Op::kPeerSend, 6, msg::PeerSendRequest{0, 0, Row(kB, 4096), "127.0.0.1:1", std::vector<uint8_t>(32, 7)})
      .Add(Op::kDeviceSynchronize, 7, msg::DeviceRequest{0});
  Goodbye(peer, 8);
  Write("peer_copy", kAfterHello, peer);
}

void StreamsAndEvents() {
  FrameScript s;
  Allocate(s)
      .Add(Op::kStreamCreate, 4, msg::StreamCreateRequest{0, 7, 0, 0, {}})
      .Add(Op::kStreamCreate, 5, msg::StreamCreateRequest{1, 8, 1, -1, {0xffu}})
      .Add(Op::kEventCreate, 6, msg::EventCreateRequest{0, 9, 0})
      .Add(Op::kEventCreate, 7, msg::EventCreateRequest{0, 10, 0})
      .Add(Op::kEventRecord, 8, msg::EventRecordRequest{9, 7})
      .Add(Op::kMemset, 9, msg::MemsetRequest{0, 7, Row(kA, 4096), 1, 1})
      .Add(Op::kEventRecord, 10, msg::EventRecordRequest{10, 7})
      .Add(Op::kStreamWaitEvent, 11, msg::StreamWaitEventRequest{8, 10, 0})
      .Add(Op::kStreamWriteValue, 12, msg::StreamWriteValueRequest{0, 7, kA + 64, 5, 4})
      .Add(Op::kStreamWaitValue, 13, msg::StreamWaitValueRequest{0, 8, kA + 64, 5, ~uint64_t{0}, 0, 4})
      .Add(Op::kStreamWriteValue, 14, msg::StreamWriteValueRequest{0, 7, kA + 128, 1ull << 40, 8})
      .Add(Op::kStreamQuery, 15, msg::StreamRequest{7})
      .Add(Op::kEventQuery, 16, msg::EventRequest{10})
      .Add(Op::kEventSynchronize, 17, msg::EventRequest{10})
      .Add(Op::kEventElapsedTime, 18, msg::EventElapsedRequest{9, 10})
      .Add(Op::kStreamSynchronize, 19, msg::StreamRequest{8})
      .Add(Op::kIpcGetEventHandle, 20, msg::EventRequest{9})
      .Add(Op::kStreamDestroy, 21, msg::StreamRequest{7})
      .Add(Op::kEventDestroy, 22, msg::EventRequest{9});
  Goodbye(s, 23);
  Write("streams_events", kAfterHello, s);
  // A value wait nobody satisfies: the session still ends when the client does.
  FrameScript held;
  Allocate(held)
      .Add(Op::kStreamCreate, 4, msg::StreamCreateRequest{0, 7, 0, 0, {}})
      .Add(Op::kStreamWaitValue, 5, msg::StreamWaitValueRequest{0, 7, kA, 1, 1, 0, 4})
      .Add(Op::kMemset, 6, msg::MemsetRequest{0, 7, Row(kA, 4096), 1, 1})
      .Add(Op::kStreamSynchronize, 7, msg::StreamRequest{7});
  Write("stream_wait_value_held", kAfterHello, held);
}

void HostCallbacks() {
  FrameScript s;
  Allocate(s)
      .Add(Op::kStreamCreate, 4, msg::StreamCreateRequest{0, 7, 0, 0, {}})
      .Add(Op::kStreamHostCallback, 5, msg::StreamHostCallbackRequest{0, 7, 100})
      .Add(Op::kMemset, 6, msg::MemsetRequest{0, 7, Row(kA, 4096), 1, 1})
      .Add(Op::kStreamHostCallback, 7, msg::StreamHostCallbackRequest{0, 0, 101})
      .Add(Op::kStreamSynchronize, 8, msg::StreamRequest{7})
      .Add(Op::kHostCallbackDone, 9, msg::HostCallbackDone{100})
      .Add(Op::kHostCallbackDone, 10, msg::HostCallbackDone{101})
      .Add(Op::kHostCallbackDone, 11, msg::HostCallbackDone{555});
  Goodbye(s, 12);
  Write("host_callbacks", kAfterHello, s);
  // A callback never answered: the client leaves with its stream held.
  FrameScript held;
  Allocate(held)
      .Add(Op::kStreamHostCallback, 4, msg::StreamHostCallbackRequest{0, 0, 100})
      .Add(Op::kCopyFromDevice, 5, msg::CopyFromDeviceRequest{0, 0, Row(kA, 4096), {}});
  Write("host_callback_held", kAfterHello, held);
}

std::vector<uint8_t> Body(const auto& m) {
  codec::BodyWriter w;
  w.Encode(m);
  return std::vector<uint8_t>(w.data(), w.data() + w.size());
}

void Graphs() {
  msg::GraphCreateRequest graph;
  graph.graph = 5;
  // With its edges: the copy after the memset; the event record, the
  // value write and the host node each a branch of their own.
  graph.has_deps = true;
  graph.nodes = {
      {static_cast<uint16_t>(Op::kMemset), Body(msg::MemsetRequest{0, 0, Row(kA, 4096), 7, 1}), {}},
      {static_cast<uint16_t>(Op::kCopyOnDevice),
       Body(msg::CopyOnDeviceRequest{0, 0, Row(kB, 4096), Row(kA, 4096), false}), {0}},
      {static_cast<uint16_t>(Op::kEventRecord), Body(msg::EventRecordRequest{9, 0}), {}},
      {static_cast<uint16_t>(Op::kStreamWaitEvent), Body(msg::StreamWaitEventRequest{0, 9, 0}), {2}},
      {static_cast<uint16_t>(Op::kStreamWriteValue), Body(msg::StreamWriteValueRequest{0, 0, kA + 8, 3, 4}), {1}},
      {static_cast<uint16_t>(Op::kStreamWaitValue),
       Body(msg::StreamWaitValueRequest{0, 0, kA + 8, 3, ~uint64_t{0}, 0, 4}), {3, 4}},
      {static_cast<uint16_t>(Op::kStreamHostCallback), {}, {}},
  };
  msg::GraphCreateRequest more;
  more.graph = 5;
  more.append = true;
  more.has_deps = true;
  more.nodes = {{static_cast<uint16_t>(Op::kMemset), Body(msg::MemsetRequest{0, 0, Row(kB, 64), 1, 1}), {5, 6}}};
  FrameScript s;
  Allocate(s)
      .Add(Op::kEventCreate, 4, msg::EventCreateRequest{0, 9, 0})
      .Add(Op::kStreamCreate, 5, msg::StreamCreateRequest{0, 7, 0, 0, {}})
      .Add(Op::kGraphCreate, 6, graph)
      .Add(Op::kGraphCreate, 7, more)
      .Add(Op::kGraphLaunch, 8, msg::GraphLaunchRequest{5, 0, 7, {200}})
      .Add(Op::kHostCallbackDone, 9, msg::HostCallbackDone{200})
      .Add(Op::kStreamSynchronize, 10, msg::StreamRequest{7})
      .Add(Op::kGraphLaunch, 11, msg::GraphLaunchRequest{5, 0, 0, {201}})
      .Add(Op::kGraphDestroy, 12, msg::GraphRequest{5});
  Goodbye(s, 13);
  Write("graphs", kAfterHello, s);
}

void Modules() {
  namespace t = co::testing;
  const t::Blob code = t::DefaultCodeObject(t::MetadataV4());  // Kernels _Z5scalePffi and _Z4noopv.
  const co::Sha256Digest digest = co::Sha256(code);
  const std::vector<uint8_t> sha(digest.begin(), digest.end());
  const msg::LaunchRequest noop{0, 0, 3, 12, "_Z4noopv", {1, 1, 1}, {1, 1, 1}, 0, 0, {}, 0, 0, {}};
  FrameScript s;
  Allocate(s)
      .Add(Op::kModuleLoad, 4, msg::ModuleLoadRequest{0, 3, sha, 0, msg::Compression::kNone, 0, "lazy.co"})
      .Add(Op::kModuleLoad, 5,
           msg::ModuleLoadRequest{0, 3, sha, code.size(), msg::Compression::kNone, code.size(), "module.co"}, code)
      .Add(Op::kModuleLoad, 6, msg::ModuleLoadRequest{1, 4, sha, 0, msg::Compression::kNone, 0, "cached.co"})
      .Add(Op::kLaunchKernel, 7,
           msg::LaunchRequest{0, 0, 3, 11, "_Z5scalePffi", {2, 1, 1}, {64, 1, 1}, 0, 0, Bytes(20, 0), 0, 0, {}})
      .Add(Op::kLaunchKernel, 8, msg::LaunchRequest{0, 0, 3, 11, "", {2, 1, 1}, {64, 1, 1}, 0, 0, {}, 0, 0, {}})
      .Add(Op::kDeviceSynchronize, 9, msg::DeviceRequest{0})
      .Add(Op::kGraphCreate, 10,
           msg::GraphCreateRequest{6, 0, {{static_cast<uint16_t>(Op::kLaunchKernel), Body(noop), {}}}, false, false})
      .Add(Op::kGraphLaunch, 11, msg::GraphLaunchRequest{6, 0, 0, {}})
      .Add(Op::kModuleUnload, 12, msg::ModuleUnloadRequest{3});
  Goodbye(s, 13);
  Write("modules", kAfterHello, s);
  // Bytes that do not hash to their name; a module that is not a code object.
  std::vector<uint8_t> junk = Bytes(3000, 4);
  const co::Sha256Digest junk_digest = co::Sha256(junk);
  FrameScript bad;
  bad.Add(Op::kModuleLoad, 4,
          msg::ModuleLoadRequest{0, 3, sha, junk.size(), msg::Compression::kNone, junk.size(), "wrong.co"}, junk)
      .Add(Op::kModuleLoad, 5,
           msg::ModuleLoadRequest{0, 3, std::vector<uint8_t>(junk_digest.begin(), junk_digest.end()), junk.size(),
                                  msg::Compression::kNone, junk.size(), "junk.co"},
           junk);
  Write("modules_bad", kAfterHello, bad);
}

void VirtualMemory() {
  constexpr uint64_t kGranule = 4096;
  FrameScript s;
  // The first reservation takes the window's base.
  s.Add(Op::kVmmReserve, 2, msg::VmmReserveRequest{64 * kGranule, 0, 0})
      .Add(Op::kVmmCreate, 3, msg::VmmCreateRequest{0, 40, 16 * kGranule})
      .Add(Op::kVmmCreate, 4, msg::VmmCreateRequest{1, 41, 16 * kGranule})
      .Add(Op::kVmmMap, 5, msg::VmmMapRequest{kA, 16 * kGranule, 0, 40})
      .Add(Op::kVmmMap, 6, msg::VmmMapRequest{kA + 16 * kGranule, 16 * kGranule, 0, 41})
      .Add(Op::kVmmSetAccess, 7, msg::VmmSetAccessRequest{kA, 32 * kGranule, {{0, 3}, {1, 3}}})
      .Add(Op::kMemset, 8, msg::MemsetRequest{0, 0, Row(kA + 100, 70000), 9, 1})
      .Add(Op::kVmmExport, 9, msg::VmmHandleRequest{40})
      .Add(Op::kVmmRelease, 10, msg::VmmHandleRequest{41})
      .Add(Op::kVmmUnmap, 11, msg::VmmRangeRequest{kA, 32 * kGranule})
      .Add(Op::kVmmRelease, 12, msg::VmmHandleRequest{40})
      .Add(Op::kVmmFree, 13, msg::VmmRangeRequest{kA, 64 * kGranule})
      .Add(Op::kVmmImport, 14, msg::VmmImportRequest{0, 42, std::vector<uint8_t>(64, 0)});
  Goodbye(s, 15);
  Write("vmm", kAfterHello, s);
}

void Ipc() {
  FrameScript s;
  Allocate(s)
      .Add(Op::kIpcGetMemHandle, 4, msg::IpcGetMemHandleRequest{kA + 100})
      .Add(Op::kIpcOpenMemHandle, 5, msg::IpcOpenMemHandleRequest{0, std::vector<uint8_t>(64, 0), 0})
      .Add(Op::kIpcOpenMemHandle, 6, msg::IpcOpenMemHandleRequest{0, std::vector<uint8_t>(63, 0), 0})
      .Add(Op::kIpcCloseMemHandle, 7, msg::IpcCloseMemHandleRequest{kA})
      .Add(Op::kEventCreate, 8, msg::EventCreateRequest{0, 9, 2 | 1})  // hipEventInterprocess | DisableTiming.
      .Add(Op::kIpcGetEventHandle, 9, msg::EventRequest{9})
      .Add(Op::kIpcOpenEventHandle, 10, msg::IpcOpenEventHandleRequest{0, 12, std::vector<uint8_t>(64, 0)});
  Goodbye(s, 11);
  Write("ipc", kAfterHello, s);
}

void Textures() {
  msg::TextureCreateRequest linear;
  linear.memory = Row(kA, 4096);
  linear.channel_bits = {32, 0, 0, 0};
  linear.channel_kind = 2;  // hipChannelFormatKindFloat.
  msg::TextureCreateRequest pitched = linear;
  pitched.shape = msg::kTexturePitch2D;
  pitched.memory = {kA, 1024, 256, 64};
  pitched.address_mode = {1, 1, 1};
  pitched.filter_mode = 1;
  pitched.normalized_coords = 1;
  pitched.border_color = {1.0f, 0.5f, 0.25f, 0.0f};
  FrameScript s;
  Allocate(s)
      .Add(Op::kTextureCreate, 4, linear)
      .Add(Op::kTextureCreate, 5, pitched)
      .Add(Op::kTextureDestroy, 6, msg::TextureDestroyRequest{1})
      .Add(Op::kTextureDestroy, 7, msg::TextureDestroyRequest{12345});
  Goodbye(s, 8);
  Write("textures", kAfterHello, s);
}

template <class In>
void Call(FrameScript& s, uint32_t id, uint32_t fn, const In& in, int32_t device = 0) {
  s.Add(Op::kApiCall, id, msg::ApiCallRequest<In>{fn, device, true, in});
}

void ApiCalls() {
  FrameScript s;
  uint32_t id = 2;
  Call(s, id++, api::kCtxGetSharedMemConfig, api::CtxGetSharedMemConfigIn{});
  Call(s, id++, api::kCtxSetSharedMemConfig, api::CtxSetSharedMemConfigIn{1});
  Call(s, id++, api::kDeviceGetDefaultMemPool, api::DeviceGetDefaultMemPoolIn{1});
  Call(s, id++, api::kDeviceGetLimit, api::DeviceGetLimitIn{2});
  Call(s, id++, api::kDeviceSetLimit, api::DeviceSetLimitIn{0, 4096});
  Call(s, id++, api::kDeviceGetMemPool, api::DeviceGetMemPoolIn{0});
  Call(s, id++, api::kDeviceGetSharedMemConfig, api::DeviceGetSharedMemConfigIn{});
  Call(s, id++, api::kDeviceSetSharedMemConfig, api::DeviceSetSharedMemConfigIn{2});
  Call(s, id++, api::kDeviceGraphMemTrim, api::DeviceGraphMemTrimIn{0});
  Call(s, id++, api::kExtGetLinkTypeAndHopCount, api::ExtGetLinkTypeAndHopCountIn{0, 1});
  api::MemPoolCreateIn create{};
  create.pool_props.allocType = 1;
  create.pool_props.location = {1, 0};
  Call(s, id++, api::kMemPoolCreate, create);
  Call(s, id++, api::kMemPoolGetAttribute, api::MemPoolGetAttributeIn{1, 1});
  Call(s, id++, api::kMemPoolSetAttribute, api::MemPoolSetAttributeIn{1, 1, 1});
  Call(s, id++, api::kMemPoolGetAccess, api::MemPoolGetAccessIn{1, {1, 1}});
  api::MemPoolSetAccessIn access{};
  access.mem_pool = 1;
  access.desc_list = {{{1, 0}, 3}, {{1, 1}, 1}};
  access.count = 2;
  Call(s, id++, api::kMemPoolSetAccess, access);
  Call(s, id++, api::kMemPoolTrimTo, api::MemPoolTrimToIn{1, 0});
  Call(s, id++, api::kDeviceSetMemPool, api::DeviceSetMemPoolIn{0, 1});
  Call(s, id++, api::kMemPoolDestroy, api::MemPoolDestroyIn{1});
  Call(s, id++, api::kProfilerStart, api::ProfilerStartIn{});
  Call(s, id++, api::kProfilerStop, api::ProfilerStopIn{});
  Call(s, id++, 0x12345678u, api::ProfilerStopIn{});                 // No such function.
  Call(s, id++, api::kDeviceGetLimit, api::DeviceGetLimitIn{2}, 7);  // No such device.
  s.Add(Op::kApiCall, id++, msg::ApiCallRequest<api::DeviceSetLimitIn>{api::kDeviceSetLimit, 0, false, {0, 1}});
  Goodbye(s, id);
  Write("api_calls", kAfterHello, s);
}

void BulkLz4() {
  const std::vector<uint8_t> zeros(300000, 0);
  FrameScript s;
  Allocate(s)
      .AddLz4(Op::kCopyToDevice, 4, msg::CopyToDeviceRequest{0, 0, Row(kA, zeros.size()), true, {}}, zeros)
      .AddLz4(Op::kCopyToDevice, 5, msg::CopyToDeviceRequest{0, 0, {kA, 4096, 3000, 100}, false, {}},
              std::vector<uint8_t>(300000, 7))
      .Add(Op::kCopyFromDevice, 6, msg::CopyFromDeviceRequest{0, 0, Row(kA, zeros.size()), {}});
  Goodbye(s, 7);
  Write("bulk_lz4", kAfterHello, s);
}

// Paths of the shm transport's host segment, which a tcp-like connection
// has not: each refused.
void SharedHost() {
  FrameScript s;
  Allocate(s)
      .Add(Op::kHostRegister, 4, msg::HostRangeRequest{0, 4096})
      .Add(Op::kCopyToDevice, 5, msg::CopyToDeviceRequest{0, 0, Row(kA, 4096), true, {true, 0, 4096}})
      .Add(Op::kCopyFromDevice, 6, msg::CopyFromDeviceRequest{0, 0, Row(kA, 4096), {true, 0, 4096}})
      .Add(Op::kHostUnregister, 7, msg::HostRangeRequest{0, 4096});
  Goodbye(s, 8);
  Write("shared_host", kAfterHello, s);
}

// Damaged streams: each ends the session a different way.
void Damaged() {
  const std::vector<uint8_t> some = Bytes(100, 1);
  FrameScript stray;
  stray.Payload(static_cast<uint16_t>(Op::kData), 4, some);
  Write("bad_data_outside_transfer", kAfterHello, stray);
  FrameScript unknown;
  unknown.Add(static_cast<Op>(0x0777), 4, msg::CallReply{});
  Write("bad_unknown_op", kAfterHello, unknown);
  FrameScript magic;
  magic.Header(static_cast<uint16_t>(Op::kMalloc), 4, 3, 0x52504948);
  Write("bad_magic", kAfterHello, magic);
  FrameScript huge;
  huge.Header(static_cast<uint16_t>(Op::kMalloc), 4, wire::kMaxBodyBytes + 1);
  Write("bad_body_length", kAfterHello, huge);
  FrameScript cut;
  Allocate(cut).Header(static_cast<uint16_t>(Op::kMemset), 4, 20).Raw(std::vector<uint8_t>{0x95, 0, 0});
  Write("bad_cut_body", kAfterHello, cut);
  FrameScript overflow;
  Allocate(overflow).Add(Op::kCopyToDevice, 4,
                         msg::CopyToDeviceRequest{0, 0, {kA, 0, 1ull << 40, 1ull << 40}, true, {}});
  Write("bad_copy_overflow", kAfterHello, overflow);
  FrameScript other;
  Allocate(other)
      .Add(Op::kCopyToDevice, 4, msg::CopyToDeviceRequest{0, 0, Row(kA, 4096), true, {}})
      .Payload(static_cast<uint16_t>(Op::kData), 5, Bytes(4096, 2));
  Write("bad_bulk_other_request", kAfterHello, other);
  FrameScript lz4;  // A chunk whose prefix claims more than the transfer.
  Allocate(lz4)
      .Add(Op::kCopyToDevice, 4, msg::CopyToDeviceRequest{0, 0, Row(kA, 4096), true, {}})
      .Payload(static_cast<uint16_t>(Op::kDataLz4), 4, std::vector<uint8_t>{0x00, 0x20, 0x00, 0x00, 0x1f, 0x00});
  Write("bad_lz4_prefix", kAfterHello, lz4);
  FrameScript refused;  // A copy outside every allocation: its bulk is discarded.
  Allocate(refused)
      .Add(Op::kCopyToDevice, 4, msg::CopyToDeviceRequest{0, 0, Row(kB + kMiB, 4096), true, {}}, Bytes(4096, 3))
      .Add(Op::kMemGetInfo, 5, msg::DeviceRequest{0});
  Write("bad_copy_outside", kAfterHello, refused);
  FrameScript module;
  module.Add(Op::kModuleLoad, 4,
             msg::ModuleLoadRequest{0, 3, Bytes(32, 0), 4096, msg::Compression::kLz4Block, 99999999, "m"});
  Write("bad_module_sizes", kAfterHello, module);
}

// Inputs that bring their own hello (byte 0 odd).
void OwnHellos() {
  FrameScript good;
  good.Add(Op::kHello, 1, fuzz::FuzzHello()).Add(Op::kMalloc, 2, msg::MallocRequest{0, 4096, 0});
  Goodbye(good, 3);
  Write("hello_own", kOwnHello, good);
  msg::HelloRequest old = fuzz::FuzzHello();
  old.min_version = old.max_version = 0;
  FrameScript version;
  version.Add(Op::kHello, 1, old);
  Write("hello_bad_version", kOwnHello, version);
  msg::HelloRequest window = fuzz::FuzzHello();
  window.window = {4096, 3};
  FrameScript bad_window;
  bad_window.Add(Op::kHello, 1, window);
  Write("hello_bad_window", kOwnHello, bad_window);
  msg::HelloRequest low = fuzz::FuzzHello();
  low.window = {0, 1u << 30};  // Near address 0: the sim counter-offers.
  low.features.clear();
  low.chunk_bytes = 1;
  FrameScript counter;
  counter.Add(Op::kHello, 1, low).Add(Op::kMalloc, 2, msg::MallocRequest{0, 4096, 0});
  Write("hello_counter_offer", kOwnHello, counter);
  FrameScript first;
  first.Add(Op::kMalloc, 1, msg::MallocRequest{0, 4096, 0});
  Write("hello_missing", kOwnHello, first);
  FrameScript auth;
  auth.Add(Op::kHello, 1, fuzz::FuzzHello()).Add(Op::kAuth, 2, msg::AuthRequest{"tenant", Bytes(32, 5)});
  Write("hello_then_auth", kOwnHello, auth);
}

// Inputs that hung or crashed the target before their fixes (the replay
// thread waited for streams held at a value wait or a host callback; a
// device reset released memory a peer copy still used): seeds now, so the
// corpus run keeps them fixed.
void FixedIssues() {
  const msg::StreamWaitValueRequest held{0, 0, kA, 1, 0xff, 0, 4};  // Device 0's null stream waits for *kA >= 1.
  FrameScript ipc;
  Allocate(ipc).Add(Op::kStreamWaitValue, 4, held).Add(Op::kIpcGetMemHandle, 5, msg::IpcGetMemHandleRequest{kA});
  Write("fixed_ipc_get_mem_handle_behind_wait_value", kAfterHello, ipc);
  FrameScript callback;
  Allocate(callback)
      .Add(Op::kStreamHostCallback, 4, msg::StreamHostCallbackRequest{0, 0, 100})
      .Add(Op::kIpcGetMemHandle, 5, msg::IpcGetMemHandleRequest{kA})
      .Add(Op::kHostCallbackDone, 6, msg::HostCallbackDone{100});
  Write("fixed_ipc_get_mem_handle_behind_host_callback", kAfterHello, callback);
  FrameScript reset;
  Allocate(reset).Add(Op::kStreamWaitValue, 4, held).Add(Op::kDeviceReset, 5, msg::DeviceRequest{0});
  Write("fixed_device_reset_behind_wait_value", kAfterHello, reset);
  FrameScript peer;
  Allocate(peer)
      .Add(Op::kStreamWaitValue, 4, held)
      .Add(Op::kCopyOnDevice, 5, msg::CopyOnDeviceRequest{0, 0, Row(kB, 4096), Row(kA, 4096), false})
      .Add(Op::kDeviceReset, 6, msg::DeviceRequest{1});
  Write("fixed_peer_copy_after_device_reset", kAfterHello, peer);
}

// Inputs that show the known issues of tests/fuzz/known_issues.txt, each
// deterministically, for whoever fixes them (never in the corpus: they hang
// or crash the target). None now.
void KnownIssues() {}

}  // namespace

int main(int argc, char** argv) {
  const bool known = argc == 3 && std::string(argv[2]) == "--known-issues";
  if (argc != 2 && !known) {
    std::fprintf(stderr, "usage: %s OUT_DIR [--known-issues]\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (known) {
    KnownIssues();
    return ok ? 0 : 1;
  }
  Memory();
  FixedIssues();
  StreamsAndEvents();
  HostCallbacks();
  Graphs();
  Modules();
  VirtualMemory();
  Ipc();
  Textures();
  ApiCalls();
  BulkLz4();
  SharedHost();
  Damaged();
  OwnHellos();
  if (!ok) {
    std::fprintf(stderr, "cannot write seeds to %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
