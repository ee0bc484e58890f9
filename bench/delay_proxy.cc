// hipr-delay-proxy: a TCP relay that delays every byte by half a round-trip
// time in each direction, to measure hipr at a distance on one machine
// (netem needs a kernel module and root; this needs neither).
//
//   hipr-delay-proxy --to HOST:PORT --rtt DURATION [--listen HOST:PORT] [--port-file FILE]
//
// DURATION: 0, 200us, 2ms, 0.5s... Each accepted connection gets its own
// connection to --to and two pumps (one per direction). A pump's reader
// takes whatever the socket has (up to 256 KiB), stamps it with the time it
// may leave (now + rtt/2) and queues it; its writer sends each piece at its
// time. Pieces keep their order and the link keeps its bandwidth: a pump
// holds at most 64 MiB in flight, then its reader waits (backpressure).
// An end of stream is passed on after the bytes before it (shutdown of the
// write side); an error closes both sides. --listen defaults to
// 127.0.0.1:0; the port bound is printed ("listening on 127.0.0.1:PORT")
// and, with --port-file, written to FILE. Runs until killed.
//
// --reset-after N1,N2,...: the k-th connection accepted is cut after N_k
// bytes have crossed it (both directions together; later connections are
// never cut): whatever it holds in flight is dropped and both sides get a
// reset (SO_LINGER 0). For testing resumed sessions (tests/e2e resume).
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kPiece = 256 << 10;
constexpr size_t kInFlight = 64 << 20;

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "hipr-delay-proxy: %s\n"
               "usage: hipr-delay-proxy --to HOST:PORT --rtt DURATION [--listen HOST:PORT] [--port-file FILE] "
               "[--reset-after N1,N2,...]\n",
               why);
  std::exit(2);
}

// "2ms", "200us", "0.5s", "0" -> nanoseconds; -1 when not a duration.
long long ParseDuration(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || v < 0) return -1;
  const std::string unit(end);
  double scale = 0;
  if (unit == "s") scale = 1e9;
  else if (unit == "ms") scale = 1e6;
  else if (unit == "us") scale = 1e3;
  else if (unit == "ns" || (unit.empty() && v == 0)) scale = 1;
  else return -1;
  return static_cast<long long>(v * scale);
}

bool SplitHostPort(const std::string& s, std::string* host, std::string* port) {
  const size_t colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size()) return false;
  *host = s.substr(0, colon);
  *port = s.substr(colon + 1);
  return true;
}

int Connect(const std::string& host, const std::string& port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  if (fd >= 0) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// What the two pumps of a connection share: the bytes it may still carry
// before it is cut (-1: never).
struct Cut {
  std::atomic<long long> left{-1};
  std::atomic<bool> done{false};
  int a = -1;
  int b = -1;
  // `n` bytes arrived: false when they exhaust the allowance (the
  // connection is cut now, they are lost with whatever is in flight).
  bool Carry(size_t n) {
    for (;;) {
      long long l = left.load();
      if (l < 0) return true;
      const long long after = std::max<long long>(0, l - static_cast<long long>(n));
      if (!left.compare_exchange_weak(l, after)) continue;
      if (after > 0) return true;
      if (!done.exchange(true)) {
        std::fprintf(stderr, "hipr-delay-proxy: cutting a connection\n");
        shutdown(a, SHUT_RDWR);
        shutdown(b, SHUT_RDWR);
      }
      return false;
    }
  }
};

// One direction of one connection.
class Pump {
 public:
  Pump(int from, int to, Clock::duration delay, Cut* cut) : from_(from), to_(to), delay_(delay), cut_(cut) {}

  void Run() {
    std::thread writer([this] { Write(); });
    Read();
    writer.join();
  }

 private:
  struct Piece {
    Clock::time_point due;
    std::vector<char> bytes;  // Empty: the end of the stream.
  };

  void Read() {
    for (;;) {
      std::vector<char> buf(kPiece);
      const ssize_t n = recv(from_, buf.data(), buf.size(), 0);
      if (n > 0 && !cut_->Carry(static_cast<size_t>(n))) {
        // Cut: what is in flight is lost.
        std::lock_guard<std::mutex> lock(mu_);
        failed_ = true;
        queue_.clear();
        queue_.push_back(Piece{Clock::now(), {}});
        ready_.notify_one();
        room_.notify_all();
        return;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        Push(Piece{Clock::now() + delay_, {}}, n < 0);
        return;
      }
      buf.resize(static_cast<size_t>(n));
      std::unique_lock<std::mutex> lock(mu_);
      room_.wait(lock, [&] { return queued_ < kInFlight || failed_; });
      if (failed_) return;
      queued_ += buf.size();
      queue_.push_back(Piece{Clock::now() + delay_, std::move(buf)});
      ready_.notify_one();
    }
  }

  void Push(Piece p, bool error) {
    std::lock_guard<std::mutex> lock(mu_);
    if (error) failed_ = true;
    queue_.push_back(std::move(p));
    ready_.notify_one();
  }

  void Write() {
    for (;;) {
      Piece p;
      {
        std::unique_lock<std::mutex> lock(mu_);
        ready_.wait(lock, [&] { return !queue_.empty(); });
        p = std::move(queue_.front());
        queue_.pop_front();
      }
      std::this_thread::sleep_until(p.due);
      if (p.bytes.empty()) {
        std::lock_guard<std::mutex> lock(mu_);
        if (failed_) {
          shutdown(to_, SHUT_RDWR);
          shutdown(from_, SHUT_RDWR);
        } else {
          shutdown(to_, SHUT_WR);
        }
        return;
      }
      size_t at = 0;
      while (at < p.bytes.size()) {
        const ssize_t n = send(to_, p.bytes.data() + at, p.bytes.size() - at, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          // The far side is gone: end both directions.
          shutdown(to_, SHUT_RDWR);
          shutdown(from_, SHUT_RDWR);
          std::lock_guard<std::mutex> lock(mu_);
          failed_ = true;
          room_.notify_all();
          return;
        }
        at += static_cast<size_t>(n);
      }
      std::lock_guard<std::mutex> lock(mu_);
      queued_ -= p.bytes.size();
      room_.notify_all();
    }
  }

  const int from_;
  const int to_;
  const Clock::duration delay_;
  Cut* const cut_;
  std::mutex mu_;
  std::condition_variable ready_;
  std::condition_variable room_;
  std::deque<Piece> queue_;
  size_t queued_ = 0;
  bool failed_ = false;
};

void Relay(int client, std::string host, std::string port, Clock::duration delay, long long cut_after) {
  const int server = Connect(host, port);
  if (server < 0) {
    std::fprintf(stderr, "hipr-delay-proxy: cannot connect to %s:%s: %s\n", host.c_str(), port.c_str(),
                 std::strerror(errno));
    close(client);
    return;
  }
  Cut cut;
  cut.left = cut_after;
  cut.a = client;
  cut.b = server;
  Pump up(client, server, delay, &cut);
  Pump down(server, client, delay, &cut);
  std::thread t([&] { down.Run(); });
  up.Run();
  t.join();
  if (cut.done.load()) {
    // A reset, not an orderly end.
    const linger hard{1, 0};
    setsockopt(server, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
    setsockopt(client, SOL_SOCKET, SO_LINGER, &hard, sizeof hard);
  }
  close(server);
  close(client);
}

}  // namespace

int main(int argc, char** argv) {
  std::string to, listen_at = "127.0.0.1:0", port_file;
  long long rtt_ns = -1;
  std::vector<long long> cuts;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage((a + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--to") to = value();
    else if (a == "--listen") listen_at = value();
    else if (a == "--port-file") port_file = value();
    else if (a == "--reset-after") {
      const std::string v = value();
      for (size_t at = 0; at <= v.size();) {
        const size_t comma = std::min(v.find(',', at), v.size());
        char* end = nullptr;
        const std::string item = v.substr(at, comma - at);
        const long long n = std::strtoll(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || n < 0) Usage(("--reset-after " + v + ": byte counts, comma-separated").c_str());
        cuts.push_back(n);
        at = comma + 1;
      }
    }
    else if (a == "--rtt") {
      const std::string v = value();
      rtt_ns = ParseDuration(v);
      if (rtt_ns < 0) Usage(("--rtt " + v + ": not a duration (0, 200us, 2ms, 0.5s)").c_str());
    } else Usage(("unknown argument " + a).c_str());
  }
  std::string to_host, to_port, host, port;
  if (to.empty() || !SplitHostPort(to, &to_host, &to_port)) Usage("--to HOST:PORT is required");
  if (rtt_ns < 0) Usage("--rtt is required");
  if (!SplitHostPort(listen_at, &host, &port)) Usage("--listen wants HOST:PORT");
  signal(SIGPIPE, SIG_IGN);

  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::atoi(port.c_str())));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) Usage("--listen wants an IPv4 address");
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 128) != 0) {
    std::fprintf(stderr, "hipr-delay-proxy: cannot listen on %s: %s\n", listen_at.c_str(), std::strerror(errno));
    return 1;
  }
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const unsigned bound = ntohs(addr.sin_port);
  std::printf("hipr-delay-proxy: listening on %s:%u, relaying to %s with %.3f ms round trip\n", host.c_str(), bound,
              to.c_str(), rtt_ns / 1e6);
  std::fflush(stdout);
  if (!port_file.empty()) {
    const std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << bound << "\n";
    std::rename(tmp.c_str(), port_file.c_str());
  }
  const auto delay = std::chrono::nanoseconds(rtt_ns / 2);
  size_t accepted = 0;
  for (;;) {
    const int client = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        continue;
      }
      std::fprintf(stderr, "hipr-delay-proxy: accept: %s\n", std::strerror(errno));
      return 1;
    }
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const long long cut_after = accepted < cuts.size() ? cuts[accepted] : -1;
    ++accepted;
    std::thread(Relay, client, to_host, to_port, delay, cut_after).detach();
  }
}
