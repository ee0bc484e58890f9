// Every message type of protocol/messages.h, by index: the wire fuzz target
// (wire_fuzz.cc) decodes its input as the type its first byte names, and the
// seed generator (wire_seeds.cc) writes a valid body of each. A new message
// in messages.h belongs here too (protocol/README.md).
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>

#include "protocol/messages.h"

namespace hipr::fuzz {

using AllMessages = std::tuple<
    msg::AddressWindow, msg::HelloRequest, msg::AuthRequest, msg::NamedValue, msg::DeviceInfo, msg::HelloReply,
    msg::ShmSetup, msg::Fatal, msg::CallReply, msg::ApiCallHead,
    // The generated calls' argument and output types are the worker's
    // (session_fuzz.cc reaches them); any message stands in for them here.
    msg::ApiCallRequest<msg::Region>, msg::ApiCallReply<msg::MemInfoReply>, msg::DeviceRequest, msg::MemInfoReply,
    msg::MallocRequest, msg::MallocReply, msg::FreeRequest, msg::HostRangeRequest, msg::IpcGetMemHandleRequest,
    msg::IpcGetMemHandleReply, msg::IpcOpenMemHandleRequest, msg::IpcOpenMemHandleReply, msg::IpcCloseMemHandleRequest,
    msg::VmmReserveRequest, msg::VmmReserveReply, msg::VmmRangeRequest, msg::VmmCreateRequest, msg::VmmHandleRequest,
    msg::VmmImportRequest, msg::VmmImportReply, msg::VmmMapRequest, msg::VmmAccess, msg::VmmSetAccessRequest,
    msg::IpcOpenEventHandleRequest, msg::Region, msg::TextureCreateRequest, msg::TextureCreateReply,
    msg::TextureDestroyRequest, msg::MemsetRequest, msg::SharedHost, msg::CopyToDeviceRequest,
    msg::CopyFromDeviceRequest, msg::CopyOnDeviceRequest, msg::StreamCreateRequest, msg::StreamRequest,
    msg::StreamWaitEventRequest, msg::StreamWaitValueRequest, msg::StreamWriteValueRequest, msg::EventCreateRequest,
    msg::EventRequest, msg::EventRecordRequest, msg::EventElapsedRequest, msg::EventElapsedReply,
    msg::ModuleLoadRequest, msg::ModuleGlobal, msg::ModuleLoadReply, msg::ModuleUnloadRequest, msg::LaunchRequest,
    msg::StreamHostCallbackRequest, msg::HostCallbackReady, msg::HostCallbackDone, msg::GraphNode,
    msg::GraphCreateRequest, msg::GraphLaunchRequest, msg::GraphRequest, msg::Output>;

inline constexpr size_t kMessageCount = std::tuple_size_v<AllMessages>;

// Calls f(T{}) for the message type at `index` (< kMessageCount).
template <class F>
void WithMessage(size_t index, F&& f) {
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((I == index ? (f(std::tuple_element_t<I, AllMessages>{}), 0) : 0), ...);
  }
  (std::make_index_sequence<kMessageCount>{});
}

}  // namespace hipr::fuzz
