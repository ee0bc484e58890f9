// ForwardingDevice: a Device that hands every call to another one. A test
// double, or a wrapper that adds to a device (a fault injector, a counter),
// derives from it and overrides only what it changes; the conformance suite
// (device_conformance.h) runs on one wrapping the sim.
#pragma once

#include <memory>
#include <utility>

#include "worker_service/device/device.h"

namespace hipr::worker {

class ForwardingDevice : public Device {
 public:
  explicit ForwardingDevice(std::unique_ptr<Device> inner) : inner_(std::move(inner)) {}

  Device& inner() { return *inner_; }

  std::string_view kind() const override { return inner_->kind(); }
  // The inner device's facets, as they are: a double that changes one
  // wraps it (or returns null to take it away).
  IpcFacet* ipc() override { return inner_->ipc(); }
  VirtualMemoryFacet* vmm() override { return inner_->vmm(); }
  ShareableMemoryFacet* shareable() override { return inner_->shareable(); }
  TextureFacet* textures() override { return inner_->textures(); }
  MemoryLeaseFacet* memory_lease() override { return inner_->memory_lease(); }
  HostRegisterFacet* host_register() override { return inner_->host_register(); }
  BulkMemoryFacet* bulk_memory() override { return inner_->bulk_memory(); }
  WriteWatchFacet* write_watch() override { return inner_->write_watch(); }
  bool cooperative_module_launch() const override { return inner_->cooperative_module_launch(); }
  const std::vector<msg::DeviceInfo>& devices() const override { return inner_->devices(); }
  int32_t driver_version() const override { return inner_->driver_version(); }
  int32_t runtime_version() const override { return inner_->runtime_version(); }
  void SetMemoryAccount(MemoryAccount* account) override { inner_->SetMemoryAccount(account); }
  Status AttachWindow(const msg::AddressWindow& offer, msg::AddressWindow* used) override {
    return inner_->AttachWindow(offer, used);
  }
  Status Malloc(int device, uint64_t size, uint32_t flags, uint64_t* address) override {
    return inner_->Malloc(device, size, flags, address);
  }
  Status Free(uint64_t address) override { return inner_->Free(address); }
  Status MemInfo(int device, uint64_t* free_bytes, uint64_t* total_bytes) override {
    return inner_->MemInfo(device, free_bytes, total_bytes);
  }
  Status CheckRegion(const msg::Region& region) const override { return inner_->CheckRegion(region); }
  Status Memset(int device, uint64_t stream, const msg::Region& dst, uint32_t value, uint8_t element_size) override {
    return inner_->Memset(device, stream, dst, value, element_size);
  }
  Status CopyToDevice(int device, uint64_t stream, const msg::Region& dst, const BulkIo& fill) override {
    return inner_->CopyToDevice(device, stream, dst, fill);
  }
  Status CopyFromDevice(int device, uint64_t stream, const msg::Region& src, const BulkIo& drain) override {
    return inner_->CopyFromDevice(device, stream, src, drain);
  }
  Status CopyOnDevice(int device, uint64_t stream, const msg::Region& dst, const msg::Region& src) override {
    return inner_->CopyOnDevice(device, stream, dst, src);
  }
  void CopyFromDeviceAsync(int device, uint64_t stream, const msg::Region& src, CopyOutDone done) override {
    inner_->CopyFromDeviceAsync(device, stream, src, std::move(done));
  }
  Status StreamCreate(int device, uint64_t stream, uint32_t flags, int32_t priority,
                      std::span<const uint32_t> cu_mask) override {
    return inner_->StreamCreate(device, stream, flags, priority, cu_mask);
  }
  Status StreamDestroy(uint64_t stream) override { return inner_->StreamDestroy(stream); }
  Status StreamSynchronize(int device, uint64_t stream) override { return inner_->StreamSynchronize(device, stream); }
  Status StreamQuery(int device, uint64_t stream) override { return inner_->StreamQuery(device, stream); }
  Status StreamWaitEvent(int device, uint64_t stream, uint64_t event, uint32_t flags) override {
    return inner_->StreamWaitEvent(device, stream, event, flags);
  }
  Status StreamWaitValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint64_t mask, uint32_t flags,
                         uint8_t bytes) override {
    return inner_->StreamWaitValue(device, stream, address, value, mask, flags, bytes);
  }
  Status StreamWriteValue(int device, uint64_t stream, uint64_t address, uint64_t value, uint8_t bytes) override {
    return inner_->StreamWriteValue(device, stream, address, value, bytes);
  }
  Status StreamHostCallback(int device, uint64_t stream, std::function<void(Status)> reached,
                            std::shared_ptr<HostGate> gate) override {
    return inner_->StreamHostCallback(device, stream, std::move(reached), std::move(gate));
  }
  Status EventCreate(int device, uint64_t event, uint32_t flags) override {
    return inner_->EventCreate(device, event, flags);
  }
  Status EventDestroy(uint64_t event) override { return inner_->EventDestroy(event); }
  Status EventRecord(uint64_t event, uint64_t stream) override { return inner_->EventRecord(event, stream); }
  Status EventSynchronize(uint64_t event) override { return inner_->EventSynchronize(event); }
  Status EventQuery(uint64_t event) override { return inner_->EventQuery(event); }
  Status EventElapsedTime(uint64_t start, uint64_t stop, float* milliseconds) override {
    return inner_->EventElapsedTime(start, stop, milliseconds);
  }
  Status LoadModule(int device, uint64_t module, std::shared_ptr<const ModuleImage> image,
                    ModuleLoadResult* out) override {
    return inner_->LoadModule(device, module, std::move(image), out);
  }
  Status UnloadModule(uint64_t module) override { return inner_->UnloadModule(module); }
  Status LaunchKernel(KernelLaunch launch) override { return inner_->LaunchKernel(std::move(launch)); }
  void SetOutputSink(OutputSink sink) override { inner_->SetOutputSink(std::move(sink)); }
  Status DeviceSynchronize(int device) override { return inner_->DeviceSynchronize(device); }
  Status DeviceReset(int device) override { return inner_->DeviceReset(device); }
  ApiDevice& api() override { return inner_->api(); }
  void StreamSynchronizeAsync(int device, uint64_t stream, Completion done) override {
    inner_->StreamSynchronizeAsync(device, stream, std::move(done));
  }
  void EventSynchronizeAsync(uint64_t event, Completion done) override {
    inner_->EventSynchronizeAsync(event, std::move(done));
  }
  void DeviceSynchronizeAsync(int device, Completion done) override {
    inner_->DeviceSynchronizeAsync(device, std::move(done));
  }

 private:
  std::unique_ptr<Device> inner_;
};

}  // namespace hipr::worker
