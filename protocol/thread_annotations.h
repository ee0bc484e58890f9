// Lock rules the compiler checks: clang's thread-safety attributes, as
// macros (empty for other compilers), and a mutex and a lock that carry
// them (libstdc++'s std::mutex does not). State a mutex protects is
// declared HIPR_GUARDED_BY(mu_); a function that expects the caller to
// hold it, HIPR_REQUIRES(mu_). `clang++ -Wthread-safety` (the ctest
// thread_safety, tests/thread_safety_check.py) then refuses any access
// without the lock. The habit is leveldb's (port/thread_annotations.h) and
// Abseil's.
#pragma once

#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#if defined(__clang__)
#define HIPR_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define HIPR_THREAD_ANNOTATION(x)
#endif

#define HIPR_CAPABILITY(x) HIPR_THREAD_ANNOTATION(capability(x))
#define HIPR_SCOPED_CAPABILITY HIPR_THREAD_ANNOTATION(scoped_lockable)
#define HIPR_GUARDED_BY(x) HIPR_THREAD_ANNOTATION(guarded_by(x))
#define HIPR_PT_GUARDED_BY(x) HIPR_THREAD_ANNOTATION(pt_guarded_by(x))
#define HIPR_REQUIRES(...) HIPR_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define HIPR_EXCLUDES(...) HIPR_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define HIPR_ACQUIRE(...) HIPR_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define HIPR_RELEASE(...) HIPR_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define HIPR_ACQUIRE_SHARED(...) HIPR_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define HIPR_RELEASE_SHARED(...) HIPR_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define HIPR_REQUIRES_SHARED(...) HIPR_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define HIPR_RELEASE_GENERIC(...) HIPR_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define HIPR_TRY_ACQUIRE(...) HIPR_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define HIPR_NO_THREAD_SAFETY_ANALYSIS HIPR_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace hipr {

// std::mutex, as a capability the analysis knows.
class HIPR_CAPABILITY("mutex") Mutex {
 public:
  void lock() HIPR_ACQUIRE() { mu_.lock(); }
  void unlock() HIPR_RELEASE() { mu_.unlock(); }
  bool try_lock() HIPR_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  std::mutex& native() { return mu_; }

 private:
  std::mutex mu_;
};

// Holds `mu` from construction to destruction (Unlock() and Lock() in
// between). Condition variables wait on native(): they give the mutex up
// and hold it again when they return, which the analysis takes as held
// throughout. Wait in a loop on the guarded state, not with a predicate
// lambda (a lambda is analysed as a function of its own, holding nothing).
class HIPR_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) HIPR_ACQUIRE(mu) : lock_(mu.native()) {}
  ~MutexLock() HIPR_RELEASE() {}
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() HIPR_RELEASE() { lock_.unlock(); }
  void Lock() HIPR_ACQUIRE() { lock_.lock(); }
  std::unique_lock<std::mutex>& native() { return lock_; }

 private:
  std::unique_lock<std::mutex> lock_;
};

// std::shared_mutex, as a capability: exclusive for changes, shared for
// lookups.
class HIPR_CAPABILITY("mutex") SharedMutex {
 public:
  void lock() HIPR_ACQUIRE() { mu_.lock(); }
  void unlock() HIPR_RELEASE() { mu_.unlock(); }
  void lock_shared() HIPR_ACQUIRE_SHARED() { mu_.lock_shared(); }
  void unlock_shared() HIPR_RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds `mu` exclusively from construction to destruction.
class HIPR_SCOPED_CAPABILITY WriterLock {
 public:
  explicit WriterLock(SharedMutex& mu) HIPR_ACQUIRE(mu) : mu_(mu) { mu_.lock(); }
  ~WriterLock() HIPR_RELEASE() { mu_.unlock(); }
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

 private:
  SharedMutex& mu_;
};

// Holds `mu` shared from construction to destruction.
class HIPR_SCOPED_CAPABILITY ReaderLock {
 public:
  explicit ReaderLock(SharedMutex& mu) HIPR_ACQUIRE_SHARED(mu) : mu_(mu) { mu_.lock_shared(); }
  ~ReaderLock() HIPR_RELEASE() { mu_.unlock_shared(); }
  ReaderLock(const ReaderLock&) = delete;
  ReaderLock& operator=(const ReaderLock&) = delete;

 private:
  SharedMutex& mu_;
};

}  // namespace hipr
