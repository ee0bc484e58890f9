#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "worker_service/node_check/checks.h"

namespace hipr::worker::node_check {
namespace {

struct KnownId {
  unsigned device;
  const char* name;
};
// Device ids and names as libdrm's amdgpu.ids gives them (the amdgpu
// driver's PCI id list has the ids, not the names). Ids not here are looked
// up in the node's own amdgpu.ids (Debian: libdrm-common), whose older
// copies lack the newer parts.
constexpr KnownId kInstinct[] = {
    {0x738c, "AMD Instinct MI100"},  {0x7408, "AMD Instinct MI250X"},    {0x740c, "AMD Instinct MI250X / MI250"},
    {0x740f, "AMD Instinct MI210"},  {0x74a0, "AMD Instinct MI300A"},    {0x74a1, "AMD Instinct MI300X"},
    {0x74a5, "AMD Instinct MI325X"}, {0x74b5, "AMD Instinct MI300X VF"},
};

}  // namespace

const char* KnownInstinctName(unsigned device_id) {
  for (const KnownId& k : kInstinct)
    if (k.device == device_id) return k.name;
  return nullptr;
}

}  // namespace hipr::worker::node_check

namespace hipr::worker::node_check::internal {

namespace fs = std::filesystem;

namespace {

constexpr unsigned kAmdVendor = 0x1002;

// PCI base class 0x03 (display), subclasses VGA (0x00), 3D (0x02) and other
// (0x80): Instinct accelerators are "display other"; the 0x1002 functions
// that are not GPUs (HDMI audio 0x0403) are left out by this.
bool IsDisplayClass(unsigned long pci_class) {
  const unsigned long base_sub = pci_class >> 8;
  return base_sub == 0x0300 || base_sub == 0x0302 || base_sub == 0x0380;
}

// "738C,\t01,\tAMD Instinct MI100": the exact revision first, else the
// device's first entry.
std::string NameFromAmdgpuIds(const Options& options, const PciGpu& gpu) {
  std::ifstream in(Under(options, "/usr/share/libdrm/amdgpu.ids"));
  std::string any;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t c1 = line.find(',');
    const size_t c2 = c1 == std::string::npos ? c1 : line.find(',', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    char* end = nullptr;
    unsigned long device = std::strtoul(line.c_str(), &end, 16);
    if (end != line.c_str() + c1 || device != gpu.device) continue;
    unsigned long revision = std::strtoul(line.c_str() + c1 + 1, nullptr, 16);
    std::string name = Trim(line.substr(c2 + 1));
    if (gpu.revision && revision == *gpu.revision) return name;
    if (any.empty()) any = name;
  }
  return any;
}

}  // namespace

PciScan ScanPci(const Options& options) {
  PciScan scan;
  const fs::path bus = Under(options, "/sys/bus/pci/devices");
  std::error_code ec;
  fs::directory_iterator it(bus, ec);
  if (ec) {
    scan.error = "cannot read " + bus.string() + ": " + ec.message();
    return scan;
  }
  std::vector<fs::path> entries;
  for (; it != fs::directory_iterator(); it.increment(ec)) entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  for (const fs::path& dev : entries) {
    ++scan.devices;
    std::optional<unsigned long> vendor = ReadHex(dev / "vendor");
    std::optional<unsigned long> device = ReadHex(dev / "device");
    std::optional<unsigned long> pci_class = ReadHex(dev / "class");
    if (!vendor || !device || !pci_class || !IsDisplayClass(*pci_class)) continue;
    const std::string address = dev.filename().string();
    if (*vendor != kAmdVendor) {
      scan.other_gpus.push_back(address + " " + Hex(*vendor, 4) + ":" + Hex(*device, 4));
      continue;
    }
    PciGpu gpu;
    gpu.address = address;
    gpu.device = *device;
    gpu.revision = ReadHex(dev / "revision");
    std::error_code link_ec;
    fs::path driver = fs::read_symlink(dev / "driver", link_ec);
    if (!link_ec) gpu.driver = driver.filename().string();
    fs::directory_iterator drm(dev / "drm", link_ec);
    if (!link_ec) {
      gpu.drm_listed = true;
      for (; drm != fs::directory_iterator(); drm.increment(link_ec)) {
        std::string name = drm->path().filename().string();
        if (name.rfind("renderD", 0) == 0) gpu.render_nodes.push_back(name);
      }
      std::sort(gpu.render_nodes.begin(), gpu.render_nodes.end());
    }
    scan.amd.push_back(std::move(gpu));
  }
  return scan;
}

CheckResult CheckPciGpus(const PciScan& scan) {
  CheckResult r{"pci_gpus", Status::kOk, "", ""};
  if (!scan.error.empty()) {
    r.status = Status::kFail;
    r.detail = scan.error;
    r.fix = "run it on the GPU node itself, with sysfs mounted at /sys (or --root at a copy of it)";
    return r;
  }
  if (scan.amd.empty()) {
    r.status = Status::kFail;
    r.detail = "no AMD GPU (vendor 0x1002, display class) among " + Plural(scan.devices, "PCI device", "PCI devices");
    if (!scan.other_gpus.empty()) r.detail += "; other GPUs: " + Join(scan.other_gpus, ", ");
    r.fix = "hipr's worker serves AMD GPUs: check `lspci -nn -d 1002:` lists one; in a VM, pass the GPU through to it";
    return r;
  }
  std::vector<std::string> ids;
  for (const PciGpu& g : scan.amd) ids.push_back(g.address + " " + Hex(g.device, 4));
  r.detail = Plural(scan.amd.size(), "AMD GPU", "AMD GPUs") + ": " + Join(ids, ", ");
  return r;
}

// /sys/module/amdgpu rather than /proc/modules: the module's sysfs folder is
// there whether amdgpu is a loadable module or built into the kernel (only
// the former has a /proc/modules line), and its initstate says whether a
// loadable module finished loading ("live"); rocm-smi decides the same way.
CheckResult CheckAmdgpuModule(const Options& options, const PciScan& scan) {
  CheckResult r{"amdgpu_module", Status::kOk, "", ""};
  const fs::path module = Under(options, "/sys/module/amdgpu");
  std::error_code ec;
  if (!fs::is_directory(module, ec)) {
    r.status = Status::kFail;
    r.detail = "the amdgpu kernel driver is not loaded (no /sys/module/amdgpu)";
    std::optional<std::string> cmdline = ReadTrimmed(Under(options, "/proc/cmdline"));
    std::vector<std::string> blockers;
    if (cmdline) {
      std::istringstream words(*cmdline);
      for (std::string w; words >> w;) {
        if (w == "nomodeset" || w == "amdgpu.modeset=0" ||
            (w.rfind("modprobe.blacklist=", 0) == 0 && w.find("amdgpu") != std::string::npos))
          blockers.push_back(w);
      }
    }
    if (!blockers.empty()) r.detail += "; the kernel command line has " + Join(blockers, " ");
    r.fix =
        "modprobe amdgpu, then `dmesg | grep -i amdgpu` for why it did not load or bind\n"
        "missing driver or firmware: Debian's kernel has amdgpu, its firmware is firmware-amd-graphics "
        "(non-free-firmware); with AMD's ROCm stack install amdgpu-dkms\n"
        "make it load at boot: remove nomodeset/amdgpu.modeset=0/blacklists from the kernel command line "
        "and /etc/modprobe.d";
    return r;
  }
  std::optional<std::string> state = ReadTrimmed(module / "initstate");
  if (state && *state != "live") {
    r.status = Status::kFail;
    r.detail = "amdgpu is " + *state + ", not live";
    r.fix = "wait for modprobe to finish, or see `dmesg | grep -i amdgpu` for what holds it";
    return r;
  }
  r.detail = state ? "amdgpu loaded (live)" : "amdgpu built into the kernel";
  std::vector<std::string> unbound;
  for (const PciGpu& g : scan.amd)
    if (g.driver != "amdgpu")
      unbound.push_back(g.address + (g.driver.empty() ? " (no driver)" : " (" + g.driver + ")"));
  if (!scan.amd.empty()) {
    r.detail += "; drives " + std::to_string(scan.amd.size() - unbound.size()) + " of " +
                Plural(scan.amd.size(), "AMD GPU", "AMD GPUs");
  }
  if (!unbound.empty()) {
    r.status = Status::kFail;
    r.detail += "; not bound to amdgpu: " + Join(unbound, ", ");
    r.fix =
        "`dmesg | grep -i amdgpu` for why amdgpu did not take them (missing firmware: firmware-amd-graphics)\n"
        "a GPU bound to vfio-pci is kept for VMs: drop it from vfio-pci.ids and rebind it to amdgpu";
  }
  return r;
}

CheckResult CheckGpuModels(const Options& options, const PciScan& scan, const SmiGpus& smi) {
  CheckResult r{"gpu_models", Status::kOk, "", ""};
  if (scan.amd.empty()) {
    r.status = Status::kFail;
    r.detail = "no AMD GPU to serve (see pci_gpus)";
    r.fix = "see pci_gpus";
    return r;
  }
  std::vector<std::string> names;
  for (const PciGpu& g : scan.amd) {
    const char* known = KnownInstinctName(g.device);
    std::string name = known != nullptr ? known : NameFromAmdgpuIds(options, g);
    names.push_back(name.empty() ? "AMD GPU " + Hex(g.device, 4) : name + " [" + Hex(g.device, 4) + "]");
  }
  const size_t pci = scan.amd.size();
  r.detail = Plural(pci, "GPU", "GPUs") + " on the PCI bus: " + Counted(names);
  if (!smi.count || *smi.count == 0) {
    r.detail += "; rocm-smi gave no count to compare";
  } else if (*smi.count == pci) {
    r.detail += "; rocm-smi agrees";
  } else if (*smi.count < pci) {
    r.status = Status::kFail;
    r.detail += "; rocm-smi sees only " + std::to_string(*smi.count);
    r.fix = "amdgpu did not bring up every GPU: `dmesg | grep -i amdgpu`, and see amdgpu_module";
  } else {
    r.status = Status::kWarn;
    r.detail += "; rocm-smi sees " + std::to_string(*smi.count);
    r.fix =
        "more GPUs than PCI functions: a GPU in a compute partition mode (e.g. MI300X CPX) shows as several; "
        "the worker serves what HIP enumerates";
  }
  return r;
}

}  // namespace hipr::worker::node_check::internal
