#include "worker_service/code_cache.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "worker_service/ledger.h"

namespace hipr::worker {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSuffix = ".co";

bool ReadWhole(const std::string& path, std::vector<uint8_t>* out) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            static_cast<uint64_t>(st.st_size) <= co::kMaxCodeObjectBytes;
  if (ok) {
    out->resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    while (ok && done < out->size()) {
      ssize_t n = ::read(fd, out->data() + done, out->size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) ok = false;
      else done += static_cast<size_t>(n);
    }
  }
  ::close(fd);
  return ok;
}

bool WriteWhole(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

CodeCache::CodeCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {}

bool CodeCache::PrepareDir() {
  if (dir_.empty() || failed_) return false;
  if (usable_) return true;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  // Other local users may neither read the cached code objects nor list
  // them: the directory is the worker's alone (0700) when it owns it.
  struct stat st{};
  if (!ec && ::stat(dir_.c_str(), &st) == 0 && st.st_uid == ::geteuid() && (st.st_mode & 077) != 0 &&
      ::chmod(dir_.c_str(), 0700) != 0)
    spdlog::warn("code cache: cannot make {} private (0700): {}", dir_, std::strerror(errno));
  if (ec || ::access(dir_.c_str(), R_OK | W_OK | X_OK) != 0) {
    spdlog::warn("code cache: cannot use {}: {}; code objects are kept in memory only", dir_,
                 ec ? ec.message() : std::strerror(errno));
    failed_ = true;
    return false;
  }
  usable_ = true;
  return true;
}

std::string CodeCache::PathOf(const co::Sha256Digest& digest) const {
  return dir_ + "/" + co::ToHex(digest) + kSuffix;
}

bool CodeCache::Get(const co::Sha256Digest& digest, std::vector<uint8_t>* out) {
  if (dir_.empty()) return false;  // A missing directory is just a miss.
  const std::string path = PathOf(digest);
  std::vector<uint8_t> bytes;
  if (!ReadWhole(path, &bytes)) return false;
  if (co::Sha256(bytes) != digest) {
    spdlog::warn("code cache: {} does not match its name; deleting it", path);
    ::unlink(path.c_str());
    return false;
  }
  ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);  // Most recently used.
  *out = std::move(bytes);
  return true;
}

void CodeCache::CountWriteFailure() {
  if (ledger_ != nullptr) ledger_->Count(Ledger::kCodeCacheWriteFailures);
}

void CodeCache::Put(const co::Sha256Digest& digest, const std::vector<uint8_t>& bytes) {
  if (dir_.empty() || bytes.size() > max_bytes_) return;
  if (!PrepareDir()) {
    CountWriteFailure();
    return;
  }
  EvictToFit(bytes.size());
  std::string tmp = dir_ + "/.incoming-XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    spdlog::warn("code cache: cannot create a file in {}: {}", dir_, std::strerror(errno));
    CountWriteFailure();
    return;
  }
  bool ok = WriteWhole(fd, bytes) && ::fchmod(fd, 0600) == 0;
  int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(tmp.c_str(), PathOf(digest).c_str()) == 0) return;
  spdlog::warn("code cache: cannot store {} ({} bytes) in {}: {}", co::ToHex(digest), bytes.size(), dir_,
               std::strerror(ok ? errno : saved));
  ::unlink(tmp.c_str());
  CountWriteFailure();
}

void CodeCache::EvictToFit(uint64_t incoming) {
  struct Entry {
    fs::path path;
    uint64_t size;
    fs::file_time_type used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir_, ec)) {
    if (!e.is_regular_file(ec) || e.path().extension() != kSuffix) continue;
    uint64_t size = e.file_size(ec);
    if (ec) continue;
    entries.push_back({e.path(), size, e.last_write_time(ec)});
    total += size;
  }
  if (total + incoming <= max_bytes_) return;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& e : entries) {
    if (total + incoming <= max_bytes_) break;
    if (fs::remove(e.path, ec)) {
      total -= e.size;
      spdlog::info("code cache: evicted {} ({} bytes) to stay within {} bytes", e.path.filename().string(),
                   e.size, max_bytes_);
    }
  }
}

uint64_t CodeCacheBytes(const std::string& dir) {
  uint64_t total = 0;
  if (dir.empty()) return total;
  // Never throws: the acceptor renders /metrics with this.
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec) || it->path().extension() != kSuffix) continue;
    const uint64_t size = it->file_size(entry_ec);
    if (!entry_ec) total += size;
  }
  return total;
}

}  // namespace hipr::worker
