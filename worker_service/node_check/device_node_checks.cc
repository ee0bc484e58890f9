#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <system_error>

#include "worker_service/node_check/checks.h"

namespace hipr::worker::node_check::internal {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRulesFile = "70-amdgpu-hipr.rules";

std::string Octal(mode_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

struct NodeAccess {
  bool exists = false;
  bool device = false;  // A character device (or a plain file under a fake root).
  bool ok = false;
  std::string problem;  // !ok: why, one phrase.
  std::string how;      // ok: "via group render (109)".
  gid_t gid = 0;
  mode_t mode = 0;
};

// From the node's mode bits as the kernel applies them (owner class, else
// group class, else other; uid 0 passes). POSIX ACLs are not read.
NodeAccess Examine(const Options& options, const std::string& absolute, const WorkerIdentity& who) {
  NodeAccess a;
  struct stat st {};
  const fs::path path = Under(options, absolute);
  if (stat(path.c_str(), &st) != 0) {
    a.problem = absolute + " is missing";
    return a;
  }
  a.exists = true;
  a.gid = st.st_gid;
  a.mode = st.st_mode;
  // Under a fake tree a node is a plain file; on the real /dev it must be
  // a character device.
  const bool fake_root = fs::path(options.root).lexically_normal() != fs::path("/");
  if (!S_ISCHR(st.st_mode) && !(fake_root && S_ISREG(st.st_mode))) {
    a.problem = absolute + " is not a character device";
    return a;
  }
  a.device = true;
  if (who.uid == 0) {
    a.ok = true;
    a.how = "as root";
    return a;
  }
  unsigned bits;
  if (st.st_uid == who.uid) {
    bits = (st.st_mode >> 6) & 7;
    a.how = "as its owner";
  } else if (std::find(who.gids.begin(), who.gids.end(), st.st_gid) != who.gids.end()) {
    bits = (st.st_mode >> 3) & 7;
    a.how = "via group " + GroupLabel(st.st_gid);
  } else {
    bits = st.st_mode & 7;
    a.how = "as other";
  }
  a.ok = (bits & 6) == 6;
  if (!a.ok) {
    a.problem = absolute + " (mode " + Octal(st.st_mode) + ", owner uid " + std::to_string(st.st_uid) + ", group " +
                GroupLabel(st.st_gid) + ") is not read/write for " + who.label;
  }
  return a;
}

constexpr const char* kNotADeviceFix =
    "something else took the node's name: remove it, then `udevadm trigger` (or reload amdgpu) makes the node";

std::string WhoSummary(const WorkerIdentity& who) { return "groups " + GidList(who.gids); }

// What to do about nodes the worker's user cannot open.
std::string AccessFix(const Options& options, const WorkerIdentity& who, const std::vector<NodeAccess>& denied) {
  // Joining the node's group helps where the group may read and write it.
  std::set<std::string> groups;
  for (const NodeAccess& a : denied) {
    std::string name = GroupName(a.gid);
    if (a.exists && a.gid != 0 && ((a.mode >> 3) & 6) == 6) groups.insert(name.empty() ? std::to_string(a.gid) : name);
  }
  const std::string user = who.user.empty() ? "<worker user>" : who.user;
  std::string fix;
  for (const std::string& g : groups)
    fix += "add the worker's user to group " + g + ": usermod -aG " + g + " " + user +
           " (systemd unit: SupplementaryGroups=" + g + ")\n";
  fix += std::string(groups.empty() ? "" : "or ") +
         "give the nodes group render, mode 0660 with hipr's udev rule: cp " + options.udev_rules_dir + "/" +
         kRulesFile +
         " /etc/udev/rules.d/ && udevadm control --reload && udevadm trigger; the user must be in "
         "group render";
  return fix;
}

// `defaulted` root proves nothing about the worker's user: warn.
void WarnIfDefaultRoot(const WorkerIdentity& who, CheckResult* r) {
  if (r->status != Status::kOk || who.uid != 0 || !who.defaulted) return;
  r->status = Status::kWarn;
  r->detail += "; checked as root, who opens any node";
  r->fix =
      "check as the worker's user: --user NAME, or --uid N --gids render,video for a systemd DynamicUser "
      "unit (hipr's ships SupplementaryGroups=render video)";
}

}  // namespace

CheckResult CheckKfd(const Options& options, const WorkerIdentity& who) {
  CheckResult r{"kfd", Status::kOk, "", ""};
  NodeAccess a = Examine(options, "/dev/kfd", who);
  if (!a.exists) {
    r.status = Status::kFail;
    r.detail = a.problem;
    r.fix = "/dev/kfd comes with the amdgpu driver (see amdgpu_module); in a container pass it in: --device /dev/kfd";
    return r;
  }
  if (!a.device) {
    r.status = Status::kFail;
    r.detail = a.problem;
    r.fix = kNotADeviceFix;
    return r;
  }
  if (!a.ok) {
    r.status = Status::kFail;
    r.detail = a.problem + " (" + WhoSummary(who) + ")";
    r.fix = AccessFix(options, who, {a});
    return r;
  }
  r.detail = "/dev/kfd read/write for " + who.label + " " + a.how;
  WarnIfDefaultRoot(who, &r);
  return r;
}

CheckResult CheckRenderNodes(const Options& options, const WorkerIdentity& who, const PciScan& scan) {
  CheckResult r{"render_nodes", Status::kOk, "", ""};
  // The AMD GPUs' own nodes where sysfs lists them (drm/ of each GPU), else
  // every /dev/dri/renderD*.
  std::vector<std::string> nodes;
  std::vector<std::string> without;
  bool listed = !scan.amd.empty();
  for (const PciGpu& g : scan.amd) listed = listed && g.drm_listed;
  if (listed) {
    for (const PciGpu& g : scan.amd) {
      if (g.render_nodes.empty()) without.push_back(g.address);
      for (const std::string& n : g.render_nodes) nodes.push_back("/dev/dri/" + n);
    }
  } else {
    std::error_code ec;
    for (fs::directory_iterator it(Under(options, "/dev/dri"), ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::string name = it->path().filename().string();
      if (name.rfind("renderD", 0) == 0) nodes.push_back("/dev/dri/" + name);
    }
    std::sort(nodes.begin(), nodes.end());
  }
  std::vector<NodeAccess> denied;
  std::vector<std::string> problems;
  std::set<std::string> hows;
  bool all_devices = true;
  std::vector<std::string> missing;
  for (const std::string& n : nodes) {
    NodeAccess a = Examine(options, n, who);
    if (!a.exists) {
      missing.push_back(n);
      continue;
    }
    all_devices = all_devices && a.device;
    if (a.ok) {
      hows.insert(a.how);
    } else {
      problems.push_back(a.problem);
      denied.push_back(std::move(a));
    }
  }
  if (!without.empty()) {
    r.status = Status::kFail;
    r.detail = "no render node for " + Join(without, ", ");
    r.fix = "amdgpu did not set up these GPUs: `dmesg | grep -i amdgpu`";
    return r;
  }
  if (!missing.empty()) {
    r.status = Status::kFail;
    r.detail = "missing, though sysfs lists them: " + Join(missing, ", ");
    r.fix = "udev makes the nodes: `udevadm trigger`; in a container pass in /dev/dri";
    return r;
  }
  if (nodes.empty() || nodes.size() < scan.amd.size()) {
    r.status = Status::kFail;
    r.detail = nodes.empty() ? "no /dev/dri/renderD* node"
                             : Plural(nodes.size(), "/dev/dri/renderD* node", "/dev/dri/renderD* nodes");
    if (!scan.amd.empty()) r.detail += " for " + Plural(scan.amd.size(), "AMD GPU", "AMD GPUs") + " (one each needed)";
    r.fix = "the render nodes come with amdgpu (see amdgpu_module); in a container pass in /dev/dri";
    return r;
  }
  if (!denied.empty()) {
    r.status = Status::kFail;
    r.detail = Join(problems, "; ");
    if (all_devices) r.detail += " (" + WhoSummary(who) + ")";
    r.fix = all_devices ? AccessFix(options, who, denied) : kNotADeviceFix;
    return r;
  }
  std::vector<std::string> shown;
  for (const std::string& n : nodes) shown.push_back(fs::path(n).filename().string());
  r.detail = Join(shown, ", ") + " read/write for " + who.label + " " +
             Join(std::vector<std::string>(hows.begin(), hows.end()), ", ");
  WarnIfDefaultRoot(who, &r);
  return r;
}

}  // namespace hipr::worker::node_check::internal
