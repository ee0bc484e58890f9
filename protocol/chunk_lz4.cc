#include "protocol/chunk_lz4.h"

#include <lz4.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace hipr {
namespace {

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Copies `len` bytes at offset `at` of the bytes slices[0..count) describe.
void CopyOut(const iovec* slices, int count, size_t at, size_t len, uint8_t* out) {
  for (int i = 0; i < count && len > 0; ++i) {
    const size_t n = slices[i].iov_len;
    if (at >= n) {
      at -= n;
      continue;
    }
    const size_t take = std::min(n - at, len);
    std::memcpy(out, static_cast<const uint8_t*>(slices[i].iov_base) + at, take);
    out += take;
    len -= take;
    at = 0;
  }
}

void PutU32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint32_t GetU32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}

}  // namespace

bool LinkGuard::WantCompression() {
  switch (mode_) {
    case Mode::kCompress:
      return true;
    case Mode::kProbe:
      return false;
    case Mode::kRaw:
      if (hold_ > 0) {
        --hold_;
        return false;
      }
      mode_ = Mode::kCompress;  // One chunk to time lz4 again.
      return true;
  }
  return true;
}

void LinkGuard::Decide() {
  if (lz4_rate_ * kMargin < raw_rate_) {
    mode_ = Mode::kRaw;
    hold_ = next_hold_;
    next_hold_ = std::min(next_hold_ * 2, kMaxHold);
  } else {
    mode_ = Mode::kCompress;
    next_hold_ = kFirstHold;
  }
}

void LinkGuard::Sent(size_t raw_len, size_t wire_len, bool compressed, uint64_t compress_ns, uint64_t send_ns) {
  const bool timed = transfer_sent_ >= kSkipBytes;
  transfer_sent_ += wire_len;
  if (compressed && compress_ns > 0) {
    const double rate = static_cast<double>(raw_len) / static_cast<double>(compress_ns);
    lz4_rate_ = lz4_rate_ == 0 ? rate : 0.75 * lz4_rate_ + 0.25 * rate;
  }
  if (mode_ == Mode::kProbe) {
    if (timed && probe_left_ <= kProbeTimed) {
      raw_bytes_ += raw_len;
      raw_ns_ += send_ns;
    }
    if (--probe_left_ > 0) return;
    // Nothing timed (small transfers): try again later. A raw send that
    // never waited moved its bytes at memory speed.
    if (raw_bytes_ > 0) raw_rate_ = raw_ns_ == 0 ? 1e300 : static_cast<double>(raw_bytes_) / static_cast<double>(raw_ns_);
    raw_bytes_ = raw_ns_ = 0;
    timed_compressed_ = 0;
    if (raw_rate_ > 0) {
      Decide();
    } else {
      mode_ = Mode::kCompress;
    }
    return;
  }
  if (compressed && mode_ == Mode::kCompress && raw_rate_ > 0) {
    Decide();  // lz4's time does not depend on the socket: no skip.
    return;
  }
  if (!timed) return;
  if (!compressed) {
    // A raw chunk (incompressible, or held): the link's rate, fresh.
    raw_bytes_ += raw_len;
    raw_ns_ += send_ns;
    if (++raw_chunks_ < kWindow) return;
    raw_rate_ = raw_ns_ == 0 ? 1e300 : static_cast<double>(raw_bytes_) / static_cast<double>(raw_ns_);
    raw_chunks_ = 0;
    raw_bytes_ = raw_ns_ = 0;
    if (mode_ == Mode::kRaw && lz4_rate_ * kMargin >= raw_rate_) mode_ = Mode::kCompress;  // The link slowed down.
    return;
  }
  if (mode_ == Mode::kCompress && ++timed_compressed_ >= kWindow) {
    ++probes_;
    mode_ = Mode::kProbe;
    probe_left_ = kProbeChunks;
    raw_chunks_ = 0;
    raw_bytes_ = raw_ns_ = 0;
  }
}

ChunkCompressor::Counters& ChunkCompressor::Counters::operator+=(const Counters& o) {
  compressed += o.compressed;
  raw_sampled += o.raw_sampled;
  raw_whole += o.raw_whole;
  raw_backoff += o.raw_backoff;
  raw_link += o.raw_link;
  raw_bytes += o.raw_bytes;
  wire_bytes += o.wire_bytes;
  ns += o.ns;
  return *this;
}

void ChunkCompressor::BeginTransfer() {
  link_.BeginTransfer();
  incompressible_run_ = 0;
  skip_ = 0;
  backoff_ = kFirstBackoff;
}

ChunkCompressor::Counters ChunkCompressor::TakeCounters() { return std::exchange(counters_, Counters{}); }

void ChunkCompressor::Incompressible() {
  if (++incompressible_run_ < kBackoffAfter) return;
  skip_ = backoff_;
  backoff_ = std::min(backoff_ * 2, kMaxBackoff);
  incompressible_run_ = 0;
}

bool ChunkCompressor::SamplesShrink(const iovec* slices, int count, size_t len) {
  const size_t offsets[3] = {0, len / 2 - kSampleBytes / 2, len - kSampleBytes};
  sample_.resize(kSampleBytes);
  sample_out_.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(kSampleBytes))));
  size_t packed = 0;
  for (size_t at : offsets) {
    CopyOut(slices, count, at, kSampleBytes, sample_.data());
    const int n = LZ4_compress_default(reinterpret_cast<const char*>(sample_.data()),
                                       reinterpret_cast<char*>(sample_out_.data()), static_cast<int>(kSampleBytes),
                                       static_cast<int>(sample_out_.size()));
    packed += n > 0 ? static_cast<size_t>(n) : kSampleBytes;
  }
  return static_cast<double>(packed) < kMaxRatio * static_cast<double>(3 * kSampleBytes);
}

bool ChunkCompressor::Compress(const iovec* slices, int count, size_t len, const uint8_t** payload,
                               size_t* payload_len) {
  last_compressed_ = false;
  last_ns_ = 0;
  if (len == 0 || len > wire::kMaxChunkBytes) return false;
  if (link_guard_ && !link_.WantCompression()) {
    ++counters_.raw_link;
    return false;
  }
  if (skip_ > 0) {
    --skip_;
    ++counters_.raw_backoff;
    return false;
  }
  const uint64_t t0 = NowNs();
  // Chunks too small for three samples are tried whole.
  if (len >= 8 * kSampleBytes && !SamplesShrink(slices, count, len)) {
    ++counters_.raw_sampled;
    Incompressible();
    last_ns_ = NowNs() - t0;
    counters_.ns += last_ns_;
    return false;
  }
  const uint8_t* src = static_cast<const uint8_t*>(slices[0].iov_base);
  if (count > 1 || slices[0].iov_len < len) {
    gather_.resize(len);
    CopyOut(slices, count, 0, len, gather_.data());
    src = gather_.data();
  }
  // Anything at or above this size is not worth it: a smaller bound also
  // spares lz4 finishing a block that would be thrown away.
  const int limit = static_cast<int>(kMaxRatio * static_cast<double>(len));
  out_.resize(wire::kLz4PrefixBytes + static_cast<size_t>(LZ4_compressBound(static_cast<int>(len))));
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(src),
                                     reinterpret_cast<char*>(out_.data() + wire::kLz4PrefixBytes),
                                     static_cast<int>(len), limit);
  last_ns_ = NowNs() - t0;
  counters_.ns += last_ns_;
  if (n <= 0 || n >= limit) {  // 0: does not fit under the limit.
    ++counters_.raw_whole;
    Incompressible();
    return false;
  }
  incompressible_run_ = 0;
  backoff_ = kFirstBackoff;
  last_compressed_ = true;
  last_wire_ = wire::kLz4PrefixBytes + static_cast<size_t>(n);
  PutU32(out_.data(), static_cast<uint32_t>(len));
  *payload = out_.data();
  *payload_len = wire::kLz4PrefixBytes + static_cast<size_t>(n);
  ++counters_.compressed;
  counters_.raw_bytes += len;
  counters_.wire_bytes += *payload_len;
  return true;
}

Status ParseLz4Chunk(const uint8_t* payload, size_t len, uint64_t remaining, uint32_t* raw_length) {
  if (len <= wire::kLz4PrefixBytes) return ProtocolError("lz4 data frame too short");
  if (len > wire::kMaxPayloadBytes) return ProtocolError("lz4 data frame exceeds the limit");
  const uint32_t raw = GetU32(payload);
  if (raw == 0 || raw > wire::kMaxChunkBytes) return ProtocolError("lz4 data frame declares a bad length");
  if (raw > remaining) return ProtocolError("lz4 data frame length does not fit the transfer");
  *raw_length = raw;
  return Status::Ok();
}

Status InflateLz4Chunk(const uint8_t* payload, size_t len, uint8_t* dst, uint32_t raw_length) {
  // LZ4_decompress_safe never reads past the block nor writes past
  // raw_length, whatever the block says.
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(payload + wire::kLz4PrefixBytes),
                                    reinterpret_cast<char*>(dst), static_cast<int>(len - wire::kLz4PrefixBytes),
                                    static_cast<int>(raw_length));
  if (n < 0 || static_cast<uint32_t>(n) != raw_length)
    return ProtocolError("lz4 data frame does not decompress to its declared length");
  return Status::Ok();
}

Status ChunkInflater::ReadChunk(Connection& conn, uint32_t payload_length, uint64_t remaining,
                                uint32_t* raw_length) {
  if (payload_length <= wire::kLz4PrefixBytes) return ProtocolError("lz4 data frame too short");
  if (payload_length > wire::kMaxPayloadBytes) return ProtocolError("lz4 data frame exceeds the limit");
  // The prefix first: nothing is allocated for a chunk that cannot fit.
  uint8_t prefix[wire::kLz4PrefixBytes];
  HIPR_RETURN_IF_ERROR(conn.RecvExact(prefix, sizeof prefix));
  const uint32_t raw = GetU32(prefix);
  if (raw == 0 || raw > wire::kMaxChunkBytes) return ProtocolError("lz4 data frame declares a bad length");
  if (raw > remaining) return ProtocolError("lz4 data frame length does not fit the transfer");
  payload_.resize(payload_length);
  std::memcpy(payload_.data(), prefix, sizeof prefix);
  HIPR_RETURN_IF_ERROR(conn.RecvExact(payload_.data() + sizeof prefix, payload_length - sizeof prefix));
  raw_length_ = raw;
  *raw_length = raw;
  ++counters_.chunks;
  counters_.raw_bytes += raw;
  counters_.wire_bytes += payload_length;
  return Status::Ok();
}

Status ChunkInflater::InflateTo(uint8_t* dst) {
  return InflateLz4Chunk(payload_.data(), payload_.size(), dst, raw_length_);
}

Status ChunkInflater::InflateToScratch() {
  decoded_.resize(raw_length_);
  return InflateTo(decoded_.data());
}

ChunkInflater::Counters ChunkInflater::TakeCounters() { return std::exchange(counters_, Counters{}); }

}  // namespace hipr
