// SimDevice: modules and kernel launches, run through kernel twins.
#include <hip/hip_runtime_api.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "worker_service/device/launch_checks.h"
#include "worker_service/sim/models.h"
#include "worker_service/sim/sim_device.h"

namespace hipr::worker::sim {
namespace {

Status NoModule(uint64_t id) {
  return Status(StatusCode::kInvalidHandle, "module " + std::to_string(id) + " does not belong to this session");
}

}  // namespace

void SimDevice::ReleaseQuietly(uint64_t address) {
  int device = 0;
  (void)memory_.Release(address, &device);
}

void SimDevice::SetOutputSink(OutputSink sink) { sink_ = std::move(sink); }

void SimDevice::RecordFault(const Status& st) {
  MutexLock lock(fault_mu_);
  if (fault_.ok()) fault_ = st;
}

Status SimDevice::TakeFault() {
  MutexLock lock(fault_mu_);
  return std::exchange(fault_, Status::Ok());
}

Status SimDevice::PeekFault() {
  MutexLock lock(fault_mu_);
  return fault_;
}

Status SimDevice::LoadModule(int device, uint64_t module, std::shared_ptr<const ModuleImage> image,
                             ModuleLoadResult* out) {
  HIPR_RETURN_IF_ERROR(CheckDevice(device));
  if (module == 0 || modules_.count(module) != 0) return InvalidArgument("module id in use");
  Module m;
  m.device = device;
  m.image = image;
  Status twin = twins_.Open(image->sha256, image->info, &m.twin);
  if (!twin.ok()) {
    m.twin_problem = twin.message();
    out->all_unavailable = true;
    out->message = "the sim device has no usable kernel twin for module '" + image->name + "' (code object " +
                   co::ToHex(image->sha256) + "): " + twin.message();
  }
  // Device variables live in device memory like any allocation, with the
  // twin's initial bytes (zeros without a twin), so symbol copies and
  // pointers to them behave as on a GPU.
  for (const co::GlobalVariable& v : image->info.variables) {
    uint64_t address = 0;
    Status st = memory_.Allocate(device, std::max<uint64_t>(v.size, 1), &address);
    if (!st.ok()) {
      for (uint64_t a : m.variables) ReleaseQuietly(a);
      return st;
    }
    m.variables.push_back(address);
    auto* p = reinterpret_cast<void*>(address);
    if (m.twin) {
      Status bound = m.twin->BindVariable(v.name, p, v.size);
      if (!bound.ok() && bound.code() != StatusCode::kNotFound) {
        for (uint64_t a : m.variables) ReleaseQuietly(a);
        return bound;
      }
    }
    out->globals.push_back(msg::ModuleGlobal{v.name, address, v.size});
  }
  modules_.emplace(module, std::move(m));
  return Status::Ok();
}

Status SimDevice::UnloadModule(uint64_t module) {
  auto it = modules_.find(module);
  if (it == modules_.end()) return NoModule(module);
  // Queued launches may still use its variables: they go once every stream
  // has got here (as Free's memory), while the replay goes on. The replay
  // must not wait: a stream may be held at a host callback whose "done"
  // comes in a later frame.
  std::vector<uint64_t> variables = std::move(it->second.variables);
  modules_.erase(it);
  for (uint64_t a : variables) (void)memory_.Retire(a);
  WhenReached(StreamsOf(-1, false), [this, variables] {
    for (uint64_t a : variables) ReleaseQuietly(a);
  });
  return Status::Ok();
}

Status SimDevice::LaunchKernel(KernelLaunch l) {
  auto it = modules_.find(l.module);
  if (it == modules_.end()) return NoModule(l.module);
  Module& m = it->second;
  HIPR_RETURN_IF_ERROR(CheckDevice(l.device));
  HIPR_RETURN_IF_ERROR(CheckLaunchShape(l, infos_[static_cast<size_t>(l.device)]));
  auto known = m.launchable.find(std::string_view(l.kernel));
  if (known == m.launchable.end()) {
    const co::KernelInfo* info = m.image->info.FindKernel(l.kernel);
    if (info == nullptr)
      return Status(StatusCode::kNotFound, "module '" + m.image->name + "' has no kernel " + l.kernel,
                    hipErrorInvalidDeviceFunction);
    if (!m.twin)
      return Status(StatusCode::kNotFound, "kernel " + l.kernel + " has no twin: " + m.twin_problem,
                    hipErrorNoBinaryForGpu);
    const TwinKernel* twin_kernel = m.twin->FindKernel(l.kernel);
    if (twin_kernel == nullptr)
      return Status(StatusCode::kNotFound, "the twin of module '" + m.image->name + "' lacks kernel " + l.kernel,
                    hipErrorNoBinaryForGpu);
    known = m.launchable.emplace(l.kernel, Module::Launchable{info, twin_kernel}).first;
  }
  const co::KernelInfo* info = known->second.info;
  const TwinKernel* kernel = known->second.kernel;
  uint64_t threads = uint64_t{l.block[0]} * l.block[1] * l.block[2];
  if (info->max_flat_workgroup_size != 0 && threads > info->max_flat_workgroup_size)
    return Status(StatusCode::kInvalidArgument,
                  "block of " + std::to_string(threads) + " threads exceeds kernel " + l.kernel + "'s limit of " +
                      std::to_string(info->max_flat_workgroup_size),
                  hipErrorLaunchFailure);  // As clr's launch validation.
  if (l.kernarg.size() < info->explicit_kernarg_size())
    return InvalidArgument("kernel " + l.kernel + " needs " + std::to_string(info->explicit_kernarg_size()) +
                           " argument bytes, got " + std::to_string(l.kernarg.size()));
  const bool cooperative = (l.flags & msg::kLaunchCooperative) != 0;
  if (cooperative) {
    // Every block must be resident at once (checked by the client too; a
    // graph node made cooperative later, or a hostile client, reaches here).
    const msg::DeviceInfo& d = infos_[static_cast<size_t>(l.device)];
    if (!d.cooperative_launch)
      return Status(StatusCode::kNotSupported, "the device has no cooperative launch", hipErrorLaunchFailure);
    const uint64_t blocks = uint64_t{l.grid[0]} * l.grid[1] * l.grid[2];
    const uint64_t limit = CooperativeBlockLimit(d, *info, static_cast<uint32_t>(threads), l.shared_bytes);
    if (blocks > limit)
      return Status(StatusCode::kInvalidArgument,
                    "a cooperative grid of " + std::to_string(blocks) + " blocks of kernel " + l.kernel +
                        " exceeds the " + std::to_string(limit) + " the device holds at once",
                    hipErrorCooperativeLaunchTooLarge);
  }
  if (l.start_event != 0) HIPR_RETURN_IF_ERROR(EventRecord(l.start_event, l.stream));
  const uint64_t stream = l.stream;
  const uint64_t stop = l.stop_event;
  SimStream* s = nullptr;
  HIPR_RETURN_IF_ERROR(Prepare(l.device, stream, &s));
  std::unique_ptr<QueuedLaunch> q = TakeQueuedLaunch();
  q->twin = m.twin;  // Keeps the twin loaded until the launch has run.
  q->kernel = kernel;
  q->name.assign(l.kernel);  // Into the pooled buffers: no allocation once they are big enough.
  q->grid = l.grid;
  q->block = l.block;
  q->global = GlobalSize(l);
  q->shared_bytes = l.shared_bytes;
  q->kernarg.assign(l.kernarg.begin(), l.kernarg.end());
  q->cooperative = cooperative;
  q->inject_failure = std::any_of(fail_kernels_.begin(), fail_kernels_.end(), [&](const std::string& f) {
    return l.kernel.find(f) != std::string::npos;
  });
  // Two pointers: std::function holds them without an allocation.
  s->Submit([this, raw = q.release()] { RunQueuedLaunch(raw); });
  if (stop != 0) HIPR_RETURN_IF_ERROR(EventRecord(stop, stream));
  return Status::Ok();
}

std::unique_ptr<SimDevice::QueuedLaunch> SimDevice::TakeQueuedLaunch() {
  MutexLock lock(launches_mu_);
  if (free_launches_ == nullptr) {
    free_launches_ = returned_launches_.exchange(nullptr, std::memory_order_acquire);
    // Freed here, by the thread that allocated them: what is over the limit,
    // and arguments over HIP's 4 KiB.
    size_t kept = 0;
    for (QueuedLaunch* q = free_launches_; q != nullptr; q = q->next) {
      if (q->kernarg.capacity() > 4096) std::vector<uint8_t>().swap(q->kernarg);  // HIP's kernarg limit.
      if (++kept == kMaxFreeLaunches) {
        for (QueuedLaunch* extra = std::exchange(q->next, nullptr); extra != nullptr;)
          delete std::exchange(extra, extra->next);
        break;
      }
    }
  }
  if (free_launches_ == nullptr) return std::make_unique<QueuedLaunch>();
  std::unique_ptr<QueuedLaunch> q(std::exchange(free_launches_, free_launches_->next));
  q->next = nullptr;
  return q;
}

void SimDevice::RunQueuedLaunch(QueuedLaunch* q) {
  std::string printed;
  Status st = q->inject_failure ? Status(StatusCode::kInternal, "injected failure (--sim-fail-kernel)")
                                : runner_.Launch(*q->kernel, q->grid, q->block, q->shared_bytes, q->kernarg,
                                                 &printed, q->global, q->cooperative);
  if (!printed.empty() && sink_) sink_(printed);
  if (!st.ok()) {
    spdlog::error("sim: kernel {} failed: {}", q->name, st.ToString());
    RecordFault(
        Status(StatusCode::kInternal, "kernel " + q->name + " failed: " + st.message(), hipErrorLaunchFailure));
  }
  q->twin.reset();  // Before the item counts as run (an unload may be waiting for it).
  q->kernel = nullptr;
  q->next = returned_launches_.load(std::memory_order_relaxed);
  while (!returned_launches_.compare_exchange_weak(q->next, q, std::memory_order_release, std::memory_order_relaxed)) {
  }
}

void SimDevice::DeleteQueuedLaunches() {
  MutexLock lock(launches_mu_);
  for (QueuedLaunch* list : {free_launches_, returned_launches_.exchange(nullptr)})
    while (list != nullptr) delete std::exchange(list, list->next);
  free_launches_ = nullptr;
}

}  // namespace hipr::worker::sim
