#include "client_stub/base/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "protocol/thread_annotations.h"

namespace hipr::client::stats {
namespace {

constinit Counters g_counters;
constinit std::atomic<bool> g_armed{false};

uint64_t Load(const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); }

// The bulk summary's source; never destroyed, as Print runs at exit.
struct BulkSource {
  Mutex mu;
  std::function<std::string()> fn HIPR_GUARDED_BY(mu);
};
BulkSource& Bulk() {
  static auto* source = new BulkSource;
  return *source;
}

// "1.2 MiB", "24 KiB", "512 bytes".
void FormatBytes(uint64_t n, char* buf, size_t len) {
  if (n >= (uint64_t{1} << 20))
    snprintf(buf, len, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  else if (n >= (uint64_t{1} << 10))
    snprintf(buf, len, "%.1f KiB", static_cast<double>(n) / (1 << 10));
  else
    snprintf(buf, len, "%llu bytes", static_cast<unsigned long long>(n));
}

void Print() {
  const Counters& c = g_counters;
  char sent[32], received[32];
  FormatBytes(Load(c.bytes_sent), sent, sizeof sent);
  FormatBytes(Load(c.bytes_received), received, sizeof received);
  // stderr is unbuffered: each line leaves whole even while other threads run.
  fprintf(stderr, "hipr: stats: %llu launches, %llu calls (%llu round trips), %s sent, %s received\n",
          static_cast<unsigned long long>(Load(c.launches)), static_cast<unsigned long long>(Load(c.calls)),
          static_cast<unsigned long long>(Load(c.round_trips)), sent, received);
  {
    BulkSource& source = Bulk();
    MutexLock lock(source.mu);
    if (source.fn)
      if (const std::string bulk = source.fn(); !bulk.empty()) fprintf(stderr, "hipr: stats: %s\n", bulk.c_str());
  }
  if (const uint64_t graphs = Load(c.graph_launches); graphs > 0)
    fprintf(stderr, "hipr: stats: graphs: %llu launches of executable graphs held by the worker\n",
            static_cast<unsigned long long>(graphs));
  const uint64_t loaded = Load(c.modules_loaded), shipped = Load(c.modules_shipped);
  fprintf(stderr, "hipr: stats: modules: %llu loaded, %llu shipped (%llu bytes as %llu on the wire), %llu held by the "
          "worker already\n",
          static_cast<unsigned long long>(loaded), static_cast<unsigned long long>(shipped),
          static_cast<unsigned long long>(Load(c.code_bytes)), static_cast<unsigned long long>(Load(c.code_wire_bytes)),
          static_cast<unsigned long long>(loaded >= shipped ? loaded - shipped : 0));
  fprintf(stderr, "hipr: stats: registrations: %llu fat binaries, %llu kernels, %llu variables, %.3f s\n",
          static_cast<unsigned long long>(Load(c.fat_binaries)), static_cast<unsigned long long>(Load(c.kernels)),
          static_cast<unsigned long long>(Load(c.variables)), static_cast<double>(Load(c.registration_ns)) / 1e9);
  const uint64_t dirs = Load(c.lz4_directions);
  fprintf(stderr, "hipr: stats: bulk lz4: to the device %s, from the device %s\n", (dirs & 1) ? "on" : "off",
          (dirs & 2) ? "on" : "off");
  if (dirs & 1) {
    char raw[32], wire[32];
    FormatBytes(Load(c.lz4_sent_raw_bytes), raw, sizeof raw);
    FormatBytes(Load(c.lz4_sent_wire_bytes), wire, sizeof wire);
    fprintf(stderr,
            "hipr: stats: bulk lz4 sent: %llu chunks compressed (%s as %s); sent raw: %llu chunks (samples did not "
            "shrink), %llu (chunk did not shrink), %llu (backing off), %llu (link faster than lz4); %.3f s "
            "compressing\n",
            static_cast<unsigned long long>(Load(c.lz4_sent_chunks)), raw, wire,
            static_cast<unsigned long long>(Load(c.lz4_raw_sampled)),
            static_cast<unsigned long long>(Load(c.lz4_raw_whole)),
            static_cast<unsigned long long>(Load(c.lz4_raw_backoff)),
            static_cast<unsigned long long>(Load(c.lz4_raw_link)), static_cast<double>(Load(c.lz4_ns)) / 1e9);
  }
  if (dirs & 2) {
    char raw[32], wire[32];
    FormatBytes(Load(c.lz4_received_raw_bytes), raw, sizeof raw);
    FormatBytes(Load(c.lz4_received_wire_bytes), wire, sizeof wire);
    fprintf(stderr, "hipr: stats: bulk lz4 received: %llu chunks (%s as %s)\n",
            static_cast<unsigned long long>(Load(c.lz4_received_chunks)), raw, wire);
  }
}

}  // namespace

Counters& Get() { return g_counters; }

uint64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void PrintAtExit() {
  if (!g_armed.exchange(true)) atexit(Print);
}

void SetBulkSummary(std::function<std::string()> fn) {
  BulkSource& source = Bulk();
  MutexLock lock(source.mu);
  source.fn = std::move(fn);
}

}  // namespace hipr::client::stats
