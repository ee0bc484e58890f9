// lz4 for bulk chunks (kDataLz4, see wire.h): the sender's policy that
// compresses a chunk only where that pays, and the receiver's checked
// decompression. Frames themselves are read and written by frame_io.h.
//
// Only where it pays: before compressing a chunk the sender compresses three
// small samples of it (start, middle, end); a chunk whose samples do not
// shrink below kMaxRatio goes raw, straight from the caller's buffers as
// before. A chunk whose samples shrink is compressed whole and still goes raw
// unless it shrank below kMaxRatio. After kBackoffAfter incompressible chunks
// in a row the sender stops trying for a while (kFirstBackoff chunks,
// doubling up to kMaxBackoff while the data stays incompressible), so an
// incompressible transfer costs a few samples, not a compression per chunk.
// Each transfer starts afresh (BeginTransfer).
//
// And, with the link guard on (HIPR_COMPRESS / --compress auto), only while
// the link is slower than lz4: LinkGuard (below) times lz4 and the link and
// sends raw while the link is the faster of the two.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "protocol/status.h"
#include "protocol/transport.h"
#include "protocol/wire.h"

namespace hipr {

// Decides whether compressing is worth it for the link: it is while lz4
// (on this CPU, for this data) turns out bytes faster than the link takes
// them raw. Two rates, from what sending costs:
//  * lz4's: raw bytes per ns of compressing, averaged over recent chunks;
//  * the link's for raw bytes: windows of kWindow raw chunks (incompressible
//    ones, or chunks held raw) timed from the start of their send to its
//    end, or, when none has been timed yet, a probe: after kWindow timed
//    compressed chunks, kProbeChunks go raw and the last kProbeTimed of them
//    are timed (the first fill the socket buffer).
// Only chunks that start past the first kSkipBytes of a transfer are timed
// (before that the socket buffer has room; Linux's default grows to 4 MiB).
// Where lz4 is slower than the link by kMargin, chunks go raw for a hold of
// kFirstHold chunks (doubling up to kMaxHold while that stays so); after a
// hold one chunk is compressed to time lz4 again. Not thread-safe.
class LinkGuard {
 public:
  static constexpr uint64_t kSkipBytes = 8u << 20;
  static constexpr int kWindow = 8;
  static constexpr int kProbeChunks = 12;
  static constexpr int kProbeTimed = 6;
  static constexpr int kFirstHold = 32;
  static constexpr int kMaxHold = 1024;
  static constexpr double kMargin = 1.25;

  void BeginTransfer() { transfer_sent_ = 0; }
  // Called once per chunk before deciding: false means send it raw (a
  // probe, or a hold while the link is faster than lz4).
  bool WantCompression();
  // After the chunk was sent: its bytes and those on the wire, whether it
  // went compressed, the time spent compressing it (sampling included) and
  // the time its send took.
  void Sent(size_t raw_len, size_t wire_len, bool compressed, uint64_t compress_ns, uint64_t send_ns);

  bool holding_raw() const { return mode_ == Mode::kRaw; }
  uint64_t probes() const { return probes_; }
  double lz4_rate() const { return lz4_rate_; }  // Bytes per ns; 0: not timed yet.
  double raw_rate() const { return raw_rate_; }  // Bytes per ns; 0: not timed yet.

 private:
  enum class Mode { kCompress, kProbe, kRaw };
  // With both rates known: compress, or hold raw.
  void Decide();

  Mode mode_ = Mode::kCompress;
  uint64_t transfer_sent_ = 0;  // Bytes of this transfer on the wire so far.
  double lz4_rate_ = 0;
  double raw_rate_ = 0;
  int timed_compressed_ = 0;  // Before the first probe.
  // Raw chunks being timed (a window, or the probe's).
  int raw_chunks_ = 0;
  uint64_t raw_bytes_ = 0;
  uint64_t raw_ns_ = 0;
  int probe_left_ = 0;
  int hold_ = 0;
  int next_hold_ = kFirstHold;
  uint64_t probes_ = 0;
};

// Not thread-safe: one per sending direction of a session, used under its
// send lock.
class ChunkCompressor {
 public:
  // The largest chunk sent while compression is on: small enough that
  // compressing one overlaps with the network sending the one before,
  // large enough that lz4 (64 KiB window) loses nothing by the cut.
  static constexpr uint32_t kChunkBytes = 1u << 20;
  static constexpr size_t kSampleBytes = 4096;  // Each of three samples.
  static constexpr double kMaxRatio = 0.9;      // Compressed / raw, to be worth it.
  static constexpr int kBackoffAfter = 3;       // Incompressible chunks in a row...
  static constexpr int kFirstBackoff = 8;       // ...then this many sent raw untried,
  static constexpr int kMaxBackoff = 128;       // doubling up to this.

  struct Counters {
    uint64_t compressed = 0;   // Chunks sent as kDataLz4.
    uint64_t raw_sampled = 0;  // Sent raw: the samples did not shrink.
    uint64_t raw_whole = 0;    // Sent raw: the samples shrank, the chunk did not.
    uint64_t raw_backoff = 0;  // Sent raw untried (backing off).
    uint64_t raw_link = 0;     // Sent raw: the link was found faster than lz4 (probes, holds).
    uint64_t raw_bytes = 0;    // Bytes of the compressed chunks...
    uint64_t wire_bytes = 0;   // ...and of their kDataLz4 payloads.
    uint64_t ns = 0;           // Spent sampling and compressing.
    Counters& operator+=(const Counters& o);
  };

  // A new transfer: forgets the backoff.
  void BeginTransfer();
  // Whether the link guard decides too (default on). Off: every chunk that
  // compresses is sent compressed, however fast the link.
  void set_link_guard(bool on) { link_guard_ = on; }
  // After each chunk Compress decided on: how long its send took.
  void Sent(size_t len, uint64_t send_ns) {
    if (link_guard_) link_.Sent(len, last_compressed_ ? last_wire_ : len, last_compressed_, last_ns_, send_ns);
  }
  const LinkGuard& link() const { return link_; }

  // Decides for one chunk of `len` bytes in slices[0..count) (len <=
  // kMaxChunkBytes). True: *payload / *payload_len is the kDataLz4 payload,
  // valid until the next call. False: send the chunk raw.
  bool Compress(const iovec* slices, int count, size_t len, const uint8_t** payload,
                size_t* payload_len);

  const Counters& counters() const { return counters_; }
  // Returns the counters and zeroes them.
  Counters TakeCounters();

 private:
  // True when samples of the chunk shrink below kMaxRatio.
  bool SamplesShrink(const iovec* slices, int count, size_t len);
  void Incompressible();

  std::vector<uint8_t> gather_;  // A chunk of several slices, made contiguous.
  std::vector<uint8_t> sample_;  // One sample, contiguous.
  std::vector<uint8_t> sample_out_;
  std::vector<uint8_t> out_;  // The payload: prefix and block.
  bool link_guard_ = true;
  LinkGuard link_;
  bool last_compressed_ = false;  // The last chunk's verdict...
  uint64_t last_ns_ = 0;          // ...the time it took...
  size_t last_wire_ = 0;          // ...and its payload, when compressed.
  int incompressible_run_ = 0;
  int skip_ = 0;  // Chunks still to send raw untried.
  int backoff_ = kFirstBackoff;
  Counters counters_;
};

// The receiving side of kDataLz4: the buffers a chunk passes through (kept
// between transfers, so a chunk allocates nothing once warm) and counters.
// Memory: at most one payload and one decoded chunk, each bounded by
// kMaxPayloadBytes / kMaxChunkBytes whatever the peer declares.
// Not thread-safe: one per receiving direction, used by whoever reads.
class ChunkInflater {
 public:
  struct Counters {
    uint64_t chunks = 0;      // kDataLz4 chunks received.
    uint64_t raw_bytes = 0;   // What they stood for...
    uint64_t wire_bytes = 0;  // ...and their payloads.
  };

  // Reads a kDataLz4 payload of `payload_length` bytes (its header read
  // already) and checks its prefix: *raw_length in 1..min(kMaxChunkBytes,
  // remaining), a block of at least one byte. Not ok: a protocol error (or
  // the link's), the stream is out of step.
  Status ReadChunk(Connection& conn, uint32_t payload_length, uint64_t remaining, uint32_t* raw_length);
  // Decompresses the chunk ReadChunk read into exactly raw_length bytes at
  // `dst`. A block that does not decompress to exactly that is a protocol
  // error; bytes of `dst` may have been written then.
  Status InflateTo(uint8_t* dst);
  // InflateTo a buffer of the inflater's own: decoded().
  Status InflateToScratch();
  const uint8_t* decoded() const { return decoded_.data(); }

  const Counters& counters() const { return counters_; }
  Counters TakeCounters();

 private:
  std::vector<uint8_t> payload_;
  std::vector<uint8_t> decoded_;
  uint32_t raw_length_ = 0;
  Counters counters_;
};

// The checks of ChunkInflater::ReadChunk on a payload in memory.
Status ParseLz4Chunk(const uint8_t* payload, size_t len, uint64_t remaining, uint32_t* raw_length);
// Decompresses a payload ParseLz4Chunk accepted into exactly raw_length bytes.
Status InflateLz4Chunk(const uint8_t* payload, size_t len, uint8_t* dst, uint32_t raw_length);

}  // namespace hipr
