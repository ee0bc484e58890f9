// FakeWorker (tests only): a scripted stand-in for a hipr-worker session. It
// listens on 127.0.0.1, accepts one connection and runs a test's script on
// it in a thread, with helpers that speak the real protocol (frame_io.h) so
// the client's Session is exercised over a real TCP socket.
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/tcp/tcp_connection.h"

namespace hipr::client::testing {

class FakeWorker {
 public:
  FakeWorker();   // Listens on an ephemeral port.
  ~FakeWorker();  // Joins the script thread.

  // "127.0.0.1:<port>".
  std::string address() const;

  // Accepts one connection and runs `script` on it in a thread.
  void Serve(std::function<void(tcp::TcpConnection&)> script);
  // Accepts `count` connections one after another, running `script` on each
  // with its index (0, 1, ...) before accepting the next.
  void ServeEach(int count, std::function<void(tcp::TcpConnection&, int)> script);
  void Join();

  // Reads the next frame header; heartbeats from the client are not expected.
  static wire::FrameHeader Next(Connection& conn);
  // Reads the next frame, which must be `op`, and decodes its body.
  template <class T>
  static T Read(Connection& conn, wire::Op op, wire::FrameHeader* header = nullptr) {
    wire::FrameHeader h = Next(conn);
    T msg{};
    std::vector<uint8_t> body;
    if (h.op != static_cast<uint16_t>(op) || !ReadBody(conn, h, &body).ok() ||
        !codec::DecodeBody(body.data(), body.size(), &msg).ok())
      Fail("unexpected frame op " + std::to_string(h.op) + ", wanted " +
           std::to_string(static_cast<uint16_t>(op)));
    if (header != nullptr) *header = h;
    return msg;
  }
  // Sends the reply to `request`.
  template <class T>
  static void Reply(Connection& conn, const wire::FrameHeader& request, const T& msg,
                    const iovec* bulk = nullptr, int bulk_count = 0,
                    uint32_t chunk = wire::kDefaultChunkBytes) {
    codec::BodyWriter w;
    w.Encode(msg);
    Status st = SendFrame(conn, static_cast<uint16_t>(request.op | wire::kReplyBit), request.request_id,
                          w, bulk, bulk_count, chunk);
    if (!st.ok()) Fail("reply failed: " + st.ToString());
  }
  static void Heartbeat(Connection& conn);
  static void Fatal(Connection& conn, StatusCode code, const std::string& message);

  // Answers the hello with `devices` and the offered window (or `window`
  // when its size is non-zero, or an empty window when `empty_window`).
  static msg::HelloRequest AcceptHello(Connection& conn, std::vector<msg::DeviceInfo> devices,
                                       msg::AddressWindow window = {}, bool empty_window = false,
                                       uint32_t chunk_bytes = 0);

  static msg::DeviceInfo Device(const std::string& name);

  // What a module load delivered.
  struct ReceivedModule {
    msg::ModuleLoadRequest request;  // The last request (with the bytes, if sent).
    bool shipped = false;            // The client sent the code object.
    std::vector<uint8_t> code;       // Decompressed; hashes to request.sha256.
  };
  // Answers a kModuleLoad whose header was just read (`h`): unless
  // have_code(request) says the worker has the code object, replies need_code, reads the second request and its bulk,
  // decompresses it (lz4) and checks that it hashes to the SHA-256 the
  // client named (aborts otherwise). Then replies `reply`.
  static ReceivedModule AnswerModuleLoad(Connection& conn, const wire::FrameHeader& h,
                                         const std::function<bool(const msg::ModuleLoadRequest&)>& have_code,
                                         const msg::ModuleLoadReply& reply);
  // Decodes the body of a frame whose header was just read.
  template <class T>
  static T Body(Connection& conn, const wire::FrameHeader& h) {
    T msg{};
    std::vector<uint8_t> body;
    if (!ReadBody(conn, h, &body).ok() || !codec::DecodeBody(body.data(), body.size(), &msg).ok())
      Fail("cannot decode the body of op " + std::to_string(h.op));
    return msg;
  }
  // Sends an unsolicited kOutput frame (device printf text).
  static void Output(Connection& conn, const std::string& text);

 private:
  [[noreturn]] static void Fail(const std::string& why);

  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace hipr::client::testing
