// ReadSharedObjectIdentity and ReadDynamicInfo: what a host ELF file says
// about its dynamic linking, from its section headers (code_object.h).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/elf_reader.h"

namespace hipr::co {
namespace {

using internal::ElfSection;
using internal::InBounds;
using internal::LoadLe;

constexpr uint32_t kShtDynamic = 6;
constexpr uint32_t kShtDynsym = 11;
constexpr uint32_t kShtGnuVerdef = 0x6ffffffd;
constexpr uint32_t kShtGnuVerneed = 0x6ffffffe;
constexpr uint32_t kShtGnuVersym = 0x6fffffff;
constexpr int64_t kDtNull = 0;
constexpr int64_t kDtNeeded = 1;
constexpr int64_t kDtSoname = 14;
constexpr int64_t kDtVerneednum = 0x6fffffff;
constexpr size_t kSymSize = 24;
constexpr size_t kVerneedSize = 16;
constexpr size_t kVernauxSize = 16;
constexpr uint16_t kVersymHidden = 0x8000;
constexpr uint16_t kShnUndef = 0;
constexpr uint8_t kStbWeak = 2;
// A dynamic symbol table of a large library (libtorch_hip) has a few
// hundred thousand entries; this bounds a hostile one.
constexpr uint64_t kMaxDynamicSymbols = uint64_t{1} << 24;
constexpr int64_t kDtVerdefnum = 0x6ffffffd;
constexpr uint16_t kVerFlgBase = 1;
constexpr size_t kDynSize = 16;
constexpr size_t kVerdefSize = 20;
constexpr size_t kVerdauxSize = 8;
// A HIP runtime defines a few dozen versions; this bounds a hostile chain.
constexpr uint64_t kMaxVerdefs = 4096;

Status Malformed(const std::string& what) { return InvalidArgument("malformed shared object: " + what); }

// The NUL-terminated string at `offset` of section `strtab`.
Status StringAt(const internal::ElfReader& elf, const ElfSection& strtab, uint64_t offset, std::string* out) {
  Bytes table = elf.SectionBytes(strtab);
  if (offset >= table.size()) return Malformed("string offset out of range");
  const auto* begin = reinterpret_cast<const char*>(table.data()) + offset;
  const size_t room = table.size() - offset;
  size_t n = 0;
  while (n < room && begin[n] != '\0') ++n;
  if (n == room) return Malformed("unterminated string");
  out->assign(begin, n);
  return Status::Ok();
}

const ElfSection* Linked(const internal::ElfReader& elf, const ElfSection& s) {
  if (s.link >= elf.sections().size()) return nullptr;
  const ElfSection& t = elf.sections()[s.link];
  return t.has_file_data() ? &t : nullptr;
}

struct Verdef {
  uint16_t index = 0;
  bool base = false;  // VER_FLG_BASE: the entry naming the file itself.
  std::string name;
};

// The `count` entries (DT_VERDEFNUM) of a SHT_GNU_verdef section, in order.
Status ReadVerdefs(const internal::ElfReader& elf, const ElfSection& verdef, uint64_t count, std::vector<Verdef>* out) {
  const ElfSection* verstr = Linked(elf, verdef);
  if (verstr == nullptr) return Malformed("the version definitions have no string table");
  if (count > kMaxVerdefs) return Malformed("too many version definitions");
  Bytes defs = elf.SectionBytes(verdef);
  uint64_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint16_t flags = 0;
    uint32_t aux = 0, next = 0, name = 0;
    Verdef d;
    if (!InBounds(at, kVerdefSize, defs.size())) return Malformed("version definition out of range");
    (void)LoadLe(defs, at + 2, &flags);
    (void)LoadLe(defs, at + 4, &d.index);
    (void)LoadLe(defs, at + 12, &aux);
    (void)LoadLe(defs, at + 16, &next);
    if (!InBounds(at + aux, kVerdauxSize, defs.size())) return Malformed("version name out of range");
    (void)LoadLe(defs, at + aux, &name);
    HIPR_RETURN_IF_ERROR(StringAt(elf, *verstr, name, &d.name));
    d.base = (flags & kVerFlgBase) != 0;
    out->push_back(std::move(d));
    if (next == 0) break;
    at += next;
  }
  return Status::Ok();
}

struct VersionName {
  std::string name;
  std::string file;  // Required versions: the file; empty for definitions.
};

// Version index -> name (and file) from .gnu.version_d and .gnu.version_r.
Status ReadVersionTable(const internal::ElfReader& elf, uint64_t verdef_count, uint64_t verneed_count,
                        std::map<uint16_t, VersionName>* out) {
  for (const ElfSection& s : elf.sections()) {
    if (s.type == kShtGnuVerdef) {
      std::vector<Verdef> defs;
      HIPR_RETURN_IF_ERROR(ReadVerdefs(elf, s, verdef_count, &defs));
      for (Verdef& d : defs) (*out)[d.index] = VersionName{std::move(d.name), {}};
      continue;
    }
    if (s.type != kShtGnuVerneed) continue;
    const ElfSection* strtab = Linked(elf, s);
    if (strtab == nullptr) return Malformed("the version requirements have no string table");
    Bytes b = elf.SectionBytes(s);
    uint64_t at = 0;
    if (verneed_count > kMaxVerdefs) return Malformed("too many required files");
    for (uint64_t i = 0; i < verneed_count; ++i) {
      uint16_t count = 0;
      uint32_t file = 0, aux = 0, next = 0;
      if (!InBounds(at, kVerneedSize, b.size())) return Malformed("version requirement out of range");
      (void)LoadLe(b, at + 2, &count);
      (void)LoadLe(b, at + 4, &file);
      (void)LoadLe(b, at + 8, &aux);
      (void)LoadLe(b, at + 12, &next);
      std::string file_name;
      HIPR_RETURN_IF_ERROR(StringAt(elf, *strtab, file, &file_name));
      uint64_t a = at + aux;
      for (uint16_t j = 0; j < count; ++j) {
        uint16_t index = 0;
        uint32_t name = 0, anext = 0;
        if (!InBounds(a, kVernauxSize, b.size())) return Malformed("required version out of range");
        (void)LoadLe(b, a + 6, &index);
        (void)LoadLe(b, a + 8, &name);
        (void)LoadLe(b, a + 12, &anext);
        VersionName v;
        HIPR_RETURN_IF_ERROR(StringAt(elf, *strtab, name, &v.name));
        v.file = file_name;
        (*out)[static_cast<uint16_t>(index & ~kVersymHidden)] = std::move(v);
        if (anext == 0) break;
        a += anext;
      }
      if (next == 0) break;
      at += next;
    }
  }
  return Status::Ok();
}

// What the dynamic section says that these readers use.
struct DynamicTags {
  std::string soname;
  std::vector<std::string> needed;
  uint64_t verdef_count = 0;
  uint64_t verneed_count = 0;
};

Status ReadDynamicTags(const internal::ElfReader& elf, DynamicTags* out) {
  const ElfSection* dynamic = nullptr;
  for (const ElfSection& s : elf.sections())
    if (s.type == kShtDynamic && dynamic == nullptr) dynamic = &s;
  if (dynamic == nullptr) return Malformed("no dynamic section");
  const ElfSection* dynstr = Linked(elf, *dynamic);
  if (dynstr == nullptr) return Malformed("the dynamic section has no string table");
  Bytes dyn = elf.SectionBytes(*dynamic);
  for (uint64_t at = 0; InBounds(at, kDynSize, dyn.size()); at += kDynSize) {
    int64_t tag = 0;
    uint64_t value = 0;
    (void)LoadLe(dyn, at, &tag);
    (void)LoadLe(dyn, at + 8, &value);
    if (tag == kDtNull) break;
    if (tag == kDtSoname) HIPR_RETURN_IF_ERROR(StringAt(elf, *dynstr, value, &out->soname));
    if (tag == kDtNeeded) HIPR_RETURN_IF_ERROR(StringAt(elf, *dynstr, value, &out->needed.emplace_back()));
    if (tag == kDtVerdefnum) out->verdef_count = value;
    if (tag == kDtVerneednum) out->verneed_count = value;
  }
  return Status::Ok();
}

}  // namespace

Status ReadDynamicInfo(Bytes data, DynamicInfo* out) {
  internal::ElfReader elf;
  HIPR_RETURN_IF_ERROR(elf.Open(data));
  DynamicTags tags;
  HIPR_RETURN_IF_ERROR(ReadDynamicTags(elf, &tags));
  const ElfSection* dynsym = nullptr;
  const ElfSection* versym = nullptr;
  for (const ElfSection& s : elf.sections()) {
    if (s.type == kShtDynsym && dynsym == nullptr) dynsym = &s;
    if (s.type == kShtGnuVersym && versym == nullptr) versym = &s;
  }
  DynamicInfo info;
  info.soname = std::move(tags.soname);
  info.needed = std::move(tags.needed);
  std::map<uint16_t, VersionName> versions;
  HIPR_RETURN_IF_ERROR(ReadVersionTable(elf, tags.verdef_count, tags.verneed_count, &versions));

  if (dynsym != nullptr) {
    const ElfSection* symstr = Linked(elf, *dynsym);
    if (symstr == nullptr) return Malformed("the dynamic symbols have no string table");
    Bytes syms = elf.SectionBytes(*dynsym);
    Bytes vers = versym != nullptr ? elf.SectionBytes(*versym) : Bytes();
    const uint64_t count = syms.size() / kSymSize;
    if (count > kMaxDynamicSymbols) return Malformed("too many dynamic symbols");
    for (uint64_t i = 1; i < count; ++i) {  // Entry 0 is the null symbol.
      uint32_t name = 0;
      uint8_t st_info = 0;
      uint16_t shndx = 0;
      (void)LoadLe(syms, i * kSymSize, &name);
      (void)LoadLe(syms, i * kSymSize + 4, &st_info);
      (void)LoadLe(syms, i * kSymSize + 6, &shndx);
      if (name == 0) continue;
      DynamicSymbol sym;
      HIPR_RETURN_IF_ERROR(StringAt(elf, *symstr, name, &sym.name));
      sym.defined = shndx != kShnUndef;
      sym.weak = (st_info >> 4) == kStbWeak;
      uint16_t index = 0;
      if (versym != nullptr) {
        if (!LoadLe(vers, i * 2, &index)) return Malformed("the symbol version table is short");
        index &= static_cast<uint16_t>(~kVersymHidden);
      }
      if (index > 1) {  // 0: local, 1: global, unversioned.
        auto it = versions.find(index);
        if (it == versions.end()) return Malformed("symbol " + sym.name + " names a version that is not there");
        sym.version = it->second.name;
        sym.version_file = it->second.file;
      }
      info.symbols.push_back(std::move(sym));
    }
  }
  *out = std::move(info);
  return Status::Ok();
}

Status ReadSharedObjectIdentity(Bytes data, SharedObjectIdentity* out) {
  internal::ElfReader elf;
  HIPR_RETURN_IF_ERROR(elf.Open(data));
  DynamicTags tags;
  HIPR_RETURN_IF_ERROR(ReadDynamicTags(elf, &tags));
  const ElfSection* verdef = nullptr;
  for (const ElfSection& s : elf.sections())
    if (s.type == kShtGnuVerdef && verdef == nullptr) verdef = &s;
  SharedObjectIdentity id;
  id.soname = std::move(tags.soname);
  const uint64_t verdef_count = tags.verdef_count;
  if (verdef != nullptr) {
    std::vector<Verdef> defs;
    HIPR_RETURN_IF_ERROR(ReadVerdefs(elf, *verdef, verdef_count, &defs));
    for (Verdef& d : defs)
      if (!d.base) id.version_definitions.push_back(std::move(d.name));
  }
  *out = std::move(id);
  return Status::Ok();
}

}  // namespace hipr::co
