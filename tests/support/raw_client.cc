#include "tests/support/raw_client.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "protocol/shm/shm_connection.h"
#include "protocol/tcp/tcp_connection.h"

namespace hipr::test {

std::string WorkerBinary() { return HIPR_WORKER_BINARY; }

WorkerRun RunWorkerToExit(std::vector<std::string> args, const char* hipr_server, const std::string& binary) {
  WorkerRun run;
  int out[2];
  if (pipe(out) != 0) return run;
  pid_t pid = fork();
  if (pid < 0) return run;
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(out[1], 2);
    close(out[0]);
    if (hipr_server != nullptr) setenv("HIPR_SERVER", hipr_server, 1);
    std::string bin = binary.empty() ? WorkerBinary() : binary;
    std::vector<char*> argv{bin.data()};
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  close(out[1]);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  char buf[4096];
  for (;;) {
    pollfd pfd{out[0], POLLIN, 0};
    if (poll(&pfd, 1, 30000) != 1) break;
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    run.text.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);
  int ws = 0;
  bool exited = false;
  while (!(exited = waitpid(pid, &ws, WNOHANG) == pid) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &ws, 0);
  }
  if (exited && WIFEXITED(ws)) run.status = WEXITSTATUS(ws);
  return run;
}

WorkerProcess::WorkerProcess(std::vector<std::string> args) {
  char tmpl[] = "/tmp/hipr-test-XXXXXX";
  dir_ = mkdtemp(tmpl);
  std::string port_file = dir_ + "/port";
  std::vector<std::string> argv_s = {WorkerBinary(), "--port-file", port_file, "--sim-memory", "2G",
                                     "--log-level", "warn"};
  // Loopback unless the test listens elsewhere (endpoint() still reaches
  // a wildcard address there).
  if (std::find(args.begin(), args.end(), "--listen") == args.end())
    argv_s.insert(argv_s.end(), {"--listen", "127.0.0.1:0"});
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ == 0) {
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  for (int i = 0; i < 500 && port_ == 0; ++i) {
    std::ifstream in(port_file);
    int p = 0;
    if (in >> p) port_ = static_cast<uint16_t>(p);
    else std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (port_ == 0) throw std::runtime_error("hipr-worker did not start");
}

WorkerProcess::~WorkerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int ws = 0;
    for (int i = 0; i < 500; ++i) {
      if (waitpid(pid_, &ws, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &ws, 0);
    }
  }
  std::string cmd = "rm -rf " + dir_;
  (void)!system(cmd.c_str());
}

int WorkerProcess::Stop(int signo, int timeout_ms) {
  if (pid_ <= 0) return -1;
  kill(pid_, signo);
  int ws = 0;
  for (int waited = 0; waited <= timeout_ms; waited += 10) {
    if (waitpid(pid_, &ws, WNOHANG) == pid_) {
      pid_ = -1;
      return ws;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

bool WorkerProcess::Alive() const { return pid_ > 0 && kill(pid_, 0) == 0 && waitpid(pid_, nullptr, WNOHANG) == 0; }

namespace {
pid_t ParentOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  char state;
  int ppid = -1;
  if (sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}
}  // namespace

std::vector<pid_t> WorkerProcess::SessionPids() const {
  std::vector<pid_t> all;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    pid_t p = static_cast<pid_t>(atoi(e->d_name));
    if (p > 0) all.push_back(p);
  }
  if (d) closedir(d);
  pid_t zygote = -1;
  for (pid_t p : all)
    if (ParentOf(p) == pid_) zygote = p;
  std::vector<pid_t> sessions;
  for (pid_t p : all)
    if (zygote > 0 && ParentOf(p) == zygote) sessions.push_back(p);
  return sessions;
}

Status RawClient::ConnectBare(const std::string& endpoint, std::unique_ptr<RawClient>* out) {
  auto c = std::unique_ptr<RawClient>(new RawClient());
  if (endpoint.rfind("unix:", 0) == 0) {
    std::unique_ptr<shm::ShmConnection> shm_conn;
    HIPR_RETURN_IF_ERROR(shm::ShmConnection::Connect(endpoint.substr(5), 3000, shm::Options{}, &shm_conn));
    c->conn_ = std::move(shm_conn);
    *out = std::move(c);
    return Status::Ok();
  }
  tcp::Endpoint ep;
  HIPR_RETURN_IF_ERROR(tcp::ParseEndpoint(endpoint, &ep));
  std::unique_ptr<tcp::TcpConnection> tcp_conn;
  HIPR_RETURN_IF_ERROR(tcp::TcpConnection::Connect(ep, 3000, &tcp_conn));
  if (std::shared_ptr<tls::Context> ctx = TlsContext(); ctx != nullptr) {
    std::unique_ptr<tls::TlsConnection> tls_conn;
    HIPR_RETURN_IF_ERROR(tls::TlsConnection::Connect(std::move(tcp_conn), *ctx, "127.0.0.1", 3000, &tls_conn));
    c->conn_ = std::move(tls_conn);
  } else {
    c->conn_ = std::move(tcp_conn);
  }
  *out = std::move(c);
  return Status::Ok();
}

void RawClient::UseTls(std::shared_ptr<tls::Context> ctx) { TlsContext() = std::move(ctx); }

std::shared_ptr<tls::Context>& RawClient::TlsContext() {
  static std::shared_ptr<tls::Context> ctx;
  return ctx;
}

Status RawClient::Connect(const std::string& endpoint, std::unique_ptr<RawClient>* out, uint64_t window_bytes,
                          std::vector<std::string> features) {
  return ConnectImpl(endpoint, out, window_bytes, std::move(features), nullptr);
}

Status RawClient::ConnectAs(const std::string& endpoint, const auth::Credential& credential,
                            std::unique_ptr<RawClient>* out, uint64_t window_bytes,
                            std::vector<std::string> features) {
  return ConnectImpl(endpoint, out, window_bytes, std::move(features), &credential);
}

Status RawClient::ConnectImpl(const std::string& endpoint, std::unique_ptr<RawClient>* out, uint64_t window_bytes,
                              std::vector<std::string> features, const auth::Credential* credential) {
  std::unique_ptr<RawClient> c;
  HIPR_RETURN_IF_ERROR(ConnectBare(endpoint, &c));
  c->window_ = mmap(nullptr, window_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (c->window_ == MAP_FAILED) return Status(StatusCode::kResourceExhausted, "cannot reserve a window");
  c->window_bytes_ = window_bytes;
  msg::HelloRequest hello;
  hello.min_version = wire::kMinProtocolVersion;
  hello.max_version = wire::kProtocolVersion;
  hello.client_name = "raw-test-client";
  hello.client_pid = static_cast<uint32_t>(getpid());
  hello.window = {reinterpret_cast<uint64_t>(c->window_), window_bytes};
  hello.features = std::move(features);
  c->compressor_.set_link_guard(false);  // Compress whatever compresses, as --compress on.
  HIPR_RETURN_IF_ERROR(auth::RandomNonce(&hello.client_nonce));
  HIPR_RETURN_IF_ERROR(c->Call(wire::Op::kHello, hello, &c->hello_));
  if (credential != nullptr && c->hello_.status == StatusCode::kUnauthenticated &&
      !c->hello_.auth_challenge.empty()) {
    const std::vector<uint8_t> challenge = c->hello_.auth_challenge;
    msg::AuthRequest answer{credential->tenant, auth::Mac(auth::Role::kClient, credential->secret, challenge,
                                                          hello.client_nonce, credential->tenant)};
    HIPR_RETURN_IF_ERROR(c->Call(wire::Op::kAuth, answer, &c->hello_));
    if (c->hello_.status == StatusCode::kOk &&
        !auth::MacEquals(c->hello_.auth_proof, auth::Mac(auth::Role::kWorker, credential->secret, challenge,
                                                         hello.client_nonce, credential->tenant)))
      return Status(StatusCode::kUnauthenticated, "the worker's proof does not match");
  }
  if (c->hello_.status != StatusCode::kOk) return Status(c->hello_.status, c->hello_.message);
  for (const std::string& f : c->hello_.features) {
    if (f == wire::kFeatureLz4ToDevice) c->lz4_to_device_ = true;
    if (f == wire::kFeatureLz4FromDevice) c->lz4_from_device_ = true;
  }
  *out = std::move(c);
  return Status::Ok();
}

RawClient::~RawClient() {
  if (window_ != nullptr && window_ != MAP_FAILED) munmap(window_, window_bytes_);
}

Status RawClient::ReceiveAny(wire::FrameHeader* header, std::vector<uint8_t>* body, int timeout_ms) {
  for (;;) {
    HIPR_RETURN_IF_ERROR(conn_->WaitReadable(timeout_ms));
    HIPR_RETURN_IF_ERROR(ReadHeader(*conn_, header));
    if (header->op == static_cast<uint16_t>(wire::Op::kHeartbeat)) {
      ++heartbeats_;
      HIPR_RETURN_IF_ERROR(SkipPayload(*conn_, header->payload_length));
      continue;
    }
    return ReadBody(*conn_, *header, body);
  }
}

Status RawClient::ReceiveBody(wire::Op op, uint32_t request_id, std::vector<uint8_t>* body) {
  for (;;) {
    wire::FrameHeader h;
    HIPR_RETURN_IF_ERROR(ReceiveAny(&h, body));
    if (h.op == static_cast<uint16_t>(wire::Op::kFatal)) {
      msg::Fatal fatal;
      HIPR_RETURN_IF_ERROR(codec::DecodeBody(body->data(), body->size(), &fatal));
      return Status(StatusCode::kDeviceLost, fatal.message);
    }
    if (h.op != wire::ReplyOp(op) || h.request_id != request_id) return ProtocolError("unexpected reply");
    return Status::Ok();
  }
}

int RawClient::Fail(const Status& st) {
  last_ = st;
  return -1;
}

int RawClient::Malloc(uint64_t size, uint64_t* address, int device) {
  msg::MallocReply r;
  Status st = Call(wire::Op::kMalloc, msg::MallocRequest{device, size, 0}, &r);
  if (!st.ok()) return Fail(st);
  *address = r.address;
  return r.error;
}

int RawClient::Write(uint64_t address, const void* data, uint64_t size, uint64_t stream) {
  return WriteRegion({address, size, size, 1}, data, stream);
}

int RawClient::Read(uint64_t address, void* data, uint64_t size, uint64_t stream) {
  return ReadRegion({address, size, size, 1}, data, stream);
}

int RawClient::WriteRegion(const msg::Region& dst, const void* data, uint64_t stream, bool want_reply) {
  msg::CopyToDeviceRequest req;
  req.stream = stream;
  req.dst = dst;
  req.want_reply = want_reply;
  iovec iov{const_cast<void*>(data), dst.bytes()};
  uint32_t id = 0;
  Status st = Send(wire::Op::kCopyToDevice, req, &id, &iov, 1);
  if (!st.ok()) return Fail(st);
  if (!want_reply) return 0;
  msg::CallReply r;
  st = Receive(wire::Op::kCopyToDevice, id, &r);
  return st.ok() ? r.error : Fail(st);
}

int RawClient::ReadRegion(const msg::Region& src, void* data, uint64_t stream) {
  msg::CopyFromDeviceRequest req;
  req.stream = stream;
  req.src = src;
  uint32_t id = 0;
  msg::CallReply r;
  Status st = Send(wire::Op::kCopyFromDevice, req, &id);
  if (st.ok()) st = Receive(wire::Op::kCopyFromDevice, id, &r);
  iovec iov{data, src.bytes()};
  if (st.ok() && r.error == 0 && src.bytes() > 0)
    st = ReadBulk(*conn_, id, &iov, 1, lz4_from_device_ ? &inflater_ : nullptr);
  return st.ok() ? r.error : Fail(st);
}

int RawClient::Memset(uint64_t address, uint8_t value, uint64_t size) {
  msg::MemsetRequest req;
  req.dst = {address, size, size, 1};
  req.value = value;
  Status st = Send(wire::Op::kMemset, req);
  return st.ok() ? Synchronize() : Fail(st);
}

int RawClient::Free(uint64_t address) {
  Status st = Send(wire::Op::kFree, msg::FreeRequest{address});
  return st.ok() ? Synchronize() : Fail(st);
}

int RawClient::Synchronize(int device) {
  msg::CallReply r;
  Status st = Call(wire::Op::kDeviceSynchronize, msg::DeviceRequest{device}, &r);
  return st.ok() ? r.error : Fail(st);
}

int RawClient::MemInfo(uint64_t* free_bytes, uint64_t* total_bytes) {
  msg::MemInfoReply r;
  Status st = Call(wire::Op::kMemGetInfo, msg::DeviceRequest{0}, &r);
  if (!st.ok()) return Fail(st);
  *free_bytes = r.free_bytes;
  *total_bytes = r.total_bytes;
  return r.error;
}

}  // namespace hipr::test
