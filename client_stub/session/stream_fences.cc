#include "client_stub/session/stream_fences.h"

#include <hip/hip_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <vector>

#include "client_stub/base/log.h"
#include "protocol/messages.h"
#include "protocol/wire.h"

namespace hipr::client {

Status StreamFences::Raise(Remote& s, int device, uint64_t stream) {
  MutexLock lock(mu_);
  Fence& f = fences_[device];
  if (f.event == 0) {
    // A fresh id each time: a device reset need not destroy the old event
    // on every worker device (the hip device keeps the runtime's events).
    const uint64_t id = kEventIdBase + next_event_++;
    HIPR_RETURN_IF_ERROR(s.Post<wire::Op::kEventCreate>(msg::EventCreateRequest{device, id, hipEventDisableTiming}));
    f.event = id;
  }
  if (f.in_force) HIPR_RETURN_IF_ERROR(WaitLocked(s, device, f, stream));
  HIPR_RETURN_IF_ERROR(s.Post<wire::Op::kEventRecord>(device, msg::EventRecordRequest{f.event, stream}));
  f.stream = stream;
  ++f.generation;
  f.waited.clear();
  if (!f.in_force) {
    f.in_force = true;
    active_.fetch_add(1, std::memory_order_acq_rel);
  }
  HIPR_LOG_DEBUG("stream fence %llu raised on device %d, stream %llu",
                 static_cast<unsigned long long>(f.generation), device, static_cast<unsigned long long>(stream));
  return Status::Ok();
}

Status StreamFences::OrderSlow(Remote& s, int device, uint64_t stream) {
  std::vector<int> elsewhere;
  {
    MutexLock lock(mu_);
    for (auto& [d, f] : fences_) {
      if (!f.in_force) continue;
      if (d == device) {
        HIPR_RETURN_IF_ERROR(WaitLocked(s, device, f, stream));
      } else {
        elsewhere.push_back(d);
      }
    }
  }
  // Work on another device may touch the fenced memory too (a peer copy,
  // peer access), but a wait cannot name another device's null stream on
  // the wire: the client waits until the fence is reached instead, which
  // ends it. Only programs that switch devices right after such a call pay.
  for (int d : elsewhere) {
    Status st = Drain(s, d);
    if (!st.ok() && s.SessionOf(d).dead() && !s.SessionOf(device).dead()) {
      // That device's worker is lost (HIPR_SERVER lists several): its
      // fence orders nothing any more.
      Forget(d);
      continue;
    }
    HIPR_RETURN_IF_ERROR(st);
  }
  return Status::Ok();
}

Status StreamFences::WaitLocked(Remote& s, int device, Fence& f, uint64_t stream) {
  if (stream == f.stream || f.waited.contains(stream)) return Status::Ok();
  HIPR_RETURN_IF_ERROR(s.Post<wire::Op::kStreamWaitEvent>(msg::StreamWaitEventRequest{stream, f.event, 0, device}));
  f.waited.insert(stream);
  return Status::Ok();
}

Status StreamFences::Drain(Remote& s, int device) {
  uint64_t event = 0;
  uint64_t generation = 0;
  {
    MutexLock lock(mu_);
    auto it = fences_.find(device);
    if (it == fences_.end() || !it->second.in_force) return Status::Ok();
    event = it->second.event;
    generation = it->second.generation;
  }
  // A query, not a synchronize: it reports no deferred error of the
  // stream's, which stays for the program's next synchronizing call.
  for (useconds_t pause = 50;; pause = std::min<useconds_t>(pause * 2, 2000)) {
    msg::CallReply reply;
    HIPR_RETURN_IF_ERROR(s.Call<wire::Op::kEventQuery>(device, msg::EventRequest{event}, &reply));
    if (reply.error != hipErrorNotReady) break;
    usleep(pause);
  }
  MutexLock lock(mu_);
  auto it = fences_.find(device);
  if (it != fences_.end() && it->second.in_force && it->second.generation == generation) EndLocked(it->second);
  return Status::Ok();
}

uint64_t StreamFences::Ticket(int device) {
  if (active_.load(std::memory_order_acquire) == 0) return 0;
  MutexLock lock(mu_);
  auto it = fences_.find(device);
  return it == fences_.end() ? 0 : it->second.generation;
}

void StreamFences::Settled(int device, uint64_t stream, uint64_t ticket) {
  if (ticket == 0) return;
  MutexLock lock(mu_);
  auto it = fences_.find(device);
  if (it == fences_.end()) return;
  Fence& f = it->second;
  if (f.in_force && f.generation == ticket && (stream == kWholeDevice || stream == f.stream)) EndLocked(f);
}

void StreamFences::EndLocked(Fence& f) {
  f.in_force = false;
  f.waited.clear();
  active_.fetch_sub(1, std::memory_order_acq_rel);
}

void StreamFences::Forget(int device) {
  MutexLock lock(mu_);
  for (auto it = fences_.begin(); it != fences_.end();) {
    if (device >= 0 && it->first != device) {
      ++it;
      continue;
    }
    if (it->second.in_force) EndLocked(it->second);
    it = fences_.erase(it);
  }
}

bool StreamFences::InForce(int device) {
  MutexLock lock(mu_);
  auto it = fences_.find(device);
  return it != fences_.end() && it->second.in_force;
}

void StreamFences::ResetInChild() {
  new (&mu_) Mutex();
  fences_.clear();
  active_.store(0, std::memory_order_relaxed);
}

}  // namespace hipr::client
