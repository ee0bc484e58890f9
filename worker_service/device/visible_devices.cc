#include "worker_service/device/visible_devices.h"

#include <stdlib.h>

namespace hipr::worker {

namespace {

std::optional<std::string> Env(const char* name) {
  const char* v = getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace

std::string ApplyVisibleToEnvironment(const VisibleDevices& visible) {
  std::string said;
  auto apply = [&](const char* name, const std::optional<std::string>& own, const std::string& client) {
    const std::string value = own ? ComposeVisible(*own, client) : client;
    setenv(name, value.c_str(), 1);
    said += (said.empty() ? "" : " ") + std::string(name) + "=" + value;
    if (own) said += " (the client's " + client + " within the worker's " + *own + ")";
  };
  if (visible.rocr) apply(kRocrVisibleDevices, Env(kRocrVisibleDevices), *visible.rocr);
  if (visible.hip) {
    std::optional<std::string> own = Env(kHipVisibleDevices);
    if (!own) own = Env(kCudaVisibleDevices);
    apply(kHipVisibleDevices, own, *visible.hip);
  }
  return said;
}

}  // namespace hipr::worker
