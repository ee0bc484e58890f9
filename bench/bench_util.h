// Helpers shared by the benchmark programs: timing, medians, HIP error
// checks, and RawPeer, the raw-TCP baseline (a forked echo/sink process on
// loopback) that every figure is measured beside.
#pragma once

#include <hip/hip_runtime_api.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace hipr_bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(const std::function<void()>& fn) {
  auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline void Check(hipError_t e, const char* what) {
  if (e != hipSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", what, hipGetErrorName(e));
    std::exit(1);
  }
}

// Bulk moves in 4 MiB syscalls, like hipr's default chunk: the fastest
// plain-socket pattern measured here (one 256 MiB call is slower).
constexpr size_t kPiece = 4u << 20;

inline void FullWrite(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = send(fd, c, std::min(n, kPiece), MSG_NOSIGNAL);
    if (w <= 0) std::exit(2);
    c += w;
    n -= static_cast<size_t>(w);
  }
}

inline void FullRead(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = recv(fd, c, std::min(n, kPiece), MSG_WAITALL);
    if (r <= 0) std::exit(2);
    c += r;
    n -= static_cast<size_t>(r);
  }
}

constexpr int kSpinUs = 50;

// Polls `fd` for up to kSpinUs until it is readable.
inline void SpinReadable(int fd) {
  pollfd pfd{fd, POLLIN, 0};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(kSpinUs);
  while (poll(&pfd, 1, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
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
  static constexpr size_t kStagePiece = 512u << 10;  // The sim's forced-staging piece.

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
      static char stage[kStagePiece];
      bool spin_next = false;
      for (;;) {
        if (spin_next) SpinReadable(c);
        struct {
          char op;
          uint64_t n;
        } __attribute__((packed)) cmd;
        char req[kRequest];
        FullRead(c, req, kRequest);
        std::memcpy(&cmd, req, sizeof cmd);
        // Only the sleeping ping ('p') leaves the peer sleeping in recv():
        // hipr polls between calls, so the transfers' baselines do too.
        spin_next = cmd.op != 'p';
        if (cmd.op == 'p' || cmd.op == 's') {
          FullWrite(c, req, kReply);
        } else if (cmd.op == 'u' && cmd.n <= max_bytes) {
          FullRead(c, buf, cmd.n);
          FullWrite(c, req, 1);
        } else if (cmd.op == 'd' && cmd.n <= max_bytes) {
          FullWrite(c, buf, cmd.n);
        } else if (cmd.op == 'U' && cmd.n <= max_bytes) {
          // As a staging worker: each 512 KiB piece lands in a buffer, then
          // one memcpy puts it in place.
          for (uint64_t at = 0; at < cmd.n; at += kStagePiece) {
            const size_t len = static_cast<size_t>(std::min<uint64_t>(kStagePiece, cmd.n - at));
            FullRead(c, stage, len);
            std::memcpy(buf + at, stage, len);
          }
          FullWrite(c, req, 1);
        } else if (cmd.op == 'D' && cmd.n <= max_bytes) {
          for (uint64_t at = 0; at < cmd.n; at += kStagePiece) {
            const size_t len = static_cast<size_t>(std::min<uint64_t>(kStagePiece, cmd.n - at));
            std::memcpy(stage, buf + at, len);
            FullWrite(c, stage, len);
          }
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
  // A ping-pong where both sides sleep in recv() while they wait.
  void Ping() {
    Command('p', 0);
    char rep[kReply];
    FullRead(fd, rep, kReply);
  }
  // The same where both sides poll for up to kSpinUs before sleeping, as
  // hipr's client and worker do (HIPR_SPIN_US, --spin-us): no sleeping
  // thread needs waking when the answer comes quickly.
  void SpinPing() {
    Command('s', 0);
    SpinReadable(fd);
    char rep[kReply];
    FullRead(fd, rep, kReply);
  }
  void Upload(const char* data, uint64_t n) {
    Command('u', n);
    FullWrite(fd, data, n);
    SpinReadable(fd);
    char ack;
    FullRead(fd, &ack, 1);
  }
  void Download(char* data, uint64_t n) {
    Command('d', n);
    SpinReadable(fd);
    FullRead(fd, data, n);
  }
  // The same with one memcpy per 512 KiB piece on the peer's side: the
  // baseline of a staging worker (raw TCP + one memcpy).
  void UploadStaged(const char* data, uint64_t n) {
    Command('U', n);
    FullWrite(fd, data, n);
    SpinReadable(fd);
    char ack;
    FullRead(fd, &ack, 1);
  }
  void DownloadStaged(char* data, uint64_t n) {
    Command('D', n);
    SpinReadable(fd);
    FullRead(fd, data, n);
  }
  void Stop() {
    Command('q', 0);
    close(fd);
    waitpid(pid, nullptr, 0);
  }
};

// The shm transport's baseline: a forked peer process and a shared page with
// one sequence word per direction and an eventfd each. A ping stores the
// next number; the peer answers by storing it back. Spinning: each side
// polls its word for up to kSpinUs, then sleeps on its eventfd after raising
// a waiting flag the other side checks (the doorbell protocol hipr's shm
// rings use). Sleeping: each side sleeps on its eventfd at once and every
// store rings.
struct RawShmPeer {
  struct alignas(64) Word {
    std::atomic<uint64_t> seq{0};
    std::atomic<uint32_t> waiting{0};
  };
  struct Shared {
    Word to_peer;
    Word to_us;
  };
  Shared* shared = nullptr;
  int bell_peer = -1;  // The peer sleeps on it.
  int bell_us = -1;
  pid_t pid = -1;
  uint64_t seq = 0;
  static constexpr uint64_t kQuit = ~uint64_t{0};

  static void Store(Word& w, int bell, uint64_t v, bool always_ring) {
    w.seq.store(v, std::memory_order_release);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (always_ring || w.waiting.exchange(0) != 0) {
      uint64_t one = 1;
      (void)!write(bell, &one, sizeof one);
    }
  }
  static uint64_t Await(Word& w, int bell, uint64_t last, bool spin) {
    uint64_t v;
    if (spin) {
      const auto deadline = Clock::now() + std::chrono::microseconds(kSpinUs);
      do {
        for (int i = 0; i < 64; ++i)
          if ((v = w.seq.load(std::memory_order_acquire)) != last) return v;
      } while (Clock::now() < deadline);
    }
    for (;;) {
      w.waiting.store(1, std::memory_order_seq_cst);
      std::atomic_thread_fence(std::memory_order_seq_cst);
      if ((v = w.seq.load(std::memory_order_acquire)) != last) return v;
      uint64_t drained;
      (void)!read(bell, &drained, sizeof drained);  // Blocking eventfd.
    }
  }
  void Start() {
    shared = new (mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)) Shared;
    bell_peer = eventfd(0, 0);
    bell_us = eventfd(0, 0);
    pid = fork();
    if (pid == 0) {
      uint64_t last = 0;
      for (;;) {
        // Odd numbers ask for a spinning answer, even ones for a sleeping one.
        bool spin = (last & 1) != 0 || last == 0;
        uint64_t v = Await(shared->to_peer, bell_peer, last, spin);
        if (v == kQuit) _exit(0);
        last = v;
        Store(shared->to_us, bell_us, v, (v & 1) == 0);
      }
    }
  }
  void Ping(bool spin) {
    seq += 1;
    if (((seq & 1) != 0) != spin) seq += 1;  // Odd: spinning, even: sleeping.
    Store(shared->to_peer, bell_peer, seq, !spin);
    last_answer = Await(shared->to_us, bell_us, last_answer, spin);
  }
  void Stop() {
    Store(shared->to_peer, bell_peer, kQuit, true);
    waitpid(pid, nullptr, 0);
  }
  uint64_t last_answer = 0;
};

// Single-thread memcpy of n bytes between two touched buffers: the shm
// transfers' baseline.
inline void Memcpy(char* dst, const char* src, uint64_t n) {
  std::memcpy(dst, src, n);
  asm volatile("" : : "r"(dst) : "memory");  // Keep the copy.
}

}  // namespace hipr_bench
