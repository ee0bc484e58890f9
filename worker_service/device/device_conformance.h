// The conformance suite every Device (device.h) must pass, written once,
// the way protocol/transport_conformance.h serves transports. A device's
// test defines a factory and instantiates the suite:
//
//   struct SimDevices { static std::unique_ptr<Device> Make(); ... };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Sim, DeviceConformance, SimDevices);
//
// It drives the device through its interface alone, as a session's replay
// thread does: memory and the region checks, copies in every direction,
// memsets, streams and events, a host callback holding its stream while
// the replay goes on (a copy behind it completes only once the gate opens),
// a module of hipcc's with a global and a kernel launched with the packed
// arguments, and the errors for handles and addresses the session does not
// hold; then each facet (device_facets.h) the device has, and that it
// claims exactly the capabilities of those facets. Device-specific
// knowledge stays in the factory.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/write_watch.h"
#include "worker_service/device/argument_checks.h"
#include "worker_service/device/device.h"

namespace hipr::test {

// A typed-test parameter provides:
//   static std::unique_ptr<worker::Device> Make();  // A fresh device, window attached.
// It may fail the test through gtest assertions and return null.
class DeviceFactory {};

// The gfx90a code object of module_kernels.co (tests/e2e/module_kernels.hip,
// `hipcc --genco`), whose twin the sim finds in the build's sim-kernels.
inline std::shared_ptr<const worker::ModuleImage> TestModuleImage(const std::string& bundle_path) {
  std::ifstream f(bundle_path, std::ios::binary);
  std::vector<uint8_t> file((std::istreambuf_iterator<char>(f)), {});
  co::Bundle bundle;
  if (Status st = co::ParseBundle(file, &bundle); !st.ok()) {
    ADD_FAILURE() << bundle_path << ": " << st.ToString();
    return nullptr;
  }
  co::TargetId gfx90a;
  if (!co::ParseTargetId("gfx90a", &gfx90a).ok()) return nullptr;
  const co::BundleEntry* entry = co::SelectEntry(bundle, gfx90a);
  if (entry == nullptr) {
    ADD_FAILURE() << bundle_path << " has no gfx90a entry";
    return nullptr;
  }
  auto image = std::make_shared<worker::ModuleImage>();
  image->code.assign(entry->bytes.begin(), entry->bytes.end());
  image->sha256 = co::Sha256(image->code);
  image->name = "module_kernels.co";
  if (Status st = co::ParseCodeObject(image->code, &image->info); !st.ok()) {
    ADD_FAILURE() << st.ToString();
    return nullptr;
  }
  return image;
}

// Waits for a Device::Completion-style callback.
class Done {
 public:
  worker::Device::Completion Callback() {
    return [this](Status st) {
      std::lock_guard lock(mu_);
      status_ = std::move(st);
      cv_.notify_all();
    };
  }
  // The status, or nullopt when it has not come within `ms`.
  std::optional<Status> Wait(int ms = 30000) {
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return status_.has_value(); });
    return status_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Status> status_;
};

template <class Factory>
class DeviceConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    device_ = Factory::Make();
    ASSERT_NE(device_, nullptr);
  }
  void TearDown() override { device_.reset(); }

  worker::Device& dev() { return *device_; }

  uint64_t Malloc(uint64_t size) {
    uint64_t a = 0;
    Status st = dev().Malloc(0, size, 0, &a);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return a;
  }
  static msg::Region Linear(uint64_t address, uint64_t size) { return {address, size, size, 1}; }
  static std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 9));
    return v;
  }
  Status Write(uint64_t stream, const msg::Region& dst, const std::vector<uint8_t>& bytes) {
    size_t at = 0;
    return dev().CopyToDevice(0, stream, dst, [&](const iovec* iov, int count) {
      for (int i = 0; i < count; ++i) {
        std::memcpy(iov[i].iov_base, bytes.data() + at, iov[i].iov_len);
        at += iov[i].iov_len;
      }
      return Status::Ok();
    });
  }
  static worker::BulkIo AppendTo(std::vector<uint8_t>* out) {
    return [out](const iovec* iov, int count) {
      for (int i = 0; i < count; ++i) {
        const auto* p = static_cast<const uint8_t*>(iov[i].iov_base);
        out->insert(out->end(), p, p + iov[i].iov_len);
      }
      return Status::Ok();
    };
  }
  std::vector<uint8_t> Read(uint64_t stream, const msg::Region& src) {
    std::vector<uint8_t> out;
    Status st = dev().CopyFromDevice(0, stream, src, AppendTo(&out));
    EXPECT_TRUE(st.ok()) << st.ToString();
    return out;
  }
  Status Sync() {
    Done done;
    dev().DeviceSynchronizeAsync(0, done.Callback());
    std::optional<Status> st = done.Wait();
    return st ? *st : Status(StatusCode::kInternal, "the device synchronization did not complete in 30 s");
  }
  // The explicit arguments of `kernel`, packed at their metadata offsets.
  static std::vector<uint8_t> Pack(const co::KernelInfo& kernel, const std::vector<std::vector<uint8_t>>& values) {
    std::vector<uint8_t> out(kernel.explicit_kernarg_size());
    size_t i = 0;
    for (const co::KernelArg& a : kernel.args) {
      if (a.hidden()) continue;
      EXPECT_LT(i, values.size());
      EXPECT_EQ(values[i].size(), a.size) << "argument " << i << " of " << kernel.name;
      std::memcpy(out.data() + a.offset, values[i].data(), std::min<size_t>(a.size, values[i].size()));
      ++i;
    }
    return out;
  }
  template <class T>
  static std::vector<uint8_t> Arg(T v) {
    std::vector<uint8_t> b(sizeof v);
    std::memcpy(b.data(), &v, sizeof v);
    return b;
  }

  std::unique_ptr<worker::Device> device_;
};

TYPED_TEST_SUITE_P(DeviceConformance);

TYPED_TEST_P(DeviceConformance, DescribesItsDevices) {
  ASSERT_FALSE(this->dev().devices().empty());
  for (const msg::DeviceInfo& d : this->dev().devices()) {
    EXPECT_FALSE(d.name.empty());
    EXPECT_EQ(d.gcn_arch_name.rfind("gfx", 0), 0u) << d.gcn_arch_name;
    EXPECT_GT(d.total_global_mem, 0u);
    EXPECT_GT(d.multi_processor_count, 0);
  }
  EXPECT_GT(this->dev().runtime_version(), 0);
  EXPECT_FALSE(this->dev().kind().empty());
  const std::vector<std::string> known = {
      wire::kCapabilityIpcMemory, wire::kCapabilityIpcEvents,       wire::kCapabilityVirtualMemory,
      wire::kCapabilityShareableMemory, wire::kCapabilityTextures, wire::kCapabilityHostRegister,
      wire::kCapabilityMemoryLease,     wire::kCapabilityCooperativeModuleLaunch};
  for (const std::string& c : this->dev().capabilities())
    EXPECT_NE(std::find(known.begin(), known.end(), c), known.end()) << "unknown capability " << c;
}

TYPED_TEST_P(DeviceConformance, MemoryRoundTripsAndRegionsAreChecked) {
  for (uint64_t size : {uint64_t{1}, uint64_t{4097}, uint64_t{5} << 20}) {
    const uint64_t a = this->Malloc(size);
    ASSERT_NE(a, 0u);
    const auto bytes = this->Pattern(size, static_cast<uint8_t>(size));
    ASSERT_TRUE(this->Write(0, this->Linear(a, size), bytes).ok());
    EXPECT_EQ(this->Read(0, this->Linear(a, size)), bytes) << size << " bytes";
    EXPECT_TRUE(this->dev().CheckRegion(this->Linear(a, size)).ok());
    // Past its end (devices may round a size up: well past).
    EXPECT_EQ(this->dev().CheckRegion(this->Linear(a, size + (256 << 20))).code(), StatusCode::kInvalidDevicePointer);
    EXPECT_TRUE(this->dev().Free(a).ok());
    EXPECT_FALSE(this->dev().Free(a).ok()) << "a second free";
  }
  // Nothing of this session at all.
  EXPECT_FALSE(this->dev().CheckRegion(this->Linear(0x1000, 16)).ok());
  std::vector<uint8_t> none;
  EXPECT_FALSE(this->dev().CopyFromDevice(0, 0, this->Linear(0x1000, 16), this->AppendTo(&none)).ok());
  EXPECT_TRUE(none.empty()) << "a refused copy drained bytes";
  uint64_t a = 0;
  EXPECT_EQ(this->dev().Malloc(static_cast<int>(this->dev().devices().size()), 64, 0, &a).code(),
            StatusCode::kInvalidDevice);
}

TYPED_TEST_P(DeviceConformance, MemsetsAndDeviceCopies) {
  constexpr uint64_t kWidth = 96, kPitch = 128, kRows = 5;
  const uint64_t a = this->Malloc(kPitch * kRows);
  const uint64_t b = this->Malloc(kPitch * kRows);
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(a, kPitch * kRows), 0xab, 1).ok());
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(b, kPitch * kRows), 0, 1).ok());
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(a, 8), 0x01020304, 4).ok());
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(a + 8, 4), 0xbeef, 2).ok());
  EXPECT_FALSE(this->dev().Memset(0, 0, this->Linear(a, 6), 1, 3).ok()) << "element size 3";
  // A pitched 2-D copy: rows of kWidth, kPitch apart.
  const msg::Region rows_a{a, kPitch, kWidth, kRows};
  const msg::Region rows_b{b, kPitch, kWidth, kRows};
  ASSERT_TRUE(this->dev().CopyOnDevice(0, 0, rows_b, rows_a).ok());
  ASSERT_TRUE(this->Sync().ok());
  const std::vector<uint8_t> got = this->Read(0, this->Linear(b, kPitch * kRows));
  ASSERT_EQ(got.size(), kPitch * kRows);
  const uint8_t head[12] = {4, 3, 2, 1, 4, 3, 2, 1, 0xef, 0xbe, 0xef, 0xbe};
  EXPECT_EQ(std::memcmp(got.data(), head, sizeof head), 0);
  for (uint64_t r = 0; r < kRows; ++r)
    for (uint64_t c = 0; c < kPitch; ++c) {
      if (r == 0 && c < sizeof head) continue;
      const uint8_t want = c < kWidth ? 0xab : 0;
      ASSERT_EQ(got[r * kPitch + c], want) << "row " << r << " column " << c;
    }
}

TYPED_TEST_P(DeviceConformance, StreamsEventsAndUnknownHandles) {
  const uint64_t a = this->Malloc(1 << 20);
  ASSERT_TRUE(this->dev().StreamCreate(0, 7, 0, 0, {}).ok());
  EXPECT_FALSE(this->dev().StreamCreate(0, 7, 0, 0, {}).ok()) << "a stream id in use";
  ASSERT_TRUE(this->dev().EventCreate(0, 11, 0).ok());
  ASSERT_TRUE(this->dev().EventCreate(0, 12, 0).ok());
  EXPECT_FALSE(this->dev().EventCreate(0, 11, 0).ok()) << "an event id in use";
  ASSERT_TRUE(this->dev().EventRecord(11, 7).ok());
  ASSERT_TRUE(this->dev().Memset(0, 7, this->Linear(a, 1 << 20), 0x5a, 1).ok());
  ASSERT_TRUE(this->dev().EventRecord(12, 7).ok());
  Done done;
  this->dev().EventSynchronizeAsync(12, done.Callback());
  std::optional<Status> st = done.Wait();
  ASSERT_TRUE(st.has_value() && st->ok()) << (st ? st->ToString() : "no completion");
  EXPECT_TRUE(this->dev().EventQuery(12).ok());
  EXPECT_TRUE(this->dev().StreamQuery(0, 7).ok());
  float ms = -1;
  ASSERT_TRUE(this->dev().EventElapsedTime(11, 12, &ms).ok());
  EXPECT_GE(ms, 0.0f);
  const std::vector<uint8_t> got = this->Read(7, this->Linear(a + (1 << 19), 16));
  EXPECT_EQ(got, std::vector<uint8_t>(16, 0x5a));
  // Handles this session does not hold.
  EXPECT_EQ(this->dev().StreamDestroy(99).code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(this->dev().EventDestroy(99).code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(this->dev().EventRecord(99, 7).code(), StatusCode::kInvalidHandle);
  EXPECT_FALSE(this->dev().EventRecord(11, 98).ok()) << "recorded on a stream it does not hold";
  EXPECT_EQ(this->dev().UnloadModule(99).code(), StatusCode::kInvalidHandle);
  EXPECT_TRUE(this->dev().EventDestroy(11).ok());
  EXPECT_TRUE(this->dev().EventDestroy(12).ok());
  EXPECT_TRUE(this->dev().StreamDestroy(7).ok());
}

// A host callback holds its stream until its gate opens; meanwhile the
// calls return at once (the replay goes on), and a copy queued behind the
// callback completes, with the bytes written after it, only then.
TYPED_TEST_P(DeviceConformance, AHostCallbackHoldsItsStreamNotTheReplay) {
  constexpr uint64_t kBytes = 64 << 10;
  const uint64_t a = this->Malloc(kBytes);
  ASSERT_TRUE(this->dev().StreamCreate(0, 3, 0x1 /* non-blocking */, 0, {}).ok());
  ASSERT_TRUE(this->dev().Memset(0, 3, this->Linear(a, kBytes), 0x11, 1).ok());
  auto gate = std::make_shared<worker::HostGate>();
  Done reached;
  ASSERT_TRUE(this->dev().StreamHostCallback(0, 3, reached.Callback(), gate).ok());
  ASSERT_TRUE(this->Write(3, this->Linear(a, kBytes), std::vector<uint8_t>(kBytes, 0x22)).ok());
  std::mutex mu;
  std::condition_variable cv;
  std::optional<Status> copied;
  std::vector<uint8_t> bytes;
  this->dev().CopyFromDeviceAsync(0, 3, this->Linear(a, kBytes),
                                  [&](Status st, const worker::Device::RegionReader& read) {
                                    std::vector<uint8_t> got;
                                    if (st.ok() && read) st = read(this->AppendTo(&got));
                                    std::lock_guard lock(mu);
                                    copied = st;
                                    bytes = std::move(got);
                                    cv.notify_all();
                                  });
  std::optional<Status> at = reached.Wait();
  ASSERT_TRUE(at.has_value() && at->ok()) << "the callback was not reached";
  // Other work goes on while the stream is held.
  const uint64_t b = this->Malloc(4096);
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(b, 4096), 0x33, 1).ok());
  EXPECT_EQ(this->Read(0, this->Linear(b, 8)), std::vector<uint8_t>(8, 0x33));
  {
    std::unique_lock lock(mu);
    EXPECT_FALSE(cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return copied.has_value(); }))
        << "the copy behind a held callback completed before its gate opened";
  }
  gate->Open();
  std::unique_lock lock(mu);
  ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return copied.has_value(); }));
  ASSERT_TRUE(copied->ok()) << copied->ToString();
  EXPECT_EQ(bytes, std::vector<uint8_t>(kBytes, 0x22));
  lock.unlock();
  EXPECT_TRUE(this->dev().StreamDestroy(3).ok());
}

// hipcc's code object: its global is device memory of the session (copies
// reach it), add_vec runs with the packed arguments, and an unloaded
// module's global and kernels are gone.
TYPED_TEST_P(DeviceConformance, ModulesGlobalsAndLaunches) {
  auto image = TestModuleImage(HIPR_TEST_MODULE_CO);
  ASSERT_NE(image, nullptr);
  const co::KernelInfo* add_vec = image->info.FindKernel("add_vec");
  ASSERT_NE(add_vec, nullptr);
  worker::ModuleLoadResult loaded;
  Status st = this->dev().LoadModule(0, 5, image, &loaded);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const msg::ModuleGlobal* scale = nullptr;
  for (const msg::ModuleGlobal& g : loaded.globals)
    if (g.name == "module_scale") scale = &g;
  ASSERT_NE(scale, nullptr);
  ASSERT_EQ(scale->size, sizeof(float));
  const float three = 3.0f;
  ASSERT_TRUE(this->Write(0, this->Linear(scale->address, 4), this->Arg(three)).ok()) << "a copy into a global";
  EXPECT_EQ(this->Read(0, this->Linear(scale->address, 4)), this->Arg(three));

  constexpr int kN = 1000;
  std::vector<float> x(kN), y(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = static_cast<float>(2 * i);
  }
  const uint64_t bytes = kN * sizeof(float);
  const uint64_t a = this->Malloc(bytes), b = this->Malloc(bytes), c = this->Malloc(bytes);
  auto raw = [](const std::vector<float>& v) {
    return std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(v.data()),
                                reinterpret_cast<const uint8_t*>(v.data()) + v.size() * sizeof(float));
  };
  ASSERT_TRUE(this->Write(0, this->Linear(a, bytes), raw(x)).ok());
  ASSERT_TRUE(this->Write(0, this->Linear(b, bytes), raw(y)).ok());
  worker::KernelLaunch l;
  l.module = 5;
  l.kernel = "add_vec";
  l.grid = {(kN + 255) / 256, 1, 1};
  l.block = {256, 1, 1};
  l.kernarg = this->Pack(*add_vec, {this->Arg(a), this->Arg(b), this->Arg(c), this->Arg(kN)});
  st = this->dev().LaunchKernel(l);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(this->Sync().ok());
  const std::vector<uint8_t> got = this->Read(0, this->Linear(c, bytes));
  ASSERT_EQ(got.size(), bytes);
  for (int i = 0; i < kN; ++i) {
    float v = 0;
    std::memcpy(&v, got.data() + i * sizeof v, sizeof v);
    ASSERT_EQ(v, 3.0f * i) << "c[" << i << "]";
  }
  l.module = 77;
  EXPECT_EQ(this->dev().LaunchKernel(l).code(), StatusCode::kInvalidHandle);
  ASSERT_TRUE(this->dev().UnloadModule(5).ok());
  EXPECT_EQ(this->dev().UnloadModule(5).code(), StatusCode::kInvalidHandle);
  ASSERT_TRUE(this->Sync().ok());
  EXPECT_FALSE(this->dev().CheckRegion(this->Linear(scale->address, 4)).ok()) << "an unloaded module's global";
}

// The core calls no other test here makes: memory figures, the blocking
// synchronizations, stream waits on events and on values, writes of values,
// the memory account, a reset, and the generated calls. (Not the output
// sink: the hip device takes this process's stdout for it, gtest's too;
// the e2e printf scenarios cover it.)
TYPED_TEST_P(DeviceConformance, TheRestOfTheCore) {
  worker::Device& d = this->dev();
  EXPECT_GT(d.driver_version(), 0);
  ASSERT_NE(&d.api(), nullptr);
  struct Account : worker::MemoryAccount {
    Status Charge(uint64_t bytes) override {
      charged += bytes;
      return Status::Ok();
    }
    void Refund(uint64_t bytes) override { charged -= bytes; }
    std::atomic<uint64_t> charged{0};
  } account;
  d.SetMemoryAccount(&account);
  uint64_t free_before = 0, total = 0;
  ASSERT_TRUE(d.MemInfo(0, &free_before, &total).ok());
  EXPECT_GT(total, 0u);
  EXPECT_LE(free_before, total);
  const uint64_t a = this->Malloc(1 << 20);
  uint64_t free_after = 0;
  ASSERT_TRUE(d.MemInfo(0, &free_after, &total).ok());
  EXPECT_LE(free_after, free_before) << "an allocation left more memory free";

  // Stream 4 waits on an event recorded on stream 5 behind a memset, then
  // on a value stream 5 writes; what 4 reads afterwards is what 5 wrote.
  ASSERT_TRUE(d.StreamCreate(0, 4, 0x1, 0, {}).ok());
  ASSERT_TRUE(d.StreamCreate(0, 5, 0x1, 0, {}).ok());
  ASSERT_TRUE(d.EventCreate(0, 21, 0).ok());
  ASSERT_TRUE(d.Memset(0, 5, this->Linear(a, 1 << 20), 0x44, 1).ok());
  ASSERT_TRUE(d.EventRecord(21, 5).ok());
  ASSERT_TRUE(d.StreamWaitEvent(0, 4, 21, 0).ok());
  ASSERT_TRUE(d.StreamWriteValue(0, 5, a + 64, 7, 4).ok());
  ASSERT_TRUE(d.StreamWaitValue(0, 4, a + 64, 7, 0xffffffffu, 0 /* >= */, 4).ok());
  ASSERT_TRUE(d.StreamSynchronize(0, 5).ok());
  ASSERT_TRUE(d.StreamSynchronize(0, 4).ok());
  ASSERT_TRUE(d.EventSynchronize(21).ok());
  EXPECT_EQ(this->Read(4, this->Linear(a + 64, 8)), (std::vector<uint8_t>{7, 0, 0, 0, 0x44, 0x44, 0x44, 0x44}));
  Done synced;
  d.StreamSynchronizeAsync(0, 4, synced.Callback());
  std::optional<Status> st = synced.Wait();
  ASSERT_TRUE(st.has_value() && st->ok()) << (st ? st->ToString() : "no completion");
  EXPECT_EQ(d.StreamSynchronize(0, 98).code(), StatusCode::kInvalidHandle);
  EXPECT_TRUE(d.EventDestroy(21).ok());
  EXPECT_TRUE(d.StreamDestroy(4).ok());
  EXPECT_TRUE(d.StreamDestroy(5).ok());
  ASSERT_TRUE(d.DeviceSynchronize(0).ok());
  EXPECT_TRUE(d.Free(a).ok());
  EXPECT_TRUE(d.DeviceReset(0).ok());
  d.SetMemoryAccount(nullptr);
}

// Requests HIP would refuse are refused before anything runs, with the
// status and words of the one set of checks every device shares
// (argument_checks.h): a device that skipped one, or wrote its own, fails.
TYPED_TEST_P(DeviceConformance, RefusesBadArgumentsWithTheSharedChecks) {
  worker::Device& d = this->dev();
  const uint64_t a = this->Malloc(1 << 16);
  ASSERT_TRUE(d.StreamCreate(0, 3, 0, 0, {}).ok());
  ASSERT_TRUE(d.EventCreate(0, 31, 0).ok());
  auto same = [](const Status& got, const Status& want) {
    EXPECT_FALSE(want.ok());
    EXPECT_EQ(got.code(), want.code()) << got.ToString();
    EXPECT_EQ(got.message(), want.message());
  };
  same(d.Memset(0, 3, this->Linear(a, 6), 1, 3), worker::CheckMemset(this->Linear(a, 6), 3));
  same(d.Memset(0, 3, this->Linear(a, 6), 1, 4), worker::CheckMemset(this->Linear(a, 6), 4));
  same(d.StreamWaitValue(0, 3, a, 1, ~0ull, 0, 5), worker::CheckStreamValue(a, 5));
  same(d.StreamWaitValue(0, 3, a + 2, 1, ~0ull, 0, 4), worker::CheckStreamValue(a + 2, 4));
  same(d.StreamWaitValue(0, 3, a, 1, ~0ull, 7, 4), worker::CheckWaitCondition(7));
  same(d.StreamWriteValue(0, 3, a + 4, 1, 8), worker::CheckStreamValue(a + 4, 8));
  // A source smaller than the destination: the copy would read past what
  // was checked of it.
  same(d.CopyOnDevice(0, 3, msg::Region{a, 256, 256, 4}, msg::Region{a + 4096, 256, 256, 2}),
       worker::CheckCopyShapes(msg::Region{a, 256, 256, 4}, msg::Region{a + 4096, 256, 256, 2}));
  same(d.StreamCreate(0, 0, 0, 0, {}), worker::CheckNewId("stream", 0, false));
  same(d.StreamCreate(0, 3, 0, 0, {}), worker::CheckNewId("stream", 3, true));
  same(d.StreamCreate(0, 4, 0x80, 0, {}), worker::CheckStreamFlags(0x80));
  same(d.EventCreate(0, 0, 0), worker::CheckNewId("event", 0, false));
  same(d.EventCreate(0, 31, 0), worker::CheckNewId("event", 31, true));
  if (d.textures() != nullptr) same(d.textures()->DestroyTexture(12345), worker::UnknownTexture());
  // Nothing refused ran: the memory still reads as it was written.
  ASSERT_TRUE(d.Memset(0, 3, this->Linear(a, 64), 0x11, 1).ok());
  ASSERT_TRUE(d.StreamSynchronize(0, 3).ok());
  EXPECT_EQ(this->Read(3, this->Linear(a, 64)), std::vector<uint8_t>(64, 0x11));
  EXPECT_TRUE(d.EventDestroy(31).ok());
  EXPECT_TRUE(d.StreamDestroy(3).ok());
  EXPECT_TRUE(d.Free(a).ok());
}

// Each facet (device_facets.h) the device has is exercised; one it lacks
// must not be claimed (the session refuses its calls: device_facets_test).
TYPED_TEST_P(DeviceConformance, CapabilitiesAreTheFacetsPresent) {
  worker::Device& d = this->dev();
  const std::vector<std::string> caps = d.capabilities();
  auto has = [&](const char* c) { return std::find(caps.begin(), caps.end(), c) != caps.end(); };
  EXPECT_EQ(has(wire::kCapabilityIpcMemory), d.ipc() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityIpcEvents), d.ipc() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityVirtualMemory), d.vmm() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityShareableMemory), d.vmm() != nullptr && d.shareable() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityTextures), d.textures() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityHostRegister), d.host_register() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityMemoryLease), d.memory_lease() != nullptr);
  EXPECT_EQ(has(wire::kCapabilityCooperativeModuleLaunch), d.cooperative_module_launch());
}

TYPED_TEST_P(DeviceConformance, IpcFacet) {
  worker::IpcFacet* ipc = this->dev().ipc();
  if (ipc == nullptr) GTEST_SKIP() << "no IPC facet";
  const uint64_t a = this->Malloc(64 << 10);
  worker::IpcHandle handle{};
  ASSERT_TRUE(ipc->IpcGetMemHandle(a + 4096, &handle).ok());
  EXPECT_NE(handle, worker::IpcHandle{}) << "an empty handle";
  EXPECT_FALSE(ipc->IpcGetMemHandle(0x1000, &handle).ok()) << "not device memory of this session";
  uint64_t address = 0, base = 0, size = 0;
  worker::IpcHandle forged{};
  forged.fill(0x5c);
  EXPECT_FALSE(ipc->IpcOpenMemHandle(0, forged, 0, &address, &base, &size).ok()) << "a forged handle opened";
  EXPECT_FALSE(ipc->IpcCloseMemHandle(a).ok()) << "closed memory that was never opened";
  ASSERT_TRUE(this->dev().EventCreate(0, 31, 0).ok());
  ASSERT_TRUE(this->dev().EventCreate(0, 32, 0x2 | 0x4 /* disable timing, interprocess */).ok());
  worker::IpcEventHandle event{};
  EXPECT_FALSE(ipc->IpcGetEventHandle(31, &event).ok()) << "an event made without hipEventInterprocess";
  ASSERT_TRUE(ipc->IpcGetEventHandle(32, &event).ok());
  worker::IpcEventHandle forged_event{};
  forged_event.fill(0x5c);
  EXPECT_FALSE(ipc->IpcOpenEventHandle(0, 33, forged_event).ok()) << "a forged event handle opened";
  EXPECT_TRUE(this->dev().EventDestroy(31).ok());
  EXPECT_TRUE(this->dev().EventDestroy(32).ok());
}

TYPED_TEST_P(DeviceConformance, MemoryLeaseFacet) {
  worker::MemoryLeaseFacet* lease = this->dev().memory_lease();
  if (lease == nullptr) GTEST_SKIP() << "no memory lease facet";
  worker::Device& d = this->dev();
  uint64_t free0 = 0, total = 0;
  ASSERT_TRUE(d.MemInfo(0, &free0, &total).ok());
  uint64_t base = 0, size = 0, g = 0;
  EXPECT_EQ(lease->Lease(0, total + 1, total + 1, &base, &size, &g).code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(lease->Lease(0, 4096, 1 << 20, &base, &size, &g).ok());
  ASSERT_NE(base, 0u);
  ASSERT_GT(g, 0u);
  EXPECT_GE(size, 4096u);
  EXPECT_LE(size, uint64_t{1} << 20);
  uint64_t free1 = 0;
  ASSERT_TRUE(d.MemInfo(0, &free1, &total).ok());
  EXPECT_EQ(free1, free0 - size) << "the lease is charged as allocated memory";
  // Unplaced, it is no memory anyone may touch.
  EXPECT_FALSE(d.CheckRegion(this->Linear(base, 16)).ok());
  EXPECT_FALSE(d.Free(base).ok());
  const uint64_t placed = std::max<uint64_t>(g, 4096);
  ASSERT_TRUE(lease->PlaceInLease(0, base, placed).ok());
  EXPECT_FALSE(lease->PlaceInLease(0, base, placed).ok()) << "placed twice";
  EXPECT_FALSE(lease->PlaceInLease(0, base + size, g).ok()) << "past the lease";
  EXPECT_FALSE(lease->PlaceInLease(0, 0x1000, g).ok()) << "nowhere near it";
  EXPECT_FALSE(lease->PlaceInLease(0, ~uint64_t{0} - 4095, 2 * g).ok()) << "wrapping past the end of memory";
  const auto bytes = this->Pattern(placed, 7);
  ASSERT_TRUE(this->Write(0, this->Linear(base, placed), bytes).ok());
  EXPECT_EQ(this->Read(0, this->Linear(base, placed)), bytes);
  ASSERT_TRUE(lease->ReturnLease(0).ok());
  uint64_t free2 = 0;
  ASSERT_TRUE(d.MemInfo(0, &free2, &total).ok());
  EXPECT_EQ(free2, free0 - placed) << "the rest went back; the placed allocation stays";
  if (size > placed) {
    EXPECT_FALSE(lease->PlaceInLease(0, base + placed, g).ok()) << "placed in a returned lease";
  }
  EXPECT_TRUE(d.Free(base).ok()) << "a placed allocation is freed as hipMalloc's";
  // A new lease replaces the previous one.
  uint64_t b1 = 0, b2 = 0;
  ASSERT_TRUE(lease->Lease(0, 4096, 64 << 10, &b1, &size, &g).ok());
  ASSERT_TRUE(lease->Lease(0, 4096, 64 << 10, &b2, &size, &g).ok());
  EXPECT_FALSE(lease->PlaceInLease(0, b1, g).ok() && b1 != b2) << "placed in a replaced lease";
  ASSERT_TRUE(lease->ReturnLease(0).ok());
  EXPECT_EQ(lease->Lease(static_cast<int>(d.devices().size()), 4096, 4096, &base, &size, &g).code(),
            StatusCode::kInvalidDevice);
}

TYPED_TEST_P(DeviceConformance, VirtualMemoryFacet) {
  worker::VirtualMemoryFacet* vmm = this->dev().vmm();
  if (vmm == nullptr) GTEST_SKIP() << "no virtual memory facet";
  const uint64_t g = std::max<uint64_t>(this->dev().devices().at(0).vmm_granularity, 4096);
  uint64_t r = 0;
  ASSERT_TRUE(vmm->VmmReserve(4 * g, 0, 0, &r).ok());
  ASSERT_NE(r, 0u);
  ASSERT_TRUE(vmm->VmmCreate(0, 41, 4 * g).ok());
  ASSERT_TRUE(vmm->VmmMap(r, 4 * g, 0, 41).ok());
  const std::vector<msg::VmmAccess> rw = {{0, 3}};
  ASSERT_TRUE(vmm->VmmSetAccess(r, 4 * g, rw).ok());
  const auto bytes = this->Pattern(4 * g, 9);
  ASSERT_TRUE(this->Write(0, this->Linear(r, 4 * g), bytes).ok());
  EXPECT_EQ(this->Read(0, this->Linear(r, 4 * g)), bytes);
  ASSERT_TRUE(vmm->VmmRelease(41).ok()) << "released while mapped: lives on";
  Done unmapped;
  vmm->VmmUnmapAsync(r, 4 * g, unmapped.Callback());
  std::optional<Status> st = unmapped.Wait();
  ASSERT_TRUE(st.has_value() && st->ok()) << (st ? st->ToString() : "no completion");
  EXPECT_FALSE(this->dev().CheckRegion(this->Linear(r, 16)).ok()) << "an unmapped range";
  EXPECT_TRUE(vmm->VmmFree(r, 4 * g).ok());
  EXPECT_FALSE(vmm->VmmFree(r, 4 * g).ok()) << "a second free";
  EXPECT_FALSE(vmm->VmmRelease(41).ok()) << "a second release";
  EXPECT_FALSE(vmm->VmmMap(r, 4 * g, 0, 99).ok()) << "an unknown handle mapped into a freed range";
}

TYPED_TEST_P(DeviceConformance, ShareableMemoryFacet) {
  worker::ShareableMemoryFacet* shareable = this->dev().shareable();
  worker::VirtualMemoryFacet* vmm = this->dev().vmm();
  if (shareable == nullptr || vmm == nullptr) GTEST_SKIP() << "no shareable memory facet";
  const uint64_t g = std::max<uint64_t>(this->dev().devices().at(0).vmm_granularity, 4096);
  ASSERT_TRUE(vmm->VmmCreate(0, 51, g).ok());
  worker::IpcHandle token{};
  ASSERT_TRUE(shareable->VmmExport(51, &token).ok());
  EXPECT_FALSE(shareable->VmmExport(52, &token).ok()) << "exported a handle it does not hold";
  worker::IpcHandle forged{};
  forged.fill(0x5c);
  uint64_t size = 0;
  EXPECT_FALSE(shareable->VmmImport(0, 53, forged, &size).ok()) << "a forged name imported";
  EXPECT_TRUE(vmm->VmmRelease(51).ok());
}

TYPED_TEST_P(DeviceConformance, TextureFacet) {
  worker::TextureFacet* textures = this->dev().textures();
  if (textures == nullptr) GTEST_SKIP() << "no texture facet";
  const uint64_t a = this->Malloc(256 * 4);
  msg::TextureCreateRequest r;
  r.shape = msg::kTexturePitch2D;
  r.memory = msg::Region{a, 256, 16 * 4, 4};  // 16 floats per row, 4 rows.
  r.channel_bits = {32, 0, 0, 0};
  r.channel_kind = 2;  // hipChannelFormatKindFloat.
  uint64_t handle = 0;
  Status st = textures->CreateTexture(r, &handle);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(handle, 0u);
  msg::TextureCreateRequest outside = r;
  outside.memory.address = 0x1000;
  uint64_t none = 0;
  EXPECT_FALSE(textures->CreateTexture(outside, &none).ok()) << "a texture over memory the session does not hold";
  EXPECT_TRUE(textures->DestroyTexture(handle).ok());
  EXPECT_FALSE(textures->DestroyTexture(handle).ok()) << "destroyed twice";
}

TYPED_TEST_P(DeviceConformance, HostRegisterFacet) {
  worker::HostRegisterFacet* pinned = this->dev().host_register();
  if (pinned == nullptr) GTEST_SKIP() << "no host registration facet";
  constexpr uint64_t kBytes = 64 << 10;
  void* host = mmap(nullptr, 2 * kBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(host, MAP_FAILED);
  auto* in = static_cast<uint8_t*>(host);
  uint8_t* out = in + kBytes;
  const auto bytes = this->Pattern(kBytes, 3);
  std::memcpy(in, bytes.data(), kBytes);
  ASSERT_TRUE(pinned->RegisterHost(in, 2 * kBytes).ok());
  const uint64_t a = this->Malloc(kBytes);
  ASSERT_TRUE(pinned->CopyHostToDevice(0, 0, this->Linear(a, kBytes), in, kBytes).ok());
  ASSERT_TRUE(pinned->CopyDeviceToHost(0, 0, out, kBytes, this->Linear(a, kBytes)).ok());
  ASSERT_TRUE(this->Sync().ok());
  EXPECT_EQ(std::memcmp(out, bytes.data(), kBytes), 0) << "the bytes did not come back through registered memory";
  EXPECT_FALSE(pinned->CopyHostToDevice(0, 0, this->Linear(0x1000, 16), in, 16).ok()) << "into memory not held";
  EXPECT_TRUE(pinned->UnregisterHost(in, 2 * kBytes).ok());
  munmap(host, 2 * kBytes);
}

TYPED_TEST_P(DeviceConformance, BulkMemoryFacet) {
  worker::BulkMemoryFacet* bulk = this->dev().bulk_memory();
  if (bulk == nullptr) GTEST_SKIP() << "no bulk memory facet";
  bulk->SetForgetMemoryHook([](const void*, size_t) {});
  // Buffers the device hands a copy stay; a buffer of the caller's does not.
  const uint64_t a = this->Malloc(1 << 20);
  bool stays = false;
  std::vector<uint8_t> out;
  ASSERT_TRUE(this->dev()
                  .CopyFromDevice(0, 0, this->Linear(a, 1 << 20),
                                  [&](const iovec* iov, int count) {
                                    stays = bulk->BulkMemoryStays(iov, count);
                                    return this->AppendTo(&out)(iov, count);
                                  })
                  .ok());
  EXPECT_TRUE(stays) << "the device's own buffers were reported as transient";
  uint8_t mine[64];
  const iovec transient{mine, sizeof mine};
  EXPECT_FALSE(bulk->BulkMemoryStays(&transient, 1)) << "a caller's stack buffer was reported as staying";
  bulk->SetForgetMemoryHook(nullptr);
}

TYPED_TEST_P(DeviceConformance, WriteWatchFacet) {
  worker::WriteWatchFacet* watch = this->dev().write_watch();
  if (watch == nullptr) GTEST_SKIP() << "no write watch facet";
  std::string why;
  if (WriteWatch::Open(&why) == nullptr) GTEST_SKIP() << "the kernel offers no write tracking: " << why;
  using Runs = std::vector<std::pair<uint64_t, uint64_t>>;
  constexpr uint64_t kPage = 4096, kBytes = 16 * kPage;
  uint64_t a = 0;
  ASSERT_TRUE(this->dev().Malloc(0, kBytes, msg::kMallocManaged, &a).ok());
  Runs runs{{1, 1}};
  ASSERT_TRUE(watch->TakeWritten(a, kBytes, &runs).ok());
  EXPECT_EQ(runs, Runs{}) << "a fresh managed allocation has nothing written";
  // Whatever writes device memory counts: a copy, a memset.
  ASSERT_TRUE(this->Write(0, this->Linear(a + 3 * kPage + 5, 10), this->Pattern(10, 1)).ok());
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(a + 10 * kPage, 8), 7, 1).ok());
  ASSERT_TRUE(this->Sync().ok());
  ASSERT_TRUE(watch->TakeWritten(a, kBytes, &runs).ok());
  EXPECT_EQ(runs, (Runs{{3 * kPage, kPage}, {10 * kPage, kPage}}));
  ASSERT_TRUE(watch->TakeWritten(a, kBytes, &runs).ok());
  EXPECT_EQ(runs, Runs{}) << "taken runs are unwritten again";
  // Part of the allocation: runs relative to the region, clipped to it.
  ASSERT_TRUE(this->dev().Memset(0, 0, this->Linear(a, 8), 1, 1).ok());
  ASSERT_TRUE(this->Sync().ok());
  ASSERT_TRUE(watch->TakeWritten(a + 100, 2 * kPage, &runs).ok());
  EXPECT_EQ(runs, (Runs{{0, kPage - 100}}));
  // Memory that is not managed cannot be told about.
  const uint64_t plain = this->Malloc(kBytes);
  EXPECT_FALSE(watch->TakeWritten(plain, kBytes, &runs).ok());
  EXPECT_FALSE(watch->TakeWritten(a, kBytes + kPage, &runs).ok()) << "past the allocation";
  // Exported for IPC, the memory is written through other mappings too.
  if (worker::IpcFacet* ipc = this->dev().ipc()) {
    worker::IpcHandle handle{};
    ASSERT_TRUE(ipc->IpcGetMemHandle(a, &handle).ok());
    EXPECT_FALSE(watch->TakeWritten(a, kBytes, &runs).ok()) << "an exported allocation is no longer watched";
  }
  EXPECT_TRUE(this->dev().Free(a).ok());
}

REGISTER_TYPED_TEST_SUITE_P(DeviceConformance, DescribesItsDevices, MemoryRoundTripsAndRegionsAreChecked,
                            MemsetsAndDeviceCopies, StreamsEventsAndUnknownHandles,
                            AHostCallbackHoldsItsStreamNotTheReplay, ModulesGlobalsAndLaunches, TheRestOfTheCore,
                            RefusesBadArgumentsWithTheSharedChecks, CapabilitiesAreTheFacetsPresent, IpcFacet,
                            MemoryLeaseFacet, VirtualMemoryFacet, ShareableMemoryFacet,
                            TextureFacet, HostRegisterFacet, BulkMemoryFacet, WriteWatchFacet);

}  // namespace hipr::test
