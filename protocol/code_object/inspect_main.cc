// hipr-inspect FILE [--json] [--target ID] [--summary]
//
// Lists the offload bundles of a host executable or shared library (its
// .hip_fatbin sections), of a bare bundle (.hipfb), of a CCOB, or describes a
// bare AMDGPU code object (.co/.hsaco), with the kernels of each amdgcn entry.
//
// --json schema (other tools parse it; keep the keys):
//   {"file": str, "bundles": [{"file_offset": int, "size": int,
//     "compressed": bool, "entries": [{"id", "kind", "triple", "target",
//     "offset": int (from the start of the (decompressed) bundle),
//     "size": int, "sha256": hex ("" for empty entries),
//     "code_object": null | {"version": [maj, min] (amdhsa.version),
//       "abi_version": int (e_ident[EI_ABIVERSION]), "version_name": "v5"...,
//       "target", "elf_size",
//       "kernels": [{"name", "symbol", "kernarg_segment_size",
//         "kernarg_segment_align", "group_segment_fixed_size",
//         "private_segment_fixed_size", "max_flat_workgroup_size",
//         "wavefront_size", "sgpr_count", "vgpr_count",
//         "args": [{"name", "type_name", "value_kind", "offset", "size",
//                   "address_space"}]}],
//       "variables": [{"name", "size"}]}}]}]}
// A bare code object is reported as one bundle at offset 0 holding one entry
// with empty "id" and "kind", its triple and target taken from amdhsa.target.
// With --summary, --json prints {"file", "bundle_count", "entry_count",
// "code_object_count", "kernel_count", "targets": {target: entries}}.
//
// Exit status: 0 on success, 1 when the file is unreadable or malformed
// (nothing is printed on stdout then).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/host_fatbin.h"

namespace {

using hipr::Status;
using hipr::co::Bytes;

struct Options {
  std::string file;
  bool json = false;
  bool summary = false;
  std::string target;
};

// A read-only mapping of a whole file; unmapped on destruction.
class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (base_ != nullptr) munmap(base_, size_);
  }
  Status Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return hipr::InvalidArgument(std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      return hipr::InvalidArgument("not a regular file");
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ == 0) {
      close(fd);
      return hipr::InvalidArgument("empty file");
    }
    void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return hipr::InvalidArgument(std::string("cannot map: ") + std::strerror(errno));
    base_ = p;
    madvise(base_, size_, MADV_SEQUENTIAL);
    return Status::Ok();
  }
  Bytes bytes() const { return Bytes(static_cast<const uint8_t*>(base_), size_); }

 private:
  void* base_ = nullptr;
  size_t size_ = 0;
};

struct EntryReport {
  const hipr::co::BundleEntry* entry = nullptr;
  std::string sha256;
  std::optional<hipr::co::CodeObjectInfo> code_object;
};

struct BundleReport {
  uint64_t file_offset = 0;
  hipr::co::Bundle bundle;
  std::vector<EntryReport> entries;
};

// ---- Gathering ---------------------------------------------------------------

Status DescribeEntries(const Options& opts, const hipr::co::TargetId* want, BundleReport* report) {
  for (const hipr::co::BundleEntry& e : report->bundle.entries) {
    EntryReport r;
    r.entry = &e;
    if (e.size != 0 && !opts.summary) r.sha256 = hipr::co::ToHex(hipr::co::Sha256(e.bytes));
    bool describe = e.triple.starts_with("amdgcn") && e.size != 0;
    if (describe && want != nullptr) {
      hipr::co::TargetId code;
      describe = hipr::co::ParseTargetId(e.target, &code).ok() && hipr::co::IsCompatible(code, *want);
    }
    if (describe) {
      hipr::co::CodeObjectInfo info;
      Status st = hipr::co::ParseCodeObject(e.bytes, &info);
      if (!st.ok()) return Status(st.code(), "entry '" + e.id + "': " + st.message());
      r.code_object = std::move(info);
    }
    report->entries.push_back(std::move(r));
  }
  return Status::Ok();
}

Status AddBundle(Bytes file, uint64_t offset, const Options& opts, const hipr::co::TargetId* want,
                 std::vector<BundleReport>* out) {
  BundleReport report;
  report.file_offset = offset;
  Status st = hipr::co::ParseBundle(file.subspan(offset), &report.bundle);
  if (!st.ok()) return Status(st.code(), "bundle at file offset " + std::to_string(offset) + ": " + st.message());
  out->push_back(std::move(report));
  return DescribeEntries(opts, want, &out->back());
}

// A bare code object as one pseudo-bundle with one entry (see the schema).
Status AddBareCodeObject(Bytes file, const Options& opts, const hipr::co::TargetId* want,
                         std::vector<BundleReport>* out, hipr::co::BundleEntry* storage) {
  hipr::co::CodeObjectInfo info;
  HIPR_RETURN_IF_ERROR(hipr::co::ParseCodeObject(file, &info));
  storage->size = info.elf_size;
  storage->bytes = file.first(info.elf_size);
  hipr::co::BundleEntry split;
  if (hipr::co::SplitEntryId("elf-" + info.target, &split).ok()) {
    storage->triple = split.triple;
    storage->target = split.target;
  }
  BundleReport report;
  report.bundle.encoded_size = info.elf_size;
  EntryReport r;
  r.entry = storage;
  if (!opts.summary) r.sha256 = hipr::co::ToHex(hipr::co::Sha256(storage->bytes));
  // --target applies as to a bundle's entries (a generic object runs on its family's members).
  hipr::co::TargetId code;
  if (want == nullptr || (hipr::co::ParseTargetId(storage->target, &code).ok() && hipr::co::IsCompatible(code, *want)))
    r.code_object = std::move(info);
  report.entries.push_back(std::move(r));
  out->push_back(std::move(report));
  return Status::Ok();
}

Status Gather(Bytes file, const Options& opts, const hipr::co::TargetId* want, std::vector<BundleReport>* out,
              hipr::co::BundleEntry* bare_storage) {
  if (hipr::co::LooksLikeBundle(file) || hipr::co::LooksLikeCompressedBundle(file)) {
    return AddBundle(file, 0, opts, want, out);
  }
  if (hipr::co::LooksLikeAmdgpuElf(file)) return AddBareCodeObject(file, opts, want, out, bare_storage);
  if (file.size() >= 4 && file[0] == 0x7f && file[1] == 'E' && file[2] == 'L' && file[3] == 'F') {
    std::vector<hipr::co::HostSection> sections;
    HIPR_RETURN_IF_ERROR(hipr::co::FindHipFatbinSections(file, &sections));
    for (const hipr::co::HostSection& s : sections) {
      std::vector<hipr::co::BundleSpan> spans;
      HIPR_RETURN_IF_ERROR(hipr::co::ListBundles(s.bytes, &spans));
      for (const hipr::co::BundleSpan& span : spans) {
        HIPR_RETURN_IF_ERROR(AddBundle(file, s.file_offset + span.offset, opts, want, out));
      }
    }
    return Status::Ok();
  }
  return hipr::InvalidArgument("not an ELF file, offload bundle, CCOB or AMDGPU code object");
}

// ---- Output ------------------------------------------------------------------

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20 || c >= 0x7f) {
      // Non-ASCII bytes are written as Latin-1 code points: always valid JSON.
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out->append(buf);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

class JsonObject {
 public:
  explicit JsonObject(std::string* out) : out_(out) { out_->push_back('{'); }
  ~JsonObject() { out_->push_back('}'); }
  JsonObject(const JsonObject&) = delete;
  JsonObject& operator=(const JsonObject&) = delete;
  std::string* Key(std::string_view key) {
    if (!first_) out_->push_back(',');
    first_ = false;
    AppendJsonString(out_, key);
    out_->push_back(':');
    return out_;
  }
  void Str(std::string_view key, std::string_view v) { AppendJsonString(Key(key), v); }
  void Int(std::string_view key, uint64_t v) { Key(key)->append(std::to_string(v)); }
  void Bool(std::string_view key, bool v) { Key(key)->append(v ? "true" : "false"); }

 private:
  std::string* out_;
  bool first_ = true;
};

void KernelJson(std::string* out, const hipr::co::KernelInfo& k) {
  JsonObject o(out);
  o.Str("name", k.name);
  o.Str("symbol", k.symbol);
  o.Int("kernarg_segment_size", k.kernarg_segment_size);
  o.Int("kernarg_segment_align", k.kernarg_segment_align);
  o.Int("group_segment_fixed_size", k.group_segment_fixed_size);
  o.Int("private_segment_fixed_size", k.private_segment_fixed_size);
  o.Int("max_flat_workgroup_size", k.max_flat_workgroup_size);
  o.Int("wavefront_size", k.wavefront_size);
  o.Int("sgpr_count", k.sgpr_count);
  o.Int("vgpr_count", k.vgpr_count);
  std::string* a = o.Key("args");
  a->push_back('[');
  for (size_t i = 0; i < k.args.size(); ++i) {
    if (i) a->push_back(',');
    JsonObject arg(a);
    arg.Str("name", k.args[i].name);
    arg.Str("type_name", k.args[i].type_name);
    arg.Str("value_kind", k.args[i].value_kind);
    arg.Int("offset", k.args[i].offset);
    arg.Int("size", k.args[i].size);
    arg.Str("address_space", k.args[i].address_space);
  }
  a->push_back(']');
}

void CodeObjectJson(std::string* out, const hipr::co::CodeObjectInfo& co) {
  JsonObject o(out);
  o.Key("version")->append("[" + std::to_string(co.version_major) + "," + std::to_string(co.version_minor) + "]");
  o.Int("abi_version", co.abi_version);
  o.Str("version_name", co.version_name());
  o.Str("target", co.target);
  o.Int("elf_size", co.elf_size);
  std::string* ks = o.Key("kernels");
  ks->push_back('[');
  for (size_t i = 0; i < co.kernels.size(); ++i) {
    if (i) ks->push_back(',');
    KernelJson(ks, co.kernels[i]);
  }
  ks->push_back(']');
  std::string* vs = o.Key("variables");
  vs->push_back('[');
  for (size_t i = 0; i < co.variables.size(); ++i) {
    if (i) vs->push_back(',');
    JsonObject v(vs);
    v.Str("name", co.variables[i].name);
    v.Int("size", co.variables[i].size);
  }
  vs->push_back(']');
}

std::string FullJson(const Options& opts, const std::vector<BundleReport>& bundles) {
  std::string out;
  {
    JsonObject root(&out);
    root.Str("file", opts.file);
    std::string* bs = root.Key("bundles");
    bs->push_back('[');
    for (size_t b = 0; b < bundles.size(); ++b) {
      if (b) bs->push_back(',');
      JsonObject bo(bs);
      bo.Int("file_offset", bundles[b].file_offset);
      bo.Int("size", bundles[b].bundle.encoded_size);
      bo.Bool("compressed", bundles[b].bundle.compressed);
      std::string* es = bo.Key("entries");
      es->push_back('[');
      for (size_t i = 0; i < bundles[b].entries.size(); ++i) {
        const EntryReport& r = bundles[b].entries[i];
        if (i) es->push_back(',');
        JsonObject eo(es);
        eo.Str("id", r.entry->id);
        eo.Str("kind", r.entry->kind);
        eo.Str("triple", r.entry->triple);
        eo.Str("target", r.entry->target);
        eo.Int("offset", r.entry->offset);
        eo.Int("size", r.entry->size);
        eo.Str("sha256", r.sha256);
        std::string* co = eo.Key("code_object");
        if (r.code_object) {
          CodeObjectJson(co, *r.code_object);
        } else {
          co->append("null");
        }
      }
      es->push_back(']');
    }
    bs->push_back(']');
  }
  out.push_back('\n');
  return out;
}

std::string FullText(const Options& opts, const std::vector<BundleReport>& bundles) {
  std::string out = "file: " + opts.file + "\n";
  char line[512];
  for (size_t b = 0; b < bundles.size(); ++b) {
    const BundleReport& br = bundles[b];
    std::string kind = "plain";
    if (br.bundle.compressed) {
      kind = "CCOB v" + std::to_string(br.bundle.ccob_version) + (br.bundle.ccob_method == 1 ? " zstd" : " zlib");
    }
    std::snprintf(line, sizeof(line), "bundle %zu: file offset %llu (0x%llx), size %llu, %s, %zu entries\n", b,
                  static_cast<unsigned long long>(br.file_offset), static_cast<unsigned long long>(br.file_offset),
                  static_cast<unsigned long long>(br.bundle.encoded_size), kind.c_str(), br.entries.size());
    out += line;
    for (const EntryReport& r : br.entries) {
      out += "  entry " + (r.entry->id.empty() ? std::string("(bare code object)") : r.entry->id) +
             "  offset " + std::to_string(r.entry->offset) + "  size " + std::to_string(r.entry->size) + "\n";
      if (!r.code_object) continue;
      const hipr::co::CodeObjectInfo& co = *r.code_object;
      out += "    code object " + co.version_name() + " [" + std::to_string(co.version_major) + "," +
             std::to_string(co.version_minor) + "] target " + co.target + ", elf_size " +
             std::to_string(co.elf_size) + ", " + std::to_string(co.kernels.size()) + " kernels, " +
             std::to_string(co.variables.size()) + " variables\n";
      for (const hipr::co::KernelInfo& k : co.kernels) {
        out += "    kernel " + k.name + "  kernarg_segment_size " + std::to_string(k.kernarg_segment_size) +
               " (explicit " + std::to_string(k.explicit_kernarg_size()) + ", align " +
               std::to_string(k.kernarg_segment_align) + ")\n";
        for (size_t i = 0; i < k.args.size(); ++i) {
          const hipr::co::KernelArg& a = k.args[i];
          if (a.hidden()) continue;
          out += "      arg " + std::to_string(i) + ": offset " + std::to_string(a.offset) + " size " +
                 std::to_string(a.size) + " " + a.value_kind + (a.name.empty() ? "" : " " + a.name) + "\n";
        }
      }
      for (const hipr::co::GlobalVariable& v : co.variables) {
        out += "    variable " + v.name + "  size " + std::to_string(v.size) + "\n";
      }
    }
  }
  return out;
}

std::string Summary(const Options& opts, const std::vector<BundleReport>& bundles) {
  uint64_t entries = 0, code_objects = 0, kernels = 0;
  std::map<std::string, uint64_t> targets;
  for (const BundleReport& br : bundles) {
    for (const EntryReport& r : br.entries) {
      ++entries;
      if (!r.entry->target.empty()) ++targets[r.entry->target];
      if (r.code_object) {
        ++code_objects;
        kernels += r.code_object->kernels.size();
      }
    }
  }
  std::string out;
  if (opts.json) {
    {
      JsonObject root(&out);
      root.Str("file", opts.file);
      root.Int("bundle_count", bundles.size());
      root.Int("entry_count", entries);
      root.Int("code_object_count", code_objects);
      root.Int("kernel_count", kernels);
      JsonObject t(root.Key("targets"));
      for (const auto& [name, n] : targets) t.Int(name, n);
    }
    out.push_back('\n');
    return out;
  }
  out = "file: " + opts.file + "\nbundles: " + std::to_string(bundles.size()) +
        "\nentries: " + std::to_string(entries) + "\ncode objects: " + std::to_string(code_objects) +
        "\nkernels: " + std::to_string(kernels) + "\n";
  for (const auto& [name, n] : targets) out += "target " + name + ": " + std::to_string(n) + " entries\n";
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  CLI::App app{"hipr-inspect: lists the offload bundles, code objects and kernels of a HIP binary"};
  app.add_option("file", opts.file, "executable, shared library, bundle (.hipfb), CCOB or code object (.co)")
      ->required();
  app.add_flag("--json", opts.json, "print JSON (schema at the top of inspect_main.cc)");
  app.add_flag("--summary", opts.summary, "print counts only");
  app.add_option("--target", opts.target,
                 "describe only entries compatible with this target id (e.g. gfx90a, gfx90a:xnack-)");
  CLI11_PARSE(app, argc, argv);

  hipr::co::TargetId want;
  if (!opts.target.empty()) {
    Status st = hipr::co::ParseTargetId(opts.target, &want);
    if (!st.ok()) {
      std::fprintf(stderr, "hipr-inspect: --target: %s\n", st.message().c_str());
      return 1;
    }
  }
  MappedFile file;
  Status st = file.Open(opts.file);
  std::vector<BundleReport> bundles;
  hipr::co::BundleEntry bare_storage;
  if (st.ok()) st = Gather(file.bytes(), opts, opts.target.empty() ? nullptr : &want, &bundles, &bare_storage);
  if (!st.ok()) {
    std::fprintf(stderr, "hipr-inspect: %s: %s\n", opts.file.c_str(), st.message().c_str());
    return 1;
  }
  std::string text;
  if (opts.summary) {
    text = Summary(opts, bundles);
  } else {
    text = opts.json ? FullJson(opts, bundles) : FullText(opts, bundles);
  }
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "hipr-inspect: cannot write the output\n");
    return 1;
  }
  return 0;
}
