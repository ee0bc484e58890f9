// hipr-bench-basic: the transfer and round-trip figures, each beside its
// physical baseline measured in the same run on the same machine,
// interleaved (A B A B ...) and reported as medians:
//   - a synchronous null HIP call (hipStreamQuery of the null stream, with
//     nothing queued: a round trip every time, where hipDeviceSynchronize
//     with nothing queued now returns at once, docs/architecture.md "Which
//     calls wait") through the stub vs a raw TCP ping-pong of the same frame sizes with a
//     separate echo process, both sides polling up to 50 us before they
//     sleep as hipr's do (the like-for-like baseline), and vs one where both
//     sleep in recv() at once;
//   - hipMemcpy H2D and D2H, from pageable and from pinned (hipHostMalloc)
//     host memory, vs raw single-connection TCP throughput of the same byte
//     count to/from a separate process: 256 MiB by default, or with --sweep
//     every size from 4 KiB to 1 GiB; with --staged-baseline (a worker run
//     with --sim-force-staging) also vs raw TCP + one memcpy per 4 MiB;
//   - what those copies cost in CPU (the largest size, pageable): bytes
//     moved per second of busy CPU time, the machine's as /proc/stat counts
//     it (the client, the worker and the raw peer run on it alike), beside
//     the raw TCP transfer's (shm: memcpy's). On a link faster than the
//     CPUs this, not the rate, is what tells plain, TLS and shm apart.
// --rdma-baseline (the stub on HIPR_SERVER=rdma://) names the rows "rdma"
// and adds a single-thread memcpy of the same bytes as a second transfer
// baseline. --size N moves N bytes (e.g. 16M) instead of 256 MiB. --note TEXT
// is printed above the table and written into the JSON (what the figures
// measure, e.g. the verbs double rather than a NIC).
// --json FILE also writes every figure as JSON (bench/hipr-bench merges it).
// --big-copy N (bytes, e.g. 4G) instead copies N bytes to the device and
// back once, pausing before and after (a line on stdin each) so
// bench/hipr-bench can read the worker session's memory in between.
// Run under the stub against a worker (bench/hipr-bench starts both).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"

using namespace hipr_bench;

namespace {

struct Figure {
  std::string name;
  double hipr = 0;
  double baseline = 0;
  std::string unit;  // "us" (lower is better) or "GiB/s" (higher is better).
};

std::string Size(uint64_t n) {
  char buf[32];
  if (n >= (1ull << 30)) std::snprintf(buf, sizeof buf, "%llu GiB", static_cast<unsigned long long>(n >> 30));
  else if (n >= (1ull << 20)) std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(n >> 20));
  else std::snprintf(buf, sizeof buf, "%llu KiB", static_cast<unsigned long long>(n >> 10));
  return buf;
}

// Repeats `fn` until about 20 ms have passed (at least once); seconds per call.
double PerCall(const std::function<void()>& fn) {
  int reps = 1;
  for (;;) {
    const double t = Seconds([&] {
      for (int i = 0; i < reps; ++i) fn();
    });
    if (t >= 0.02 || reps >= (1 << 16)) return t / reps;
    reps *= 4;
  }
}

// Busy time of all CPUs so far, in seconds: /proc/stat's user, nice,
// system, irq and softirq (idle, iowait and steal left out); -1 where it
// cannot be read.
double BusyCpuSeconds() {
  FILE* f = std::fopen("/proc/stat", "re");
  if (f == nullptr) return -1;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0;
  const int got = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &system, &idle, &iowait,
                              &irq, &softirq);
  std::fclose(f);
  if (got != 7) return -1;
  return static_cast<double>(user + nice + system + irq + softirq) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// GiB moved per busy CPU-second while `fn` moves `n` bytes, again and again
// for at least half a second (/proc/stat counts in 10 ms ticks); 0 where
// /proc/stat cannot be read.
double GibPerCpuSecond(uint64_t n, const std::function<void()>& fn) {
  const double busy0 = BusyCpuSeconds();
  uint64_t moved = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
  do {
    fn();
    moved += n;
  } while (std::chrono::steady_clock::now() < until);
  const double busy = BusyCpuSeconds() - busy0;
  if (busy0 < 0 || busy <= 0) return 0;
  return static_cast<double>(moved) / busy / (1ull << 30);
}

void WriteJson(const char* path, const std::string& device, const std::string& note, int rounds,
               const std::vector<Figure>& figures) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    std::perror(path);
    std::exit(1);
  }
  std::fprintf(f, "{\n  \"bench\": \"hipr-bench-basic\",\n  \"device\": \"%s\",\n", device.c_str());
  if (!note.empty()) {
    std::string escaped;
    for (char c : note) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c == '\n' ? ' ' : c;
    }
    std::fprintf(f, "  \"note\": \"%s\",\n", escaped.c_str());
  }
  std::fprintf(f, "  \"rounds\": %d,\n  \"figures\": [\n", rounds);
  for (size_t i = 0; i < figures.size(); ++i) {
    const Figure& x = figures[i];
    const double ratio = x.hipr / x.baseline;
    std::fprintf(f, "    {\"name\": \"%s\", \"hipr\": %.6g, \"baseline\": %.6g, \"unit\": \"%s\", \"ratio\": %.4f}%s\n",
                 x.name.c_str(), x.hipr, x.baseline, x.unit.c_str(), ratio, i + 1 < figures.size() ? "," : "");
  }
  std::fprintf(f, "  ]\n}\n");
  std::fclose(f);
}

}  // namespace

uint64_t ParseBytes(const char* text) {
  char* end = nullptr;
  uint64_t n = std::strtoull(text, &end, 10);
  switch (*end) {
    case 'G': case 'g': return n << 30;
    case 'M': case 'm': return n << 20;
    case 'K': case 'k': return n << 10;
    default: return n;
  }
}

// One N-byte copy each way, between pauses: the caller measures the worker.
int BigCopy(uint64_t n) {
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  void* dev = nullptr;
  Check(hipMalloc(&dev, n), "hipMalloc");
  std::vector<char> host(n, 3);
  Check(hipMemset(dev, 0, n), "hipMemset");  // Device memory touched: counted as device memory.
  char filled = 1;
  Check(hipMemcpy(&filled, dev, 1, hipMemcpyDeviceToHost), "hipMemcpy (the fill is done)");
  std::printf("BIGCOPY ready %llu\n", static_cast<unsigned long long>(n));
  std::fflush(stdout);
  char line[16];
  if (std::fgets(line, sizeof line, stdin) == nullptr) return 1;
  const double up = Seconds([&] { Check(hipMemcpy(dev, host.data(), n, hipMemcpyHostToDevice), "H2D"); });
  const double down = Seconds([&] { Check(hipMemcpy(host.data(), dev, n, hipMemcpyDeviceToHost), "D2H"); });
  std::printf("BIGCOPY done %.2f GiB/s up, %.2f GiB/s down\n", n / up / (1ull << 30), n / down / (1ull << 30));
  std::fflush(stdout);
  if (std::fgets(line, sizeof line, stdin) == nullptr) return 1;
  Check(hipFree(dev), "hipFree");
  return 0;
}

// --idle N: opens a session, says "IDLE ready", sleeps N seconds, says
// "IDLE done" and waits for a line before it exits (hipr-bench reads both
// processes' CPU time in between).
int Idle(int seconds) {
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  std::printf("IDLE ready\n");
  std::fflush(stdout);
  sleep(static_cast<unsigned>(seconds));
  std::printf("IDLE done\n");
  std::fflush(stdout);
  char line[16];
  if (std::fgets(line, sizeof line, stdin) == nullptr) return 1;
  return 0;
}

int main(int argc, char** argv) {
  int rounds = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--big-copy") == 0) return BigCopy(ParseBytes(argv[i + 1]));
  bool sweep = false;
  bool staged = false;  // The worker stages (--sim-force-staging): also compare with raw TCP + memcpy.
  bool shm = false;     // The stub talks shm (HIPR_SERVER=unix:...): raw shm ping-pongs and memcpy.
  bool rdma = false;    // The stub talks rdma (HIPR_SERVER=rdma://...): raw TCP and memcpy.
  uint64_t size = 256ull << 20;
  std::string note;
  const char* json = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sweep") == 0) sweep = true;
    else if (std::strcmp(argv[i], "--staged-baseline") == 0) staged = true;
    else if (std::strcmp(argv[i], "--shm-baseline") == 0) shm = true;
    else if (std::strcmp(argv[i], "--rdma-baseline") == 0) rdma = true;
    else if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) size = ParseBytes(argv[++i]);
    else if (std::strcmp(argv[i], "--note") == 0 && i + 1 < argc) note = argv[++i];
    else if (std::strcmp(argv[i], "--idle") == 0 && i + 1 < argc) return Idle(std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--json") == 0 && i + 1 < argc) json = argv[++i];
    else rounds = std::atoi(argv[i]);
  }
  const int kCalls = 2000;
  if (size == 0) {
    std::fprintf(stderr, "hipr-bench-basic: --size must be at least 1 byte\n");
    return 2;
  }
  std::vector<uint64_t> sizes = {size};
  if (sweep) sizes = {4ull << 10, 64ull << 10, 1ull << 20, 16ull << 20, 256ull << 20, 1ull << 30};
  const uint64_t max_bytes = sizes.back();

  RawPeer peer;
  RawShmPeer shm_peer;
  if (shm)
    shm_peer.Start();
  else
    peer.Start(max_bytes);  // Forked before this process allocates anything large.
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  hipDeviceProp_t prop;
  Check(hipGetDeviceProperties(&prop, 0), "hipGetDeviceProperties");
  void* dev = nullptr;
  Check(hipMalloc(&dev, max_bytes), "hipMalloc");
  // Touched before measuring, as the raw peer's buffer is: the first write
  // to fresh sim memory pays its page faults.
  Check(hipMemset(dev, 0, max_bytes), "hipMemset");
  // A read of the memory waits for the fill (a hipDeviceSynchronize guarding
  // nothing the host can see returns at once).
  char filled = 1;
  Check(hipMemcpy(&filled, dev, 1, hipMemcpyDeviceToHost), "hipMemcpy (the fill is done)");
  std::vector<char> pageable(max_bytes, 7);
  char* pinned = nullptr;
  Check(hipHostMalloc(reinterpret_cast<void**>(&pinned), max_bytes, 0), "hipHostMalloc");
  std::memset(pinned, 7, max_bytes);

  std::vector<Figure> figures;
  {
    std::vector<double> hip_rtt, raw_rtt, spin_rtt;
    for (int r = 0; r < rounds; ++r) {
      hip_rtt.push_back(Seconds([&] {
        for (int i = 0; i < kCalls; ++i) Check(hipStreamQuery(nullptr), "hipStreamQuery");
      }) / kCalls);
      spin_rtt.push_back(Seconds([&] {
        for (int i = 0; i < kCalls; ++i) shm ? shm_peer.Ping(true) : peer.SpinPing();
      }) / kCalls);
      raw_rtt.push_back(Seconds([&] {
        for (int i = 0; i < kCalls; ++i) shm ? shm_peer.Ping(false) : peer.Ping();
      }) / kCalls);
    }
    if (shm) {
      figures.push_back({"shm null sync call vs raw shm ping-pong", Median(hip_rtt) * 1e6, Median(spin_rtt) * 1e6,
                         "us"});
      figures.push_back({"  ... vs one sleeping on eventfd", Median(hip_rtt) * 1e6, Median(raw_rtt) * 1e6, "us"});
    } else {
      figures.push_back({std::string(rdma ? "rdma " : "") + "null sync call vs raw TCP ping-pong",
                         Median(hip_rtt) * 1e6, Median(spin_rtt) * 1e6, "us"});
      figures.push_back({"  ... vs one sleeping in recv()", Median(hip_rtt) * 1e6, Median(raw_rtt) * 1e6, "us"});
    }
  }
  std::vector<char> copy_target(shm || rdma ? max_bytes : 0, 3);  // memcpy baseline's destination.
  for (uint64_t n : sizes) {
    // The pageable copies, for the bytes-per-CPU-second rows.
    auto upload = [&] { Check(hipMemcpy(dev, pageable.data(), n, hipMemcpyHostToDevice), "H2D"); };
    auto download = [&] { Check(hipMemcpy(pageable.data(), dev, n, hipMemcpyDeviceToHost), "D2H"); };
    std::vector<double> h2d, h2d_pin, up, d2h, d2h_pin, down, up_staged, down_staged, copy;
    if (shm) {
      for (int r = 0; r < rounds; ++r) {
        h2d.push_back(PerCall([&] { Check(hipMemcpy(dev, pageable.data(), n, hipMemcpyHostToDevice), "H2D"); }));
        copy.push_back(PerCall([&] { Memcpy(copy_target.data(), pageable.data(), n); }));
        h2d_pin.push_back(PerCall([&] { Check(hipMemcpy(dev, pinned, n, hipMemcpyHostToDevice), "H2D pinned"); }));
        d2h.push_back(PerCall([&] { Check(hipMemcpy(pageable.data(), dev, n, hipMemcpyDeviceToHost), "D2H"); }));
        d2h_pin.push_back(PerCall([&] { Check(hipMemcpy(pinned, dev, n, hipMemcpyDeviceToHost), "D2H pinned"); }));
      }
      auto gibps = [&](const std::vector<double>& t) { return static_cast<double>(n) / Median(t) / (1ull << 30); };
      const std::string s = Size(n);
      figures.push_back({"shm H2D " + s + " vs memcpy", gibps(h2d), gibps(copy), "GiB/s"});
      figures.push_back({"shm H2D " + s + " pinned vs memcpy", gibps(h2d_pin), gibps(copy), "GiB/s"});
      figures.push_back({"shm D2H " + s + " vs memcpy", gibps(d2h), gibps(copy), "GiB/s"});
      figures.push_back({"shm D2H " + s + " pinned vs memcpy", gibps(d2h_pin), gibps(copy), "GiB/s"});
      if (n == max_bytes) {
        const double cpu_copy = GibPerCpuSecond(n, [&] { Memcpy(copy_target.data(), pageable.data(), n); });
        figures.push_back({"CPU: shm H2D " + s + " vs memcpy", GibPerCpuSecond(n, upload), cpu_copy, "GiB/CPU-s"});
        figures.push_back({"CPU: shm D2H " + s + " vs memcpy", GibPerCpuSecond(n, download), cpu_copy, "GiB/CPU-s"});
      }
      continue;
    }
    for (int r = 0; r < rounds; ++r) {
      h2d.push_back(PerCall([&] { Check(hipMemcpy(dev, pageable.data(), n, hipMemcpyHostToDevice), "H2D"); }));
      up.push_back(PerCall([&] { peer.Upload(pageable.data(), n); }));
      h2d_pin.push_back(PerCall([&] { Check(hipMemcpy(dev, pinned, n, hipMemcpyHostToDevice), "H2D pinned"); }));
      d2h.push_back(PerCall([&] { Check(hipMemcpy(pageable.data(), dev, n, hipMemcpyDeviceToHost), "D2H"); }));
      down.push_back(PerCall([&] { peer.Download(pageable.data(), n); }));
      d2h_pin.push_back(PerCall([&] { Check(hipMemcpy(pinned, dev, n, hipMemcpyDeviceToHost), "D2H pinned"); }));
      if (rdma) copy.push_back(PerCall([&] { Memcpy(copy_target.data(), pageable.data(), n); }));
      if (staged) {
        up_staged.push_back(PerCall([&] { peer.UploadStaged(pageable.data(), n); }));
        down_staged.push_back(PerCall([&] { peer.DownloadStaged(pageable.data(), n); }));
      }
    }
    auto gibps = [&](const std::vector<double>& t) { return static_cast<double>(n) / Median(t) / (1ull << 30); };
    const std::string s = Size(n);
    const std::string t = rdma ? "rdma " : "";
    figures.push_back({t + "H2D " + s + " vs raw TCP upload", gibps(h2d), gibps(up), "GiB/s"});
    figures.push_back({t + "H2D " + s + " pinned vs raw TCP upload", gibps(h2d_pin), gibps(up), "GiB/s"});
    figures.push_back({t + "D2H " + s + " vs raw TCP download", gibps(d2h), gibps(down), "GiB/s"});
    figures.push_back({t + "D2H " + s + " pinned vs raw TCP download", gibps(d2h_pin), gibps(down), "GiB/s"});
    if (rdma) {
      figures.push_back({t + "H2D " + s + " vs memcpy", gibps(h2d), gibps(copy), "GiB/s"});
      figures.push_back({t + "H2D " + s + " pinned vs memcpy", gibps(h2d_pin), gibps(copy), "GiB/s"});
      figures.push_back({t + "D2H " + s + " vs memcpy", gibps(d2h), gibps(copy), "GiB/s"});
      figures.push_back({t + "D2H " + s + " pinned vs memcpy", gibps(d2h_pin), gibps(copy), "GiB/s"});
    }
    if (n == max_bytes) {
      figures.push_back({"CPU: " + t + "H2D " + s + " vs raw TCP upload", GibPerCpuSecond(n, upload),
                         GibPerCpuSecond(n, [&] { peer.Upload(pageable.data(), n); }), "GiB/CPU-s"});
      figures.push_back({"CPU: " + t + "D2H " + s + " vs raw TCP download", GibPerCpuSecond(n, download),
                         GibPerCpuSecond(n, [&] { peer.Download(pageable.data(), n); }), "GiB/CPU-s"});
    }
    if (staged) {
      figures.push_back({"H2D " + s + " vs raw TCP + memcpy", gibps(h2d), gibps(up_staged), "GiB/s"});
      figures.push_back({"D2H " + s + " vs raw TCP + memcpy", gibps(d2h), gibps(down_staged), "GiB/s"});
    }
  }
  if (shm)
    shm_peer.Stop();
  else
    peer.Stop();
  Check(hipHostFree(pinned), "hipHostFree");
  Check(hipFree(dev), "hipFree");

  if (!note.empty()) std::printf("%s\n", note.c_str());
  std::printf("device: %s (%s), %d interleaved rounds, medians\n", prop.name, prop.gcnArchName, rounds);
  int width = 42;
  for (const Figure& f : figures) width = std::max(width, static_cast<int>(f.name.size()));
  std::printf("%-*s %12s %12s %8s\n", width, "figure", "hipr", "baseline", "ratio");
  for (const Figure& f : figures) {
    if (f.unit == "us")
      std::printf("%-*s %9.1f us %9.1f us %7.2fx\n", width, f.name.c_str(), f.hipr, f.baseline, f.hipr / f.baseline);
    else if (f.unit == "GiB/CPU-s")  // Bytes per busy CPU-second (GibPerCpuSecond).
      std::printf("%-*s %5.2f GiB/CPU-s %4.2f GiB/CPU-s %4.0f%%\n", width, f.name.c_str(), f.hipr, f.baseline,
                  f.baseline > 0 ? 100 * f.hipr / f.baseline : 0.0);
    else
      std::printf("%-*s %7.2f GiB/s %6.2f GiB/s %7.0f%%\n", width, f.name.c_str(), f.hipr, f.baseline,
                  100 * f.hipr / f.baseline);
  }
  if (json != nullptr)
    WriteJson(json, std::string(prop.name) + " (" + prop.gcnArchName + ")", note, rounds, figures);
  return 0;
}
