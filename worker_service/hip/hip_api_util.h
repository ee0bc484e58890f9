// Helpers of the generated hip device calls (build/worker_service/gen/hip_api.cc).
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "protocol/status.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "generated hip calls pass 4- and 8-byte void* values through one uint64_t");

namespace hipr::worker {

// A runtime error as a Status carrying the runtime's own number.
inline Status HipStatus(hipError_t err, const char* what) {
  if (err == hipSuccess) return Status::Ok();
  return Status(StatusCode::kInternal, std::string(what) + ": " + hipGetErrorName(err), static_cast<int>(err));
}

// A generated function the HIP headers this module was built against do not
// declare (a 6.x/7.x addition built against 5.x).
inline Status NotInThisRuntime(const char* name) {
  return Status(StatusCode::kNotSupported, std::string(name) + " is not in the HIP runtime this worker was built against");
}

// Runtime handles (hipMemPool_t, ...) the session handed to its client, as
// ids: the client never sees, and cannot forge, a real pointer. Ids are per
// handle type; 0 is the null handle. Replay thread only.
class HandleIds {
 public:
  // The id of `handle` (the same id every time it is exported).
  uint64_t Export(const std::string& type, void* handle) {
    if (handle == nullptr) return 0;
    auto [it, added] = ids_.try_emplace({type, handle}, next_);
    if (added) handles_[{type, next_++}] = handle;
    return it->second;
  }
  // After the runtime destroyed the handle of `id` (a `:destroy` argument):
  // the id is refused from now on, and a new handle at the same address
  // gets a new id.
  void Forget(const std::string& type, uint64_t id) {
    auto it = handles_.find({type, id});
    if (it == handles_.end()) return;
    ids_.erase({type, it->second});
    handles_.erase(it);
  }
  // The handle of `id`: kInvalidArgument (hipErrorInvalidValue) for an id
  // this session never exported as `type`.
  template <class T>
  Status Find(const std::string& type, uint64_t id, T* out) const {
    if (id == 0) {
      *out = nullptr;
      return Status::Ok();
    }
    auto it = handles_.find({type, id});
    if (it == handles_.end()) return Status(StatusCode::kInvalidArgument, "unknown " + type + " " + std::to_string(id));
    *out = static_cast<T>(it->second);
    return Status::Ok();
  }

 private:
  std::map<std::pair<std::string, void*>, uint64_t> ids_;
  std::map<std::pair<std::string, uint64_t>, void*> handles_;
  uint64_t next_ = 1;
};

}  // namespace hipr::worker
