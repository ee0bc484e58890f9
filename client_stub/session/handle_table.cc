#include "client_stub/session/handle_table.h"

#include <mutex>

namespace hipr::client {
namespace {

template <class Map, class Record>
bool Find(const Map& m, const void* handle, Record* out) {
  if (handle == nullptr) return false;
  auto it = m.find(handle);
  if (it == m.end()) return false;
  *out = *it->second;
  return true;
}

template <class Map, class Record>
bool Remove(Map& m, const void* handle, Record* out) {
  if (handle == nullptr) return false;
  auto it = m.find(handle);
  if (it == m.end()) return false;
  *out = *it->second;
  m.erase(it);  // The record itself stays allocated (see the header).
  return true;
}

template <class Map>
void RemoveOf(Map& m, int device) {
  for (auto it = m.begin(); it != m.end();) {
    if (device < 0 || it->second->device == device)
      it = m.erase(it);
    else
      ++it;
  }
}

}  // namespace

uint64_t HandleTable::NextId() { return next_id_++; }

hipStream_t HandleTable::NewStream(int device, unsigned flags, int priority, StreamRecord* out) {
  WriterLock lock(mu_);
  auto* record = new StreamRecord{NextId(), device, flags, priority};
  streams_.emplace(record, record);
  if ((flags & hipStreamNonBlocking) != 0) nonblocking_devices_.insert(device);
  *out = *record;
  return reinterpret_cast<hipStream_t>(record);
}

hipEvent_t HandleTable::NewEvent(int device, unsigned flags, EventRecord* out) {
  WriterLock lock(mu_);
  auto* record = new EventRecord{NextId(), device, flags, 0, 0};
  events_.emplace(record, record);
  *out = *record;
  return reinterpret_cast<hipEvent_t>(record);
}

bool HandleTable::EverNonBlockingStream(int device) const {
  ReaderLock lock(mu_);
  return nonblocking_devices_.count(device) != 0;
}

bool HandleTable::FindStream(hipStream_t stream, StreamRecord* out) const {
  ReaderLock lock(mu_);
  return Find(streams_, stream, out);
}

bool HandleTable::FindEvent(hipEvent_t event, EventRecord* out) const {
  ReaderLock lock(mu_);
  return Find(events_, event, out);
}

uint64_t HandleTable::NoteEventRecorded(hipEvent_t event) {
  WriterLock lock(mu_);
  auto it = events_.find(event);
  return it == events_.end() ? 0 : ++it->second->recorded;
}

void HandleTable::NoteEventDone(hipEvent_t event, uint64_t recorded) {
  WriterLock lock(mu_);
  auto it = events_.find(event);
  if (it != events_.end() && recorded > it->second->known_done) it->second->known_done = recorded;
}

bool HandleTable::RemoveStream(hipStream_t stream, StreamRecord* out) {
  WriterLock lock(mu_);
  if (!Remove(streams_, stream, out)) return false;
  destroyed_since_sync_.insert(out->device);
  return true;
}

std::vector<uint64_t> HandleTable::StreamIdsOf(int device) const {
  ReaderLock lock(mu_);
  std::vector<uint64_t> ids;
  for (const auto& [handle, record] : streams_)
    if (record->device == device) ids.push_back(record->id);
  return ids;
}

bool HandleTable::StreamDestroyedSinceSync(int device) const {
  ReaderLock lock(mu_);
  return destroyed_since_sync_.count(device) != 0;
}

void HandleTable::SettledDevice(int device) {
  WriterLock lock(mu_);
  destroyed_since_sync_.erase(device);
}

bool HandleTable::RemoveEvent(hipEvent_t event, EventRecord* out) {
  WriterLock lock(mu_);
  return Remove(events_, event, out);
}

void HandleTable::RemoveAllOf(int device) {
  WriterLock lock(mu_);
  RemoveOf(streams_, device);
  RemoveOf(events_, device);
}

}  // namespace hipr::client
