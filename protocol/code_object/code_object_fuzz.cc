// Fuzz target: every parser of the toolkit over arbitrary bytes.
//
// clang-15 -fsanitize=fuzzer builds it with libFuzzer (run_fuzz.sh); the
// normal g++ build links code_object_fuzz_main.cc instead, which replays a
// seed corpus (ctest code_object_fuzz_corpus).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/host_fatbin.h"

namespace {

// Invariants a parse that succeeded must keep; a violation is a bug.
void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void FuzzBundle(hipr::co::Bytes data) {
  hipr::co::Bundle bundle;
  if (!hipr::co::ParseBundle(data, &bundle).ok()) return;
  Check(bundle.encoded_size <= data.size());
  uint64_t size = 0;
  if (hipr::co::ImageSize(data, &size).ok()) Check(size == bundle.encoded_size);
  for (const hipr::co::BundleEntry& e : bundle.entries) {
    Check(e.bytes.size() == e.size);
    hipr::co::CodeObjectInfo info;
    if (hipr::co::ParseCodeObject(e.bytes, &info).ok()) Check(info.elf_size <= e.bytes.size());
  }
  hipr::co::TargetId device;
  if (hipr::co::ParseTargetId("gfx90a:sramecc+:xnack-", &device).ok()) {
    (void)hipr::co::SelectEntry(bundle, device);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const hipr::co::Bytes bytes(data, size);
  FuzzBundle(bytes);
  hipr::co::CodeObjectInfo info;
  if (hipr::co::ParseCodeObject(bytes, &info).ok()) {
    Check(info.elf_size <= size);
    for (const hipr::co::KernelInfo& k : info.kernels) Check(k.explicit_kernarg_size() <= k.kernarg_segment_size);
  }
  uint64_t image = 0;
  if (hipr::co::ImageSize(bytes, &image).ok()) Check(image <= size);
  std::vector<hipr::co::HostSection> sections;
  if (hipr::co::FindHipFatbinSections(bytes, &sections).ok()) {
    for (const hipr::co::HostSection& s : sections) {
      std::vector<hipr::co::BundleSpan> spans;
      if (!hipr::co::ListBundles(s.bytes, &spans).ok()) continue;
      for (const hipr::co::BundleSpan& span : spans) FuzzBundle(s.bytes.subspan(span.offset));
    }
  }
  hipr::co::TargetId id;
  (void)hipr::co::ParseTargetId(std::string_view(reinterpret_cast<const char*>(data), size < 64 ? size : 64), &id);
  hipr::co::SharedObjectIdentity identity;
  (void)hipr::co::ReadSharedObjectIdentity(bytes, &identity);
  hipr::co::DynamicInfo dynamic;
  (void)hipr::co::ReadDynamicInfo(bytes, &dynamic);
  return 0;
}
