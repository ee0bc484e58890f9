// ReadSharedObjectIdentity: a host shared library's DT_SONAME and version
// definitions, from its section headers (code_object.h).
#include <string>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/elf_reader.h"

namespace hipr::co {
namespace {

using internal::ElfSection;
using internal::InBounds;
using internal::LoadLe;

constexpr uint32_t kShtDynamic = 6;
constexpr uint32_t kShtGnuVerdef = 0x6ffffffd;
constexpr int64_t kDtNull = 0;
constexpr int64_t kDtSoname = 14;
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

}  // namespace

Status ReadSharedObjectIdentity(Bytes data, SharedObjectIdentity* out) {
  internal::ElfReader elf;
  HIPR_RETURN_IF_ERROR(elf.Open(data));
  const ElfSection* dynamic = nullptr;
  const ElfSection* verdef = nullptr;
  for (const ElfSection& s : elf.sections()) {
    if (s.type == kShtDynamic && dynamic == nullptr) dynamic = &s;
    if (s.type == kShtGnuVerdef && verdef == nullptr) verdef = &s;
  }
  if (dynamic == nullptr) return Malformed("no dynamic section");
  const ElfSection* dynstr = Linked(elf, *dynamic);
  if (dynstr == nullptr) return Malformed("the dynamic section has no string table");

  SharedObjectIdentity id;
  uint64_t verdef_count = 0;
  Bytes dyn = elf.SectionBytes(*dynamic);
  for (uint64_t at = 0; InBounds(at, kDynSize, dyn.size()); at += kDynSize) {
    int64_t tag = 0;
    uint64_t value = 0;
    (void)LoadLe(dyn, at, &tag);
    (void)LoadLe(dyn, at + 8, &value);
    if (tag == kDtNull) break;
    if (tag == kDtSoname) HIPR_RETURN_IF_ERROR(StringAt(elf, *dynstr, value, &id.soname));
    if (tag == kDtVerdefnum) verdef_count = value;
  }

  if (verdef != nullptr) {
    const ElfSection* verstr = Linked(elf, *verdef);
    if (verstr == nullptr) return Malformed("the version definitions have no string table");
    if (verdef_count > kMaxVerdefs) return Malformed("too many version definitions");
    Bytes defs = elf.SectionBytes(*verdef);
    uint64_t at = 0;
    for (uint64_t i = 0; i < verdef_count; ++i) {
      uint16_t flags = 0;
      uint32_t aux = 0;
      uint32_t next = 0;
      if (!InBounds(at, kVerdefSize, defs.size())) return Malformed("version definition out of range");
      (void)LoadLe(defs, at + 2, &flags);
      (void)LoadLe(defs, at + 12, &aux);
      (void)LoadLe(defs, at + 16, &next);
      uint32_t name = 0;
      if (!InBounds(at + aux, kVerdauxSize, defs.size())) return Malformed("version name out of range");
      (void)LoadLe(defs, at + aux, &name);
      std::string text;
      HIPR_RETURN_IF_ERROR(StringAt(elf, *verstr, name, &text));
      if ((flags & kVerFlgBase) == 0) id.version_definitions.push_back(std::move(text));
      if (next == 0) break;
      at += next;
    }
  }
  *out = std::move(id);
  return Status::Ok();
}

}  // namespace hipr::co
