// code_object_seeds OUT_DIR [HOST_ELF...]: writes the fuzz seed corpus:
// constructed bundles (plain; CCOB v1-v3 with zlib and zstd), code objects
// v4 and v5, code objects whose file header lies about its tables (counts,
// entry sizes, offsets), a host ELF with a .hip_fatbin, and, for each HOST_ELF given
// (e.g. a hipcc-built libkern.so), every bundle of its .hip_fatbin and every
// non-empty entry of those. Exits 1 if a HOST_ELF is unreadable or has no
// bundle.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/code_object_test_util.h"
#include "protocol/code_object/host_fatbin.h"

namespace {

namespace t = hipr::co::testing;

bool Write(const std::filesystem::path& dir, const std::string& name, hipr::co::Bytes data) {
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

bool WriteConstructed(const std::filesystem::path& dir) {
  const t::Blob v4 = t::DefaultCodeObject(t::MetadataV4());
  const t::Blob v5 = t::DefaultCodeObject(t::MetadataV5());
  const t::Blob bundle = t::MakeBundle({{"host-x86_64-unknown-linux-", {}},
                                        {"hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-", v4},
                                        {"hipv4-amdgcn-amd-amdhsa--gfx908", v5}});
  bool ok = Write(dir, "co_v4.co", v4) && Write(dir, "co_v5.co", v5) && Write(dir, "plain.hipfb", bundle);
  for (uint16_t version : {1, 2, 3}) {
    for (uint16_t method : {0, 1}) {
      const std::string name = "ccob_v" + std::to_string(version) + (method ? "_zstd" : "_zlib");
      ok = ok && Write(dir, name, t::MakeCcob(bundle, version, method));
    }
  }
  ok = ok && Write(dir, "host.elf", t::MakeHostElf({bundle, t::MakeCcob(bundle, 3, 1)}));
  ok = ok && Write(dir, "meta_v5.msgpack", t::Pack(t::MetadataV5()));
  // Header lies (code_object_hostile_test.cc): near misses the fuzzer can
  // mutate from, each refused by a different check.
  struct Lie {
    const char* name;
    size_t at;
    uint64_t value;
    int width;
  };
  uint64_t shoff = 0;
  std::memcpy(&shoff, v4.data() + 40, 8);
  const Lie lies[] = {
      {"lie_shnum_ffff.co", 60, 0xffff, 2},
      {"lie_shnum_0.co", 60, 0, 2},  // Extended numbering: section 0's sh_size (2^21 below) is the count.
      {"lie_shentsize_65.co", 58, 65, 2},
      {"lie_shoff_header.co", 40, 8, 8},
      {"lie_shoff_1g.co", 40, uint64_t{1} << 30, 8},
      {"lie_shstrndx_ff00.co", 62, 0xff00, 2},
      {"lie_phnum_ffff.co", 56, 0xffff, 2},
      {"lie_phentsize_57.co", 54, 57, 2},
      {"lie_phoff_huge.co", 32, ~uint64_t{0} - 7, 8},
  };
  for (const Lie& lie : lies) {
    t::Blob b = v4;
    if (lie.width == 8) t::PutAt<uint64_t>(&b, lie.at, lie.value);
    if (lie.width == 2) t::PutAt<uint16_t>(&b, lie.at, static_cast<uint16_t>(lie.value));
    t::PutAt<uint64_t>(&b, shoff + 32, uint64_t{1} << 21);  // Section 0's sh_size, read only with e_shnum 0.
    ok = ok && Write(dir, lie.name, b);
  }
  return ok;
}

bool WriteFromHost(const std::filesystem::path& dir, const std::filesystem::path& host, int index) {
  std::ifstream in(host, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read %s\n", host.c_str());
    return false;
  }
  const std::vector<uint8_t> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<hipr::co::HostSection> sections;
  hipr::Status st = hipr::co::FindHipFatbinSections(data, &sections);
  size_t written = 0;
  for (size_t s = 0; st.ok() && s < sections.size(); ++s) {
    std::vector<hipr::co::BundleSpan> spans;
    st = hipr::co::ListBundles(sections[s].bytes, &spans);
    for (size_t b = 0; st.ok() && b < spans.size(); ++b) {
      const std::string prefix = "host" + std::to_string(index) + "_s" + std::to_string(s) + "_b" + std::to_string(b);
      const hipr::co::Bytes bytes = sections[s].bytes.subspan(spans[b].offset, spans[b].size);
      if (!Write(dir, prefix + ".hipfb", bytes)) return false;
      ++written;
      hipr::co::Bundle bundle;
      st = hipr::co::ParseBundle(bytes, &bundle);
      for (size_t e = 0; st.ok() && e < bundle.entries.size(); ++e) {
        if (bundle.entries[e].size == 0) continue;
        if (!Write(dir, prefix + "_e" + std::to_string(e) + ".co", bundle.entries[e].bytes)) return false;
      }
    }
  }
  if (!st.ok() || written == 0) {
    std::fprintf(stderr, "%s: %s\n", host.c_str(), st.ok() ? "no bundles" : st.message().c_str());
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR [HOST_ELF...]\n", argv[0]);
    return 2;
  }
  const std::filesystem::path dir(argv[1]);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!WriteConstructed(dir)) {
    std::fprintf(stderr, "cannot write seeds to %s\n", dir.c_str());
    return 1;
  }
  for (int i = 2; i < argc; ++i) {
    if (!WriteFromHost(dir, argv[i], i - 2)) return 1;
  }
  return 0;
}
