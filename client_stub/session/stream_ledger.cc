#include "client_stub/session/stream_ledger.h"

#include <algorithm>
#include <new>
#include <vector>

namespace hipr::client {
namespace {

struct Pending {
  int device = 0;
  uint64_t stream = 0;
  bool visible = true;
};

// The calling thread's notes, and how deep it is in API calls.
struct Notes {
  int depth = 0;
  std::vector<Pending> pending;
};
constinit thread_local Notes t_notes;

}  // namespace

void StreamLedger::Note(int device, uint64_t stream) { t_notes.pending.push_back(Pending{device, stream, true}); }

void StreamLedger::Invisible() {
  if (!t_notes.pending.empty()) t_notes.pending.back().visible = false;
}

void StreamLedger::Enter() { ++t_notes.depth; }

bool StreamLedger::Leave() { return --t_notes.depth == 0 && !t_notes.pending.empty(); }

void StreamLedger::Commit() {
  std::vector<Pending>& pending = t_notes.pending;
  if (pending.empty()) return;
  MutexLock lock(mu_);
  for (const Pending& p : pending) {
    if (!p.visible) continue;
    Entry& e = streams_[KeyOf(p.device, p.stream)];
    e.device = p.device;
    e.last_visible = ++sequence_;
  }
  pending.clear();
}

uint64_t StreamLedger::Ticket() {
  Commit();
  MutexLock lock(mu_);
  return sequence_;
}

void StreamLedger::Completed(int device, uint64_t stream, uint64_t ticket) {
  MutexLock lock(mu_);
  if (stream == kWholeDevice) {
    uint64_t& done = device_done_[device];
    done = std::max(done, ticket);
    return;
  }
  Entry& e = streams_[KeyOf(device, stream)];
  e.device = device;
  e.done = std::max(e.done, ticket);
}

bool StreamLedger::CleanLocked(const Entry& e) const {
  uint64_t covered = e.done;
  if (auto it = device_done_.find(e.device); it != device_done_.end()) covered = std::max(covered, it->second);
  return e.last_visible <= covered;
}

bool StreamLedger::Clean() {
  MutexLock lock(mu_);
  for (const auto& [key, e] : streams_)
    if (!CleanLocked(e)) return false;
  return true;
}

void StreamLedger::Forget(int device) {
  MutexLock lock(mu_);
  std::erase_if(streams_, [&](const auto& kv) { return device < 0 || kv.second.device == device; });
  if (device < 0) {
    device_done_.clear();
  } else {
    device_done_.erase(device);
  }
}

void StreamLedger::ResetInChild() {
  new (&mu_) Mutex();
  sequence_ = 0;
  streams_.clear();
  device_done_.clear();
}

}  // namespace hipr::client
