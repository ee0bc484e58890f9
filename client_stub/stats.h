// Stats: what this process sent to and received from the worker, counted
// with relaxed atomics (a few nanoseconds per call), and printed on stderr
// at exit when HIPR_STATS=1 so a user sees what crossed the wire:
//
//   hipr: stats: 842 launches, 1207 calls (160 round trips), 1.2 MiB sent, 24 KiB received
//   hipr: stats: modules: 1 loaded, 1 shipped (20960 bytes as 7915 on the wire), 0 held by the worker already
//   hipr: stats: registrations: 2 fat binaries, 12031 kernels, 6 variables, 0.011 s
//
// Thread-safety: every function may be called from any thread, before or
// after the client exists (the counters are constinit globals).
#pragma once

#include <atomic>
#include <cstdint>

namespace hipr::client::stats {

struct Counters {
  std::atomic<uint64_t> calls{0};        // Every frame the client sends, but chunks.
  std::atomic<uint64_t> round_trips{0};  // Synchronous calls (one reply each).
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> graph_launches{0};  // kGraphLaunch frames (their kernels are not in `launches`).
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
};

Counters& Get();

inline void Add(std::atomic<uint64_t>& counter, uint64_t n = 1) {
  counter.fetch_add(n, std::memory_order_relaxed);
}

// Monotonic nanoseconds, for timing registrations.
uint64_t NowNs();

// Prints the summary at exit (once per process; the first call arms it).
void PrintAtExit();

}  // namespace hipr::client::stats
