// Shared-memory implementation of Connection, for a client on the worker's
// own node. The byte stream travels through two single-producer,
// single-consumer rings in one memfd segment that the worker's session
// process creates, seals against resizing and passes to the client over the
// unix socket the client connected with (SCM_RIGHTS), together with four
// eventfd doorbells. A second sealed memfd, the host segment, is mapped by
// both sides too: the client places pinned host memory there, and copies to
// or from it name an offset instead of carrying bytes (SharedHostRegion()).
//
//   segment: [ header page: magic, ring size, per ring: head | tail | flags ]
//            [ ring 0: client -> worker ][ ring 1: worker -> client ]
//
// A receiver that finds its ring empty (or a sender that finds it full)
// polls for a short, adaptive time, then raises its ring's waiting flag and
// sleeps in poll() on its doorbell and the unix socket; the peer rings the
// doorbell only when it sees the flag, so a busy stream costs no system
// call and an idle one no CPU. The unix socket carries nothing after the
// set-up: it stays open only so that each side sees the other's death as
// end-of-stream. On the client, bytes that arrive on the socket after the
// ring has drained (the zygote's kFatal frame about a session process that
// died) continue the stream, as they would on tcp.
//
// The segment is shared with a process we do not trust: every index read
// from it is checked (a ring never holds more than its size), data is copied
// out before anyone parses it, and the segment's size is sealed, so a client
// cannot make the worker fault by truncating it.
//
// Thread-safety as for every Connection (transport.h): one sender and one
// receiver at a time; Shutdown() from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "protocol/transport.h"

namespace hipr::shm {

struct Options {
  // Bytes of each ring: a power of two in [kMinRingBytes, kMaxRingBytes].
  uint64_t ring_bytes = uint64_t{1} << 20;
  // Longest poll before sleeping, in microseconds (0: sleep at once). The
  // poll shrinks while it keeps ending in sleep and grows back when it
  // catches data, so an idle connection spins less and less.
  int spin_us = 50;
  // A receive that gets no byte for this long fails with kLinkDown (-1: wait
  // forever), as SO_RCVTIMEO makes a tcp receive fail. A dead peer is
  // noticed at once either way.
  int recv_timeout_ms = -1;
  // A send that finds the ring full fails with kLinkDown when, for this
  // long, the peer neither took a byte nor sent one (a frozen peer: on tcp
  // TCP_USER_TIMEOUT ends such a send). -1: wait as long as the peer lives.
  int send_timeout_ms = -1;
  // Worker: bytes of the host segment offered to the client for its pinned
  // memory (hipHostMalloc), a multiple of 4 KiB; 0 offers none. Only pages
  // the client uses take memory.
  uint64_t host_bytes = 0;
};

inline constexpr uint64_t kMinRingBytes = uint64_t{64} << 10;
inline constexpr uint64_t kMaxRingBytes = uint64_t{256} << 20;
// A power of two within the limits.
inline bool ValidRingBytes(uint64_t n) { return n >= kMinRingBytes && n <= kMaxRingBytes && (n & (n - 1)) == 0; }

// Shared control block of one ring. Head and tail are byte counts since the
// start (never wrapped); the ring holds head - tail bytes.
struct RingControl {
  alignas(64) std::atomic<uint64_t> head;  // Written by the producer only.
  alignas(64) std::atomic<uint64_t> tail;  // Written by the consumer only.
  // Set by a side about to sleep; the other side rings its doorbell when it
  // clears a set flag.
  alignas(64) std::atomic<uint32_t> consumer_waiting;
  alignas(64) std::atomic<uint32_t> producer_waiting;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free,
              "ring control words must be lock-free to be shared between processes");

class ShmConnection final : public Connection {
 public:
  ~ShmConnection() override;

  // Worker side: creates the segment and doorbells, sends them over `fd` (a
  // connected unix stream socket, ownership taken) in a kShmSetup frame.
  static Status Accept(int fd, const Options& options, std::unique_ptr<ShmConnection>* out);

  // Client side: connects to the unix socket at `path` and waits up to
  // `timeout_ms` for the set-up. A kFatal frame in its place (a worker at its
  // session limit) is returned as kResourceExhausted with its message.
  static Status Connect(const std::string& path, int timeout_ms, const Options& options,
                        std::unique_ptr<ShmConnection>* out);
  // The same on an already connected socket (ownership taken).
  static Status ConnectOnSocket(int fd, int timeout_ms, const Options& options,
                                std::unique_ptr<ShmConnection>* out);

  Status SendV(const iovec* iov, int count) override;
  Status RecvV(const iovec* iov, int count) override;
  Status WaitReadable(int timeout_ms) override;
  void Shutdown() override;
  std::string PeerName() const override;
  void Abandon() override;
  SharedRegion SharedHostRegion() const override { return {host_base_, host_bytes_}; }
  // Always: the peer maps the same memory, so it is on this host.
  bool PeerIsLocal() const override { return true; }

  // For tests: the shared control blocks (ring 0 carries client -> worker).
  RingControl* control(int ring) const;
  uint64_t ring_bytes() const { return ring_bytes_; }

 private:
  enum Side { kWorker, kClient };
  enum Bell { kDataBell0, kSpaceBell0, kDataBell1, kSpaceBell1, kBellCount };
  ShmConnection(Side side, int sock, const Options& options);
  Status Map(int memfd, uint64_t ring_bytes, bool create);
  Status MapHost(int memfd, uint64_t bytes);

  // Waits until `ready()` holds, the peer dies, we are shut down, or
  // `timeout_ms` passes (kTimeout). `flag` is the shared waiting flag the
  // peer checks; `bell` the doorbell it rings.
  template <class Ready>
  Status Wait(Ready ready, std::atomic<uint32_t>& flag, int bell, int timeout_ms);
  // After the ring has drained, on the client: reads the socket instead.
  Status RecvFromSocket(const iovec* iov, int count, size_t skip);
  void Ring(int bell);
  Status PeerGone();
  // Publishes the CPU this thread runs on (for the peer's spin) and returns it.
  int32_t NoteCpu();

  const Side side_;
  int sock_;
  int bells_[kBellCount] = {-1, -1, -1, -1};
  Options options_;
  uint8_t* base_ = nullptr;
  uint64_t map_bytes_ = 0;
  uint8_t* host_base_ = nullptr;  // The host segment, when there is one.
  uint64_t host_bytes_ = 0;
  uint64_t ring_bytes_ = 0;
  std::atomic<int32_t>* my_cpu_ = nullptr;  // In the segment header.
  std::atomic<int32_t>* peer_cpu_ = nullptr;
  RingControl* tx_ = nullptr;  // The ring we produce into.
  RingControl* rx_ = nullptr;  // The ring we consume from.
  uint8_t* tx_data_ = nullptr;
  uint8_t* rx_data_ = nullptr;
  int tx_data_bell_ = -1;   // Rung when we add data (the peer waits on it).
  int tx_space_bell_ = -1;  // We wait on it for space.
  int rx_data_bell_ = -1;   // We wait on it for data.
  int rx_space_bell_ = -1;  // Rung when we free space.
  // Our own positions: never read back from shared memory.
  uint64_t tx_head_ = 0;  // Sender's.
  uint64_t rx_tail_ = 0;  // Receiver's.
  // Adaptive spin budgets in nanoseconds, one per direction.
  int64_t tx_spin_ns_ = 0;
  int64_t rx_spin_ns_ = 0;
  // Client: the ring drained after the peer died; the socket is the stream.
  std::atomic<bool> socket_stream_{false};
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> peer_gone_{false};
};

}  // namespace hipr::shm
