// AMDGPU ELF code objects: the NT_AMDGPU_METADATA note and object symbols.
#include <string>
#include <unordered_set>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/elf_reader.h"
#include "protocol/code_object/metadata.h"

namespace hipr::co {
namespace {

using internal::ElfReader;
using internal::ElfSection;
using internal::InBounds;
using internal::LoadLe;

constexpr uint32_t kNtAmdgpuMetadata = 32;
constexpr std::string_view kAmdgpuOwner = "AMDGPU";
constexpr uint64_t kSymSize = 24;

Status Malformed(const std::string& what) { return InvalidArgument("malformed AMDGPU code object: " + what); }

uint64_t Align4(uint64_t v) { return (v + 3) & ~uint64_t{3}; }

// Finds the AMDGPU metadata note in a run of notes; `found` stays false when
// the run holds none.
Status FindMetadataNote(Bytes notes, Bytes* desc, bool* found) {
  uint64_t pos = 0;
  while (pos < notes.size()) {
    uint32_t namesz = 0, descsz = 0, type = 0;
    if (!LoadLe(notes, pos, &namesz) || !LoadLe(notes, pos + 4, &descsz) || !LoadLe(notes, pos + 8, &type)) {
      return Malformed("truncated note header");
    }
    const uint64_t name_at = pos + 12;
    const uint64_t desc_at = name_at + Align4(namesz);
    if (!InBounds(name_at, Align4(namesz), notes.size()) || !InBounds(desc_at, descsz, notes.size())) {
      return Malformed("note out of range");
    }
    std::string_view name(reinterpret_cast<const char*>(notes.data()) + name_at, namesz);
    if (name.ends_with('\0')) name.remove_suffix(1);
    if (type == kNtAmdgpuMetadata && name == kAmdgpuOwner) {
      *desc = notes.subspan(desc_at, descsz);
      *found = true;
      return Status::Ok();
    }
    pos = desc_at + Align4(descsz);
  }
  return Status::Ok();
}

Status ReadSymbols(const ElfReader& elf, const ElfSection& symtab, CodeObjectInfo* out,
                   std::unordered_set<std::string>* seen) {
  if (symtab.entsize != 0 && symtab.entsize != kSymSize) return Malformed("bad symbol entry size");
  if (symtab.link >= elf.sections().size()) return Malformed("symbol string table index out of range");
  const Bytes syms = elf.SectionBytes(symtab);
  const Bytes strs = elf.SectionBytes(elf.sections()[symtab.link]);
  for (uint64_t at = 0; at + kSymSize <= syms.size(); at += kSymSize) {
    uint32_t name = 0;
    uint8_t info = 0;
    uint16_t shndx = 0;
    uint64_t size = 0;
    (void)LoadLe(syms, at, &name);
    (void)LoadLe(syms, at + 4, &info);
    (void)LoadLe(syms, at + 6, &shndx);
    (void)LoadLe(syms, at + 16, &size);
    if ((info & 0xf) != internal::kSttObject || shndx == 0) continue;
    if (name >= strs.size()) return Malformed("symbol name out of range");
    const auto* begin = reinterpret_cast<const char*>(strs.data()) + name;
    const size_t len = strnlen(begin, strs.size() - name);
    if (len == strs.size() - name) return Malformed("unterminated symbol name");
    std::string sym(begin, len);
    if (sym.empty() || !seen->insert(sym).second) continue;
    out->variables.push_back({std::move(sym), size});
  }
  return Status::Ok();
}

}  // namespace

bool LooksLikeAmdgpuElf(Bytes data) {
  uint16_t machine = 0;
  return internal::LooksLikeElf64Le(data) && LoadLe(data, 18, &machine) && machine == internal::kEmAmdgpu;
}

Status ParseCodeObject(Bytes data, CodeObjectInfo* out) {
  if (!LooksLikeAmdgpuElf(data)) return Malformed("not a 64-bit little-endian EM_AMDGPU ELF");
  ElfReader elf;
  HIPR_RETURN_IF_ERROR(elf.Open(data, internal::kMaxAmdgpuElfBytes));
  Bytes desc;
  bool found = false;
  for (const ElfSection& s : elf.sections()) {
    if (s.type != internal::kShtNote || found) continue;
    HIPR_RETURN_IF_ERROR(FindMetadataNote(elf.SectionBytes(s), &desc, &found));
  }
  if (!found) {  // Stripped of section headers: try the PT_NOTE segments.
    for (const internal::ElfSegment& p : elf.segments()) {
      if (p.type != internal::kPtNote || found) continue;
      HIPR_RETURN_IF_ERROR(FindMetadataNote(elf.SegmentBytes(p), &desc, &found));
    }
  }
  if (!found) return Malformed("no NT_AMDGPU_METADATA note");
  CodeObjectInfo info;
  HIPR_RETURN_IF_ERROR(internal::DecodeAmdgpuMetadata(desc, &info));
  // Kernel descriptors ("<kernel>.kd") are object symbols too, but not variables.
  std::unordered_set<std::string> seen;
  for (const KernelInfo& k : info.kernels) seen.insert(k.symbol);
  for (uint32_t want : {internal::kShtSymtab, internal::kShtDynsym}) {
    for (const ElfSection& s : elf.sections()) {
      if (s.type == want) HIPR_RETURN_IF_ERROR(ReadSymbols(elf, s, &info, &seen));
    }
  }
  info.elf_size = elf.extent();
  constexpr uint8_t kElfOsAbiAmdgpuHsa = 64;
  if (data[7] == kElfOsAbiAmdgpuHsa) info.abi_version = data[8];  // EI_OSABI, EI_ABIVERSION
  *out = std::move(info);
  return Status::Ok();
}

uint32_t KernelInfo::explicit_kernarg_size() const {
  uint32_t end = 0;
  for (const KernelArg& a : args) {
    if (!a.hidden() && a.offset + a.size > end) end = a.offset + a.size;
  }
  return end;
}

size_t KernelInfo::explicit_arg_count() const {
  size_t n = 0;
  for (const KernelArg& a : args) n += a.hidden() ? 0 : 1;
  return n;
}

std::string CodeObjectInfo::version_name() const {
  if (abi_version >= 1) return "v" + std::to_string(abi_version + 2);
  if (version_major == 1) return "v" + std::to_string(version_minor + 3);
  return "?";
}

const KernelInfo* CodeObjectInfo::FindKernel(std::string_view name) const {
  for (const KernelInfo& k : kernels) {
    if (k.name == name || k.symbol == name) return &k;
  }
  return nullptr;
}

const GlobalVariable* CodeObjectInfo::FindVariable(std::string_view name) const {
  for (const GlobalVariable& v : variables) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

}  // namespace hipr::co
