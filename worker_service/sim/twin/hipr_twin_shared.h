// Static __shared__ variables of kernel twins, included by
// hipr_twin_prelude.h.
//
// A GPU places a block's __shared__ arrays in its LDS; an access past their
// end reads or writes other LDS or faults. A twin runs all threads of a
// block on one OS thread, so per-block storage is per OS thread. Each
// function-scope declaration `__shared__ T a[N], b;` is rewritten by
// twin_rewrite.py into a local struct holding its declarators and a
// reference to one instance of it per OS thread:
//
//   struct hipr_shared_7 { T a[N], b; };
//   auto& hipr_shared_7_v = ::hipr_twin::StaticShared<hipr_shared_7>();
//   auto& a = hipr_shared_7_v.a;
//   auto& b = hipr_shared_7_v.b;
//
// StaticShared places that instance so that it ends where an inaccessible
// page begins: an access past the end of the declaration's last variable is
// a fault, which the sim reports with the kernel, block and thread
// (twin_fault.h) instead of corrupting other memory. The storage is made on
// first use per OS thread and kept (zero at first, then whatever the last
// block left, as LDS is never cleared); a local struct is a distinct type
// per function and per template instantiation, so each declaration has its
// own storage. __shared__ at namespace scope stays thread_local.
#ifndef HIPR_TWIN_SHARED_H_
#define HIPR_TWIN_SHARED_H_

#include <sys/mman.h>
#include <unistd.h>

namespace hipr_twin {

// `size` bytes aligned to `align`, ending at an inaccessible page; never
// freed. Aborts when the memory cannot be mapped (a GPU would not launch).
inline void* GuardedShared(size_t size, size_t align) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (size + page - 1) / page * page;
  void* p = mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("hipr twin: cannot map __shared__ storage");
    abort();
  }
  char* base = static_cast<char*>(p);
  if (mprotect(base + bytes, page, PROT_NONE) != 0) {
    perror("hipr twin: cannot protect the page after __shared__ storage");
    abort();
  }
  // sizeof(T) is a multiple of alignof(T): the start stays aligned when
  // the end is page-aligned; larger alignments move the start down.
  return base + ((bytes - size) & ~(align - 1));
}

template <typename S>
inline S& StaticShared() {
  static_assert(std::is_trivially_default_constructible_v<S>,
                "__shared__ variables cannot have constructors (as in HIP)");
  static thread_local S* storage = static_cast<S*>(GuardedShared(sizeof(S), alignof(S)));
  return *storage;
}

}  // namespace hipr_twin

#endif  // HIPR_TWIN_SHARED_H_
