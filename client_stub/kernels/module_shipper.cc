#include "client_stub/kernels/module_shipper.h"

#include <lz4.h>

#include <hip/hip_runtime_api.h>

#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"

namespace hipr::client {

bool CompressIfSmaller(co::Bytes in, std::vector<uint8_t>* out) {
  if (in.empty() || in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return false;
  const int src_size = static_cast<int>(in.size());
  out->resize(static_cast<size_t>(LZ4_compressBound(src_size)));
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out->data()),
                                     src_size, static_cast<int>(out->size()));
  if (n <= 0 || static_cast<size_t>(n) >= in.size()) {
    out->clear();
    return false;
  }
  out->resize(static_cast<size_t>(n));
  return true;
}

Status ShipModule(Remote& session, int device, uint64_t id, co::Bytes elf, const co::Sha256Digest& sha256,
                  const std::string& name, msg::ModuleLoadReply* reply) {
  msg::ModuleLoadRequest request;
  request.device = device;
  request.module = id;
  request.sha256.assign(sha256.begin(), sha256.end());
  request.name = name;
  HIPR_RETURN_IF_ERROR(session.Call<wire::Op::kModuleLoad>(request, reply));
  if (!reply->need_code) {
    if (reply->error == 0) stats::Add(stats::Get().modules_loaded);
    return Status::Ok();
  }

  // The worker lacks it: send the bytes.
  std::vector<uint8_t> compressed;
  const bool lz4 = CompressIfSmaller(elf, &compressed);
  request.code_bytes = elf.size();
  request.compression = lz4 ? msg::Compression::kLz4Block : msg::Compression::kNone;
  request.bulk_bytes = lz4 ? compressed.size() : elf.size();
  if (request.code_bytes > wire::kMaxModuleBytes || request.bulk_bytes > wire::kMaxModuleBytes) {
    reply->error = hipErrorInvalidImage;
    reply->need_code = false;
    reply->message = "the code object (" + std::to_string(request.code_bytes) +
                     " bytes) exceeds the protocol's limit on modules";
    return Status::Ok();
  }
  iovec bulk{lz4 ? static_cast<void*>(compressed.data()) : const_cast<uint8_t*>(elf.data()),
             static_cast<size_t>(request.bulk_bytes)};
  HIPR_LOG_DEBUG("shipping module %llu '%s' (%zu bytes%s%llu)", static_cast<unsigned long long>(id), name.c_str(),
                 elf.size(), lz4 ? ", lz4 " : ", raw ", static_cast<unsigned long long>(request.bulk_bytes));
  *reply = msg::ModuleLoadReply{};
  HIPR_RETURN_IF_ERROR(session.Call<wire::Op::kModuleLoad>(request, reply, &bulk, 1));
  stats::Add(stats::Get().modules_shipped);
  stats::Add(stats::Get().code_bytes, request.code_bytes);
  stats::Add(stats::Get().code_wire_bytes, request.bulk_bytes);
  if (reply->error == 0 && !reply->need_code) stats::Add(stats::Get().modules_loaded);
  if (reply->need_code) {
    reply->need_code = false;
    if (reply->error == 0) reply->error = hipErrorInvalidImage;
    reply->message = "the worker asked again for the code object it was just sent";
  }
  return Status::Ok();
}

}  // namespace hipr::client
