// Hostile input: every parser returns an error Status, never crashes, never
// reads out of bounds (run under ASan/UBSan too; see the report in
// protocol/code_object/CMakeLists.txt).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <functional>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/code_object_test_util.h"
#include "protocol/code_object/host_fatbin.h"

namespace hipr::co {
namespace {

using testing::Blob;
using testing::BlobOf;
using testing::Mp;
using testing::MpArray;
using testing::MpMap;
using testing::PutAt;

Blob SmallBundle() {
  return testing::MakeBundle({{"host-x86_64-unknown-linux-", {}},
                              {"hipv4-amdgcn-amd-amdhsa--gfx90a", BlobOf("0123456789abcdef")}});
}

// Runs every entry point over `data`, which must not crash; returns whether
// ParseBundle accepted it.
void ParseAll(Bytes data) {
  Bundle bundle;
  (void)ParseBundle(data, &bundle);
  CodeObjectInfo info;
  (void)ParseCodeObject(data, &info);
  uint64_t size = 0;
  (void)ImageSize(data, &size);
  std::vector<HostSection> sections;
  if (FindHipFatbinSections(data, &sections).ok()) {
    for (const HostSection& s : sections) {
      std::vector<BundleSpan> spans;
      (void)ListBundles(s.bytes, &spans);
    }
  }
}

// A copy of exactly `n` bytes on the heap, so ASan sees a read past it.
Blob Prefix(const Blob& b, size_t n) { return Blob(b.begin(), b.begin() + n); }

TEST(HostileBundleTest, EveryTruncationOfAPlainBundleFails) {
  const Blob b = SmallBundle();
  for (size_t n = 0; n < b.size(); ++n) {
    const Blob cut = Prefix(b, n);
    Bundle bundle;
    EXPECT_FALSE(ParseBundle(cut, &bundle).ok()) << "length " << n;
    uint64_t size = 0;
    EXPECT_FALSE(ImageSize(cut, &size).ok()) << "length " << n;
  }
}

TEST(HostileBundleTest, EveryTruncationOfACcobFails) {
  for (int version : {1, 2, 3}) {
    for (int method : {0, 1}) {
      const Blob c = testing::MakeCcob(SmallBundle(), static_cast<uint16_t>(version), static_cast<uint16_t>(method));
      for (size_t n = 0; n < c.size(); ++n) {
        Bundle bundle;
        EXPECT_FALSE(ParseBundle(Prefix(c, n), &bundle).ok()) << "v" << version << " m" << method << " len " << n;
      }
    }
  }
}

TEST(HostileBundleTest, HugeCountsOffsetsAndSizes) {
  const Blob good = SmallBundle();
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(good, &bundle).ok());
  const size_t entry1 = 32 + 24 + std::string("host-x86_64-unknown-linux-").size();  // Second entry's fields.
  struct Patch {
    const char* what;
    size_t at;
    uint64_t value;
  };
  const Patch patches[] = {
      {"count 2^64-1", 24, ~uint64_t{0}},
      {"count 2^32", 24, uint64_t{1} << 32},
      {"count 3", 24, 3},
      {"offset 2^64-1", entry1, ~uint64_t{0}},
      {"offset past end", entry1, good.size()},
      {"size 2^64-1", entry1 + 8, ~uint64_t{0}},
      {"size wraps with offset", entry1 + 8, ~uint64_t{0} - 100},
      {"size past end", entry1 + 8, good.size()},
      {"id length 2^64-1", entry1 + 16, ~uint64_t{0}},
      {"id length 0", entry1 + 16, 0},
      {"id length past end", entry1 + 16, good.size()},
      {"offset inside the table", entry1, 8},
  };
  for (const Patch& p : patches) {
    Blob b = good;
    PutAt<uint64_t>(&b, p.at, p.value);
    EXPECT_FALSE(ParseBundle(b, &bundle).ok()) << p.what;
    ParseAll(b);
  }
}

TEST(HostileBundleTest, OverlappingEntriesRejected) {
  Blob b = testing::MakeBundle({{"hipv4-amdgcn-amd-amdhsa--gfx90a", BlobOf("AAAAAAAAAAAAAAAA")},
                                {"hipv4-amdgcn-amd-amdhsa--gfx908", BlobOf("BBBBBBBBBBBBBBBB")}});
  Bundle bundle;
  ASSERT_TRUE(ParseBundle(b, &bundle).ok());
  const uint64_t first_offset = bundle.entries[0].offset;
  const size_t second = 32 + 24 + std::string("hipv4-amdgcn-amd-amdhsa--gfx90a").size();
  PutAt<uint64_t>(&b, second, first_offset + 8);  // Starts inside the first.
  Status st = ParseBundle(b, &bundle);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("overlap"), std::string::npos) << st.message();
}

TEST(HostileBundleTest, CcobLies) {
  const Blob plain = SmallBundle();
  Bundle bundle;
  {  // v3 claiming 100 GiB uncompressed.
    Blob c = testing::MakeCcob(plain, 3, 1);
    PutAt<uint64_t>(&c, 16, uint64_t{100} << 30);
    Status st = ParseBundle(c, &bundle);
    EXPECT_FALSE(st.ok());
    EXPECT_NE(st.message().find("limit"), std::string::npos) << st.message();
  }
  for (int method : {0, 1}) {
    {  // v3 total larger than the data, and smaller than its header.
      Blob c = testing::MakeCcob(plain, 3, static_cast<uint16_t>(method));
      PutAt<uint64_t>(&c, 8, c.size() + 1);
      EXPECT_FALSE(ParseBundle(c, &bundle).ok());
      PutAt<uint64_t>(&c, 8, 7);
      EXPECT_FALSE(ParseBundle(c, &bundle).ok());
      PutAt<uint64_t>(&c, 8, ~uint64_t{0});
      EXPECT_FALSE(ParseBundle(c, &bundle).ok());
    }
    for (uint32_t claimed : {0u, 1u, static_cast<uint32_t>(plain.size() - 1), static_cast<uint32_t>(plain.size() + 1),
                             0xffffffffu}) {  // v2 uncompressed size wrong.
      Blob c = testing::MakeCcob(plain, 2, static_cast<uint16_t>(method));
      PutAt<uint32_t>(&c, 12, claimed);
      EXPECT_FALSE(ParseBundle(c, &bundle).ok()) << claimed;
    }
    {  // v2 total cuts the stream short.
      Blob c = testing::MakeCcob(plain, 2, static_cast<uint16_t>(method));
      PutAt<uint32_t>(&c, 8, static_cast<uint32_t>(c.size() - 3));
      EXPECT_FALSE(ParseBundle(c, &bundle).ok());
    }
    {  // Flipped bits in the stream.
      Blob c = testing::MakeCcob(plain, 1, static_cast<uint16_t>(method));
      for (size_t i = 20; i < c.size(); ++i) {
        Blob d = c;
        d[i] ^= 0x41;
        ParseAll(d);
      }
    }
  }
  {  // Unknown version and method.
    Blob c = testing::MakeCcob(plain, 3, 1);
    PutAt<uint16_t>(&c, 4, 4);
    EXPECT_FALSE(ParseBundle(c, &bundle).ok());
    c = testing::MakeCcob(plain, 3, 1);
    PutAt<uint16_t>(&c, 6, 2);
    EXPECT_FALSE(ParseBundle(c, &bundle).ok());
  }
  {  // A CCOB whose payload is not a bundle (hash correct).
    const Blob c = testing::MakeCcob(BlobOf("not a bundle at all"), 3, 0);
    EXPECT_FALSE(ParseBundle(c, &bundle).ok());
  }
  {  // A CCOB inside a CCOB is not a bundle either.
    const Blob c = testing::MakeCcob(testing::MakeCcob(plain, 3, 0), 3, 0);
    EXPECT_FALSE(ParseBundle(c, &bundle).ok());
  }
}

TEST(HostileElfTest, EveryTruncationFails) {
  const Blob elf = testing::DefaultCodeObject(testing::MetadataV5());
  for (size_t n = 0; n < elf.size(); ++n) {
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(Prefix(elf, n), &info).ok()) << "length " << n;
    uint64_t size = 0;
    EXPECT_FALSE(ImageSize(Prefix(elf, n), &size).ok()) << "length " << n;
  }
}

TEST(HostileElfTest, HeaderFieldsOutOfRange) {
  const Blob good = testing::DefaultCodeObject(testing::MetadataV4());
  uint64_t shoff = 0;
  std::memcpy(&shoff, good.data() + 40, 8);
  struct Patch {
    const char* what;
    size_t at;
    uint64_t value;
    int width;
  };
  const Patch patches[] = {
      {"shoff huge", 40, ~uint64_t{0} - 10, 8},
      {"shoff past end", 40, good.size(), 8},
      {"shnum huge", 60, 0xfffe, 2},
      {"shentsize small", 58, 10, 2},
      {"shstrndx out of range", 62, 200, 2},
      {"phoff huge", 32, ~uint64_t{0}, 8},
      {"phentsize small", 54, 8, 2},
      {"ehsize small", 52, 10, 2},
      {"note offset huge", shoff + 64 + 24, ~uint64_t{0} - 4, 8},
      {"note size huge", shoff + 64 + 32, uint64_t{1} << 40, 8},
      {"dynsym link out of range", shoff + 2 * 64 + 40, 99, 4},
      {"dynsym entsize odd", shoff + 2 * 64 + 56, 7, 8},
      {"dynstr offset past end", shoff + 3 * 64 + 24, good.size(), 8},
      {"section name out of range", shoff + 64, 100000, 4},
  };
  for (const Patch& p : patches) {
    Blob b = good;
    if (p.width == 8) PutAt<uint64_t>(&b, p.at, p.value);
    if (p.width == 4) PutAt<uint32_t>(&b, p.at, static_cast<uint32_t>(p.value));
    if (p.width == 2) PutAt<uint16_t>(&b, p.at, static_cast<uint16_t>(p.value));
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(b, &info).ok()) << p.what;
    ParseAll(b);
  }
}

// A file-header field and the value it lies with.
struct HeaderLie {
  const char* what;
  size_t at;
  uint64_t value;
  int width;
};

void Apply(Blob* b, const HeaderLie& lie) {
  if (lie.width == 8) PutAt<uint64_t>(b, lie.at, lie.value);
  if (lie.width == 4) PutAt<uint32_t>(b, lie.at, static_cast<uint32_t>(lie.value));
  if (lie.width == 2) PutAt<uint16_t>(b, lie.at, static_cast<uint16_t>(lie.value));
}

// Lies the file header alone gives away: refused before either header
// table is read.
const HeaderLie kHeaderLies[] = {
    {"e_shnum 0xffff", 60, 0xffff, 2},
    {"e_shnum 0xff00 (SHN_LORESERVE)", 60, 0xff00, 2},
    {"e_shstrndx 0xff00", 62, 0xff00, 2},
    {"e_shstrndx 0xfffe", 62, 0xfffe, 2},
    {"e_shstrndx past e_shnum", 62, 0x00ff, 2},
    {"e_shentsize 65", 58, 65, 2},
    {"e_shentsize 128", 58, 128, 2},
    {"e_shentsize 0xffff", 58, 0xffff, 2},
    {"e_shentsize 0", 58, 0, 2},
    {"e_shoff inside the file header", 40, 8, 8},
    {"e_shoff past 1 GiB", 40, uint64_t{1} << 30, 8},
    {"e_shoff 2^64-64", 40, ~uint64_t{0} - 63, 8},
    {"e_phnum 0xffff (PN_XNUM)", 56, 0xffff, 2},
    {"e_phentsize 57", 54, 57, 2},
    {"e_phentsize 0", 54, 0, 2},
    {"e_phoff inside the file header", 32, 8, 8},
    {"e_phoff past 1 GiB", 32, (uint64_t{1} << 30) - 8, 8},
    {"e_phoff 2^64-8", 32, ~uint64_t{0} - 7, 8},
};

TEST(HostileElfTest, HeaderCountAndSizeLies) {
  const Blob good = testing::DefaultCodeObject(testing::MetadataV4());
  uint64_t size = 0;
  ASSERT_TRUE(ImageSize(good, &size).ok());
  for (const HeaderLie& lie : kHeaderLies) {
    Blob b = good;
    Apply(&b, lie);
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(b, &info).ok()) << lie.what;
    EXPECT_FALSE(ImageSize(b, &size).ok()) << lie.what;
    ParseAll(b);
  }
  // Extended numbering (e_shnum 0: the count is section 0's sh_size).
  uint64_t shoff = 0;
  std::memcpy(&shoff, good.data() + 40, 8);
  for (uint64_t count : {uint64_t{0xffff}, (uint64_t{1} << 20) + 1, uint64_t{1} << 32, ~uint64_t{0}}) {
    Blob b = good;
    PutAt<uint16_t>(&b, 60, 0);
    PutAt<uint64_t>(&b, shoff + 32, count);
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(b, &info).ok()) << count;
    EXPECT_FALSE(ImageSize(b, &size).ok()) << count;
    ParseAll(b);
  }
  {  // e_shstrndx SHN_XINDEX with section 0's sh_link past the count.
    Blob b = good;
    PutAt<uint16_t>(&b, 62, 0xffff);
    PutAt<uint32_t>(&b, shoff + 40, 0x10000);
    EXPECT_FALSE(ImageSize(b, &size).ok());
    ParseAll(b);
  }
}

// hipModuleLoadData gives a pointer and no size: ImageSize then sees a view
// far larger than the image. A file header followed by unreadable memory,
// in a view that claims 2 GiB, with each lie above: refused without a read
// past the header (one would fault on the PROT_NONE pages).
TEST(HostileElfTest, HeaderLiesRefusedWithNoStatedSize) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t claimed = (size_t{2} << 30) + page;
  void* m = mmap(nullptr, claimed, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  auto* base = static_cast<uint8_t*>(m);
  ASSERT_EQ(mprotect(base, page, PROT_READ | PROT_WRITE), 0);
  uint8_t* elf = base + page - 64;  // The header fills the end of the only readable page.
  Blob header = testing::DefaultCodeObject(testing::MetadataV4());
  header.resize(64);
  for (const HeaderLie& lie : kHeaderLies) {
    Blob b = header;
    Apply(&b, lie);
    std::memcpy(elf, b.data(), b.size());
    ASSERT_TRUE(LooksLikeAmdgpuElf(Bytes(elf, 64)));
    uint64_t size = 0;
    EXPECT_FALSE(ImageSize(Bytes(elf, claimed - page + 64), &size).ok()) << lie.what;
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(Bytes(elf, claimed - page + 64), &info).ok()) << lie.what;
  }
  {  // A plain bundle's entry count: no real bundle has thousands of entries.
    uint8_t* bundle = base + page - 32;
    std::memcpy(bundle, "__CLANG_OFFLOAD_BUNDLE__", 24);
    const uint64_t count = 4097;
    std::memcpy(bundle + 24, &count, 8);
    uint64_t size = 0;
    EXPECT_FALSE(ImageSize(Bytes(bundle, claimed - page + 32), &size).ok());
  }
  munmap(m, claimed);
}

TEST(HostileElfTest, NoteFieldsOutOfRange) {
  const Blob metadata = testing::Pack(testing::MetadataV4());
  for (uint32_t namesz : {0u, 5u, 8u, 0xfffffff0u, 0xffffffffu}) {
    Blob note = testing::MakeNote("AMDGPU", 32, metadata);
    PutAt<uint32_t>(&note, 0, namesz);
    Blob elf = testing::MakeElf(224, {{".note", 7, note, 0, 0, 4}}, 0);
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(elf, &info).ok()) << namesz;
  }
  for (uint32_t descsz : {0u, 1u, static_cast<uint32_t>(metadata.size() + 64), 0xffffffffu}) {
    Blob note = testing::MakeNote("AMDGPU", 32, metadata);
    PutAt<uint32_t>(&note, 4, descsz);
    Blob elf = testing::MakeElf(224, {{".note", 7, note, 0, 0, 4}}, 0);
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(elf, &info).ok()) << descsz;
  }
  // Wrong owner or type: no metadata note.
  CodeObjectInfo info;
  EXPECT_FALSE(ParseCodeObject(testing::MakeElf(224, {{".note", 7, testing::MakeNote("AMDGPX", 32, metadata)}}),
                               &info).ok());
  EXPECT_FALSE(ParseCodeObject(testing::MakeElf(224, {{".note", 7, testing::MakeNote("AMDGPU", 33, metadata)}}),
                               &info).ok());
  // Not AMDGPU.
  EXPECT_FALSE(ParseCodeObject(testing::MakeElf(62, {{".note", 7, testing::MakeNote("AMDGPU", 32, metadata)}}),
                               &info).ok());
}

// Each mutation of the v4 metadata tree must be rejected.
TEST(HostileMetadataTest, WrongTypesAndMissingKeys) {
  using Mutation = std::function<void(Mp*)>;
  auto kernel = [](Mp* root) -> Mp& { return (*root)["amdhsa.kernels"].at(0); };
  const std::vector<std::pair<const char*, Mutation>> mutations = {
      {"root is an array", [](Mp* r) { *r = MpArray{1, 2}; }},
      {"root is a string", [](Mp* r) { *r = "amdhsa"; }},
      {"version missing", [](Mp* r) { r->Erase("amdhsa.version"); }},
      {"version a string", [](Mp* r) { (*r)["amdhsa.version"] = "1.1"; }},
      {"version too short", [](Mp* r) { (*r)["amdhsa.version"] = MpArray{1}; }},
      {"version negative", [](Mp* r) { (*r)["amdhsa.version"] = MpArray{Mp::Neg(-1), 1}; }},
      {"version major 2", [](Mp* r) { (*r)["amdhsa.version"] = MpArray{2, 0}; }},
      {"target a number", [](Mp* r) { (*r)["amdhsa.target"] = 90; }},
      {"kernels a map", [](Mp* r) { (*r)["amdhsa.kernels"] = MpMap{}; }},
      {"kernel a string", [](Mp* r) { (*r)["amdhsa.kernels"] = MpArray{"k"}; }},
      {"name missing", [&](Mp* r) { kernel(r).Erase(".name"); }},
      {"symbol missing", [&](Mp* r) { kernel(r).Erase(".symbol"); }},
      {"kernarg size missing", [&](Mp* r) { kernel(r).Erase(".kernarg_segment_size"); }},
      {"name a number", [&](Mp* r) { kernel(r)[".name"] = 5; }},
      {"kernarg size a string", [&](Mp* r) { kernel(r)[".kernarg_segment_size"] = "72"; }},
      {"kernarg size negative", [&](Mp* r) { kernel(r)[".kernarg_segment_size"] = Mp::Neg(-8); }},
      {"kernarg size 2^32", [&](Mp* r) { kernel(r)[".kernarg_segment_size"] = uint64_t{1} << 32; }},
      {"sgpr count a bool", [&](Mp* r) { kernel(r)[".sgpr_count"] = Mp::Bool(true); }},
      {"args a map", [&](Mp* r) { kernel(r)[".args"] = MpMap{}; }},
      {"arg a number", [&](Mp* r) { kernel(r)[".args"].at(0) = 3; }},
      {"arg offset missing", [&](Mp* r) { kernel(r)[".args"].at(1).Erase(".offset"); }},
      {"arg size missing", [&](Mp* r) { kernel(r)[".args"].at(1).Erase(".size"); }},
      {"arg kind missing", [&](Mp* r) { kernel(r)[".args"].at(1).Erase(".value_kind"); }},
      {"arg kind a number", [&](Mp* r) { kernel(r)[".args"].at(1)[".value_kind"] = 1; }},
      {"arg offset a string", [&](Mp* r) { kernel(r)[".args"].at(1)[".offset"] = "8"; }},
      {"arg past the segment", [&](Mp* r) { kernel(r)[".args"].at(1)[".offset"] = 70; }},
      {"arg huge", [&](Mp* r) { kernel(r)[".args"].at(1)[".size"] = 0xffffffffu; }},
      {"arg name a map", [&](Mp* r) { kernel(r)[".args"].at(1)[".name"] = MpMap{}; }},
  };
  for (const auto& [what, mutate] : mutations) {
    Mp root = testing::MetadataV4();
    mutate(&root);
    CodeObjectInfo info;
    Status st = ParseCodeObject(testing::DefaultCodeObject(root), &info);
    EXPECT_FALSE(st.ok()) << what;
  }
}

TEST(HostileMetadataTest, BadMsgpack) {
  const std::vector<Blob> bodies = {
      {0xdd, 0xff, 0xff, 0xff, 0xff},        // array32 of 2^32-1 elements, no data
      {0xdf, 0xff, 0xff, 0xff, 0xff},        // map32 of 2^32-1 entries
      {0xdb, 0xff, 0xff, 0xff, 0xff, 'a'},   // str32 of 4 GiB
      {0xc1},                                // never-used byte
      {0x81, 0xa1},                          // truncated key
      {0xc7, 0x01, 0x05, 0x00},              // ext8: ext disallowed
      Blob(64, 0x91),                        // nesting deeper than the limit
  };
  for (const Blob& body : bodies) {
    CodeObjectInfo info;
    EXPECT_FALSE(ParseCodeObject(testing::MakeCodeObject(body, {}), &info).ok());
  }
}

TEST(HostileHostElfTest, GarbageAfterABundleInTheSection) {
  Blob b = SmallBundle();
  Blob host = testing::MakeHostElf({b, BlobOf("garbage!")});
  std::vector<HostSection> sections;
  ASSERT_TRUE(FindHipFatbinSections(host, &sections).ok());
  ASSERT_EQ(sections.size(), 1u);
  std::vector<BundleSpan> spans;
  EXPECT_FALSE(ListBundles(sections[0].bytes, &spans).ok());
  for (size_t n = 0; n < host.size(); n += 7) ParseAll(Prefix(host, n));
}

}  // namespace
}  // namespace hipr::co
