// hipr-node check (node_check.h) on fake nodes: sysfs, /proc and /dev trees
// in a temporary folder, with a fake rocm-smi script, checked against a
// worker identity passed in. The device nodes are plain files whose owner,
// group and mode say who may open them, which works as root (files are
// chown'd to made-up ids) and as any other user (files keep the caller's
// ids and the worker is another uid).
#include "worker_service/node_check/node_check.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace hipr::worker::node_check {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// Who owns the fake nodes, and who the worker is.
struct Ids {
  uid_t other_uid;  // Owns the nodes; not the worker.
  gid_t node_gid;   // The nodes' group ("render").
  uid_t worker_uid;
};

Ids TestIds() {
  if (geteuid() == 0) return {4444, 4343, 4242};
  return {geteuid(), getegid(), geteuid() + 1};
}

const char* kSmiTwoGpus =
    "#!/bin/sh\n"
    "[ \"$1\" = --showproductname ] || exit 3\n"
    "cat <<'EOF'\n"
    "======================= ROCm System Management Interface =======================\n"
    "================================= Product Info =================================\n"
    "GPU[0]\t\t: Card series: \t\tAMD Instinct MI250X / MI250\n"
    "GPU[0]\t\t: Card model: \t\t0x0b0c\n"
    "GPU[0]\t\t: Card vendor: \t\tAdvanced Micro Devices, Inc. [AMD/ATI]\n"
    "GPU[0]\t\t: Card SKU: \t\tD65209\n"
    "GPU[1]\t\t: Card series: \t\tAMD Instinct MI250X / MI250\n"
    "GPU[1]\t\t: Card model: \t\t0x0b0c\n"
    "GPU[1]\t\t: Card vendor: \t\tAdvanced Micro Devices, Inc. [AMD/ATI]\n"
    "GPU[1]\t\t: Card SKU: \t\tD65209\n"
    "================================================================================\n"
    "============================= End of ROCm SMI Log ==============================\n"
    "EOF\n";

// A node under a temporary root, removed with it.
class FakeNode {
 public:
  FakeNode() {
    char tmpl[] = "/tmp/hipr-node-test-XXXXXX";
    const char* made = mkdtemp(tmpl);
    EXPECT_NE(made, nullptr);
    root_ = made != nullptr ? made : "/nonexistent";
    fs::create_directories(root_ / "sys/bus/pci/devices");
  }
  ~FakeNode() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;

  const fs::path& root() const { return root_; }

  void Write(const std::string& relative, const std::string& text) {
    fs::path p = root_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }

  // sysfs' formats: "0x%04x\n" for ids, "0x%06x\n" for the class. A non-empty
  // `render` lists the GPU's DRM nodes under drm/, as the kernel does.
  void AddPci(const std::string& address, const char* vendor, const char* device, const char* pci_class,
              const char* driver = nullptr, const char* render = nullptr) {
    const std::string dev = "sys/bus/pci/devices/" + address;
    Write(dev + "/vendor", std::string(vendor) + "\n");
    Write(dev + "/device", std::string(device) + "\n");
    Write(dev + "/class", std::string(pci_class) + "\n");
    Write(dev + "/revision", "0x01\n");
    if (driver != nullptr) {
      fs::create_directories(root_ / "sys/bus/pci/drivers" / driver);
      fs::create_symlink(fs::path("../../drivers") / driver, root_ / dev / "driver");
    }
    if (render != nullptr) {
      fs::create_directories(root_ / dev / "drm/card0");
      fs::create_directories(root_ / dev / "drm" / render);
    }
  }

  void AddAmdgpuModule() { Write("sys/module/amdgpu/initstate", "live\n"); }

  // A device node as a plain file, with this owner, group and mode.
  void AddNode(const std::string& relative, mode_t mode, uid_t uid, gid_t gid) {
    Write(relative, "");
    const fs::path p = root_ / relative;
    if (geteuid() == 0) {
      EXPECT_EQ(chown(p.c_str(), uid, gid), 0);
    }
    EXPECT_EQ(chmod(p.c_str(), mode), 0);
  }

  std::string Script(const std::string& name, const std::string& body) {
    Write("bin/" + name, body);
    const fs::path p = root_ / "bin" / name;
    chmod(p.c_str(), 0755);
    return p.string();
  }

  // Two MI250X GCDs bound to amdgpu with their render nodes, /dev/kfd and
  // /dev/dri/renderD128/129 mode 0660 in group ids.node_gid, and a
  // rocm-smi that sees both.
  void MakeHealthy(const Ids& ids) {
    AddPci("0000:c1:00.0", "0x1002", "0x740c", "0x038000", "amdgpu", "renderD128");
    AddPci("0000:c6:00.0", "0x1002", "0x740c", "0x038000", "amdgpu", "renderD129");
    AddPci("0000:00:00.0", "0x1022", "0x14a4", "0x060000");  // A host bridge.
    AddAmdgpuModule();
    AddNode("dev/kfd", 0660, ids.other_uid, ids.node_gid);
    AddNode("dev/dri/renderD128", 0660, ids.other_uid, ids.node_gid);
    AddNode("dev/dri/renderD129", 0660, ids.other_uid, ids.node_gid);
    rocm_smi_ = Script("rocm-smi", kSmiTwoGpus);
  }

  Options OptionsFor(const Ids& ids) const {
    Options o;
    o.root = root_.string();
    o.identity = IdentityOfUid(ids.worker_uid, {ids.node_gid});
    o.hip_runtime = "libm.so.6";  // Loadable everywhere; the real runtime is not needed here.
    o.rocm_smi = rocm_smi_.empty() ? (root_ / "bin/rocm-smi").string() : rocm_smi_;
    o.timeout = milliseconds(5000);
    o.udev_rules_dir = "/opt/hipr/share/hipr/udev";
    return o;
  }

 private:
  fs::path root_;
  std::string rocm_smi_;
};

// node_check::Run (a gtest fixture has a Run() of its own).
std::vector<CheckResult> RunChecks(const Options& options) { return node_check::Run(options); }

// A copy: the results are often a temporary.
CheckResult Find(const std::vector<CheckResult>& results, const std::string& name) {
  for (const CheckResult& r : results)
    if (r.name == name) return r;
  ADD_FAILURE() << "no check " << name;
  return {"missing", Status::kFail, "no such check", ""};
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every failure says what to do.
void ExpectFixesForFailures(const std::vector<CheckResult>& results) {
  for (const CheckResult& r : results) {
    if (r.status != Status::kFail) continue;
    EXPECT_FALSE(r.fix.empty()) << r.name << ": " << r.detail;
  }
}

TEST(NodeCheckTest, AHealthyNodePassesEveryCheck) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  const std::vector<CheckResult> results = RunChecks(node.OptionsFor(ids));
  for (const CheckResult& r : results) EXPECT_EQ(r.status, Status::kOk) << r.name << ": " << r.detail;
  ASSERT_EQ(results.size(), 7u);
  EXPECT_EQ(ExitStatus(results), 0);
  EXPECT_EQ(Find(results, "pci_gpus").detail, "2 AMD GPUs: 0000:c1:00.0 0x740c, 0000:c6:00.0 0x740c");
  EXPECT_TRUE(Has(Find(results, "amdgpu_module").detail, "drives 2 of 2 AMD GPUs"));
  EXPECT_TRUE(Has(Find(results, "kfd").detail, "via group")) << Find(results, "kfd").detail;
  EXPECT_TRUE(Has(Find(results, "render_nodes").detail, "renderD128, renderD129 read/write"));
  EXPECT_TRUE(Has(Find(results, "hip_runtime").detail, "loaded ")) << Find(results, "hip_runtime").detail;
  EXPECT_TRUE(Has(Find(results, "hip_runtime").detail, "libm")) << Find(results, "hip_runtime").detail;
  EXPECT_EQ(Find(results, "rocm_smi").detail, "2 GPUs: 2x AMD Instinct MI250X / MI250");
  EXPECT_EQ(Find(results, "gpu_models").detail,
            "2 GPUs on the PCI bus: 2x AMD Instinct MI250X / MI250 [0x740c]; rocm-smi agrees");

  const std::string text = FormatText(results);
  EXPECT_TRUE(Has(text, "ok    pci_gpus       2 AMD GPUs")) << text;
  EXPECT_TRUE(Has(text, "node ready for hipr-worker --device hip\n")) << text;
  EXPECT_FALSE(Has(text, "fix:")) << text;
}

TEST(NodeCheckTest, AMissingAmdgpuModuleFailsAndSaysModprobe) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  fs::remove_all(node.root() / "sys/module/amdgpu");
  node.Write("proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro nomodeset quiet\n");
  const std::vector<CheckResult> results = RunChecks(node.OptionsFor(ids));
  const CheckResult module = Find(results, "amdgpu_module");
  EXPECT_EQ(module.status, Status::kFail);
  EXPECT_TRUE(Has(module.detail, "not loaded")) << module.detail;
  EXPECT_TRUE(Has(module.detail, "nomodeset")) << module.detail;
  EXPECT_TRUE(Has(module.fix, "modprobe amdgpu")) << module.fix;
  EXPECT_TRUE(Has(module.fix, "firmware-amd-graphics")) << module.fix;
  EXPECT_TRUE(Has(module.fix, "amdgpu-dkms")) << module.fix;
  EXPECT_EQ(Find(results, "pci_gpus").status, Status::kOk);
  EXPECT_EQ(ExitStatus(results), 1);
  ExpectFixesForFailures(results);
  const std::string text = FormatText(results);
  EXPECT_TRUE(Has(text, "FAIL  amdgpu_module  the amdgpu kernel driver is not loaded")) << text;
  EXPECT_TRUE(Has(text, "\n      fix: modprobe amdgpu")) << text;
  EXPECT_TRUE(Has(text, "node NOT ready: 1 check failed\n")) << text;
}

TEST(NodeCheckTest, AGpuNotBoundToAmdgpuFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  fs::remove(node.root() / "sys/bus/pci/devices/0000:c6:00.0/driver");
  fs::create_directories(node.root() / "sys/bus/pci/drivers/vfio-pci");
  fs::create_symlink("../../drivers/vfio-pci", node.root() / "sys/bus/pci/devices/0000:c6:00.0/driver");
  const CheckResult module = Find(RunChecks(node.OptionsFor(ids)), "amdgpu_module");
  EXPECT_EQ(module.status, Status::kFail);
  EXPECT_TRUE(Has(module.detail, "drives 1 of 2 AMD GPUs; not bound to amdgpu: 0000:c6:00.0 (vfio-pci)"))
      << module.detail;
}

TEST(NodeCheckTest, AKfdTheWorkerCannotOpenFailsAndNamesTheUdevRule) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.AddNode("dev/kfd", 0600, ids.other_uid, ids.node_gid);  // Owner only: the worker is not the owner.
  const std::vector<CheckResult> results = RunChecks(node.OptionsFor(ids));
  const CheckResult kfd = Find(results, "kfd");
  EXPECT_EQ(kfd.status, Status::kFail);
  EXPECT_TRUE(Has(kfd.detail, "/dev/kfd (mode 0600, owner uid " + std::to_string(ids.other_uid))) << kfd.detail;
  EXPECT_TRUE(Has(kfd.detail, "is not read/write for uid " + std::to_string(ids.worker_uid))) << kfd.detail;
  EXPECT_TRUE(Has(kfd.fix, "cp /opt/hipr/share/hipr/udev/70-amdgpu-hipr.rules /etc/udev/rules.d/")) << kfd.fix;
  EXPECT_TRUE(Has(kfd.fix, "udevadm control --reload && udevadm trigger")) << kfd.fix;
  EXPECT_FALSE(Has(kfd.fix, "usermod")) << "the group may not open it either: " << kfd.fix;
  EXPECT_EQ(Find(results, "render_nodes").status, Status::kOk);
  EXPECT_EQ(ExitStatus(results), 1);
  ExpectFixesForFailures(results);
}

TEST(NodeCheckTest, AWorkerOutsideTheNodesGroupIsToldToJoinIt) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  Options o = node.OptionsFor(ids);
  o.identity = IdentityOfUid(ids.worker_uid, {ids.node_gid + 1});
  o.identity->user = "hipr";
  const std::vector<CheckResult> results = RunChecks(o);
  for (const char* name : {"kfd", "render_nodes"}) {
    const CheckResult r = Find(results, name);
    EXPECT_EQ(r.status, Status::kFail) << name;
    EXPECT_TRUE(Has(r.detail, "(groups " + std::to_string(ids.node_gid + 1) + ")")) << r.detail;
    EXPECT_TRUE(Has(r.fix, "usermod -aG ")) << r.fix;
    EXPECT_TRUE(Has(r.fix, " hipr (systemd unit: SupplementaryGroups=")) << r.fix;
    EXPECT_TRUE(Has(r.fix, "\nor give the nodes group render, mode 0660 with hipr's udev rule")) << r.fix;
  }
}

TEST(NodeCheckTest, TheOwnerClassDecidesForTheOwnerEvenWhenTheGroupCould) {
  // Mode 0060 owned by the worker: the kernel applies the owner's bits
  // (none), not the group's.
  FakeNode node;
  Ids ids = TestIds();
  node.MakeHealthy(ids);
  ids.other_uid = ids.worker_uid = geteuid() == 0 ? 4242 : geteuid();
  node.AddNode("dev/kfd", 0060, ids.other_uid, ids.node_gid);
  EXPECT_EQ(Find(RunChecks(node.OptionsFor(ids)), "kfd").status, Status::kFail);
  node.AddNode("dev/kfd", 0600, ids.other_uid, ids.node_gid);
  const CheckResult kfd = Find(RunChecks(node.OptionsFor(ids)), "kfd");
  EXPECT_EQ(kfd.status, Status::kOk);
  EXPECT_TRUE(Has(kfd.detail, "as its owner")) << kfd.detail;
}

TEST(NodeCheckTest, MissingNodesFail) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  fs::remove(node.root() / "dev/kfd");
  fs::remove(node.root() / "dev/dri/renderD129");
  const std::vector<CheckResult> results = RunChecks(node.OptionsFor(ids));
  EXPECT_EQ(Find(results, "kfd").status, Status::kFail);
  EXPECT_TRUE(Has(Find(results, "kfd").detail, "/dev/kfd is missing"));
  EXPECT_EQ(Find(results, "render_nodes").status, Status::kFail);
  EXPECT_TRUE(Has(Find(results, "render_nodes").detail, "/dev/dri/renderD129")) << Find(results, "render_nodes").detail;
  ExpectFixesForFailures(results);
}

TEST(NodeCheckTest, WithoutSysfsDrmListsOneRenderNodePerGpuIsNeeded) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  for (const char* gpu : {"0000:c1:00.0", "0000:c6:00.0"})
    fs::remove_all(node.root() / "sys/bus/pci/devices" / gpu / "drm");
  EXPECT_EQ(Find(RunChecks(node.OptionsFor(ids)), "render_nodes").status, Status::kOk);
  fs::remove(node.root() / "dev/dri/renderD129");
  const CheckResult render = Find(RunChecks(node.OptionsFor(ids)), "render_nodes");
  EXPECT_EQ(render.status, Status::kFail);
  EXPECT_TRUE(Has(render.detail, "1 /dev/dri/renderD* node for 2 AMD GPUs")) << render.detail;
}

TEST(NodeCheckTest, ANodeWithoutAnAmdGpuFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.AddPci("0000:01:00.0", "0x10de", "0x2330", "0x030200", "nvidia");
  node.AddPci("0000:00:00.0", "0x1022", "0x14a4", "0x060000");
  node.AddNode("dev/dri/renderD128", 0660, ids.other_uid, ids.node_gid);
  node.Script("rocm-smi",
              "#!/bin/sh\n"
              "echo 'ERROR:root:Driver not initialized (amdgpu not found in modules)' >&2\n"
              "exit 0\n");
  const std::vector<CheckResult> results = RunChecks(node.OptionsFor(ids));
  const CheckResult pci = Find(results, "pci_gpus");
  EXPECT_EQ(pci.status, Status::kFail);
  EXPECT_EQ(pci.detail,
            "no AMD GPU (vendor 0x1002, display class) among 2 PCI devices; other GPUs: 0000:01:00.0 0x10de:0x2330");
  EXPECT_EQ(Find(results, "amdgpu_module").status, Status::kFail);
  EXPECT_EQ(Find(results, "kfd").status, Status::kFail);
  EXPECT_EQ(Find(results, "rocm_smi").status, Status::kFail);
  EXPECT_TRUE(Has(Find(results, "rocm_smi").detail, "Driver not initialized")) << Find(results, "rocm_smi").detail;
  EXPECT_EQ(Find(results, "gpu_models").status, Status::kFail);
  EXPECT_EQ(ExitStatus(results), 1);
  ExpectFixesForFailures(results);
}

TEST(NodeCheckTest, AmdFunctionsThatAreNotGpusAreNotCounted) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.AddPci("0000:c1:00.1", "0x1002", "0xab38", "0x040300");  // HDMI audio.
  EXPECT_EQ(Find(RunChecks(node.OptionsFor(ids)), "pci_gpus").detail,
            "2 AMD GPUs: 0000:c1:00.0 0x740c, 0000:c6:00.0 0x740c");
}

TEST(NodeCheckTest, AHangingRocmSmiIsKilledAndFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.Script("rocm-smi", "#!/bin/sh\nsleep 60\n");
  Options o = node.OptionsFor(ids);
  o.timeout = milliseconds(500);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<CheckResult> results = RunChecks(o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const CheckResult smi = Find(results, "rocm_smi");
  EXPECT_EQ(smi.status, Status::kFail);
  EXPECT_TRUE(Has(smi.detail, "--showproductname did not answer in 0.5 s (killed)")) << smi.detail;
  EXPECT_TRUE(Has(smi.fix, "dmesg")) << smi.fix;
  EXPECT_TRUE(Has(Find(results, "gpu_models").detail, "rocm-smi gave no count to compare"));
  EXPECT_EQ(ExitStatus(results), 1);
}

TEST(NodeCheckTest, AnAbsentRocmSmiIsOnlyAWarning) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  Options o = node.OptionsFor(ids);
  o.rocm_smi = "hipr-no-such-rocm-smi";
  o.search_path = (node.root() / "bin").string();
  const std::vector<CheckResult> results = RunChecks(o);
  const CheckResult smi = Find(results, "rocm_smi");
  EXPECT_EQ(smi.status, Status::kWarn);
  EXPECT_TRUE(Has(smi.fix, "apt install rocm-smi")) << smi.fix;
  EXPECT_EQ(ExitStatus(results), 0);
  const std::string text = FormatText(results);
  EXPECT_TRUE(Has(text, "warn  rocm_smi")) << text;
  EXPECT_TRUE(Has(text, "node ready for hipr-worker --device hip (1 warning)\n")) << text;
}

TEST(NodeCheckTest, RocmSmiIsFoundOnTheSearchPath) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  Options o = node.OptionsFor(ids);
  o.rocm_smi = "rocm-smi";
  o.search_path = "/nonexistent:" + (node.root() / "bin").string();
  EXPECT_EQ(Find(RunChecks(o), "rocm_smi").status, Status::kOk);
}

TEST(NodeCheckTest, RocmSmiSeeingFewerGpusThanThePciBusFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.AddPci("0000:ce:00.0", "0x1002", "0x740c", "0x038000", "amdgpu", "renderD130");
  node.AddNode("dev/dri/renderD130", 0660, ids.other_uid, ids.node_gid);
  const std::vector<CheckResult> results = RunChecks(node.OptionsFor(ids));
  const CheckResult models = Find(results, "gpu_models");
  EXPECT_EQ(models.status, Status::kFail);
  EXPECT_TRUE(Has(models.detail, "3 GPUs on the PCI bus")) << models.detail;
  EXPECT_TRUE(Has(models.detail, "rocm-smi sees only 2")) << models.detail;
}

TEST(NodeCheckTest, AFailingRocmSmiFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.Script("rocm-smi", "#!/bin/sh\necho 'ROCm SMI returned 8 (the expected value is 0)' >&2\nexit 8\n");
  const CheckResult smi = Find(RunChecks(node.OptionsFor(ids)), "rocm_smi");
  EXPECT_EQ(smi.status, Status::kFail);
  EXPECT_TRUE(Has(smi.detail, "exited 8: ROCm SMI returned 8")) << smi.detail;
}

TEST(NodeCheckTest, AnUnloadableRuntimeFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  Options o = node.OptionsFor(ids);
  o.hip_runtime = (node.root() / "lib/libamdhip64.so.5").string();
  const CheckResult hip = Find(RunChecks(o), "hip_runtime");
  EXPECT_EQ(hip.status, Status::kFail);
  EXPECT_TRUE(Has(hip.detail, "cannot load " + o.hip_runtime + ": ")) << hip.detail;
  EXPECT_TRUE(Has(hip.fix, "libamdhip64-5")) << hip.fix;
}

TEST(NodeCheckTest, UnknownIdsPrintTheirHexIdOrTheNodesAmdgpuIdsName) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.AddPci("0000:d1:00.0", "0x1002", "0x7fff", "0x030000", "amdgpu", "renderD130");
  node.AddPci("0000:d2:00.0", "0x1002", "0x7ffe", "0x030000", "amdgpu", "renderD131");
  node.AddNode("dev/dri/renderD130", 0660, ids.other_uid, ids.node_gid);
  node.AddNode("dev/dri/renderD131", 0660, ids.other_uid, ids.node_gid);
  node.Write("usr/share/libdrm/amdgpu.ids",
             "# List of AMDGPU IDs\n#\n\n1.0.0\n7FFE,\t00,\tAMD Radeon Test Zero\n7FFE,\t01,\tAMD Radeon Test One\n");
  const CheckResult models = Find(RunChecks(node.OptionsFor(ids)), "gpu_models");
  EXPECT_TRUE(Has(models.detail, "1x AMD GPU 0x7fff")) << models.detail;
  EXPECT_TRUE(Has(models.detail, "1x AMD Radeon Test One [0x7ffe]")) << models.detail;
}

TEST(NodeCheckTest, TheInstinctIdsAreNamed) {
  EXPECT_STREQ(KnownInstinctName(0x738c), "AMD Instinct MI100");
  EXPECT_STREQ(KnownInstinctName(0x740f), "AMD Instinct MI210");
  EXPECT_STREQ(KnownInstinctName(0x7408), "AMD Instinct MI250X");
  EXPECT_STREQ(KnownInstinctName(0x740c), "AMD Instinct MI250X / MI250");
  EXPECT_STREQ(KnownInstinctName(0x74a1), "AMD Instinct MI300X");
  EXPECT_EQ(KnownInstinctName(0x10de), nullptr);
}

TEST(NodeCheckTest, CheckingAsRootByDefaultWarnsThatItProvesNothing) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  node.AddNode("dev/kfd", 0600, ids.other_uid, ids.node_gid);
  Options o = node.OptionsFor(ids);
  o.identity = IdentityOfUid(0, {0});
  EXPECT_EQ(Find(RunChecks(o), "kfd").status, Status::kOk) << "root named on purpose opens anything";
  o.identity->defaulted = true;
  const CheckResult kfd = Find(RunChecks(o), "kfd");
  EXPECT_EQ(kfd.status, Status::kWarn);
  EXPECT_TRUE(Has(kfd.fix, "--gids render,video")) << kfd.fix;
}

TEST(NodeCheckTest, SomethingElseInTheNodesPlaceFails) {
  const Ids ids = TestIds();
  FakeNode node;
  node.MakeHealthy(ids);
  fs::remove(node.root() / "dev/kfd");
  fs::create_directories(node.root() / "dev/kfd");
  const CheckResult kfd = Find(RunChecks(node.OptionsFor(ids)), "kfd");
  EXPECT_EQ(kfd.status, Status::kFail);
  EXPECT_EQ(kfd.detail, "/dev/kfd is not a character device");
  EXPECT_TRUE(Has(kfd.fix, "udevadm trigger")) << kfd.fix;
}

TEST(NodeCheckTest, JsonIsAnArrayOfChecks) {
  std::vector<CheckResult> results{{"kfd", Status::kFail, "a \"quoted\"\tdetail", "line one\nline two"},
                                   {"rocm_smi", Status::kWarn, "absent", ""}};
  EXPECT_EQ(FormatJson(results),
            "[{\"name\": \"kfd\", \"status\": \"fail\", \"detail\": \"a \\\"quoted\\\"\\tdetail\", "
            "\"fix\": \"line one\\nline two\"},\n"
            " {\"name\": \"rocm_smi\", \"status\": \"warn\", \"detail\": \"absent\", \"fix\": \"\"}]\n");
}

TEST(NodeCheckTest, GidsAreNumbersOrGroupNames) {
  std::vector<gid_t> gids;
  std::string why;
  EXPECT_TRUE(ParseGids("4343, 0,root", &gids, &why)) << why;
  EXPECT_EQ(gids, (std::vector<gid_t>{4343, 0, 0}));
  gids.clear();
  EXPECT_FALSE(ParseGids("hipr-no-such-group", &gids, &why));
  EXPECT_EQ(why, "no group hipr-no-such-group");
}

}  // namespace
}  // namespace hipr::worker::node_check
