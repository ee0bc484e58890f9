// What the worker reports at start-up about GPUDirect RDMA (registering GPU
// memory with the NIC so bulk copies skip pinned staging): the capability
// probe of worker_service/hip/hip_gpudirect.h, run where it may touch the
// GPU runtime. Only reported: the bulk path does not use it yet
// (docs/architecture.md, "GPUDirect RDMA (design; unverified on hardware)").
#pragma once

#include <string>

#include "worker_service/process/config.h"

namespace hipr::worker {

// One line for the start-up log: "available: dma-buf (...)" or
// "unavailable: <why>", plus what that means for bulk copies. The probe runs
// in a forked child that loads the hip device module (so the HIP runtime it
// binds to), because this process must never load a GPU runtime (the zygote
// is forked after). Blocks until the child answers, 20 s at most. For
// --device sim it reports what --device hip would get; the sim needs none.
std::string DescribeGpuDirect(const WorkerConfig& config);

}  // namespace hipr::worker
