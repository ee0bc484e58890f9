// wire_seeds OUT_DIR: writes the seed corpus of wire_fuzz: a valid body of
// every message type (wire_messages.h), fuller bodies of the nested ones,
// damaged bodies, and frame streams as each side sends them (with bulk in
// kData and kDataLz4 chunks), plus damaged streams. Exits 1 if it cannot
// write.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/wire.h"
#include "tests/fuzz/frame_script.h"
#include "tests/fuzz/session_fuzz.h"
#include "tests/fuzz/wire_messages.h"

namespace {

using namespace hipr;
using fuzz::FrameScript;
using wire::Op;

// Byte 0 of a frame-stream input: not a message index; odd agrees lz4.
constexpr uint8_t kFrames = 0xfe;
constexpr uint8_t kFramesLz4 = 0xff;
static_assert(fuzz::kMessageCount < kFrames);

bool ok = true;
std::filesystem::path dir;

void Write(const std::string& name, uint8_t first, const std::vector<uint8_t>& rest) {
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.put(static_cast<char>(first));
  out.write(reinterpret_cast<const char*>(rest.data()), static_cast<std::streamsize>(rest.size()));
  ok = ok && static_cast<bool>(out);
}

template <class T>
std::vector<uint8_t> Body(const T& msg) {
  codec::BodyWriter w;
  w.Encode(msg);
  return std::vector<uint8_t>(w.data(), w.data() + w.size());
}

// The index of T in AllMessages.
template <class T>
uint8_t IndexOf() {
  uint8_t found = 0xff;
  for (size_t i = 0; i < fuzz::kMessageCount; ++i)
    fuzz::WithMessage(i, [&](auto m) {
      if constexpr (std::is_same_v<decltype(m), T>) found = static_cast<uint8_t>(i);
    });
  return found;
}

template <class T>
void WriteBody(const std::string& name, const T& msg) {
  Write("body_" + name, IndexOf<T>(), Body(msg));
}

std::vector<uint8_t> Bytes(size_t n, uint8_t seed) {
  std::vector<uint8_t> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + (i % 251) * (i % 7 == 0 ? 3 : 0));
  return b;
}

msg::DeviceInfo SomeDevice() {
  msg::DeviceInfo d;
  d.name = "AMD Instinct MI250X";
  d.gcn_arch_name = "gfx90a:sramecc+:xnack-";
  d.total_global_mem = 64u << 20;
  d.max_threads_dim = {1024, 1024, 1024};
  d.uuid = Bytes(16, 7);
  d.properties = {{"pciDomainID", 0}, {"isLargeBar", 1}, {"negative", -5}};
  return d;
}

msg::LaunchRequest SomeLaunch() {
  msg::LaunchRequest l;
  l.stream = 7;
  l.module = 3;
  l.function = 11;
  l.kernel = "_Z5scalePffi";
  l.grid = {4, 1, 1};
  l.block = {64, 1, 1};
  l.kernarg = Bytes(20, 1);
  l.global = {250, 1, 1};
  return l;
}

void WriteBodies() {
  for (size_t i = 0; i < fuzz::kMessageCount; ++i)
    fuzz::WithMessage(i, [&](auto m) { Write("body_default_" + std::to_string(i), static_cast<uint8_t>(i), Body(m)); });
  WriteBody("hello", fuzz::FuzzHello());
  msg::HelloReply reply;
  reply.devices = {SomeDevice(), SomeDevice()};
  reply.features = {wire::kFeatureLz4ToDevice};
  reply.capabilities = {wire::kCapabilityTextures};
  WriteBody("hello_reply", reply);
  WriteBody("launch", SomeLaunch());
  msg::GraphCreateRequest graph;
  graph.graph = 5;
  graph.has_deps = true;
  graph.nodes = {{static_cast<uint16_t>(Op::kLaunchKernel), Body(SomeLaunch()), {}},
                 {static_cast<uint16_t>(Op::kMemset), Body(msg::MemsetRequest{0, 0, {1u << 20, 64, 64, 2}, 7, 4}), {0}},
                 {static_cast<uint16_t>(Op::kStreamHostCallback), {}, {}}};
  WriteBody("graph", graph);
  msg::ModuleLoadReply loaded;
  loaded.globals = {{"d_table", 0x500000000000, 256}};
  loaded.unavailable_kernels = {"_Z5scalePffi"};
  WriteBody("module_reply", loaded);
  WriteBody("set_access", msg::VmmSetAccessRequest{1u << 21, 1u << 21, {{0, 3}, {1, 1}}});
  WriteBody("stream_cu_mask", msg::StreamCreateRequest{0, 9, 1, -1, {0xffffffffu, 0x0000ffffu}});
  msg::TextureCreateRequest tex;
  tex.memory = {1u << 20, 256, 256, 16};
  tex.shape = msg::kTexturePitch2D;
  tex.channel_bits = {32, 0, 0, 0};
  tex.border_color = {0.5f, -1.0f, 1e30f, 0.0f};
  tex.mipmap_level_bias = -2.5f;
  WriteBody("texture", tex);
  WriteBody("elapsed", msg::EventElapsedReply{0, 1.25f});
  WriteBody("fatal", msg::Fatal{StatusCode::kProtocolError, "bad frame magic"});
  // Damage: each a different refusal (codec.h, wire.h limits).
  const uint8_t hello = IndexOf<msg::HelloRequest>();
  std::vector<uint8_t> cut = Body(fuzz::FuzzHello());
  cut.resize(cut.size() / 2);
  Write("body_bad_truncated", hello, cut);
  std::vector<uint8_t> trailing = Body(fuzz::FuzzHello());
  trailing.push_back(0xc0);
  Write("body_bad_trailing", hello, trailing);
  Write("body_bad_not_array", hello, {0xa3, 'a', 'b', 'c'});
  Write("body_bad_deep", IndexOf<msg::GraphCreateRequest>(), std::vector<uint8_t>(40, 0x91));
  Write("body_bad_str32", IndexOf<msg::Output>(), {0x91, 0xdb, 0xff, 0xff, 0xff, 0xff, 'x'});
  Write("body_bad_array32", IndexOf<msg::GraphLaunchRequest>(), {0x94, 1, 0, 0, 0xdd, 0xff, 0xff, 0xff, 0xff});
  Write("body_bad_negative", IndexOf<msg::MallocRequest>(), {0x93, 0, 0xd0, 0x80, 0});
  Write("body_bad_float_range", IndexOf<msg::EventElapsedReply>(),
        {0x92, 0, 0xcb, 0x7f, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff});
  Write("body_bad_ext", IndexOf<msg::Output>(), {0x91, 0xd4, 0x01, 0x02});
  WriteBody("device_info", SomeDevice());
}

void WriteStreams() {
  const std::vector<uint8_t> data = Bytes(100000, 3);
  const std::vector<uint8_t> zeros(150000, 0);
  msg::CopyToDeviceRequest to{0, 0, {0x500000000000, 0, data.size(), 1}, true, {}};
  msg::CopyToDeviceRequest to_zeros{0, 0, {0x500000000000, 4096, 3000, 50}, false, {}};
  msg::ModuleLoadRequest module{0, 3, Bytes(32, 9), 5000, msg::Compression::kNone, 5000, "module.co"};
  {  // A client's session.
    FrameScript s;
    s.Add(Op::kHello, 1, fuzz::FuzzHello())
        .Add(Op::kMalloc, 2, msg::MallocRequest{0, 1u << 20, 0})
        .Add(Op::kCopyToDevice, 3, to, data)
        .Add(Op::kCopyFromDevice, 4, msg::CopyFromDeviceRequest{0, 0, {0x500000000000, 0, 4096, 1}, {}})
        .Add(Op::kModuleLoad, 5, module, Bytes(5000, 1))
        .Add(Op::kLaunchKernel, 6, SomeLaunch())
        .Add(Op::kApiCall, 7, msg::ApiCallRequest<msg::Region>{0x21dc569f, 0, true, {}})
        .Payload(static_cast<uint16_t>(Op::kHeartbeat), 0, {})
        .Add(Op::kGoodbye, 8, msg::CallReply{});
    Write("frames_client", kFrames, s.bytes());
  }
  {  // Bulk lz4 to the device.
    FrameScript s;
    s.Add(Op::kHello, 1, fuzz::FuzzHello()).AddLz4(Op::kCopyToDevice, 2, to_zeros, zeros);
    s.AddLz4(Op::kCopyToDevice, 3, to, data);
    Write("frames_client_lz4", kFramesLz4, s.bytes());
  }
  {  // A worker's replies.
    FrameScript s;
    msg::HelloReply reply;
    reply.devices = {SomeDevice()};
    s.Add(static_cast<Op>(wire::ReplyOp(Op::kHello)), 1, reply)
        .Add(static_cast<Op>(wire::ReplyOp(Op::kMalloc)), 2, msg::MallocReply{0, 0x500000000000})
        .Add(Op::kOutput, 0, msg::Output{"hello from the device\n"})
        .Add(static_cast<Op>(wire::ReplyOp(Op::kCopyFromDevice)), 4, msg::CallReply{0}, Bytes(64u << 10, 5))
        .Add(Op::kHostCallbackReady, 0, msg::HostCallbackReady{77, 0})
        .Add(static_cast<Op>(wire::ReplyOp(Op::kModuleLoad)), 5, msg::ModuleLoadReply{0, true, "", {}, {}, false})
        .Add(Op::kFatal, 0, msg::Fatal{StatusCode::kDeviceLost, "the worker is shutting down"});
    Write("frames_worker", kFrames, s.bytes());
  }
  {  // A worker's bulk in kDataLz4, a heartbeat before it.
    FrameScript s;
    s.Add(static_cast<Op>(wire::ReplyOp(Op::kCopyFromDevice)), 4, msg::CallReply{0})
        .Payload(static_cast<uint16_t>(Op::kHeartbeat), 0, {})
        .BulkLz4(4, std::vector<uint8_t>(64u << 10, 0));
    Write("frames_worker_lz4", kFramesLz4, s.bytes());
  }
  {  // Damaged streams.
    FrameScript magic;
    magic.Header(static_cast<uint16_t>(Op::kMalloc), 1, 3, 0x12345678);
    Write("frames_bad_magic", kFrames, magic.bytes());
    FrameScript version;
    version.Header(static_cast<uint16_t>(Op::kMalloc), 1, 3, wire::kMagic, 2);
    Write("frames_bad_version", kFrames, version.bytes());
    FrameScript huge;
    huge.Header(static_cast<uint16_t>(Op::kMalloc), 1, wire::kMaxPayloadBytes + 1);
    Write("frames_bad_length", kFrames, huge.bytes());
    FrameScript body_limit;
    body_limit.Header(static_cast<uint16_t>(Op::kMalloc), 1, wire::kMaxBodyBytes + 1);
    Write("frames_bad_body_length", kFrames, body_limit.bytes());
    FrameScript other;  // Bulk for another request.
    other.Add(Op::kCopyToDevice, 3, to).Payload(static_cast<uint16_t>(Op::kData), 4, Bytes(100, 1));
    Write("frames_bad_data_id", kFrames, other.bytes());
    FrameScript stray;  // A data frame, then an lz4 chunk whose prefix lies.
    stray.Payload(static_cast<uint16_t>(Op::kData), 9, Bytes(10, 1))
        .Payload(static_cast<uint16_t>(Op::kDataLz4), 9, std::vector<uint8_t>{0xff, 0xff, 0xff, 0x7f, 0x10, 0x61});
    Write("frames_bad_lz4", kFramesLz4, stray.bytes());
    FrameScript short_bulk;  // The stream ends inside the bulk.
    short_bulk.Add(Op::kCopyToDevice, 3, to).Payload(static_cast<uint16_t>(Op::kData), 3, Bytes(1000, 1));
    Write("frames_bad_short_bulk", kFrames, short_bulk.bytes());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  dir = argv[1];
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  WriteBodies();
  WriteStreams();
  if (!ok) {
    std::fprintf(stderr, "cannot write seeds to %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
