// Modules and launches against a real hipr-worker (sim device) over real
// sockets, driven by RawClient with no stub: what the worker itself checks
// about code objects (their hash, their size, their compression), its
// code-object cache, and launches it cannot run.
//
// The code object is the gfx90a entry of module_kernels.co, built by
// Debian's hipcc (tests/e2e); its path comes from CMake.
#include <gtest/gtest.h>
#include <chrono>
#include <thread>
#include <sys/stat.h>
#include <lz4.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "protocol/auth.h"
#include "protocol/code_object/code_object.h"
#include "tests/support/raw_client.h"

namespace hipr::test {
namespace {

using wire::Op;

constexpr int kHipErrorInvalidValue = 1;
constexpr int kHipErrorInvalidImage = 200;
constexpr int kHipErrorNoBinaryForGpu = 209;
constexpr int kHipErrorInvalidHandle = 400;

std::vector<uint8_t> ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

// The gfx90a code object of module_kernels.co and its SHA-256.
struct CodeObject {
  std::vector<uint8_t> bytes;
  co::Sha256Digest sha{};
  std::vector<uint8_t> sha_bytes() const { return {sha.begin(), sha.end()}; }
};

CodeObject LoadTestModule() {
  std::vector<uint8_t> file = ReadFile(HIPR_TEST_MODULE_CO);
  co::Bundle bundle;
  Status st = co::ParseBundle(file, &bundle);
  EXPECT_TRUE(st.ok()) << st.ToString();
  co::TargetId gfx90a;
  EXPECT_TRUE(co::ParseTargetId("gfx90a", &gfx90a).ok());
  const co::BundleEntry* entry = co::SelectEntry(bundle, gfx90a);
  CodeObject c;
  if (entry == nullptr) {
    ADD_FAILURE() << "module_kernels.co has no gfx90a entry";
    return c;
  }
  c.bytes.assign(entry->bytes.begin(), entry->bytes.end());
  c.sha = co::Sha256(c.bytes);
  return c;
}

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/hipr-code-cache-XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

msg::ModuleLoadRequest Request(const CodeObject& c, uint64_t module) {
  msg::ModuleLoadRequest m;
  m.module = module;
  m.sha256 = c.sha_bytes();
  m.name = "module_kernels.co";
  return m;
}

// Sends `m` with `bulk` and returns the reply.
Status LoadWith(RawClient& client, msg::ModuleLoadRequest m, const std::vector<uint8_t>& bulk,
                msg::ModuleLoadReply* reply) {
  m.bulk_bytes = bulk.size();
  iovec iov{const_cast<uint8_t*>(bulk.data()), bulk.size()};
  uint32_t id = 0;
  HIPR_RETURN_IF_ERROR(client.Send(Op::kModuleLoad, m, &id, &iov, bulk.empty() ? 0 : 1));
  return client.Receive(Op::kModuleLoad, id, reply);
}

std::vector<uint8_t> Lz4(const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  int n = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()), reinterpret_cast<char*>(out.data()),
                               static_cast<int>(raw.size()), static_cast<int>(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

TEST(WorkerModulesTest, ShipsOnceThenServesFromTheCacheAcrossSessionsAndRestarts) {
  CodeObject c = LoadTestModule();
  ASSERT_FALSE(c.bytes.empty());
  TempDir cache;
  ASSERT_EQ(chmod(cache.path().c_str(), 0755), 0);  // As a shared directory starts; the worker closes it.
  for (int restart = 0; restart < 2; ++restart) {
    WorkerProcess worker({"--code-cache", cache.path()});
    std::unique_ptr<RawClient> client;
    ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
    msg::ModuleLoadReply r;
    ASSERT_TRUE(client->Call(Op::kModuleLoad, Request(c, 1), &r).ok());
    if (restart == 0) {
      EXPECT_TRUE(r.need_code) << "a fresh cache already had the module";
      msg::ModuleLoadRequest m = Request(c, 1);
      m.code_bytes = c.bytes.size();
      m.compression = msg::Compression::kLz4Block;
      ASSERT_TRUE(LoadWith(*client, m, Lz4(c.bytes), &r).ok());
    } else {
      EXPECT_FALSE(r.need_code) << "the cache did not survive a worker restart";
    }
    EXPECT_EQ(r.error, 0) << r.message;
    ASSERT_EQ(r.globals.size(), 1u);
    EXPECT_EQ(r.globals[0].name, "module_scale");
    EXPECT_EQ(r.globals[0].size, sizeof(float));
    const msg::AddressWindow& w = client->hello().window;
    EXPECT_TRUE(w.Contains(r.globals[0].address, r.globals[0].size)) << "variable outside the device window";
    float scale = 0;
    ASSERT_EQ(client->Read(r.globals[0].address, &scale, sizeof scale), 0);
    EXPECT_EQ(scale, 0.0f) << "without a twin the variable starts zeroed";
    // No --sim-kernels: every kernel is unavailable, and the message says why.
    EXPECT_TRUE(r.all_kernels_unavailable);
    EXPECT_TRUE(r.unavailable_kernels.empty()) << "a module-wide verdict needs no list";
    EXPECT_NE(r.message.find("twin"), std::string::npos) << r.message;

    // A second session of the same worker: served from the cache too.
    std::unique_ptr<RawClient> other;
    ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &other).ok());
    msg::ModuleLoadReply r2;
    ASSERT_TRUE(other->Call(Op::kModuleLoad, Request(c, 7), &r2).ok());
    EXPECT_FALSE(r2.need_code);
    EXPECT_EQ(r2.error, 0) << r2.message;
  }
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(cache.path())) {
    EXPECT_EQ(e.path().filename().string(), co::ToHex(c.sha) + ".co");
    struct stat st{};
    ASSERT_EQ(stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << "a cached code object is readable by other local users";
    ++files;
  }
  EXPECT_EQ(files, 1);
  struct stat dir{};
  ASSERT_EQ(stat(cache.path().c_str(), &dir), 0);
  EXPECT_EQ(dir.st_mode & 0777, 0700u) << "the cache directory is open to other local users";
}

// Tenants share no cached code: a hash alone (which proves nothing about
// holding the bytes) never loads another tenant's module or tells its
// globals; and the code objects a session holds count against its tenant's
// memory=.
TEST(WorkerModulesTest, AHashAloneNeverLoadsAnotherTenantsModule) {
  CodeObject c = LoadTestModule();
  ASSERT_GT(c.bytes.size(), 1024u);
  TempDir cache;
  const std::string tenants = cache.path() + "-tenants";
  const auth::Credential a{"team-a", "a-secret-0123456789abcdef"}, b{"team-b", "b-secret-0123456789abcdef"},
      small{"team-c", "c-secret-0123456789abcdef"};
  std::ofstream(tenants) << a.tenant << " " << a.secret << "\n"
                         << b.tenant << " " << b.secret << "\n"
                         << small.tenant << " " << small.secret << " memory=1K\n";
  ASSERT_EQ(chmod(tenants.c_str(), 0600), 0);
  WorkerProcess worker({"--code-cache", cache.path(), "--auth-file", tenants});
  auto ship = [&](RawClient& client, uint64_t module, msg::ModuleLoadReply* r) {
    msg::ModuleLoadRequest m = Request(c, module);
    m.code_bytes = c.bytes.size();
    return LoadWith(client, m, c.bytes, r);
  };
  std::unique_ptr<RawClient> ca, ca2, cb, cc;
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), a, &ca).ok());
  msg::ModuleLoadReply r;
  ASSERT_TRUE(ca->Call(Op::kModuleLoad, Request(c, 1), &r).ok());
  ASSERT_TRUE(r.need_code);
  ASSERT_TRUE(ship(*ca, 1, &r).ok());
  EXPECT_EQ(r.error, 0) << r.message;
  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), a, &ca2).ok());
  ASSERT_TRUE(ca2->Call(Op::kModuleLoad, Request(c, 1), &r).ok());
  EXPECT_FALSE(r.need_code) << "another session of the same tenant missed the cache";

  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), b, &cb).ok());
  msg::ModuleLoadReply probe;
  ASSERT_TRUE(cb->Call(Op::kModuleLoad, Request(c, 1), &probe).ok());
  EXPECT_TRUE(probe.need_code) << "team-b loaded team-a's module from its hash alone";
  EXPECT_TRUE(probe.globals.empty()) << "a hash alone told another tenant's globals";
  ASSERT_TRUE(ship(*cb, 1, &r).ok());
  EXPECT_EQ(r.error, 0) << r.message;

  ASSERT_TRUE(RawClient::ConnectAs(worker.endpoint(), small, &cc).ok());
  ASSERT_TRUE(ship(*cc, 1, &r).ok());
  EXPECT_EQ(r.error, 2) << "hipErrorOutOfMemory for a module past memory=: " << r.message;  // hipErrorOutOfMemory
  EXPECT_NE(r.message.find("code objects"), std::string::npos) << r.message;
  uint64_t p = 0;
  EXPECT_EQ(ca->Malloc(4096, &p), 0) << "the others go on";
  unlink(tenants.c_str());
}

TEST(WorkerModulesTest, AnUnusableCacheDirectoryCostsOnlyTheCache) {
  CodeObject c = LoadTestModule();
  ASSERT_FALSE(c.bytes.empty());
  TempDir tmp;
  const std::string not_a_dir = tmp.path() + "/file";
  std::ofstream(not_a_dir) << "in the way";
  WorkerProcess worker({"--code-cache", not_a_dir + "/cache"});
  for (int session = 0; session < 2; ++session) {
    std::unique_ptr<RawClient> client;
    ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
    msg::ModuleLoadReply r;
    ASSERT_TRUE(client->Call(Op::kModuleLoad, Request(c, 1), &r).ok());
    EXPECT_TRUE(r.need_code) << "nothing can have been cached";
    msg::ModuleLoadRequest m = Request(c, 1);
    m.code_bytes = c.bytes.size();
    ASSERT_TRUE(LoadWith(*client, m, c.bytes, &r).ok());
    EXPECT_EQ(r.error, 0) << r.message;
  }
  EXPECT_TRUE(worker.Alive());
}

TEST(WorkerModulesTest, RefusesBytesThatDoNotMatchTheirHashAndGoesOn) {
  CodeObject c = LoadTestModule();
  ASSERT_FALSE(c.bytes.empty());
  TempDir cache;
  WorkerProcess worker({"--code-cache", cache.path()});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());

  // The right size, one flipped byte: another tenant's hash with other code.
  std::vector<uint8_t> forged = c.bytes;
  forged[forged.size() / 2] ^= 0x40;
  msg::ModuleLoadRequest m = Request(c, 1);
  m.code_bytes = forged.size();
  msg::ModuleLoadReply r;
  ASSERT_TRUE(LoadWith(*client, m, forged, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidImage);
  EXPECT_NE(r.message.find("SHA-256"), std::string::npos) << r.message;

  // lz4 data that does not decompress to the stated size.
  std::vector<uint8_t> packed = Lz4(c.bytes);
  packed.resize(packed.size() / 2);
  m.compression = msg::Compression::kLz4Block;
  m.code_bytes = c.bytes.size();
  ASSERT_TRUE(LoadWith(*client, m, packed, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidImage) << r.message;

  // Bytes that hash right but are no code object.
  std::vector<uint8_t> junk(4096, 0x5a);
  co::Sha256Digest junk_sha = co::Sha256(junk);
  msg::ModuleLoadRequest j;
  j.module = 2;
  j.sha256.assign(junk_sha.begin(), junk_sha.end());
  j.code_bytes = junk.size();
  ASSERT_TRUE(LoadWith(*client, j, junk, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidImage);

  // None of it reached the cache, and the session still works.
  EXPECT_TRUE(std::filesystem::is_empty(cache.path()));
  ASSERT_TRUE(client->Call(Op::kModuleLoad, Request(c, 3), &r).ok());
  EXPECT_TRUE(r.need_code);
  EXPECT_EQ(client->Synchronize(), 0);
}

bool SessionStarted(const WorkerProcess& worker) {
  for (int i = 0; i < 500; ++i) {
    if (worker.SessionPids().size() == 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// The session's resident memory, from /proc (0 when unreadable).
uint64_t ResidentBytes(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

// A load that declares 1 GiB and sends 6 KB: the session holds memory for
// what arrived, not for the claim.
TEST(WorkerModulesTest, MemoryFollowsTheBytesThatArriveNotTheClaim) {
  CodeObject c = LoadTestModule();
  WorkerProcess worker({"--code-cache", ""});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
  ASSERT_TRUE(SessionStarted(worker));
  const pid_t session = worker.SessionPids()[0];
  const uint64_t before = ResidentBytes(session);
  msg::ModuleLoadRequest m = Request(c, 1);
  m.code_bytes = wire::kMaxModuleBytes;
  m.bulk_bytes = m.code_bytes;
  std::vector<uint8_t> some(6000, 0x5a);
  iovec iov{some.data(), some.size()};
  uint32_t id = 0;
  ASSERT_TRUE(client->Send(Op::kModuleLoad, m, &id, &iov, 1).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // The session has read what came.
  const uint64_t after = ResidentBytes(session);
  ASSERT_GT(before, 0u);
  EXPECT_LT(after, before + (uint64_t{64} << 20)) << "a 1 GiB claim with 6 KB sent took " << (after - before)
                                                  << " bytes";
  EXPECT_TRUE(worker.Alive());
}

// The same claim in lz4: 6 KB cannot decompress to 1 GiB (a block expands
// at most 255-fold), so the claim is refused before anything is allocated.
TEST(WorkerModulesTest, AnLz4ClaimBeyondWhatItsBytesCanHoldIsRefused) {
  CodeObject c = LoadTestModule();
  WorkerProcess worker({"--code-cache", ""});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
  msg::ModuleLoadRequest m = Request(c, 1);
  m.code_bytes = wire::kMaxModuleBytes;
  m.compression = msg::Compression::kLz4Block;
  std::vector<uint8_t> some(6000, 0x5a);
  m.bulk_bytes = some.size();
  iovec iov{some.data(), some.size()};
  uint32_t id = 0;
  ASSERT_TRUE(client->Send(Op::kModuleLoad, m, &id, &iov, 1).ok());
  msg::ModuleLoadReply r;
  Status st = client->Receive(Op::kModuleLoad, id, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("lz4 module sizes"), std::string::npos) << st.ToString();
  EXPECT_TRUE(worker.Alive());
}

TEST(WorkerModulesTest, AnOversizedModuleEndsTheSessionNotTheWorker) {
  CodeObject c = LoadTestModule();
  WorkerProcess worker({"--code-cache", ""});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
  msg::ModuleLoadRequest m = Request(c, 1);
  m.code_bytes = uint64_t{8} << 30;
  m.bulk_bytes = m.code_bytes;
  uint32_t id = 0;
  ASSERT_TRUE(client->Send(Op::kModuleLoad, m, &id).ok());
  msg::ModuleLoadReply r;
  Status st = client->Receive(Op::kModuleLoad, id, &r);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("module size"), std::string::npos) << st.ToString();
  EXPECT_TRUE(worker.Alive());
  std::unique_ptr<RawClient> next;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &next).ok());
  EXPECT_EQ(next->Synchronize(), 0);
}

TEST(WorkerModulesTest, CorruptCacheFilesAreMissesAndAreDeleted) {
  CodeObject c = LoadTestModule();
  ASSERT_FALSE(c.bytes.empty());
  TempDir cache;
  const std::string file = cache.path() + "/" + co::ToHex(c.sha) + ".co";
  {
    std::vector<uint8_t> bad = c.bytes;
    bad[100] ^= 1;
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bad.data()),
                                                static_cast<std::streamsize>(bad.size()));
  }
  WorkerProcess worker({"--code-cache", cache.path()});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
  msg::ModuleLoadReply r;
  ASSERT_TRUE(client->Call(Op::kModuleLoad, Request(c, 1), &r).ok());
  EXPECT_TRUE(r.need_code) << "a corrupt cache file was trusted";
  EXPECT_FALSE(std::filesystem::exists(file));
}

TEST(WorkerModulesTest, LaunchesWithoutATwinOrWithAnUnknownFunctionFailAtTheNextSync) {
  CodeObject c = LoadTestModule();
  ASSERT_FALSE(c.bytes.empty());
  WorkerProcess worker({"--code-cache", ""});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
  msg::ModuleLoadRequest m = Request(c, 1);
  m.code_bytes = c.bytes.size();
  msg::ModuleLoadReply r;
  ASSERT_TRUE(LoadWith(*client, m, c.bytes, &r).ok());
  ASSERT_EQ(r.error, 0) << r.message;

  msg::LaunchRequest launch;
  launch.module = 1;
  launch.function = 10;
  launch.kernel = "add_vec";
  launch.grid = {1, 1, 1};
  launch.block = {64, 1, 1};
  launch.kernarg.assign(28, 0);
  ASSERT_TRUE(client->Send(Op::kLaunchKernel, launch).ok());
  EXPECT_EQ(client->Synchronize(), kHipErrorNoBinaryForGpu);
  EXPECT_EQ(client->Synchronize(), 0) << "a deferred error is reported once";

  launch.function = 11;
  launch.kernel.clear();  // Never named.
  ASSERT_TRUE(client->Send(Op::kLaunchKernel, launch).ok());
  EXPECT_EQ(client->Synchronize(), kHipErrorInvalidHandle);

  launch.module = 99;  // Not loaded.
  launch.function = 12;
  launch.kernel = "add_vec";
  ASSERT_TRUE(client->Send(Op::kLaunchKernel, launch).ok());
  EXPECT_EQ(client->Synchronize(), kHipErrorInvalidHandle);
}

// __managed__ variables' device copies are MallocRequests with
// kMallocManaged; flags the worker does not know are refused, not ignored.
TEST(WorkerModulesTest, ManagedMallocIsServedAndUnknownFlagsAreRefused) {
  WorkerProcess worker({"--code-cache", ""});
  std::unique_ptr<RawClient> client;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &client).ok());
  msg::MallocReply r;
  ASSERT_TRUE(client->Call(Op::kMalloc, msg::MallocRequest{0, 4096, msg::kMallocManaged}, &r).ok());
  ASSERT_EQ(r.error, 0);
  ASSERT_NE(r.address, 0u);
  const uint32_t pattern = 0x5eed1e55;
  ASSERT_EQ(client->Write(r.address, &pattern, sizeof pattern), 0);
  uint32_t back = 0;
  ASSERT_EQ(client->Read(r.address, &back, sizeof back), 0);
  EXPECT_EQ(back, pattern);

  msg::MallocReply bad;
  ASSERT_TRUE(client->Call(Op::kMalloc, msg::MallocRequest{0, 4096, 1u << 7}, &bad).ok());
  EXPECT_EQ(bad.error, kHipErrorInvalidValue);
  EXPECT_EQ(bad.address, 0u);
  EXPECT_EQ(client->Free(r.address), 0) << "the session goes on";
}

}  // namespace
}  // namespace hipr::test
