// The worker as an attacker on its network would probe it: authentication
// (no credential, a wrong one, an unknown tenant, a replayed answer, work
// sent before answering), the start-up refusals that keep an
// unauthenticated worker off the network, and the limits that keep one
// client from locking others out. A real hipr-worker process over sockets.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "protocol/auth.h"
#include "tests/support/raw_client.h"
#include "tests/support/test_pki.h"
#include "worker_service/process/tenants.h"

namespace hipr {
static void PrintTo(StatusCode code, std::ostream* os) { *os << StatusCodeName(code); }
}  // namespace hipr

namespace hipr::test {
namespace {

using wire::Op;

const auth::Credential kTeamA{"team-a", "a-secret-of-team-a-0123456789"};
const auth::Credential kTeamB{"team-b", "b-secret-of-team-b-0123456789"};

// A temporary directory holding a tenants file.
class TenantsFile {
 public:
  explicit TenantsFile(const std::string& text, mode_t mode = 0600) {
    char tmpl[] = "/tmp/hipr-auth-XXXXXX";
    dir_ = mkdtemp(tmpl);
    path_ = dir_ + "/tenants";
    std::ofstream(path_) << text;
    chmod(path_.c_str(), mode);
  }
  ~TenantsFile() {
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

std::string TwoTenants() {
  return "# name secret [limits]\n" + kTeamA.tenant + " " + kTeamA.secret + "\n" + kTeamB.tenant + " " +
         kTeamB.secret + " sessions=1\n";
}

// A hello offering a window this process has reserved.
msg::HelloRequest Hello(const std::vector<uint8_t>& client_nonce) {
  constexpr uint64_t kWindow = uint64_t{1} << 30;
  static void* window = mmap(nullptr, kWindow, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  msg::HelloRequest hello;
  hello.window = {reinterpret_cast<uint64_t>(window), kWindow};
  hello.min_version = wire::kMinProtocolVersion;
  hello.max_version = wire::kProtocolVersion;
  hello.client_name = "security-test";
  hello.client_nonce = client_nonce;
  return hello;
}

TEST(TenantsTest, ParsesNamesSecretsAndLimits) {
  std::vector<worker::Tenant> t;
  ASSERT_TRUE(worker::ParseTenants("a 0123456789abcdef sessions=3 memory=2G\n# c\n\na 0123456789abcdeX\n", &t).ok());
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].max_sessions, 3);
  EXPECT_EQ(t[0].memory_bytes, uint64_t{2} << 30);
  EXPECT_EQ(t[1].secret, "0123456789abcdeX");
  EXPECT_EQ(t[1].max_sessions, 3);  // A second secret keeps the first line's limits.
  Status st = worker::ParseTenants("a short\n", &t);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("line 1"), std::string::npos) << st.message();
  EXPECT_FALSE(worker::ParseTenants("a 0123456789abcdef bogus=1\n", &t).ok());
  EXPECT_FALSE(worker::ParseTenants("bad/name 0123456789abcdef\n", &t).ok());
  EXPECT_FALSE(worker::ParseTenants("# nothing\n", &t).ok());
}

TEST(WorkerSecurityTest, ACredentialOpensASessionAndTheWorkerProvesItsSecret) {
  TenantsFile tenants(TwoTenants());
  WorkerProcess worker({"--auth-file", tenants.path()});
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), kTeamA, &c).ok());
  uint64_t p = 0;
  EXPECT_EQ(c->Malloc(4096, &p), 0);
  uint32_t value = 0x5eed;
  EXPECT_EQ(c->Write(p, &value, sizeof value), 0);
}

TEST(WorkerSecurityTest, NoCredentialAWrongOneAndAnUnknownTenantAreRefused) {
  TenantsFile tenants(TwoTenants());
  WorkerProcess worker({"--auth-file", tenants.path()});
  std::unique_ptr<RawClient> c;
  Status none = RawClient::Connect(worker.endpoint(), &c);
  EXPECT_EQ(none.code(), StatusCode::kUnauthenticated) << none.ToString();
  EXPECT_NE(none.message().find("HIPR_TOKEN"), std::string::npos) << none.message();

  Status wrong = RawClient::ConnectAs(worker.endpoint(), {"team-a", kTeamB.secret}, &c);
  EXPECT_EQ(wrong.code(), StatusCode::kUnauthenticated) << wrong.ToString();
  EXPECT_NE(wrong.message().find("HIPR_TOKEN"), std::string::npos) << wrong.message();

  Status unknown = RawClient::ConnectAs(worker.endpoint(), {"team-z", kTeamA.secret}, &c);
  EXPECT_EQ(unknown.code(), StatusCode::kUnauthenticated) << unknown.ToString();
  // The worker still serves a good credential.
  EXPECT_TRUE(RawClient::ConnectAs(worker.endpoint(), kTeamB, &c).ok());
}

// A recorded answer is worthless on the next connection: its challenge is
// fresh, even when the client repeats its own nonce.
TEST(WorkerSecurityTest, AReplayedAnswerIsRefused) {
  TenantsFile tenants(TwoTenants());
  WorkerProcess worker({"--auth-file", tenants.path()});
  const std::vector<uint8_t> client_nonce(auth::kNonceBytes, 0x42);
  msg::AuthRequest recorded;
  std::vector<uint8_t> first_challenge;
  {
    std::unique_ptr<RawClient> c;
    ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &c).ok());
    msg::HelloReply ask;
    ASSERT_TRUE(c->Call(Op::kHello, Hello(client_nonce), &ask).ok());
    ASSERT_EQ(ask.status, StatusCode::kUnauthenticated);
    ASSERT_EQ(ask.auth_challenge.size(), auth::kNonceBytes);
    first_challenge = ask.auth_challenge;
    recorded = {kTeamA.tenant,
                auth::Mac(auth::Role::kClient, kTeamA.secret, first_challenge, client_nonce, kTeamA.tenant)};
    msg::HelloReply reply;
    ASSERT_TRUE(c->Call(Op::kAuth, recorded, &reply).ok());
    EXPECT_EQ(reply.status, StatusCode::kOk) << reply.message;
  }
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &c).ok());
  msg::HelloReply ask;
  ASSERT_TRUE(c->Call(Op::kHello, Hello(client_nonce), &ask).ok());
  EXPECT_NE(ask.auth_challenge, first_challenge);
  msg::HelloReply reply;
  ASSERT_TRUE(c->Call(Op::kAuth, recorded, &reply).ok());
  EXPECT_EQ(reply.status, StatusCode::kUnauthenticated);
  EXPECT_TRUE(reply.auth_proof.empty());
}

// Work sent instead of the answer ends the connection unanswered.
TEST(WorkerSecurityTest, WorkBeforeTheAnswerIsNeverDone) {
  TenantsFile tenants(TwoTenants());
  WorkerProcess worker({"--auth-file", tenants.path()});
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &c).ok());
  msg::HelloReply ask;
  ASSERT_TRUE(c->Call(Op::kHello, Hello(std::vector<uint8_t>(auth::kNonceBytes, 1)), &ask).ok());
  ASSERT_EQ(ask.status, StatusCode::kUnauthenticated);
  msg::MallocRequest m;
  m.size = 4096;
  ASSERT_TRUE(c->Send(Op::kMalloc, m).ok());
  wire::FrameHeader h;
  std::vector<uint8_t> body;
  Status st = c->ReceiveAny(&h, &body, 5000);
  EXPECT_FALSE(st.ok() && h.op == wire::ReplyOp(Op::kMalloc)) << "the worker answered the malloc";
  EXPECT_TRUE(worker.Alive());
}

TEST(WorkerSecurityTest, AWorkerWithoutCredentialsStaysOnLoopbackUnlessInsecure) {
  WorkerRun open = RunWorkerToExit({"--listen", "0.0.0.0:0"});
  EXPECT_EQ(open.status, 2) << open.text;
  EXPECT_NE(open.text.find("--auth-file"), std::string::npos) << open.text;
  EXPECT_NE(open.text.find("--insecure"), std::string::npos) << open.text;

  TenantsFile writable(TwoTenants(), 0666);
  WorkerRun bad = RunWorkerToExit({"--listen", "127.0.0.1:0", "--auth-file", writable.path()});
  EXPECT_EQ(bad.status, 2) << bad.text;
  EXPECT_NE(bad.text.find("may be written by any user"), std::string::npos) << bad.text;

  TenantsFile broken("team-a short\n");
  WorkerRun unparsable = RunWorkerToExit({"--listen", "127.0.0.1:0", "--auth-file", broken.path()});
  EXPECT_EQ(unparsable.status, 2) << unparsable.text;
  EXPECT_NE(unparsable.text.find("line 1"), std::string::npos) << unparsable.text;

  WorkerProcess insecure({"--listen", "0.0.0.0:0", "--insecure"});
  std::unique_ptr<RawClient> c;
  EXPECT_TRUE(RawClient::Connect(insecure.endpoint(), &c).ok());
}

TEST(WorkerSecurityTest, TlsFlagsAreCheckedAtStartAndClientCertificatesAuthenticate) {
  char dir[] = "/tmp/hipr-worker-tls-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  hipr::test::TestPki pki;
  ASSERT_TRUE(hipr::test::MakeTestPki(dir, &pki).ok());
  WorkerRun lone = RunWorkerToExit({"--listen", "127.0.0.1:0", "--tls-cert", pki.server_cert});
  EXPECT_EQ(lone.status, 2) << lone.text;
  EXPECT_NE(lone.text.find("--tls-cert and --tls-key go together"), std::string::npos) << lone.text;
  WorkerRun mismatch =
      RunWorkerToExit({"--listen", "127.0.0.1:0", "--tls-cert", pki.server_cert, "--tls-key", pki.client_key});
  EXPECT_EQ(mismatch.status, 2) << mismatch.text;
  EXPECT_NE(mismatch.text.find("is not the key of --tls-cert"), std::string::npos) << mismatch.text;
  WorkerRun suites_alone = RunWorkerToExit({"--listen", "127.0.0.1:0", "--tls-ciphersuites", "TLS_AES_256_GCM_SHA384"});
  EXPECT_EQ(suites_alone.status, 2) << suites_alone.text;
  EXPECT_NE(suites_alone.text.find("--tls-ciphersuites need them"), std::string::npos) << suites_alone.text;
  WorkerRun bad_suites = RunWorkerToExit({"--listen", "127.0.0.1:0", "--tls-cert", pki.server_cert, "--tls-key",
                                          pki.server_key, "--tls-ciphersuites", "RC4-MD5"});
  EXPECT_EQ(bad_suites.status, 2) << bad_suites.text;
  EXPECT_NE(bad_suites.text.find("--tls-ciphersuites RC4-MD5"), std::string::npos) << bad_suites.text;
  // Client certificates authenticate: beyond loopback without --auth-file or --insecure.
  WorkerProcess mtls({"--listen", "0.0.0.0:0", "--tls-cert", pki.server_cert, "--tls-key", pki.server_key,
                      "--tls-client-ca", pki.ca});
  EXPECT_TRUE(mtls.Alive());
  // TLS alone does not: it says who the worker is, not who the client is.
  WorkerRun tls_only = RunWorkerToExit(
      {"--listen", "0.0.0.0:0", "--tls-cert", pki.server_cert, "--tls-key", pki.server_key});
  EXPECT_EQ(tls_only.status, 2) << tls_only.text;
  std::filesystem::remove_all(dir);
}

TEST(WorkerSecurityTest, TheUnixSocketAdmitsOnlyTheWorkersUserAndGroup) {
  char tmpl[] = "/tmp/hipr-sock-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/w.sock";
  {
    WorkerProcess worker({"--listen-unix", path});
    struct stat sb {};
    ASSERT_EQ(stat(path.c_str(), &sb), 0);
    EXPECT_EQ(sb.st_mode & 0777, 0660u);
  }
  unlink(path.c_str());
  rmdir(dir.c_str());
}

constexpr int kHipErrorOutOfMemory = 2;
constexpr uint64_t kMiB = uint64_t{1} << 20;

bool WaitFor(const std::function<bool()>& done, int timeout_ms = 10000) {
  for (int waited = 0; !done(); waited += 20) {
    if (waited > timeout_ms) return false;
    usleep(20000);
  }
  return true;
}

// The worker-wide budget is one pool: what one session holds another
// cannot take, and a session process that dies gives back all it held.
TEST(WorkerLimitsTest, TheMemoryBudgetIsSharedAndComesBackWhenASessionDies) {
  WorkerProcess worker({"--memory-budget", "64M"});
  std::unique_ptr<RawClient> a, b;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &a).ok());
  ASSERT_TRUE(WaitFor([&] { return worker.SessionPids().size() == 1; }));
  const pid_t a_pid = worker.SessionPids()[0];
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &b).ok());
  uint64_t pa = 0, pb = 0;
  ASSERT_EQ(a->Malloc(48 * kMiB, &pa), 0);
  EXPECT_EQ(b->Malloc(48 * kMiB, &pb), kHipErrorOutOfMemory);
  EXPECT_EQ(b->Malloc(8 * kMiB, &pb), 0);
  EXPECT_EQ(b->Free(pb), 0);
  kill(a_pid, SIGKILL);
  EXPECT_TRUE(WaitFor([&] { return b->Malloc(48 * kMiB, &pb) == 0; })) << "the dead session's memory never came back";
  EXPECT_TRUE(worker.Alive());
}

TEST(WorkerLimitsTest, TenantsAreLimitedSeparately) {
  TenantsFile tenants(kTeamA.tenant + " " + kTeamA.secret + " memory=32M\n" + kTeamB.tenant + " " + kTeamB.secret +
                      " sessions=1\n");
  WorkerProcess worker({"--auth-file", tenants.path()});
  std::unique_ptr<RawClient> a1, a2, b1, b2;
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), kTeamA, &a1).ok());
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), kTeamA, &a2).ok());
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), kTeamB, &b1).ok());
  uint64_t p = 0;
  EXPECT_EQ(a1->Malloc(24 * kMiB, &p), 0);
  EXPECT_EQ(a2->Malloc(24 * kMiB, &p), kHipErrorOutOfMemory);  // team-a's 32M together.
  EXPECT_EQ(a2->Malloc(8 * kMiB, &p), 0);
  EXPECT_EQ(b1->Malloc(48 * kMiB, &p), 0);  // team-b has no memory cap.

  Status second = RawClient::ConnectAs(worker.endpoint(), kTeamB, &b2);
  EXPECT_EQ(second.code(), StatusCode::kResourceExhausted) << second.ToString();
  EXPECT_NE(second.message().find("team-b"), std::string::npos) << second.message();
  b1.reset();  // Its session ends; the slot comes back.
  EXPECT_TRUE(WaitFor([&] { return RawClient::ConnectAs(worker.endpoint(), kTeamB, &b2).ok(); }));
}

// Connections that never say hello cannot lock clients out: from one peer
// only a few are admitted at once, and beyond half of --max-sessions the
// oldest makes room for the newcomer.
TEST(WorkerLimitsTest, SilentConnectionsCannotLockClientsOut) {
  {
    WorkerProcess worker({"--max-sessions", "4", "--hello-timeout-ms", "60000"});
    std::unique_ptr<RawClient> silent1, silent2, client;
    ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &silent1).ok());
    ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &silent2).ok());
    ASSERT_TRUE(WaitFor([&] { return worker.SessionPids().size() == 2; }));
    ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
    uint64_t p = 0;
    EXPECT_EQ(client->Malloc(4096, &p), 0);
    wire::FrameHeader h;
    std::vector<uint8_t> body;
    EXPECT_FALSE(silent1->ReceiveAny(&h, &body, 5000).ok() && h.op != static_cast<uint16_t>(Op::kFatal))
        << "the oldest silent connection was left open";
  }
  {
    WorkerProcess worker({"--max-handshakes-per-peer", "2", "--hello-timeout-ms", "60000"});
    std::unique_ptr<RawClient> silent1, silent2, third;
    ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &silent1).ok());
    ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &silent2).ok());
    ASSERT_TRUE(WaitFor([&] { return worker.SessionPids().size() == 2; }));
    Status refused = RawClient::Connect(worker.endpoint(), &third);
    EXPECT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("not finished their hello"), std::string::npos) << refused.ToString();
    silent1.reset();
    silent2.reset();
    EXPECT_TRUE(WaitFor([&] { return RawClient::Connect(worker.endpoint(), &third).ok(); }));
  }
}

TEST(WorkerLimitsTest, AnIdleSessionEndsAndSaysWhy) {
  WorkerProcess worker({"--idle-timeout-s", "1"});
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &c).ok());
  uint64_t p = 0;
  ASSERT_EQ(c->Malloc(4096, &p), 0);
  usleep(1500 * 1000);
  EXPECT_EQ(c->Malloc(4096, &p), -1);
  EXPECT_NE(c->last_status().message().find("--idle-timeout-s"), std::string::npos) << c->last_status().ToString();
  EXPECT_TRUE(worker.Alive());
}

// Creates streams first..first+n-1 (fire-and-forget) and returns the
// error the next synchronization reports (the first deferred one).
int CreateStreams(RawClient& c, uint64_t first, int n) {
  for (int i = 0; i < n; ++i) {
    msg::StreamCreateRequest m;
    m.stream = first + static_cast<uint64_t>(i);
    if (!c.Send(Op::kStreamCreate, m).ok()) return -1;
  }
  return c.Synchronize();
}

// Each sim stream is a thread: a session holds at most
// --max-streams-per-session, all sessions together --max-streams; a
// destroyed stream makes room again. Events and modules are bounded the
// same way.
TEST(WorkerLimitsTest, StreamsAndEventsAreBoundedPerSessionAndPerWorker) {
  WorkerProcess worker({"--max-streams-per-session", "4", "--max-streams", "6", "--max-events-per-session", "3"});
  std::unique_ptr<RawClient> a, b;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &a).ok());
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &b).ok());
  EXPECT_EQ(CreateStreams(*a, 100, 4), 0);
  EXPECT_EQ(CreateStreams(*a, 104, 1), kHipErrorOutOfMemory);  // The session's limit.
  EXPECT_EQ(CreateStreams(*b, 200, 2), 0);
  EXPECT_EQ(CreateStreams(*b, 202, 1), kHipErrorOutOfMemory);  // The worker's: 6 in all.
  ASSERT_TRUE(a->Send(Op::kStreamDestroy, msg::StreamRequest{100}).ok());
  EXPECT_EQ(a->Synchronize(), 0);           // The destroy has run.
  EXPECT_EQ(CreateStreams(*b, 203, 1), 0);  // Room again.

  for (uint64_t e = 1; e <= 4; ++e) ASSERT_TRUE(a->Send(Op::kEventCreate, msg::EventCreateRequest{0, e, 0}).ok());
  EXPECT_EQ(a->Synchronize(), kHipErrorOutOfMemory);
  ASSERT_TRUE(a->Send(Op::kEventDestroy, msg::EventRequest{1}).ok());
  ASSERT_TRUE(a->Send(Op::kEventCreate, msg::EventCreateRequest{0, 5, 0}).ok());
  EXPECT_EQ(a->Synchronize(), 0);
  EXPECT_TRUE(worker.Alive());
}

TEST(WorkerLimitsTest, GraphsAreBoundedPerSession) {
  WorkerProcess worker({"--max-graphs-per-session", "2"});
  std::unique_ptr<RawClient> a;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &a).ok());
  for (uint64_t g = 1; g <= 2; ++g) ASSERT_TRUE(a->Send(Op::kGraphCreate, msg::GraphCreateRequest{g, 0, {}, false, false}).ok());
  EXPECT_EQ(a->Synchronize(), 0);
  ASSERT_TRUE(a->Send(Op::kGraphCreate, msg::GraphCreateRequest{3, 0, {}, false, false}).ok());
  EXPECT_EQ(a->Synchronize(), kHipErrorOutOfMemory);
  ASSERT_TRUE(a->Send(Op::kGraphDestroy, msg::GraphRequest{1}).ok());
  ASSERT_TRUE(a->Send(Op::kGraphCreate, msg::GraphCreateRequest{3, 0, {}, false, false}).ok());
  EXPECT_EQ(a->Synchronize(), 0);
  EXPECT_TRUE(worker.Alive());
}

// A window offered at or near address 0 is never mapped there.
TEST(WorkerLimitsTest, AWindowAtAddressZeroIsCounterOffered) {
  WorkerProcess worker;
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::ConnectBare(worker.endpoint(), &c).ok());
  msg::HelloRequest hello = Hello(std::vector<uint8_t>(auth::kNonceBytes, 3));
  hello.window = {0, uint64_t{1} << 30};
  msg::HelloReply reply;
  ASSERT_TRUE(c->Call(Op::kHello, hello, &reply).ok());
  ASSERT_EQ(reply.status, StatusCode::kOk) << reply.message;
  EXPECT_GE(reply.window.base, uint64_t{1} << 32);
}

// A resuming hello (docs/protocol.md "Resuming sessions") on a fresh
// connection, authenticated as `who`: the worker's last answer. `keep`
// receives the connection.
Status ResumeHello(const std::string& endpoint, const auth::Credential& who, uint64_t session,
                   const std::vector<uint8_t>& secret, uint64_t received, msg::HelloReply* reply,
                   std::unique_ptr<RawClient>* keep = nullptr) {
  std::unique_ptr<RawClient> c;
  HIPR_RETURN_IF_ERROR(RawClient::ConnectBare(endpoint, &c));
  std::vector<uint8_t> nonce;
  HIPR_RETURN_IF_ERROR(auth::RandomNonce(&nonce));
  msg::HelloRequest hello = Hello(nonce);
  hello.features = {wire::kFeatureResume};
  hello.resume_session = session;
  hello.resume_secret = secret;
  hello.resume_received = received;
  HIPR_RETURN_IF_ERROR(c->Call(Op::kHello, hello, reply));
  if (reply->status == StatusCode::kUnauthenticated && !reply->auth_challenge.empty()) {
    const msg::AuthRequest answer{who.tenant, auth::Mac(auth::Role::kClient, who.secret, reply->auth_challenge,
                                                        nonce, who.tenant)};
    HIPR_RETURN_IF_ERROR(c->Call(Op::kAuth, answer, reply));
  }
  if (keep != nullptr) *keep = std::move(c);
  return Status::Ok();
}

// Who may resume a session whose link dropped: its own tenant, with the
// secret of the last hello (each is good once), within --resume-grace-s.
// The resumed connection gets what the client had not received: here the
// reply to a call made before the drop, sent again.
TEST(WorkerResumeTest, OnlyItsTenantWithTheCurrentSecretResumesASessionWithinTheGracePeriod) {
  TenantsFile tenants(TwoTenants());
  WorkerProcess worker({"--auth-file", tenants.path(), "--resume-grace-s", "3"});
  std::unique_ptr<RawClient> a;
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), kTeamA, &a, 16ull << 30, {wire::kFeatureResume}).ok());
  const uint64_t session = a->hello().session_id;
  const std::vector<uint8_t> first = a->hello().resume_secret;
  ASSERT_EQ(first.size(), auth::kNonceBytes);
  EXPECT_EQ(a->hello().resume_grace_ms, 3000u);
  uint64_t p = 0;
  ASSERT_EQ(a->Malloc(4096, &p), 0);
  a.reset();  // The link drops; the session waits for its client.

  msg::HelloReply r;
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamB, session, first, 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kUnauthenticated);
  EXPECT_NE(r.message.find("another tenant"), std::string::npos) << r.message;
  std::vector<uint8_t> wrong = first;
  wrong[0] ^= 1;
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, wrong, 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kUnauthenticated);
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session + 1000, first, 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kNotFound) << r.message;

  // The right tenant and secret: the session, a fresh secret, the count of
  // our bytes the worker has (the Malloc), and the Malloc's reply again
  // (we said we had received nothing).
  std::unique_ptr<RawClient> back;
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, first, 0, &r, &back).ok());
  ASSERT_EQ(r.status, StatusCode::kOk) << r.message;
  EXPECT_EQ(r.session_id, session);
  ASSERT_EQ(r.resume_secret.size(), auth::kNonceBytes);
  EXPECT_NE(r.resume_secret, first);
  EXPECT_GT(r.resume_received, 0u);
  wire::FrameHeader h;
  std::vector<uint8_t> body;
  ASSERT_TRUE(back->ReceiveAny(&h, &body).ok());
  EXPECT_EQ(h.op, wire::ReplyOp(Op::kMalloc));
  msg::MallocReply again;
  ASSERT_TRUE(codec::DecodeBody(body.data(), body.size(), &again).ok());
  EXPECT_EQ(again.address, p);
  const std::vector<uint8_t> second = r.resume_secret;
  back.reset();

  // A spent secret is refused; the fresh one works.
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, first, 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kUnauthenticated);
  EXPECT_NE(r.message.find("current"), std::string::npos) << r.message;
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, second, 0, &r, &back).ok());
  ASSERT_EQ(r.status, StatusCode::kOk) << r.message;
  const std::vector<uint8_t> third = r.resume_secret;
  back.reset();

  // Past the grace period the session is gone, and so is its process.
  usleep(4500 * 1000);
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, third, 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kNotFound) << r.message;
  for (int i = 0; i < 50 && !worker.SessionPids().empty(); ++i) usleep(100 * 1000);
  EXPECT_TRUE(worker.SessionPids().empty());
  EXPECT_TRUE(worker.Alive());
}

// Over TLS with client certificates the tenant is the certificate's: one
// from the same CA naming another tenant cannot resume the session even
// with its secret. The session's own certificate does: the process that
// made the new handshake relays for the session's process (tls_relay.h),
// the reply the client had not received comes again, and calls go on.
TEST(WorkerResumeTest, OverTlsOnlyTheSessionsCertificateResumesItThroughARelay) {
  char dir[] = "/tmp/hipr-worker-tls-resume-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  TestPki pki;
  ASSERT_TRUE(MakeTestPki(dir, &pki).ok());
  std::shared_ptr<tls::Context> mine, other;
  ASSERT_TRUE(tls::Context::MakeClient({pki.ca, pki.client_cert, pki.client_key}, &mine).ok());
  ASSERT_TRUE(tls::Context::MakeClient({pki.ca, pki.long_client_cert, pki.long_client_key}, &other).ok());
  WorkerProcess worker({"--tls-cert", pki.server_cert, "--tls-key", pki.server_key, "--tls-client-ca", pki.ca,
                        "--resume-grace-s", "3"});
  RawClient::UseTls(mine);
  std::unique_ptr<RawClient> a;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &a, 16ull << 30, {wire::kFeatureResume}).ok());
  const uint64_t session = a->hello().session_id;
  const std::vector<uint8_t> first = a->hello().resume_secret;
  ASSERT_EQ(first.size(), auth::kNonceBytes);
  uint64_t p = 0;
  ASSERT_EQ(a->Malloc(4096, &p), 0);
  a.reset();

  msg::HelloReply r;
  RawClient::UseTls(other);
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, first, 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kUnauthenticated);
  EXPECT_NE(r.message.find("another tenant"), std::string::npos) << r.message;

  RawClient::UseTls(mine);
  std::unique_ptr<RawClient> back;
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, session, first, 0, &r, &back).ok());
  ASSERT_EQ(r.status, StatusCode::kOk) << r.message;
  EXPECT_EQ(r.session_id, session);
  EXPECT_NE(r.resume_secret, first);
  wire::FrameHeader h;
  std::vector<uint8_t> body;
  ASSERT_TRUE(back->ReceiveAny(&h, &body).ok());
  EXPECT_EQ(h.op, wire::ReplyOp(Op::kMalloc));
  msg::MallocReply again;
  ASSERT_TRUE(codec::DecodeBody(body.data(), body.size(), &again).ok());
  EXPECT_EQ(again.address, p);
  // The session's process and the relay.
  EXPECT_EQ(worker.SessionPids().size(), 2u);
  // Bytes both ways through the relay.
  std::vector<uint8_t> out(1 << 20), in(1 << 20);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(i * 7 + 1);
  EXPECT_EQ(back->Write(p, out.data(), 4096), 0);
  EXPECT_EQ(back->Read(p, in.data(), 4096), 0);
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + 4096, in.begin()));
  back.reset();
  RawClient::UseTls(nullptr);

  // The relay ends with its connection, the session after its grace period.
  for (int i = 0; i < 80 && !worker.SessionPids().empty(); ++i) usleep(100 * 1000);
  EXPECT_TRUE(worker.SessionPids().empty());
  EXPECT_TRUE(worker.Alive());
  std::filesystem::remove_all(dir);
}

TEST(WorkerResumeTest, AWorkerWithoutAGracePeriodAgreesToNoResume) {
  WorkerProcess worker({"--resume-grace-s", "0"});
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &c, 16ull << 30, {wire::kFeatureResume}).ok());
  EXPECT_TRUE(c->hello().resume_secret.empty());
  for (const std::string& f : c->hello().features) EXPECT_NE(f, wire::kFeatureResume);
  msg::HelloReply r;
  ASSERT_TRUE(ResumeHello(worker.endpoint(), kTeamA, c->hello().session_id, std::vector<uint8_t>(32, 1), 0, &r).ok());
  EXPECT_EQ(r.status, StatusCode::kFailedPrecondition) << r.message;
}

}  // namespace
}  // namespace hipr::test
