#include "client_stub/session/stream_ledger.h"

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

// A kernel (visible) noted and committed on (device, stream).
void Visible(StreamLedger& l, int device, uint64_t stream) {
  StreamLedger::Note(device, stream);
  l.Commit();
}

TEST(StreamLedgerTest, VisibleWorkCountsOnceCommittedAndUntilSeenComplete) {
  StreamLedger l;
  EXPECT_TRUE(l.Clean());
  StreamLedger::Note(0, 5);
  EXPECT_TRUE(l.Clean()) << "a note counts once its call's frames are queued (Commit)";
  l.Commit();
  EXPECT_FALSE(l.Clean());
  l.Completed(0, 6, l.Ticket());
  EXPECT_FALSE(l.Clean()) << "another stream's synchronisation";
  l.Completed(0, 5, l.Ticket());
  EXPECT_TRUE(l.Clean());
}

TEST(StreamLedgerTest, AnyStreamOfAnyDeviceCounts) {
  StreamLedger l;
  Visible(l, 1, 0);  // A callback on device 1's null stream.
  EXPECT_FALSE(l.Clean()) << "the host may release what waits there after the wait it skipped";
  l.Completed(0, StreamLedger::kWholeDevice, l.Ticket());
  EXPECT_FALSE(l.Clean()) << "device 0's synchronisation";
  l.Completed(1, StreamLedger::kWholeDevice, l.Ticket());
  EXPECT_TRUE(l.Clean());
}

TEST(StreamLedgerTest, InvisibleWorkKeepsTheLedgerClean) {
  StreamLedger l;
  StreamLedger::Note(0, 5);
  StreamLedger::Invisible();  // A fill of plain device memory.
  l.Commit();
  EXPECT_TRUE(l.Clean());
  // Invisible marks the last note only.
  StreamLedger::Note(0, 6);
  StreamLedger::Note(0, 5);
  StreamLedger::Invisible();
  l.Commit();
  EXPECT_FALSE(l.Clean());
  l.Completed(0, 5, l.Ticket());
  EXPECT_FALSE(l.Clean()) << "stream 6's note was visible";
  l.Completed(0, 6, l.Ticket());
  EXPECT_TRUE(l.Clean());
}

TEST(StreamLedgerTest, WorkCommittedAfterTheTicketIsNotCovered) {
  StreamLedger l;
  const uint64_t ticket = l.Ticket();  // The synchronisation is sent...
  Visible(l, 0, 5);                    // ...and another thread's kernel queued after it.
  l.Completed(0, 5, ticket);
  EXPECT_FALSE(l.Clean());
}

TEST(StreamLedgerTest, ATicketCountsTheCallersOwnNotes) {
  StreamLedger l;
  StreamLedger::Note(0, 5);  // This call's own copy into host memory, then its wait.
  const uint64_t ticket = l.Ticket();
  l.Completed(0, 5, ticket);
  EXPECT_TRUE(l.Clean());
}

TEST(StreamLedgerTest, AWholeDeviceSynchronizationCoversEveryStreamOfTheDevice) {
  StreamLedger l;
  Visible(l, 0, 5);
  Visible(l, 0, 0);
  Visible(l, 0, 9);
  l.Completed(0, StreamLedger::kWholeDevice, l.Ticket());
  EXPECT_TRUE(l.Clean());
  Visible(l, 0, 9);
  EXPECT_FALSE(l.Clean()) << "work after it";
}

TEST(StreamLedgerTest, NotesCommitWhenTheOutermostCallEnds) {
  StreamLedger l;
  StreamLedger::Enter();
  StreamLedger::Enter();
  StreamLedger::Note(0, 5);
  EXPECT_FALSE(StreamLedger::Leave()) << "an inner call";
  EXPECT_TRUE(StreamLedger::Leave()) << "the outermost call, with a note";
  l.Commit();
  EXPECT_FALSE(l.Clean());
  StreamLedger::Enter();
  EXPECT_FALSE(StreamLedger::Leave()) << "nothing noted";
}

TEST(StreamLedgerTest, AResetDeviceForgetsItsWork) {
  StreamLedger l;
  Visible(l, 0, 5);
  Visible(l, 1, 6);
  l.Forget(0);
  EXPECT_FALSE(l.Clean()) << "device 1's work stays";
  l.Forget(-1);
  EXPECT_TRUE(l.Clean());
}

}  // namespace
}  // namespace hipr::client
