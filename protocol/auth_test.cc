#include "protocol/auth.h"

#include <gtest/gtest.h>

namespace hipr::auth {
namespace {

TEST(AuthTest, NoncesAreFreshAndFullLength) {
  std::vector<uint8_t> a, b;
  ASSERT_TRUE(RandomNonce(&a).ok());
  ASSERT_TRUE(RandomNonce(&b).ok());
  EXPECT_EQ(a.size(), kNonceBytes);
  EXPECT_NE(a, b);
}

// Every input changes the MAC, and so does moving bytes between fields.
TEST(AuthTest, MacCoversEveryInputAndTheRole) {
  std::vector<uint8_t> wn(kNonceBytes, 1), cn(kNonceBytes, 2);
  const std::vector<uint8_t> base = Mac(Role::kClient, "0123456789abcdef", wn, cn, "team-a");
  ASSERT_EQ(base.size(), kMacBytes);
  EXPECT_TRUE(MacEquals(base, Mac(Role::kClient, "0123456789abcdef", wn, cn, "team-a")));
  EXPECT_FALSE(MacEquals(base, Mac(Role::kWorker, "0123456789abcdef", wn, cn, "team-a")));
  EXPECT_FALSE(MacEquals(base, Mac(Role::kClient, "0123456789abcdeF", wn, cn, "team-a")));
  EXPECT_FALSE(MacEquals(base, Mac(Role::kClient, "0123456789abcdef", cn, wn, "team-a")));
  EXPECT_FALSE(MacEquals(base, Mac(Role::kClient, "0123456789abcdef", wn, cn, "team-b")));
  std::vector<uint8_t> wn2 = wn;
  wn2[31] ^= 1;
  EXPECT_FALSE(MacEquals(base, Mac(Role::kClient, "0123456789abcdef", wn2, cn, "team-a")));
  // Moving a byte between fields changes the MAC (fields are length-prefixed).
  std::vector<uint8_t> shorter(cn.begin(), cn.end() - 1);
  EXPECT_FALSE(MacEquals(base, Mac(Role::kClient, "0123456789abcdef", wn, shorter, "team-a")));
}

TEST(AuthTest, MacEqualsRefusesWrongLengths) {
  std::vector<uint8_t> a(kMacBytes, 7);
  EXPECT_TRUE(MacEquals(a, a));
  EXPECT_FALSE(MacEquals({}, {}));
  std::vector<uint8_t> shorter(a.begin(), a.end() - 1);
  EXPECT_FALSE(MacEquals(shorter, shorter));
}

TEST(AuthTest, ParsesCredentials) {
  Credential c;
  ASSERT_TRUE(ParseCredential("  team-a:0123456789abcdef:x\n", &c).ok());
  EXPECT_EQ(c.tenant, "team-a");
  EXPECT_EQ(c.secret, "0123456789abcdef:x");  // The first colon splits.
  EXPECT_FALSE(ParseCredential("team-a", &c).ok());
  EXPECT_FALSE(ParseCredential(":0123456789abcdef", &c).ok());
  EXPECT_FALSE(ParseCredential("team a:0123456789abcdef", &c).ok());
  EXPECT_FALSE(ParseCredential("team-a:short", &c).ok());
  EXPECT_FALSE(ParseCredential("team-a:0123456789 abcdef", &c).ok());
  EXPECT_FALSE(ParseCredential(std::string(65, 't') + ":0123456789abcdef", &c).ok());
}

}  // namespace
}  // namespace hipr::auth
