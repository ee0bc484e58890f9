#include "protocol/code_object/host_fatbin.h"

#include <string>

#include "protocol/code_object/elf_reader.h"

namespace hipr::co {

Status FindHipFatbinSections(Bytes host_elf, std::vector<HostSection>* out) {
  internal::ElfReader elf;
  HIPR_RETURN_IF_ERROR(elf.Open(host_elf));
  std::vector<HostSection> found;
  for (const internal::ElfSection& s : elf.sections()) {
    if (s.name == ".hip_fatbin" && s.has_file_data()) found.push_back({s.offset, elf.SectionBytes(s)});
  }
  *out = std::move(found);
  return Status::Ok();
}

Status ListBundles(Bytes section, std::vector<BundleSpan>* out) {
  std::vector<BundleSpan> spans;
  uint64_t pos = 0;
  while (true) {
    while (pos < section.size() && section[pos] == 0) ++pos;  // Alignment padding.
    if (pos >= section.size()) break;
    const Bytes rest = section.subspan(pos);
    if (!LooksLikeBundle(rest) && !LooksLikeCompressedBundle(rest)) {
      return InvalidArgument("no offload bundle at offset " + std::to_string(pos) + " of .hip_fatbin");
    }
    uint64_t size = 0;
    Status st = ImageSize(rest, &size);
    if (!st.ok()) {
      return Status(st.code(), "bundle at offset " + std::to_string(pos) + " of .hip_fatbin: " + st.message());
    }
    if (size == 0) return InvalidArgument("empty bundle in .hip_fatbin");
    spans.push_back({pos, size});
    pos += size;
  }
  *out = std::move(spans);
  return Status::Ok();
}

Status FindHostCodeObject(Bytes host_elf, const TargetId& device, std::vector<uint8_t>* code) {
  std::vector<HostSection> sections;
  HIPR_RETURN_IF_ERROR(FindHipFatbinSections(host_elf, &sections));
  for (const HostSection& section : sections) {
    std::vector<BundleSpan> spans;
    HIPR_RETURN_IF_ERROR(ListBundles(section.bytes, &spans));
    for (const BundleSpan& span : spans) {
      Bundle bundle;
      HIPR_RETURN_IF_ERROR(ParseBundle(section.bytes.subspan(span.offset, span.size), &bundle));
      if (const BundleEntry* entry = SelectEntry(bundle, device)) {
        code->assign(entry->bytes.begin(), entry->bytes.end());
        return Status::Ok();
      }
    }
  }
  return Status(StatusCode::kNotFound, "no code object for the device in the host binary's fatbin sections");
}

}  // namespace hipr::co
