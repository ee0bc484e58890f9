#include "worker_service/node_check/node_check.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "worker_service/node_check/checks.h"

namespace hipr::worker::node_check {
namespace {

using internal::Plural;
using internal::Trim;

std::vector<gid_t> GroupsOf(const passwd& pw) {
  int n = 64;
  std::vector<gid_t> gids(n);
  if (getgrouplist(pw.pw_name, pw.pw_gid, gids.data(), &n) < 0) {
    gids.resize(n);  // n is now the number it has.
    if (getgrouplist(pw.pw_name, pw.pw_gid, gids.data(), &n) < 0) n = 0;
  }
  gids.resize(n);
  return gids;
}

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

}  // namespace

const char* StatusText(Status status) {
  switch (status) {
    case Status::kOk:
      return "ok";
    case Status::kWarn:
      return "warn";
    case Status::kFail:
      return "FAIL";
  }
  return "?";
}

std::optional<WorkerIdentity> IdentityOfUser(const std::string& name, std::string* why) {
  const passwd* pw = getpwnam(name.c_str());
  if (pw == nullptr) {
    *why = "no user " + name;
    return std::nullopt;
  }
  WorkerIdentity who;
  who.uid = pw->pw_uid;
  who.gids = GroupsOf(*pw);
  who.user = name;
  who.label = "user " + name + " (uid " + std::to_string(who.uid) + ")";
  return who;
}

WorkerIdentity IdentityOfUid(uid_t uid, std::vector<gid_t> gids) {
  WorkerIdentity who;
  who.uid = uid;
  const passwd* pw = getpwuid(uid);
  if (pw != nullptr) who.user = pw->pw_name;
  who.gids = !gids.empty() || pw == nullptr ? std::move(gids) : GroupsOf(*pw);
  who.label = "uid " + std::to_string(uid) + (who.user.empty() ? "" : " (" + who.user + ")");
  return who;
}

WorkerIdentity DefaultIdentity() {
  std::string why;
  std::optional<WorkerIdentity> hipr = IdentityOfUser("hipr", &why);
  if (hipr) {
    hipr->defaulted = true;
    return *hipr;
  }
  std::vector<gid_t> gids{getgid()};
  int n = getgroups(0, nullptr);
  if (n > 0) {
    std::vector<gid_t> more(n);
    n = getgroups(n, more.data());
    for (int i = 0; i < n; ++i)
      if (more[i] != gids[0]) gids.push_back(more[i]);
  }
  WorkerIdentity who = IdentityOfUid(getuid(), gids);
  who.label = "the invoking " + who.label;
  who.defaulted = true;
  return who;
}

bool ParseGids(const std::string& text, std::vector<gid_t>* gids, std::string* why) {
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item = Trim(item);
    if (item.empty()) continue;
    if (std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      gids->push_back(static_cast<gid_t>(std::stoul(item)));
      continue;
    }
    const group* g = getgrnam(item.c_str());
    if (g == nullptr) {
      *why = "no group " + item;
      return false;
    }
    gids->push_back(g->gr_gid);
  }
  return true;
}

std::vector<CheckResult> Run(const Options& options) {
  const WorkerIdentity who = options.identity ? *options.identity : DefaultIdentity();
  const internal::PciScan scan = internal::ScanPci(options);
  std::vector<CheckResult> results;
  results.push_back(internal::CheckPciGpus(scan));
  results.push_back(internal::CheckAmdgpuModule(options, scan));
  results.push_back(internal::CheckKfd(options, who));
  results.push_back(internal::CheckRenderNodes(options, who, scan));
  results.push_back(internal::CheckHipRuntime(options));
  internal::SmiGpus smi;
  results.push_back(internal::CheckRocmSmi(options, &smi));
  results.push_back(internal::CheckGpuModels(options, scan, smi));
  return results;
}

int ExitStatus(const std::vector<CheckResult>& results) {
  for (const CheckResult& r : results)
    if (r.status == Status::kFail) return 1;
  return 0;
}

std::string FormatText(const std::vector<CheckResult>& results) {
  size_t width = 0;
  for (const CheckResult& r : results) width = std::max(width, r.name.size());
  std::string out;
  size_t failed = 0, warned = 0;
  for (const CheckResult& r : results) {
    char head[64];
    std::snprintf(head, sizeof head, "%-4s  %-*s  ", StatusText(r.status), static_cast<int>(width), r.name.c_str());
    out += head + r.detail + "\n";
    failed += r.status == Status::kFail;
    warned += r.status == Status::kWarn;
    if (r.status == Status::kOk || r.fix.empty()) continue;
    std::istringstream lines(r.fix);
    for (std::string line; std::getline(lines, line);) out += std::string(6, ' ') + "fix: " + line + "\n";
  }
  if (failed == 0) {
    out += "node ready for hipr-worker --device hip";
    if (warned) out += " (" + Plural(warned, "warning", "warnings") + ")";
  } else {
    out += "node NOT ready: " + Plural(failed, "check", "checks") + " failed";
  }
  return out + "\n";
}

std::string FormatJson(const std::vector<CheckResult>& results) {
  std::string out = "[";
  for (size_t i = 0; i < results.size(); ++i) {
    const CheckResult& r = results[i];
    const char* status = r.status == Status::kOk ? "ok" : r.status == Status::kWarn ? "warn" : "fail";
    out += std::string(i ? ",\n " : "") + "{\"name\": " + JsonString(r.name) + ", \"status\": \"" + status +
           "\", \"detail\": " + JsonString(r.detail) + ", \"fix\": " + JsonString(r.fix) + "}";
  }
  return out + "]\n";
}

}  // namespace hipr::worker::node_check
