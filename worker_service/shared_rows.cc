#include "worker_service/shared_rows.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace hipr::worker {

Status SharedRows::Make(Connection::SharedRegion segment, const msg::SharedHost& host, const msg::Region& device,
                        SharedRows* out) {
  *out = SharedRows();
  if (!host.used) return Status::Ok();
  if (segment.base == nullptr || segment.bytes == 0)
    return InvalidArgument("the copy names the shared host segment, which this connection does not have");
  const uint64_t width = device.width;
  const uint64_t height = device.height;
  if (width == 0 || height == 0) return Status::Ok();
  const uint64_t pitch = height == 1 ? width : host.pitch;
  if (pitch < width) return InvalidArgument("host rows of the shared segment overlap (pitch below width)");
  // End of the last row: offset + (height - 1) * pitch + width, without overflow.
  uint64_t span = 0;
  if (__builtin_mul_overflow(height - 1, pitch, &span) || __builtin_add_overflow(span, width, &span) ||
      host.offset > segment.bytes || span > segment.bytes - host.offset)
    return InvalidArgument("host rows at offset " + std::to_string(host.offset) + " lie outside the " +
                           std::to_string(segment.bytes) + "-byte shared host segment");
  out->base_ = segment.base + host.offset;
  out->pitch_ = pitch;
  out->width_ = width;
  out->height_ = height;
  return Status::Ok();
}

template <bool kOut>
Status SharedRows::Walk(const iovec* iov, int count) {
  for (int i = 0; i < count; ++i) {
    auto* p = static_cast<uint8_t*>(iov[i].iov_base);
    uint64_t left = iov[i].iov_len;
    while (left > 0) {
      if (row_ >= height_) return Status(StatusCode::kInternal, "the device moved more bytes than the copy has");
      uint8_t* at = base_ + row_ * pitch_ + col_;
      const uint64_t n = std::min(left, width_ - col_);
      if (kOut)
        std::memcpy(p, at, n);
      else
        std::memcpy(at, p, n);
      p += n;
      left -= n;
      col_ += n;
      if (col_ == width_) {
        col_ = 0;
        ++row_;
      }
    }
  }
  return Status::Ok();
}

Status SharedRows::CopyOut(const iovec* iov, int count) { return Walk<true>(iov, count); }
Status SharedRows::CopyIn(const iovec* iov, int count) { return Walk<false>(iov, count); }

}  // namespace hipr::worker
