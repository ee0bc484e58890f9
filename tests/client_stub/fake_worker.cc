#include "tests/client_stub/fake_worker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include <lz4.h>

#include "protocol/code_object/code_object.h"

namespace hipr::client::testing {

FakeWorker::FakeWorker() {
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (listen_fd_ < 0 || bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listen_fd_, 4) != 0)
    Fail("cannot listen on 127.0.0.1");
  socklen_t len = sizeof addr;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
}

FakeWorker::~FakeWorker() {
  Join();
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string FakeWorker::address() const { return "127.0.0.1:" + std::to_string(port_); }

void FakeWorker::Serve(std::function<void(tcp::TcpConnection&)> script) {
  thread_ = std::thread([this, script = std::move(script)] {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) Fail("accept failed");
    tcp::TcpConnection conn(fd);
    (void)tcp::TuneSocket(fd);
    script(conn);
  });
}

void FakeWorker::ServeEach(int count, std::function<void(tcp::TcpConnection&, int)> script) {
  thread_ = std::thread([this, count, script = std::move(script)] {
    for (int i = 0; i < count; ++i) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) Fail("accept failed");
      tcp::TcpConnection conn(fd);
      (void)tcp::TuneSocket(fd);
      script(conn, i);
    }
  });
}

void FakeWorker::Join() {
  if (thread_.joinable()) thread_.join();
}

wire::FrameHeader FakeWorker::Next(Connection& conn) {
  wire::FrameHeader h{};
  Status st = ReadHeader(conn, &h);
  if (!st.ok()) Fail("reading a frame header: " + st.ToString());
  return h;
}

void FakeWorker::Heartbeat(Connection& conn) {
  if (!SendFrame(conn, static_cast<uint16_t>(wire::Op::kHeartbeat), 0, nullptr, 0).ok())
    Fail("heartbeat failed");
}

void FakeWorker::Fatal(Connection& conn, StatusCode code, const std::string& message) {
  codec::BodyWriter w;
  w.Encode(msg::Fatal{code, message});
  (void)SendFrame(conn, static_cast<uint16_t>(wire::Op::kFatal), 0, w);
}

msg::HelloRequest FakeWorker::AcceptHello(Connection& conn, std::vector<msg::DeviceInfo> devices,
                                          msg::AddressWindow window, bool empty_window,
                                          uint32_t chunk_bytes) {
  wire::FrameHeader h;
  auto hello = Read<msg::HelloRequest>(conn, wire::Op::kHello, &h);
  msg::HelloReply reply;
  reply.version = wire::kProtocolVersion;
  reply.session_id = 7;
  reply.device_kind = "sim";
  reply.devices = std::move(devices);
  reply.window = empty_window ? msg::AddressWindow{} : window.size != 0 ? window : hello.window;
  reply.chunk_bytes = chunk_bytes != 0 ? chunk_bytes : hello.chunk_bytes;
  reply.heartbeat_ms = 100;
  reply.driver_version = 50222;
  reply.runtime_version = 50223;
  reply.worker_version = "fake";
  Reply(conn, h, reply);
  return hello;
}

msg::DeviceInfo FakeWorker::Device(const std::string& name) {
  msg::DeviceInfo d;
  d.name = name;
  d.gcn_arch_name = "gfx90a:sramecc+:xnack-";
  d.gcn_arch = 910;
  d.total_global_mem = uint64_t{64} << 30;
  d.shared_mem_per_block = 64 << 10;
  d.regs_per_block = 65536;
  d.warp_size = 64;
  d.max_threads_per_block = 1024;
  d.max_threads_dim = {1024, 1024, 1024};
  d.max_grid_size = {2147483647, 65536, 65536};
  d.clock_rate_khz = 1700000;
  d.memory_clock_rate_khz = 1600000;
  d.memory_bus_width_bits = 4096;
  d.total_const_mem = 2147483647;
  d.major = 9;
  d.minor = 0;
  d.multi_processor_count = 110;
  d.l2_cache_size = 8 << 20;
  d.max_threads_per_multiprocessor = 2048;
  d.clock_instruction_rate_khz = 100000;
  d.pci_domain_id = 0;
  d.pci_bus_id = 0xc1;
  d.pci_device_id = 0;
  d.max_shared_memory_per_multiprocessor = 64 << 10;
  d.cooperative_launch = true;
  d.ecc_enabled = true;
  d.managed_memory = true;
  d.large_bar = true;
  d.asic_revision = 1;
  d.mem_pitch = 2147483647;
  d.texture_alignment = 256;
  d.max_texture_1d = 16384;
  d.max_texture_1d_linear = 2147483647;
  d.max_texture_2d = {16384, 16384};
  d.max_texture_3d = {16384, 16384, 8192};
  return d;
}

FakeWorker::ReceivedModule FakeWorker::AnswerModuleLoad(
    Connection& conn, const wire::FrameHeader& h,
    const std::function<bool(const msg::ModuleLoadRequest&)>& have_code, const msg::ModuleLoadReply& reply) {
  ReceivedModule r;
  r.request = Body<msg::ModuleLoadRequest>(conn, h);
  if (r.request.sha256.size() != 32) Fail("module load without a 32-byte SHA-256");
  if (r.request.bulk_bytes != 0) Fail("the client sent the code object before it was asked for");
  if (!have_code(r.request)) {
    msg::ModuleLoadReply need;
    need.need_code = true;
    Reply(conn, h, need);
    wire::FrameHeader h2;
    r.request = Read<msg::ModuleLoadRequest>(conn, wire::Op::kModuleLoad, &h2);
    if (r.request.code_bytes == 0 || r.request.bulk_bytes == 0) Fail("asked for the code, got none");
    std::vector<uint8_t> bulk(r.request.bulk_bytes);
    iovec iov{bulk.data(), bulk.size()};
    if (!ReadBulk(conn, h2.request_id, &iov, 1).ok()) Fail("reading the module's bulk");
    if (r.request.compression == msg::Compression::kLz4Block) {
      r.code.resize(r.request.code_bytes);
      int n = LZ4_decompress_safe(reinterpret_cast<const char*>(bulk.data()), reinterpret_cast<char*>(r.code.data()),
                                  static_cast<int>(bulk.size()), static_cast<int>(r.code.size()));
      if (n < 0 || static_cast<uint64_t>(n) != r.request.code_bytes) Fail("the lz4 module does not decompress");
    } else {
      if (r.request.bulk_bytes != r.request.code_bytes) Fail("raw module size mismatch");
      r.code = std::move(bulk);
    }
    const co::Sha256Digest digest = co::Sha256(r.code);
    if (!std::equal(digest.begin(), digest.end(), r.request.sha256.begin()))
      Fail("the module's bytes do not hash to the SHA-256 it was named by");
    r.shipped = true;
    Reply(conn, h2, reply);
    return r;
  }
  Reply(conn, h, reply);
  return r;
}

void FakeWorker::Output(Connection& conn, const std::string& text) {
  codec::BodyWriter w;
  w.Encode(msg::Output{text});
  if (!SendFrame(conn, static_cast<uint16_t>(wire::Op::kOutput), 0, w).ok()) Fail("output failed");
}

void FakeWorker::Fail(const std::string& why) {
  std::fprintf(stderr, "FakeWorker: %s\n", why.c_str());
  std::abort();
}

}  // namespace hipr::client::testing
