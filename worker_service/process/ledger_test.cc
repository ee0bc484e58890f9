// The ledger's tenant table (ledger.h): a tenant is its whole name, however
// long; the table forgets idle tenants rather than refusing new ones, and
// never forgets a tenant that holds sessions or memory.
#include "worker_service/process/ledger.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace hipr::worker {
namespace {

const std::string kLong(90, 'x');

TEST(LedgerTenantsTest, ALongNameIsOneTenantAndItsLimitHolds) {
  std::unique_ptr<Ledger> l;
  ASSERT_TRUE(Ledger::Create(4, 0, &l).ok());
  l->OpenSlot(0, 1);
  l->OpenSlot(1, 2);
  ASSERT_TRUE(l->Admit(0, kLong, 1, 0).ok());
  Status second = l->Admit(1, kLong, 1, 0);
  EXPECT_EQ(second.code(), StatusCode::kResourceExhausted) << "a 90-character tenant got a second session";
  // Names that differ only past the first 64 (or 71) characters are two tenants.
  EXPECT_TRUE(l->Admit(1, kLong + "y", 1, 0).ok());
  const auto tenants = l->Tenants();
  ASSERT_EQ(tenants.size(), 2u);
  EXPECT_NE(tenants[0].name, tenants[1].name) << "two long names must stay apart in logs and metrics";
  EXPECT_LE(tenants[0].name.size(), Ledger::kShownTenantBytes);
  EXPECT_EQ(tenants[0].name.substr(0, 48), kLong.substr(0, 48));
}

TEST(LedgerTenantsTest, MemoryIsChargedToTheWholeName) {
  std::unique_ptr<Ledger> l;
  ASSERT_TRUE(Ledger::Create(4, 0, &l).ok());
  l->OpenSlot(0, 1);
  l->OpenSlot(1, 2);
  ASSERT_TRUE(l->Admit(0, kLong, 0, 1 << 20).ok());
  ASSERT_TRUE(l->Admit(1, kLong, 0, 1 << 20).ok());
  ASSERT_TRUE(l->Charge(0, 768 << 10).ok());
  EXPECT_EQ(l->Charge(1, 512 << 10).code(), StatusCode::kResourceExhausted)
      << "two sessions of one long-named tenant each got its whole memory=";
}

TEST(LedgerTenantsTest, IdleTenantsAreForgottenNewOnesNeverRefused) {
  std::unique_ptr<Ledger> l;
  ASSERT_TRUE(Ledger::Create(4, 0, &l).ok());
  // A tenant that keeps a session and one that keeps memory.
  l->OpenSlot(0, 1);
  ASSERT_TRUE(l->Admit(0, "busy", 1, 0).ok());
  l->OpenSlot(1, 2);
  ASSERT_TRUE(l->Admit(1, "holder", 0, 0).ok());
  ASSERT_TRUE(l->Charge(1, 4096).ok());
  // Far more distinct names than the table holds, one session each.
  for (int i = 0; i < 3 * Ledger::kMinTenants; ++i) {
    l->OpenSlot(2, 100 + i);
    ASSERT_TRUE(l->Admit(2, "cert-name-" + std::to_string(i), 1, 0).ok()) << i;
    l->CloseSlot(2);
  }
  EXPECT_LE(l->Tenants().size(), static_cast<size_t>(Ledger::kMinTenants));
  // The busy tenants are still counted.
  l->OpenSlot(2, 9999);
  EXPECT_EQ(l->Admit(2, "busy", 1, 0).code(), StatusCode::kResourceExhausted) << "a live tenant was forgotten";
  bool holder_seen = false;
  for (const auto& t : l->Tenants())
    if (t.name == "holder") holder_seen = t.memory == 4096;
  EXPECT_TRUE(holder_seen) << "a tenant holding memory was forgotten";
}

TEST(LedgerTenantsTest, MoreSlotsThanTheMinimumStillFitEveryLiveTenant) {
  std::unique_ptr<Ledger> l;
  const int slots = Ledger::kMinTenants + 50;
  ASSERT_TRUE(Ledger::Create(slots, 0, &l).ok());
  for (int i = 0; i < slots; ++i) {
    l->OpenSlot(i, static_cast<uint64_t>(i) + 1);
    ASSERT_TRUE(l->Admit(i, "t" + std::to_string(i), 1, 0).ok()) << i;
  }
}

// A session process killed while it holds the tenant lock (an evicted
// handshake is SIGKILLed) must not wedge the next admission.
TEST(LedgerTenantsTest, AProcessKilledInAnAdmissionDoesNotWedgeTheNext) {
  std::unique_ptr<Ledger> l;
  ASSERT_TRUE(Ledger::Create(4, 0, &l).ok());
  for (int round = 0; round < 20; ++round) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      for (uint64_t i = 0;; ++i) {
        l->OpenSlot(3, i);
        (void)l->Admit(3, "churn-" + std::to_string(i % 3000), 0, 0);
        l->CloseSlot(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + round));
    kill(child, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    l->OpenSlot(0, 1);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(l->Admit(0, "after-" + std::to_string(round), 0, 0).ok());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    l->CloseSlot(0);
  }
}

}  // namespace
}  // namespace hipr::worker
