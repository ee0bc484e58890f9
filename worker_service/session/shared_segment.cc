#include "worker_service/session/shared_segment.h"

#include <iterator>
#include <string>

namespace hipr::worker {
namespace {

std::string Range(uint64_t offset, uint64_t bytes) {
  return "[" + std::to_string(offset) + ", +" + std::to_string(bytes) + ")";
}

}  // namespace

Status SharedSegment::CheckNew(uint64_t offset, uint64_t bytes, uint8_t** at) const {
  if (segment_.base == nullptr || segment_.bytes == 0)
    return InvalidArgument("this connection has no shared host segment to register");
  if (bytes == 0 || offset % kPage != 0 || bytes % kPage != 0)
    return InvalidArgument("host range " + Range(offset, bytes) + " is not whole pages");
  if (offset > segment_.bytes || bytes > segment_.bytes - offset)
    return InvalidArgument("host range " + Range(offset, bytes) + " lies outside the " +
                           std::to_string(segment_.bytes) + "-byte shared host segment");
  auto next = ranges_.lower_bound(offset);
  if (next != ranges_.end() && next->first < offset + bytes)
    return InvalidArgument("host range " + Range(offset, bytes) + " overlaps registered " +
                           Range(next->first, next->second));
  if (next != ranges_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second > offset)
      return InvalidArgument("host range " + Range(offset, bytes) + " overlaps registered " +
                             Range(prev->first, prev->second));
  }
  *at = segment_.base + offset;
  return Status::Ok();
}

Status SharedSegment::Remove(uint64_t offset, uint64_t bytes, uint8_t** at) {
  auto it = ranges_.find(offset);
  if (it == ranges_.end() || it->second != bytes)
    return InvalidArgument("host range " + Range(offset, bytes) + " is not registered");
  ranges_.erase(it);
  *at = segment_.base + offset;
  return Status::Ok();
}

Status SharedSegment::Rows(const msg::SharedHost& host, const msg::Region& device, HostRows* out) const {
  *out = HostRows();
  if (segment_.base == nullptr || segment_.bytes == 0)
    return InvalidArgument("the copy names the shared host segment, which this connection does not have");
  const uint64_t width = device.width;
  const uint64_t height = device.height;
  if (width == 0 || height == 0) return Status::Ok();
  const uint64_t pitch = height == 1 ? width : host.pitch;
  if (pitch < width) return InvalidArgument("host rows of the shared segment overlap (pitch below width)");
  // One past the last row's end: offset + (height - 1) * pitch + width, without overflow.
  uint64_t end = 0;
  if (__builtin_mul_overflow(height - 1, pitch, &end) || __builtin_add_overflow(end, width, &end) ||
      __builtin_add_overflow(end, host.offset, &end) || end > segment_.bytes)
    return InvalidArgument("host rows at offset " + std::to_string(host.offset) + " lie outside the " +
                           std::to_string(segment_.bytes) + "-byte shared host segment");
  auto it = ranges_.upper_bound(host.offset);
  if (it == ranges_.begin() || std::prev(it)->first + std::prev(it)->second < end)
    return InvalidArgument("host rows " + Range(host.offset, end - host.offset) +
                           " are not inside one registered range of the shared host segment");
  out->base = segment_.base + host.offset;
  out->pitch = pitch;
  return Status::Ok();
}

}  // namespace hipr::worker
