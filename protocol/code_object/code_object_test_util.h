// Test-only builders for the code-object toolkit: offload bundles, CCOB
// wrappers (v1-v3, zlib/zstd), msgpack metadata trees, AMDGPU code objects
// and host ELFs with a .hip_fatbin section. Used by code_object_test and by
// code_object_seeds (the fuzz corpus generator). Not for production code.
#pragma once

#include <msgpack.hpp>
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace hipr::co::testing {

using Blob = std::vector<uint8_t>;

inline void PutBytes(Blob* b, const void* p, size_t n) {
  const auto* c = static_cast<const uint8_t*>(p);
  b->insert(b->end(), c, c + n);
}
template <typename T>
void Put(Blob* b, T v) {
  PutBytes(b, &v, sizeof(v));
}
template <typename T>
void PutAt(Blob* b, size_t at, T v) {
  std::memcpy(b->data() + at, &v, sizeof(v));
}
inline void PadTo(Blob* b, size_t align) {
  while (b->size() % align != 0) b->push_back(0);
}
inline Blob BlobOf(std::string_view s) { return Blob(s.begin(), s.end()); }

// ---- Bundles -------------------------------------------------------------------

struct EntrySpec {
  std::string id;
  Blob bytes;
};

// A plain bundle; payloads start at `align`-aligned offsets after the table.
inline Blob MakeBundle(const std::vector<EntrySpec>& entries, size_t align = 16) {
  Blob b;
  PutBytes(&b, "__CLANG_OFFLOAD_BUNDLE__", 24);
  Put<uint64_t>(&b, entries.size());
  std::vector<size_t> offset_slots;
  for (const EntrySpec& e : entries) {
    offset_slots.push_back(b.size());
    Put<uint64_t>(&b, 0);
    Put<uint64_t>(&b, e.bytes.size());
    Put<uint64_t>(&b, e.id.size());
    PutBytes(&b, e.id.data(), e.id.size());
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    PadTo(&b, align);
    PutAt<uint64_t>(&b, offset_slots[i], b.size());
    PutBytes(&b, entries[i].bytes.data(), entries[i].bytes.size());
  }
  return b;
}

inline uint64_t Md5Low64(const Blob& data) {
  uint8_t md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_md5(), nullptr);
  uint64_t low = 0;
  std::memcpy(&low, md, 8);  // The low word of the digest, read little-endian.
  return low;
}

// A CCOB of `plain`: version 1-3, method 0 zlib / 1 zstd.
inline Blob MakeCcob(const Blob& plain, uint16_t version, uint16_t method, bool corrupt_hash = false) {
  Blob packed;
  if (method == 0) {
    uLongf len = compressBound(plain.size());
    packed.resize(len);
    if (compress2(packed.data(), &len, plain.data(), plain.size(), 6) != Z_OK) throw std::runtime_error("zlib");
    packed.resize(len);
  } else {
    packed.resize(ZSTD_compressBound(plain.size()));
    const size_t len = ZSTD_compress(packed.data(), packed.size(), plain.data(), plain.size(), 3);
    if (ZSTD_isError(len)) throw std::runtime_error("zstd");
    packed.resize(len);
  }
  const uint64_t hash = Md5Low64(plain) ^ (corrupt_hash ? 1 : 0);
  Blob b;
  PutBytes(&b, "CCOB", 4);
  Put<uint16_t>(&b, version);
  Put<uint16_t>(&b, method);
  const size_t header = version == 1 ? 20 : version == 2 ? 24 : 32;
  if (version == 1) {
    Put<uint32_t>(&b, static_cast<uint32_t>(plain.size()));
  } else if (version == 2) {
    Put<uint32_t>(&b, static_cast<uint32_t>(header + packed.size()));
    Put<uint32_t>(&b, static_cast<uint32_t>(plain.size()));
  } else {
    Put<uint64_t>(&b, header + packed.size());
    Put<uint64_t>(&b, plain.size());
  }
  Put<uint64_t>(&b, hash);
  PutBytes(&b, packed.data(), packed.size());
  return b;
}

// ---- msgpack trees -------------------------------------------------------------

struct Mp;
using MpMap = std::vector<std::pair<std::string, Mp>>;
using MpArray = std::vector<Mp>;
struct Mp {
  std::variant<uint64_t, int64_t, std::string, bool, MpArray, MpMap> v;
  Mp() : v(uint64_t{0}) {}
  Mp(uint64_t x) : v(x) {}                  // NOLINT: implicit for brevity.
  Mp(int x) : v(static_cast<uint64_t>(x)) {}  // NOLINT
  Mp(unsigned x) : v(uint64_t{x}) {}          // NOLINT
  Mp(std::string x) : v(std::move(x)) {}    // NOLINT
  Mp(const char* x) : v(std::string(x)) {}  // NOLINT
  Mp(MpArray x) : v(std::move(x)) {}        // NOLINT
  Mp(MpMap x) : v(std::move(x)) {}          // NOLINT
  static Mp Neg(int64_t x) { Mp m; m.v = x; return m; }
  static Mp Bool(bool x) { Mp m; m.v = x; return m; }
  // The value at `key` of a map (inserted if absent).
  Mp& operator[](const std::string& key) {
    auto& m = std::get<MpMap>(v);
    for (auto& kv : m) {
      if (kv.first == key) return kv.second;
    }
    // Built in place: moving a temporary Mp in makes GCC 16 warn (wrongly)
    // that the variant's other alternatives may be read uninitialized.
    m.emplace_back(std::piecewise_construct, std::forward_as_tuple(key), std::forward_as_tuple());
    return m.back().second;
  }
  Mp& at(size_t i) { return std::get<MpArray>(v).at(i); }
  void Erase(const std::string& key) {
    auto& m = std::get<MpMap>(v);
    for (auto it = m.begin(); it != m.end(); ++it) {
      if (it->first == key) {
        m.erase(it);
        return;
      }
    }
  }
};

inline void PackMp(msgpack::packer<msgpack::sbuffer>* pk, const Mp& m) {
  if (auto* u = std::get_if<uint64_t>(&m.v)) pk->pack_uint64(*u);
  else if (auto* i = std::get_if<int64_t>(&m.v)) pk->pack_int64(*i);
  else if (auto* s = std::get_if<std::string>(&m.v)) pk->pack(*s);
  else if (auto* b = std::get_if<bool>(&m.v)) *b ? pk->pack_true() : pk->pack_false();
  else if (auto* a = std::get_if<MpArray>(&m.v)) {
    pk->pack_array(static_cast<uint32_t>(a->size()));
    for (const Mp& x : *a) PackMp(pk, x);
  } else {
    const auto& map = std::get<MpMap>(m.v);
    pk->pack_map(static_cast<uint32_t>(map.size()));
    for (const auto& [k, x] : map) {
      pk->pack(k);
      PackMp(pk, x);
    }
  }
}

inline Blob Pack(const Mp& m) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(&buf);
  PackMp(&pk, m);
  return Blob(buf.data(), buf.data() + buf.size());
}

inline Mp Arg(uint32_t offset, uint32_t size, const char* kind, const char* address_space = nullptr) {
  Mp a = MpMap{};
  a[".offset"] = offset;
  a[".size"] = size;
  a[".value_kind"] = kind;
  if (address_space) a[".address_space"] = address_space;
  return a;
}

inline Mp Kernel(const std::string& name, uint32_t kernarg_size, MpArray args) {
  Mp k = MpMap{};
  k[".name"] = name;
  k[".symbol"] = name + ".kd";
  k[".kernarg_segment_size"] = kernarg_size;
  k[".kernarg_segment_align"] = 8;
  k[".group_segment_fixed_size"] = 0;
  k[".private_segment_fixed_size"] = 0;
  k[".max_flat_workgroup_size"] = 1024;
  k[".wavefront_size"] = 64;
  k[".sgpr_count"] = 12;
  k[".vgpr_count"] = 4;
  k[".language"] = "OpenCL C";
  k[".language_version"] = MpArray{2, 0};
  k[".uses_dynamic_stack"] = Mp::Bool(false);
  k[".args"] = std::move(args);
  return k;
}

// Code object v4 ([1,1]): explicit (ptr, int, int) then the 8-byte hidden args.
inline Mp MetadataV4() {
  MpArray args{Arg(0, 8, "global_buffer", "global"), Arg(8, 4, "by_value"), Arg(12, 4, "by_value"),
               Arg(16, 8, "hidden_global_offset_x"), Arg(24, 8, "hidden_global_offset_y"),
               Arg(32, 8, "hidden_global_offset_z"), Arg(40, 8, "hidden_none"), Arg(48, 8, "hidden_none"),
               Arg(56, 8, "hidden_none"), Arg(64, 8, "hidden_multigrid_sync_arg")};
  Mp root = MpMap{};
  root["amdhsa.kernels"] = MpArray{Kernel("_Z5scalePffi", 72, std::move(args)),
                                    Kernel("_Z4noopv", 0, MpArray{})};
  root["amdhsa.target"] = "amdgcn-amd-amdhsa--gfx90a";
  root["amdhsa.version"] = MpArray{1, 1};
  return root;
}

// Code object v5 ([1,2]): explicit (ptr, int) then hidden args inside the
// 256-byte block after them, unused ones dropped.
inline Mp MetadataV5() {
  MpArray args{Arg(0, 8, "global_buffer", "global"), Arg(8, 4, "by_value"),
               Arg(16, 4, "hidden_block_count_x"), Arg(20, 4, "hidden_block_count_y"),
               Arg(24, 4, "hidden_block_count_z"), Arg(28, 2, "hidden_group_size_x"),
               Arg(30, 2, "hidden_group_size_y"), Arg(32, 2, "hidden_group_size_z"),
               Arg(34, 2, "hidden_remainder_x"), Arg(36, 2, "hidden_remainder_y"),
               Arg(38, 2, "hidden_remainder_z"), Arg(56, 8, "hidden_global_offset_x"),
               Arg(64, 8, "hidden_global_offset_y"), Arg(72, 8, "hidden_global_offset_z"),
               Arg(80, 2, "hidden_grid_dims"), Arg(96, 8, "hidden_hostcall_buffer"),
               Arg(112, 8, "hidden_heap_v1"), Arg(216, 8, "hidden_queue_ptr")};
  Mp root = MpMap{};
  root["amdhsa.kernels"] = MpArray{Kernel("_Z6squarePfi", 272, std::move(args))};
  root["amdhsa.target"] = "amdgcn-amd-amdhsa--gfx90a:xnack-";
  root["amdhsa.version"] = MpArray{1, 2};
  return root;
}

// ---- ELF -----------------------------------------------------------------------

struct SectionSpec {
  std::string name;
  uint32_t type = 1;  // SHT_PROGBITS
  Blob data;
  uint32_t link = 0;
  uint64_t entsize = 0;
  size_t align = 8;
};

// An ELF64 little-endian ET_DYN file: header, optional PT_NOTE program
// header covering section `note_section`, the sections, the section header
// table (section 0 null, then `sections`, then .shstrtab).
inline Blob MakeElf(uint16_t machine, const std::vector<SectionSpec>& sections, int note_section = -1) {
  Blob b(64, 0);
  const bool with_phdr = note_section >= 0;
  if (with_phdr) b.resize(64 + 56, 0);
  std::vector<SectionSpec> all = sections;
  SectionSpec shstr{".shstrtab", 3, {}, 0, 0, 1};
  std::vector<uint32_t> name_offsets;
  shstr.data.push_back(0);
  for (const SectionSpec& s : all) {
    name_offsets.push_back(static_cast<uint32_t>(shstr.data.size()));
    PutBytes(&shstr.data, s.name.c_str(), s.name.size() + 1);
  }
  name_offsets.push_back(static_cast<uint32_t>(shstr.data.size()));
  PutBytes(&shstr.data, ".shstrtab", 10);
  all.push_back(shstr);
  std::vector<uint64_t> offsets;
  for (const SectionSpec& s : all) {
    PadTo(&b, s.align);
    offsets.push_back(b.size());
    PutBytes(&b, s.data.data(), s.data.size());
  }
  PadTo(&b, 8);
  const uint64_t shoff = b.size();
  b.resize(b.size() + 64, 0);  // Null section.
  for (size_t i = 0; i < all.size(); ++i) {
    Put<uint32_t>(&b, name_offsets[i]);
    Put<uint32_t>(&b, all[i].type);
    Put<uint64_t>(&b, 2);  // SHF_ALLOC
    Put<uint64_t>(&b, offsets[i]);
    Put<uint64_t>(&b, offsets[i]);
    Put<uint64_t>(&b, all[i].data.size());
    Put<uint32_t>(&b, all[i].link);
    Put<uint32_t>(&b, 0);
    Put<uint64_t>(&b, all[i].align);
    Put<uint64_t>(&b, all[i].entsize);
  }
  const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64, 2};
  std::memcpy(b.data(), ident, 16);
  PutAt<uint16_t>(&b, 16, 3);  // ET_DYN
  PutAt<uint16_t>(&b, 18, machine);
  PutAt<uint32_t>(&b, 20, 1);
  PutAt<uint64_t>(&b, 32, with_phdr ? 64 : 0);
  PutAt<uint64_t>(&b, 40, shoff);
  PutAt<uint16_t>(&b, 52, 64);
  PutAt<uint16_t>(&b, 54, 56);
  PutAt<uint16_t>(&b, 56, with_phdr ? 1 : 0);
  PutAt<uint16_t>(&b, 58, 64);
  PutAt<uint16_t>(&b, 60, static_cast<uint16_t>(all.size() + 1));
  PutAt<uint16_t>(&b, 62, static_cast<uint16_t>(all.size()));
  if (with_phdr) {
    PutAt<uint32_t>(&b, 64, 4);  // PT_NOTE
    PutAt<uint32_t>(&b, 68, 4);  // PF_R
    PutAt<uint64_t>(&b, 72, offsets[note_section]);
    PutAt<uint64_t>(&b, 80, offsets[note_section]);
    PutAt<uint64_t>(&b, 88, offsets[note_section]);
    PutAt<uint64_t>(&b, 96, all[note_section].data.size());
    PutAt<uint64_t>(&b, 104, all[note_section].data.size());
    PutAt<uint64_t>(&b, 112, 4);
  }
  return b;
}

inline Blob MakeNote(const std::string& owner, uint32_t type, const Blob& desc) {
  Blob n;
  Put<uint32_t>(&n, static_cast<uint32_t>(owner.size() + 1));
  Put<uint32_t>(&n, static_cast<uint32_t>(desc.size()));
  Put<uint32_t>(&n, type);
  PutBytes(&n, owner.c_str(), owner.size() + 1);
  PadTo(&n, 4);
  PutBytes(&n, desc.data(), desc.size());
  PadTo(&n, 4);
  return n;
}

struct SymbolSpec {
  std::string name;
  uint8_t type = 1;  // STT_OBJECT
  uint64_t size = 0;
};

// An AMDGPU code object: .note (AMDGPU metadata), .dynsym/.dynstr with
// `symbols` (defined in section 1), and a PT_NOTE header over the note.
inline Blob MakeCodeObject(const Blob& metadata, const std::vector<SymbolSpec>& symbols) {
  SectionSpec note{".note", 7, MakeNote("AMDGPU", 32, metadata), 0, 0, 4};
  SectionSpec dynstr{".dynstr", 3, {0}, 0, 0, 1};
  SectionSpec dynsym{".dynsym", 11, Blob(24, 0), 3, 24, 8};  // Link: .dynstr is section 3.
  for (const SymbolSpec& s : symbols) {
    Put<uint32_t>(&dynsym.data, static_cast<uint32_t>(dynstr.data.size()));
    PutBytes(&dynstr.data, s.name.c_str(), s.name.size() + 1);
    Put<uint8_t>(&dynsym.data, static_cast<uint8_t>(0x10 | s.type));  // STB_GLOBAL
    Put<uint8_t>(&dynsym.data, 0);
    Put<uint16_t>(&dynsym.data, 1);
    Put<uint64_t>(&dynsym.data, 0x1000);
    Put<uint64_t>(&dynsym.data, s.size);
  }
  return MakeElf(224, {note, dynsym, dynstr}, /*note_section=*/0);
}

inline Blob DefaultCodeObject(const Mp& metadata) {
  return MakeCodeObject(Pack(metadata), {{"_Z5scalePffi.kd", 1, 64}, {"d_table", 1, 256}, {"_Z5scalePffi", 2, 4}});
}

// A host (x86-64) ELF whose .hip_fatbin holds `bundles`, each at a
// 4096-aligned offset of the section.
inline Blob MakeHostElf(const std::vector<Blob>& bundles) {
  SectionSpec fatbin{".hip_fatbin", 1, {}, 0, 0, 4096};
  for (const Blob& b : bundles) {
    PadTo(&fatbin.data, 4096);
    PutBytes(&fatbin.data, b.data(), b.size());
  }
  SectionSpec text{".text", 1, Blob(100, 0xc3), 0, 0, 16};
  return MakeElf(62, {text, fatbin});
}

}  // namespace hipr::co::testing
