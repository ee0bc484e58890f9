// Modules and launches in the client's core, with real hipcc-built metadata
// (testdata/launch_probe.co) and a scripted fake worker: kernarg packing,
// launch-configuration errors, lazy loading once per session, load failures
// and unavailable kernels, cheap registration, occupancy, and device output.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>

#include "client_stub/api/api_common.h"
#include "client_stub/kernels/code_module.h"
#include "tests/client_stub/fake_worker.h"
#include "client_stub/kernels/kernel_launch.h"
#include "client_stub/kernels/kernel_registry.h"
#include "client_stub/managed/managed_vars.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;

// LaunchKernel for the process's client, as the API edge calls it.
Status Launch(Remote& s, CodeModule& m, const std::string& name, const LaunchSpec& spec, const KernelArgs& args) {
  return LaunchKernel(Client::Get(), s, Managed(), Graphs(), m, name, spec, args);
}

constexpr const char* kTarget = "gfx90a:sramecc+:xnack-";

std::vector<uint8_t> ProbeCode() {
  std::ifstream f(HIPR_TEST_PROBE_CO, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

Config TestConfig(const FakeWorker& w) {
  Config c;
  c.server = w.address();
  c.connect_timeout_ms = 2000;
  c.peer_timeout_ms = 2000;
  c.window_bytes = uint64_t{256} << 20;
  c.flush_us = 10000000;  // Batched frames leave with the next call.
  return c;
}

// A session with a fake worker, torn down cleanly: module loads keyed by it
// are forgotten before it is destroyed (production never destroys one).
struct TestSession {
  explicit TestSession(FakeWorker& w) { session = Remote::Open(TestConfig(w), &windows); }
  ~TestSession() {
    ForgetModuleLoads(session.get(), -1);
    session.reset();
    for (const AddressRange& window : windows) ReleaseRange(window);
  }
  std::vector<AddressRange> windows;
  std::unique_ptr<Remote> session;
};

const co::KernelInfo& Kernel(CodeModule& m, const std::string& name, std::shared_ptr<const IsaImage>* keep) {
  EXPECT_TRUE(m.Image(kTarget, keep).ok());
  const co::KernelInfo* k = (*keep)->FindKernel(name);
  EXPECT_NE(k, nullptr) << name;
  return *k;
}

LaunchSpec Spec(uint32_t grid, uint32_t block, uint64_t shared = 0) {
  LaunchSpec s;
  s.grid = {grid, 1, 1};
  s.block = {block, 1, 1};
  s.shared_bytes = shared;
  return s;
}

int32_t Sync(Remote& s) {
  msg::CallReply reply;
  EXPECT_TRUE(s.Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{0}, &reply).ok());
  return reply.error;
}

struct Pair {
  int a;
  double b;
};

TEST(KernargTest, PackedAtHipccMetadataOffsets) {
  CodeModule* m = CodeModule::NewLoaded(ProbeCode(), "launch_probe.co", ApiModuleHooks());
  std::shared_ptr<const IsaImage> image;
  const co::KernelInfo& k = Kernel(*m, "mixed", &image);
  ASSERT_EQ(k.explicit_arg_count(), 6u);
  EXPECT_EQ(k.explicit_kernarg_size(), 42u);

  char c = 'q';
  int i = 0x01020304;
  double d = 6.25;
  uint64_t p = 0xdeadbeef000;
  Pair s{};
  std::memset(&s, 0, sizeof s);  // Padding zero, so buffers compare whole.
  s.a = -9;
  s.b = 0.5;
  short h = 77;
  void* pointers[] = {&c, &i, &d, &p, &s, &h};
  KernelArgs args;
  args.pointers = pointers;
  std::vector<uint8_t> packed;
  ASSERT_TRUE(PackKernargs(k, args, &packed).ok());
  std::vector<uint8_t> want(42, 0);
  std::memcpy(&want[0], &c, 1);
  std::memcpy(&want[4], &i, 4);
  std::memcpy(&want[8], &d, 8);
  std::memcpy(&want[16], &p, 8);
  std::memcpy(&want[24], &s, 16);
  std::memcpy(&want[40], &h, 2);
  EXPECT_EQ(packed, want);

  // The extra form, keys in either order, packs the same bytes.
  size_t size = want.size();
  void* extra[] = {HIP_LAUNCH_PARAM_BUFFER_SIZE, &size, HIP_LAUNCH_PARAM_BUFFER_POINTER, want.data(),
                   HIP_LAUNCH_PARAM_END};
  KernelArgs buffer;
  ASSERT_EQ(ParseExtra(extra, &buffer), hipSuccess);
  std::vector<uint8_t> from_buffer;
  ASSERT_TRUE(PackKernargs(k, buffer, &from_buffer).ok());
  EXPECT_EQ(from_buffer, want);

  // Missing arguments are the launch's hipErrorInvalidValue.
  pointers[3] = nullptr;
  EXPECT_EQ(ToHipError(PackKernargs(k, args, &packed)), hipErrorInvalidValue);
  EXPECT_EQ(ToHipError(PackKernargs(k, KernelArgs{}, &packed)), hipErrorInvalidValue);
  buffer.buffer_size = 41;
  EXPECT_EQ(ToHipError(PackKernargs(k, buffer, &packed)), hipErrorInvalidValue);
  buffer.short_buffer_reads_zero = true;  // hipSetupArgument's form.
  EXPECT_TRUE(PackKernargs(k, buffer, &packed).ok());
  // A kernel without parameters needs none.
  const co::KernelInfo& none = Kernel(*m, "no_args", &image);
  EXPECT_TRUE(PackKernargs(none, KernelArgs{}, &packed).ok());
  EXPECT_TRUE(packed.empty());

  void* no_end[16] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, want.data(), HIP_LAUNCH_PARAM_BUFFER_SIZE, &size};
  for (int j = 4; j < 16; ++j) no_end[j] = reinterpret_cast<void*>(uintptr_t{9});
  EXPECT_EQ(ParseExtra(no_end, &buffer), hipErrorInvalidValue);
  void* no_size[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, want.data(), HIP_LAUNCH_PARAM_END};
  EXPECT_EQ(ParseExtra(no_size, &buffer), hipErrorInvalidValue);
  m->Retire();
}

TEST(LaunchCheckTest, ErrorsMatchHip) {
  CodeModule* m = CodeModule::NewLoaded(ProbeCode(), "launch_probe.co", ApiModuleHooks());
  std::shared_ptr<const IsaImage> image;
  const msg::DeviceInfo d = FakeWorker::Device("gpu0");
  const co::KernelInfo& mixed = Kernel(*m, "mixed", &image);
  const co::KernelInfo& bounded = Kernel(*m, "bounded", &image);
  const co::KernelInfo& shared = Kernel(*m, "shared_user", &image);
  EXPECT_EQ(bounded.max_flat_workgroup_size, 128u);
  EXPECT_EQ(shared.group_segment_fixed_size, 4096u);

  EXPECT_TRUE(CheckLaunch(d, mixed, Spec(1, 1024)).ok());
  EXPECT_EQ(ToHipError(CheckLaunch(d, mixed, Spec(0, 64))), hipErrorInvalidValue);
  EXPECT_EQ(ToHipError(CheckLaunch(d, mixed, Spec(1, 0))), hipErrorInvalidValue);
  EXPECT_EQ(ToHipError(CheckLaunch(d, mixed, Spec(1, 2048))), hipErrorInvalidConfiguration);
  LaunchSpec tall = Spec(1, 1);
  tall.block = {1, 1, 2048};
  EXPECT_EQ(ToHipError(CheckLaunch(d, mixed, tall)), hipErrorInvalidConfiguration);
  EXPECT_TRUE(CheckLaunch(d, bounded, Spec(1, 128)).ok());
  EXPECT_EQ(ToHipError(CheckLaunch(d, bounded, Spec(1, 129))), hipErrorLaunchFailure);
  EXPECT_TRUE(CheckLaunch(d, shared, Spec(1, 64, 65536 - 4096)).ok());
  EXPECT_EQ(ToHipError(CheckLaunch(d, shared, Spec(1, 64, 65536 - 4095))), hipErrorInvalidValue);

  LaunchSpec shape;
  EXPECT_EQ(SetShape(dim3(1u << 23, 1, 1), dim3(1024, 1, 1), &shape), hipErrorInvalidConfiguration);
  EXPECT_EQ(SetShape(dim3(1u << 22, 1, 1), dim3(1023, 1, 1), &shape), hipSuccess);

  // Cooperative: every block resident at once (110 CUs here).
  LaunchSpec coop = Spec(110, 1024);
  coop.flags = msg::kLaunchCooperative;
  EXPECT_TRUE(CheckLaunch(d, mixed, coop).ok());
  coop.grid = {1000, 1000, 1};
  EXPECT_EQ(ToHipError(CheckLaunch(d, mixed, coop)), hipErrorCooperativeLaunchTooLarge);
  msg::DeviceInfo no_coop = d;
  no_coop.cooperative_launch = false;
  EXPECT_EQ(ToHipError(CheckLaunch(no_coop, mixed, Spec(1, 64))), hipSuccess);
  coop.grid = {1, 1, 1};
  EXPECT_EQ(ToHipError(CheckLaunch(no_coop, mixed, coop)), hipErrorLaunchFailure);
  m->Retire();
}

TEST(OccupancyTest, SimpleModel) {
  CodeModule* m = CodeModule::NewLoaded(ProbeCode(), "launch_probe.co", ApiModuleHooks());
  std::shared_ptr<const IsaImage> image;
  const msg::DeviceInfo d = FakeWorker::Device("gpu0");
  const co::KernelInfo& fill = Kernel(*m, "_Z4fillIiEvPT_S0_i", &image);
  const co::KernelInfo& shared = Kernel(*m, "shared_user", &image);
  ASSERT_LE(fill.vgpr_count, 64u);
  // 4 SIMDs x 8 waves x 64 lanes = 2048 threads per CU.
  EXPECT_EQ(MaxActiveBlocksPerCu(d, fill, 256, 0), 8);
  EXPECT_EQ(MaxActiveBlocksPerCu(d, fill, 100, 0), 2048 / 128);
  EXPECT_EQ(MaxActiveBlocksPerCu(d, fill, 2048, 0), 0);
  // LDS: 64 KiB per CU / 4 KiB static per block.
  EXPECT_EQ(MaxActiveBlocksPerCu(d, shared, 64, 0), 16);
  EXPECT_EQ(MaxActiveBlocksPerCu(d, shared, 64, 4096), 8);
  int grid = 0;
  int block = 0;
  MaxPotentialBlockSize(d, fill, 0, 0, &grid, &block);
  EXPECT_EQ(block, 1024);
  EXPECT_EQ(grid, 2 * 110);
  MaxPotentialBlockSize(d, fill, 0, 100, &grid, &block);
  EXPECT_EQ(block, 64);
  const hipFuncAttributes a = FunctionAttributes(d, shared);
  EXPECT_EQ(a.sharedSizeBytes, 4096u);
  EXPECT_EQ(a.maxDynamicSharedSizeBytes, 65536 - 4096);
  EXPECT_EQ(a.maxThreadsPerBlock, 1024);
  EXPECT_EQ(a.numRegs, static_cast<int>(shared.vgpr_count));
  m->Retire();
}

TEST(ModuleTest, WrongIsaIsNoBinaryForGpu) {
  CodeModule* m = CodeModule::NewLoaded(ProbeCode(), "launch_probe.co", ApiModuleHooks());
  std::shared_ptr<const IsaImage> image;
  EXPECT_EQ(ToHipError(m->Image("gfx908:sramecc+:xnack-", &image)), hipErrorNoBinaryForGpu);
  CodeModule* junk = CodeModule::NewLoaded(std::vector<uint8_t>(64, 7), "junk", ApiModuleHooks());
  EXPECT_EQ(ToHipError(junk->Image(kTarget, &image)), hipErrorInvalidImage);
  // A bare ELF (a bundle's entry) loads like the bundle.
  ASSERT_TRUE(m->Image(kTarget, &image).ok());
  CodeModule* elf =
      CodeModule::NewLoaded(std::vector<uint8_t>(image->elf.begin(), image->elf.end()), "elf", ApiModuleHooks());
  std::shared_ptr<const IsaImage> elf_image;
  ASSERT_TRUE(elf->Image(kTarget, &elf_image).ok());
  EXPECT_EQ(elf_image->sha256, image->sha256);
  m->Retire();
  junk->Retire();
  elf->Retire();
  EXPECT_EQ(ToHipError(m->Image(kTarget, &image)), hipErrorInvalidResourceHandle);
}

TEST(ModuleTest, ShippedOnceAtFirstUseAndLoadedPerSession) {
  CodeModule* m = CodeModule::NewLoaded(ProbeCode(), "launch_probe.co", ApiModuleHooks());
  std::vector<FakeWorker::ReceivedModule> loads;
  std::vector<msg::LaunchRequest> launches;
  std::vector<uint16_t> ops;
  auto script = [&](bool have_code) {
    return [&, have_code](Connection& c) {
      FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
      for (;;) {
        wire::FrameHeader h = FakeWorker::Next(c);
        ops.push_back(h.op);
        if (h.op == static_cast<uint16_t>(wire::Op::kModuleLoad)) {
          loads.push_back(FakeWorker::AnswerModuleLoad(
              c, h, [&](const msg::ModuleLoadRequest&) { return have_code; }, msg::ModuleLoadReply{}));
        } else if (h.op == static_cast<uint16_t>(wire::Op::kLaunchKernel)) {
          launches.push_back(FakeWorker::Body<msg::LaunchRequest>(c, h));
        } else {
          (void)FakeWorker::Body<msg::DeviceRequest>(c, h);
          FakeWorker::Reply(c, h, msg::CallReply{0});
          return;
        }
      }
    };
  };
  int x = 1;
  void* ptr = &x;
  void* args[] = {&ptr};
  KernelArgs a;
  a.pointers = args;
  {
    FakeWorker w;
    w.Serve(script(false));
    TestSession t(w);
    ASSERT_FALSE(t.session->dead());
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(Launch(*t.session, *m, "bounded", Spec(2, 64), a).ok());
    ASSERT_TRUE(Launch(*t.session, *m, "no_args", Spec(1, 1), KernelArgs{}).ok());
    // A refused launch never reaches the worker.
    EXPECT_EQ(ToHipError(Launch(*t.session, *m, "bounded", Spec(1, 256), a)), hipErrorLaunchFailure);
    EXPECT_EQ(ToHipError(Launch(*t.session, *m, "nope", Spec(1, 1), a)), hipErrorInvalidDeviceFunction);
    EXPECT_EQ(Sync(*t.session), 0);
    w.Join();
  }
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_TRUE(loads[0].shipped);
  EXPECT_EQ(loads[0].request.name, "launch_probe.co");
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_EQ(launches[0].kernel, "bounded");
  EXPECT_TRUE(launches[1].kernel.empty());
  EXPECT_EQ(launches[1].function, launches[0].function);
  EXPECT_EQ(launches[3].kernel, "no_args");
  EXPECT_NE(launches[3].function, launches[0].function);
  EXPECT_EQ(launches[0].module, loads[0].request.module);
  uint64_t ptr_bits = 0;
  std::memcpy(&ptr_bits, launches[0].kernarg.data(), 8);
  EXPECT_EQ(ptr_bits, reinterpret_cast<uint64_t>(ptr));
  EXPECT_EQ(ops.front(), static_cast<uint16_t>(wire::Op::kModuleLoad));

  // A new session (a forked child's, say) loads again: by name only, since
  // this worker has the code cached; ids and function names start afresh.
  const uint64_t first_module = loads[0].request.module;
  loads.clear();
  launches.clear();
  {
    FakeWorker w;
    w.Serve(script(true));
    TestSession t(w);
    ASSERT_TRUE(Launch(*t.session, *m, "bounded", Spec(2, 64), a).ok());
    EXPECT_EQ(Sync(*t.session), 0);
    w.Join();
  }
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_FALSE(loads[0].shipped);
  EXPECT_NE(loads[0].request.module, first_module);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].kernel, "bounded");
  m->Retire();
}

TEST(ModuleTest, ConcurrentFirstUseLoadsOnceAndNamesBeforeUse) {
  CodeModule* m = CodeModule::NewLoaded(ProbeCode(), "launch_probe.co", ApiModuleHooks());
  constexpr int kThreads = 8;
  constexpr int kLaunches = 300;
  int module_loads = 0;
  std::vector<msg::LaunchRequest> launches;
  std::vector<msg::StreamCreateRequest> streams;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    for (;;) {
      wire::FrameHeader h = FakeWorker::Next(c);
      if (h.op == static_cast<uint16_t>(wire::Op::kModuleLoad)) {
        ++module_loads;
        FakeWorker::AnswerModuleLoad(c, h, [](const msg::ModuleLoadRequest&) { return false; }, {});
      } else if (h.op == static_cast<uint16_t>(wire::Op::kLaunchKernel)) {
        launches.push_back(FakeWorker::Body<msg::LaunchRequest>(c, h));
      } else {
        (void)FakeWorker::Body<msg::DeviceRequest>(c, h);
        FakeWorker::Reply(c, h, msg::CallReply{0});
        return;
      }
    }
  });
  TestSession t(w);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      int x = 0;
      void* ptr = &x;
      void* args[] = {&ptr};
      KernelArgs a;
      a.pointers = args;
      for (int j = 0; j < kLaunches; ++j)
        if (!Launch(*t.session, *m, "bounded", Spec(4, 64), a).ok()) ++failures;
    });
  }
  for (auto& th : threads) th.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(Sync(*t.session), 0);
  w.Join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(module_loads, 1);
  ASSERT_EQ(launches.size(), size_t{kThreads * kLaunches});
  // The worker must learn the name before any launch that leaves it out.
  EXPECT_EQ(launches[0].kernel, "bounded");
  for (const auto& l : launches) EXPECT_EQ(l.function, launches[0].function);
  std::printf("%d launches from %d threads in %.1f ms (%.0f launches/s, first use included)\n",
              kThreads * kLaunches, kThreads, seconds * 1e3, kThreads * kLaunches / seconds);
  m->Retire();
}

TEST(ModuleTest, LoadFailuresAndUnavailableKernels) {
  CodeModule* bad = CodeModule::NewLoaded(ProbeCode(), "bad", ApiModuleHooks());
  CodeModule* partial = CodeModule::NewLoaded(ProbeCode(), "partial", ApiModuleHooks());
  int module_loads = 0;
  std::vector<msg::LaunchRequest> launches;
  std::vector<msg::StreamCreateRequest> streams;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    for (;;) {
      wire::FrameHeader h = FakeWorker::Next(c);
      if (h.op == static_cast<uint16_t>(wire::Op::kModuleLoad)) {
        msg::ModuleLoadReply r;
        if (module_loads++ == 0) {
          r.error = hipErrorInvalidImage;
          r.message = "the device rejects it";
        } else {
          r.unavailable_kernels = {"mixed"};
          r.message = "no twin for it";
        }
        FakeWorker::AnswerModuleLoad(c, h, [](const msg::ModuleLoadRequest&) { return true; }, r);
      } else if (h.op == static_cast<uint16_t>(wire::Op::kLaunchKernel)) {
        launches.push_back(FakeWorker::Body<msg::LaunchRequest>(c, h));
      } else {
        (void)FakeWorker::Body<msg::DeviceRequest>(c, h);
        FakeWorker::Reply(c, h, msg::CallReply{0});
        return;
      }
    }
  });
  TestSession t(w);
  KernelArgs none;
  // The failed load is remembered: one round trip, every launch fails.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(ToHipError(Launch(*t.session, *bad, "no_args", Spec(1, 1), none)), hipErrorInvalidImage);
  // A kernel the device cannot run fails in the client; its siblings run.
  EXPECT_EQ(ToHipError(Launch(*t.session, *partial, "no_args", Spec(1, 1), none)), hipSuccess);
  char c = 0;
  int i = 0;
  double d = 0;
  void* p = nullptr;
  Pair s{};
  short h = 0;
  void* args[] = {&c, &i, &d, &p, &s, &h};
  KernelArgs a;
  a.pointers = args;
  EXPECT_EQ(ToHipError(Launch(*t.session, *partial, "mixed", Spec(1, 1), a)), hipErrorNoBinaryForGpu);
  EXPECT_EQ(Sync(*t.session), 0);
  w.Join();
  EXPECT_EQ(module_loads, 2);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].kernel, "no_args");
  bad->Retire();
  partial->Retire();
}

TEST(RegistrationTest, ThousandsOfKernelsCostLittleAndParseNothing) {
  // The bundle pointer is garbage on purpose: registration must not read it.
  static const char not_a_bundle[16] = "not a bundle";
  struct {
    uint32_t magic, version;
    const void* binary;
    const void* unused;
  } wrapper{0x48495046, 1, not_a_bundle, nullptr};
  KernelRegistry kernels;  // Its own, not the process's: the counts are this test's.
  static char stubs[12000];
  std::vector<std::string> names(12000);
  for (size_t i = 0; i < names.size(); ++i) names[i] = "_Z6kernel" + std::to_string(i) + "Pfi";
  const auto start = std::chrono::steady_clock::now();
  CodeModule* m = kernels.RegisterFatBinary(&wrapper, ApiModuleHooks());
  ASSERT_NE(m, nullptr);
  for (size_t i = 0; i < names.size(); ++i) ASSERT_TRUE(kernels.RegisterFunction(m, &stubs[i], names[i].c_str()));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_LT(elapsed, std::chrono::milliseconds(500));
  EXPECT_EQ(kernels.CountRegistrations().kernels, 12000u);
  RegisteredKernel k;
  ASSERT_TRUE(kernels.FindRegisteredKernel(&stubs[4321], &k));
  EXPECT_EQ(*k.name, "_Z6kernel4321Pfi");
  EXPECT_EQ(k.module, m);
  wrapper.magic = 0;
  EXPECT_EQ(kernels.RegisterFatBinary(&wrapper, ApiModuleHooks()), nullptr);
  kernels.UnregisterFatBinary(m);
  EXPECT_FALSE(kernels.FindRegisteredKernel(&stubs[4321], &k));
  EXPECT_FALSE(kernels.RegisterFunction(m, &stubs[0], "late"));
}

// A __managed__ variable over the wire: its mirror holds the initial value
// from registration on; the module's load makes the device copy (a managed
// malloc filled from the mirror, its address stored in the pointer
// variable); a launch sends only what host code changed and translates a
// pointer argument into the mirror; a synchronisation after a launch reads
// the device copy back, and one with no launch in between does not.
TEST(RegistrationTest, ManagedVariableIsMirroredAttachedPushedAndReadBack) {
  struct {
    uint32_t magic, version;
    const void* binary;
    const void* unused;
  } wrapper{0x48495046, 1, nullptr, nullptr};
  std::vector<uint8_t> code = ProbeCode();
  wrapper.binary = code.data();
  CodeModule* m = Kernels().RegisterFatBinary(&wrapper, ApiModuleHooks());
  ASSERT_NE(m, nullptr);
  void* pointer = nullptr;
  const double init = 2.75;
  ASSERT_TRUE(RegisterManagedVar(m, &pointer, &init, "managed_x", sizeof init, 8));
  ASSERT_NE(pointer, nullptr);
  auto* mirror = static_cast<double*>(pointer);
  EXPECT_EQ(*mirror, 2.75);

  // Device addresses as a `hip` worker gives them (no window): the client
  // reserves their pages, so they must be free here; mmap places nothing
  // this low on x86-64 unless asked to.
  const uint64_t copy_address = 0x3f0000000000;
  const uint64_t pointer_var = copy_address + (1 << 20);
  const double device_value = 9.5;

  std::vector<msg::MallocRequest> mallocs;
  std::vector<std::pair<msg::CopyToDeviceRequest, std::vector<uint8_t>>> copies;
  std::vector<msg::CopyFromDeviceRequest> reads;
  std::vector<msg::LaunchRequest> launches;
  std::vector<msg::StreamCreateRequest> streams;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")}, {}, true);
    for (;;) {
      wire::FrameHeader h = FakeWorker::Next(c);
      switch (static_cast<wire::Op>(h.op)) {
        case wire::Op::kModuleLoad: {
          msg::ModuleLoadReply r;
          r.globals = {msg::ModuleGlobal{"managed_x", pointer_var, 8}};
          FakeWorker::AnswerModuleLoad(c, h, [](const msg::ModuleLoadRequest&) { return true; }, r);
          break;
        }
        case wire::Op::kMalloc:
          mallocs.push_back(FakeWorker::Body<msg::MallocRequest>(c, h));
          FakeWorker::Reply(c, h, msg::MallocReply{0, copy_address});
          break;
        case wire::Op::kCopyToDevice: {
          auto req = FakeWorker::Body<msg::CopyToDeviceRequest>(c, h);
          std::vector<uint8_t> bytes(req.dst.bytes());
          iovec iov{bytes.data(), bytes.size()};
          if (!ReadBulk(c, h.request_id, &iov, 1).ok()) std::abort();
          copies.emplace_back(req, bytes);
          // Host changes are pushed with blocking copies (managed_vars.h).
          if (req.want_reply) FakeWorker::Reply(c, h, msg::CallReply{0});
          break;
        }
        case wire::Op::kLaunchKernel:
          launches.push_back(FakeWorker::Body<msg::LaunchRequest>(c, h));
          break;
        case wire::Op::kStreamCreate:  // Fire-and-forget.
          streams.push_back(FakeWorker::Body<msg::StreamCreateRequest>(c, h));
          break;
        case wire::Op::kCopyFromDevice: {
          reads.push_back(FakeWorker::Body<msg::CopyFromDeviceRequest>(c, h));
          double value = device_value;
          iovec iov{&value, sizeof value};
          FakeWorker::Reply(c, h, msg::CallReply{0}, &iov, 1);
          break;
        }
        default:
          (void)FakeWorker::Body<msg::DeviceRequest>(c, h);
          FakeWorker::Reply(c, h, msg::CallReply{0});
          return;
      }
    }
  });
  TestSession t(w);
  ASSERT_TRUE(Launch(*t.session, *m, "no_args", Spec(1, 1), KernelArgs{}).ok());
  *mirror = 4.0;  // Host code writes between launches.
  int* target = reinterpret_cast<int*>(mirror);
  void* args[] = {&target};
  KernelArgs a;
  a.pointers = args;
  ASSERT_TRUE(Launch(*t.session, *m, "bounded", Spec(1, 64), a).ok());
  EXPECT_EQ(AfterSync(*t.session, 0, 0, hipSuccess), hipSuccess);
  EXPECT_EQ(*mirror, device_value) << "the device's write reached the mirror";
  EXPECT_EQ(AfterSync(*t.session, 0, 0, hipSuccess), hipSuccess);  // No launch since: no read.
  EXPECT_EQ(AfterSync(*t.session, 0, 0, hipErrorLaunchFailure), hipErrorLaunchFailure);
  EXPECT_EQ(Sync(*t.session), 0);
  w.Join();

  ASSERT_EQ(mallocs.size(), 1u);
  EXPECT_EQ(mallocs[0].flags, msg::kMallocManaged);
  EXPECT_EQ(mallocs[0].size, sizeof(double));
  ASSERT_EQ(copies.size(), 3u);
  // 1: the mirror's initial bytes into the device copy.
  EXPECT_EQ(copies[0].first.dst.address, copy_address);
  double sent = 0;
  ASSERT_EQ(copies[0].second.size(), sizeof sent);
  std::memcpy(&sent, copies[0].second.data(), sizeof sent);
  EXPECT_EQ(sent, 2.75);
  // 2: the device copy's address into the pointer variable.
  EXPECT_EQ(copies[1].first.dst.address, pointer_var);
  uint64_t stored = 0;
  ASSERT_EQ(copies[1].second.size(), sizeof stored);
  std::memcpy(&stored, copies[1].second.data(), sizeof stored);
  EXPECT_EQ(stored, copy_address);
  // 3: before the second launch, only the bytes host code changed.
  const double four = 4.0;
  const auto* four_bytes = reinterpret_cast<const uint8_t*>(&four);
  const uint64_t offset = copies[2].first.dst.address - copy_address;
  ASSERT_LT(offset, sizeof(double));
  ASSERT_LE(offset + copies[2].second.size(), sizeof(double));
  EXPECT_LT(copies[2].second.size(), sizeof(double)) << "2.75 and 4.0 share their low bytes";
  EXPECT_EQ(0, std::memcmp(copies[2].second.data(), four_bytes + offset, copies[2].second.size()));
  EXPECT_FALSE(copies[0].first.want_reply);
  EXPECT_TRUE(copies[2].first.want_reply) << "a push completes before any later work reads the bytes";
  ASSERT_EQ(launches.size(), 2u);
  uint64_t arg = 0;
  std::memcpy(&arg, launches[1].kernarg.data(), sizeof arg);
  EXPECT_EQ(arg, copy_address) << "a pointer into the mirror is sent as the device copy's address";
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].src.address, copy_address);
  // Both exchanges after the first travel on hipr's own non-blocking
  // stream, made once: never behind work queued on the null stream.
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].flags, static_cast<uint32_t>(hipStreamNonBlocking));
  EXPECT_NE(streams[0].stream, 0u);
  EXPECT_EQ(copies[2].first.stream, streams[0].stream);
  EXPECT_EQ(reads[0].stream, streams[0].stream);

  Kernels().UnregisterFatBinary(m);
  DeviceAllocation gone;
  EXPECT_FALSE(Client::Get().allocations().FindDevice(pointer_var, 0, &gone)) << "retired with its module";
  ASSERT_TRUE(Client::Get().allocations().RemoveDevice(copy_address, &gone));
  EXPECT_TRUE(gone.module_global) << "hipFree must refuse a managed variable's device copy";
  Client::Get().reservations().Release(gone.base, gone.size);
}

TEST(OutputTest, DeviceOutputIsWrittenToStdout) {
  FakeWorker w;
  w.Serve([](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
    FakeWorker::Output(c, "thread 0 says hi\n");
    FakeWorker::Heartbeat(c);
    FakeWorker::Output(c, "thread 1 says hi\n");
    FakeWorker::Reply(c, h, msg::CallReply{0});
  });
  TestSession t(w);
  ::testing::internal::CaptureStdout();
  const int32_t error = Sync(*t.session);
  const std::string out = ::testing::internal::GetCapturedStdout();
  w.Join();
  EXPECT_EQ(error, 0);
  EXPECT_EQ(out, "thread 0 says hi\nthread 1 says hi\n");
}

}  // namespace
}  // namespace hipr::client
