// Checks the generated dispatcher (build/worker_service/gen/api_dispatch.cc)
// runs on a kApiCall's arguments before any device code sees them. The
// arguments come from the network: hostile until these pass.
#pragma once

#include <cstdint>
#include <string>

#include <msgpack/object.hpp>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/status.h"
#include "worker_service/session/hip_error.h"

namespace hipr::worker {

// Decodes `args` into *in: exactly `count` elements (no more: a generated
// argument list has no optional trailing fields), each of its field's type
// and range (codec.h). Anything else is a protocol error naming `name`.
template <class In>
Status DecodeArgs(const msgpack::object& args, size_t count, In* in, const char* name) {
  if (args.type != msgpack::type::ARRAY || args.via.array.size != count)
    return ProtocolError(std::string(name) + ": expected an array of " + std::to_string(count) + " arguments");
  Status st = codec::Unpack(args, in);
  if (!st.ok()) return ProtocolError(std::string(name) + ": bad argument: " + st.message());
  return Status::Ok();
}

// A void* argument of `width` bytes (4 or 8) must fit in that width.
inline Status CheckWidth(uint64_t value, int width, const char* name, const char* param) {
  if (width == 4 && value > 0xffffffffu)
    return ProtocolError(std::string(name) + ": argument '" + param + "' does not fit in 4 bytes");
  return Status::Ok();
}

// A device ordinal argument: a call error (hipErrorInvalidDevice), not a
// protocol error, as the runtime answers it.
inline bool ValidDevice(int device_count, int32_t device, Status* call) {
  if (device >= 0 && device < device_count) return true;
  *call = Status(StatusCode::kInvalidDevice, "device " + std::to_string(device) + " out of range");
  return false;
}

// The reply body: [0, outputs] when `call` is ok, else [error].
template <class Out>
void EncodeReply(const Status& call, const Out& out, codec::BodyWriter* reply) {
  if (call.ok())
    reply->Encode(msg::ApiCallReply<Out>{0, out});
  else
    reply->Encode(msg::CallReply{ToHipError(call)});
}

}  // namespace hipr::worker
