#include "protocol/device_properties.h"

#include <unordered_map>

#include "protocol/messages.h"

namespace hipr::msg {
namespace {

constexpr std::string_view kNames[] = {
#define HIPR_DEVICE_PROPERTY_NAME(id, name) name,
    HIPR_DEVICE_PROPERTIES(HIPR_DEVICE_PROPERTY_NAME)
#undef HIPR_DEVICE_PROPERTY_NAME
};
static_assert(std::size(kNames) == static_cast<size_t>(DeviceProperty::kCount));

}  // namespace

std::string_view NameOf(DeviceProperty p) {
  const auto i = static_cast<size_t>(p);
  return i < std::size(kNames) ? kNames[i] : std::string_view();
}

PropertyTable::PropertyTable(const DeviceInfo& info) {
  // Leaked: read until exit, from any thread.
  static const auto* index = [] {
    auto* m = new std::unordered_map<std::string_view, int>;
    for (size_t i = 0; i < std::size(kNames); ++i) m->emplace(kNames[i], static_cast<int>(i));
    return m;
  }();
  for (const NamedValue& v : info.properties) {
    auto it = index->find(v.name);
    if (it == index->end()) continue;
    values_[it->second] = v.value;
    present_[it->second] = true;
  }
}

bool PropertyTable::Find(DeviceProperty p, int64_t* value) const {
  const auto i = static_cast<size_t>(p);
  if (i >= std::size(kNames) || !present_[i]) return false;
  *value = values_[i];
  return true;
}

int64_t PropertyTable::Or(DeviceProperty p, int64_t fallback) const {
  int64_t v = fallback;
  (void)Find(p, &v);
  return v;
}

bool FindProperty(const DeviceInfo& info, DeviceProperty p, int64_t* value) {
  const std::string_view name = NameOf(p);
  for (const NamedValue& v : info.properties)
    if (v.name == name) {
      *value = v.value;
      return true;
    }
  return false;
}

int64_t PropertyOr(const DeviceInfo& info, DeviceProperty p, int64_t fallback) {
  int64_t v = fallback;
  (void)FindProperty(info, p, &v);
  return v;
}

void SetProperty(DeviceInfo* info, DeviceProperty p, int64_t value) {
  const std::string_view name = NameOf(p);
  for (NamedValue& v : info->properties)
    if (v.name == name) {
      v.value = value;
      return;
    }
  info->properties.push_back(NamedValue{std::string(name), value});
}

}  // namespace hipr::msg
