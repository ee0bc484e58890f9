// kApiCall: the generated calls (shim_gen/annotations.txt). The head names
// the function; the generated dispatcher checks its argument list before the
// device sees anything.
#include <spdlog/spdlog.h>

#include "protocol/codec.h"
#include "worker_service/session/hip_error.h"
#include "worker_service/session/session.h"

namespace hipr::worker {

Status Session::ServeApiCall(const wire::FrameHeader& h) {
  msgpack::object_handle oh;
  HIPR_RETURN_IF_ERROR(codec::ParseBody(body_.data(), body_.size(), &oh));
  const msgpack::object& body = oh.get();
  if (body.type != msgpack::type::ARRAY || body.via.array.size != msg::kApiCallFields)
    return ProtocolError("kApiCall: expected [fn, device, want_reply, args]");
  msg::ApiCallHead head;
  HIPR_RETURN_IF_ERROR(codec::Unpack(body, &head));
  ApiContext ctx{head.device, static_cast<int>(device_->devices().size())};
  Status call;
  if (head.device < 0 || head.device >= ctx.device_count) {
    call = Status(StatusCode::kInvalidDevice, "current device " + std::to_string(head.device) + " out of range");
    writer_.Encode(msg::CallReply{ToHipError(call)});
  } else {
    HIPR_RETURN_IF_ERROR(DispatchApiCall(device_->api(), head.fn, ctx, body.via.array.ptr[3], &writer_, &call));
  }
  if (!head.want_reply) {
    Defer(h, call);
    return Status::Ok();
  }
  if (!call.ok()) spdlog::debug("session {}: generated call {:#x}: {}", id_, head.fn, call.ToString());
  MutexLock lock(send_mu_);
  return SendReplyLocked(h);
}

}  // namespace hipr::worker
