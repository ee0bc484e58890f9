#include "client_stub/abi/runtime_names.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <cstring>
#include <iterator>
#include <mutex>
#include <set>
#include <string>

#include "client_stub/base/log.h"

namespace hipr::client {
namespace {

// Every name a HIP runtime has had; libamdhip64.so.5 is the stub's SONAME.
constexpr const char* kRuntimeNames[] = {"libamdhip64.so", "libamdhip64.so.5", "libamdhip64.so.6",
                                         "libamdhip64.so.7"};
// Files whose presence means a real runtime (and its GPU stack) is mapped.
constexpr const char* kForeignPrefixes[] = {"libamdhip64", "libhsa-runtime64", "libhsakmt"};

link_map* StubMap() {
  Dl_info info{};
  link_map* lm = nullptr;
  if (dladdr1(reinterpret_cast<void*>(&ClaimRuntimeNames), &info, reinterpret_cast<void**>(&lm),
              RTLD_DL_LINKMAP) == 0)
    return nullptr;
  return lm;
}

bool SameFile(const char* a, const struct stat& b) {
  struct stat st{};
  return a != nullptr && stat(a, &st) == 0 && st.st_dev == b.st_dev && st.st_ino == b.st_ino;
}

struct ForeignScan {
  struct stat stub{};
  bool have_stub = false;
  std::set<std::string> found;
};

int ScanObject(dl_phdr_info* info, size_t, void* arg) {
  auto* scan = static_cast<ForeignScan*>(arg);
  const char* path = info->dlpi_name;
  if (path == nullptr || path[0] == '\0') return 0;
  const char* base = std::strrchr(path, '/');
  base = base != nullptr ? base + 1 : path;
  for (const char* prefix : kForeignPrefixes) {
    if (std::strncmp(base, prefix, std::strlen(prefix)) != 0) continue;
    if (scan->have_stub && SameFile(path, scan->stub)) break;
    scan->found.insert(path);
  }
  return 0;
}

}  // namespace

int ClaimRuntimeNames(RealDlopenFn real_dlopen) {
  link_map* self = StubMap();
  if (real_dlopen == nullptr || self == nullptr) {
    HIPR_LOG_WARN("cannot claim the libamdhip64 names for the stub (no dlopen or no link map)");
    return 0;
  }
  int held = 0;
  for (const char* name : kRuntimeNames) {
    void* handle = real_dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
    link_map* lm = nullptr;
    if (handle != nullptr && dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm == self) {
      ++held;  // The reference stays: the stub is never unloaded.
      continue;
    }
    if (handle != nullptr) {
      HIPR_LOG_ERROR("%s is already %s, not the hipr stub: code that needs that name uses it", name,
                     lm != nullptr && lm->l_name != nullptr ? lm->l_name : "loaded");
      dlclose(handle);
    } else {
      HIPR_LOG_WARN("cannot claim %s for the stub (keep the hipr/ directory of drop-in names beside "
                    "libhip_client_stub.so): a library that needs that name may load another HIP runtime",
                    name);
    }
  }
  HIPR_LOG_DEBUG("the stub answers to %d of %zu libamdhip64 names", held, std::size(kRuntimeNames));
  return held;
}

int ReportForeignRuntimes() {
  static std::mutex mu;
  static std::set<std::string>* reported = new std::set<std::string>;  // Leaked: used until exit.
  ForeignScan scan;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&ReportForeignRuntimes), &info) != 0 && info.dli_fname != nullptr)
    scan.have_stub = stat(info.dli_fname, &scan.stub) == 0;
  dl_iterate_phdr(ScanObject, &scan);
  std::lock_guard<std::mutex> lock(mu);
  for (const std::string& path : scan.found) {
    if (!reported->insert(path).second) continue;
    const char* base = std::strrchr(path.c_str(), '/');
    base = base != nullptr ? base + 1 : path.c_str();
    if (std::strncmp(base, "libamdhip64", 11) == 0) {
      HIPR_LOG_ERROR("%s is mapped beside the hipr stub: it was loaded before the stub could claim its "
                     "name (the program's own DT_NEEDED through an RPATH, or an explicit path); HIP "
                     "calls that bind to it do not go through hipr",
                     path.c_str());
    } else {
      // ROCm libraries (rocBLAS, MIOpen, RCCL...) need the HSA runtime: it
      // maps harmlessly, but whatever calls it directly finds no GPU here.
      HIPR_LOG_WARN("%s is mapped (a dependency of a ROCm library); hipr does not use it, and code that "
                    "calls it directly (RCCL, profilers) finds no GPU on this host",
                    path.c_str());
    }
  }
  return static_cast<int>(scan.found.size());
}

}  // namespace hipr::client
