// What the session fuzz target (session_fuzz.cc) and its seed generator
// (session_seeds.cc) agree on: the hello the target puts first, and the
// window it offers, so seeds can name device addresses that the sim's
// allocations really have.
#pragma once

#include <cstdint>
#include <vector>

#include "protocol/messages.h"
#include "protocol/wire.h"
#include "tests/fuzz/frame_script.h"

namespace hipr::fuzz {

// The device address window the hello offers. The sim maps it there with
// MAP_FIXED_NOREPLACE (never over anything of this process), so allocations
// land at the same addresses in every run: at kWindowBase for the first.
// Clear of the places ASan reserves on x86-64 (shadow below 0x10007fff8000,
// allocator at 0x600000000000) and of where the kernel puts mmaps (just
// under 0x7fffffffffff).
inline constexpr uint64_t kWindowBase = 0x500000000000;
inline constexpr uint64_t kWindowBytes = uint64_t{256} << 20;

inline msg::HelloRequest FuzzHello() {
  msg::HelloRequest hello;
  hello.min_version = wire::kMinProtocolVersion;
  hello.max_version = wire::kProtocolVersion;
  hello.client_name = "session_fuzz";
  hello.client_pid = 1;
  hello.window = {kWindowBase, kWindowBytes};
  hello.chunk_bytes = FrameScript::kChunkBytes;
  hello.features = {wire::kFeatureLz4ToDevice, wire::kFeatureLz4FromDevice};
  return hello;
}

// The hello frame, request id 1.
inline std::vector<uint8_t> HelloFrame() {
  FrameScript s;
  s.Add(wire::Op::kHello, 1, FuzzHello());
  return s.bytes();
}

}  // namespace hipr::fuzz
