#include <grp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "worker_service/node_check/checks.h"

namespace hipr::worker::node_check::internal {

namespace fs = std::filesystem;

fs::path Under(const Options& options, const std::string& absolute) {
  return fs::path(options.root) / fs::path(absolute).relative_path();
}

std::string Trim(const std::string& s) {
  const char* space = " \t\r\n";
  size_t b = s.find_first_not_of(space);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(space) - b + 1);
}

std::optional<std::string> ReadTrimmed(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return Trim(ss.str());
}

std::optional<unsigned long> ReadHex(const fs::path& path) {
  std::optional<std::string> text = ReadTrimmed(path);
  if (!text || text->empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long v = std::strtoul(text->c_str(), &end, 16);
  if (errno != 0 || end == text->c_str() || *end != '\0') return std::nullopt;
  return v;
}

std::string Hex(unsigned long v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*lx", digits, v);
  return buf;
}

std::string Join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

std::string Counted(const std::vector<std::string>& names) {
  std::vector<std::pair<std::string, int>> counts;
  for (const std::string& n : names) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == n; });
    if (it == counts.end())
      counts.emplace_back(n, 1);
    else
      ++it->second;
  }
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(std::to_string(count) + "x " + name);
  return Join(parts, ", ");
}

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string GroupName(gid_t gid) {
  const group* g = getgrgid(gid);
  return g != nullptr ? std::string(g->gr_name) : std::string();
}

std::string GroupLabel(gid_t gid) {
  std::string name = GroupName(gid);
  return name.empty() ? std::to_string(gid) : name + " (" + std::to_string(gid) + ")";
}

std::string GidList(const std::vector<gid_t>& gids) {
  std::vector<std::string> parts;
  for (gid_t g : gids) parts.push_back(std::to_string(g));
  return parts.empty() ? "none" : Join(parts, ",");
}

std::string Seconds(std::chrono::milliseconds t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", t.count() / 1000.0);
  return buf;
}

}  // namespace hipr::worker::node_check::internal
