// hipr-bench-basic: the first figures, each beside its physical baseline
// measured in the same run on the same machine, interleaved (A B A B ...)
// and reported as medians:
//   - a synchronous null HIP call (hipDeviceSynchronize with nothing queued)
//     through the stub vs a raw TCP ping-pong of the same frame sizes with a
//     separate echo process;
//   - hipMemcpy H2D and D2H of 256 MiB vs raw single-connection TCP
//     throughput of the same byte count to/from a separate process.
// Run under the stub against a worker (bench/run-basic-bench starts both).
#include <hip/hip_runtime_api.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(const std::function<void()>& fn) {
  auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void Check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, hipGetErrorName(e));
    std::exit(1);
  }
}

// Bulk moves in 4 MiB syscalls, like hipr's default chunk: the fastest
// plain-socket pattern measured here (one 256 MiB call is slower).
constexpr size_t kPiece = 4u << 20;

void FullWrite(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = send(fd, c, std::min(n, kPiece), MSG_NOSIGNAL);
    if (w <= 0) std::exit(2);
    c += w;
    n -= static_cast<size_t>(w);
  }
}

void FullRead(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = recv(fd, c, std::min(n, kPiece), MSG_WAITALL);
    if (r <= 0) std::exit(2);
    c += r;
    n -= static_cast<size_t>(r);
  }
}

// A peer process on loopback: it echoes a ping, receives an upload of N
// bytes into its own N-byte buffer (acknowledging with one byte), or sends N
// bytes from that buffer. Like the worker's device memory, the peer's buffer
// is as large as the transfer, so both sides touch the same amount of memory.
struct RawPeer {
  int fd = -1;
  pid_t pid = -1;
  static constexpr size_t kRequest = 32;  // About a HIPR call frame.
  static constexpr size_t kReply = 24;    // About a HIPR reply frame.

  void Start(uint64_t max_bytes) {
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    listen(lfd, 1);
    socklen_t len = sizeof a;
    getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len);
    pid = fork();
    if (pid == 0) {
      int c = accept(lfd, nullptr, nullptr);
      int one = 1;
      setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      // Like the sim device's memory: anonymous, transparent huge pages
      // where the kernel allows them, touched once before measuring.
      auto* buf = static_cast<char*>(
          mmap(nullptr, max_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      (void)madvise(buf, max_bytes, MADV_HUGEPAGE);
      std::memset(buf, 1, max_bytes);
      for (;;) {
        struct {
          char op;
          uint64_t n;
        } __attribute__((packed)) cmd;
        char req[kRequest];
        FullRead(c, req, kRequest);
        std::memcpy(&cmd, req, sizeof cmd);
        if (cmd.op == 'p') {
          FullWrite(c, req, kReply);
        } else if (cmd.op == 'u' && cmd.n <= max_bytes) {
          FullRead(c, buf, cmd.n);
          FullWrite(c, req, 1);
        } else if (cmd.op == 'd' && cmd.n <= max_bytes) {
          FullWrite(c, buf, cmd.n);
        } else {
          _exit(0);
        }
      }
    }
    fd = socket(AF_INET, SOCK_STREAM, 0);
    connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    close(lfd);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  void Command(char op, uint64_t n) {
    char req[kRequest] = {};
    req[0] = op;
    std::memcpy(req + 1, &n, sizeof n);
    FullWrite(fd, req, kRequest);
  }
  void Ping() {
    Command('p', 0);
    char rep[kReply];
    FullRead(fd, rep, kReply);
  }
  void Upload(const char* data, uint64_t n) {
    Command('u', n);
    FullWrite(fd, data, n);
    char ack;
    FullRead(fd, &ack, 1);
  }
  void Download(char* data, uint64_t n) {
    Command('d', n);
    FullRead(fd, data, n);
  }
  void Stop() {
    Command('q', 0);
    close(fd);
    waitpid(pid, nullptr, 0);
  }
};

}  // namespace

int main(int argc, char** argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 7;
  const int kCalls = 2000;
  const uint64_t kBytes = 256ull << 20;

  RawPeer peer;
  peer.Start(kBytes);  // Forked before this process allocates anything large.
  Check(hipDeviceSynchronize(), "hipDeviceSynchronize (connect)");
  hipDeviceProp_t prop;
  Check(hipGetDeviceProperties(&prop, 0), "hipGetDeviceProperties");
  void* dev = nullptr;
  Check(hipMalloc(&dev, kBytes), "hipMalloc");
  std::vector<char> host(kBytes, 7);

  std::vector<double> hip_rtt, raw_rtt, hip_h2d, raw_up, hip_d2h, raw_down;
  for (int r = 0; r < rounds; ++r) {
    hip_rtt.push_back(Seconds([&] {
      for (int i = 0; i < kCalls; ++i) Check(hipDeviceSynchronize(), "hipDeviceSynchronize");
    }) / kCalls);
    raw_rtt.push_back(Seconds([&] {
      for (int i = 0; i < kCalls; ++i) peer.Ping();
    }) / kCalls);
    hip_h2d.push_back(Seconds([&] { Check(hipMemcpy(dev, host.data(), kBytes, hipMemcpyHostToDevice), "H2D"); }));
    raw_up.push_back(Seconds([&] { peer.Upload(host.data(), kBytes); }));
    hip_d2h.push_back(Seconds([&] { Check(hipMemcpy(host.data(), dev, kBytes, hipMemcpyDeviceToHost), "D2H"); }));
    raw_down.push_back(Seconds([&] { peer.Download(host.data(), kBytes); }));
  }
  peer.Stop();
  Check(hipFree(dev), "hipFree");

  auto gibps = [&](double s) { return static_cast<double>(kBytes) / s / (1ull << 30); };
  double a = Median(hip_rtt), b = Median(raw_rtt);
  std::printf("device: %s (%s), %d interleaved rounds, medians\n", prop.name, prop.gcnArchName, rounds);
  std::printf("%-34s %12s %12s %8s\n", "figure", "hipr", "baseline", "ratio");
  std::printf("%-34s %9.1f us %9.1f us %7.2fx\n", "null sync call vs raw TCP ping-pong", a * 1e6, b * 1e6, a / b);
  double h = gibps(Median(hip_h2d)), u = gibps(Median(raw_up));
  std::printf("%-34s %7.2f GiB/s %6.2f GiB/s %7.0f%%\n", "H2D 256 MiB vs raw TCP upload", h, u, 100 * h / u);
  double d = gibps(Median(hip_d2h)), w = gibps(Median(raw_down));
  std::printf("%-34s %7.2f GiB/s %6.2f GiB/s %7.0f%%\n", "D2H 256 MiB vs raw TCP download", d, w, 100 * d / w);
  return 0;
}
