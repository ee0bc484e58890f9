#include "worker_service/rdma_setup.h"

#include <fcntl.h>
#include <infiniband/verbs.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "protocol/rdma/rdma_connection.h"

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

Status AcceptRdma(const WorkerConfig& config, int socket_fd, const std::vector<uint8_t>& offer,
                  std::unique_ptr<Connection>* conn, std::vector<uint8_t>* answer, std::string* device) {
  if (config.rdma_device == kRdmaOff) return Status(StatusCode::kNotSupported, "rdma is off (--rdma-device off)");
  if (socket_fd < 0) return Status(StatusCode::kNotSupported, "rdma only replaces plain tcp (not TLS or shm)");
  rdma::QpInfo peer;
  HIPR_RETURN_IF_ERROR(rdma::DecodeQpInfo(offer.data(), offer.size(), &peer));
  rdma::Options options;
  options.device = config.rdma_device;
  options.log = [](const std::string& line) { spdlog::warn("{}", line); };
  std::unique_ptr<rdma::RdmaConnection> c;
  HIPR_RETURN_IF_ERROR(rdma::RdmaConnection::Create(options, &c));
  const int liveness = fcntl(socket_fd, F_DUPFD_CLOEXEC, 0);
  if (liveness < 0) return LinkDown(std::string("rdma: cannot keep the tcp socket: ") + std::strerror(errno));
  HIPR_RETURN_IF_ERROR(c->Connect(peer, liveness));
  answer->resize(rdma::kQpInfoBytes);
  rdma::EncodeQpInfo(c->local_info(), answer->data());
  *device = c->device_name();
  *conn = std::move(c);
  return Status::Ok();
}

}  // namespace hipr::worker
