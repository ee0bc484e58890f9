// CodeCache: the worker's store of code objects, named by the SHA-256 of
// their bytes, shared by every session of the worker and kept across
// restarts in a directory (--code-cache DIR, bounded by --code-cache-bytes).
//
// Trust: an entry is only ever written from bytes whose hash the session
// itself computed and compared with the name, and every read re-hashes the
// file, so neither a client nor a damaged disk can make one name stand for
// other bytes (a corrupt file is deleted and reported as a miss).
//
// Concurrency: many session processes use one directory at once. Files are
// written to a temporary name and renamed into place, so readers see whole
// files or none; eviction deletes the least recently used files (mtime,
// refreshed on every hit) until the total fits the bound.
//
// Tenants: with set_tenant, a session reads and writes only its tenant's
// part of the directory (t-<16 hex digits of the SHA-256 of the tenant's
// name>/, holding a `.tenant` file with the name for /metrics). A hash alone
// therefore never finds another tenant's code object (it would prove
// nothing about holding the bytes and would tell the module's global
// names); each tenant ships a module once per worker. Without tenants every
// session uses the top of the directory. The bound holds for the whole
// directory (least recently used first, every part); one tenant's part may
// take at most a quarter of it, so one tenant cannot flush the others.
//
// Failures to write (full disk, read-only directory) are logged and cost
// only the cache: the module still loads from the bytes in hand. They are
// counted in the worker's ledger when one is set
// (hipr_code_cache_write_failures_total).
//
// Thread-safety: one instance per session process; methods are not
// thread-safe (the session's replay thread uses it).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/code_object/code_object.h"
#include "protocol/status.h"

namespace hipr::worker {

class Ledger;

class CodeCache {
 public:
  // `dir` empty: no disk cache (Get always misses, Put does nothing).
  // The directory is created by the first Put; touches no disk before.
  CodeCache(std::string dir, uint64_t max_bytes);

  // True and the bytes in *out when the cache holds this code object.
  bool Get(const co::Sha256Digest& digest, std::vector<uint8_t>* out);
  // Stores bytes whose digest the caller verified. Never fails the caller:
  // errors are logged.
  void Put(const co::Sha256Digest& digest, const std::vector<uint8_t>& bytes);

  const std::string& dir() const { return dir_; }
  // Confines this session to `tenant`'s part (empty: the top, as without
  // tenants). Call before Get/Put.
  void set_tenant(const std::string& tenant);

  // Where failed writes are counted (nullptr: nowhere); it outlives this.
  void set_ledger(Ledger* ledger) { ledger_ = ledger; }

 private:
  std::string PathOf(const co::Sha256Digest& digest) const;
  void CountWriteFailure();
  void EvictToFit(uint64_t incoming);
  // Creates the directory once; false (logged once) when it cannot be used.
  bool PrepareDir();

  std::string dir_;   // The cache's top.
  std::string part_;  // Where this session's entries are: dir_, or its tenant's part.
  std::string tenant_;
  uint64_t max_bytes_;
  bool usable_ = false;  // The directory exists and is writable.
  bool failed_ = false;  // ...or it cannot be, and that was logged.
  Ledger* ledger_ = nullptr;
};

// Bytes of the code objects in a cache directory, every tenant's part
// included (0 when it does not exist): for /metrics. Reads the directory,
// blocking on it.
uint64_t CodeCacheBytes(const std::string& dir);

// The bound on a cache directory when --code-cache-bytes is not given: a
// tenth of the filesystem it is on (its nearest existing ancestor's), at
// least 256 MiB and at most 8 GiB; 1 GiB when that cannot be read.
// `why` says how it was chosen, for the log.
uint64_t DefaultCodeCacheBytes(const std::string& dir, std::string* why);

// Bytes of each tenant's part, by tenant name (as its `.tenant` file says).
struct CodeCachePart {
  std::string tenant;
  uint64_t bytes = 0;
};
std::vector<CodeCachePart> CodeCacheParts(const std::string& dir);

}  // namespace hipr::worker
