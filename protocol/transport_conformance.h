// The conformance suite every Connection (transport.h) must pass, written
// once. A transport's test file defines a ConnectionPairFactory and
// instantiates the suite:
//
//   class TcpPairs : public hipr::test::ConnectionPairFactory { ... };
//   INSTANTIATE_TYPED_TEST_SUITE_P(Tcp, TransportConformance, TcpPairs);
//
// What it checks: bytes arrive whole and in order (many small messages,
// odd and large sizes, scatter-gather on both sides); both directions at
// once with large transfers (no deadlock when each side sends more than the
// other has buffered); a receiver or sender whose peer dies at any point
// gets kLinkDown, never a hang or a signal; Shutdown() wakes a blocked
// receive or wait; back-pressure: a sender whose peer does not read
// blocks instead of buffering without bound; and the zero-copy calls
// (SendVZeroCopy, RecvVZeroCopy, ForgetMemory), mixed with the plain ones,
// carry the same bytes as they do.
#pragma once

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "protocol/transport.h"

namespace hipr::test {

struct ConnectionPair {
  std::unique_ptr<Connection> a;
  std::unique_ptr<Connection> b;
};

// A typed-test parameter provides: static ConnectionPair Make(); a connected
// pair of fresh connections (fails the test via gtest assertions inside if it
// cannot).
class ConnectionPairFactory {};

inline std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    v[i] = static_cast<uint8_t>(x);
  }
  return v;
}

template <class Factory>
class TransportConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    pair_ = Factory::Make();
    ASSERT_NE(pair_.a, nullptr);
    ASSERT_NE(pair_.b, nullptr);
  }
  Connection& a() { return *pair_.a; }
  Connection& b() { return *pair_.b; }
  // Ends one side as a dying process would (its endpoint destroyed).
  void KillB() { pair_.b.reset(); }

  ConnectionPair pair_;
};

TYPED_TEST_SUITE_P(TransportConformance);

TYPED_TEST_P(TransportConformance, ManyMessagesArriveWholeAndInOrder) {
  std::mt19937 rng(7);
  std::vector<std::vector<uint8_t>> messages;
  for (int i = 0; i < 2000; ++i) messages.push_back(Bytes(1 + rng() % 700, i));
  std::thread sender([&] {
    for (const auto& m : messages) ASSERT_TRUE(this->a().SendAll(m.data(), m.size()).ok());
  });
  for (size_t i = 0; i < messages.size(); ++i) {
    std::vector<uint8_t> got(messages[i].size());
    ASSERT_TRUE(this->b().RecvExact(got.data(), got.size()).ok()) << "message " << i;
    ASSERT_EQ(got, messages[i]) << "message " << i;
  }
  sender.join();
}

TYPED_TEST_P(TransportConformance, OddAndLargeSizesWithScatterGather) {
  for (size_t n : {size_t{1}, size_t{7}, size_t{4095}, size_t{4097}, (size_t{1} << 20) + 3, (size_t{64} << 20) + 1}) {
    SCOPED_TRACE(n);
    const std::vector<uint8_t> src = Bytes(n, static_cast<uint32_t>(n));
    // Three slices out, two in, split at unrelated points.
    const size_t s1 = n / 3;
    const size_t s2 = n / 3 + n / 5;
    std::thread sender([&] {
      iovec out[3] = {{const_cast<uint8_t*>(src.data()), s1},
                      {const_cast<uint8_t*>(src.data()) + s1, s2 - s1},
                      {const_cast<uint8_t*>(src.data()) + s2, n - s2}};
      EXPECT_TRUE(this->a().SendV(out, 3).ok());
    });
    std::vector<uint8_t> dst(n, 0);
    const size_t r1 = n / 2 + 1 > n ? n : n / 2 + 1;
    iovec in[2] = {{dst.data(), r1}, {dst.data() + r1, n - r1}};
    ASSERT_TRUE(this->b().RecvV(in, 2).ok());
    sender.join();
    ASSERT_TRUE(dst == src);
  }
}

TYPED_TEST_P(TransportConformance, BothDirectionsAtOnceDoNotDeadlock) {
  const size_t n = size_t{32} << 20;  // Far more than any socket or ring buffers.
  const std::vector<uint8_t> ab = Bytes(n, 1);
  const std::vector<uint8_t> ba = Bytes(n, 2);
  std::vector<uint8_t> got_b(n);
  std::vector<uint8_t> got_a(n);
  // Each side: one thread sends, another receives (one sender and one
  // receiver per connection, as the interface allows).
  std::thread a_send([&] { EXPECT_TRUE(this->a().SendAll(ab.data(), n).ok()); });
  std::thread b_send([&] { EXPECT_TRUE(this->b().SendAll(ba.data(), n).ok()); });
  std::thread a_recv([&] { EXPECT_TRUE(this->a().RecvExact(got_a.data(), n).ok()); });
  ASSERT_TRUE(this->b().RecvExact(got_b.data(), n).ok());
  a_send.join();
  b_send.join();
  a_recv.join();
  EXPECT_TRUE(got_b == ab);
  EXPECT_TRUE(got_a == ba);
}

TYPED_TEST_P(TransportConformance, PeerDeathBeforeDuringAndAfterAMessage) {
  // During: half a message, then the peer dies.
  const std::vector<uint8_t> half = Bytes(1000, 3);
  ASSERT_TRUE(this->b().SendAll(half.data(), half.size()).ok());
  this->KillB();
  std::vector<uint8_t> got(2000);
  Status st = this->a().RecvExact(got.data(), got.size());
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  // After: the next receive and wait fail too, at once.
  EXPECT_EQ(this->a().RecvExact(got.data(), 1).code(), StatusCode::kLinkDown);
  Status wait = this->a().WaitReadable(5000);
  EXPECT_TRUE(wait.ok() || wait.code() == StatusCode::kLinkDown) << wait.ToString();
  // A sender to the dead peer fails (eventually: buffered bytes may leave
  // first), without SIGPIPE killing the test.
  const std::vector<uint8_t> chunk = Bytes(1 << 20, 4);
  Status send;
  for (int i = 0; i < 64 && send.ok(); ++i) send = this->a().SendAll(chunk.data(), chunk.size());
  EXPECT_EQ(send.code(), StatusCode::kLinkDown) << send.ToString();
}

TYPED_TEST_P(TransportConformance, PeerDeathBeforeAnyByte) {
  this->KillB();
  uint8_t byte = 0;
  EXPECT_EQ(this->a().RecvExact(&byte, 1).code(), StatusCode::kLinkDown);
}

TYPED_TEST_P(TransportConformance, ShutdownWakesABlockedReceiveAndWait) {
  std::atomic<bool> returned{false};
  Status st;
  std::thread receiver([&] {
    uint8_t byte = 0;
    st = this->a().RecvExact(&byte, 1);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(returned.load()) << "a receive with nothing sent returned";
  const auto t0 = std::chrono::steady_clock::now();
  this->a().Shutdown();
  receiver.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(st.code(), StatusCode::kLinkDown);
  EXPECT_EQ(this->a().WaitReadable(5000).code(), StatusCode::kLinkDown);
}

// A peer that does not read: the sender blocks once the transport's own
// buffers are full, and its memory does not grow with what it tries to send.
TYPED_TEST_P(TransportConformance, SlowReceiverBlocksTheSender) {
  const size_t total = size_t{256} << 20;
  const std::vector<uint8_t> chunk = Bytes(size_t{1} << 20, 5);
  std::atomic<size_t> sent{0};
  std::thread sender([&] {
    for (size_t done = 0; done < total; done += chunk.size()) {
      if (!this->a().SendAll(chunk.data(), chunk.size()).ok()) return;
      sent += chunk.size();
    }
  });
  // Wait until the sender stops advancing (its buffers are full), however
  // slowly a loaded machine gets it there.
  size_t stalled_at = 0;
  for (int i = 0; i < 50; ++i) {
    stalled_at = sent.load();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (sent.load() == stalled_at) break;
  }
  EXPECT_LT(stalled_at, total / 4) << "the sender ran ahead of a receiver that reads nothing";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(sent.load(), stalled_at) << "the sender kept going without a reader";
  // Now read everything: the sender finishes and every byte is right.
  std::vector<uint8_t> got(chunk.size());
  for (size_t done = 0; done < total; done += chunk.size()) {
    ASSERT_TRUE(this->b().RecvExact(got.data(), got.size()).ok());
    ASSERT_TRUE(got == chunk) << "at " << done;
  }
  sender.join();
  EXPECT_EQ(sent.load(), total);
}

TYPED_TEST_P(TransportConformance, ZeroCopyCallsCarryTheSameBytes) {
  // Buffers the caller keeps in place, as pinned memory would be; every
  // combination of zero-copy and plain calls on the two ends, in odd pieces,
  // both ways, with ForgetMemory between rounds (the memory then changes).
  const size_t n = (size_t{9} << 20) + 13;
  std::vector<uint8_t> header = Bytes(24, 6);
  std::vector<uint8_t> got_header(header.size());
  for (int round = 0; round < 4; ++round) {
    const bool zc_send = round % 2 == 0;
    const bool zc_recv = round / 2 == 0;
    Connection& from = round % 2 == 0 ? this->a() : this->b();
    Connection& to = round % 2 == 0 ? this->b() : this->a();
    std::vector<uint8_t> src = Bytes(n, 7 + static_cast<uint32_t>(round));
    std::vector<uint8_t> dst(n, 0);
    std::thread sender([&] {
      const size_t s1 = (size_t{1} << 20) + 3;
      iovec out[3] = {{header.data(), header.size()}, {src.data(), s1}, {src.data() + s1, n - s1}};
      Status st = zc_send ? from.SendVZeroCopy(out, 3) : from.SendV(out, 3);
      EXPECT_TRUE(st.ok()) << st.ToString();
    });
    ASSERT_TRUE(to.RecvExact(got_header.data(), got_header.size()).ok());
    const size_t r1 = (size_t{5} << 20) + 1;
    iovec in[2] = {{dst.data(), r1}, {dst.data() + r1, n - r1}};
    Status st = zc_recv ? to.RecvVZeroCopy(in, 2) : to.RecvV(in, 2);
    sender.join();
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_TRUE(got_header == header);
    EXPECT_TRUE(dst == src) << "round " << round;
    // The buffers go away: each end forgets them (and ranges it never saw).
    from.ForgetMemory(src.data(), src.size());
    to.ForgetMemory(dst.data(), dst.size());
    to.ForgetMemory(header.data(), 1);
  }
}

REGISTER_TYPED_TEST_SUITE_P(TransportConformance, ManyMessagesArriveWholeAndInOrder, OddAndLargeSizesWithScatterGather,
                            BothDirectionsAtOnceDoNotDeadlock, PeerDeathBeforeDuringAndAfterAMessage,
                            PeerDeathBeforeAnyByte, ShutdownWakesABlockedReceiveAndWait, SlowReceiverBlocksTheSender,
                            ZeroCopyCallsCarryTheSameBytes);

}  // namespace hipr::test
