#include "worker_service/process/rdma_setup.h"

#include <infiniband/verbs.h>

#include <cerrno>
#include <cstring>

namespace hipr::worker {

std::string DescribeRdma(const WorkerConfig& config, bool* usable) {
  *usable = false;
  if (config.rdma_device == kRdmaOff) return "rdma off (--rdma-device off): clients stay on tcp";
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) {
    return errno == ENOSYS ? "no RDMA support in this kernel: clients stay on tcp"
                           : std::string("cannot list RDMA devices (") + std::strerror(errno) +
                                 "): clients stay on tcp";
  }
  std::string names;
  bool found = false;
  for (int i = 0; i < n; ++i) {
    const std::string name = ibv_get_device_name(list[i]);
    names += (i == 0 ? "" : ", ") + name;
    if (config.rdma_device.empty() || config.rdma_device == name) found = true;
  }
  const std::string first = n > 0 ? ibv_get_device_name(list[0]) : "";
  ibv_free_device_list(list);
  if (n == 0) return "no RDMA device: clients stay on tcp";
  if (!found)
    return "RDMA devices " + names + ", but no --rdma-device " + config.rdma_device + ": clients stay on tcp";
  *usable = true;
  return "RDMA devices " + names + "; sessions offered rdma use " +
         (config.rdma_device.empty() ? first + " (the first)" : config.rdma_device);
}

}  // namespace hipr::worker
