// RdmaConnection on the verbs double, beyond the conformance suite: the
// zero-copy path and its registration cache, peers that die mid-transfer,
// hostile peers whose RDMA the (double's) NIC refuses, and set-up errors.
#include "protocol/rdma/rdma_connection.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <initializer_list>
#include <cstring>
#include <functional>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/rdma/rdma_test_util.h"

namespace hipr::rdma {

// Reaches past the public interface to play a peer that lies in its offers.
class RdmaConnectionTestPeer {
 public:
  static Status SendRawOffer(RdmaConnection& c, uint64_t addr, uint32_t rkey, uint32_t len) {
    return c.SendRawOffer(addr, rkey, len);
  }
  // The set-up socket, to write what a peer could write on it.
  static int SetUpSocket(RdmaConnection& c) { return c.sock_; }
};

namespace {

using test::FabricEnvironment;
using test::MakeRdmaPair;

[[maybe_unused]] ::testing::Environment* const kFabric =
    ::testing::AddGlobalTestEnvironment(new FabricEnvironment);

std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

// Collects what a connection logs.
struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> Fn() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    };
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

TEST(QpInfo, RoundTripsAndRefusesNonsense) {
  QpInfo in;
  in.qpn = 0x123456;
  in.psn = 0xABCDEF;
  for (int i = 0; i < 16; ++i) in.gid[i] = static_cast<uint8_t>(i * 3);
  in.ring_addr = 0x7f0012345000;
  in.ring_rkey = 0xDEADBEEF;
  in.ring_bytes = 8u << 20;
  in.recv_buffers = 64;
  in.buffer_bytes = 8192;
  in.rd_atomic = 16;
  uint8_t wire[kQpInfoBytes];
  EncodeQpInfo(in, wire);
  QpInfo out;
  ASSERT_TRUE(DecodeQpInfo(wire, sizeof wire, &out).ok());
  EXPECT_EQ(out.qpn, in.qpn);
  EXPECT_EQ(out.psn, in.psn);
  EXPECT_EQ(0, std::memcmp(out.gid, in.gid, 16));
  EXPECT_EQ(out.ring_addr, in.ring_addr);
  EXPECT_EQ(out.ring_rkey, in.ring_rkey);
  EXPECT_EQ(out.ring_bytes, in.ring_bytes);
  EXPECT_EQ(out.recv_buffers, in.recv_buffers);
  EXPECT_EQ(out.buffer_bytes, in.buffer_bytes);
  EXPECT_EQ(out.rd_atomic, in.rd_atomic);
  EXPECT_EQ(DecodeQpInfo(wire, sizeof wire - 1, &out).code(), StatusCode::kProtocolError);
  uint8_t bad[kQpInfoBytes];
  std::memcpy(bad, wire, sizeof bad);
  bad[0] ^= 1;
  EXPECT_EQ(DecodeQpInfo(bad, sizeof bad, &out).code(), StatusCode::kProtocolError);
  in.recv_buffers = 1u << 30;  // Would size our credit accounting.
  EncodeQpInfo(in, wire);
  EXPECT_EQ(DecodeQpInfo(wire, sizeof wire, &out).code(), StatusCode::kProtocolError);
  in.recv_buffers = 64;
  in.rd_atomic = 0;  // A peer that serves no READ cannot take offers.
  EncodeQpInfo(in, wire);
  EXPECT_EQ(DecodeQpInfo(wire, sizeof wire, &out).code(), StatusCode::kProtocolError);
}

TEST(RdmaSetUp, NoDeviceOrAnUnknownOneIsNotSupported) {
  std::unique_ptr<RdmaConnection> c;
  Options named;
  named.device = "mlx5_7";
  Status st = RdmaConnection::Create(named, &c);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  const std::string dir = std::getenv(verbs_double::kFabricEnv);
  unsetenv(verbs_double::kFabricEnv);
  st = RdmaConnection::Create(Options{}, &c);
  setenv(verbs_double::kFabricEnv, dir.c_str(), 1);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  Options odd;
  odd.chunk_bytes = odd.ring_bytes;  // A chunk must fit the ring four times.
  EXPECT_EQ(RdmaConnection::Create(odd, &c).code(), StatusCode::kInvalidArgument);
}

TEST(RdmaConnectionTest, PeerIsLocalAndNamed) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  EXPECT_TRUE(p.a->PeerIsLocal());
  EXPECT_EQ(p.a->PeerName().rfind("rdma:", 0), 0u) << p.a->PeerName();
}

TEST(RdmaConnectionTest, PinnedSendsAreZeroCopyAndHitTheCache) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{8} << 20;
  std::vector<uint8_t> pinned = Bytes(n, 11);
  const uint8_t header[16] = {1, 2, 3};
  std::vector<uint8_t> got(n + sizeof header);
  for (int round = 0; round < 3; ++round) {
    std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), got.size()).ok()); });
    iovec iov[2] = {{const_cast<uint8_t*>(header), sizeof header}, {pinned.data(), n}};
    ASSERT_TRUE(p.a->SendVZeroCopy(iov, 2).ok());
    reader.join();
    EXPECT_EQ(0, std::memcmp(got.data(), header, sizeof header));
    EXPECT_TRUE(std::equal(pinned.begin(), pinned.end(), got.begin() + sizeof header)) << "round " << round;
  }
  RdmaConnection::Stats s = p.a->stats();
  EXPECT_EQ(s.bulk_bytes_offered, 3 * n);
  EXPECT_EQ(s.bulk_bytes, 0u) << "pinned bulk is offered for the peer to READ, not written";
  EXPECT_EQ(s.bulk_bytes_copied_on_send, 0u) << "a pinned source was copied in user space";
  EXPECT_EQ(p.b->stats().bulk_bytes_read, 3 * n);
  MrCache::Stats c = p.a->registrations().stats();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, 2u);
  // The same bytes through SendV (pageable): staged, so copied once.
  std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), n).ok()); });
  ASSERT_TRUE(p.a->SendAll(pinned.data(), n).ok());
  reader.join();
  EXPECT_TRUE(std::equal(pinned.begin(), pinned.end(), got.begin()));
  EXPECT_EQ(p.a->stats().bulk_bytes_copied_on_send, n);
}

TEST(RdmaConnectionTest, InvalidatedRegistrationsAreRegisteredAnew) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{1} << 20;
  std::vector<uint8_t> pinned = Bytes(n, 12);
  std::vector<uint8_t> got(n);
  auto send = [&] {
    std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), n).ok()); });
    iovec iov{pinned.data(), n};
    EXPECT_TRUE(p.a->SendVZeroCopy(&iov, 1).ok());
    reader.join();
    EXPECT_TRUE(got == pinned);
  };
  send();
  EXPECT_EQ(p.a->registrations().stats().regions, 1u);
  // The memory is "freed": its registration goes first.
  p.a->registrations().Invalidate(pinned.data(), n);
  EXPECT_EQ(p.a->registrations().stats().regions, 0u);
  EXPECT_EQ(p.a->registrations().stats().invalidations, 1u);
  pinned = Bytes(n, 13);  // Other bytes, maybe other pages.
  send();
  EXPECT_EQ(p.a->registrations().stats().misses, 2u);
  EXPECT_EQ(p.a->stats().bulk_bytes_copied_on_send, 0u);
}

TEST(RdmaConnectionTest, ShutdownEndsThePeersStreamToo) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  p.a->Shutdown();
  uint8_t byte;
  EXPECT_EQ(p.b->RecvExact(&byte, 1).code(), StatusCode::kLinkDown);
  EXPECT_EQ(p.a->SendAll(&byte, 1).code(), StatusCode::kLinkDown);
}

// Splits [base, base + n) into iovecs of the given sizes (the last takes the rest).
std::vector<iovec> Split(uint8_t* base, size_t n, std::initializer_list<size_t> sizes) {
  std::vector<iovec> v;
  size_t at = 0;
  for (size_t s : sizes) {
    if (at + s >= n) break;
    v.push_back({base + at, s});
    at += s;
  }
  v.push_back({base + at, n - at});
  return v;
}

// Sends n bytes from `from` to `to` with the zero-copy calls, in odd pieces
// on both sides, and checks them.
void ZeroCopyTransfer(RdmaConnection& from, RdmaConnection& to, size_t n, uint32_t seed) {
  std::vector<uint8_t> src = Bytes(n, seed);
  std::vector<uint8_t> dst(n, 0);
  std::vector<iovec> out = Split(src.data(), n, {(5u << 20) + 17, (3u << 20) + 333, (1u << 20) - 1, 70001});
  std::vector<iovec> in = Split(dst.data(), n, {(2u << 20) + 5, 12345, (7u << 20) + 4097, 1});
  Status rst;
  std::thread reader([&] { rst = to.RecvVZeroCopy(in.data(), static_cast<int>(in.size())); });
  Status sst = from.SendVZeroCopy(out.data(), static_cast<int>(out.size()));
  reader.join();
  ASSERT_TRUE(sst.ok()) << sst.ToString();
  ASSERT_TRUE(rst.ok()) << rst.ToString();
  EXPECT_TRUE(dst == src);
}

TEST(RdmaZeroCopy, BothDirectionsCopyNothing) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{32} << 20;
  ZeroCopyTransfer(*p.a, *p.b, n, 31);
  ZeroCopyTransfer(*p.b, *p.a, n, 32);
  for (RdmaConnection* c : {p.a.get(), p.b.get()}) {
    const RdmaConnection::Stats s = c->stats();
    EXPECT_EQ(s.bulk_bytes_copied_on_send, 0u);
    EXPECT_EQ(s.bytes_copied_on_receive, 0u);
    EXPECT_EQ(s.bulk_bytes_pulled, 0u);
    EXPECT_EQ(s.bulk_bytes_offered, n);
    EXPECT_EQ(s.bulk_bytes_read, n);
    EXPECT_GE(s.reads, n / (1u << 20));
    EXPECT_EQ(s.bulk_bytes, 0u);
  }
}

TEST(RdmaZeroCopy, SmallSizesAndAHeaderInFront) {
  test::RdmaPair p = MakeRdmaPair(test::SmallOptions());
  ASSERT_TRUE(p.a && p.b);
  const size_t n = (size_t{3} << 20) + 7;
  std::vector<uint8_t> src = Bytes(n, 41);
  std::vector<uint8_t> header = Bytes(100, 42);
  std::vector<uint8_t> got_header(100), dst(n, 0);
  for (int round = 0; round < 3; ++round) {
    std::thread reader([&] {
      EXPECT_TRUE(p.b->RecvExact(got_header.data(), got_header.size()).ok());
      iovec in[2] = {{dst.data(), 1000}, {dst.data() + 1000, n - 1000}};
      EXPECT_TRUE(p.b->RecvVZeroCopy(in, 2).ok());
    });
    iovec out[2] = {{header.data(), header.size()}, {src.data(), n}};
    ASSERT_TRUE(p.a->SendVZeroCopy(out, 2).ok());
    reader.join();
    EXPECT_TRUE(got_header == header);
    EXPECT_TRUE(dst == src);
  }
  EXPECT_EQ(p.b->stats().bytes_copied_on_receive, 3 * header.size()) << "only the headers are copied";
  EXPECT_EQ(p.a->stats().bulk_bytes_copied_on_send, 0u);
}

// Ends both connections if `done` is not set within `seconds`, so that a
// deadlock fails the test with a message instead of hanging it.
class Watchdog {
 public:
  Watchdog(RdmaConnection& a, RdmaConnection& b, int seconds)
      : thread_([this, &a, &b, seconds] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) {
            fired_ = true;
            a.Shutdown();
            b.Shutdown();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool fired() {
    std::lock_guard<std::mutex> lock(mu_);
    return fired_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool fired_ = false;
  std::thread thread_;
};

// The receiver runs out of credits: seven of the sender's eight receives
// hold small messages the sender's application has not read yet, so every
// grant it could send back (credits for the offers it consumed, offers it
// took) has no receive to land in. Those grants go on the set-up socket,
// and each SendVZeroCopy returns although the receiver's thread has left.
TEST(RdmaZeroCopy, AReceiverWithNoCreditsStillReportsWhatItTook) {
  test::RdmaPair p = MakeRdmaPair(test::SmallOptions());
  ASSERT_TRUE(p.a && p.b);
  std::vector<std::vector<uint8_t>> notes;
  for (uint32_t i = 0; i < 7; ++i) {
    notes.push_back(Bytes(100, 90 + i));
    ASSERT_TRUE(p.b->SendAll(notes.back().data(), notes.back().size()).ok());
  }
  const size_t n = (size_t{4} << 20) + 5;
  std::vector<uint8_t> src = Bytes(n, 97);
  std::vector<uint8_t> dst(n, 0);
  {
    Watchdog watchdog(*p.a, *p.b, 60);
    for (int round = 0; round < 3 && !watchdog.fired(); ++round) {
      std::fill(dst.begin(), dst.end(), 0);
      std::thread reader([&] {
        iovec in{dst.data(), n};
        Status st = p.b->RecvVZeroCopy(&in, 1);
        EXPECT_TRUE(st.ok()) << st.ToString();
      });
      iovec out{src.data(), n};
      Status st = p.a->SendVZeroCopy(&out, 1);
      reader.join();
      ASSERT_TRUE(st.ok()) << st.ToString() << (watchdog.fired() ? " (deadlocked: the watchdog ended it)" : "");
      EXPECT_TRUE(dst == src) << "round " << round;
    }
    ASSERT_FALSE(watchdog.fired());
  }
  EXPECT_GT(p.b->stats().socket_grants, 0u);
  // The notes are still there, in order, behind all that.
  for (const auto& note : notes) {
    std::vector<uint8_t> got(note.size());
    ASSERT_TRUE(p.a->RecvExact(got.data(), got.size()).ok());
    EXPECT_TRUE(got == note);
  }
}

TEST(RdmaZeroCopy, AnOfferReadByPlainRecvVIsCopiedOnce) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = (size_t{4} << 20) + 3;
  std::vector<uint8_t> src = Bytes(n, 51);
  std::vector<uint8_t> dst(n, 0);
  std::thread reader([&] {
    iovec in[3] = {{dst.data(), 10}, {dst.data() + 10, 1u << 20}, {dst.data() + 10 + (1u << 20), n - 10 - (1u << 20)}};
    EXPECT_TRUE(p.b->RecvV(in, 3).ok());
  });
  iovec out{src.data(), n};
  ASSERT_TRUE(p.a->SendVZeroCopy(&out, 1).ok());
  reader.join();
  EXPECT_TRUE(dst == src);
  const RdmaConnection::Stats s = p.b->stats();
  EXPECT_EQ(s.bulk_bytes_read, n);
  EXPECT_EQ(s.bulk_bytes_pulled, n);
  EXPECT_EQ(s.bytes_copied_on_receive, n);
  EXPECT_EQ(p.a->stats().bulk_bytes_copied_on_send, 0u);
}

// Each side sends 64 MiB with SendVZeroCopy and only then receives: each
// side's waiting sender pulls the other's offers, so neither waits for ever.
void BothSidesSendBeforeReceiving(const Options& options) {
  test::RdmaPair p = MakeRdmaPair(options);
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{64} << 20;
  const std::vector<uint8_t> ab = Bytes(n, 61);
  const std::vector<uint8_t> ba = Bytes(n, 62);
  std::vector<uint8_t> got_a(n), got_b(n);
  auto side = [n](RdmaConnection& c, const std::vector<uint8_t>& mine, std::vector<uint8_t>& theirs) {
    iovec out{const_cast<uint8_t*>(mine.data()), n};
    Status st = c.SendVZeroCopy(&out, 1);
    EXPECT_TRUE(st.ok()) << st.ToString();
    iovec in{theirs.data(), n};
    st = c.RecvVZeroCopy(&in, 1);
    EXPECT_TRUE(st.ok()) << st.ToString();
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::thread ta([&] { side(*p.a, ab, got_a); });
  side(*p.b, ba, got_b);
  ta.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(60));
  EXPECT_TRUE(got_b == ab);
  EXPECT_TRUE(got_a == ba);
  // What was pulled while nobody received was copied out once, no more.
  for (RdmaConnection* c : {p.a.get(), p.b.get()}) {
    const RdmaConnection::Stats s = c->stats();
    EXPECT_EQ(s.bulk_bytes_read, n);
    EXPECT_GT(s.bulk_bytes_pulled, 0u);
    EXPECT_EQ(s.bytes_copied_on_receive, s.bulk_bytes_pulled);
  }
}

TEST(RdmaZeroCopy, BothSidesSendBeforeReceivingDoNotDeadlock) { BothSidesSendBeforeReceiving(Options{}); }
TEST(RdmaZeroCopy, BothSidesSendBeforeReceivingDoNotDeadlockWithSmallSizes) {
  BothSidesSendBeforeReceiving(test::SmallOptions());
}

TEST(RdmaZeroCopy, ForgetMemoryDropsRegistrationsAndTheNextUseRegistersAnew) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{2} << 20;
  std::vector<uint8_t> src = Bytes(n, 71);
  std::vector<uint8_t> dst(n, 0);
  auto transfer = [&] {
    std::thread reader([&] {
      iovec in{dst.data(), n};
      EXPECT_TRUE(p.b->RecvVZeroCopy(&in, 1).ok());
    });
    iovec out{src.data(), n};
    EXPECT_TRUE(p.a->SendVZeroCopy(&out, 1).ok());
    reader.join();
    EXPECT_TRUE(dst == src);
  };
  transfer();
  EXPECT_EQ(p.a->registrations().stats().regions, 1u);
  EXPECT_EQ(p.b->receive_registrations().stats().regions, 1u);
  // Both buffers are "freed": their registrations go first.
  p.a->ForgetMemory(src.data(), n);
  p.b->ForgetMemory(dst.data(), n);
  EXPECT_EQ(p.a->registrations().stats().regions, 0u);
  EXPECT_EQ(p.b->receive_registrations().stats().regions, 0u);
  EXPECT_EQ(p.a->registrations().stats().invalidations, 1u);
  EXPECT_EQ(p.b->receive_registrations().stats().invalidations, 1u);
  src = Bytes(n, 72);
  transfer();
  EXPECT_EQ(p.a->registrations().stats().misses, 2u);
  EXPECT_EQ(p.b->receive_registrations().stats().misses, 2u);
  EXPECT_EQ(p.b->stats().bytes_copied_on_receive, 0u);
}

// ForgetMemory of other memory in the same pages, from another thread,
// while a transfer is in flight: the registrations in use stay until the
// transfer ends.
TEST(RdmaZeroCopy, ForgetMemoryOfNeighboursDuringATransferIsSafe) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{16} << 20;
  std::vector<uint8_t> src = Bytes(n + 64, 73);
  std::vector<uint8_t> dst(n + 64, 0);
  std::atomic<bool> done{false};
  std::thread forgetter([&] {
    while (!done.load()) {
      p.a->ForgetMemory(src.data() + n + 32, 8);  // Shares a page with the source's end.
      p.b->ForgetMemory(dst.data() + n + 32, 8);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  for (int round = 0; round < 3; ++round) {
    std::thread reader([&] {
      iovec in{dst.data(), n};
      EXPECT_TRUE(p.b->RecvVZeroCopy(&in, 1).ok());
    });
    iovec out{src.data(), n};
    EXPECT_TRUE(p.a->SendVZeroCopy(&out, 1).ok());
    reader.join();
  }
  done = true;
  forgetter.join();
  EXPECT_TRUE(std::equal(dst.begin(), dst.begin() + n, src.begin()));
  EXPECT_GT(p.a->registrations().stats().invalidations, 0u);
  EXPECT_GT(p.b->receive_registrations().stats().invalidations, 0u);
}

// A grant record as the wire has it: marker 0xC7, seven zero bytes, then
// the cumulative receives granted, ring bytes read and offers taken.
std::vector<uint8_t> GrantRecordBytes(uint64_t granted, uint64_t ring_tail, uint64_t taken, uint8_t marker = 0xC7,
                                      uint8_t reserved = 0) {
  std::vector<uint8_t> r(32, 0);
  r[0] = marker;
  r[1] = reserved;
  std::memcpy(r.data() + 8, &granted, 8);
  std::memcpy(r.data() + 16, &ring_tail, 8);
  std::memcpy(r.data() + 24, &taken, 8);
  return r;
}

void WriteSetUpSocket(RdmaConnection& from, const std::vector<uint8_t>& bytes) {
  const int fd = RdmaConnectionTestPeer::SetUpSocket(from);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// Grant records a peer may send: a stale one (less than it granted
// already) and one cut in two by the socket change nothing, and the stream
// goes on.
TEST(RdmaGrantRecord, StaleOrSplitRecordsAreTaken) {
  test::RdmaPair p = MakeRdmaPair(test::SmallOptions());
  ASSERT_TRUE(p.a && p.b);
  WriteSetUpSocket(*p.a, GrantRecordBytes(1, 0, 0));
  const std::vector<uint8_t> whole = GrantRecordBytes(8, 0, 0);
  WriteSetUpSocket(*p.a, std::vector<uint8_t>(whole.begin(), whole.begin() + 11));
  EXPECT_EQ(p.b->WaitReadable(100).code(), StatusCode::kTimeout);
  WriteSetUpSocket(*p.a, std::vector<uint8_t>(whole.begin() + 11, whole.end()));
  EXPECT_EQ(p.b->WaitReadable(100).code(), StatusCode::kTimeout);
  const std::vector<uint8_t> src = Bytes(200000, 5);
  std::vector<uint8_t> dst(src.size());
  std::thread reader([&] { EXPECT_TRUE(p.a->RecvExact(dst.data(), dst.size()).ok()); });
  EXPECT_TRUE(p.b->SendAll(src.data(), src.size()).ok());
  reader.join();
  EXPECT_TRUE(dst == src);
}

// What a peer cannot have granted, a record with its reserved bytes set,
// or bytes that are no record at all: a session-scope protocol error.
void BadSetUpSocketBytes(const std::vector<uint8_t>& bytes, const std::string& want) {
  LogSink victim_log;
  Options vo = test::SmallOptions();
  vo.log = victim_log.Fn();
  test::RdmaPair p = MakeRdmaPair(test::SmallOptions(), vo);
  ASSERT_TRUE(p.a && p.b);
  WriteSetUpSocket(*p.a, bytes);
  Status st = p.b->WaitReadable(5000);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
  EXPECT_NE(victim_log.All().find(want), std::string::npos) << victim_log.All();
}

TEST(RdmaGrantRecord, MoreCreditsThanThePeerHasIsAProtocolError) {
  // Eight receives, nothing sent yet: nine is one too many.
  BadSetUpSocketBytes(GrantRecordBytes(9, 0, 0), "cannot have");
}
TEST(RdmaGrantRecord, RingBytesNeverWrittenIsAProtocolError) {
  BadSetUpSocketBytes(GrantRecordBytes(8, 1, 0), "cannot have");
}
TEST(RdmaGrantRecord, OffersNeverMadeIsAProtocolError) {
  BadSetUpSocketBytes(GrantRecordBytes(8, 0, 1), "cannot have");
}
TEST(RdmaGrantRecord, ReservedBytesSetIsAProtocolError) {
  BadSetUpSocketBytes(GrantRecordBytes(8, 0, 0, 0xC7, 1), "malformed grant record");
}
TEST(RdmaGrantRecord, OtherBytesAreAProtocolError) {
  BadSetUpSocketBytes(std::vector<uint8_t>{'R', 'P', 'I', 'H'}, "unexpected bytes");
}

// A SendVZeroCopy cut short (here by Shutdown) returns while its offers
// are untaken: the caller may free that memory at once, so the queue pair
// stops serving the peer's READs, and the peer's receive ends in kLinkDown.
TEST(RdmaZeroCopy, ASendCutShortStopsThePeersReads) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{8} << 20;
  std::vector<uint8_t> src = Bytes(n, 91);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    p.a->Shutdown();
  });
  iovec out{src.data(), n};
  Status st = p.a->SendVZeroCopy(&out, 1);  // Nobody receives.
  stopper.join();
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  std::vector<uint8_t> dst(n, 0);
  iovec in{dst.data(), n};
  const auto t0 = std::chrono::steady_clock::now();
  st = p.b->RecvVZeroCopy(&in, 1);
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// A peer whose offer names bytes we may not read (a wrong key, or past its
// region): our READ fails with IBV_WC_REM_ACCESS_ERR, and that is a
// session-scope protocol error, logged once.
void HostileOffer(bool wrong_key) {
  LogSink victim_log;
  Options vo;
  vo.log = victim_log.Fn();
  Options lo;
  lo.log = [](const std::string&) {};
  test::RdmaPair p = MakeRdmaPair(lo, vo);
  ASSERT_TRUE(p.a && p.b);
  std::vector<uint8_t> bait = Bytes(1 << 20, 81);
  ibv_mr* mr = nullptr;
  ASSERT_TRUE(p.a->registrations().Find(bait.data(), bait.size(), &mr).ok());
  const uint64_t end = reinterpret_cast<uintptr_t>(mr->addr) + mr->length;
  if (wrong_key) {
    ASSERT_TRUE(
        RdmaConnectionTestPeer::SendRawOffer(*p.a, reinterpret_cast<uintptr_t>(bait.data()), mr->rkey + 7, 4096).ok());
  } else {
    ASSERT_TRUE(RdmaConnectionTestPeer::SendRawOffer(*p.a, end - 100, mr->rkey, 4096).ok());
  }
  std::vector<uint8_t> dst(4096, 0);
  iovec in{dst.data(), dst.size()};
  Status st = p.b->RecvVZeroCopy(&in, 1);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_NE(st.message().find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << st.message();
  EXPECT_EQ(std::count(dst.begin(), dst.end(), 0), 4096);
  const std::string log = victim_log.All();
  EXPECT_NE(log.find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
  EXPECT_EQ(p.b->RecvV(&in, 1).code(), StatusCode::kProtocolError);
}

TEST(RdmaHostilePeer, OfferWithAWrongKeyIsAProtocolError) { HostileOffer(true); }
TEST(RdmaHostilePeer, OfferPastItsRegionIsAProtocolError) { HostileOffer(false); }

TEST(RdmaHostilePeer, OfferBreakingTheStreamRulesIsAProtocolError) {
  LogSink victim_log;
  Options vo;
  vo.log = victim_log.Fn();
  test::RdmaPair p = MakeRdmaPair(Options{}, vo);
  ASSERT_TRUE(p.a && p.b);
  std::vector<uint8_t> bait(4096);
  ibv_mr* mr = nullptr;
  ASSERT_TRUE(p.a->registrations().Find(bait.data(), bait.size(), &mr).ok());
  ASSERT_TRUE(RdmaConnectionTestPeer::SendRawOffer(*p.a, reinterpret_cast<uintptr_t>(bait.data()), mr->rkey, 0).ok());
  uint8_t byte;
  Status st = p.b->RecvExact(&byte, 1);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_NE(victim_log.All().find("offer"), std::string::npos) << victim_log.All();
}

// A peer that lies about our ring (its address or key) and WRITEs where we
// never allowed: the NIC refuses it, the liar gets IBV_WC_REM_ACCESS_ERR,
// we get a session-scope error naming the access violation, and not one
// byte of our memory changes.
void HostilePeer(bool wrong_key) {
  LogSink victim_log, liar_log;
  Options vo, lo;
  vo.log = victim_log.Fn();
  lo.log = liar_log.Fn();
  std::unique_ptr<RdmaConnection> victim, liar;
  ASSERT_TRUE(RdmaConnection::Create(vo, &victim).ok());
  ASSERT_TRUE(RdmaConnection::Create(lo, &liar).ok());
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  QpInfo told = victim->local_info();
  if (wrong_key)
    told.ring_rkey += 1;
  else
    told.ring_addr += told.ring_bytes;  // Just past the end of the ring.
  ASSERT_TRUE(victim->Connect(liar->local_info(), sv[0]).ok());
  ASSERT_TRUE(liar->Connect(told, sv[1]).ok());
  const std::vector<uint8_t> bulk = Bytes(256 << 10, 5);
  (void)liar->SendAll(bulk.data(), bulk.size());  // Posted; it fails in flight.
  uint8_t byte;
  Status st = victim->RecvExact(&byte, 1);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_NE(st.message().find("IBV_EVENT_QP_ACCESS_ERR"), std::string::npos) << st.message();
  EXPECT_NE(victim_log.All().find("IBV_EVENT_QP_ACCESS_ERR"), std::string::npos) << victim_log.All();
  Status lst = liar->WaitReadable(5000);
  EXPECT_EQ(lst.code(), StatusCode::kLinkDown) << lst.ToString();
  EXPECT_NE(lst.message().find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << lst.message();
  EXPECT_NE(liar_log.All().find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << liar_log.All();
  // Later calls fail at once.
  EXPECT_EQ(victim->RecvExact(&byte, 1).code(), StatusCode::kProtocolError);
  EXPECT_FALSE(liar->SendAll(bulk.data(), 100).ok());
}

TEST(RdmaHostilePeer, OutOfBoundsWriteIsRefusedAndASessionError) { HostilePeer(false); }
TEST(RdmaHostilePeer, WrongKeyWriteIsRefusedAndASessionError) { HostilePeer(true); }

// The peer is another process, killed (SIGKILL: no clean-up of any kind)
// while bulk is flowing. Either direction ends in kLinkDown, promptly.
enum class Killed { kSender, kReceiver };
void PeerKilledMidTransfer(Killed who) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  const std::vector<uint8_t> chunk = Bytes(size_t{4} << 20, 21);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    std::unique_ptr<RdmaConnection> c;
    if (!RdmaConnection::ConnectOverSocket(sv[1], Options{}, 5000, &c).ok()) _exit(1);
    std::vector<uint8_t> sink(chunk.size());
    for (;;) {  // Until killed.
      Status st = who == Killed::kSender ? c->SendAll(chunk.data(), chunk.size())
                                         : c->RecvExact(sink.data(), 64 << 10);
      if (!st.ok()) _exit(2);
      if (who == Killed::kReceiver) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  close(sv[1]);
  std::unique_ptr<RdmaConnection> c;
  ASSERT_TRUE(RdmaConnection::ConnectOverSocket(sv[0], Options{}, 5000, &c).ok());
  std::vector<uint8_t> got(chunk.size());
  if (who == Killed::kSender) {
    ASSERT_TRUE(c->RecvExact(got.data(), got.size()).ok());
    EXPECT_TRUE(got == chunk);
  } else {
    ASSERT_TRUE(c->SendAll(chunk.data(), chunk.size()).ok());
  }
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const auto t0 = std::chrono::steady_clock::now();
  Status st;
  for (int i = 0; i < 1000 && st.ok(); ++i)
    st = who == Killed::kSender ? c->RecvExact(got.data(), got.size()) : c->SendAll(chunk.data(), chunk.size());
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(RdmaPeerDeath, ASenderKilledMidWriteEndsTheReceive) { PeerKilledMidTransfer(Killed::kSender); }
TEST(RdmaPeerDeath, AReceiverKilledMidWriteEndsTheSend) { PeerKilledMidTransfer(Killed::kReceiver); }

// The same with the zero-copy calls: a sender killed while its offers are
// outstanding (the reader's READs find nobody), or a reader killed while it
// READs (the sender waits for offers to be taken).
void PeerKilledMidOffer(Killed who) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::vector<uint8_t> chunk = Bytes(size_t{4} << 20, 22);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    std::unique_ptr<RdmaConnection> c;
    if (!RdmaConnection::ConnectOverSocket(sv[1], Options{}, 5000, &c).ok()) _exit(1);
    std::vector<uint8_t> sink(chunk.size());
    for (;;) {  // Until killed.
      iovec out{chunk.data(), chunk.size()};
      iovec in{sink.data(), 64 << 10};
      Status st = who == Killed::kSender ? c->SendVZeroCopy(&out, 1) : c->RecvVZeroCopy(&in, 1);
      if (!st.ok()) _exit(2);
      if (who == Killed::kReceiver) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  close(sv[1]);
  std::unique_ptr<RdmaConnection> c;
  ASSERT_TRUE(RdmaConnection::ConnectOverSocket(sv[0], Options{}, 5000, &c).ok());
  std::vector<uint8_t> got(chunk.size());
  iovec in{got.data(), got.size()};
  iovec out{chunk.data(), chunk.size()};
  if (who == Killed::kSender) {
    ASSERT_TRUE(c->RecvVZeroCopy(&in, 1).ok());
    EXPECT_TRUE(got == chunk);
  } else {
    ASSERT_TRUE(c->SendVZeroCopy(&out, 1).ok());
  }
  // Kill it while the next transfer is under way.
  Status st;
  std::thread t([&] {
    for (int i = 0; i < 1000 && st.ok(); ++i)
      st = who == Killed::kSender ? c->RecvVZeroCopy(&in, 1) : c->SendVZeroCopy(&out, 1);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(pid, SIGKILL);
  const auto t0 = std::chrono::steady_clock::now();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  t.join();
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(RdmaPeerDeath, ASenderKilledMidOfferEndsTheReceive) { PeerKilledMidOffer(Killed::kSender); }
TEST(RdmaPeerDeath, AReceiverKilledMidReadEndsTheSend) { PeerKilledMidOffer(Killed::kReceiver); }

// A forked child drops its copy without a word: the parent's connection
// goes on.
TEST(RdmaConnectionTest, AbandonInAForkedChildLeavesTheParentsConnection) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    p.a->Abandon();
    uint8_t byte = 0;
    const bool refused = p.a->SendAll(&byte, 1).code() == StatusCode::kLinkDown;
    p.a.reset();
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::vector<uint8_t> m = Bytes(100000, 3);
  std::vector<uint8_t> got(m.size());
  std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), got.size()).ok()); });
  EXPECT_TRUE(p.a->SendAll(m.data(), m.size()).ok());
  reader.join();
  EXPECT_TRUE(got == m);
}

TEST(RdmaConnectionTest, NothingIsLeftInTheFabricDirectory) {
  {
    test::RdmaPair p = MakeRdmaPair();
    ASSERT_TRUE(p.a && p.b);
  }
  EXPECT_EQ(FabricEnvironment::fabric().FileCount(), 0);
}

}  // namespace
}  // namespace hipr::rdma
