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
// hold. Device-specific knowledge stays in the factory.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
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
#include "worker_service/device.h"

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
      wire::kCapabilityCooperativeModuleLaunch};
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
  EXPECT_TRUE(this->dev().StreamQuery(7).ok());
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

REGISTER_TYPED_TEST_SUITE_P(DeviceConformance, DescribesItsDevices, MemoryRoundTripsAndRegionsAreChecked,
                            MemsetsAndDeviceCopies, StreamsEventsAndUnknownHandles,
                            AHostCallbackHoldsItsStreamNotTheReplay, ModulesGlobalsAndLaunches);

}  // namespace hipr::test
