// hipr-node: checks a GPU node before the hipr worker is deployed on it
// (node_check.h). Exit status: 0 ready (warnings allowed), 1 a check
// failed, 2 bad usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "worker_service/node_check/node_check.h"

namespace nc = hipr::worker::node_check;

int main(int argc, char** argv) {
  CLI::App app{"hipr-node: checks that this node can run hipr-worker --device hip"};
  app.require_subcommand(1);
  CLI::App* check = app.add_subcommand(
      "check", "check the GPUs, the amdgpu driver, /dev/kfd and /dev/dri access, the HIP runtime and rocm-smi");
  nc::Options options;
  std::string user, gids_text;
  long long uid = -1;
  bool json = false;
  double timeout_s = options.timeout.count() / 1000.0;
  check->add_option("--root", options.root, "read sysfs, /proc and /dev under DIR (a copy or a fake tree)")
      ->capture_default_str();
  CLI::Option* user_opt =
      check->add_option("--user", user, "the worker's user (default: hipr if it exists, else the caller)");
  check->add_option("--uid", uid, "the worker's uid, instead of --user (e.g. a systemd DynamicUser's)")
      ->check(CLI::Range(0LL, 4294967294LL))
      ->excludes(user_opt);
  check->add_option("--gids", gids_text,
                    "the worker's groups, numbers or names, comma-separated (default: the user's groups)");
  check->add_flag("--json", json, "print the results as a JSON array");
  check->add_option("--hip-runtime", options.hip_runtime, "the HIP runtime to load: soname or path")
      ->capture_default_str();
  check->add_option("--rocm-smi", options.rocm_smi, "rocm-smi to run: path, or name searched in PATH and /opt/rocm/bin")
      ->capture_default_str();
  check->add_option("--timeout-s", timeout_s, "how long rocm-smi and the runtime load may take each")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::string why;
  std::vector<gid_t> gids;
  if (!gids_text.empty() && !nc::ParseGids(gids_text, &gids, &why)) {
    std::fprintf(stderr, "hipr-node: --gids: %s\n", why.c_str());
    return 2;
  }
  if (!user.empty()) {
    options.identity = nc::IdentityOfUser(user, &why);
    if (!options.identity) {
      std::fprintf(stderr, "hipr-node: --user: %s\n", why.c_str());
      return 2;
    }
    if (!gids_text.empty()) options.identity->gids = gids;
  } else if (uid >= 0) {
    options.identity = nc::IdentityOfUid(static_cast<uid_t>(uid), gids);
  } else if (!gids_text.empty()) {
    std::fprintf(stderr, "hipr-node: --gids needs --user or --uid\n");
    return 2;
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) options.search_path = path;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
  // Installed as PREFIX/bin/hipr-node beside PREFIX/share/hipr/udev (the
  // build tree is laid out the same), wherever PREFIX is.
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) options.udev_rules_dir = (exe.parent_path().parent_path() / HIPR_UDEV_RULES_RELDIR).string();

  const std::vector<nc::CheckResult> results = nc::Run(options);
  const std::string report = json ? nc::FormatJson(results) : nc::FormatText(results);
  std::fputs(report.c_str(), stdout);
  return nc::ExitStatus(results);
}
