#include "worker_service/process/code_cache.h"

#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "worker_service/process/ledger.h"

namespace hipr::worker {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSuffix = ".co";
constexpr const char* kPartPrefix = "t-";
constexpr const char* kTenantFile = ".tenant";

// Code objects directly in `dir`: path, size, last use.
struct Entry {
  fs::path path;
  uint64_t size;
  fs::file_time_type used;
};
uint64_t ListEntries(const fs::path& dir, std::vector<Entry>* out) {
  uint64_t total = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (!it->is_regular_file(entry_ec) || it->path().extension() != kSuffix) continue;
    const uint64_t size = it->file_size(entry_ec);
    if (entry_ec) continue;
    if (out != nullptr) out->push_back({it->path(), size, it->last_write_time(entry_ec)});
    total += size;
  }
  return total;
}

// The tenants' parts of a cache directory.
std::vector<fs::path> Parts(const fs::path& dir) {
  std::vector<fs::path> parts;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (it->is_directory(entry_ec) && it->path().filename().string().rfind(kPartPrefix, 0) == 0)
      parts.push_back(it->path());
  }
  return parts;
}

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

CodeCache::CodeCache(std::string dir, uint64_t max_bytes) : dir_(std::move(dir)), part_(dir_), max_bytes_(max_bytes) {}

void CodeCache::set_tenant(const std::string& tenant) {
  tenant_ = tenant;
  if (dir_.empty() || tenant.empty()) {
    part_ = dir_;
    return;
  }
  const co::Sha256Digest d = co::Sha256(std::vector<uint8_t>(tenant.begin(), tenant.end()));
  part_ = dir_ + "/" + kPartPrefix + co::ToHex(d).substr(0, 16);
}

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
  if (part_ != dir_) {
    if (::mkdir(part_.c_str(), 0700) != 0 && errno != EEXIST) {
      spdlog::warn("code cache: cannot make {}: {}; code objects are kept in memory only", part_,
                   std::strerror(errno));
      failed_ = true;
      return false;
    }
    const std::string name_file = part_ + "/" + kTenantFile;
    if (::access(name_file.c_str(), F_OK) != 0) {
      const int fd = ::open(name_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) {
        (void)WriteWhole(fd, std::vector<uint8_t>(tenant_.begin(), tenant_.end()));
        ::close(fd);
      }
    }
  }
  usable_ = true;
  return true;
}

std::string CodeCache::PathOf(const co::Sha256Digest& digest) const {
  return part_ + "/" + co::ToHex(digest) + kSuffix;
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
  std::string tmp = part_ + "/.incoming-XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) {
    spdlog::warn("code cache: cannot create a file in {}: {}", part_, std::strerror(errno));
    CountWriteFailure();
    return;
  }
  bool ok = WriteWhole(fd, bytes) && ::fchmod(fd, 0600) == 0;
  int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(tmp.c_str(), PathOf(digest).c_str()) == 0) return;
  spdlog::warn("code cache: cannot store {} ({} bytes) in {}: {}", co::ToHex(digest), bytes.size(), part_,
               std::strerror(ok ? errno : saved));
  ::unlink(tmp.c_str());
  CountWriteFailure();
}

void CodeCache::EvictToFit(uint64_t incoming) {
  auto evict = [&](std::vector<Entry>& entries, uint64_t total, uint64_t bound, const char* which) {
    if (total + incoming <= bound) return total;
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.used < b.used; });
    std::error_code ec;
    for (const Entry& e : entries) {
      if (total + incoming <= bound) break;
      if (fs::remove(e.path, ec)) {
        total -= e.size;
        spdlog::info("code cache: evicted {} ({} bytes) to keep {} within {} bytes", e.path.filename().string(),
                     e.size, which, bound);
      }
    }
    return total;
  };
  // This tenant's part within its share first, then the whole cache.
  if (part_ != dir_) {
    std::vector<Entry> mine;
    const uint64_t total = ListEntries(part_, &mine);
    evict(mine, total, std::max<uint64_t>(max_bytes_ / 4, incoming), "this tenant's part");
  }
  std::vector<Entry> all;
  uint64_t total = ListEntries(dir_, &all);
  for (const fs::path& part : Parts(dir_)) total += ListEntries(part, &all);
  evict(all, total, max_bytes_, "the cache");
}

uint64_t CodeCacheBytes(const std::string& dir) {
  if (dir.empty()) return 0;
  // Never throws: the acceptor renders /metrics with this.
  uint64_t total = ListEntries(dir, nullptr);
  for (const fs::path& part : Parts(dir)) total += ListEntries(part, nullptr);
  return total;
}

uint64_t DefaultCodeCacheBytes(const std::string& dir, std::string* why) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  fs::path at = dir.empty() ? fs::path(".") : fs::path(dir);
  std::error_code ec;
  while (!fs::exists(at, ec) && at.has_parent_path() && at.parent_path() != at) at = at.parent_path();
  struct statvfs vfs{};
  if (::statvfs(at.c_str(), &vfs) != 0) {
    *why = "1 GiB: cannot read the filesystem of " + at.string();
    return 1024 * kMiB;
  }
  const uint64_t fs_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  const uint64_t bound = std::clamp<uint64_t>(fs_bytes / 10, 256 * kMiB, 8192 * kMiB);
  *why = std::to_string(bound / kMiB) + " MiB: a tenth of the " + std::to_string(fs_bytes / kMiB) +
         " MiB filesystem of " + at.string() + ", within 256 MiB..8 GiB";
  return bound;
}

std::vector<CodeCachePart> CodeCacheParts(const std::string& dir) {
  std::vector<CodeCachePart> out;
  if (dir.empty()) return out;
  for (const fs::path& part : Parts(dir)) {
    std::vector<uint8_t> name;
    if (!ReadWhole((part / kTenantFile).string(), &name) || name.empty()) continue;
    out.push_back({std::string(name.begin(), name.end()), ListEntries(part, nullptr)});
  }
  return out;
}

}  // namespace hipr::worker
