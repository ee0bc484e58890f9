#include "worker_service/process/ipc_registry.h"

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

namespace hipr::worker {

static_assert(std::atomic<uint32_t>::is_always_lock_free, "the registry is shared between processes");

namespace {

constexpr uint8_t kMagic[4] = {'H', 'I', 'P', 'R'};
constexpr uint8_t kVersion = 1;
constexpr size_t kMacAt = 16;
constexpr size_t kMacBytes = 32;
constexpr size_t kShownTenant = 96;  // Of a tenant's name, for logs.

void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t GetU32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

const char* KindName(IpcRegistry::Kind kind) {
  switch (kind) {
    case IpcRegistry::Kind::kMemory: return "memory";
    case IpcRegistry::Kind::kEvent: return "event";
    case IpcRegistry::Kind::kPhysical: return "shareable physical memory";
  }
  return "unknown";
}

}  // namespace

struct IpcRegistry::Entry {
  enum : uint32_t { kFree = 0, kWriting = 1, kLive = 2 };
  std::atomic<uint32_t> state{kFree};
  std::atomic<uint32_t> generation{0};
  // Written while kWriting by the claiming session (or CloseSlot), read by
  // any session while kLive.
  std::atomic<int32_t> slot{-1};  // Read by every scan.
  uint8_t kind = 0;
  uint64_t session_id = 0;
  uint8_t handle[kTokenBytes] = {};
  TenantDigest tenant_digest{};
  uint32_t tenant_shown_bytes = 0;
  char tenant_shown[kShownTenant] = {};
};

IpcRegistry::TenantDigest IpcRegistry::Digest(const std::string& tenant) {
  TenantDigest d{};
  SHA256(reinterpret_cast<const unsigned char*>(tenant.data()), tenant.size(), d.data());
  return d;
}

Status IpcRegistry::Create(std::unique_ptr<IpcRegistry>* out) {
  std::unique_ptr<IpcRegistry> r(new IpcRegistry());
  if (RAND_bytes(r->key_.data(), static_cast<int>(r->key_.size())) != 1)
    return Status(StatusCode::kInternal, "cannot draw the IPC handle key: the system's random source failed");
  r->bytes_ = sizeof(Entry) * kEntries;
  r->base_ = mmap(nullptr, r->bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (r->base_ == MAP_FAILED) {
    r->base_ = nullptr;
    return Status(StatusCode::kResourceExhausted,
                  std::string("cannot map the IPC handle registry: ") + std::strerror(errno));
  }
  r->entries_ = static_cast<Entry*>(r->base_);
  for (int i = 0; i < kEntries; ++i) new (&r->entries_[i]) Entry();
  *out = std::move(r);
  return Status::Ok();
}

IpcRegistry::~IpcRegistry() {
  if (base_ != nullptr) munmap(base_, bytes_);
  OPENSSL_cleanse(key_.data(), key_.size());
}

void IpcRegistry::Seal(const Entry& e, uint32_t index, uint32_t generation, uint8_t mac[32]) const {
  // Length-free: every field has a fixed size.
  uint8_t input[16 + 4 + 4 + 1 + 8 + kTokenBytes + 32] = {};
  uint8_t* p = input;
  std::memcpy(p, "hipr-ipc-token-1", 16);
  p += 16;
  PutU32(p, index);
  PutU32(p + 4, generation);
  p += 8;
  *p++ = e.kind;
  for (int i = 0; i < 8; ++i) *p++ = static_cast<uint8_t>(e.session_id >> (8 * i));
  std::memcpy(p, e.handle, kTokenBytes);
  p += kTokenBytes;
  std::memcpy(p, e.tenant_digest.data(), e.tenant_digest.size());
  unsigned int n = kMacBytes;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), input, sizeof input, mac, &n);
}

Status IpcRegistry::Export(int slot, uint64_t session_id, const std::string& tenant, Kind kind,
                           const DeviceHandle& handle, Token* out) {
  const TenantDigest digest = Digest(tenant);
  int held = 0;
  int index = -1;
  for (int i = 0; i < kEntries; ++i) {
    Entry& e = entries_[i];
    // Only this session writes entries of its slot, so these reads are stable.
    if (e.state.load(std::memory_order_acquire) != Entry::kLive || e.slot.load() != slot) continue;
    ++held;
    if (e.kind == static_cast<uint8_t>(kind) && std::memcmp(e.handle, handle.data(), kTokenBytes) == 0) {
      index = i;
      break;
    }
  }
  if (index < 0) {
    if (held >= kMaxPerSession)
      return Status(StatusCode::kResourceExhausted, "a session may have at most " + std::to_string(kMaxPerSession) +
                                                        " IPC handles exported at once");
    for (int i = 0; i < kEntries && index < 0; ++i) {
      uint32_t free_state = Entry::kFree;
      if (entries_[i].state.compare_exchange_strong(free_state, Entry::kWriting)) index = i;
    }
    if (index < 0)
      return Status(StatusCode::kResourceExhausted,
                    "the worker holds " + std::to_string(kEntries) + " exported IPC handles, its limit");
    Entry& e = entries_[index];
    e.generation.fetch_add(1, std::memory_order_relaxed);
    e.slot.store(slot);
    e.kind = static_cast<uint8_t>(kind);
    e.session_id = session_id;
    std::memcpy(e.handle, handle.data(), kTokenBytes);
    e.tenant_digest = digest;
    e.tenant_shown_bytes = static_cast<uint32_t>(std::min(tenant.size(), kShownTenant));
    std::memcpy(e.tenant_shown, tenant.data(), e.tenant_shown_bytes);
    e.state.store(Entry::kLive, std::memory_order_release);
  }
  const Entry& e = entries_[index];
  const uint32_t generation = e.generation.load(std::memory_order_relaxed);
  Token t{};
  std::memcpy(t.data(), kMagic, sizeof kMagic);
  t[4] = kVersion;
  t[5] = static_cast<uint8_t>(kind);
  PutU32(&t[8], static_cast<uint32_t>(index));
  PutU32(&t[12], generation);
  Seal(e, static_cast<uint32_t>(index), generation, &t[kMacAt]);
  *out = t;
  return Status::Ok();
}

Status IpcRegistry::Open(Kind kind, const Token& token, Opened* out) const {
  const std::string what = std::string("IPC ") + KindName(kind) + " handle";
  if (std::memcmp(token.data(), kMagic, sizeof kMagic) != 0 || token[4] != kVersion)
    return InvalidArgument("not an " + what + " of a hipr worker");
  if (token[5] != static_cast<uint8_t>(kind))
    return InvalidArgument("an IPC handle of another kind passed as an " + what);
  for (size_t i = kMacAt + kMacBytes; i < kTokenBytes; ++i)
    if (token[i] != 0) return InvalidArgument("the " + what + " has been altered");
  if (token[6] != 0 || token[7] != 0) return InvalidArgument("the " + what + " has been altered");
  const uint32_t index = GetU32(&token[8]);
  const uint32_t generation = GetU32(&token[12]);
  const std::string gone = "the " + what + " names no live export of this worker: its session ended, or it is "
                           "another worker's, or forged";
  if (index >= static_cast<uint32_t>(kEntries)) return InvalidArgument(gone);
  const Entry& live = entries_[index];
  if (live.state.load(std::memory_order_acquire) != Entry::kLive ||
      live.generation.load(std::memory_order_acquire) != generation)
    return InvalidArgument(gone);
  // A copy, then the same generation and state again: the entry was not
  // reused while it was read.
  Entry copy;
    copy.kind = live.kind;
  copy.session_id = live.session_id;
  std::memcpy(copy.handle, live.handle, kTokenBytes);
  copy.tenant_digest = live.tenant_digest;
  copy.tenant_shown_bytes = std::min<uint32_t>(live.tenant_shown_bytes, kShownTenant);
  std::memcpy(copy.tenant_shown, live.tenant_shown, kShownTenant);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (live.state.load(std::memory_order_acquire) != Entry::kLive ||
      live.generation.load(std::memory_order_acquire) != generation)
    return InvalidArgument(gone);
  uint8_t mac[kMacBytes];
  Seal(copy, index, generation, mac);
  if (CRYPTO_memcmp(mac, &token[kMacAt], kMacBytes) != 0)
    return InvalidArgument("the " + what + " does not verify under this worker's key: another worker's, or forged");
  std::memcpy(out->handle.data(), copy.handle, kTokenBytes);
  out->tenant.assign(copy.tenant_shown, copy.tenant_shown_bytes);
  out->tenant_digest = copy.tenant_digest;
  out->session_id = copy.session_id;
  return Status::Ok();
}

void IpcRegistry::CloseSlot(int slot) {
  for (int i = 0; i < kEntries; ++i) {
    Entry& e = entries_[i];
    uint32_t live = Entry::kLive;
    if (e.slot.load() != slot || !e.state.compare_exchange_strong(live, Entry::kWriting)) continue;
    e.generation.fetch_add(1, std::memory_order_relaxed);
    e.slot.store(-1);
    std::memset(e.handle, 0, kTokenBytes);
    e.state.store(Entry::kFree, std::memory_order_release);
  }
}

int IpcRegistry::Held(int slot) const {
  int n = 0;
  for (int i = 0; i < kEntries; ++i)
    if (entries_[i].state.load(std::memory_order_acquire) == Entry::kLive && entries_[i].slot.load() == slot) ++n;
  return n;
}

}  // namespace hipr::worker
