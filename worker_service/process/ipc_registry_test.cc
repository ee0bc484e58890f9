// IpcRegistry (ipc_registry.h): tokens open only on the worker that made
// them, only unaltered, only while their session lives; they name their
// exporting tenant; sessions and the worker are bounded. And the tenants
// file's ipc= (tenants.h).
#include "worker_service/process/ipc_registry.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "worker_service/process/tenants.h"

namespace hipr::worker {
namespace {

using Kind = IpcRegistry::Kind;

IpcRegistry::DeviceHandle Handle(uint8_t fill) {
  IpcRegistry::DeviceHandle h{};
  h.fill(fill);
  return h;
}

class IpcRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(IpcRegistry::Create(&registry_).ok()); }
  std::unique_ptr<IpcRegistry> registry_;
};

TEST_F(IpcRegistryTest, ATokenOpensToItsDeviceHandleAndNamesItsTenant) {
  IpcRegistry::Token t{}, again{};
  ASSERT_TRUE(registry_->Export(3, 77, "team-a", Kind::kMemory, Handle(0x11), &t).ok());
  ASSERT_TRUE(registry_->Export(3, 77, "team-a", Kind::kMemory, Handle(0x11), &again).ok());
  EXPECT_EQ(t, again) << "exporting one handle twice gives one token, as hipIpcGetMemHandle does";
  EXPECT_EQ(registry_->Held(3), 1);
  IpcRegistry::Opened o;
  ASSERT_TRUE(registry_->Open(Kind::kMemory, t, &o).ok());
  EXPECT_EQ(o.handle, Handle(0x11));
  EXPECT_EQ(o.tenant, "team-a");
  EXPECT_EQ(o.tenant_digest, IpcRegistry::Digest("team-a"));
  EXPECT_NE(o.tenant_digest, IpcRegistry::Digest("team-b"));
  EXPECT_EQ(o.session_id, 77u);
  // The device's handle never appears in the token.
  const std::string token(t.begin(), t.end());
  EXPECT_EQ(token.find(std::string(16, '\x11')), std::string::npos);
}

TEST_F(IpcRegistryTest, EveryAlteredByteIsRefused) {
  IpcRegistry::Token t{};
  ASSERT_TRUE(registry_->Export(0, 1, "", Kind::kEvent, Handle(0x22), &t).ok());
  for (size_t i = 0; i < t.size(); ++i) {
    IpcRegistry::Token bad = t;
    bad[i] ^= 0x01;
    IpcRegistry::Opened o;
    EXPECT_FALSE(registry_->Open(Kind::kEvent, bad, &o).ok()) << "byte " << i;
  }
  IpcRegistry::Opened o;
  EXPECT_FALSE(registry_->Open(Kind::kEvent, IpcRegistry::Token{}, &o).ok());
  EXPECT_FALSE(registry_->Open(Kind::kMemory, t, &o).ok()) << "an event token opened as memory";
  EXPECT_TRUE(registry_->Open(Kind::kEvent, t, &o).ok());
}

TEST_F(IpcRegistryTest, AnotherWorkersTokenIsRefusedEvenAtTheSameEntry) {
  std::unique_ptr<IpcRegistry> other;
  ASSERT_TRUE(IpcRegistry::Create(&other).ok());
  IpcRegistry::Token mine{}, theirs{};
  ASSERT_TRUE(registry_->Export(0, 1, "t", Kind::kMemory, Handle(1), &mine).ok());
  ASSERT_TRUE(other->Export(0, 1, "t", Kind::kMemory, Handle(1), &theirs).ok());
  IpcRegistry::Opened o;
  Status st = registry_->Open(Kind::kMemory, theirs, &o);
  ASSERT_FALSE(st.ok()) << "a token of another worker (same entry, same generation) opened";
  EXPECT_NE(st.message().find("another worker"), std::string::npos) << st.message();
  EXPECT_TRUE(registry_->Open(Kind::kMemory, mine, &o).ok());
}

TEST_F(IpcRegistryTest, ClosingTheSlotEndsItsTokensAndNotOthers) {
  IpcRegistry::Token a{}, b{};
  ASSERT_TRUE(registry_->Export(1, 1, "x", Kind::kMemory, Handle(1), &a).ok());
  ASSERT_TRUE(registry_->Export(2, 2, "x", Kind::kMemory, Handle(1), &b).ok());
  registry_->CloseSlot(1);
  IpcRegistry::Opened o;
  EXPECT_FALSE(registry_->Open(Kind::kMemory, a, &o).ok());
  EXPECT_TRUE(registry_->Open(Kind::kMemory, b, &o).ok());
  // The entry is reused by a new export; the old token still does not open it.
  IpcRegistry::Token c{};
  ASSERT_TRUE(registry_->Export(1, 3, "y", Kind::kMemory, Handle(9), &c).ok());
  EXPECT_FALSE(registry_->Open(Kind::kMemory, a, &o).ok());
  ASSERT_TRUE(registry_->Open(Kind::kMemory, c, &o).ok());
  EXPECT_EQ(o.handle, Handle(9));
}

TEST_F(IpcRegistryTest, ASessionHoldsAtMostItsShare) {
  IpcRegistry::Token t{};
  for (int i = 0; i < IpcRegistry::kMaxPerSession; ++i) {
    IpcRegistry::DeviceHandle h{};
    h[0] = static_cast<uint8_t>(i);
    h[1] = static_cast<uint8_t>(i >> 8);
    ASSERT_TRUE(registry_->Export(5, 5, "t", Kind::kMemory, h, &t).ok()) << i;
  }
  Status st = registry_->Export(5, 5, "t", Kind::kMemory, Handle(0xEE), &t);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(registry_->Export(6, 6, "t", Kind::kMemory, Handle(0xEE), &t).ok()) << "another session is not held up";
}

TEST_F(IpcRegistryTest, SessionProcessesShareIt) {
  // A session process exports (forked, as the zygote forks sessions); the
  // parent, another process of the same worker, opens.
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    IpcRegistry::Token t{};
    const bool ok = registry_->Export(7, 70, "team-z", Kind::kPhysical, Handle(0x5A), &t).ok();
    _exit(ok && write(fds[1], t.data(), t.size()) == static_cast<ssize_t>(t.size()) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  IpcRegistry::Token t{};
  ASSERT_EQ(read(fds[0], t.data(), t.size()), static_cast<ssize_t>(t.size()));
  close(fds[0]);
  close(fds[1]);
  IpcRegistry::Opened o;
  ASSERT_TRUE(registry_->Open(Kind::kPhysical, t, &o).ok());
  EXPECT_EQ(o.tenant, "team-z");
  EXPECT_EQ(o.handle, Handle(0x5A));
}

TEST(TenantsIpcTest, IpcNamesWhoMayOpenAndNothingElseMay) {
  std::vector<Tenant> t;
  ASSERT_TRUE(ParseTenants("a 0123456789abcdef ipc=c,d\nb 0123456789abcdef\nc 0123456789abcdef\n"
                           "a 0123456789abcdeX\n",
                           &t)
                  .ok());
  ASSERT_EQ(t[0].ipc_peers, (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(t[3].ipc_peers, t[0].ipc_peers) << "a second secret keeps the first line's options";
  EXPECT_TRUE(MayOpenIpc(t, "a", "a"));
  EXPECT_TRUE(MayOpenIpc(t, "a", "c"));
  EXPECT_TRUE(MayOpenIpc(t, "a", "d"));
  EXPECT_FALSE(MayOpenIpc(t, "a", "b"));
  EXPECT_FALSE(MayOpenIpc(t, "c", "a")) << "allowing is one way";
  EXPECT_FALSE(MayOpenIpc(t, "unknown", "a"));
  EXPECT_FALSE(ParseTenants("a 0123456789abcdef ipc=\n", &t).ok());
  EXPECT_FALSE(ParseTenants("a 0123456789abcdef ipc=b,,c\n", &t).ok());
  EXPECT_FALSE(ParseTenants("a 0123456789abcdef ipc=b/c\n", &t).ok());
}

}  // namespace
}  // namespace hipr::worker
