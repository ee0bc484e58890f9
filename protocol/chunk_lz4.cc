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

ChunkCompressor::Counters& ChunkCompressor::Counters::operator+=(const Counters& o) {
  compressed += o.compressed;
  raw_sampled += o.raw_sampled;
  raw_whole += o.raw_whole;
  raw_backoff += o.raw_backoff;
  raw_bytes += o.raw_bytes;
  wire_bytes += o.wire_bytes;
  ns += o.ns;
  return *this;
}

void ChunkCompressor::BeginTransfer() {
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
  if (len == 0 || len > wire::kMaxChunkBytes) return false;
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
    counters_.ns += NowNs() - t0;
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
  counters_.ns += NowNs() - t0;
  if (n <= 0 || n >= limit) {  // 0: does not fit under the limit.
    ++counters_.raw_whole;
    Incompressible();
    return false;
  }
  incompressible_run_ = 0;
  backoff_ = kFirstBackoff;
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
