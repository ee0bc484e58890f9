// hipr-abi-check [--stub PATH] [--json] PATH...
//
// Will these libraries bind to hipr's stub? For every host ELF file under the
// given files and directories (a PyTorch wheel's torch/lib, a ROCm install),
// lists each HIP runtime symbol it needs that the stub does not define with
// that version node, and the runtime companions it needs that still load
// from elsewhere (libhiprtc, the HSA runtime, comgr, SMI libraries).
//
// A symbol is a HIP runtime need when its version is required from a
// libamdhip64 file (hipMalloc@hip_4.2 from libamdhip64.so.6), or when it is
// unversioned, named hip*/__hip*, and the file needs a libamdhip64. The stub
// (default: lib/libhip_client_stub.so beside this program's bin/) must
// define it with the same version node, or at all when unversioned.
//
// hiprtc: from ROCm 6 on, runtime compilation is libhiprtc.so.N of its own,
// whose hiprtc* functions carry no version. A reference to an unversioned
// symbol takes the first definition in the process's global scope, and the
// preloaded stub comes before every library (a wheel's bundled libhiprtc
// included; the stub's hiprtc* are its only version of each name, which
// glibc accepts for an unversioned reference). So a file that needs a
// libhiprtc has its hiprtc* calls answered by the stub, and each must be
// defined there: one that is not would come from the bundled library, which
// knows nothing of the stub's programs. The libhiprtc file itself is still
// mapped, its functions never called through those references. A libhiprtc
// among the files checked is reported with the hiprtc* it defines, whether
// it gives them a version (then the rule above would not hold), and each it
// defines that the stub does not, as missing.
//
// Exit status: 0 when nothing is missing, 1 when something is, 2 when the
// stub or a named path cannot be read.
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "protocol/code_object/code_object.h"

namespace {

namespace fs = std::filesystem;
using hipr::Status;
namespace co = hipr::co;

constexpr uint16_t kEmX86_64 = 62;

// A read-only mapping of a whole file.
class MappedFile {
 public:
  bool Open(const std::string& path, std::string* error) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      *error = "cannot open";
      return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      close(fd);
      *error = "not a regular file";
      return false;
    }
    size_ = static_cast<size_t>(st.st_size);
    if (size_ > 0) {
      void* p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
      if (p == MAP_FAILED) {
        close(fd);
        *error = "cannot map";
        return false;
      }
      data_ = static_cast<const uint8_t*>(p);
    }
    close(fd);
    return true;
  }
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }
  co::Bytes bytes() const { return co::Bytes(data_, size_); }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// ELF64 little-endian for x86-64: the host files a HIP program loads.
bool IsHostElf(co::Bytes b) {
  if (b.size() < 20 || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F' || b[4] != 2 || b[5] != 1)
    return false;
  return static_cast<uint16_t>(b[18] | b[19] << 8) == kEmX86_64;
}

bool StartsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Runtime companions hipr does not stand in for.
bool LoadsElsewhere(const std::string& needed) {
  for (const char* p : {"libhiprtc", "libhsa-runtime64", "libamd_comgr", "librocm_smi64", "libamd_smi", "librocprofiler",
                        "libroctracer", "libroctx64"})
    if (StartsWith(needed, p)) return true;
  return false;
}

struct Stub {
  std::set<std::pair<std::string, std::string>> versioned;  // (name, version node)
  std::set<std::string> names;
};

struct FileReport {
  std::string path;
  bool needs_runtime = false;  // DT_NEEDED names a libamdhip64.
  int hip_symbols = 0;
  int hiprtc_symbols = 0;  // unversioned hiprtc* references of a file that needs a libhiprtc
  int hiprtc_defined = 0;  // hiprtc* this file defines (a libhiprtc)
  std::vector<std::string> hiprtc_versions;  // the version nodes it defines them in
  std::vector<std::string> missing;
  std::vector<std::string> elsewhere;
};

bool ReadStub(const std::string& path, Stub* stub) {
  MappedFile f;
  std::string error;
  if (!f.Open(path, &error)) {
    std::fprintf(stderr, "hipr-abi-check: the stub %s: %s\n", path.c_str(), error.c_str());
    return false;
  }
  co::DynamicInfo info;
  if (Status st = co::ReadDynamicInfo(f.bytes(), &info); !st.ok()) {
    std::fprintf(stderr, "hipr-abi-check: the stub %s: %s\n", path.c_str(), st.message().c_str());
    return false;
  }
  for (const co::DynamicSymbol& s : info.symbols) {
    if (!s.defined) continue;
    stub->names.insert(s.name);
    if (!s.version.empty()) stub->versioned.emplace(s.name, s.version);
  }
  return true;
}

// Empty `report->path` when the file is no host ELF with a dynamic section.
void Check(const std::string& path, const Stub& stub, FileReport* report, std::string* problem) {
  MappedFile f;
  std::string error;
  if (!f.Open(path, &error)) {
    *problem = error;
    return;
  }
  if (!IsHostElf(f.bytes())) return;
  co::DynamicInfo info;
  if (Status st = co::ReadDynamicInfo(f.bytes(), &info); !st.ok()) {
    if (st.message().find("no dynamic section") == std::string::npos) *problem = st.message();
    return;
  }
  bool& needs_runtime = report->needs_runtime;
  bool needs_hiprtc = false;
  for (const std::string& n : info.needed) {
    if (StartsWith(n, "libamdhip64")) needs_runtime = true;
    if (StartsWith(n, "libhiprtc")) needs_hiprtc = true;
    if (LoadsElsewhere(n)) report->elsewhere.push_back(n);
  }
  std::set<std::string> hiprtc_versions;
  for (const co::DynamicSymbol& s : info.symbols) {
    if (s.defined) {
      if (StartsWith(s.name, "hiprtc")) {
        ++report->hiprtc_defined;
        if (!s.version.empty()) hiprtc_versions.insert(s.version);
        // A caller of it would get this file's function, handed the stub's programs.
        if (stub.names.count(s.name) == 0) report->missing.push_back(s.name + " (defined here, not by the stub)");
      }
      continue;
    }
    if (StartsWith(s.version_file, "libamdhip64")) {
      ++report->hip_symbols;
      if (stub.versioned.count({s.name, s.version}) == 0) report->missing.push_back(s.name + "@" + s.version);
    } else if (s.version.empty() && needs_hiprtc && StartsWith(s.name, "hiprtc")) {
      ++report->hiprtc_symbols;
      if (stub.names.count(s.name) == 0) report->missing.push_back(s.name + " (unversioned, from libhiprtc)");
    } else if (s.version.empty() && needs_runtime && (StartsWith(s.name, "hip") || StartsWith(s.name, "__hip"))) {
      ++report->hip_symbols;
      if (stub.names.count(s.name) == 0) report->missing.push_back(s.name + " (unversioned)");
    }
  }
  report->hiprtc_versions.assign(hiprtc_versions.begin(), hiprtc_versions.end());
  if (needs_runtime || report->hip_symbols > 0 || report->hiprtc_symbols > 0 || report->hiprtc_defined > 0 ||
      !report->elsewhere.empty())
    report->path = path;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string JsonList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + JsonString(v[i]);
  return out + "]";
}

std::string DefaultStub() {
  char self[PATH_MAX] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  fs::path dir = n > 0 ? fs::path(std::string(self, static_cast<size_t>(n))).parent_path() : fs::path(".");
  return (dir / "../lib/libhip_client_stub.so").lexically_normal().string();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hipr-abi-check: the HIP runtime symbols these files need that hipr's stub does not define"};
  std::string stub_path = DefaultStub();
  bool json = false;
  std::vector<std::string> paths;
  app.add_option("--stub", stub_path, "hipr's client stub (default: ../lib/libhip_client_stub.so from this program)");
  app.add_flag("--json", json, "one JSON object on stdout");
  app.add_option("paths", paths, "files and directories to check (directories recursively)")->required();
  CLI11_PARSE(app, argc, argv);

  Stub stub;
  if (!ReadStub(stub_path, &stub)) return 2;
  // Every regular file once, whatever links lead to it; in a stable order.
  std::set<std::string> files;
  bool unreadable = false;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        std::error_code fec;
        if (it->is_regular_file(fec)) files.insert(fs::canonical(it->path(), fec).string());
      }
    } else if (fs::is_regular_file(p, ec)) {
      files.insert(fs::canonical(p, ec).string());
    } else {
      std::fprintf(stderr, "hipr-abi-check: %s: no such file or directory\n", p.c_str());
      unreadable = true;
      continue;
    }
    if (ec) {
      std::fprintf(stderr, "hipr-abi-check: %s: %s\n", p.c_str(), ec.message().c_str());
      unreadable = true;
    }
  }

  std::vector<FileReport> reports;
  size_t missing = 0;
  for (const std::string& path : files) {
    FileReport r;
    std::string problem;
    Check(path, stub, &r, &problem);
    if (!problem.empty()) std::fprintf(stderr, "hipr-abi-check: %s: %s (skipped)\n", path.c_str(), problem.c_str());
    if (r.path.empty()) continue;
    missing += r.missing.size();
    reports.push_back(std::move(r));
  }

  if (json) {
    std::printf("{\"stub\": %s, \"files_checked\": %zu, \"missing_total\": %zu, \"files\": [", JsonString(stub_path).c_str(),
                files.size(), missing);
    for (size_t i = 0; i < reports.size(); ++i) {
      const FileReport& r = reports[i];
      std::printf("%s\n  {\"path\": %s, \"needs_runtime\": %s, \"hip_symbols\": %d, \"hiprtc_symbols\": %d, "
                  "\"hiprtc_defined\": %d, \"hiprtc_versions\": %s, \"missing\": %s, \"loads_elsewhere\": %s}",
                  i ? "," : "", JsonString(r.path).c_str(), r.needs_runtime ? "true" : "false", r.hip_symbols,
                  r.hiprtc_symbols, r.hiprtc_defined, JsonList(r.hiprtc_versions).c_str(), JsonList(r.missing).c_str(),
                  JsonList(r.elsewhere).c_str());
    }
    std::printf("]}\n");
  } else {
    for (const FileReport& r : reports) {
      std::printf("%s: %d HIP runtime symbol%s, %s\n", r.path.c_str(), r.hip_symbols, r.hip_symbols == 1 ? "" : "s",
                  r.missing.empty() ? "all defined by the stub" : (std::to_string(r.missing.size()) + " missing").c_str());
      if (r.hiprtc_symbols > 0)
        std::printf("  %d hiprtc* reference%s, answered by the stub\n", r.hiprtc_symbols,
                    r.hiprtc_symbols == 1 ? "" : "s");
      if (r.hiprtc_defined > 0 && r.hiprtc_versions.empty())
        std::printf("  defines %d hiprtc* without a version: with the stub preloaded, references to them bind to "
                    "the stub\n", r.hiprtc_defined);
      if (!r.hiprtc_versions.empty())
        std::printf("  defines %d hiprtc* in version node %s: references to them bind to this file, not to the "
                    "stub\n", r.hiprtc_defined, r.hiprtc_versions.front().c_str());
      for (const std::string& m : r.missing) std::printf("  missing: %s\n", m.c_str());
      for (const std::string& e : r.elsewhere) std::printf("  loads from elsewhere: %s\n", e.c_str());
    }
    std::printf("%zu file%s checked, %zu need the HIP runtime or its companions; %zu symbol%s missing (stub %s)\n",
                files.size(), files.size() == 1 ? "" : "s", reports.size(), missing, missing == 1 ? "" : "s",
                stub_path.c_str());
  }
  if (unreadable) return 2;
  return missing == 0 ? 0 : 1;
}
