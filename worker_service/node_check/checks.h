// The checks behind Run() (node_check.h), by what they read:
// pci_checks.cc (sysfs: the PCI bus, the amdgpu driver, the models),
// device_node_checks.cc (/dev), program_checks.cc (the real dynamic loader,
// rocm-smi), and the text helpers they share (check_text.cc). Internal to
// hipr-node; the contracts of node_check.h hold here too.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "worker_service/node_check/node_check.h"

namespace hipr::worker::node_check::internal {

// --- Shared text helpers (check_text.cc)

// `absolute` (a path of the node) under options.root.
std::filesystem::path Under(const Options& options, const std::string& absolute);
std::string Trim(const std::string& s);
// The file's text, trimmed; nullopt when it cannot be read.
std::optional<std::string> ReadTrimmed(const std::filesystem::path& path);
// A file holding one hex number ("0x1002\n"), as sysfs' PCI attributes do.
std::optional<unsigned long> ReadHex(const std::filesystem::path& path);
std::string Hex(unsigned long v, int digits);  // "0x740c"
std::string Join(const std::vector<std::string>& parts, const char* sep);
// "2x A, 1x B", in order of first appearance.
std::string Counted(const std::vector<std::string>& names);
std::string Plural(size_t n, const char* one, const char* many);  // "2 GPUs"
std::string GroupName(gid_t gid);                                 // From the group database; "" unknown.
std::string GroupLabel(gid_t gid);                                // "render (109)", or "4343".
std::string GidList(const std::vector<gid_t>& gids);              // "109,44"
std::string Seconds(std::chrono::milliseconds t);                 // "0.5 s"

// --- The PCI bus and the driver (pci_checks.cc)

struct PciGpu {
  std::string address;  // "0000:c1:00.0"
  unsigned long device = 0;
  std::optional<unsigned long> revision;
  std::string driver;                     // Name of the bound driver; empty: none.
  bool drm_listed = false;                // sysfs lists its DRM nodes (drm/).
  std::vector<std::string> render_nodes;  // "renderD128", from drm/.
};

struct PciScan {
  std::string error;  // The bus could not be read.
  size_t devices = 0;
  std::vector<PciGpu> amd;
  std::vector<std::string> other_gpus;  // "0000:01:00.0 0x10de:0x2330"
};

// The AMD GPUs (vendor 0x1002, display class) under /sys/bus/pci/devices.
PciScan ScanPci(const Options& options);
CheckResult CheckPciGpus(const PciScan& scan);
CheckResult CheckAmdgpuModule(const Options& options, const PciScan& scan);

// --- Programs (program_checks.cc)

struct SmiGpus {
  std::optional<size_t> count;       // Set when rocm-smi answered.
  std::map<int, std::string> names;  // GPU index -> "Card series".
};

CheckResult CheckHipRuntime(const Options& options);
// Fills `gpus` when rocm-smi answers.
CheckResult CheckRocmSmi(const Options& options, SmiGpus* gpus);

// The PCI bus's GPUs named, and counted against rocm-smi's (pci_checks.cc).
CheckResult CheckGpuModels(const Options& options, const PciScan& scan, const SmiGpus& smi);

// --- Device nodes (device_node_checks.cc), against `who`'s uid and groups

CheckResult CheckKfd(const Options& options, const WorkerIdentity& who);
CheckResult CheckRenderNodes(const Options& options, const WorkerIdentity& who, const PciScan& scan);

}  // namespace hipr::worker::node_check::internal
