#include "client_stub/abi/abi_major.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include <hip/hip_version.h>

#include "client_stub/base/log.h"
#include "protocol/code_object/code_object.h"
#include "protocol/thread_annotations.h"

namespace hipr::client {
namespace {

constexpr int kDefaultMajor = 5;
constexpr int kFirstDecidingNodeMajor = 6;  // hip_5.x nodes exist in 6.x and 7.x too.
constexpr char kRuntimePrefix[] = "libamdhip64";

struct ObjectRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  int major = 0;  // 0: nothing of its own says (use the fallbacks).
};

// Leaked: used until the very end of the process, from any thread.
struct Table {
  SharedMutex mu;
  std::vector<ObjectRange> objects HIPR_GUARDED_BY(mu);
};

Table& GetTable() {
  static Table* t = new Table;
  return *t;
}

std::atomic<int> g_dlopen_major{0};
std::atomic<int> g_main_major{-1};  // -1: not looked up yet.

bool IsRuntimeName(const char* name) {
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  return std::strncmp(base, kRuntimePrefix, sizeof kRuntimePrefix - 1) == 0;
}

// What an object's dynamic section holds for this purpose.
struct DynamicView {
  const char* strtab = nullptr;
  const ElfW(Verneed)* verneed = nullptr;
  uint64_t verneed_count = 0;
};

DynamicView ViewOf(const link_map* lm) {
  DynamicView v;
  if (lm == nullptr || lm->l_ld == nullptr) return v;
  // glibc relocates some of the dynamic section's addresses in place when an
  // object is loaded at an offset (DT_STRTAB), others not (DT_VERNEED): an
  // address below the load base is an unrelocated one.
  auto at = [lm](ElfW(Addr) a) { return a < lm->l_addr ? a + lm->l_addr : a; };
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag == DT_STRTAB) v.strtab = reinterpret_cast<const char*>(at(d->d_un.d_ptr));
    if (d->d_tag == DT_VERNEED) v.verneed = reinterpret_cast<const ElfW(Verneed)*>(at(d->d_un.d_ptr));
    if (d->d_tag == DT_VERNEEDNUM) v.verneed_count = d->d_un.d_val;
  }
  return v;
}

// Step 3: the highest hip_N.M node `lm` references in a libamdhip64* file.
int ReferencedMajor(const link_map* lm, std::string* node) {
  DynamicView v = ViewOf(lm);
  if (v.strtab == nullptr || v.verneed == nullptr) return 0;
  int best = 0;
  // ld.so has checked these tables already; the bounds only stop a loop.
  const auto* file = reinterpret_cast<const char*>(v.verneed);
  for (uint64_t i = 0; i < v.verneed_count && i < 4096; ++i) {
    const auto* need = reinterpret_cast<const ElfW(Verneed)*>(file);
    if (IsRuntimeName(v.strtab + need->vn_file)) {
      const char* aux_at = file + need->vn_aux;
      for (unsigned j = 0; j < need->vn_cnt && j < 4096; ++j) {
        const auto* aux = reinterpret_cast<const ElfW(Vernaux)*>(aux_at);
        const char* name = v.strtab + aux->vna_name;
        if (int m = MajorOfVersionNode(name); m > best) {
          best = m;
          *node = name;
        }
        if (aux->vna_next == 0) break;
        aux_at += aux->vna_next;
      }
    }
    if (need->vn_next == 0) break;
    file += need->vn_next;
  }
  return best;
}

// Step 2: the N of a DT_NEEDED libamdhip64.so.N; `unversioned` gets the first
// libamdhip64 name without one.
int NeededMajor(const link_map* lm, std::string* unversioned) {
  DynamicView v = ViewOf(lm);
  if (v.strtab == nullptr) return 0;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    const char* name = v.strtab + d->d_un.d_val;
    if (int major = MajorOfName(name); major != 0) return major;
    if (IsRuntimeName(name) && unversioned->empty()) *unversioned = name;
  }
  return 0;
}

// The stub's own file (a drop-in name found on a search path is the stub,
// not a runtime that says anything about a major).
bool IsStubFile(const struct stat& st) {
  using Stat = struct stat;
  static const Stat* self = [] {
    auto* s = new Stat{};  // Leaked: read until exit, from any thread.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&MajorOverride), &info) == 0 || info.dli_fname == nullptr ||
        stat(info.dli_fname, s) != 0)
      s->st_ino = 0;
    return s;
  }();
  return self->st_ino != 0 && self->st_dev == st.st_dev && self->st_ino == st.st_ino;
}

// The major a runtime file on disk declares: its SONAME's N, else its
// highest hip_N.M version definition; 0 when it says neither or is no ELF.
int FileMajor(const std::string& path, std::string* why) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st{};
  int major = 0;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
    const auto size = static_cast<size_t>(st.st_size);
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map != MAP_FAILED) {
      co::SharedObjectIdentity id;
      if (co::ReadSharedObjectIdentity(co::Bytes(static_cast<const uint8_t*>(map), size), &id).ok()) {
        if (int m = MajorOfName(id.soname.c_str()); m != 0) {
          major = m;
          *why = path + " (SONAME " + id.soname + ")";
        } else {
          for (const std::string& node : id.version_definitions)
            if (int n = MajorOfVersionNode(node); n > major) {
              major = n;
              *why = path + " (defines " + node + ")";
            }
        }
      }
      munmap(map, size);
    }
  }
  close(fd);
  return major;
}

// Step 4: where `lm`'s DT_NEEDED `name` would have been found, and its major.
int ResolvedFileMajor(const link_map* lm, const std::string& name, std::string* why) {
  const bool is_main = lm->l_name == nullptr || lm->l_name[0] == '\0';
  void* handle = dlopen(is_main ? nullptr : lm->l_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return 0;
  int major = 0;
  Dl_serinfo size{};
  if (dlinfo(handle, RTLD_DI_SERINFOSIZE, &size) == 0 && size.dls_size >= sizeof(Dl_serinfo)) {
    std::unique_ptr<char[]> buffer(new char[size.dls_size]);
    auto* paths = reinterpret_cast<Dl_serinfo*>(buffer.get());
    *paths = size;
    if (dlinfo(handle, RTLD_DI_SERINFO, paths) == 0) {
      for (unsigned i = 0; i < paths->dls_cnt; ++i) {
        std::string path = std::string(paths->dls_serpath[i].dls_name) + "/" + name;
        struct stat st{};
        if (stat(path.c_str(), &st) != 0 || IsStubFile(st)) continue;
        major = FileMajor(path, why);  // The first file found is the one ld.so would take.
        break;
      }
    }
  }
  dlclose(handle);
  return major;
}

// Steps 2-4 for one object; 0 when none decides. `why` says which did.
int ObjectMajor(const link_map* lm, std::string* why) {
  std::string unversioned;
  if (int m = NeededMajor(lm, &unversioned); m != 0) {
    *why = "DT_NEEDED libamdhip64.so." + std::to_string(m);
    return m;
  }
  std::string node;
  if (int m = ReferencedMajor(lm, &node); m >= kFirstDecidingNodeMajor) {
    *why = "references " + node;
    return m;
  }
  if (!unversioned.empty()) {
    std::string file;
    if (int m = ResolvedFileMajor(lm, unversioned, &file); m != 0) {
      *why = "DT_NEEDED " + unversioned + " resolves to " + file;
      return m;
    }
  }
  return 0;
}

struct RangeQuery {
  const link_map* lm = nullptr;
  ObjectRange range;
  bool found = false;
};

// The PT_LOAD span of the object dl_iterate_phdr reports for `lm`.
int FindRange(dl_phdr_info* info, size_t, void* arg) {
  auto* q = static_cast<RangeQuery*>(arg);
  if (info->dlpi_addr != q->lm->l_addr) return 0;
  const char* name = info->dlpi_name != nullptr ? info->dlpi_name : "";
  const char* want = q->lm->l_name != nullptr ? q->lm->l_name : "";
  if (std::strcmp(name, want) != 0) return 0;
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    if (p.p_type != PT_LOAD) continue;
    lo = std::min<uintptr_t>(lo, info->dlpi_addr + p.p_vaddr);
    hi = std::max<uintptr_t>(hi, info->dlpi_addr + p.p_vaddr + p.p_memsz);
  }
  if (lo >= hi) return 0;
  q->range.begin = lo;
  q->range.end = hi;
  q->found = true;
  return 1;
}

const char* ObjectName(const link_map* lm) {
  return lm->l_name != nullptr && lm->l_name[0] != '\0' ? lm->l_name : "the main program";
}

// NoteWorkerRuntime's state. Leaked, as the table is.
struct WorkerRuntime {
  std::atomic<int> major{0};  // Of the last hip worker's runtime; 0: none (or a sim).
  Mutex mu;
  std::string worker HIPR_GUARDED_BY(mu);
  int version HIPR_GUARDED_BY(mu) = 0;
  std::set<std::string> warned HIPR_GUARDED_BY(mu);  // Objects already named.
};

WorkerRuntime& GetWorkerRuntime() {
  static WorkerRuntime* runtime = new WorkerRuntime;
  return *runtime;
}

// One warning per object built for a newer major than the worker's runtime.
void WarnIfNewerThanWorker(const link_map* lm, int major) {
  WorkerRuntime& r = GetWorkerRuntime();
  const int runtime = r.major.load(std::memory_order_acquire);
  if (runtime == 0 || major <= runtime) return;
  MutexLock lock(r.mu);
  if (!r.warned.insert(ObjectName(lm)).second) return;
  HIPR_LOG_WARN("%s was built for ROCm %d (libamdhip64.so.%d) but worker %s runs HIP %d.%d: the calls ROCm %d "
                "lacks fail there and code objects made for ROCm %d may not load; serve it from a worker with "
                "the ROCm %d hip device module (docs/operations.md, \"Which hip device module\")",
                ObjectName(lm), major, major, r.worker.c_str(), r.version / 10000000, r.version / 100000 % 100,
                runtime, major, major);
}

int MainMajor() {
  int major = g_main_major.load(std::memory_order_acquire);
  if (major < 0) {
    major = 0;
    void* self = dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
    link_map* lm = nullptr;
    if (self != nullptr && dlinfo(self, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr) {
      std::string why;
      major = ObjectMajor(lm, &why);
      if (major != 0) HIPR_LOG_DEBUG("ABI major %d for the main program: %s", major, why.c_str());
    }
    g_main_major.store(major, std::memory_order_release);
  }
  return major;
}

int FallbackMajor() {
  if (int m = g_dlopen_major.load(std::memory_order_acquire); m != 0) return m;
  if (int m = MainMajor(); m != 0) return m;
  return kDefaultMajor;
}

}  // namespace

int MajorOfName(const char* name) {
  if (name == nullptr) return 0;
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  constexpr char kPrefix[] = "libamdhip64.so.";
  if (std::strncmp(base, kPrefix, sizeof kPrefix - 1) != 0) return 0;
  const char* digits = base + sizeof kPrefix - 1;
  char* end = nullptr;
  long major = std::strtol(digits, &end, 10);
  if (end == digits || (*end != '\0' && *end != '.') || major <= 0 || major > 99) return 0;
  return static_cast<int>(major);
}

int RuntimeFileMajor(const char* path) {
  struct stat st{};
  if (path == nullptr || stat(path, &st) != 0 || IsStubFile(st)) return 0;
  std::string why;
  return FileMajor(path, &why);
}

int MajorOfVersionNode(std::string_view node) {
  constexpr std::string_view kPrefix = "hip_";
  if (node.substr(0, kPrefix.size()) != kPrefix) return 0;
  node.remove_prefix(kPrefix.size());
  int major = 0;
  size_t i = 0;
  for (; i < node.size() && i < 3 && node[i] >= '0' && node[i] <= '9'; ++i) major = major * 10 + (node[i] - '0');
  if (i == 0 || i >= node.size() || node[i] != '.' || i + 1 >= node.size()) return 0;
  for (size_t j = i + 1; j < node.size(); ++j)
    if (node[j] < '0' || node[j] > '9') return 0;
  return major;
}

int MajorOverride() {
  static const int value = [] {
    const char* text = std::getenv("HIPR_ABI_MAJOR");
    if (text == nullptr || *text == '\0') return 0;
    if (std::strcmp(text, "5") == 0 || std::strcmp(text, "6") == 0 || std::strcmp(text, "7") == 0) {
      HIPR_LOG_INFO("HIPR_ABI_MAJOR=%s: every caller gets %s.x answers", text, text);
      return text[0] - '0';
    }
    HIPR_LOG_WARN("HIPR_ABI_MAJOR=\"%s\" is not 5, 6 or 7; ignored (each caller's major is detected)", text);
    return 0;
  }();
  return value;
}

int VersionForMajor(int worker_version, int major) {
  constexpr int kPerMajor = 10000000;
  if (worker_version <= 0) worker_version = HIP_VERSION;
  const int worker_major = worker_version / kPerMajor;
  if (worker_major == major || major <= 0) return worker_version;
  if (worker_major < major) {
    switch (major) {  // ROCm's official HIP_VERSION of each major's first release.
      case 6: return 60032830;  // 6.0.0
      case 7: return 70051831;  // 7.0.0
      default: return major * kPerMajor;
    }
  }
  switch (major) {  // ... and of each major's last release.
    case 5: return 50731921;  // 5.7.1
    case 6: return 60443484;  // 6.4.3
    default: return major * kPerMajor + 99 * 100000;
  }
}

void NoteWorkerRuntime(const std::string& worker, const std::string& device_kind, int runtime_version) {
  WorkerRuntime& r = GetWorkerRuntime();
  const int major = device_kind == "hip" && runtime_version > 0 ? runtime_version / 10000000 : 0;
  {
    MutexLock lock(r.mu);
    r.worker = worker;
    r.version = runtime_version;
  }
  r.major.store(major, std::memory_order_release);
  if (major == 0) return;
  void* self = dlopen(nullptr, RTLD_LAZY | RTLD_NOLOAD);
  link_map* lm = nullptr;
  if (self == nullptr || dlinfo(self, RTLD_DI_LINKMAP, &lm) != 0) return;
  for (; lm != nullptr; lm = lm->l_next) {
    std::string why;
    if (int m = ObjectMajor(lm, &why); m != 0) WarnIfNewerThanWorker(lm, m);
  }
}

void NoteDlopenMajor(int major) {
  if (major > 0) g_dlopen_major.store(major, std::memory_order_release);
}

int CallerMajor(const void* return_address) {
  if (int forced = MajorOverride(); forced != 0) return forced;
  const auto a = reinterpret_cast<uintptr_t>(return_address);
  Table& t = GetTable();
  {
    ReaderLock lock(t.mu);
    for (const ObjectRange& o : t.objects)
      if (a >= o.begin && a < o.end) return o.major != 0 ? o.major : FallbackMajor();
  }
  Dl_info info;
  link_map* lm = nullptr;
  if (dladdr1(return_address, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || lm == nullptr)
    return FallbackMajor();
  RangeQuery q;
  q.lm = lm;
  std::string why;
  q.range.major = ObjectMajor(lm, &why);
  if (q.range.major != 0) {
    HIPR_LOG_DEBUG("ABI major %d for %s: %s", q.range.major, ObjectName(lm), why.c_str());
    WarnIfNewerThanWorker(lm, q.range.major);
  }
  dl_iterate_phdr(FindRange, &q);
  if (q.found) {
    WriterLock lock(t.mu);
    t.objects.push_back(q.range);
  }
  return q.range.major != 0 ? q.range.major : FallbackMajor();
}

}  // namespace hipr::client
