// The worker's metrics and health endpoints (--metrics-listen): a small
// HTTP/1.1 server on the acceptor's event loop, apart from the HIPR
// listener, answering
//   GET /metrics  the ledger's counters in Prometheus' text format
//                 With --device hip, also the node's GPU health from
//                 librocm-smi (gpu_health.h).
//   GET /healthz  200 while the acceptor and the zygote run
//   GET /readyz   200 when a new client would be served: the device probe
//                 passed (at start and, on the hip device, at the last
//                 --probe-interval-s), the zygote runs, the worker is not
//                 stopping and not at --max-sessions; 503 with the reason
//                 otherwise.
// Every process bumps the ledger's counters (ledger.h); this one reads them.
#pragma once

#include <asio.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "protocol/status.h"
#include "worker_service/process/accept_backoff.h"
#include "worker_service/process/config.h"
#include "worker_service/process/gpu_health.h"
#include "worker_service/process/ledger.h"

namespace hipr::worker {

// Why the worker would not serve a new client now; empty when it would.
using ReadinessProbe = std::function<std::string()>;

// The /metrics page.
std::string RenderMetrics(const Ledger& ledger, const WorkerConfig& config, bool ready);

class MetricsServer {
 public:
  MetricsServer(asio::io_context& io, const WorkerConfig& config, const Ledger& ledger, ReadinessProbe ready);
  // Binds config.metrics_listen; writes --metrics-port-file.
  Status Listen();
  void Close();

 private:
  void Accept();
  // Accepts again after `pause` (the backoff's, or waiting for an exchange
  // to end).
  void AcceptAfter(std::chrono::milliseconds pause);
  // The GPU health families (gpu_health.h): librocm-smi opened at the first
  // scrape on --device hip; why not logged once.
  std::string GpuHealthPage();

  const WorkerConfig& config_;
  const Ledger& ledger_;
  ReadinessProbe ready_;
  asio::ip::tcp::acceptor acceptor_;
  asio::steady_timer accept_pause_;
  AcceptBackoff backoff_;
  // Scrapes and probes in progress (each holds a descriptor for up to 5 s):
  // at kMaxExchanges the listener stops accepting until one ends, so idle
  // connections to it cannot take the descriptors sessions need.
  static constexpr int kMaxExchanges = 64;
  std::shared_ptr<int> exchanges_ = std::make_shared<int>(0);
  bool gpu_health_tried_ = false;
  std::unique_ptr<GpuHealth> gpu_health_;
};

}  // namespace hipr::worker
