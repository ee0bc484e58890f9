// Round trips on constructed bundles, CCOBs and code objects; target ids;
// hashes. Hostile input is in code_object_hostile_test.cc.
#include "protocol/code_object/code_object.h"

#include <gtest/gtest.h>

#include <tuple>

#include "protocol/code_object/code_object_test_util.h"
#include "protocol/code_object/host_fatbin.h"

namespace hipr::co {
namespace {

using testing::Blob;
using testing::BlobOf;

Blob SampleBundle() {
  return testing::MakeBundle({{"host-x86_64-unknown-linux-", {}},
                              {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", BlobOf("code for gfx90a xnack-")},
                              {"hipv4-amdgcn-amd-amdhsa--gfx908", BlobOf("code for gfx908")}},
                             4096);
}

TEST(EntryIdTest, SplitsKindTripleTarget) {
  struct Case {
    const char* id;
    const char* kind;
    const char* triple;
    const char* target;
  };
  const Case cases[] = {
      {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", "hipv4", "amdgcn-amd-amdhsa", "gfx90a:xnack-"},
      {"hipv4-amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack+", "hipv4", "amdgcn-amd-amdhsa", "gfx90a:sramecc+:xnack+"},
      {"hip-amdgcn-amd-amdhsa--gfx906", "hip", "amdgcn-amd-amdhsa", "gfx906"},
      {"host-x86_64-unknown-linux-", "host", "x86_64-unknown-linux", ""},
      {"host-x86_64-unknown-linux", "host", "x86_64-unknown-linux", ""},
      {"host-x86_64-unknown-linux-gnu-", "host", "x86_64-unknown-linux-gnu", ""},
      {"hip-amdgcn-amd-amdhsa-gfx906", "hip", "amdgcn-amd-amdhsa", "gfx906"},
      {"openmp-amdgcn-amd-amdhsa--gfx1030", "openmp", "amdgcn-amd-amdhsa", "gfx1030"},
  };
  for (const Case& c : cases) {
    BundleEntry e;
    ASSERT_TRUE(SplitEntryId(c.id, &e).ok()) << c.id;
    EXPECT_EQ(e.kind, c.kind) << c.id;
    EXPECT_EQ(e.triple, c.triple) << c.id;
    EXPECT_EQ(e.target, c.target) << c.id;
  }
  BundleEntry e;
  EXPECT_FALSE(SplitEntryId("", &e).ok());
  EXPECT_FALSE(SplitEntryId("host", &e).ok());
  EXPECT_FALSE(SplitEntryId("-amdgcn", &e).ok());
  EXPECT_FALSE(SplitEntryId("hip-", &e).ok());
}

TEST(BundleTest, PlainRoundTrip) {
  Blob b = SampleBundle();
  const uint64_t real_size = b.size();
  b.resize(b.size() + 5000, 0xAB);  // hipModuleLoadData passes no size.
  ASSERT_TRUE(LooksLikeBundle(b));
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(b, &bundle).ok());
  EXPECT_FALSE(bundle.compressed);
  EXPECT_EQ(bundle.encoded_size, real_size);
  ASSERT_EQ(bundle.entries.size(), 3u);
  EXPECT_EQ(bundle.entries[0].kind, "host");
  EXPECT_EQ(bundle.entries[0].size, 0u);
  EXPECT_EQ(bundle.entries[1].id, "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-");
  EXPECT_EQ(bundle.entries[1].offset, 4096u);
  EXPECT_EQ(std::string(bundle.entries[1].bytes.begin(), bundle.entries[1].bytes.end()), "code for gfx90a xnack-");
  EXPECT_EQ(bundle.entries[2].target, "gfx908");
  EXPECT_EQ(bundle.entries[2].bytes.data(), b.data() + bundle.entries[2].offset);  // A view, not a copy.
  uint64_t size = 0;
  ASSERT_TRUE(ImageSize(b, &size).ok());
  EXPECT_EQ(size, real_size);
}

class CcobTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CcobTest, RoundTrip) {
  const auto [version, method] = GetParam();
  const Blob plain = SampleBundle();
  Blob ccob = testing::MakeCcob(plain, static_cast<uint16_t>(version), static_cast<uint16_t>(method));
  const uint64_t ccob_size = ccob.size();
  ccob.resize(ccob.size() + 333, 0x5a);  // Trailing bytes are not part of it.
  ASSERT_TRUE(LooksLikeCompressedBundle(ccob));
  Bundle bundle;
  Status st = ParseBundle(ccob, &bundle);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(bundle.compressed);
  EXPECT_EQ(bundle.ccob_version, version);
  EXPECT_EQ(bundle.ccob_method, method);
  EXPECT_EQ(bundle.encoded_size, ccob_size);
  EXPECT_EQ(bundle.storage, plain);
  ASSERT_EQ(bundle.entries.size(), 3u);
  EXPECT_EQ(std::string(bundle.entries[2].bytes.begin(), bundle.entries[2].bytes.end()), "code for gfx908");
  // Moving the bundle keeps the entries' views valid.
  Bundle moved = std::move(bundle);
  EXPECT_EQ(moved.entries[1].bytes.data(), moved.storage.data() + 4096);
  uint64_t size = 0;
  ASSERT_TRUE(ImageSize(ccob, &size).ok());
  EXPECT_EQ(size, ccob_size);
}

TEST_P(CcobTest, HashMismatchRejected) {
  const auto [version, method] = GetParam();
  const Blob ccob = testing::MakeCcob(SampleBundle(), static_cast<uint16_t>(version), static_cast<uint16_t>(method),
                                      /*corrupt_hash=*/true);
  Bundle bundle;
  Status st = ParseBundle(ccob, &bundle);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("hash"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(AllVersionsAndMethods, CcobTest,
                         ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Values(0, 1)));

TEST(TargetIdTest, Parse) {
  TargetId t;
  ASSERT_TRUE(ParseTargetId("gfx90a:sramecc+:xnack-", &t).ok());
  EXPECT_EQ(t.processor, "gfx90a");
  EXPECT_EQ(t.sramecc, Feature::kOn);
  EXPECT_EQ(t.xnack, Feature::kOff);
  ASSERT_TRUE(ParseTargetId("gfx1030", &t).ok());
  EXPECT_EQ(t.sramecc, Feature::kAny);
  EXPECT_EQ(t.xnack, Feature::kAny);
  ASSERT_TRUE(ParseTargetId("gfx908:xnack+", &t).ok());
  EXPECT_EQ(t.xnack, Feature::kOn);
  for (const char* bad : {"", ":xnack+", "gfx90a:", "gfx90a:xnack", "gfx90a:xnack+:xnack-", "gfx90a:foo+",
                          "gfx90a::xnack+", "gfx 90a"}) {
    EXPECT_FALSE(ParseTargetId(bad, &t).ok()) << bad;
  }
}

TEST(TargetIdTest, Compatibility) {
  struct Case {
    const char* code;
    const char* device;
    bool compatible;
  };
  const Case cases[] = {
      {"gfx90a", "gfx90a", true},
      {"gfx90a", "gfx90a:sramecc+:xnack-", true},
      {"gfx90a:xnack-", "gfx90a:sramecc+:xnack-", true},
      {"gfx90a:xnack+", "gfx90a:sramecc+:xnack-", false},
      {"gfx90a:xnack+", "gfx90a", true},
      {"gfx90a:sramecc-", "gfx90a:sramecc+", false},
      {"gfx90a:sramecc+:xnack+", "gfx90a:sramecc+:xnack+", true},
      {"gfx908", "gfx90a", false},
      {"gfx90a", "gfx90", false},
      // Generic code objects run on their members, features matched as for any code.
      {"gfx9-4-generic", "gfx942:sramecc+:xnack-", true},
      {"gfx9-4-generic:xnack-", "gfx950:sramecc+:xnack-", true},
      {"gfx9-4-generic:xnack+", "gfx942:sramecc+:xnack-", false},
      {"gfx9-4-generic", "gfx90a:sramecc+:xnack-", false},  // gfx90a has no generic processor.
      {"gfx9-generic", "gfx906:xnack-", true},
      {"gfx9-generic", "gfx942", false},
      {"gfx11-generic", "gfx1100", true},
      {"gfx11-generic", "gfx1151", true},
      {"gfx11-generic", "gfx1030", false},
      {"gfx10-3-generic", "gfx1030", true},
      {"gfx12-generic", "gfx1201", true},
      {"gfx942", "gfx9-4-generic", false},  // A generic device is no device.
  };
  for (const Case& c : cases) {
    TargetId code, device;
    ASSERT_TRUE(ParseTargetId(c.code, &code).ok());
    ASSERT_TRUE(ParseTargetId(c.device, &device).ok());
    EXPECT_EQ(IsCompatible(code, device), c.compatible) << c.code << " on " << c.device;
  }
}

// The bytes of the entry SelectEntry picks for `device`, or "none".
std::string Pick(const Bundle& bundle, const char* device) {
  TargetId d;
  EXPECT_TRUE(ParseTargetId(device, &d).ok()) << device;
  const BundleEntry* e = SelectEntry(bundle, d);
  return e ? std::string(e->bytes.begin(), e->bytes.end()) : "none";
}

TEST(TargetIdTest, SelectEntryPrefersExactMatch) {
  const Blob b = testing::MakeBundle({{"host-x86_64-unknown-linux-", {}},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx90a", BlobOf("any")},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", BlobOf("on")},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", BlobOf("off")},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx908", BlobOf("908")},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx1030", {}}});
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(b, &bundle).ok());
  EXPECT_EQ(Pick(bundle, "gfx90a:sramecc+:xnack-"), "off");
  EXPECT_EQ(Pick(bundle, "gfx90a:xnack+"), "on");
  EXPECT_EQ(Pick(bundle, "gfx90a"), "any");
  EXPECT_EQ(Pick(bundle, "gfx908:xnack-"), "908");
  EXPECT_EQ(Pick(bundle, "gfx1030"), "none");  // Its entry is empty.
  EXPECT_EQ(Pick(bundle, "gfx942"), "none");
}

// ROCm loads a native code object where there is one, else the generic one.
TEST(TargetIdTest, SelectEntryPrefersNativeOverGeneric) {
  const Blob b = testing::MakeBundle({{"host-x86_64-unknown-linux-", {}},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack-", BlobOf("generic")},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx942", BlobOf("942")},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx11-generic", BlobOf("gfx11")}});
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(b, &bundle).ok());
  // The native entry leaves xnack open, the generic one pins it as the device has it: native still wins.
  EXPECT_EQ(Pick(bundle, "gfx942:sramecc+:xnack-"), "942");
  EXPECT_EQ(Pick(bundle, "gfx950:sramecc+:xnack-"), "generic");
  EXPECT_EQ(Pick(bundle, "gfx950:sramecc+:xnack+"), "none");
  EXPECT_EQ(Pick(bundle, "gfx1102"), "gfx11");
  EXPECT_EQ(Pick(bundle, "gfx90a"), "none");
  EXPECT_EQ(GenericProcessorOf("gfx942"), "gfx9-4-generic");
  EXPECT_EQ(GenericProcessorOf("gfx90a"), "");
}

TEST(CodeObjectTest, V4) {
  const Blob elf = testing::DefaultCodeObject(testing::MetadataV4());
  Blob padded = elf;
  padded.resize(elf.size() + 100, 0xee);
  ASSERT_TRUE(LooksLikeAmdgpuElf(padded));
  CodeObjectInfo info;
  Status st = ParseCodeObject(padded, &info);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.version_major, 1u);
  EXPECT_EQ(info.version_minor, 1u);
  EXPECT_EQ(info.target, "amdgcn-amd-amdhsa--gfx90a");
  EXPECT_EQ(info.elf_size, elf.size());
  ASSERT_EQ(info.kernels.size(), 2u);
  const KernelInfo* k = info.FindKernel("_Z5scalePffi");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k, info.FindKernel("_Z5scalePffi.kd"));
  EXPECT_EQ(k->kernarg_segment_size, 72u);
  EXPECT_EQ(k->kernarg_segment_align, 8u);
  EXPECT_EQ(k->max_flat_workgroup_size, 1024u);
  EXPECT_EQ(k->wavefront_size, 64u);
  EXPECT_EQ(k->sgpr_count, 12u);
  EXPECT_EQ(k->vgpr_count, 4u);
  ASSERT_EQ(k->args.size(), 10u);
  EXPECT_EQ(k->args[0].address_space, "global");
  EXPECT_EQ(k->args[0].value_kind, "global_buffer");
  EXPECT_FALSE(k->args[2].hidden());
  EXPECT_TRUE(k->args[3].hidden());
  EXPECT_EQ(k->explicit_arg_count(), 3u);
  EXPECT_EQ(k->explicit_kernarg_size(), 16u);
  const KernelInfo* noop = info.FindKernel("_Z4noopv");
  ASSERT_NE(noop, nullptr);
  EXPECT_EQ(noop->explicit_kernarg_size(), 0u);
  EXPECT_EQ(info.FindKernel("missing"), nullptr);
  // Kernel descriptors and functions are not variables.
  ASSERT_EQ(info.variables.size(), 1u);
  EXPECT_EQ(info.variables[0].name, "d_table");
  EXPECT_EQ(info.FindVariable("d_table")->size, 256u);
  uint64_t size = 0;
  ASSERT_TRUE(ImageSize(padded, &size).ok());
  EXPECT_EQ(size, elf.size());
}

TEST(CodeObjectTest, V5HiddenArgsInTheBlock) {
  CodeObjectInfo info;
  Status st = ParseCodeObject(testing::DefaultCodeObject(testing::MetadataV5()), &info);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.version_major, 1u);
  EXPECT_EQ(info.version_minor, 2u);
  EXPECT_EQ(info.target, "amdgcn-amd-amdhsa--gfx90a:xnack-");
  ASSERT_EQ(info.kernels.size(), 1u);
  const KernelInfo& k = info.kernels[0];
  EXPECT_EQ(k.kernarg_segment_size, 272u);
  EXPECT_EQ(k.explicit_arg_count(), 2u);
  EXPECT_EQ(k.explicit_kernarg_size(), 12u);
  ASSERT_EQ(k.args.size(), 18u);
  for (size_t i = 2; i < k.args.size(); ++i) {
    EXPECT_TRUE(k.args[i].hidden());
    EXPECT_GE(k.args[i].offset, 16u);  // Inside the 256-byte block after the explicit args.
    EXPECT_LE(k.args[i].offset + k.args[i].size, 16u + 256u);
  }
  EXPECT_EQ(k.args.back().value_kind, "hidden_queue_ptr");
  EXPECT_EQ(k.args.back().offset, 216u);
}

// Code object v6 for a generic processor, as LLVM 19 and later make for
// gfx9-4-generic: the metadata says [1,2] as v5's does, and the ELF header's
// ABI version (4) says v6 (inspect_agreement checks real ones against
// llvm-readelf). Parsed like v5 (the same kernel argument layout), and
// chosen for a member GPU that has no native entry in its bundle.
TEST(CodeObjectTest, V6GenericTargetParsedAndSelected) {
  testing::Mp md = testing::MetadataV5();
  md["amdhsa.target"] = "amdgcn-amd-amdhsa--gfx9-4-generic:xnack-";
  Blob co = testing::DefaultCodeObject(md);
  CodeObjectInfo info;
  co[7] = 0;  // EI_OSABI not ELFOSABI_AMDGPU_HSA: its ABI version means nothing, the metadata answers.
  ASSERT_TRUE(ParseCodeObject(co, &info).ok());
  EXPECT_EQ(info.abi_version, 0);
  EXPECT_EQ(info.version_name(), "v5");
  co[7] = 64;  // ELFOSABI_AMDGPU_HSA
  co[8] = 3;   // EI_ABIVERSION: ELFABIVERSION_AMDGPU_HSA_V5
  ASSERT_TRUE(ParseCodeObject(co, &info).ok());
  EXPECT_EQ(info.version_name(), "v5");
  co[8] = 4;  // ELFABIVERSION_AMDGPU_HSA_V6, with the same metadata
  Status st = ParseCodeObject(co, &info);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(info.abi_version, 4);
  EXPECT_EQ(info.version_name(), "v6");
  ASSERT_EQ(info.kernels.size(), 1u);
  EXPECT_EQ(info.kernels[0].explicit_kernarg_size(), 12u);
  TargetId code;
  ASSERT_TRUE(ParseTargetId(info.target.substr(info.target.find("--") + 2), &code).ok());
  EXPECT_EQ(code.processor, "gfx9-4-generic");
  EXPECT_EQ(code.xnack, Feature::kOff);

  const Blob b = testing::MakeBundle({{"host-x86_64-unknown-linux-", {}},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx90a", testing::DefaultCodeObject(testing::MetadataV4())},
                                      {"hipv4-amdgcn-amd-amdhsa--gfx9-4-generic:xnack-", co}});
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(b, &bundle).ok());
  TargetId mi300x;
  ASSERT_TRUE(ParseTargetId("gfx942:sramecc+:xnack-", &mi300x).ok());
  const BundleEntry* entry = SelectEntry(bundle, mi300x);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->target, "gfx9-4-generic:xnack-");
}

TEST(CodeObjectTest, InsideABundleAndSelected) {
  const Blob co = testing::DefaultCodeObject(testing::MetadataV4());
  const Blob b = testing::MakeBundle({{"host-x86_64-unknown-linux-", {}}, {"hipv4-amdgcn-amd-amdhsa--gfx90a", co}},
                                     4096);
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(testing::MakeCcob(b, 3, 1), &bundle).ok());
  TargetId device;
  ASSERT_TRUE(ParseTargetId("gfx90a:sramecc+:xnack-", &device).ok());
  const BundleEntry* e = SelectEntry(bundle, device);
  ASSERT_NE(e, nullptr);
  CodeObjectInfo info;
  ASSERT_TRUE(ParseCodeObject(e->bytes, &info).ok());
  EXPECT_EQ(info.kernels.size(), 2u);
}

TEST(HostFatbinTest, FindsAlignedBundles) {
  const Blob co = testing::DefaultCodeObject(testing::MetadataV4());
  const Blob b1 = testing::MakeBundle({{"host-x86_64-unknown-linux-", {}}, {"hipv4-amdgcn-amd-amdhsa--gfx90a", co}});
  const Blob b2 = testing::MakeCcob(b1, 2, 0);
  const Blob host = testing::MakeHostElf({b1, b2, b1});
  std::vector<HostSection> sections;
  ASSERT_TRUE(FindHipFatbinSections(host, &sections).ok());
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].file_offset % 4096, 0u);
  std::vector<BundleSpan> spans;
  Status st = ListBundles(sections[0].bytes, &spans);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].offset, 0u);
  EXPECT_EQ(spans[0].size, b1.size());
  EXPECT_EQ(spans[1].offset, (b1.size() + 4095) / 4096 * 4096);
  EXPECT_EQ(spans[1].size, b2.size());
  EXPECT_EQ(spans[2].size, b1.size());
  // A host ELF without the section has no bundles.
  ASSERT_TRUE(FindHipFatbinSections(testing::MakeElf(62, {}), &sections).ok());
  EXPECT_TRUE(sections.empty());
}

TEST(Sha256Test, KnownVectorAndHex) {
  const Blob abc = BlobOf("abc");
  const Sha256Digest d = Sha256(abc);
  EXPECT_EQ(ToHex(d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(ToHex(Sha256({})), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  Sha256Digest back{};
  ASSERT_TRUE(FromHex(ToHex(d), &back));
  EXPECT_EQ(back, d);
  ASSERT_TRUE(FromHex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD", &back));
  EXPECT_EQ(back, d);
  EXPECT_FALSE(FromHex("ba78", &back));
  EXPECT_FALSE(FromHex(std::string(64, 'g'), &back));
}

}  // namespace
}  // namespace hipr::co
