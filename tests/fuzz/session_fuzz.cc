// Fuzz target: a worker session's handshake and dispatch. Each input is what
// a client sends after connecting; the target runs a worker Session on the
// sim device (CreateDevice, as a session process does) over a
// MemoryConnection that yields those bytes and then ends, as a client that
// closes its socket does. The session then tears down: its heartbeat thread,
// the device's stream threads and every queued completion end with it.
//
// Input: byte 0 says how the stream starts. Even: the target puts a valid
// hello first (the window at kWindowBase, lz4 offered both ways), so the rest
// (frames after the hello) reaches Dispatch. Odd: the rest is the whole
// stream, hello included.
//
// Bounds per input: 64 MiB of sim memory per device, a 256 MiB window, an
// in-memory code cache; nothing waits on the clock (a stream wait on a value
// nobody writes ends with the device).
//
// Invariants beyond the sanitizers': the session ends (a hang is a bug
// libFuzzer's -timeout reports), and once it has, the process has the
// threads and descriptors it had before (none leak across inputs).
#include "tests/fuzz/session_fuzz.h"

#include <dirent.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "tests/fuzz/memory_connection.h"
#include "worker_service/process/config.h"
#include "worker_service/device/device_factory.h"
#include "worker_service/session/session.h"

namespace {

using namespace hipr;

// An invariant of the target: says which before it stops the run.
void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "session_fuzz: %s\n", what);
  __builtin_trap();
}

const worker::WorkerConfig& Config() {
  static const worker::WorkerConfig* config = [] {
    auto* c = new worker::WorkerConfig;  // Never destroyed: sessions of every input borrow it.
    c->device = "sim";
    c->sim_devices = 2;  // Peer copies and a second device's streams.
    c->sim_memory_bytes = uint64_t{64} << 20;
    c->code_cache_dir.clear();  // Memory only: no files written.
    c->code_cache_bytes = uint64_t{64} << 20;
    c->compress = "on";  // kDataLz4 in both directions when the hello offers it.
    c->chunk_bytes = 64u << 10;
    c->hello_timeout_ms = 1000;
    c->spin_us = 0;
    return c;
  }();
  return *config;
}

// Entries of a /proc/self directory: this process's threads or descriptors.
int CountEntries(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

// True once `dir` has `want` entries again, within a second. A joined
// thread has finished, but the kernel may list it in /proc/self/task for a
// moment after pthread_join returns.
bool Settles(const char* dir, int want) {
  for (int tries = 0; tries < 1000; ++tries) {
    if (CountEntries(dir) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A session logs every refused call: off, unless a person replaying an
  // input wants to read what the session made of it.
  const char* log = std::getenv("HIPR_FUZZ_LOG");
  spdlog::set_level(log != nullptr && *log == '1' ? spdlog::level::debug : spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const bool initialized = LLVMFuzzerInitialize(nullptr, nullptr) == 0;  // The replay driver has no hook.
  (void)initialized;
  static const std::vector<uint8_t> hello = hipr::fuzz::HelloFrame();
  std::vector<uint8_t> stream;
  if ((data[0] & 1) == 0) stream = hello;
  stream.insert(stream.end(), data + 1, data + size);

  const int threads = CountEntries("/proc/self/task");
  const int fds = CountEntries("/proc/self/fd");
  {
    std::unique_ptr<worker::Device> device;
    Require(worker::CreateDevice(Config(), {}, &device).ok(), "the sim device could not be created");
    auto conn = std::make_unique<hipr::fuzz::MemoryConnection>(std::span<const uint8_t>(stream));
    worker::Session session(/*id=*/1, std::move(conn), std::move(device), Config());
    (void)session.Run();
  }
  Require(Settles("/proc/self/task", threads), "a thread outlived its session");
  Require(CountEntries("/proc/self/fd") == fds, "a descriptor outlived its session");
  return 0;
}
