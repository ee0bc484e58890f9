// The generated kApiCall dispatcher (build/worker_service/gen/api_dispatch.cc)
// against malformed argument lists, and through it the sim's semantics of the
// generated calls (sim/sim_api.cc). Argument lists are packed by hand here,
// as a hostile client would.
#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

#include "api_device.h"
#include "protocol/codec.h"
#include "protocol/messages.h"
#include "worker_service/hip/hip_api_util.h"
#include "worker_service/sim/sim_api.h"

namespace hipr {
static void PrintTo(StatusCode code, std::ostream* os) { *os << StatusCodeName(code); }
}  // namespace hipr

namespace hipr::worker {
namespace {

using Pack = std::function<void(codec::Packer&)>;

// Runs one call: `pack` writes the argument list.
struct Outcome {
  Status dispatch;  // Not ok: a protocol error (the session would end).
  Status call;
  int32_t error = -1;  // The reply's error.
  msgpack::object_handle reply;
};

class DispatchTest : public ::testing::Test {
 protected:
  Outcome Run(uint32_t fn, const Pack& pack, int device = 0) {
    msgpack::sbuffer buf;
    codec::Packer pk(buf);
    pack(pk);
    msgpack::object_handle args;
    Status parsed = codec::ParseBody(reinterpret_cast<const uint8_t*>(buf.data()), buf.size(), &args);
    EXPECT_TRUE(parsed.ok()) << parsed.ToString();
    Outcome o;
    codec::BodyWriter reply;
    o.dispatch = DispatchApiCall(sim_, fn, ApiContext{device, kDevices}, args.get(), &reply, &o.call);
    if (o.dispatch.ok()) {
      EXPECT_TRUE(codec::ParseBody(reply.data(), reply.size(), &o.reply).ok());
      msg::CallReply head;
      EXPECT_TRUE(codec::Unpack(o.reply.get(), &head).ok());
      o.error = head.error;
      // A failed call's reply is [error] alone; a successful one [0, outputs].
      EXPECT_EQ(o.reply.get().via.array.size, o.call.ok() ? 2u : 1u);
    }
    return o;
  }
  template <class Out>
  Out Outputs(const Outcome& o) {
    msg::ApiCallReply<Out> r;
    EXPECT_TRUE(codec::Unpack(o.reply.get(), &r).ok());
    return r.out;
  }

  static constexpr int kDevices = 2;
  sim::SimApi sim_{kDevices};
};

Pack Args(std::function<void(codec::Packer&)> fields, uint32_t count) {
  return [=](codec::Packer& pk) {
    pk.pack_array(count);
    fields(pk);
  };
}

TEST_F(DispatchTest, UnknownFunctionIsNotSupportedNotFatal) {
  Outcome o = Run(0x12345678, Args([](auto&) {}, 0));
  ASSERT_TRUE(o.dispatch.ok());
  EXPECT_EQ(o.call.code(), StatusCode::kNotSupported);
  EXPECT_EQ(o.error, hipErrorNotSupported);
}

TEST_F(DispatchTest, ArgumentsMustBeAnArray) {
  EXPECT_EQ(Run(api::kDeviceGetLimit, [](auto& pk) { pk.pack_uint64(2); }).dispatch.code(),
            StatusCode::kProtocolError);
  EXPECT_EQ(Run(api::kDeviceGetLimit, [](auto& pk) { pk.pack_map(0); }).dispatch.code(),
            StatusCode::kProtocolError);
}

TEST_F(DispatchTest, ArgumentCountMustBeExact) {
  // hipDeviceSetLimit(limit, value): two arguments, no fewer, no more.
  EXPECT_EQ(Run(api::kDeviceSetLimit, Args([](auto& pk) { pk.pack_uint64(2); }, 1)).dispatch.code(),
            StatusCode::kProtocolError);
  EXPECT_EQ(Run(api::kDeviceSetLimit, Args([](auto& pk) {
                  pk.pack_uint64(2);
                  pk.pack_uint64(1);
                  pk.pack_uint64(7);
                }, 3)).dispatch.code(),
            StatusCode::kProtocolError);
  EXPECT_EQ(Run(api::kDeviceGetSharedMemConfig, Args([](auto& pk) { pk.pack_uint64(0); }, 1)).dispatch.code(),
            StatusCode::kProtocolError);
  EXPECT_TRUE(Run(api::kDeviceGetSharedMemConfig, Args([](auto&) {}, 0)).dispatch.ok());
}

TEST_F(DispatchTest, ArgumentTypesAndRangesAreChecked) {
  // A string where the limit goes.
  EXPECT_EQ(Run(api::kDeviceGetLimit, Args([](auto& pk) { pk.pack_str(1), pk.pack_str_body("x", 1); }, 1))
                .dispatch.code(),
            StatusCode::kProtocolError);
  // A negative limit (hipLimit_t is unsigned on the wire).
  EXPECT_EQ(Run(api::kDeviceGetLimit, Args([](auto& pk) { pk.pack_int64(-1); }, 1)).dispatch.code(),
            StatusCode::kProtocolError);
  // A device ordinal beyond int32.
  EXPECT_EQ(Run(api::kDeviceGraphMemTrim, Args([](auto& pk) { pk.pack_uint64(1ull << 40); }, 1)).dispatch.code(),
            StatusCode::kProtocolError);
  // A nested array where a handle goes.
  EXPECT_EQ(Run(api::kMemPoolTrimTo, Args([](auto& pk) {
                  pk.pack_array(0);
                  pk.pack_uint64(0);
                }, 2)).dispatch.code(),
            StatusCode::kProtocolError);
}

TEST_F(DispatchTest, ValueWidthFollowsTheSelectingEnum) {
  // hipMemPoolReuseAllowOpportunistic is an int: 4 bytes, so 2^32 is hostile.
  auto set = [&](uint32_t attr, uint64_t value) {
    return Run(api::kMemPoolSetAttribute, Args([=](auto& pk) {
                 pk.pack_uint64(1);  // Device 0's default pool.
                 pk.pack_uint64(attr);
                 pk.pack_uint64(value);
               }, 3));
  };
  EXPECT_EQ(set(hipMemPoolReuseAllowOpportunistic, 1ull << 32).dispatch.code(), StatusCode::kProtocolError);
  Outcome ok = set(hipMemPoolReuseAllowOpportunistic, 0);
  ASSERT_TRUE(ok.dispatch.ok());
  EXPECT_TRUE(ok.call.ok());
  // hipMemPoolAttrReleaseThreshold is 8 bytes wide.
  Outcome wide = set(hipMemPoolAttrReleaseThreshold, 1ull << 40);
  ASSERT_TRUE(wide.dispatch.ok());
  EXPECT_TRUE(wide.call.ok()) << wide.call.ToString();
  Outcome get = Run(api::kMemPoolGetAttribute, Args([](auto& pk) {
                      pk.pack_uint64(1);
                      pk.pack_uint64(hipMemPoolAttrReleaseThreshold);
                    }, 2));
  ASSERT_TRUE(get.call.ok());
  EXPECT_EQ(Outputs<api::MemPoolGetAttributeOut>(get).value, 1ull << 40);
}

TEST_F(DispatchTest, DeviceArgumentsAreCheckedBeforeTheDevice) {
  for (int64_t device : {-1, 2, 1000}) {
    Outcome o = Run(api::kDeviceGetDefaultMemPool, Args([=](auto& pk) { pk.pack_int64(device); }, 1));
    ASSERT_TRUE(o.dispatch.ok());
    EXPECT_EQ(o.call.code(), StatusCode::kInvalidDevice) << device;
    EXPECT_EQ(o.error, hipErrorInvalidDevice);
  }
  Outcome o = Run(api::kDeviceGetDefaultMemPool, Args([](auto& pk) { pk.pack_int64(1); }, 1));
  ASSERT_TRUE(o.call.ok());
  EXPECT_EQ(Outputs<api::DeviceGetDefaultMemPoolOut>(o).mem_pool, 2u);
}

TEST_F(DispatchTest, LimitsAreKeptPerDevice) {
  auto set = [&](int device, uint64_t value) {
    return Run(api::kDeviceSetLimit, Args([=](auto& pk) {
                 pk.pack_uint64(hipLimitMallocHeapSize);
                 pk.pack_uint64(value);
               }, 2), device);
  };
  auto get = [&](int device) {
    Outcome o = Run(api::kDeviceGetLimit, Args([](auto& pk) { pk.pack_uint64(hipLimitMallocHeapSize); }, 1), device);
    EXPECT_TRUE(o.call.ok());
    return Outputs<api::DeviceGetLimitOut>(o).pValue;
  };
  EXPECT_EQ(get(0), sim::SimApi::kDefaultMallocHeapBytes);
  ASSERT_TRUE(set(0, 64u << 20).call.ok());
  EXPECT_EQ(get(0), 64u << 20);
  EXPECT_EQ(get(1), sim::SimApi::kDefaultMallocHeapBytes);
  sim_.DeviceReset(0);
  EXPECT_EQ(get(0), sim::SimApi::kDefaultMallocHeapBytes);
  Outcome bad = Run(api::kDeviceGetLimit, Args([](auto& pk) { pk.pack_uint64(0x42); }, 1));
  EXPECT_EQ(bad.error, hipErrorUnsupportedLimit);
}

TEST_F(DispatchTest, ArraysMustHaveTheirCountAndStructsTheirFields) {
  // hipMemPoolSetAccess(pool, desc_list, count): desc_list is an array of
  // [[type, id], flags] whose length must be `count`.
  auto desc = [](codec::Packer& pk, int32_t device, uint32_t flags) {
    pk.pack_array(2);
    pk.pack_array(2);
    pk.pack_uint64(hipMemLocationTypeDevice);
    pk.pack_int64(device);
    pk.pack_uint64(flags);
  };
  auto call = [&](uint64_t count, int elements) {
    return Run(api::kMemPoolSetAccess, Args([=](auto& pk) {
                 pk.pack_uint64(1);
                 pk.pack_array(elements);
                 for (int i = 0; i < elements; ++i) desc(pk, 1, hipMemAccessFlagsProtRead);
                 pk.pack_uint64(count);
               }, 3));
  };
  EXPECT_EQ(call(2, 1).dispatch.code(), StatusCode::kProtocolError);
  EXPECT_EQ(call(0, 1).dispatch.code(), StatusCode::kProtocolError);
  Outcome ok = call(1, 1);
  ASSERT_TRUE(ok.dispatch.ok());
  EXPECT_TRUE(ok.call.ok()) << ok.call.ToString();
  // A descriptor whose location lacks its id.
  EXPECT_EQ(Run(api::kMemPoolSetAccess, Args([](auto& pk) {
              pk.pack_uint64(1);
              pk.pack_array(1);
              pk.pack_array(2);
              pk.pack_array(1);
              pk.pack_uint64(hipMemLocationTypeDevice);
              pk.pack_uint64(hipMemAccessFlagsProtRead);
              pk.pack_uint64(1);
            }, 3)).dispatch.code(),
            StatusCode::kProtocolError);
  // Read back: device 1 was granted read access to device 0's pool.
  Outcome get = Run(api::kMemPoolGetAccess, Args([](auto& pk) {
                      pk.pack_uint64(1);
                      pk.pack_array(2);
                      pk.pack_uint64(hipMemLocationTypeDevice);
                      pk.pack_int64(1);
                    }, 2));
  ASSERT_TRUE(get.call.ok());
  EXPECT_EQ(Outputs<api::MemPoolGetAccessOut>(get).flags, static_cast<uint32_t>(hipMemAccessFlagsProtRead));
}

TEST_F(DispatchTest, PoolsBelongToTheirDevice) {
  auto set_pool = [&](int device, uint64_t pool) {
    return Run(api::kDeviceSetMemPool, Args([=](auto& pk) {
                 pk.pack_int64(device);
                 pk.pack_uint64(pool);
               }, 2));
  };
  EXPECT_TRUE(set_pool(1, 2).call.ok());
  EXPECT_EQ(set_pool(0, 2).error, hipErrorInvalidValue);   // Device 1's pool.
  EXPECT_EQ(set_pool(0, 0).error, hipErrorInvalidValue);   // Null.
  EXPECT_EQ(set_pool(0, 99).error, hipErrorInvalidValue);  // Never handed out.
}

// The hip device's runtime handles as ids (no GPU needed: only pointers).
TEST(HandleIdsTest, IdsAreStablePerTypeAndForgottenOnDestroy) {
  HandleIds ids;
  int a = 0, b = 0;
  const uint64_t ia = ids.Export("hipMemPool_t", &a);
  EXPECT_NE(ia, 0u);
  EXPECT_EQ(ids.Export("hipMemPool_t", &a), ia);
  EXPECT_NE(ids.Export("hipMemPool_t", &b), ia);
  EXPECT_EQ(ids.Export("hipMemPool_t", nullptr), 0u);
  int* found = nullptr;
  ASSERT_TRUE(ids.Find("hipMemPool_t", ia, &found).ok());
  EXPECT_EQ(found, &a);
  ASSERT_TRUE(ids.Find("hipMemPool_t", 0, &found).ok());
  EXPECT_EQ(found, nullptr);
  EXPECT_EQ(ids.Find("hipStream_t", ia, &found).code(), StatusCode::kInvalidArgument);  // Another type's id.
  EXPECT_EQ(ids.Find("hipMemPool_t", 999, &found).code(), StatusCode::kInvalidArgument);
  ids.Forget("hipMemPool_t", ia);
  EXPECT_EQ(ids.Find("hipMemPool_t", ia, &found).code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ids.Export("hipMemPool_t", &a), ia);  // The address, reused, gets a new id.
}

}  // namespace
}  // namespace hipr::worker
