#include "protocol/visible_devices.h"

#include <algorithm>

namespace hipr {

namespace {

std::vector<std::string> Entries(std::string_view list) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < list.size()) {
    size_t end = list.find(',', pos);
    if (end == std::string_view::npos) end = list.size();
    out.emplace_back(list.substr(pos, end - pos));
    pos = end + 1;  // A trailing comma adds no entry, as in clr.
  }
  return out;
}

// An index written plainly: digits, no sign, no leading zero but "0".
std::optional<int> PlainIndex(const std::string& entry) {
  if (entry.empty() || entry.size() > 9) return std::nullopt;
  if (!std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  if (entry.size() > 1 && entry[0] == '0') return std::nullopt;
  return std::stoi(entry);
}

bool IsUuid(const std::string& entry) { return entry.find("GPU-") != std::string::npos; }

}  // namespace

std::string VisibleDevices::Describe() const {
  std::string out;
  if (hip) out += std::string(kHipVisibleDevices) + "=" + *hip;
  if (rocr) out += (out.empty() ? "" : " ") + std::string(kRocrVisibleDevices) + "=" + *rocr;
  return out;
}

VisibleDevices ParseVisibleDevices(const std::vector<std::string>& entries) {
  std::optional<std::string> hip, cuda, rocr;
  for (const std::string& e : entries) {
    const size_t eq = e.find('=');
    if (eq == std::string::npos || eq + 1 == e.size()) continue;  // Unset or empty: no selection.
    const std::string name = e.substr(0, eq), value = e.substr(eq + 1);
    if (name == kHipVisibleDevices) hip = value;
    else if (name == kCudaVisibleDevices) cuda = value;
    else if (name == kRocrVisibleDevices) rocr = value;
  }
  VisibleDevices v;
  v.hip = hip ? hip : cuda;
  v.rocr = rocr;
  return v;
}

std::vector<int> SelectVisible(std::string_view list, const std::vector<std::string>& uuids) {
  std::vector<int> out;
  for (const std::string& entry : Entries(list)) {
    std::optional<int> index;
    if (IsUuid(entry)) {
      for (size_t i = 0; i < uuids.size() && !index; ++i)
        if (!uuids[i].empty() && uuids[i].find(entry) != std::string::npos) index = static_cast<int>(i);
    } else {
      index = PlainIndex(entry);
    }
    if (!index || *index >= static_cast<int>(uuids.size())) break;  // The rest is discarded.
    if (std::find(out.begin(), out.end(), *index) == out.end()) out.push_back(*index);
  }
  return out;
}

std::string ComposeVisible(std::string_view worker, std::string_view client) {
  const std::vector<std::string> mine = Entries(worker);
  std::string out;
  for (const std::string& entry : Entries(client)) {
    std::string chosen;
    if (IsUuid(entry)) {
      // Only a UUID the worker's own list names: anything else could reach
      // a device the worker was not given.
      if (std::find(mine.begin(), mine.end(), entry) == mine.end()) break;
      chosen = entry;
    } else if (std::optional<int> k = PlainIndex(entry); k && *k < static_cast<int>(mine.size())) {
      chosen = mine[static_cast<size_t>(*k)];
    } else {
      break;
    }
    out += (out.empty() ? "" : ",") + chosen;
  }
  // Nothing valid: a value that selects no device, as the client's did.
  return out.empty() ? std::string("-1") : out;
}

}  // namespace hipr
