// Session: modules and kernel launches (kModuleLoad, kLaunchKernel).
#include <hip/hip_runtime_api.h>
#include <lz4.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "protocol/frame_io.h"
#include "worker_service/session/hip_error.h"
#include "worker_service/session/session.h"

namespace hipr::worker {
namespace {

// Functions a session may name; a client beyond this is misbehaving.
constexpr size_t kMaxFunctions = size_t{1} << 20;
// Code objects one session may hold in memory, in all.
constexpr uint64_t kMaxSessionCodeBytes = uint64_t{4} << 30;

Status InvalidImage(std::string why) {
  return Status(StatusCode::kInvalidArgument, std::move(why), hipErrorInvalidImage);
}

}  // namespace

Status Session::ReceiveModule(const wire::FrameHeader& h, const msg::ModuleLoadRequest& m,
                              std::vector<uint8_t>* code, Status* call_error) {
  // Sizes are checked before anything is allocated. A client that breaks
  // them cannot be kept in step with its bulk, so the session ends.
  if (m.code_bytes == 0 || m.code_bytes > wire::kMaxModuleBytes || m.bulk_bytes > wire::kMaxModuleBytes)
    return ProtocolError("module size out of range");
  switch (m.compression) {
    case msg::Compression::kNone:
      if (m.bulk_bytes != m.code_bytes) return ProtocolError("uncompressed module bulk differs from its size");
      break;
    case msg::Compression::kLz4Block:
      // An lz4 block expands at most 255-fold: a larger claim is a lie.
      if (m.code_bytes > LZ4_MAX_INPUT_SIZE ||
          m.bulk_bytes > static_cast<uint64_t>(LZ4_compressBound(static_cast<int>(m.code_bytes))) ||
          m.code_bytes / 255 > m.bulk_bytes + 16)
        return ProtocolError("lz4 module sizes are inconsistent");
      break;
    default:
      return ProtocolError("unknown module compression");
  }
  if (image_bytes_ + m.code_bytes + m.bulk_bytes > kMaxSessionCodeBytes) {
    *call_error = Status(StatusCode::kResourceExhausted,
                         "the session holds too many code objects (at most 4 GiB in all)", hipErrorOutOfMemory);
    return DiscardBulk(*conn_, h.request_id, m.bulk_bytes);
  }
  // Grown as bytes arrive, never from the peer's claim: at most twice what
  // has been received plus 1 MiB is ever allocated.
  constexpr uint64_t kFirstStep = uint64_t{1} << 20;
  std::vector<uint8_t> bulk;
  BulkReader reader(*conn_, h.request_id, m.bulk_bytes);
  while (bulk.size() < m.bulk_bytes) {
    const uint64_t have = bulk.size();
    const uint64_t step = std::min<uint64_t>(m.bulk_bytes - have, std::max<uint64_t>(kFirstStep, have));
    bulk.resize(have + step);
    iovec iov{bulk.data() + have, step};
    HIPR_RETURN_IF_ERROR(reader.Read(&iov, 1));
  }
  if (m.compression == msg::Compression::kLz4Block) {
    // The output grows with what the bytes really decompress to (a block
    // that needs more room fails and is tried again with four times as
    // much), never straight to the claim.
    uint64_t room = std::min<uint64_t>(m.code_bytes, std::max<uint64_t>(kFirstStep, 8 * bulk.size()));
    int n = -1;
    for (;;) {
      code->resize(room);
      n = LZ4_decompress_safe(reinterpret_cast<const char*>(bulk.data()), reinterpret_cast<char*>(code->data()),
                              static_cast<int>(bulk.size()), static_cast<int>(room));
      if (n >= 0 || room == m.code_bytes) break;
      room = std::min<uint64_t>(m.code_bytes, room * 4);
    }
    if (n < 0 || static_cast<uint64_t>(n) != m.code_bytes) {
      *call_error = InvalidImage("the module's lz4 data does not decompress to its stated size");
      return Status::Ok();
    }
  } else {
    *code = std::move(bulk);
  }
  co::Sha256Digest want;
  std::copy(m.sha256.begin(), m.sha256.end(), want.begin());
  if (co::Sha256(*code) != want) {
    *call_error = InvalidImage("the module's bytes do not match the SHA-256 they were sent under");
    spdlog::warn("session {}: module '{}': bytes do not hash to {}; refused", id_, m.name, co::ToHex(want));
  }
  return Status::Ok();
}

Status Session::On(ops::Tag<wire::Op::kModuleLoad>, const wire::FrameHeader& h, msg::ModuleLoadRequest& m) {
  if (m.sha256.size() != std::tuple_size_v<co::Sha256Digest>) return ProtocolError("module SHA-256 is not 32 bytes");
  co::Sha256Digest digest;
  std::copy(m.sha256.begin(), m.sha256.end(), digest.begin());
  const std::string hex = co::ToHex(digest);

  msg::ModuleLoadReply r;
  std::shared_ptr<const ModuleImage> image;
  std::vector<uint8_t> code;
  const char* source = "session memory";
  if (m.bulk_bytes > 0) {
    Status call_error;
    HIPR_RETURN_IF_ERROR(ReceiveModule(h, m, &code, &call_error));
    if (!call_error.ok()) {
      r.error = ToHipError(call_error);
      r.message = call_error.message();
      return Reply(h, r);
    }
    source = m.compression == msg::Compression::kLz4Block ? "the client (lz4)" : "the client";
  } else if (auto it = images_.find(hex); it != images_.end()) {
    image = it->second;
    if (ledger_ != nullptr) ledger_->Count(Ledger::kCodeCacheHits);
  } else if (code_cache_.Get(digest, &code)) {
    source = "the code cache";
    if (ledger_ != nullptr) ledger_->Count(Ledger::kCodeCacheHits);
  } else {
    r.need_code = true;
    if (ledger_ != nullptr) ledger_->Count(Ledger::kCodeCacheMisses);
    return Reply(h, r);
  }

  if (!image) {
    auto fresh = std::make_shared<ModuleImage>();
    Status st = co::ParseCodeObject(code, &fresh->info);
    if (!st.ok()) {
      Status bad = InvalidImage("module '" + m.name + "' is not a usable code object: " + st.message());
      spdlog::warn("session {}: {}", id_, bad.message());
      r.error = ToHipError(bad);
      r.message = bad.message();
      return Reply(h, r);
    }
    // What a session holds counts against its tenant's memory= and the
    // worker's budget, code objects included (a GPU loads them into its
    // memory too); given back when the session ends.
    if (ledger_ != nullptr) {
      if (Status charged = ledger_->Charge(slot_, code.size()); !charged.ok()) {
        Status over(StatusCode::kResourceExhausted,
                    "module '" + m.name + "' (" + std::to_string(code.size()) + " bytes): " + charged.message() +
                        " (code objects a session holds count too)",
                    hipErrorOutOfMemory);
        spdlog::warn("session {}: {}", id_, over.message());
        r.error = ToHipError(over);
        r.message = over.message();
        return Reply(h, r);
      }
    }
    if (m.bulk_bytes > 0) code_cache_.Put(digest, code);
    fresh->sha256 = digest;
    fresh->code = std::move(code);
    fresh->name = m.name;
    image = fresh;
    images_[hex] = image;
    image_bytes_ += image->code.size();
  }

  if (modules_.size() >= static_cast<size_t>(config_.max_modules_per_session)) {
    Status over = OverLimit("modules", modules_.size(), config_.max_modules_per_session, "--max-modules-per-session");
    r.error = ToHipError(over);
    r.message = over.message();
    return Reply(h, r);
  }
  ModuleLoadResult result;
  Status st = device_->LoadModule(m.device, m.module, image, &result);
  r.error = ToHipError(st);
  if (!st.ok()) {
    r.message = st.message();
    spdlog::warn("session {}: module {} '{}' failed to load: {}", id_, m.module, m.name, st.ToString());
    return Reply(h, r);
  }
  modules_[m.module] = m.device;
  r.globals = std::move(result.globals);
  r.unavailable_kernels = std::move(result.unavailable_kernels);
  r.all_kernels_unavailable = result.all_unavailable;
  r.message = std::move(result.message);
  // One reply must stay within the msgpack limits (wire.h).
  if (r.globals.size() > wire::kMaxMsgpackArray / 2 || r.unavailable_kernels.size() > wire::kMaxMsgpackArray / 2) {
    Status too_big(StatusCode::kResourceExhausted,
                   "module '" + m.name + "' has more variables or unavailable kernels than one reply can list",
                   hipErrorNotSupported);
    spdlog::error("session {}: {}", id_, too_big.message());
    (void)device_->UnloadModule(m.module);
    return Reply(h, msg::ModuleLoadReply{ToHipError(too_big), false, too_big.message(), {}, {}, false});
  }
  spdlog::info("session {}: module {} '{}' ({}, {} bytes) from {}: {} kernels, {} variables{}{}", id_,
               m.module, m.name, hex, image->code.size(), source, image->info.kernels.size(),
               r.globals.size(), r.message.empty() ? "" : "; ", r.message);
  return Reply(h, r);
}

Status Session::On(ops::Tag<wire::Op::kLaunchKernel>, const wire::FrameHeader& h, msg::LaunchRequest& m) {
  Defer(h, Replay(std::move(m)));
  return Status::Ok();
}

Status Session::Launch(msg::LaunchRequest m) {
  auto it = functions_.find(m.function);
  if (it == functions_.end()) {
    if (m.kernel.empty())
      return Status(StatusCode::kInvalidHandle, "launch of unknown function id " + std::to_string(m.function));
    if (functions_.size() >= kMaxFunctions)
      return Status(StatusCode::kResourceExhausted, "too many kernel functions in one session");
    it = functions_.emplace(m.function, Function{m.module, m.kernel}).first;
  } else if ((!m.kernel.empty() && m.kernel != it->second.kernel) || m.module != it->second.module) {
    return Status(StatusCode::kInvalidHandle,
                  "function id " + std::to_string(m.function) + " already names another kernel");
  }
  KernelLaunch launch;
  launch.device = m.device;
  launch.stream = m.stream;
  launch.module = m.module;
  launch.kernel = it->second.kernel;
  launch.grid = m.grid;
  launch.block = m.block;
  launch.global = m.global;
  launch.shared_bytes = m.shared_bytes;
  launch.flags = m.flags;
  launch.kernarg = std::move(m.kernarg);
  launch.start_event = m.start_event;
  launch.stop_event = m.stop_event;
  return device_->LaunchKernel(std::move(launch));
}

}  // namespace hipr::worker
