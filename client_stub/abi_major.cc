#include "client_stub/abi_major.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <vector>

namespace hipr::client {
namespace {

constexpr int kDefaultMajor = 5;

struct ObjectRange {
  uintptr_t begin = 0;
  uintptr_t end = 0;
  int major = 0;  // 0: no DT_NEEDED libamdhip64 (use the default).
};

// Leaked: used until the very end of the process, from any thread.
struct Table {
  std::shared_mutex mu;
  std::vector<ObjectRange> objects;  // GUARDED_BY(mu)
};

Table& GetTable() {
  static Table* t = new Table;
  return *t;
}

std::atomic<int> g_dlopen_major{0};
std::atomic<int> g_main_major{-1};  // -1: not looked up yet.

// The major of `lm`'s DT_NEEDED libamdhip64.so.N, or 0.
int NeededMajor(const link_map* lm) {
  if (lm == nullptr || lm->l_ld == nullptr) return 0;
  const char* strtab = nullptr;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(d->d_un.d_ptr);
  if (strtab == nullptr) return 0;
  // glibc relocates the dynamic section's addresses when it loads an object
  // at an offset (x86-64); an address below the load base is unrelocated.
  if (reinterpret_cast<uintptr_t>(strtab) < lm->l_addr) strtab += lm->l_addr;
  for (const ElfW(Dyn)* d = lm->l_ld; d->d_tag != DT_NULL; ++d) {
    if (d->d_tag != DT_NEEDED) continue;
    if (int major = MajorOfName(strtab + d->d_un.d_val); major != 0) return major;
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

int MainMajor() {
  int major = g_main_major.load(std::memory_order_acquire);
  if (major < 0) {
    void* self = dlopen(nullptr, RTLD_NOW | RTLD_NOLOAD);
    link_map* lm = nullptr;
    if (self != nullptr && dlinfo(self, RTLD_DI_LINKMAP, &lm) == 0) major = NeededMajor(lm);
    if (major < 0) major = 0;
    g_main_major.store(major, std::memory_order_release);
  }
  return major;
}

int DefaultMajor() {
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

void NoteDlopenMajor(int major) {
  if (major > 0) g_dlopen_major.store(major, std::memory_order_release);
}

int CallerMajor(const void* return_address) {
  const auto a = reinterpret_cast<uintptr_t>(return_address);
  Table& t = GetTable();
  {
    std::shared_lock lock(t.mu);
    for (const ObjectRange& o : t.objects)
      if (a >= o.begin && a < o.end) return o.major != 0 ? o.major : DefaultMajor();
  }
  Dl_info info;
  link_map* lm = nullptr;
  if (dladdr1(return_address, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || lm == nullptr)
    return DefaultMajor();
  RangeQuery q;
  q.lm = lm;
  q.range.major = NeededMajor(lm);
  dl_iterate_phdr(FindRange, &q);
  if (q.found) {
    std::unique_lock lock(t.mu);
    t.objects.push_back(q.range);
  }
  return q.range.major != 0 ? q.range.major : DefaultMajor();
}

}  // namespace hipr::client
