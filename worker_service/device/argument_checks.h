// The argument checks every device makes before it acts on a request, in
// one place, so that the sim and a GPU refuse the same requests with the
// same words (launches: launch_checks.h; textures: texture_desc.h). The
// client checks what it can first; the worker checks again because a
// client is not trusted, and a real runtime must never see what HIP would
// refuse (a memset whose width is not whole elements would be truncated by
// hipMemsetD16Async, not refused). The conformance suite checks that every
// device answers these with the same status and message.
// Header-only: both device libraries include it.
#pragma once

#include <cstdint>
#include <string>

#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::worker {

// A new stream's or event's id: never 0 (the null stream, no event), and
// not one the session holds already (`in_use`).
inline Status CheckNewId(const char* what, uint64_t id, bool in_use) {
  if (id == 0) return InvalidArgument(std::string(what) + " id 0 is reserved");
  if (in_use) return InvalidArgument(std::string(what) + " id " + std::to_string(id) + " is in use");
  return Status::Ok();
}

// hipStreamCreateWithFlags' flags: hipStreamDefault (0) or
// hipStreamNonBlocking (1).
inline Status CheckStreamFlags(uint32_t flags) {
  constexpr uint32_t kStreamNonBlocking = 0x1;
  if ((flags & ~kStreamNonBlocking) != 0) return InvalidArgument("unknown stream flags " + std::to_string(flags));
  return Status::Ok();
}

// A stream memory operation's value (hipStreamWaitValue32/64,
// hipStreamWriteValue32/64): 4 or 8 bytes at an address aligned to them.
inline Status CheckStreamValue(uint64_t address, uint8_t bytes) {
  if (bytes != 4 && bytes != 8) return InvalidArgument("a stream value is 4 or 8 bytes");
  if (address % bytes != 0) return InvalidArgument("a stream value must be aligned to its size");
  return Status::Ok();
}

// hipStreamWaitValue's condition: hipStreamWaitValueGte (0), Eq (1),
// And (2) or Nor (3).
inline Status CheckWaitCondition(uint32_t flags) {
  if (flags > 3) return InvalidArgument("unknown stream wait condition " + std::to_string(flags));
  return Status::Ok();
}

// A memset fills elements of 1, 2 or 4 bytes, and each row is whole
// elements.
inline Status CheckMemset(const msg::Region& dst, uint8_t element_size) {
  if (element_size != 1 && element_size != 2 && element_size != 4)
    return InvalidArgument("memset element size must be 1, 2 or 4");
  if (dst.width % element_size != 0) return InvalidArgument("memset width is not a whole number of elements");
  return Status::Ok();
}

// A device-to-device copy moves rows of one shape.
inline Status CheckCopyShapes(const msg::Region& dst, const msg::Region& src) {
  if (dst.width != src.width || dst.height != src.height) return InvalidArgument("copy regions differ in shape");
  return Status::Ok();
}

// A texture object the session does not hold.
inline Status UnknownTexture() { return InvalidArgument("not a texture object of this session"); }

}  // namespace hipr::worker
