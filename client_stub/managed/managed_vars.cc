#include "client_stub/managed/managed_vars.h"

#include <pthread.h>
#include <sys/uio.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "client_stub/kernels/code_module.h"
#include "client_stub/base/log.h"
#include "client_stub/allocate/device_memory.h"
#include "client_stub/session/hip_status.h"
#include "protocol/messages.h"

namespace hipr::client {

namespace {

// Sends `size` bytes at `src` to device memory at `address`, fire-and-forget
// on (device, stream); the bytes are consumed before this returns.
Status PostToDevice(Remote& s, int device, uint64_t stream, uint64_t address, const void* src, size_t size) {
  const iovec bulk{const_cast<void*>(src), size};
  return s.PostCopy(msg::CopyToDeviceRequest{device, stream, msg::Region{address, size, size, 1}, false, {}}, &bulk, 1);
}

}  // namespace

void ManagedVars::LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
void ManagedVars::UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
void ManagedVars::ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS { new (&mu_) Mutex(); }

ManagedVar* ManagedVars::Register(CodeModule* module, std::string name, const void* init, size_t size,
                                  size_t align) {
  size_t alignment = align < alignof(std::max_align_t) ? alignof(std::max_align_t) : align;
  if ((alignment & (alignment - 1)) != 0) alignment = alignof(std::max_align_t);
  const size_t bytes = (size == 0 ? 1 : size + alignment - 1) / alignment * alignment;
  auto* mirror = static_cast<uint8_t*>(std::aligned_alloc(alignment, bytes));
  if (mirror == nullptr) return nullptr;
  std::memset(mirror, 0, bytes);
  if (init != nullptr && size != 0) std::memcpy(mirror, init, size);
  auto* var = new (std::nothrow) ManagedVar();
  if (var == nullptr) {
    std::free(mirror);
    return nullptr;
  }
  var->module = module;
  var->name = std::move(name);
  var->size = size;
  var->mirror = mirror;
  MutexLock lock(mu_);
  vars_.push_back(var);
  count_.store(vars_.size(), std::memory_order_release);
  return var;
}

Status ManagedVars::Attach(Client& client, Remote& session, int device, const ModuleLoad& load,
                           const std::vector<ManagedVar*>& vars) {
  MutexLock lock(mu_);
  for (ManagedVar* var : vars) {
    auto global = load.globals.find(var->name);
    if (global == load.globals.end() || global->second.size != sizeof(uint64_t))
      return HipStatus(hipErrorInvalidSymbol, "the code object has no 8-byte pointer variable '" + var->name +
                                                  "' for the __managed__ variable of that name");
    if (var->session != &session && var->size != 0) {
      void* p = nullptr;
      if (hipError_t e = AllocateDevice(client, session, device, var->size, msg::kMallocManaged,
                                        AllocationRole::kModuleGlobal, &p);
          e != hipSuccess)
        return HipStatus(e, "cannot allocate the device copy of __managed__ variable '" + var->name + "' (" +
                                std::to_string(var->size) + " bytes)");
      var->session = &session;
      var->device = device;
      var->device_address = reinterpret_cast<uint64_t>(p);
      var->exchanged.assign(var->mirror, var->mirror + var->size);
      HIPR_RETURN_IF_ERROR(PostToDevice(session, device, 0, var->device_address, var->mirror, var->size));
      HIPR_LOG_DEBUG("__managed__ variable '%s' (%zu bytes): device copy at 0x%llx", var->name.c_str(), var->size,
                     static_cast<unsigned long long>(var->device_address));
    }
    const uint64_t address = var->device_address;
    HIPR_RETURN_IF_ERROR(
        PostToDevice(session, device, 0, global->second.address, &address, sizeof(address)));
  }
  return Status::Ok();
}

ManagedVar* ManagedVars::FindLocked(uint64_t address) const {
  for (ManagedVar* var : vars_) {
    const auto base = reinterpret_cast<uint64_t>(var->mirror);
    if (address >= base && address - base < var->size) return var;
  }
  return nullptr;
}

Status ManagedVars::ExchangeStreamLocked(Client& client, Remote& session, int device, uint64_t* id) {
  HandleTable& handles = client.handles();
  StreamRecord record;
  for (ExchangeStream& e : exchange_streams_) {
    if (e.session != &session || e.device != device) continue;
    if (handles.FindStream(static_cast<hipStream_t>(e.handle), &record)) {
      *id = record.id;
      return Status::Ok();
    }
    e.session = nullptr;  // Forgotten by hipDeviceReset: make another.
  }
  hipStream_t handle = handles.NewStream(device, hipStreamNonBlocking, 0, &record);
  Status st = session.Post<wire::Op::kStreamCreate>(msg::StreamCreateRequest{device, record.id, hipStreamNonBlocking, 0, {}});
  if (!st.ok()) {
    handles.RemoveStream(handle, &record);
    return st;
  }
  std::erase_if(exchange_streams_, [](const ExchangeStream& e) { return e.session == nullptr; });
  exchange_streams_.push_back(ExchangeStream{&session, device, handle});
  *id = record.id;
  return Status::Ok();
}

Status ManagedVars::PushLocked(Client& client, Remote& session, ManagedVar& var, int device) {
  if (var.session != &session || var.size == 0) return Status::Ok();
  // Where host code may have written: the pages the kernel saw written, or
  // (unwatched) all of it.
  std::vector<WriteWatch::Run> written;
  if (var.watched && !watch_->TakeWritten(var.mirror, var.size, &written).ok()) {
    HIPR_LOG_INFO("managed memory %s: the kernel no longer tracks writes to it (a fork?); comparing it whole",
                  Describe(var).c_str());
    var.watched = false;
  }
  if (!var.watched) written.assign(1, {0, var.size});
  // In each, only the span from the first changed byte to the last
  // travels, found block by block from each end.
  constexpr size_t kBlock = 4096;
  const uint8_t* was = var.exchanged.data();
  std::vector<std::pair<size_t, size_t>> spans;  // [first, end)
  for (const auto& [offset, length] : written) {
    size_t first = offset;
    const size_t stop = offset + length;
    while (first < stop) {
      const size_t n = std::min(kBlock - first % kBlock, stop - first);
      if (std::memcmp(var.mirror + first, was + first, n) != 0) break;
      first += n;
    }
    if (first == stop) continue;  // Nothing changed here.
    while (var.mirror[first] == was[first]) ++first;
    size_t end = stop;  // One past the last changed byte.
    while (end - first > kBlock && std::memcmp(var.mirror + end - kBlock, was + end - kBlock, kBlock) == 0)
      end -= kBlock;
    while (var.mirror[end - 1] == was[end - 1]) --end;
    // Neighbours a page apart or less travel as one.
    if (!spans.empty() && first - spans.back().second <= kBlock)
      spans.back().second = end;
    else
      spans.emplace_back(first, end);
  }
  if (spans.empty()) return Status::Ok();
  // All on the exchange stream, the last one blocking: the bytes must be in
  // place before any later work, on any stream, reads them.
  uint64_t stream = 0;
  Status st = ExchangeStreamLocked(client, session, device, &stream);
  for (size_t i = 0; st.ok() && i < spans.size(); ++i) {
    const auto [first, end] = spans[i];
    const size_t n = end - first;
    const iovec bulk{var.mirror + first, n};
    const msg::CopyToDeviceRequest request{device, stream, msg::Region{var.device_address + first, n, n, 1},
                                           i + 1 == spans.size(), {}};
    if (!request.want_reply) {
      st = session.PostCopy(request, &bulk, 1);
      continue;
    }
    msg::CallReply reply;
    st = session.Call<wire::Op::kCopyToDevice>(request, &reply, &bulk, 1);
    if (st.ok() && reply.error != 0) st = HipStatus(reply.error, "the copy to the device failed");
  }
  if (!st.ok()) {
    HIPR_LOG_ERROR("managed memory %s: sending its changed bytes: %s", Describe(var).c_str(), st.message().c_str());
    // What the kernel reported written is taken: compare whole from now on.
    var.watched = false;
    return st;
  }
  for (const auto& [first, end] : spans) std::memcpy(var.exchanged.data() + first, var.mirror + first, end - first);
  return Status::Ok();
}

bool ManagedVars::Overlaps(const ManagedVar& var, const void* p, uint64_t n) {
  if (p == nullptr) return true;
  const auto a = reinterpret_cast<uint64_t>(p);
  const auto base = reinterpret_cast<uint64_t>(var.mirror);
  return a < base + var.size && (n == 0 ? a >= base : a + n > base);
}

Status ManagedVars::Push(Client& client, Remote& session, int device, uint64_t stream, const void* p, uint64_t n) {
  if (empty()) return Status::Ok();
  MutexLock lock(mu_);
  for (ManagedVar* var : vars_)
    if (Overlaps(*var, p, n)) HIPR_RETURN_IF_ERROR(PushLocked(client, session, *var, device));
  return Status::Ok();
}

void ManagedVars::MarkWritten(const Remote& session, int device, uint64_t stream, const void* p, uint64_t n) {
  if (empty()) return;
  MutexLock lock(mu_);
  const ManagedWriter w{device, stream};
  for (ManagedVar* var : vars_) {
    if (var->session != &session || !Overlaps(*var, p, n)) continue;
    if (std::find(var->writers.begin(), var->writers.end(), w) == var->writers.end()) var->writers.push_back(w);
  }
}

Status ManagedVars::BeforeLaunch(Client& client, Remote& session, int device, uint64_t stream,
                                 const std::vector<uint32_t>& pointer_offsets, std::vector<uint8_t>* kernarg) {
  if (empty()) return Status::Ok();
  // Variables a pointer argument refers to whose module has not been loaded
  // in this session: load them first, outside the lock (a load attaches).
  for (uint32_t offset : pointer_offsets) {
    if (offset + sizeof(uint64_t) > kernarg->size()) continue;
    uint64_t value = 0;
    std::memcpy(&value, kernarg->data() + offset, sizeof(value));
    CodeModule* module = nullptr;
    {
      MutexLock lock(mu_);
      ManagedVar* var = FindLocked(value);
      if (var == nullptr || var->session == &session) continue;
      module = var->module;
    }
    std::shared_ptr<const ModuleLoad> load;
    HIPR_RETURN_IF_ERROR(module->Load(session, device, &load));
  }
  HIPR_RETURN_IF_ERROR(Push(client, session, device, stream));
  MarkWritten(session, device, stream);
  MutexLock lock(mu_);
  for (uint32_t offset : pointer_offsets) {
    if (offset + sizeof(uint64_t) > kernarg->size()) continue;
    uint64_t value = 0;
    std::memcpy(&value, kernarg->data() + offset, sizeof(value));
    const ManagedVar* var = FindLocked(value);
    if (var == nullptr || var->session != &session || var->allocation()) continue;
    const uint64_t translated = var->device_address + (value - reinterpret_cast<uint64_t>(var->mirror));
    std::memcpy(kernarg->data() + offset, &translated, sizeof(translated));
  }
  return Status::Ok();
}

Status ManagedVars::AfterSync(Client& client, Remote& session, int device, uint64_t stream, ReadBack order) {
  if (empty()) return Status::Ok();
  MutexLock lock(mu_);
  for (ManagedVar* var : vars_) {
    if (var->session != &session || var->size == 0) continue;
    // Stream 0 (the null stream, a device or event synchronisation) covers
    // every stream of the device.
    auto covered = [&](const ManagedWriter& w) { return w.device == device && (stream == 0 || w.stream == stream); };
    if (std::none_of(var->writers.begin(), var->writers.end(), covered)) continue;
    uint64_t exchange = stream;
    if (order == ReadBack::kAfterSync) HIPR_RETURN_IF_ERROR(ExchangeStreamLocked(client, session, device, &exchange));
    Status st = ReadBackLocked(session, *var, device, exchange);
    if (!st.ok()) {
      HIPR_LOG_ERROR("managed memory %s: reading it back: %s", Describe(*var).c_str(), st.message().c_str());
      return st;
    }
    var->writers.erase(std::remove_if(var->writers.begin(), var->writers.end(), covered), var->writers.end());
  }
  return Status::Ok();
}

Status ManagedVars::ReadBackLocked(Remote& session, ManagedVar& var, int device, uint64_t exchange) {
  const msg::Region whole{var.device_address, var.size, var.size, 1};
  if (!session.copy_changed()) {
    std::vector<uint8_t> now(var.size);
    iovec dst{now.data(), now.size()};
    msg::CallReply reply;
    HIPR_RETURN_IF_ERROR(session.Call<wire::Op::kCopyFromDevice>(msg::CopyFromDeviceRequest{device, exchange, whole, {}},
                                                                 &reply, nullptr, 0, &dst, 1));
    if (reply.error != 0) return HipStatus(reply.error, "the copy from the device failed");
    Merge(var.mirror, var.exchanged.data(), now.data(), var.size);
    var.exchanged.swap(now);
    return Status::Ok();
  }
  // Only what device work wrote comes back, into a buffer of which only
  // those pages are ever touched (no value-initialisation).
  std::unique_ptr<uint8_t[]> now(new (std::nothrow) uint8_t[var.size]);
  if (now == nullptr) return Status(StatusCode::kResourceExhausted, "out of memory for the read-back");
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  int32_t error = 0;
  HIPR_RETURN_IF_ERROR(session.CopyChanged(msg::CopyChangedRequest{device, exchange, whole}, now.get(), &runs, &error));
  if (error != 0) return HipStatus(error, "the copy from the device failed");
  uint64_t bytes = 0;
  for (const auto& [offset, length] : runs) {
    Merge(var.mirror + offset, var.exchanged.data() + offset, now.get() + offset, length);
    std::memcpy(var.exchanged.data() + offset, now.get() + offset, length);
    bytes += length;
  }
  HIPR_LOG_DEBUG("managed memory %s: read back %llu bytes in %zu runs", Describe(var).c_str(),
                 static_cast<unsigned long long>(bytes), runs.size());
  return Status::Ok();
}

// Three-way merge of the device's bytes `now` into `mirror`, both last
// agreeing on `exchanged`: a byte the device changed wins; a byte only host
// code changed since stays (it is pushed before the next work). Block by
// block, so that what neither side touched costs one memcmp.
void ManagedVars::Merge(uint8_t* mirror, const uint8_t* exchanged, const uint8_t* now, size_t size) {
  constexpr size_t kBlock = 4096;
  for (size_t off = 0; off < size; off += kBlock) {
    const size_t n = std::min(kBlock, size - off);
    if (std::memcmp(now + off, exchanged + off, n) == 0) continue;  // The device changed nothing here.
    if (std::memcmp(mirror + off, exchanged + off, n) == 0) {      // Nor did the host: take the device's.
      std::memcpy(mirror + off, now + off, n);
      continue;
    }
    for (size_t i = off; i < off + n; ++i)
      if (now[i] != exchanged[i]) mirror[i] = now[i];
  }
}

Status ManagedVars::AddAllocation(Remote& session, int device, uint64_t address, size_t size) {
  auto* var = new (std::nothrow) ManagedVar();
  if (var == nullptr) return Status(StatusCode::kResourceExhausted, "out of memory");
  var->size = size;
  var->mirror = reinterpret_cast<uint8_t*>(address);
  var->session = &session;
  var->device_address = address;
  var->device = device;
  try {
    var->exchanged.assign(size, 0);
  } catch (const std::bad_alloc&) {
    delete var;
    return Status(StatusCode::kResourceExhausted, "out of memory for the managed allocation's exchange copy");
  }
  MutexLock lock(mu_);
  if (!watch_tried_) {
    watch_tried_ = true;
    std::string why;
    watch_ = WriteWatch::Open(&why);
    if (watch_ == nullptr)
      HIPR_LOG_INFO("managed memory: host writes are found by comparing whole allocations (the kernel offers no "
                    "write tracking: %s)", why.c_str());
  }
  if (watch_ != nullptr) {
    Status st = watch_->Watch(var->mirror, size);
    var->watched = st.ok();
    if (!st.ok())
      HIPR_LOG_INFO("managed memory %s: comparing it whole: %s", Describe(*var).c_str(), st.message().c_str());
  }
  vars_.push_back(var);
  count_.store(vars_.size(), std::memory_order_release);
  return Status::Ok();
}

bool ManagedVars::RemoveAllocation(uint64_t address, size_t* size) {
  MutexLock lock(mu_);
  for (auto it = vars_.begin(); it != vars_.end(); ++it) {
    ManagedVar* var = *it;
    if (!var->allocation() || reinterpret_cast<uint64_t>(var->mirror) != address) continue;
    *size = var->size;
    vars_.erase(it);
    count_.store(vars_.size(), std::memory_order_release);
    delete var;
    return true;
  }
  return false;
}

std::vector<std::pair<uint64_t, size_t>> ManagedVars::ForgetDevice(const Remote* session, int device) {
  std::vector<std::pair<uint64_t, size_t>> dropped;
  MutexLock lock(mu_);
  for (auto it = vars_.begin(); it != vars_.end();) {
    ManagedVar* var = *it;
    if (var->session != session || (device >= 0 && var->device != device)) {
      ++it;
      continue;
    }
    if (var->allocation()) {
      dropped.emplace_back(var->device_address, var->size);
      delete var;
      it = vars_.erase(it);
      continue;
    }
    var->session = nullptr;
    var->device_address = 0;
    var->writers.clear();
    ++it;
  }
  count_.store(vars_.size(), std::memory_order_release);
  return dropped;
}

bool ManagedVars::WithAllocation(const void* p, uint64_t n, const std::function<void(ManagedVar&)>& fn) {
  if (empty()) return false;
  MutexLock lock(mu_);
  const auto a = reinterpret_cast<uint64_t>(p);
  ManagedVar* var = FindLocked(a);
  if (var == nullptr || !var->allocation() || n > var->size - (a - reinterpret_cast<uint64_t>(var->mirror)))
    return false;
  fn(*var);
  return true;
}

bool ManagedVars::Touches(const void* p, uint64_t n) const {
  if (empty() || p == nullptr) return false;
  MutexLock lock(mu_);
  return std::any_of(vars_.begin(), vars_.end(), [&](const ManagedVar* v) { return Overlaps(*v, p, n); });
}

std::string ManagedVars::Describe(const ManagedVar& var) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "at 0x%llx (%zu bytes)", static_cast<unsigned long long>(var.device_address),
                var.size);
  return var.allocation() ? std::string("allocation ") + buf : "__managed__ variable '" + var.name + "' " + buf;
}

const ManagedVar* ManagedVars::FindMirror(const void* p, size_t n) const {
  if (empty()) return nullptr;
  MutexLock lock(mu_);
  const auto a = reinterpret_cast<uint64_t>(p);
  ManagedVar* var = FindLocked(a);
  if (var == nullptr) return nullptr;
  const auto base = reinterpret_cast<uint64_t>(var->mirror);
  return n <= var->size - (a - base) ? var : nullptr;
}


}  // namespace hipr::client
