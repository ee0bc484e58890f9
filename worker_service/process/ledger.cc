#include "worker_service/process/ledger.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <sys/mman.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <new>
#include <thread>

namespace hipr::worker {

static_assert(std::atomic<uint64_t>::is_always_lock_free, "the ledger is shared between processes");

struct Ledger::Header {
  std::atomic<uint64_t> memory_used{0};
  std::atomic<int64_t> streams{0};
  std::atomic<uint64_t> events[kEventCount] = {};
  std::atomic<uint64_t> op_calls[kOpSlots] = {};
  std::atomic<uint64_t> duration_buckets[kDurationBuckets + 1] = {};
  std::atomic<uint64_t> duration_count{0};
  std::atomic<uint64_t> duration_sum_ns{0};
  uint64_t memory_budget = 0;
  pthread_mutex_t tenant_mu;  // TenantLock.
};

struct Ledger::Slot {
  std::atomic<uint32_t> state{kFree};
  std::atomic<int32_t> tenant{-1};  // TenantEntry index once admitted.
  std::atomic<uint64_t> memory{0};
  std::atomic<uint64_t> leased{0};  // Of memory.
  std::atomic<uint64_t> session_id{0};
  std::atomic<int64_t> streams{0};
  // What the session process said before it died (SetLastWords).
  std::atomic<uint32_t> last_words_size{0};
  char last_words[Ledger::kLastWordsBytes] = {};
};

struct Ledger::TenantEntry {
  enum : uint32_t { kUnused = 0, kReady = 2 };
  std::atomic<uint32_t> state{kUnused};
  // Written under the tenant lock; read under it too.
  uint8_t digest[SHA256_DIGEST_LENGTH] = {};
  char name[Ledger::kShownTenantBytes + 1] = {};  // Shown (TenantIndexLocked).
  std::atomic<int32_t> sessions{0};  // Raised only under the tenant lock.
  std::atomic<uint64_t> memory{0};
  std::atomic<uint64_t> memory_cap{0};  // The last admitted session's view of `memory=`.
};

// The tenant table's lock: a process-shared robust mutex, so a session
// process killed while it holds it (an evicted handshake) does not wedge
// the worker.
class Ledger::TenantLock {
 public:
  explicit TenantLock(pthread_mutex_t* mu) : mu_(mu) {
    if (pthread_mutex_lock(mu_) == EOWNERDEAD) pthread_mutex_consistent(mu_);
  }
  ~TenantLock() { pthread_mutex_unlock(mu_); }
  TenantLock(const TenantLock&) = delete;
  TenantLock& operator=(const TenantLock&) = delete;

 private:
  pthread_mutex_t* mu_;
};

namespace {

std::string Size(uint64_t bytes) {
  if (bytes % (uint64_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

// Adds `bytes` to `counter` unless that passes `cap` (0: no cap).
bool AddCapped(std::atomic<uint64_t>& counter, uint64_t bytes, uint64_t cap) {
  uint64_t now = counter.load();
  do {
    if (cap != 0 && (bytes > cap || now > cap - bytes)) return false;
  } while (!counter.compare_exchange_weak(now, now + bytes));
  return true;
}

}  // namespace

Status Ledger::Create(int slots, uint64_t memory_budget, std::unique_ptr<Ledger>* out) {
  std::unique_ptr<Ledger> l(new Ledger());
  l->slot_count_ = slots;
  l->tenant_count_ = std::max(kMinTenants, slots);
  l->bytes_ = sizeof(Header) + sizeof(Slot) * static_cast<size_t>(slots) +
              sizeof(TenantEntry) * static_cast<size_t>(l->tenant_count_);
  l->base_ = mmap(nullptr, l->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (l->base_ == MAP_FAILED) {
    l->base_ = nullptr;
    return Status(StatusCode::kResourceExhausted, std::string("cannot map the ledger: ") + std::strerror(errno));
  }
  char* p = static_cast<char*>(l->base_);
  l->header_ = new (p) Header();
  l->header_->memory_budget = memory_budget;
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  const int made = pthread_mutex_init(&l->header_->tenant_mu, &attr);
  pthread_mutexattr_destroy(&attr);
  if (made != 0) return Status(StatusCode::kInternal, std::string("cannot make the ledger's lock: ") + std::strerror(made));
  p += sizeof(Header);
  l->slots_ = reinterpret_cast<Slot*>(p);
  for (int i = 0; i < slots; ++i) new (&l->slots_[i]) Slot();
  p += sizeof(Slot) * static_cast<size_t>(slots);
  l->tenants_ = reinterpret_cast<TenantEntry*>(p);
  for (int i = 0; i < l->tenant_count_; ++i) new (&l->tenants_[i]) TenantEntry();
  HIPR_RETURN_IF_ERROR(IpcRegistry::Create(&l->ipc_));
  *out = std::move(l);
  return Status::Ok();
}

Ledger::~Ledger() {
  if (base_ != nullptr) munmap(base_, bytes_);
}

void Ledger::OpenSlot(int slot, uint64_t session_id) {
  Slot& s = slots_[slot];
  s.tenant.store(-1);
  s.memory.store(0);
  s.leased.store(0);
  s.session_id.store(session_id);
  s.streams.store(0);
  s.last_words_size.store(0);
  s.state.store(kHandshake);
}

void Ledger::MarkRelay(int slot) { slots_[slot].state.store(kRelay); }

Ledger::SlotState Ledger::State(int slot) const { return static_cast<SlotState>(slots_[slot].state.load()); }

int Ledger::TenantIndexLocked(const std::string& name) {
  uint8_t digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(name.data()), name.size(), digest);
  int unused = -1, idle = -1;
  for (int i = 0; i < tenant_count_; ++i) {
    TenantEntry& t = tenants_[i];
    if (t.state.load() != TenantEntry::kReady) {
      if (unused < 0) unused = i;
      continue;
    }
    if (std::memcmp(t.digest, digest, sizeof digest) == 0) return i;
    if (idle < 0 && t.sessions.load() == 0 && t.memory.load() == 0) idle = i;
  }
  // A new name: a never-used entry, else the first idle one, forgotten.
  const int index = unused >= 0 ? unused : idle;
  if (index < 0) return -1;
  TenantEntry& t = tenants_[index];
  std::memcpy(t.digest, digest, sizeof digest);
  std::memset(t.name, 0, sizeof t.name);
  if (name.size() <= kShownTenantBytes) {
    std::memcpy(t.name, name.data(), name.size());
  } else {
    // Cut, with part of the digest so that two long names stay apart in
    // logs and metric labels: 48 bytes, "...#", 12 hex digits.
    static const char kHex[] = "0123456789abcdef";
    std::string shown = name.substr(0, kShownTenantBytes - 16) + "...#";
    for (int i = 0; i < 6; ++i) {
      shown += kHex[digest[i] >> 4];
      shown += kHex[digest[i] & 15];
    }
    std::memcpy(t.name, shown.data(), shown.size());
  }
  t.memory_cap.store(0);
  t.state.store(TenantEntry::kReady);
  return index;
}

Status Ledger::Admit(int slot, const std::string& tenant, int max_sessions, uint64_t memory_cap) {
  Slot& s = slots_[slot];
  if (!tenant.empty()) {
    TenantLock lock(&header_->tenant_mu);
    const int index = TenantIndexLocked(tenant);
    if (index < 0)
      return Status(StatusCode::kResourceExhausted, "every one of the worker's " + std::to_string(tenant_count_) +
                                                        " tenant entries has live sessions");
    TenantEntry& t = tenants_[index];
    const int32_t now = t.sessions.load();
    if (max_sessions > 0 && now >= max_sessions)
      return Status(StatusCode::kResourceExhausted, "tenant '" + std::string(t.name) + "' already has " +
                                                        std::to_string(now) + " live sessions, its limit");
    t.sessions.fetch_add(1);
    t.memory_cap.store(memory_cap);
    s.tenant.store(index);
  }
  s.state.store(kAdmitted);
  return Status::Ok();
}

Status Ledger::Charge(int slot, uint64_t bytes) {
  Slot& s = slots_[slot];
  if (!AddCapped(header_->memory_used, bytes, header_->memory_budget))
    return Status(StatusCode::kResourceExhausted,
                  "the worker's device-memory budget (--memory-budget " + Size(header_->memory_budget) +
                      ", shared by all sessions) is exhausted");
  const int32_t index = s.tenant.load();
  if (index >= 0) {
    TenantEntry& t = tenants_[index];
    const uint64_t cap = t.memory_cap.load();
    if (!AddCapped(t.memory, bytes, cap)) {
      header_->memory_used.fetch_sub(bytes);
      return Status(StatusCode::kResourceExhausted, "tenant '" + std::string(t.name) + "' holds its limit of " +
                                                        Size(cap) + " of device memory");
    }
  }
  s.memory.fetch_add(bytes);
  return Status::Ok();
}

void Ledger::Leased(int slot, int64_t delta) {
  slots_[slot].leased.fetch_add(static_cast<uint64_t>(delta));  // Wraps back for a negative delta.
}

void Ledger::Refund(int slot, uint64_t bytes) {
  Slot& s = slots_[slot];
  s.memory.fetch_sub(bytes);
  header_->memory_used.fetch_sub(bytes);
  if (const int32_t index = s.tenant.load(); index >= 0) tenants_[index].memory.fetch_sub(bytes);
}

Status Ledger::TakeStream(int slot, int cap) {
  int64_t now = header_->streams.load();
  do {
    if (now >= cap)
      return Status(StatusCode::kResourceExhausted, "the worker runs " + std::to_string(now) +
                                                        " streams for all its sessions, its limit (--max-streams)");
  } while (!header_->streams.compare_exchange_weak(now, now + 1));
  slots_[slot].streams.fetch_add(1);
  return Status::Ok();
}

void Ledger::ReturnStream(int slot) {
  slots_[slot].streams.fetch_sub(1);
  header_->streams.fetch_sub(1);
}

void Ledger::CloseSlot(int slot) {
  ipc_->CloseSlot(slot);
  Slot& s = slots_[slot];
  header_->streams.fetch_sub(s.streams.exchange(0));
  const uint64_t held = s.memory.exchange(0);
  s.leased.store(0);
  header_->memory_used.fetch_sub(held);
  if (const int32_t index = s.tenant.exchange(-1); index >= 0) {
    tenants_[index].memory.fetch_sub(held);
    tenants_[index].sessions.fetch_sub(1);
  }
  s.last_words_size.store(0);
  s.state.store(kFree);
}

void Ledger::SetLastWords(int slot, const char* text, size_t size) {
  Slot& s = slots_[slot];
  if (size > kLastWordsBytes) size = kLastWordsBytes;
  std::memcpy(s.last_words, text, size);
  s.last_words_size.store(static_cast<uint32_t>(size), std::memory_order_release);
}

std::string Ledger::LastWords(int slot) const {
  const Slot& s = slots_[slot];
  const uint32_t size = s.last_words_size.load(std::memory_order_acquire);
  return std::string(s.last_words, std::min<size_t>(size, kLastWordsBytes));
}

void Ledger::Count(Event event, uint64_t n) { header_->events[event].fetch_add(n, std::memory_order_relaxed); }
uint64_t Ledger::Counted(Event event) const { return header_->events[event].load(std::memory_order_relaxed); }

void Ledger::CountCall(uint16_t op, uint64_t ns) {
  header_->op_calls[op % kOpSlots].fetch_add(1, std::memory_order_relaxed);
  const double seconds = static_cast<double>(ns) / 1e9;
  int b = 0;
  while (b < kDurationBuckets && seconds > kDurationBounds[b]) ++b;
  header_->duration_buckets[b].fetch_add(1, std::memory_order_relaxed);
  header_->duration_count.fetch_add(1, std::memory_order_relaxed);
  header_->duration_sum_ns.fetch_add(ns, std::memory_order_relaxed);
}

uint64_t Ledger::Calls(uint16_t op) const { return header_->op_calls[op % kOpSlots].load(std::memory_order_relaxed); }

Ledger::Durations Ledger::CallDurations() const {
  Durations d;
  for (int b = 0; b <= kDurationBuckets; ++b) d.buckets[b] = header_->duration_buckets[b].load();
  d.count = header_->duration_count.load();
  d.sum_ns = header_->duration_sum_ns.load();
  return d;
}

std::vector<Ledger::SessionUsage> Ledger::Sessions() const {
  std::vector<SessionUsage> out;
  for (int i = 0; i < slot_count_; ++i) {
    const Slot& s = slots_[i];
    const auto state = static_cast<SlotState>(s.state.load());
    if (state != kFree) out.push_back({s.session_id.load(), state, s.memory.load(), s.leased.load()});
  }
  return out;
}

std::vector<Ledger::SessionUsage> Ledger::SessionsOfTenant(int slot, std::string* tenant) const {
  const int32_t index = slots_[slot].tenant.load();
  if (tenant != nullptr) {
    tenant->clear();
    if (index >= 0) {
      TenantLock lock(&header_->tenant_mu);
      *tenant = tenants_[index].name;
    }
  }
  std::vector<SessionUsage> out;
  for (int i = 0; i < slot_count_; ++i) {
    const Slot& s = slots_[i];
    // Admitted is set after the tenant, so a slot that reads admitted has
    // its tenant in place.
    if (s.state.load() != kAdmitted || s.tenant.load() != index) continue;
    out.push_back({s.session_id.load(), kAdmitted, s.memory.load(), s.leased.load()});
  }
  return out;
}

uint64_t Ledger::memory_used() const { return header_->memory_used.load(); }
int64_t Ledger::streams() const { return header_->streams.load(); }
uint64_t Ledger::memory_budget() const { return header_->memory_budget; }
uint64_t Ledger::SlotMemory(int slot) const { return slots_[slot].memory.load(); }

std::vector<Ledger::TenantUsage> Ledger::Tenants() const {
  std::vector<TenantUsage> out;
  TenantLock lock(&header_->tenant_mu);
  for (int i = 0; i < tenant_count_; ++i) {
    const TenantEntry& t = tenants_[i];
    if (t.state.load() != TenantEntry::kReady) continue;
    out.push_back({t.name, t.sessions.load(), t.memory.load()});
  }
  return out;
}

}  // namespace hipr::worker
