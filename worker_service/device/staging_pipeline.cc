#include "worker_service/device/staging_pipeline.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace hipr::worker {
namespace {

// A piece on its way between the two halves.
struct Staged {
  uint8_t* buffer = nullptr;
  uint64_t offset = 0;
  size_t len = 0;
  Status status;
};

// A single-producer, single-consumer queue of pieces.
class Queue {
 public:
  void Push(Staged p) {
    {
      MutexLock lock(mu_);
      items_.push_back(std::move(p));
    }
    cv_.notify_one();
  }
  Staged Pop() {
    MutexLock lock(mu_);
    while (items_.empty()) cv_.wait(lock.native());
    Staged p = std::move(items_.front());
    items_.pop_front();
    return p;
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  std::deque<Staged> items_ HIPR_GUARDED_BY(mu_);
};

}  // namespace

StagingPipeline::StagingPipeline(std::vector<uint8_t*> buffers, size_t piece_bytes)
    : piece_bytes_(piece_bytes), buffer_count_(buffers.size()), all_(buffers), free_(std::move(buffers)) {
  std::sort(all_.begin(), all_.end());
}

bool StagingPipeline::Owns(const void* p, size_t n) const {
  const auto* at = static_cast<const uint8_t*>(p);
  auto it = std::upper_bound(all_.begin(), all_.end(), at, std::less<const uint8_t*>());
  if (it == all_.begin()) return false;
  const uint8_t* base = *std::prev(it);
  return n <= piece_bytes_ && static_cast<size_t>(at - base) <= piece_bytes_ - n;
}

uint8_t* StagingPipeline::Acquire() {
  MutexLock lock(mu_);
  while (free_.empty()) cv_.wait(lock.native());
  uint8_t* b = free_.back();
  free_.pop_back();
  return b;
}

void StagingPipeline::Release(uint8_t* buffer) {
  {
    MutexLock lock(mu_);
    free_.push_back(buffer);
  }
  cv_.notify_one();
}

Status StagingPipeline::In(uint64_t total, const Io& fill, const Piece& put) {
  if (total == 0) return Status::Ok();
  Queue full;  // Filled pieces for the device half; a null buffer ends it.
  Mutex error_mu;
  Status device_error;
  std::thread device([&] {
    for (;;) {
      Staged p = full.Pop();
      if (p.buffer == nullptr) return;
      bool failed;
      {
        MutexLock lock(error_mu);
        failed = !device_error.ok();
      }
      if (!failed) {
        Status st = put(p.buffer, p.offset, p.len);
        if (!st.ok()) {
          MutexLock lock(error_mu);
          device_error = st;
        }
      }
      Release(p.buffer);
    }
  });
  Status net;
  for (uint64_t offset = 0; offset < total && net.ok(); offset += piece_bytes_) {
    {
      MutexLock lock(error_mu);
      if (!device_error.ok()) break;  // Stop reading: the caller discards the rest.
    }
    const size_t len = static_cast<size_t>(std::min<uint64_t>(piece_bytes_, total - offset));
    uint8_t* buffer = Acquire();
    iovec iov{buffer, len};
    net = fill(&iov, 1);
    if (!net.ok()) {
      Release(buffer);
      break;
    }
    full.Push({buffer, offset, len, Status::Ok()});
  }
  full.Push({});
  device.join();
  return net.ok() ? device_error : net;
}

Status StagingPipeline::Out(uint64_t total, const Piece& get, const Io& send) {
  if (total == 0) return Status::Ok();
  Queue full;  // Pieces read from the device, in order; a null buffer ends it.
  std::atomic<bool> stop{false};
  std::thread device([&] {
    for (uint64_t offset = 0; offset < total && !stop.load(); offset += piece_bytes_) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(piece_bytes_, total - offset));
      uint8_t* buffer = Acquire();
      Status st = get(buffer, offset, len);
      full.Push({buffer, offset, len, st});
      if (!st.ok()) break;
    }
    full.Push({});
  });
  Status result;
  for (uint64_t offset = 0; offset < total; offset += piece_bytes_) {
    Staged p = full.Pop();
    if (result.ok()) result = p.status;
    if (result.ok()) {
      iovec iov{p.buffer, p.len};
      result = send(&iov, 1);
    }
    Release(p.buffer);
    if (!result.ok()) {
      stop = true;
      break;
    }
  }
  // Give back what the device half queued (after a failure it may be
  // waiting in Acquire for one of these) until it says it is done.
  for (Staged p = full.Pop(); p.buffer != nullptr; p = full.Pop()) Release(p.buffer);
  device.join();
  return result;
}

Status ForPackedRange(const msg::Region& region, uint64_t offset, uint64_t len,
                      const std::function<Status(uint64_t address, uint64_t packed, uint64_t n)>& fn) {
  if (region.width == 0) return Status::Ok();
  uint64_t row = offset / region.width;
  uint64_t in_row = offset % region.width;
  uint64_t done = 0;
  while (done < len && row < region.height) {
    const uint64_t n = std::min<uint64_t>(region.width - in_row, len - done);
    HIPR_RETURN_IF_ERROR(fn(region.address + row * region.pitch + in_row, offset + done, n));
    done += n;
    ++row;
    in_row = 0;
  }
  return done == len ? Status::Ok() : InvalidArgument("packed range past the region's end");
}

}  // namespace hipr::worker
