// Finding offload bundles inside host binaries: the .hip_fatbin section(s)
// of an x86-64 executable or shared library, which clang fills with bundles
// (plain or CCOB) each starting at a 4096-aligned offset, zero-padded between.
//
// Thread-safety: pure functions. Lifetime: results view the input bytes.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/code_object/code_object.h"

namespace hipr::co {

struct HostSection {
  uint64_t file_offset = 0;  // Of the section within the host file.
  Bytes bytes;               // The section's contents.
};

// The ".hip_fatbin" sections (with file data) of a 64-bit little-endian host
// ELF, in section-header order; empty when it has none.
Status FindHipFatbinSections(Bytes host_elf, std::vector<HostSection>* out);

struct BundleSpan {
  uint64_t offset = 0;  // From the start of the section.
  uint64_t size = 0;    // Encoded size (ImageSize).
};

// Walks a .hip_fatbin section: a bundle at offset 0, then after each bundle's
// end, skipping zero bytes, the next one, to the end of the section. Any
// other byte where a bundle should start is an error.
Status ListBundles(Bytes section, std::vector<BundleSpan>* out);

// The code object for `device` in the first bundle of `host_elf`'s fatbin
// sections that has one (SelectEntry), copied into *code; kNotFound when
// none has. For tools and tests that take one program's kernels.
Status FindHostCodeObject(Bytes host_elf, const TargetId& device, std::vector<uint8_t>* code);

}  // namespace hipr::co
