#include "client_stub/base/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/thread_annotations.h"

namespace hipr::client::stats {
namespace {

constinit Counters g_counters;
constinit std::atomic<bool> g_armed{false};

// Round trips per entry point, in a fixed table keyed by the name's address
// (a string literal of the ApiCall): found or claimed lock-free. The same
// name at two addresses takes two slots, merged when printed; a full table
// counts the rest in its last slot.
struct Waits {
  std::atomic<const char*> name{nullptr};
  std::atomic<uint64_t> count{0};
  std::atomic<uint64_t> ns{0};
};
constexpr size_t kWaitSlots = 1024;
constinit Waits g_waits[kWaitSlots];
constexpr const char kNoEntryPoint[] = "(outside any HIP call: the hello, the stub's own threads)";
constexpr const char kTableFull[] = "(other HIP calls)";

Waits& SlotFor(const char* name) {
  size_t i = (reinterpret_cast<uintptr_t>(name) >> 3) % (kWaitSlots - 1);
  for (size_t tries = 0; tries < kWaitSlots - 1; ++tries, i = (i + 1) % (kWaitSlots - 1)) {
    const char* held = g_waits[i].name.load(std::memory_order_acquire);
    if (held == name) return g_waits[i];
    if (held == nullptr) {
      const char* expected = nullptr;
      if (g_waits[i].name.compare_exchange_strong(expected, name, std::memory_order_acq_rel) || expected == name)
        return g_waits[i];
    }
  }
  Waits& last = g_waits[kWaitSlots - 1];
  const char* expected = nullptr;
  last.name.compare_exchange_strong(expected, kTableFull, std::memory_order_acq_rel);
  return last;
}

// The round trips by entry point, most time waited first.
void PrintWaits() {
  struct Row {
    std::string name;
    uint64_t count = 0, ns = 0;
  };
  std::vector<Row> rows;
  for (const Waits& w : g_waits) {
    const char* name = w.name.load(std::memory_order_acquire);
    if (name == nullptr) continue;
    auto it = std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.name == name; });
    if (it == rows.end()) it = rows.insert(rows.end(), Row{name});
    it->count += w.count.load(std::memory_order_relaxed);
    it->ns += w.ns.load(std::memory_order_relaxed);
  }
  if (rows.empty()) return;
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
  fprintf(stderr, "hipr: stats: round trips by HIP function (most time waited first):\n");
  constexpr size_t kShown = 12;
  for (size_t i = 0; i < rows.size() && i < kShown; ++i)
    fprintf(stderr, "hipr: stats:   %s: %llu round trip%s, %.1f ms waited\n", rows[i].name.c_str(),
            static_cast<unsigned long long>(rows[i].count), rows[i].count == 1 ? "" : "s",
            static_cast<double>(rows[i].ns) / 1e6);
  if (rows.size() > kShown) {
    uint64_t count = 0, ns = 0;
    for (size_t i = kShown; i < rows.size(); ++i) {
      count += rows[i].count;
      ns += rows[i].ns;
    }
    fprintf(stderr, "hipr: stats:   %zu other functions: %llu round trips, %.1f ms waited\n", rows.size() - kShown,
            static_cast<unsigned long long>(count), static_cast<double>(ns) / 1e6);
  }
}

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
  PrintWaits();
  {
    BulkSource& source = Bulk();
    MutexLock lock(source.mu);
    if (source.fn)
      if (const std::string bulk = source.fn(); !bulk.empty()) fprintf(stderr, "hipr: stats: %s\n", bulk.c_str());
  }
  if (const uint64_t graphs = Load(c.graph_launches); graphs > 0)
    fprintf(stderr, "hipr: stats: graphs: %llu launches of executable graphs held by the worker\n",
            static_cast<unsigned long long>(graphs));
  if (const uint64_t skipped = Load(c.waits_skipped); skipped > 0)
    fprintf(stderr, "hipr: stats: waits skipped: %llu (blocking calls that guarded nothing the host can observe)\n",
            static_cast<unsigned long long>(skipped));
  if (const uint64_t resumes = Load(c.resumes); resumes > 0)
    fprintf(stderr, "hipr: stats: link: resumed %llu time%s, %llu bytes sent again\n",
            static_cast<unsigned long long>(resumes), resumes == 1 ? "" : "s",
            static_cast<unsigned long long>(Load(c.resent_bytes)));
  if (const uint64_t cross = Load(c.cross_worker_copies); cross > 0)
    fprintf(stderr, "hipr: stats: copies across workers: %llu, %llu bytes of them staged through this process, "
            "%llu sent worker to worker\n", static_cast<unsigned long long>(cross),
            static_cast<unsigned long long>(Load(c.cross_worker_staged_bytes)),
            static_cast<unsigned long long>(Load(c.cross_worker_direct_bytes)));
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

thread_local const char* ApiScope::current_ = nullptr;

void AddRoundTrip(uint64_t ns) {
  const char* name = ApiScope::current();
  Waits& w = SlotFor(name != nullptr ? name : kNoEntryPoint);
  w.count.fetch_add(1, std::memory_order_relaxed);
  w.ns.fetch_add(ns, std::memory_order_relaxed);
}

}  // namespace hipr::client::stats
