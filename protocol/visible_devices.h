// The client's device selection: HIP_VISIBLE_DEVICES (or, where it is unset
// or empty, CUDA_VISIBLE_DEVICES) and ROCR_VISIBLE_DEVICES, as the client
// process has them (HelloRequest::visible_devices), applied to the devices
// of its session as ROCm applies them to a local process: ROCr's list
// first, then HIP's over what ROCr left.
//
// A list is read as clr reads HIP_VISIBLE_DEVICES: comma-separated entries,
// each a device index written plainly ("2", not "02" or " 2") or a UUID
// ("GPU-" and the 16 characters hipDeviceGetUuid gives, matched as a
// substring of the device's); the first entry that is neither, or names no
// device, ends the list; a device named twice counts once. A list whose
// first entry is invalid leaves no device.
//
// With one worker the worker applies them (worker_service/device/
// visible_devices.h): the hip device sets them in the session process's
// environment before its runtime starts, composed with the worker's own
// (ComposeVisible); the sim selects with SelectVisible. With several workers
// the client selects among their joint list (client_stub/session/remote.h).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"

namespace hipr {

inline constexpr char kHipVisibleDevices[] = "HIP_VISIBLE_DEVICES";
inline constexpr char kCudaVisibleDevices[] = "CUDA_VISIBLE_DEVICES";
inline constexpr char kRocrVisibleDevices[] = "ROCR_VISIBLE_DEVICES";

// What the hello carried: each variable the client set, or nullopt.
struct VisibleDevices {
  std::optional<std::string> hip;   // HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES when non-empty.
  std::optional<std::string> rocr;  // ROCR_VISIBLE_DEVICES.
  bool empty() const { return !hip && !rocr; }
  // "HIP_VISIBLE_DEVICES=1,0 ROCR_VISIBLE_DEVICES=..." for logs.
  std::string Describe() const;
};

// Reads HelloRequest::visible_devices ("NAME=VALUE" entries; other names are
// ignored). An empty value counts as unset, as in clr.
VisibleDevices ParseVisibleDevices(const std::vector<std::string>& entries);

// The positions in `uuids` (one "GPU-..." string per device, or empty where
// a device has none) that `list` selects, in its order.
std::vector<int> SelectVisible(std::string_view list, const std::vector<std::string>& uuids);

// The value to set where the worker's own environment has `worker` for the
// same variable and the client asked for `client`: the client's index k
// becomes the worker's k-th entry; a UUID entry passes only where the
// worker's list has it too (the client never reaches a device the worker
// was not given); the client's list ends where clr's would (an entry that
// is neither, or an index past the worker's list).
std::string ComposeVisible(std::string_view worker, std::string_view client);

}  // namespace hipr
