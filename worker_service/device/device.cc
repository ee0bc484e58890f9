#include "worker_service/device/device.h"

namespace hipr::worker {

std::vector<std::string> Device::capabilities() {
  std::vector<std::string> c;
  if (ipc() != nullptr) {
    c.push_back(wire::kCapabilityIpcMemory);
    c.push_back(wire::kCapabilityIpcEvents);
  }
  if (vmm() != nullptr) c.push_back(wire::kCapabilityVirtualMemory);
  if (vmm() != nullptr && shareable() != nullptr) c.push_back(wire::kCapabilityShareableMemory);
  if (textures() != nullptr) c.push_back(wire::kCapabilityTextures);
  if (host_register() != nullptr) c.push_back(wire::kCapabilityHostRegister);
  if (memory_lease() != nullptr) c.push_back(wire::kCapabilityMemoryLease);
  if (cooperative_module_launch()) c.push_back(wire::kCapabilityCooperativeModuleLaunch);
  return c;
}

}  // namespace hipr::worker
