#include "protocol/write_watch.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

// Debian 12's kernel headers (6.1) predate the asynchronous write
// protection (6.7); the interface is the kernel's stable ABI
// (include/uapi/linux/userfaultfd.h and fs.h).
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED (1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef PAGEMAP_SCAN
struct page_region {
  __u64 start;
  __u64 end;
  __u64 categories;
};
struct pm_scan_arg {
  __u64 size;
  __u64 flags;
  __u64 start;
  __u64 end;
  __u64 walk_end;
  __u64 vec;
  __u64 vec_len;
  __u64 max_pages;
  __u64 category_inverted;
  __u64 category_mask;
  __u64 category_anyof_mask;
  __u64 return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_WPALLOWED (1 << 0)
#define PAGE_IS_WRITTEN (1 << 1)
#define PM_SCAN_WP_MATCHING (1 << 0)
#define PM_SCAN_CHECK_WPASYNC (1 << 1)
#endif

namespace hipr {

namespace {

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

size_t WriteWatch::PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

WriteWatch::WriteWatch(int uffd, int pagemap) : uffd_(uffd), pagemap_(pagemap), pid_(getpid()) {}

WriteWatch::~WriteWatch() {
  close(uffd_);
  close(pagemap_);
}

std::unique_ptr<WriteWatch> WriteWatch::Open(std::string* why) {
  const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY));
  if (uffd < 0) {
    *why = Errno("userfaultfd");
    return nullptr;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
  if (ioctl(uffd, UFFDIO_API, &api) != 0) {
    *why = Errno("UFFDIO_API with asynchronous write protection (Linux 6.7)");
    close(uffd);
    return nullptr;
  }
  const int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) {
    *why = Errno("/proc/self/pagemap");
    close(uffd);
    return nullptr;
  }
  // PAGEMAP_SCAN came with WP_ASYNC; ask about nothing to be sure.
  pm_scan_arg probe{};
  probe.size = sizeof probe;
  if (ioctl(pagemap, PAGEMAP_SCAN, &probe) < 0) {
    *why = Errno("PAGEMAP_SCAN");
    close(pagemap);
    close(uffd);
    return nullptr;
  }
  return std::unique_ptr<WriteWatch>(new WriteWatch(uffd, pagemap));
}

Status WriteWatch::Watch(void* base, size_t size) {
  const size_t page = PageSize();
  const auto start = reinterpret_cast<uint64_t>(base);
  if (start % page != 0 || size == 0) return Status(StatusCode::kInvalidArgument, "not a page-aligned range");
  if (getpid() != pid_) return Status(StatusCode::kFailedPrecondition, "the watch belongs to the parent process");
  const uint64_t len = (size + page - 1) / page * page;
  // Best effort: a huge page would be reported whole.
  (void)madvise(base, len, MADV_NOHUGEPAGE);
  uffdio_register reg{};
  reg.range = {start, len};
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  if (ioctl(uffd_, UFFDIO_REGISTER, &reg) != 0) return Status(StatusCode::kUnavailable, Errno("UFFDIO_REGISTER"));
  uffdio_writeprotect wp{};
  wp.range = {start, len};
  wp.mode = UFFDIO_WRITEPROTECT_MODE_WP;
  if (ioctl(uffd_, UFFDIO_WRITEPROTECT, &wp) != 0) {
    const Status st(StatusCode::kUnavailable, Errno("UFFDIO_WRITEPROTECT"));
    uffdio_range range{start, len};
    (void)ioctl(uffd_, UFFDIO_UNREGISTER, &range);
    return st;
  }
  return Status::Ok();
}

Status WriteWatch::TakeWritten(const void* base, size_t size, std::vector<Run>* runs) {
  runs->clear();
  const size_t page = PageSize();
  const auto start = reinterpret_cast<uint64_t>(base);
  if (start % page != 0) return Status(StatusCode::kInvalidArgument, "not a page-aligned range");
  if (getpid() != pid_) return Status(StatusCode::kFailedPrecondition, "the watch belongs to the parent process");
  if (size == 0) return Status::Ok();
  const uint64_t end = start + (size + page - 1) / page * page;
  page_region regions[256];
  pm_scan_arg scan{};
  scan.size = sizeof scan;
  // Report and re-protect the written pages; stop at any page not under
  // asynchronous write protection (then the answer would be incomplete).
  scan.flags = PM_SCAN_WP_MATCHING | PM_SCAN_CHECK_WPASYNC;
  scan.vec = reinterpret_cast<uint64_t>(regions);
  scan.vec_len = sizeof regions / sizeof regions[0];
  scan.category_mask = PAGE_IS_WRITTEN;
  scan.return_mask = PAGE_IS_WRITTEN;
  for (uint64_t at = start; at < end;) {
    scan.start = at;
    scan.end = end;
    const long n = ioctl(pagemap_, PAGEMAP_SCAN, &scan);
    if (n < 0) {
      runs->clear();
      return Status(StatusCode::kUnavailable, Errno("PAGEMAP_SCAN"));
    }
    for (long i = 0; i < n; ++i) {
      const uint64_t from = regions[i].start - start;
      const uint64_t to = std::min<uint64_t>(regions[i].end - start, size);
      if (from >= to) continue;
      if (!runs->empty() && runs->back().first + runs->back().second == from)
        runs->back().second += to - from;
      else
        runs->emplace_back(from, to - from);
    }
    if (scan.walk_end <= at) break;  // No progress: cannot happen, but never spin.
    at = scan.walk_end;
  }
  // PM_SCAN_CHECK_WPASYNC stops the walk (without an error) at the first
  // page not watched: then the answer covers only part of the range.
  if (scan.walk_end < end) {
    runs->clear();
    return Status(StatusCode::kFailedPrecondition, "part of the range is not watched");
  }
  return Status::Ok();
}

}  // namespace hipr
