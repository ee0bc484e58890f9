// What the generated entry points (shim_gen/gen_remoting.py ->
// build/client_stub/gen/api_entries.cc) call: one kApiCall frame per call,
// as a round trip or fire-and-forget. The generated code checks pointers and
// device ordinals before it gets here and writes outputs only when these
// return hipSuccess.
#pragma once

#include <cstdint>
#include <cstring>

#include "client_stub/api/api_common.h"
#include "client_stub/session/remote.h"
#include "protocol/messages.h"

namespace hipr::client {

// Round trip: sends function `fn`'s inputs, waits, and on success moves the
// outputs into *out. A dead session is hipErrorNoDevice (ToHipError); the
// worker's own error is returned as it sent it.
template <class In, class Out>
hipError_t CallGenerated(Remote& s, uint32_t fn, int device, const In& in, Out* out) {
  msg::ApiCallReply<Out> reply;
  Status st = s.Call<wire::Op::kApiCall>(msg::ApiCallRequest<In>{fn, device, true, in}, &reply);
  if (!st.ok()) return ToHipError(st);
  if (reply.error != 0) return static_cast<hipError_t>(reply.error);
  *out = std::move(reply.out);
  return hipSuccess;
}

// Fire-and-forget: queued in the send batch; the worker's error surfaces at
// the next synchronizing call.
template <class In>
hipError_t PostGenerated(Remote& s, uint32_t fn, int device, const In& in) {
  Status st = s.Post<wire::Op::kApiCall>(msg::ApiCallRequest<In>{fn, device, false, in});
  return st.ok() ? hipSuccess : ToHipError(st);
}

// An integer of `width` (4 or 8) bytes behind a void* parameter (`:as=` in
// annotations.txt), zero-extended to the 64 bits it travels in.
inline uint64_t ReadWidth(const void* p, int width) {
  if (width == 4) {
    uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void WriteWidth(void* p, int width, uint64_t value) {
  if (width == 4) {
    auto v = static_cast<uint32_t>(value);
    std::memcpy(p, &v, sizeof v);
  } else {
    std::memcpy(p, &value, sizeof value);
  }
}

}  // namespace hipr::client
