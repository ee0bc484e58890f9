// The launch path through the real ABI: a program built by hipcc
// (testdata/launch_probe.hip) runs under LD_PRELOAD of the stub against a
// scripted fake worker. The program checks what each entry point returns;
// this test checks what reached the wire: registration sent nothing, each
// module was named by SHA-256 and shipped (lz4) only when the worker lacked
// it, kernel arguments were packed at the offsets hipcc's metadata gives,
// and device output was written to the program's stdout.
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/client_stub/fake_worker.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;

struct Wire {
  std::vector<uint16_t> ops;  // After the hello, in order.
  std::vector<FakeWorker::ReceivedModule> modules;
  std::vector<msg::LaunchRequest> launches;
  std::vector<msg::CopyToDeviceRequest> copies_in;
  std::vector<std::vector<uint8_t>> copy_bytes;
  uint64_t counter_address = 0;
  uint64_t coeffs_address = 0;
};

void ServeProbe(Connection& c, Wire* wire) {
  const msg::HelloRequest hello = FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
  // Globals at addresses inside the window the client reserved.
  wire->counter_address = hello.window.base + 0x1000;
  wire->coeffs_address = hello.window.base + 0x2000;
  msg::ModuleLoadReply loaded;
  loaded.globals = {msg::ModuleGlobal{"probe_counter", wire->counter_address, 4},
                    msg::ModuleGlobal{"probe_coeffs", wire->coeffs_address, 16}};
  std::set<std::vector<uint8_t>> known;
  for (;;) {
    wire::FrameHeader h;
    if (!ReadHeader(c, &h).ok()) return;  // The program has exited.
    wire->ops.push_back(h.op);
    switch (static_cast<wire::Op>(h.op)) {
      case wire::Op::kModuleLoad: {
        // Like a worker's cache: a digest seen once needs no bytes again.
        auto r = FakeWorker::AnswerModuleLoad(
            c, h, [&](const msg::ModuleLoadRequest& m) { return known.count(m.sha256) != 0; }, loaded);
        known.insert(r.request.sha256);
        wire->modules.push_back(std::move(r));
        break;
      }
      case wire::Op::kLaunchKernel:
        wire->launches.push_back(FakeWorker::Body<msg::LaunchRequest>(c, h));
        break;
      case wire::Op::kCopyToDevice: {
        auto req = FakeWorker::Body<msg::CopyToDeviceRequest>(c, h);
        std::vector<uint8_t> bytes(req.dst.bytes());
        iovec iov{bytes.data(), bytes.size()};
        if (!ReadBulk(c, h.request_id, &iov, 1).ok()) return;
        wire->copies_in.push_back(req);
        wire->copy_bytes.push_back(bytes);
        if (req.want_reply) FakeWorker::Reply(c, h, msg::CallReply{0});
        break;
      }
      case wire::Op::kCopyFromDevice: {
        auto req = FakeWorker::Body<msg::CopyFromDeviceRequest>(c, h);
        std::vector<uint8_t> bytes(req.src.bytes());
        if (req.src.address == wire->counter_address && bytes.size() == 4) {
          const int value = 42;
          std::memcpy(bytes.data(), &value, 4);
        }
        iovec iov{bytes.data(), bytes.size()};
        FakeWorker::Reply(c, h, msg::CallReply{0}, &iov, 1);
        break;
      }
      case wire::Op::kDeviceSynchronize:
        (void)FakeWorker::Body<msg::DeviceRequest>(c, h);
        FakeWorker::Output(c, "hello from the device\n");
        FakeWorker::Reply(c, h, msg::CallReply{0});
        break;
      default:
        if (!SkipPayload(c, h.payload_length).ok()) return;
    }
  }
}

// Runs `command`, returning its exit status and stdout.
int RunCommand(const std::string& command, std::string* out) {
  FILE* f = popen(command.c_str(), "r");
  if (f == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->append(buf, n);
  const int status = pclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The meaningful bytes of mixed()'s explicit arguments (the padding inside
// Pair, offsets 28..31, holds whatever the host's copy held).
void ExpectMixedArgs(const std::vector<uint8_t>& k, char c, int i, double d, uint64_t p, int a, double b, short h) {
  ASSERT_EQ(k.size(), 42u);
  EXPECT_EQ(static_cast<char>(k[0]), c);
  int i2;
  double d2;
  uint64_t p2;
  int a2;
  double b2;
  short h2;
  std::memcpy(&i2, &k[4], 4);
  std::memcpy(&d2, &k[8], 8);
  std::memcpy(&p2, &k[16], 8);
  std::memcpy(&a2, &k[24], 4);
  std::memcpy(&b2, &k[32], 8);
  std::memcpy(&h2, &k[40], 2);
  EXPECT_EQ(i2, i);
  EXPECT_EQ(d2, d);
  EXPECT_EQ(p2, p);
  EXPECT_EQ(a2, a);
  EXPECT_EQ(b2, b);
  EXPECT_EQ(h2, h);
}

TEST(LaunchAbiTest, HipccProgramThroughTheStub) {
  FakeWorker w;
  Wire wire;
  w.Serve([&](Connection& c) { ServeProbe(c, &wire); });
  std::string out;
  const std::string command = std::string("env LD_PRELOAD=") + HIPR_TEST_STUB + " HIPR_SERVER=" + w.address() + " " +
                              HIPR_TEST_PROBE + " " + HIPR_TEST_PROBE_CO;
  const int rc = RunCommand(command, &out);
  w.Join();
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("PROBE OK"), std::string::npos) << out;
  // kOutput text reached stdout, before what the program printed after.
  EXPECT_NE(out.find("hello from the device\n"), std::string::npos) << out;
  EXPECT_LT(out.find("hello from the device"), out.find("PROBE OK")) << out;

  // Registration and hipGetDeviceCount sent nothing past the hello: the
  // first frame is the first launch's module load.
  ASSERT_FALSE(wire.ops.empty());
  EXPECT_EQ(wire.ops[0], static_cast<uint16_t>(wire::Op::kModuleLoad));

  // Two modules (the program's fat binary, the .co file) under distinct ids.
  // hipcc built both from one source: one code object, one name, so it
  // crossed the wire once (lz4-compressed); the second load named it only.
  ASSERT_EQ(wire.modules.size(), 2u);
  EXPECT_NE(wire.modules[0].request.module, wire.modules[1].request.module);
  EXPECT_EQ(wire.modules[0].request.sha256, wire.modules[1].request.sha256);
  EXPECT_TRUE(wire.modules[0].shipped);
  EXPECT_EQ(wire.modules[0].request.compression, msg::Compression::kLz4Block);
  EXPECT_LT(wire.modules[0].request.bulk_bytes, wire.modules[0].request.code_bytes);
  EXPECT_FALSE(wire.modules[1].shipped);

  // Four launches reached the worker; refused ones never did.
  ASSERT_EQ(wire.launches.size(), 4u);
  const msg::LaunchRequest& first = wire.launches[0];
  EXPECT_EQ(first.kernel, "mixed");
  EXPECT_EQ(first.module, wire.modules[0].request.module);
  EXPECT_EQ(first.grid, (std::array<uint32_t, 3>{2, 3, 1}));
  EXPECT_EQ(first.block, (std::array<uint32_t, 3>{64, 1, 1}));
  EXPECT_EQ(first.shared_bytes, 16u);
  ExpectMixedArgs(first.kernarg, 'x', -5, 2.5, 0x1000, 7, 1.5, 300);
  const msg::LaunchRequest& second = wire.launches[1];
  EXPECT_TRUE(second.kernel.empty());  // The function id is known by now.
  EXPECT_EQ(second.function, first.function);
  ExpectMixedArgs(second.kernarg, 'y', 1, 0.0, 0, 0, 0.0, 0);
  // kernelParams and extra pack the same bytes.
  for (int i : {2, 3}) {
    EXPECT_EQ(wire.launches[i].module, wire.modules[1].request.module);
    EXPECT_EQ(wire.launches[i].grid, (std::array<uint32_t, 3>{4, 1, 1}));
    ExpectMixedArgs(wire.launches[i].kernarg, 'k', 11, -0.25, 0x1000, 3, 4.5, -2);
  }
  EXPECT_EQ(wire.launches[2].kernel, "mixed");
  EXPECT_TRUE(wire.launches[3].kernel.empty());
  EXPECT_NE(wire.launches[2].function, first.function);

  // hipMemcpyToSymbol wrote the coefficients to the module's global.
  ASSERT_EQ(wire.copies_in.size(), 1u);
  EXPECT_EQ(wire.copies_in[0].dst.address, wire.coeffs_address);
  ASSERT_EQ(wire.copy_bytes[0].size(), 16u);
  float coeffs[4];
  std::memcpy(coeffs, wire.copy_bytes[0].data(), 16);
  EXPECT_EQ(coeffs[3], 4.0f);
}

}  // namespace
}  // namespace hipr::client
