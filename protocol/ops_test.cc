// The table of ops (ops.h, op_traits.h): every request and reply it names
// survives a round trip through the codec with every field set, every op
// has a name, and the table's modes and flags agree with one another.
#include <set>
#include <string>

#include "protocol/codec_test_util.h"
#include "protocol/op_traits.h"

namespace hipr {
namespace {

template <class T>
constexpr bool kIsMessage = codec::Message<T>;

// A message with every field set to a distinct value comes back equal, and
// its encoding has as many fields as the type lists.
template <class T>
void ExpectRoundTrip(const char* op, const char* role) {
  if constexpr (kIsMessage<T>) {
    const T sent = Filled<T>();
    const Bytes bytes = Encode(sent);
    T got;
    ASSERT_TRUE(Decode(bytes, &got).ok()) << op << " " << role;
    EXPECT_TRUE(DeepEqual(sent, got)) << op << " " << role << " changed in a round trip";
    const size_t fields = std::tuple_size_v<decltype(sent.Fields())>;
    EXPECT_EQ(UnpackFields(sent).fields.size(), fields) << op << " " << role;
  }
}

TEST(OpTable, EveryRequestAndReplyRoundTrips) {
  size_t messages = 0;
  ops::ForEachOp([&](auto tag) {
    constexpr wire::Op op = decltype(tag)::value;
    const char* name = wire::OpName(static_cast<uint16_t>(op));
    ExpectRoundTrip<ops::Request<op>>(name, "request");
    ExpectRoundTrip<ops::Reply<op>>(name, "reply");
    messages += kIsMessage<ops::Request<op>> + kIsMessage<ops::Reply<op>>;
  });
  EXPECT_GT(messages, ops::kOpCount);  // Most ops have a request and a reply.
}

TEST(OpTable, NamesAreUniqueAndMatchTheEnum) {
  std::set<std::string> names;
  for (const ops::OpInfo& info : ops::kOpInfos) {
    const char* name = wire::OpName(static_cast<uint16_t>(info.op));
    ASSERT_NE(name, nullptr) << static_cast<int>(info.op);
    EXPECT_STREQ(name, info.name);
    EXPECT_STREQ(wire::OpName(wire::ReplyOp(info.op)), info.name) << "the reply bit is ignored";
    EXPECT_TRUE(names.insert(info.name).second) << info.name << " twice";
  }
  EXPECT_EQ(names.size(), ops::kOpCount);
  EXPECT_EQ(wire::OpName(0x0777), nullptr);
}

TEST(OpTable, ModesAndFlagsAgree) {
  for (const ops::OpInfo& info : ops::kOpInfos) {
    const bool replies = std::string(info.reply) != "NoReply";
    switch (info.mode) {
      case ops::Mode::kCall:
      case ops::Mode::kCallOrPost:
      case ops::Mode::kHandshake:
        EXPECT_TRUE(replies) << info.name << " is answered, so it names a reply";
        break;
      case ops::Mode::kPost:
      case ops::Mode::kToClient:
      case ops::Mode::kLink:
        EXPECT_FALSE(replies) << info.name << " is never answered";
        break;
    }
    if (info.flags & ops::kGraphNode) {
      EXPECT_TRUE(info.flags & ops::kStreamOrdered) << info.name << ": a graph node is stream work";
      EXPECT_FALSE(info.flags & (ops::kBulkIn | ops::kBulkOut)) << info.name << ": a graph node carries no bulk";
    }
    if (info.flags & ops::kSynchronizing) {
      EXPECT_TRUE(info.mode == ops::Mode::kCall || info.mode == ops::Mode::kCallOrPost)
          << info.name << ": only a call can wait for the device";
    }
  }
}

TEST(OpTable, GraphNodesAreTheMarkedOps) {
  size_t marked = 0;
  for (const ops::OpInfo& info : ops::kOpInfos) marked += (info.flags & ops::kGraphNode) != 0;
  EXPECT_EQ(marked, ops::kGraphNodeCount);
  for (wire::Op op : ops::kGraphNodeOps) EXPECT_NE(wire::OpName(static_cast<uint16_t>(op)), nullptr);
}

// The typed sends rest on these: a request that is not the op's is refused
// at compile time.
static_assert(ops::kRequestFits<wire::Op::kMalloc, msg::MallocRequest>);
static_assert(!ops::kRequestFits<wire::Op::kMalloc, msg::FreeRequest>);
static_assert(ops::kReplyFits<wire::Op::kMalloc, msg::MallocReply>);
static_assert(!ops::kReplyFits<wire::Op::kMalloc, msg::CallReply>);
static_assert(ops::kRequestFits<wire::Op::kApiCall, msg::ApiCallRequest<msg::Region>>);
static_assert(!ops::kRequestFits<wire::Op::kApiCall, msg::Region>);

}  // namespace
}  // namespace hipr
