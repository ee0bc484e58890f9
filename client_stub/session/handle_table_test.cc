#include "client_stub/session/handle_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace hipr::client {
namespace {

TEST(HandleTableTest, HandlesCarryFreshIdsAndTheirRecord) {
  HandleTable t;
  StreamRecord s1;
  StreamRecord s2;
  EventRecord e1;
  hipStream_t a = t.NewStream(1, hipStreamNonBlocking, -1, &s1);
  hipStream_t b = t.NewStream(0, 0, 0, &s2);
  hipEvent_t e = t.NewEvent(1, hipEventDisableTiming, &e1);
  EXPECT_NE(a, b);
  EXPECT_GT(s1.id, 0u);
  EXPECT_NE(s1.id, s2.id);
  EXPECT_NE(e1.id, s1.id);
  StreamRecord found;
  ASSERT_TRUE(t.FindStream(a, &found));
  EXPECT_EQ(found.id, s1.id);
  EXPECT_EQ(found.device, 1);
  EXPECT_EQ(found.flags, unsigned(hipStreamNonBlocking));
  EXPECT_EQ(found.priority, -1);
  EventRecord ef;
  ASSERT_TRUE(t.FindEvent(e, &ef));
  EXPECT_EQ(ef.flags, unsigned(hipEventDisableTiming));
}

TEST(HandleTableTest, StreamsOfADeviceAndWhetherOneWasDestroyedSinceItsSync) {
  HandleTable t;
  StreamRecord s1, s2, s3;
  hipStream_t a = t.NewStream(0, 0, 0, &s1);
  t.NewStream(0, hipStreamNonBlocking, 0, &s2);
  t.NewStream(1, 0, 0, &s3);
  std::vector<uint64_t> ids = t.StreamIdsOf(0);
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<uint64_t>{s1.id, s2.id}));
  EXPECT_FALSE(t.StreamDestroyedSinceSync(0));
  ASSERT_TRUE(t.RemoveStream(a, &s1));
  EXPECT_TRUE(t.StreamDestroyedSinceSync(0));
  EXPECT_FALSE(t.StreamDestroyedSinceSync(1));
  EXPECT_EQ(t.StreamIdsOf(0), std::vector<uint64_t>{s2.id});
  t.SettledDevice(0);
  EXPECT_FALSE(t.StreamDestroyedSinceSync(0));
}

TEST(HandleTableTest, UnknownNullAndDestroyedHandlesAreNotFound) {
  HandleTable t;
  StreamRecord s;
  hipStream_t a = t.NewStream(0, 0, 0, &s);
  EXPECT_FALSE(t.FindStream(nullptr, &s));
  EXPECT_FALSE(t.FindStream(reinterpret_cast<hipStream_t>(0x1234), &s));
  // An event handle is not a stream.
  EventRecord e;
  hipEvent_t ev = t.NewEvent(0, 0, &e);
  EXPECT_FALSE(t.FindStream(reinterpret_cast<hipStream_t>(ev), &s));
  EXPECT_TRUE(t.RemoveStream(a, &s));
  EXPECT_FALSE(t.FindStream(a, &s));
  EXPECT_FALSE(t.RemoveStream(a, &s));
  // A new handle never reuses a destroyed one's address.
  StreamRecord s2;
  EXPECT_NE(t.NewStream(0, 0, 0, &s2), a);
}

TEST(HandleTableTest, RemoveAllOfADevice) {
  HandleTable t;
  StreamRecord s;
  EventRecord e;
  hipStream_t s0 = t.NewStream(0, 0, 0, &s);
  hipStream_t s1 = t.NewStream(1, 0, 0, &s);
  hipEvent_t e1 = t.NewEvent(1, 0, &e);
  t.RemoveAllOf(1);
  EXPECT_TRUE(t.FindStream(s0, &s));
  EXPECT_FALSE(t.FindStream(s1, &s));
  EXPECT_FALSE(t.FindEvent(e1, &e));
  t.RemoveAllOf(-1);
  EXPECT_FALSE(t.FindStream(s0, &s));
}

}  // namespace
}  // namespace hipr::client
