// AMDGPU target ids: "<processor>[:<feature><+|->]...", features sramecc and
// xnack, each at most once (AMDGPUUsage "Target ID").
#include <cctype>
#include <string>

#include "protocol/code_object/code_object.h"

namespace hipr::co {
namespace {

bool ValidProcessor(std::string_view p) {
  if (p.empty() || p.size() > 64) return false;
  for (char c : p) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// 2 when both say the same (both pin one value, or both leave it open), 1
// when one side leaves it open, 0 when they pin opposite values.
int FeatureScore(Feature code, Feature device) {
  if (code == device) return 2;
  return code == Feature::kAny || device == Feature::kAny ? 1 : 0;
}

}  // namespace

Status ParseTargetId(std::string_view text, TargetId* out) {
  TargetId id;
  const size_t colon = text.find(':');
  id.processor = std::string(text.substr(0, colon));
  if (!ValidProcessor(id.processor)) {
    return InvalidArgument("bad target id '" + std::string(text) + "': bad processor");
  }
  bool seen_sramecc = false, seen_xnack = false;
  std::string_view rest = colon == std::string_view::npos ? std::string_view() : text.substr(colon + 1);
  while (colon != std::string_view::npos) {
    const size_t next = rest.find(':');
    const std::string_view feature = rest.substr(0, next);
    if (feature.size() < 2) {
      return InvalidArgument("bad target id '" + std::string(text) + "': empty feature");
    }
    const char sign = feature.back();
    if (sign != '+' && sign != '-') {
      return InvalidArgument("bad target id '" + std::string(text) + "': feature without +/-");
    }
    const Feature value = sign == '+' ? Feature::kOn : Feature::kOff;
    const std::string_view name = feature.substr(0, feature.size() - 1);
    if (name == "sramecc" && !seen_sramecc) {
      id.sramecc = value;
      seen_sramecc = true;
    } else if (name == "xnack" && !seen_xnack) {
      id.xnack = value;
      seen_xnack = true;
    } else {
      return InvalidArgument("bad target id '" + std::string(text) + "': unknown or repeated feature '" +
                             std::string(name) + "'");
    }
    if (next == std::string_view::npos) break;
    rest = rest.substr(next + 1);
  }
  *out = std::move(id);
  return Status::Ok();
}

bool IsCompatible(const TargetId& code, const TargetId& device) {
  return code.processor == device.processor && FeatureScore(code.sramecc, device.sramecc) > 0 &&
         FeatureScore(code.xnack, device.xnack) > 0;
}

namespace internal {
// Used by SelectEntry: higher is a closer match; < 0 when incompatible.
int MatchScore(const TargetId& code, const TargetId& device) {
  if (!IsCompatible(code, device)) return -1;
  return FeatureScore(code.sramecc, device.sramecc) + FeatureScore(code.xnack, device.xnack);
}
}  // namespace internal

}  // namespace hipr::co
