// Internal to the code-object toolkit: a bounds-checked view of an ELF64
// little-endian file (AMDGPU code objects and x86-64 host binaries alike).
//
// Every offset and size read from the file is checked against the buffer
// before use; malformed input yields a Status. Nothing here allocates more
// than the section and segment tables the file declares, and those are
// checked to fit in the buffer first.
//
// Where the buffer is only an upper bound (hipModuleLoadData passes a
// pointer and no size: the caller's view is the readable memory there),
// bounds against it prove little, so the headers must also be plausible,
// and are checked before either table is read: table entries of exactly the
// ELF64 sizes, e_shnum and e_shstrndx below SHN_LORESERVE (0xff00) as the
// ELF spec requires (larger values live in section 0), tables that do not
// overlap the file header, at most kMaxElfSections sections, and, with
// Open's `max_extent`, nothing declared past that many bytes.
//
// Thread-safety: ElfReader is immutable after Open().
// Lifetime: the reader borrows `data`; it must outlive the reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "protocol/code_object/code_object.h"

namespace hipr::co::internal {

inline constexpr uint16_t kEmAmdgpu = 224;
inline constexpr uint16_t kEmX86_64 = 62;
inline constexpr uint32_t kShtNull = 0;
inline constexpr uint32_t kShtSymtab = 2;
inline constexpr uint32_t kShtNote = 7;
inline constexpr uint32_t kShtNobits = 8;
inline constexpr uint32_t kShtDynsym = 11;
inline constexpr uint32_t kPtNote = 4;
inline constexpr uint8_t kSttObject = 1;

// Extended section numbering (e_shnum 0, the count in section 0) is for
// relocatable objects with more than 0xff00 sections; this many is already
// far past any loadable file, and bounds the table a lie can make us read.
inline constexpr uint64_t kMaxElfSections = uint64_t{1} << 20;
// An AMDGPU code object is a few MiB (the largest libraries' are tens): one
// whose headers declare anything past 1 GiB is refused before it is read.
// The worker accepts no larger module either (wire.h kMaxModuleBytes).
inline constexpr uint64_t kMaxAmdgpuElfBytes = uint64_t{1} << 30;

// Reads a little-endian integer at `off`; false if it does not fit.
template <typename T>
bool LoadLe(Bytes data, uint64_t off, T* out) {
  if (off > data.size() || data.size() - off < sizeof(T)) return false;
  std::memcpy(out, data.data() + off, sizeof(T));  // Hosts here are little-endian.
  return true;
}

// True if [off, off + size) lies inside a buffer of `limit` bytes.
inline bool InBounds(uint64_t off, uint64_t size, uint64_t limit) {
  return off <= limit && size <= limit - off;
}

struct ElfSection {
  uint32_t name_offset = 0;  // Into the section-name string table.
  std::string_view name;     // Resolved; empty when unnamed or unresolvable.
  uint32_t type = 0;
  uint64_t flags = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t link = 0;
  uint64_t entsize = 0;
  bool has_file_data() const { return type != kShtNobits && type != kShtNull; }
};

struct ElfSegment {
  uint32_t type = 0;
  uint64_t offset = 0;
  uint64_t filesz = 0;
};

class ElfReader {
 public:
  // Parses the file header, section headers and program headers. Every
  // header table, and every section and segment with file data, must lie
  // inside `data` and below `max_extent`; both are checked before a table
  // entry is read.
  Status Open(Bytes data, uint64_t max_extent = UINT64_MAX);

  uint16_t machine() const { return machine_; }
  uint16_t type() const { return type_; }
  const std::vector<ElfSection>& sections() const { return sections_; }
  const std::vector<ElfSegment>& segments() const { return segments_; }
  // End of the last byte the headers account for: the section and program
  // header tables and every section/segment with file data.
  uint64_t extent() const { return extent_; }
  // The bytes of a section with file data (empty for SHT_NOBITS).
  Bytes SectionBytes(const ElfSection& s) const;
  Bytes SegmentBytes(const ElfSegment& s) const;

 private:
  Status ReadSections(uint64_t shoff, uint16_t shentsize, uint64_t shnum, uint32_t shstrndx);
  Status ReadSegments(uint64_t phoff, uint16_t phentsize, uint64_t phnum);

  Bytes data_;
  uint64_t limit_ = 0;  // min(data_.size(), max_extent): nothing is read at or past it.
  uint16_t machine_ = 0;
  uint16_t type_ = 0;
  uint64_t extent_ = 0;
  std::vector<ElfSection> sections_;
  std::vector<ElfSegment> segments_;
};

// True if `data` starts with the ELF magic, class 64 and little-endian.
bool LooksLikeElf64Le(Bytes data);

}  // namespace hipr::co::internal
