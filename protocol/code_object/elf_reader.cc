#include "protocol/code_object/elf_reader.h"

#include <algorithm>
#include <string>

namespace hipr::co::internal {
namespace {

constexpr uint64_t kEhdrSize = 64;
constexpr uint64_t kShdrSize = 64;
constexpr uint64_t kPhdrSize = 56;
constexpr uint32_t kShnLoreserve = 0xff00;  // e_shnum and e_shstrndx stay below it...
constexpr uint32_t kShnXindex = 0xffff;     // ...or say "see section 0" (e_shstrndx).
constexpr uint32_t kPnXnum = 0xffff;        // e_phnum: "see section 0"; never in the files read here.

Status Malformed(const std::string& what) { return InvalidArgument("malformed ELF: " + what); }

}  // namespace

bool LooksLikeElf64Le(Bytes data) {
  return data.size() >= 16 && data[0] == 0x7f && data[1] == 'E' && data[2] == 'L' &&
         data[3] == 'F' && data[4] == 2 /*ELFCLASS64*/ && data[5] == 1 /*ELFDATA2LSB*/;
}

Status ElfReader::Open(Bytes data, uint64_t max_extent) {
  data_ = data;
  limit_ = std::min<uint64_t>(data.size(), max_extent);
  sections_.clear();
  segments_.clear();
  if (!LooksLikeElf64Le(data)) return Malformed("not a 64-bit little-endian ELF");
  if (limit_ < kEhdrSize) return Malformed("truncated file header");
  uint64_t phoff = 0, shoff = 0;
  uint16_t ehsize = 0, phentsize = 0, phnum = 0, shentsize = 0, shnum = 0, shstrndx = 0;
  (void)LoadLe(data, 16, &type_);
  (void)LoadLe(data, 18, &machine_);
  (void)LoadLe(data, 32, &phoff);
  (void)LoadLe(data, 40, &shoff);
  (void)LoadLe(data, 52, &ehsize);
  (void)LoadLe(data, 54, &phentsize);
  (void)LoadLe(data, 56, &phnum);
  (void)LoadLe(data, 58, &shentsize);
  (void)LoadLe(data, 60, &shnum);
  (void)LoadLe(data, 62, &shstrndx);
  if (ehsize < kEhdrSize) return Malformed("file header size too small");
  extent_ = kEhdrSize;

  // Everything the header says about the two tables is checked before
  // either is read: where `data` is only an upper bound, a read is the
  // damage (elf_reader.h).
  const bool has_segments = phoff != 0 && phnum != 0;
  if (has_segments) {
    if (phentsize != kPhdrSize) return Malformed("program header entry size is not 56");
    if (phnum == kPnXnum) return Malformed("extended program header numbering is not supported");
    if (phoff < kEhdrSize) return Malformed("program header table overlaps the file header");
    if (phnum > limit_ / phentsize || !InBounds(phoff, phnum * phentsize, limit_)) {
      return Malformed("program header table out of range");
    }
  }
  // Extended numbering: section 0 holds the real count and string index.
  uint64_t real_shnum = 0;
  uint32_t real_shstrndx = 0;
  if (shoff != 0) {
    // Every ELF64 writer uses exactly sizeof(Elf64_Shdr); anything else is
    // a lie about the table, which is refused rather than walked.
    if (shentsize != kShdrSize) return Malformed("section header entry size is not 64");
    if (shoff < kEhdrSize) return Malformed("section header table overlaps the file header");
    // Counts this large must be given in section 0 (e_shnum 0): an e_shnum
    // of 0xffff is a lie, refused before the table it claims is touched.
    if (shnum >= kShnLoreserve) return Malformed("section count " + std::to_string(shnum) + " is reserved");
    if (shstrndx >= kShnLoreserve && shstrndx != kShnXindex) return Malformed("section name table index is reserved");
    real_shnum = shnum;
    real_shstrndx = shstrndx;
    if (shnum == 0 || shstrndx == kShnXindex) {
      uint64_t size0 = 0;
      uint32_t link0 = 0;
      if (!InBounds(shoff, kShdrSize, limit_)) return Malformed("section header table out of range");
      (void)LoadLe(data, shoff + 32, &size0);
      (void)LoadLe(data, shoff + 40, &link0);
      if (shnum == 0) real_shnum = size0;
      if (shstrndx == kShnXindex) real_shstrndx = link0;
    }
    if (real_shnum > kMaxElfSections) return Malformed("section count " + std::to_string(real_shnum) + " too large");
    if (real_shstrndx != 0 && real_shstrndx >= real_shnum) return Malformed("section name table index out of range");
  }
  HIPR_RETURN_IF_ERROR(ReadSections(shoff, shentsize, real_shnum, real_shstrndx));
  if (has_segments) HIPR_RETURN_IF_ERROR(ReadSegments(phoff, phentsize, phnum));
  return Status::Ok();
}

Status ElfReader::ReadSections(uint64_t shoff, uint16_t shentsize, uint64_t shnum,
                               uint32_t shstrndx) {
  if (shnum == 0) return Status::Ok();
  // Checked before allocating or reading: the table must fit below the
  // limit (shnum <= kMaxElfSections, so the product cannot overflow).
  if (shnum > limit_ / shentsize || !InBounds(shoff, shnum * shentsize, limit_)) {
    return Malformed("section header table out of range");
  }
  extent_ = std::max(extent_, shoff + shnum * shentsize);
  sections_.resize(shnum);
  for (uint64_t i = 0; i < shnum; ++i) {
    const uint64_t at = shoff + i * shentsize;
    ElfSection& s = sections_[i];
    (void)LoadLe(data_, at + 0, &s.name_offset);
    (void)LoadLe(data_, at + 4, &s.type);
    (void)LoadLe(data_, at + 8, &s.flags);
    (void)LoadLe(data_, at + 24, &s.offset);
    (void)LoadLe(data_, at + 32, &s.size);
    (void)LoadLe(data_, at + 40, &s.link);
    (void)LoadLe(data_, at + 56, &s.entsize);
    if (s.has_file_data()) {
      if (!InBounds(s.offset, s.size, limit_)) {
        return Malformed("section " + std::to_string(i) + " out of range");
      }
      extent_ = std::max(extent_, s.offset + s.size);
    }
  }
  if (shstrndx == 0) return Status::Ok();  // SHN_UNDEF: no names.
  if (shstrndx >= shnum) return Malformed("section name table index out of range");
  const ElfSection& strtab = sections_[shstrndx];
  if (!strtab.has_file_data()) return Malformed("section name table has no data");
  const Bytes names = SectionBytes(strtab);
  for (ElfSection& s : sections_) {
    if (s.name_offset == 0 && names.empty()) continue;
    if (s.name_offset >= names.size()) return Malformed("section name out of range");
    const auto* begin = reinterpret_cast<const char*>(names.data()) + s.name_offset;
    const size_t max_len = names.size() - s.name_offset;
    const size_t len = strnlen(begin, max_len);
    if (len == max_len) return Malformed("unterminated section name");
    s.name = std::string_view(begin, len);
  }
  return Status::Ok();
}

Status ElfReader::ReadSegments(uint64_t phoff, uint16_t phentsize, uint64_t phnum) {
  if (phnum > limit_ / phentsize || !InBounds(phoff, phnum * phentsize, limit_)) {
    return Malformed("program header table out of range");
  }
  extent_ = std::max(extent_, phoff + phnum * phentsize);
  segments_.resize(phnum);
  for (uint64_t i = 0; i < phnum; ++i) {
    const uint64_t at = phoff + i * phentsize;
    ElfSegment& p = segments_[i];
    (void)LoadLe(data_, at + 0, &p.type);
    (void)LoadLe(data_, at + 8, &p.offset);
    (void)LoadLe(data_, at + 32, &p.filesz);
    if (p.filesz != 0) {
      if (!InBounds(p.offset, p.filesz, limit_)) {
        return Malformed("segment " + std::to_string(i) + " out of range");
      }
      extent_ = std::max(extent_, p.offset + p.filesz);
    }
  }
  return Status::Ok();
}

Bytes ElfReader::SectionBytes(const ElfSection& s) const {
  if (!s.has_file_data()) return {};
  return data_.subspan(s.offset, s.size);  // Bounds checked in Open().
}

Bytes ElfReader::SegmentBytes(const ElfSegment& p) const {
  if (p.filesz == 0) return {};
  return data_.subspan(p.offset, p.filesz);
}

}  // namespace hipr::co::internal
