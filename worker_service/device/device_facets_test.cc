// A device without facets (device_facets.h) behind a real session: its
// hello claims none of their capabilities, every call that needs one is
// answered hipErrorNotSupported (and the session goes on), and the core
// calls still work. The same calls on the device with its facets succeed,
// so the refusals come from the missing facets and nothing else.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>

#include <algorithm>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "protocol/tcp/tcp_connection.h"
#include "tests/support/raw_client.h"
#include "worker_service/process/config.h"
#include "worker_service/device/forwarding_device.h"
#include "worker_service/process/ledger.h"
#include "worker_service/session/session.h"
#include "worker_service/sim/sim_device.h"

namespace hipr::test {
namespace {

using wire::Op;

// The sim with every facet taken away.
class FacetlessDevice final : public worker::ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  worker::IpcFacet* ipc() override { return nullptr; }
  worker::VirtualMemoryFacet* vmm() override { return nullptr; }
  worker::ShareableMemoryFacet* shareable() override { return nullptr; }
  worker::TextureFacet* textures() override { return nullptr; }
  worker::MemoryLeaseFacet* memory_lease() override { return nullptr; }
  worker::HostRegisterFacet* host_register() override { return nullptr; }
  worker::BulkMemoryFacet* bulk_memory() override { return nullptr; }
  bool cooperative_module_launch() const override { return false; }
};

// One session, served on its own thread over a loopback tcp connection.
class OneSession {
 public:
  explicit OneSession(bool facets) {
    config_.code_cache_dir.clear();
    config_.hello_timeout_ms = 5000;
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(listener_, 1), 0);
    EXPECT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port_ = ntohs(addr.sin_port);
    worker::sim::SimOptions options;
    options.memory_bytes = 256ull << 20;
    std::unique_ptr<worker::sim::SimDevice> sim;
    Status st = worker::sim::SimDevice::Create(options, &sim);
    EXPECT_TRUE(st.ok()) << st.ToString();
    std::unique_ptr<worker::Device> device = std::move(sim);
    if (!facets) device = std::make_unique<FacetlessDevice>(std::move(device));
    // The worker's ledger holds the IPC registry exports go through.
    st = worker::Ledger::Create(1, 0, &ledger_);
    EXPECT_TRUE(st.ok()) << st.ToString();
    ledger_->OpenSlot(0, 1);
    thread_ = std::thread([this, device = std::move(device)]() mutable {
      const int fd = accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      worker::Session session(1, std::make_unique<tcp::TcpConnection>(fd), std::move(device), config_);
      session.set_ledger(ledger_.get(), 0);
      (void)session.Run();
    });
  }
  ~OneSession() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
  }
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  worker::WorkerConfig config_;
  std::unique_ptr<worker::Ledger> ledger_;
  int listener_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

// What each facet's calls answer, in one session.
struct Answers {
  std::vector<std::string> capabilities;
  int32_t ipc_export = -1, vmm_reserve = -1, vmm_create = -1, shareable_export = -1, texture = -1,
          host_register = -1, ipc_event = -1, lease = -1;
  std::vector<uint8_t> read_back;
};

Answers Ask(bool facets) {
  OneSession session(facets);
  std::unique_ptr<RawClient> c;
  Answers a;
  Status st = RawClient::Connect(session.endpoint(), &c, 1ull << 30);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return a;
  a.capabilities = c->hello().capabilities;
  uint64_t base = 0;
  EXPECT_EQ(c->Malloc(1 << 20, &base), hipSuccess);
  msg::IpcGetMemHandleReply handle;
  EXPECT_TRUE(c->Call(Op::kIpcGetMemHandle, msg::IpcGetMemHandleRequest{base}, &handle).ok());
  a.ipc_export = handle.error;
  msg::VmmReserveReply reserved;
  EXPECT_TRUE(c->Call(Op::kVmmReserve, msg::VmmReserveRequest{1 << 20, 0, 0}, &reserved).ok());
  a.vmm_reserve = reserved.error;
  msg::CallReply created;
  EXPECT_TRUE(c->Call(Op::kVmmCreate, msg::VmmCreateRequest{0, 7, 1 << 20}, &created).ok());
  a.vmm_create = created.error;
  msg::IpcGetMemHandleReply shared;
  EXPECT_TRUE(c->Call(Op::kVmmExport, msg::VmmHandleRequest{7}, &shared).ok());
  a.shareable_export = shared.error;
  msg::TextureCreateRequest tex;
  tex.memory = msg::Region{base, 256, 256, 1};
  tex.channel_bits = {32, 0, 0, 0};
  tex.channel_kind = 2;
  msg::TextureCreateReply made;
  EXPECT_TRUE(c->Call(Op::kTextureCreate, tex, &made).ok());
  a.texture = made.error;
  msg::CallReply registered;
  EXPECT_TRUE(c->Call(Op::kHostRegister, msg::HostRangeRequest{0, 4096}, &registered).ok());
  a.host_register = registered.error;
  msg::MemLeaseReply leased;
  EXPECT_TRUE(c->Call(Op::kMemLease, msg::MemLeaseRequest{0, 4096, 1 << 20}, &leased).ok());
  a.lease = leased.error;
  // The session goes on: the core still moves bytes.
  const std::vector<uint8_t> bytes(4096, 0x6d);
  a.read_back.resize(bytes.size());
  EXPECT_EQ(c->Write(base, bytes.data(), bytes.size()), hipSuccess);
  EXPECT_EQ(c->Read(base, a.read_back.data(), a.read_back.size()), hipSuccess);
  EXPECT_EQ(a.read_back, bytes);
  return a;
}

TEST(DeviceFacets, AMissingFacetIsRefusedAndNotClaimed) {
  const Answers without = Ask(false);
  EXPECT_TRUE(without.capabilities.empty()) << "claimed " << without.capabilities.front();
  EXPECT_EQ(without.ipc_export, hipErrorNotSupported);
  EXPECT_EQ(without.vmm_reserve, hipErrorNotSupported);
  EXPECT_EQ(without.vmm_create, hipErrorNotSupported);
  EXPECT_EQ(without.shareable_export, hipErrorNotSupported);
  EXPECT_EQ(without.texture, hipErrorNotSupported);
  EXPECT_EQ(without.host_register, hipErrorNotSupported);
  EXPECT_EQ(without.lease, hipErrorNotSupported);
}

TEST(DeviceFacets, ThePresentFacetsAnswerTheSameCalls) {
  const Answers with = Ask(true);
  for (const char* c : {wire::kCapabilityIpcMemory, wire::kCapabilityVirtualMemory, wire::kCapabilityShareableMemory,
                        wire::kCapabilityTextures, wire::kCapabilityHostRegister, wire::kCapabilityMemoryLease})
    EXPECT_NE(std::find(with.capabilities.begin(), with.capabilities.end(), c), with.capabilities.end()) << c;
  EXPECT_EQ(with.ipc_export, hipSuccess);
  EXPECT_EQ(with.vmm_reserve, hipSuccess);
  EXPECT_EQ(with.vmm_create, hipSuccess);
  EXPECT_EQ(with.shareable_export, hipSuccess);
  EXPECT_EQ(with.texture, hipSuccess);
  EXPECT_EQ(with.lease, hipSuccess);
  // Over tcp there is no shared host segment to register: refused, but not
  // for want of the facet.
  EXPECT_NE(with.host_register, hipErrorNotSupported);
  EXPECT_NE(with.host_register, hipSuccess);
}

}  // namespace
}  // namespace hipr::test
