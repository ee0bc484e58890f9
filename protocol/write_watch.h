// WriteWatch: which pages of chosen ranges of this process's memory were
// written since they were last asked about, told by the kernel rather than
// found by comparing bytes.
//
// Managed memory has two copies, one on each side (client_stub/managed/,
// the sim's device memory), and each side must say which part of its copy
// changed since the last exchange. Comparing the whole range with a kept
// copy costs a pass over both per synchronisation (16 MiB: milliseconds).
// The kernel's asynchronous userfaultfd write protection (Linux 6.7:
// UFFD_FEATURE_WP_ASYNC) marks a watched page written on its first write
// after protection, with no signal and no handler thread, whoever writes
// (this process's code, or the kernel: read(2) or recv(2) into the page);
// the PAGEMAP_SCAN ioctl of /proc/self/pagemap reports the written pages of
// a range and protects them again in one step. A step that touches one page
// of 16 MiB then costs one minor fault and one scan (about 15 us here).
//
// Where the kernel is older, built without it, or userfaultfd(2) is
// refused (seccomp: Docker's default profile refuses it; the sysctl
// vm.unprivileged_userfaultfd does not matter, since only faults from user
// mode are asked for and the asynchronous mode resolves kernel-mode writes
// without a handler), Open fails and callers compare bytes as before.
//
// Granularity: pages (4 KiB: Watch turns transparent huge pages off for the
// range, which would otherwise be reported 2 MiB at a time). A page counts
// as written even where the bytes written equal the old ones.
//
// fork(): the child inherits neither the registrations (no
// UFFD_FEATURE_EVENT_FORK) nor a usable watch: in a child every call fails,
// and callers fall back to comparing.
//
// Thread-safety: all methods may be called from any thread; the caller
// keeps a range from being unmapped or remapped while it asks about it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "protocol/status.h"

namespace hipr {

class WriteWatch {
 public:
  // [offset, offset + length) relative to the range asked about.
  using Run = std::pair<uint64_t, uint64_t>;

  // A watch for this process, or null with `*why` saying what the kernel
  // refused.
  static std::unique_ptr<WriteWatch> Open(std::string* why);
  ~WriteWatch();
  WriteWatch(const WriteWatch&) = delete;
  WriteWatch& operator=(const WriteWatch&) = delete;

  // Starts watching [base, base + size): private anonymous memory, `base`
  // page-aligned (the size is rounded up to pages). Every page starts
  // clean, populated or not. A range unmapped or mapped over stops being
  // watched by itself.
  Status Watch(void* base, size_t size);

  // The runs of [base, base + size) (`base` page-aligned) written since
  // Watch or the last TakeWritten over them, in page units clipped to
  // `size`, in address order; those pages are clean again. Fails, leaving
  // `*runs` empty, when part of the range is not watched in this process
  // (never watched, mapped over, or this is a forked child): the caller
  // must then take all of it as written.
  Status TakeWritten(const void* base, size_t size, std::vector<Run>* runs);

  static size_t PageSize();

 private:
  WriteWatch(int uffd, int pagemap);

  const int uffd_;
  const int pagemap_;
  const pid_t pid_;
};

}  // namespace hipr
