// Stats: what this process sent to and received from the worker, counted
// with relaxed atomics (a few nanoseconds per call), and printed on stderr
// at exit when HIPR_STATS=1 so a user sees what crossed the wire:
//
//   hipr: stats: 842 launches, 1207 calls (160 round trips), 1.2 MiB sent, 24 KiB received
//   hipr: stats: round trips by HIP function (most time waited first):
//   hipr: stats:   hipMemcpy: 96 round trips, 41.2 ms waited
//   hipr: stats:   hipStreamSynchronize: 32 round trips, 12.9 ms waited
//   hipr: stats: waits skipped: 31 (blocking calls that guarded nothing the host can observe)
//   hipr: stats: modules: 1 loaded, 1 shipped (20960 bytes as 7915 on the wire), 0 held by the worker already
//   hipr: stats: registrations: 2 fat binaries, 12031 kernels, 6 variables, 0.011 s
//   hipr: stats: bulk lz4: to the device on, from the device on
//   hipr: stats: bulk lz4 sent: 12 chunks compressed (12.0 MiB as 1.3 MiB); sent raw: 3 chunks (samples did not
//       shrink), 0 (chunk did not shrink), 8 (backing off), 0 (link faster than lz4); 0.021 s compressing
//   hipr: stats: bulk lz4 received: 10 chunks (10.0 MiB as 1.1 MiB)
//
// Thread-safety: every function may be called from any thread, before or
// after the client exists (the counters are constinit globals).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace hipr::client::stats {

struct Counters {
  std::atomic<uint64_t> calls{0};        // Every frame the client sends, but chunks.
  std::atomic<uint64_t> round_trips{0};  // Synchronous calls (one reply each).
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> graph_launches{0};  // kGraphLaunch frames (their kernels are not in `launches`).
  // Blocking memsets and stream synchronizes that returned at once behind a
  // stream fence (session/stream_ledger.h).
  std::atomic<uint64_t> waits_skipped{0};
  // Copies between memory of two workers (HIPR_SERVER lists several), and
  // the bytes they staged through this process.
  std::atomic<uint64_t> cross_worker_copies{0};
  std::atomic<uint64_t> cross_worker_staged_bytes{0};
  std::atomic<uint64_t> cross_worker_direct_bytes{0};  // Sent worker to worker.
  // Resumed sessions (a link that dropped and came back), and the bytes
  // this process sent again on resuming.
  std::atomic<uint64_t> resumes{0};
  std::atomic<uint64_t> resent_bytes{0};
  std::atomic<uint64_t> bytes_sent{0};
  std::atomic<uint64_t> bytes_received{0};
  std::atomic<uint64_t> modules_loaded{0};
  std::atomic<uint64_t> modules_shipped{0};
  std::atomic<uint64_t> code_bytes{0};       // Code objects shipped, uncompressed.
  std::atomic<uint64_t> code_wire_bytes{0};  // ...as they travelled.
  std::atomic<uint64_t> registration_ns{0};  // Time inside __hipRegister* calls.
  std::atomic<uint64_t> fat_binaries{0};     // Registered, ever (unregistering does not count down).
  std::atomic<uint64_t> kernels{0};
  std::atomic<uint64_t> variables{0};
  // Bulk lz4 (protocol/chunk_lz4.h). Directions agreed in the last hello:
  // bit 0 to the device, bit 1 from it.
  std::atomic<uint64_t> lz4_directions{0};
  std::atomic<uint64_t> lz4_sent_chunks{0};      // Sent as kDataLz4...
  std::atomic<uint64_t> lz4_sent_raw_bytes{0};   // ...standing for these bytes...
  std::atomic<uint64_t> lz4_sent_wire_bytes{0};  // ...in payloads of these.
  std::atomic<uint64_t> lz4_raw_sampled{0};      // Sent raw: samples did not shrink.
  std::atomic<uint64_t> lz4_raw_whole{0};        // Sent raw: the chunk did not shrink.
  std::atomic<uint64_t> lz4_raw_backoff{0};      // Sent raw untried.
  std::atomic<uint64_t> lz4_raw_link{0};         // Sent raw: the link is faster than lz4.
  std::atomic<uint64_t> lz4_ns{0};               // Sampling and compressing.
  std::atomic<uint64_t> lz4_received_chunks{0};
  std::atomic<uint64_t> lz4_received_raw_bytes{0};
  std::atomic<uint64_t> lz4_received_wire_bytes{0};
};

Counters& Get();

inline void Add(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

// Monotonic nanoseconds, for timing registrations.
uint64_t NowNs();

// The HIP entry point the calling thread is in: the outermost ApiCall
// (api/api_common.h) names it for the round trips it waits for. Nested
// scopes keep the outer name.
class ApiScope {
 public:
  explicit ApiScope(const char* name) : outer_(current_ == nullptr) {
    if (outer_) current_ = name;
  }
  ~ApiScope() {
    if (outer_) current_ = nullptr;
  }
  ApiScope(const ApiScope&) = delete;
  ApiScope& operator=(const ApiScope&) = delete;
  // nullptr outside any entry point (the hello, the stub's own threads).
  static const char* current() { return current_; }

 private:
  bool outer_;
  static thread_local const char* current_;
};

// A round trip the calling thread waited `ns` for (a request and its reply),
// counted against its entry point (ApiScope::current()).
void AddRoundTrip(uint64_t ns);

// Prints the summary at exit (once per process; the first call arms it).
void PrintAtExit();

// The session's connection's bulk summary (Connection::BulkSummary), printed
// with the rest when not empty. The session sets it once its transport is
// settled and clears it (nullptr) before it goes.
void SetBulkSummary(std::function<std::string()> fn);

}  // namespace hipr::client::stats
