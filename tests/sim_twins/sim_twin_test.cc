// Kernel twins without a worker or a wire: each test program is built by
// the real hipcc, its twin by hipr_add_sim_twin(); the test parses the
// program's gfx90a code object with hipr_code_object, opens the twin through
// TwinCatalog, packs arguments at the metadata's offsets and launches through
// KernelRunner, with ordinary host memory standing in for device memory.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <thread>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/host_fatbin.h"
#include "tests/sim_twins/twin_bits_reference.h"
#include "tests/sim_twins/twin_bits_slots.h"
#include "tests/sim_twins/twin_macros_slots.h"
#include "worker_service/sim/twin/kernel_runner.h"
#include "worker_service/sim/twin/twin_catalog.h"

namespace hipr::worker::sim {
namespace {

struct Program {
  std::vector<uint8_t> file;
  co::Sha256Digest hash{};
  co::CodeObjectInfo info;
};

// The gfx90a code object of a hipcc-built program (one translation unit).
Status LoadProgram(const std::string& path, Program* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "cannot read " + path);
  out->file.assign(std::istreambuf_iterator<char>(in), {});
  co::TargetId device;
  HIPR_RETURN_IF_ERROR(co::ParseTargetId("gfx90a", &device));
  std::vector<uint8_t> code;
  Status st = co::FindHostCodeObject(out->file, device, &code);
  if (!st.ok()) return Status(st.code(), path + ": " + st.message());
  out->hash = co::Sha256(code);
  return co::ParseCodeObject(code, &out->info);
}

// The explicit kernel arguments, packed at the code object's offsets.
class Kernarg {
 public:
  explicit Kernarg(const co::KernelInfo& kernel) : kernel_(kernel), bytes_(kernel.explicit_kernarg_size()) {
    for (const co::KernelArg& a : kernel.args)
      if (!a.hidden()) explicit_.push_back(&a);
  }
  template <typename T>
  Kernarg& Set(size_t index, const T& value) {
    EXPECT_LT(index, explicit_.size()) << kernel_.name;
    if (index >= explicit_.size()) return *this;
    EXPECT_EQ(explicit_[index]->size, sizeof(T)) << kernel_.name << " argument " << index;
    memcpy(bytes_.data() + explicit_[index]->offset, &value, std::min<size_t>(sizeof(T), explicit_[index]->size));
    return *this;
  }
  std::span<const uint8_t> bytes() const { return bytes_; }

 private:
  const co::KernelInfo& kernel_;
  std::vector<const co::KernelArg*> explicit_;
  std::vector<uint8_t> bytes_;
};

using Dim = std::array<uint32_t, 3>;

// Device memory for a module's variables, bound like the sim binds them.
struct Variables {
  std::map<std::string, std::vector<uint64_t>> storage;  // 8-byte aligned.
  void* at(const std::string& name) { return storage.at(name).data(); }
};

class SimTwinTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new TwinCatalog({HIPR_TWIN_DIR});
    runner_ = new KernelRunner();
  }
  static void TearDownTestSuite() {
    delete runner_;
    delete catalog_;
  }

  // Loads `binary`'s code object and opens its twin with variables bound.
  void Open(const char* binary, std::shared_ptr<TwinModule>* module, Variables* vars = nullptr) {
    ASSERT_TRUE(LoadProgram(binary, &program_).ok()) << binary;
    Status st = catalog_->Open(program_.hash, program_.info, module);
    ASSERT_TRUE(st.ok()) << st.ToString();
    if (vars == nullptr) return;
    for (const co::GlobalVariable& v : program_.info.variables) {
      auto& mem = vars->storage[v.name];
      mem.assign((v.size + 7) / 8, 0xDEADBEEFDEADBEEFull);
      Status bound = (*module)->BindVariable(v.name, mem.data(), v.size);
      ASSERT_TRUE(bound.ok() || bound.code() == StatusCode::kNotFound) << bound.ToString();
    }
  }

  const co::KernelInfo& Info(std::string_view name) {
    const co::KernelInfo* k = program_.info.FindKernel(name);
    EXPECT_NE(k, nullptr) << name;
    return *k;
  }

  Status Launch(const TwinModule& module, std::string_view name, Dim grid, Dim block, const Kernarg& args,
                uint32_t shared = 0, std::string* printed = nullptr, Dim global = {}) {
    const TwinKernel* k = module.FindKernel(name);
    if (k == nullptr) return Status(StatusCode::kNotFound, "no kernel " + std::string(name));
    return runner_->Launch(*k, grid, block, shared, args.bytes(), printed, global);
  }

  static TwinCatalog* catalog_;
  static KernelRunner* runner_;
  Program program_;
};

TwinCatalog* SimTwinTest::catalog_ = nullptr;
KernelRunner* SimTwinTest::runner_ = nullptr;

constexpr char kSaxpy[] = "_Z5saxpyifPKfPf";
constexpr char kFillFloat[] = "_Z4fillIfEvPT_S0_i";
constexpr char kFillInt[] = "_Z4fillIiEvPT_S0_i";
constexpr char kUseGlobals[] = "_Z11use_globalsPii";

TEST_F(SimTwinTest, PlainKernel) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.0f;
  Kernarg args(Info(kSaxpy));
  args.Set(0, n).Set(1, 2.0f).Set(2, x.data()).Set(3, y.data());
  ASSERT_TRUE(Launch(*m, kSaxpy, {4, 1, 1}, {256, 1, 1}, args).ok());
  for (int i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * i + 1.0f) << i;
}

TEST_F(SimTwinTest, TemplateKernelsForFloatAndInt) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  const int n = 300;
  std::vector<float> f(n);
  std::vector<int> k(n);
  Kernarg fa(Info(kFillFloat));
  fa.Set(0, f.data()).Set(1, 0.5f).Set(2, n);
  ASSERT_TRUE(Launch(*m, kFillFloat, {2, 1, 1}, {256, 1, 1}, fa).ok());
  Kernarg ia(Info(kFillInt));
  ia.Set(0, k.data()).Set(1, 10).Set(2, n);
  ASSERT_TRUE(Launch(*m, kFillInt, {2, 1, 1}, {256, 1, 1}, ia).ok());
  for (int i = 0; i < n; ++i) {
    ASSERT_EQ(f[i], 0.5f + static_cast<float>(i % 4 + 1)) << i;  // kScale = {1, 2, 3, 4}.
    ASSERT_EQ(k[i], 10 + i % 4 + 1) << i;
  }
}

TEST_F(SimTwinTest, DeviceAndConstantVariables) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  // Binding copied the initial values into device memory.
  const float* scale = static_cast<const float*>(vars.at("kScale"));
  EXPECT_EQ(std::vector<float>(scale, scale + 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(*static_cast<int*>(vars.at("g_counter")), 42);
  auto* hits = static_cast<unsigned long long*>(vars.at("_ZN9twin_test6g_hitsE"));
  EXPECT_EQ(*hits, 0u);
  ASSERT_EQ(m->variables().size(), 5u);  // kScale, g_counter, g_hits, g_lo, g_hi.

  const int n = 500;
  std::vector<int> out(n);
  Kernarg args(Info(kUseGlobals));
  args.Set(0, out.data()).Set(1, n);
  ASSERT_TRUE(Launch(*m, kUseGlobals, {2, 1, 1}, {256, 1, 1}, args).ok());
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 42 + i);
  EXPECT_EQ(*hits, static_cast<unsigned long long>(n));

  // A copy to the symbol (as hipMemcpyToSymbol does) is what kernels see.
  *static_cast<int*>(vars.at("g_counter")) = 1000;
  ASSERT_TRUE(Launch(*m, kUseGlobals, {2, 1, 1}, {256, 1, 1}, args).ok());
  EXPECT_EQ(out[7], 1007);
  EXPECT_EQ(*hits, 2u * n);

  // A second module from the same code object has its own variables.
  std::shared_ptr<TwinModule> second;
  Variables vars2;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &second, &vars2));
  ASSERT_TRUE(Launch(*second, kUseGlobals, {2, 1, 1}, {256, 1, 1}, args).ok());
  EXPECT_EQ(out[7], 49);
  EXPECT_EQ(*static_cast<unsigned long long*>(vars2.at("_ZN9twin_test6g_hitsE")), static_cast<unsigned long long>(n));
  EXPECT_EQ(*hits, 2u * n);
}

// `__device__ int g_lo = 5, g_hi[2] = {6, 7};`: two code-object variables
// from one declaration, next to a kept constant and typedefs whose
// declarations also declare host variables the twin drops.
TEST_F(SimTwinTest, SeveralVariablesToADeclaration) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  EXPECT_EQ(*static_cast<int*>(vars.at("g_lo")), 5);
  const int* hi = static_cast<const int*>(vars.at("g_hi"));
  EXPECT_EQ(std::vector<int>(hi, hi + 2), (std::vector<int>{6, 7}));
  std::vector<int> out(3, -1);
  Kernarg args(Info("_Z9use_pairsPi"));
  args.Set(0, out.data());
  ASSERT_TRUE(Launch(*m, "_Z9use_pairsPi", {1, 1, 1}, {1, 1, 1}, args).ok());
  EXPECT_EQ(out, (std::vector<int>{6, 7, 6}));  // g_lo + kOne, g_hi[1], g_hi[0]++.
  EXPECT_EQ(hi[0], 7);
}

TEST_F(SimTwinTest, UnboundVariablesRefuseLaunch) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m));
  std::vector<int> out(4);
  Kernarg args(Info(kUseGlobals));
  args.Set(0, out.data()).Set(1, 4);
  Status st = Launch(*m, kUseGlobals, {1, 1, 1}, {4, 1, 1}, args);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("not bound"), std::string::npos) << st.message();
  int dummy = 0;
  EXPECT_EQ(m->BindVariable("no_such_variable", &dummy, 4).code(), StatusCode::kNotFound);
  EXPECT_EQ(m->BindVariable("g_counter", &dummy, 8).code(), StatusCode::kFailedPrecondition);
}

TEST_F(SimTwinTest, DevicePrintfIsCaptured) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  Kernarg args(Info("_Z5helloi"));
  args.Set(0, 5);
  std::string printed;
  ASSERT_TRUE(Launch(*m, "_Z5helloi", {2, 1, 1}, {2, 1, 1}, args, 0, &printed).ok());
  for (const char* line : {"hello from thread 0 of block 0, tag 5\n", "hello from thread 1 of block 0, tag 5\n",
                           "hello from thread 0 of block 1, tag 5\n", "hello from thread 1 of block 1, tag 5\n"})
    EXPECT_NE(printed.find(line), std::string::npos) << printed;
  EXPECT_EQ(std::count(printed.begin(), printed.end(), '\n'), 4) << printed;
}

TEST_F(SimTwinTest, HostDeviceHelperFromHeader) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  std::vector<float> d = {1, -2, 3, 0.5f};
  Kernarg args(Info("_Z7squaresPfi"));
  args.Set(0, d.data()).Set(1, 4);
  ASSERT_TRUE(Launch(*m, "_Z7squaresPfi", {1, 1, 1}, {64, 1, 1}, args).ok());
  EXPECT_EQ(d, (std::vector<float>{1, 4, 9, 0.25f}));
}

TEST_F(SimTwinTest, SharedMemoryBlockReductionOverManyBlocks) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_SHARED, &m));
  const int blocks = 400;
  const int n = blocks * 256 - 77;
  std::vector<int> in(n);
  for (int i = 0; i < n; ++i) in[i] = (i * 7919) % 1000 - 300;
  const long long want = std::accumulate(in.begin(), in.end(), 0LL);
  for (int round = 0; round < 3; ++round) {  // The pool and stacks are reused.
    unsigned long long total = 0;
    Kernarg args(Info("_Z9block_sumPKiPyi"));
    args.Set(0, static_cast<const int*>(in.data())).Set(1, &total).Set(2, n);
    ASSERT_TRUE(Launch(*m, "_Z9block_sumPKiPyi", {blocks, 1, 1}, {256, 1, 1}, args).ok());
    EXPECT_EQ(static_cast<long long>(total), want);
  }
}

TEST_F(SimTwinTest, DynamicSharedMemory) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_SHARED, &m));
  std::vector<int> data(4 * 128);
  std::iota(data.begin(), data.end(), 0);
  Kernarg rev(Info("_Z14reverse_blocksPi"));
  rev.Set(0, data.data());
  ASSERT_TRUE(Launch(*m, "_Z14reverse_blocksPi", {4, 1, 1}, {128, 1, 1}, rev, 128 * sizeof(int)).ok());
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < 128; ++t) ASSERT_EQ(data[b * 128 + t], b * 128 + 127 - t);

  std::vector<double> d(2 * 64);
  std::iota(d.begin(), d.end(), 0.0);
  Kernarg rot(Info("_Z11rotate_leftIdEvPT_i"));
  rot.Set(0, d.data()).Set(1, 5);
  ASSERT_TRUE(Launch(*m, "_Z11rotate_leftIdEvPT_i", {2, 1, 1}, {64, 1, 1}, rot, 64 * sizeof(double)).ok());
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 64; ++t) ASSERT_EQ(d[b * 64 + t], b * 64 + (t + 5) % 64);

  std::vector<float> f(2 * 32);
  std::iota(f.begin(), f.end(), 0.0f);
  Kernarg scale(Info("_Z13scale_dynamicPff"));
  scale.Set(0, f.data()).Set(1, 2.0f);
  ASSERT_TRUE(Launch(*m, "_Z13scale_dynamicPff", {2, 1, 1}, {32, 1, 1}, scale, 32 * sizeof(float)).ok());
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 32; ++t) ASSERT_EQ(f[b * 32 + t], 2.0f * (b * 32 + 31 - t));
}

TEST_F(SimTwinTest, TwoDimensionalBlocksTranspose) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_SHARED, &m));
  const int w = 64, h = 48;
  std::vector<float> in(w * h), out(w * h, -1);
  std::iota(in.begin(), in.end(), 0.0f);
  Kernarg args(Info("_Z9transposePKfPfii"));
  args.Set(0, static_cast<const float*>(in.data())).Set(1, out.data()).Set(2, w).Set(3, h);
  ASSERT_TRUE(Launch(*m, "_Z9transposePKfPfii", {4, 3, 1}, {16, 16, 1}, args).ok());
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) ASSERT_EQ(out[x * h + y], in[y * w + x]) << x << "," << y;
}

// hipExtModuleLaunchKernel's partial last blocks: in the last block of a
// dimension only global - (grid-1)*block threads exist, blockDim says so
// there, and __syncthreads counts only those.
TEST_F(SimTwinTest, PartialLastBlocksInXAndY) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_SHARED, &m));
  constexpr char kMark[] = "_Z12mark_partialPiiiS_";
  const int width = 3 * 16, height = 2 * 8;
  std::vector<int> out(width * height, -1), counts(6, -1);
  Kernarg args(Info(kMark));
  args.Set(0, out.data()).Set(1, 16).Set(2, 8).Set(3, counts.data());
  ASSERT_TRUE(Launch(*m, kMark, {3, 2, 1}, {16, 8, 1}, args, 0, nullptr, {40, 13, 1}).ok());
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      const int want = x < 40 && y < 13 ? (x >= 32 ? 8 : 16) * 1000 + (y >= 8 ? 5 : 8) : -1;
      ASSERT_EQ(out[y * width + x], want) << "x=" << x << " y=" << y;
    }
  }
  EXPECT_EQ(counts, (std::vector<int>{128, 128, 64, 80, 80, 40}));
  // A global size that does not end in the last block is refused.
  EXPECT_EQ(Launch(*m, kMark, {3, 2, 1}, {16, 8, 1}, args, 0, nullptr, {32, 13, 1}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Launch(*m, kMark, {3, 2, 1}, {16, 8, 1}, args, 0, nullptr, {49, 13, 1}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Launch(*m, kMark, {3, 2, 1}, {16, 8, 1}, args, 0, nullptr, {40, 0, 1}).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(SimTwinTest, BarrierVotes) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_SHARED, &m));
  std::vector<int> flags(3 * 128, 0), counts(9, -1);
  for (int t = 0; t < 128; ++t) flags[128 + t] = t % 3 == 0;  // Block 1: 43 of 128.
  for (int t = 0; t < 128; ++t) flags[256 + t] = 1;          // Block 2: all.
  Kernarg args(Info("_Z4votePKiPi"));
  args.Set(0, static_cast<const int*>(flags.data())).Set(1, counts.data());
  ASSERT_TRUE(Launch(*m, "_Z4votePKiPi", {3, 1, 1}, {128, 1, 1}, args).ok());
  EXPECT_EQ(counts, (std::vector<int>{0, 0, 0, 43, 0, 1, 128, 1, 1}));
}

TEST_F(SimTwinTest, ByValueStructAndMixedArguments) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_ARGS, &m));
  const char* name = "_Z9many_args5MixedcsdPxxhf4WidelN9twin_test4PairE15HIP_vector_typeIfLj4EES4_IiLj3EEPd";
  struct Mixed {
    char c;
    double d;
    short s;
    int* p;
  };
  struct alignas(16) Wide {
    float v[4];
  };
  struct Pair {
    int a, b;
  };
  struct alignas(16) Float4 {
    float x, y, z, w;
  };
  struct Int3 {
    int x, y, z;
  };
  int target = 0;
  std::vector<long long> out(12, -1);
  std::vector<double> dout(11, -1);
  Kernarg args(Info(name));
  args.Set(0, Mixed{'x', 2.5, -300, &target})
      .Set(1, 'q')
      .Set(2, static_cast<short>(-1234))
      .Set(3, 6.25)
      .Set(4, out.data())
      .Set(5, -(1LL << 40))
      .Set(6, static_cast<unsigned char>(250))
      .Set(7, 1.5f)
      .Set(8, Wide{{1, 2, 3, 4}})
      .Set(9, static_cast<int64_t>(1) << 50)
      .Set(10, Pair{-7, 8})
      .Set(11, Float4{10, 20, 30, 40})
      .Set(12, Int3{-1, -2, -3})
      .Set(13, dout.data());
  ASSERT_TRUE(Launch(*m, name, {1, 1, 1}, {32, 1, 1}, args).ok());
  EXPECT_EQ(out, (std::vector<long long>{'q', -1234, -(1LL << 40), 250, 1LL << 50, 'x', -300, -7, 8, -1, -2, -3}));
  EXPECT_EQ(dout, (std::vector<double>{6.25, 1.5, 2.5, 1, 2, 3, 4, 11, 21, 31, 41}));
  EXPECT_EQ(target, 'x' - 300);

  Kernarg none(Info("no_args"));
  EXPECT_TRUE(Launch(*m, "no_args", {3, 1, 1}, {5, 1, 1}, none).ok());
}

TEST_F(SimTwinTest, LanguageCoverage) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_LANGUAGE, &m));
  // Template with a non-type parameter, in a namespace.
  std::vector<float> f(64, 2.0f);
  Kernarg scale(Info("_ZN9twin_lang8scale_byILi3EfEEvPT0_i"));
  scale.Set(0, f.data()).Set(1, 60);
  ASSERT_TRUE(Launch(*m, "_ZN9twin_lang8scale_byILi3EfEEvPT0_i", {1, 1, 1}, {64, 1, 1}, scale).ok());
  EXPECT_EQ(f[59], 6.0f);
  EXPECT_EQ(f[60], 2.0f);

  // Overloaded kernels: one name, two twins.
  int counter = 0;
  float fcounter = 0;
  Kernarg bi(Info("_ZN9twin_lang4bumpEPi"));
  bi.Set(0, &counter);
  Kernarg bf(Info("_ZN9twin_lang4bumpEPf"));
  bf.Set(0, &fcounter);
  ASSERT_TRUE(Launch(*m, "_ZN9twin_lang4bumpEPi", {10, 1, 1}, {100, 1, 1}, bi).ok());
  ASSERT_TRUE(Launch(*m, "_ZN9twin_lang4bumpEPf", {10, 1, 1}, {100, 1, 1}, bf).ok());
  EXPECT_EQ(counter, 1000);
  EXPECT_EQ(fcounter, 500.0f);

  // __shared__ in a device function, atomicMax on it.
  std::vector<int> in(2 * 64), maxima(2);
  for (int i = 0; i < 128; ++i) in[i] = (i * 37) % 101;
  Kernarg bm(Info("_ZN9twin_lang9block_maxEPKiPi"));
  bm.Set(0, static_cast<const int*>(in.data())).Set(1, maxima.data());
  ASSERT_TRUE(Launch(*m, "_ZN9twin_lang9block_maxEPKiPi", {2, 1, 1}, {64, 1, 1}, bm).ok());
  EXPECT_EQ(maxima[0], *std::max_element(in.begin(), in.begin() + 64));
  EXPECT_EQ(maxima[1], *std::max_element(in.begin() + 64, in.end()));

  // A template kernel in an anonymous namespace, with a lambda.
  std::vector<double> src(40), dst(40);
  std::iota(src.begin(), src.end(), 0.5);
  Kernarg ac(Info("_ZN12_GLOBAL__N_19anon_copyIdEEvPKT_PS1_i"));
  ac.Set(0, static_cast<const double*>(src.data())).Set(1, dst.data()).Set(2, 40);
  ASSERT_TRUE(Launch(*m, "_ZN12_GLOBAL__N_19anon_copyIdEEvPKT_PS1_i", {1, 1, 1}, {16, 1, 1}, ac).ok());
  EXPECT_EQ(dst, src);

  // Math, vector types, a class by value, an atomicCAS loop.
  struct alignas(16) Float4 {
    float x, y, z, w;
  };
  std::vector<float> out(32), buffer(64, 0.0f);
  buffer[63] = 1.0f;
  const char* mix = "_Z8math_mixPfN9twin_lang12DeviceBufferE15HIP_vector_typeIfLj4EE";
  Kernarg mm(Info(mix));
  mm.Set(0, out.data()).Set(1, buffer.data()).Set(2, Float4{1, 2, 3, 4});
  ASSERT_TRUE(Launch(*m, mix, {1, 1, 1}, {32, 1, 1}, mm).ok());
  for (int i = 0; i < 32; ++i) {
    float x = 0.25f * (i + 1);
    float want = std::exp(x) * 2 + std::log(x + 1) + std::sqrt(x) + 1 / std::sqrt(x) + std::tanh(x) +
                 std::pow(x, 1.5f) + x + std::max(x, 0.5f) + std::min(x, 0.5f) + x / 2 + std::min(i, 3) +
                 std::max(1.5f, x) + x * x + (2 + x) + (8 + x);
    EXPECT_NEAR(out[i], want, 1e-4 * std::fabs(want)) << i;
    EXPECT_EQ(buffer[i], 64 + x);
  }
  EXPECT_EQ(buffer[63], static_cast<float>(1u << 31) * 2.0f);  // 1.0 doubled by each of 32 threads.
}

// Every #if on a macro of the gfx90a device compile takes the device's
// branch in the twin, as in the code object.
TEST_F(SimTwinTest, DeviceCompileMacros) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_MACROS, &m));
  std::vector<int> out(twin_macros::kSlotCount + 1, -1);
  Kernarg args(Info("_Z6macrosPi"));
  args.Set(0, out.data());
  ASSERT_TRUE(Launch(*m, "_Z6macrosPi", {1, 1, 1}, {1, 1, 1}, args).ok());
  ASSERT_EQ(out[twin_macros::kSlotCount], twin_macros::kSlotCount);
  for (int i = 0; i < twin_macros::kSlotCount; ++i)
    EXPECT_EQ(out[i], 1) << twin_macros::kSlotNames[i] << ": the twin does not see the device compile's value";
}

// HIP's integer and bit intrinsics, edge cases and random rows, against a
// reference written from HIP's documentation (twin_bits_reference.h).
TEST_F(SimTwinTest, BitIntrinsicsMatchTheDevice) {
  std::vector<twin_bits::Case> cases = {
      {0, 0, 0, 0, 0, 0},  // Zeros: __clz 32, __ffs 0, __lastbit ~0, width 0, no set bit.
      {1, 1, 1, 1, 0, 1},
      {~0ull, ~0ull, 31, 31, 63, 1},
      {0x80000000, 0x7FFFFFFF, 32, 32, 31, 0},  // Counts of 32 are 0 (modulo 32) or 32 (_lc, _rc); base 31.
      {0x8000000000000000, 1, 63, 1, 63, -1},
      {0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x3210, 8, 4, 3},    // __byte_perm: x.
      {0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x7654, 4, 12, -2},  // __byte_perm: y.
      {0x89ABCDEF, 0x76543210, 0xFEDC, 12, 5, 0},                   // Selector bit 3 is ignored.
      {0xF0F0, 0x76543210, 0x4170, 16, 8, 0},                       // Offset 0 on a clear bit: -1.
      {0xDEADBEEF, 0x12345678, 20, 20, 0, 9},                       // A bit field past bit 31.
      {0xDEADBEEF, 0x12345678, 36, 70, 70, 1},                      // Counts past 32 and 64.
      {0x00FFFFFF, 0x00FFFFFF, 8, 24, 0, 64},                       // 24-bit operands; no 64th set bit.
      {0x00800000, 0xFF7FFFFF, 0, 16, 23, -24},                     // -2^23 * (2^23 - 1).
      {0x7FFFFFFF, 0x7FFFFFFF, 5, 3, 30, -31},                      // Sums past INT_MAX.
      {0xFFFFFFFF, 1, 0, 0, 0, -1},                                 // __uhadd's sum wraps to 0.
      {0x80000000, 0x7FFFFFFF, 0x100, 31, 31, 1},                   // __sad(INT_MIN, INT_MAX, 256) wraps.
      {static_cast<unsigned long long>(-5), 3, 7, 5, 0, 2},         // Negative products.
      {0x10000000000, 0x8000000000000001, 40, 24, 31, 0},           // __fns base 31: finds bit 40.
      {0x10000000100, 0xF0F0, 4, 4, 40, 0},                         // __fns base 40, offset 0: none.
      {0x5555555555555555, 0xAAAAAAAAAAAAAAAA, 17, 9, 63, -32},
      {0xFFFFFFFF00000000, 0x00000000FFFFFFFF, 33, 40, 32, 32},  // A 64-bit field past bit 63.
      {0x0000000100000000, 0xFFFFFFFFFFFFFFFF, 64, 63, 95, 0},   // base 95: as 31.
  };
  std::mt19937_64 rng(22);
  for (int i = 0; i < 256; ++i) {
    twin_bits::Case c;
    c.a = rng(), c.b = rng();
    c.s = static_cast<unsigned>(rng() % 80), c.w = static_cast<unsigned>(rng() % 80);
    c.base = static_cast<unsigned>(rng() % 100), c.offset = static_cast<int>(rng() % 141) - 70;
    if (i % 2) c.a &= rng();  // Sparser masks for __fns.
    cases.push_back(c);
  }
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BITS, &m));
  const int n = static_cast<int>(cases.size());
  std::vector<unsigned long long> out(cases.size() * twin_bits::kSlotCount, 0xABABABABABABABABull);
  constexpr char kBits[] = "_Z4bitsPKN9twin_bits4CaseEPyi";
  Kernarg args(Info(kBits));
  args.Set(0, static_cast<const twin_bits::Case*>(cases.data())).Set(1, out.data()).Set(2, n);
  ASSERT_TRUE(Launch(*m, kBits, {static_cast<uint32_t>((n + 63) / 64), 1, 1}, {64, 1, 1}, args).ok());
  int failures = 0;
  for (int i = 0; i < n; ++i) {
    const auto want = twin_bits::Expected(cases[i]);
    for (int k = 0; k < twin_bits::kSlotCount; ++k) {
      const unsigned long long got = out[static_cast<size_t>(i) * twin_bits::kSlotCount + k];
      if (got == want[k]) continue;
      const twin_bits::Case& c = cases[i];
      ADD_FAILURE() << twin_bits::kSlotNames[k] << std::hex << " a=0x" << c.a << " b=0x" << c.b << " s=" << std::dec
                    << c.s << " w=" << c.w << " base=" << c.base << " offset=" << c.offset << ": twin 0x" << std::hex
                    << got << ", reference 0x" << want[k];
      if (++failures == 40) return;
    }
  }
}

TEST_F(SimTwinTest, LayoutMismatchIsRefused) {
  ASSERT_TRUE(LoadProgram(HIPR_TWIN_BASIC, &program_).ok());
  co::CodeObjectInfo edited = program_.info;
  for (co::KernelInfo& k : edited.kernels)
    if (k.name == kSaxpy) k.args[1].offset += 4;  // `a` moves: the twin would read garbage.
  std::shared_ptr<TwinModule> m;
  Status st = catalog_->Open(program_.hash, edited, &m);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find(std::string("kernel ") + kSaxpy + " argument 1"), std::string::npos) << st.message();
  EXPECT_EQ(m, nullptr);

  edited = program_.info;
  edited.kernels.push_back(edited.kernels[0]);
  edited.kernels.back().name = "_Z13not_in_twinv";
  st = catalog_->Open(program_.hash, edited, &m);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("lacks kernel _Z13not_in_twinv"), std::string::npos) << st.message();
}

TEST_F(SimTwinTest, HashMismatchIsRefused) {
  ASSERT_TRUE(LoadProgram(HIPR_TWIN_BASIC, &program_).ok());
  co::Sha256Digest other = program_.hash;
  other[0] ^= 0xFF;
  // A twin file under the wrong name: the recorded hash decides.
  auto dir = std::filesystem::temp_directory_path() / ("sim_twin_test." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(std::string(HIPR_TWIN_DIR) + "/" + TwinCatalog::FileName(program_.hash),
                             dir / TwinCatalog::FileName(other), std::filesystem::copy_options::overwrite_existing);
  TwinCatalog catalog({dir.string()});
  std::shared_ptr<TwinModule> m;
  Status st = catalog.Open(other, program_.info, &m);
  std::filesystem::remove_all(dir);
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("was built for code object " + co::ToHex(program_.hash)), std::string::npos)
      << st.message();
}

TEST_F(SimTwinTest, MissingTwinIsNotFound) {
  ASSERT_TRUE(LoadProgram(HIPR_TWIN_BASIC, &program_).ok());
  co::Sha256Digest other{};
  other.fill(0xAB);
  std::shared_ptr<TwinModule> m;
  Status st = catalog_->Open(other, program_.info, &m);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find(co::ToHex(other)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(HIPR_TWIN_DIR), std::string::npos) << st.message();
  st = TwinCatalog({}).Open(program_.hash, program_.info, &m);
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
}

TEST_F(SimTwinTest, BadLaunchShapesAreRejected) {
  std::shared_ptr<TwinModule> m;
  Variables vars;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_BASIC, &m, &vars));
  std::vector<float> x(4), y(4);
  Kernarg args(Info(kSaxpy));
  args.Set(0, 4).Set(1, 1.0f).Set(2, x.data()).Set(3, y.data());
  EXPECT_EQ(Launch(*m, kSaxpy, {0, 1, 1}, {4, 1, 1}, args).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Launch(*m, kSaxpy, {1, 1, 1}, {4, 0, 1}, args).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Launch(*m, kSaxpy, {1, 1, 1}, {1025, 1, 1}, args).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Launch(*m, kSaxpy, {1, 1, 1}, {32, 32, 2}, args).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Launch(*m, kSaxpy, {1, 1, 1}, {4, 1, 1}, args, 65 * 1024).code(), StatusCode::kInvalidArgument);
  const TwinKernel* k = m->FindKernel(kSaxpy);
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(runner_->Launch(*k, {1, 1, 1}, {4, 1, 1}, 0, args.bytes().first(8), nullptr).code(),
            StatusCode::kInvalidArgument);
  // The largest block works.
  std::vector<float> big_x(1024, 1.0f), big_y(1024, 0.0f);
  Kernarg big(Info(kSaxpy));
  big.Set(0, 1024).Set(1, 3.0f).Set(2, big_x.data()).Set(3, big_y.data());
  ASSERT_TRUE(Launch(*m, kSaxpy, {1, 1, 1}, {1024, 1, 1}, big).ok());
  EXPECT_EQ(big_y[1023], 3.0f);
}

TEST_F(SimTwinTest, ConcurrentLaunchesFromSeveralThreads) {
  std::shared_ptr<TwinModule> m;
  ASSERT_NO_FATAL_FAILURE(Open(HIPR_TWIN_SHARED, &m));
  const int blocks = 64;
  const int n = blocks * 256;
  std::vector<int> in(n, 1);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        unsigned long long total = 0;
        Kernarg args(Info("_Z9block_sumPKiPyi"));
        args.Set(0, static_cast<const int*>(in.data())).Set(1, &total).Set(2, n - t);
        Status st = Launch(*m, "_Z9block_sumPKiPyi", {blocks, 1, 1}, {256, 1, 1}, args);
        if (!st.ok() || total != static_cast<unsigned long long>(n - t)) ++failures;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace hipr::worker::sim
