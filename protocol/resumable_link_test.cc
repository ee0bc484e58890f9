// ResumableLink (resumable_link.h) over tcp connections on socket pairs
// that a chaos thread breaks at random moments: both directions' streams
// must arrive whole, exactly once, in order.
#include "protocol/resumable_link.h"

#include <gtest/gtest.h>

#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "protocol/tcp/tcp_connection.h"

namespace hipr {
namespace {

uint8_t PatternByte(uint64_t at, uint8_t salt) { return static_cast<uint8_t>((at * 131 + (at >> 9)) ^ salt); }

// Where the two sides' relinks meet: the "client" makes a fresh socket
// pair, offers one end with its count; the "worker" takes it and answers
// with its own count (the resume hello, in miniature).
struct Rendezvous {
  std::mutex mu;
  std::condition_variable cv;
  std::optional<std::pair<int, uint64_t>> offer;  // worker's fd, client's count.
  std::optional<uint64_t> answer;                 // worker's count.
  int current_fd = -1;                            // The client's end now.
  int relinks = 0;
  bool refuse = false;

  // Up to 10 s for `ready`, and no longer once `closed`.
  template <class Ready>
  bool WaitFor(std::unique_lock<std::mutex>& lock, const std::atomic<bool>& closed, Ready ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!ready()) {
      if (closed.load() || std::chrono::steady_clock::now() > deadline) return false;
      cv.wait_for(lock, std::chrono::milliseconds(20));
    }
    return true;
  }

  Status ClientRelink(uint64_t received, const std::atomic<bool>& closed, ResumableLink::Relinked* out) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return LinkDown("socketpair");
    std::unique_lock<std::mutex> lock(mu);
    if (refuse) {
      close(sv[0]);
      close(sv[1]);
      return Status(StatusCode::kNotFound, "the session is gone");
    }
    offer.emplace(sv[1], received);
    answer.reset();
    cv.notify_all();
    if (!WaitFor(lock, closed, [&] { return answer.has_value(); })) {
      close(sv[0]);
      return LinkDown("no answer");
    }
    out->peer_received = *answer;
    out->conn = std::make_unique<tcp::TcpConnection>(sv[0]);
    current_fd = sv[0];
    ++relinks;
    return Status::Ok();
  }

  Status WorkerRelink(uint64_t received, const std::atomic<bool>& closed, ResumableLink::Relinked* out) {
    std::unique_lock<std::mutex> lock(mu);
    if (!WaitFor(lock, closed, [&] { return offer.has_value(); })) return LinkDown("grace period over");
    auto [fd, client_received] = *offer;
    offer.reset();
    answer = received;
    cv.notify_all();
    out->peer_received = client_received;
    out->conn = std::make_unique<tcp::TcpConnection>(fd);
    return Status::Ok();
  }
};

struct Pair {
  Rendezvous rv;
  std::unique_ptr<ResumableLink> client;
  std::unique_ptr<ResumableLink> worker;

  Pair() {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    rv.current_fd = sv[0];
    client = std::make_unique<ResumableLink>(
        std::make_unique<tcp::TcpConnection>(sv[0]),
        [this](uint64_t received, const Status&, const std::atomic<bool>& closed, ResumableLink::Relinked* out) {
          return rv.ClientRelink(received, closed, out);
        });
    worker = std::make_unique<ResumableLink>(
        std::make_unique<tcp::TcpConnection>(sv[1]),
        [this](uint64_t received, const Status&, const std::atomic<bool>& closed, ResumableLink::Relinked* out) {
          return rv.WorkerRelink(received, closed, out);
        });
  }
  // Resets the connection under both links now.
  void Break() {
    std::lock_guard<std::mutex> lock(rv.mu);
    shutdown(rv.current_fd, SHUT_RDWR);
  }
};

// Sends `bytes` of the pattern in random pieces, acknowledging nothing
// itself (the receiving side acknowledges to it).
void SendStream(ResumableLink* link, uint64_t bytes, uint8_t salt, unsigned seed, Status* st) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> piece;
  for (uint64_t at = 0; at < bytes;) {
    const uint64_t n = std::min<uint64_t>(bytes - at, 1 + rng() % (rng() % 4 == 0 ? 3000000 : 5000));
    piece.resize(n);
    for (uint64_t i = 0; i < n; ++i) piece[i] = PatternByte(at + i, salt);
    // Two slices, as frames go (header, then body or bulk).
    const size_t cut = static_cast<size_t>(rng() % (n + 1));
    const iovec iov[2] = {{piece.data(), cut}, {piece.data() + cut, n - cut}};
    *st = link->SendV(iov, 2);
    if (!st->ok()) return;
    at += n;
  }
}

// Receives `bytes` in random pieces, checking the pattern, and tells the
// sender how much arrived (as kLinkAck frames would).
void RecvStream(ResumableLink* link, ResumableLink* sender, uint64_t bytes, uint8_t salt, unsigned seed, Status* st,
                uint64_t* wrong) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> piece;
  for (uint64_t at = 0; at < bytes;) {
    const uint64_t n = std::min<uint64_t>(bytes - at, 1 + rng() % (rng() % 4 == 0 ? 2000000 : 7000));
    piece.assign(n, 0);
    *st = link->WaitReadable(10000);
    if (!st->ok()) return;
    *st = link->RecvExact(piece.data(), n);
    if (!st->ok()) return;
    for (uint64_t i = 0; i < n; ++i)
      if (piece[i] != PatternByte(at + i, salt)) ++*wrong;
    at += n;
    if (rng() % 8 == 0) *st = sender->Acknowledge(link->received());
    if (!st->ok()) return;
  }
}

class ResumableLinkChaos : public ::testing::TestWithParam<unsigned> {};

TEST_P(ResumableLinkChaos, BothStreamsArriveWholeThroughResets) {
  const unsigned seed = GetParam();
  Pair p;
  constexpr uint64_t kBytes = 24u << 20;
  Status up_send, up_recv, down_send, down_recv;
  uint64_t up_wrong = 0, down_wrong = 0;
  std::atomic<bool> done{false};
  std::thread chaos([&] {
    std::mt19937 rng(seed * 7919);
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::microseconds(200 + rng() % 5000));
      if (!done.load()) p.Break();
    }
  });
  // Each side notices a reset while it neither reads nor writes, as the
  // client's flusher does: the last bytes may be lost after both threads
  // of one side have finished.
  auto watch = [&](ResumableLink* link) {
    while (!done.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      (void)link->CheckIdle();
    }
  };
  std::thread watcher(watch, p.client.get());
  std::thread watcher2(watch, p.worker.get());
  std::thread t1([&] { SendStream(p.client.get(), kBytes, 0x11, seed, &up_send); });
  std::thread t2([&] { RecvStream(p.worker.get(), p.client.get(), kBytes, 0x11, seed + 1, &up_recv, &up_wrong); });
  std::thread t3([&] { SendStream(p.worker.get(), kBytes, 0x5a, seed + 2, &down_send); });
  std::thread t4([&] { RecvStream(p.client.get(), p.worker.get(), kBytes, 0x5a, seed + 3, &down_recv, &down_wrong); });
  t1.join();
  t2.join();
  t3.join();
  t4.join();
  done = true;
  chaos.join();
  watcher.join();
  watcher2.join();
  EXPECT_TRUE(up_send.ok()) << up_send.ToString();
  EXPECT_TRUE(up_recv.ok()) << up_recv.ToString();
  EXPECT_TRUE(down_send.ok()) << down_send.ToString();
  EXPECT_TRUE(down_recv.ok()) << down_recv.ToString();
  EXPECT_EQ(up_wrong, 0u);
  EXPECT_EQ(down_wrong, 0u);
  EXPECT_EQ(p.worker->received(), kBytes);
  EXPECT_EQ(p.client->received(), kBytes);
  EXPECT_GT(p.client->resumes(), 0);
  EXPECT_EQ(p.client->resumes(), p.worker->resumes());
}

INSTANTIATE_TEST_SUITE_P(Seeds, ResumableLinkChaos, ::testing::Range(1u, 7u));

TEST(ResumableLinkTest, AcknowledgedBytesAreNoLongerKept) {
  Pair p;
  std::vector<uint8_t> bytes(3 * ResumableLink::kBlockBytes + 100, 7);
  std::thread reader([&] {
    std::vector<uint8_t> in(bytes.size());
    EXPECT_TRUE(p.worker->RecvExact(in.data(), in.size()).ok());
  });
  ASSERT_TRUE(p.client->SendAll(bytes.data(), bytes.size()).ok());
  reader.join();
  EXPECT_EQ(p.client->kept(), bytes.size());
  ASSERT_TRUE(p.client->Acknowledge(p.worker->received()).ok());
  EXPECT_EQ(p.client->kept(), 0u);
  // The peer cannot have more than was sent.
  EXPECT_EQ(p.client->Acknowledge(bytes.size() + 1).code(), StatusCode::kProtocolError);
}

// Lent bytes are kept by reference: a relink before their
// acknowledgement sends them again from the lender's memory.
TEST(ResumableLinkTest, LentBytesAreSentAgainFromTheLendersMemory) {
  Pair p;
  std::vector<uint8_t> bulk(5 * ResumableLink::kBlockBytes + 7);
  for (size_t i = 0; i < bulk.size(); ++i) bulk[i] = PatternByte(i, 3);
  const uint8_t header[4] = {1, 2, 3, 4};
  const iovec lend{bulk.data(), bulk.size()};
  p.client->Lend(&lend, 1);
  const iovec iov[2] = {{const_cast<uint8_t*>(header), sizeof header}, {bulk.data(), bulk.size()}};
  std::vector<uint8_t> got(sizeof header + bulk.size());
  std::thread reader([&] {
    // Half of it, then the link breaks; the rest comes after the relink.
    const size_t half = got.size() / 2;
    EXPECT_TRUE(p.worker->RecvExact(got.data(), half).ok());
    p.Break();
    EXPECT_TRUE(p.worker->RecvExact(got.data() + half, got.size() - half).ok());
  });
  ASSERT_TRUE(p.client->SendV(iov, 2).ok());
  p.client->Lend(nullptr, 0);
  // The sender notices the break while idle (as the client's flusher does).
  for (int i = 0; i < 2000 && p.client->resumes() == 0; ++i) {
    (void)p.client->CheckIdle();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  reader.join();
  EXPECT_EQ(p.client->resumes(), 1);
  EXPECT_EQ(std::memcmp(got.data(), header, sizeof header), 0);
  EXPECT_EQ(std::memcmp(got.data() + sizeof header, bulk.data(), bulk.size()), 0);
  // Only the 4 header bytes were copied into the link's own blocks.
  ASSERT_TRUE(p.client->Acknowledge(p.worker->received()).ok());
  EXPECT_EQ(p.client->kept(), 0u);
}

TEST(ResumableLinkTest, AFailedRelinkEndsTheLinkWithItsReason) {
  Pair p;
  {
    std::lock_guard<std::mutex> lock(p.rv.mu);
    p.rv.refuse = true;
  }
  p.Break();
  uint8_t byte = 0;
  Status st = p.client->RecvExact(&byte, 1);
  EXPECT_EQ(st.code(), StatusCode::kLinkDown);
  EXPECT_NE(st.message().find("the session is gone"), std::string::npos) << st.message();
  // And every later call says the same at once.
  st = p.client->SendAll(&byte, 1);
  EXPECT_NE(st.message().find("the session is gone"), std::string::npos) << st.message();
  p.worker->Shutdown();
}

TEST(ResumableLinkTest, ShutdownEndsAWaitingRelink) {
  Pair p;
  std::thread closer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    p.worker->Shutdown();
  });
  p.Break();
  uint8_t byte = 0;
  const auto start = std::chrono::steady_clock::now();
  // The worker's relink waits for an offer that never comes (the client
  // side never reads), until Shutdown.
  EXPECT_FALSE(p.worker->RecvExact(&byte, 1).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  closer.join();
  p.client->Shutdown();
}

}  // namespace
}  // namespace hipr
