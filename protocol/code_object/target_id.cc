// AMDGPU target ids: "<processor>[:<feature><+|->]...", features sramecc and
// xnack, each at most once (AMDGPUUsage "Target ID"). A processor may be a
// generic one ("gfx9-4-generic", code object v6), which runs on each of its
// members (AMDGPUUsage's "Generic processors" table).
#include <cctype>
#include <string>
#include <string_view>

#include "protocol/code_object/code_object.h"

namespace hipr::co {
namespace {

bool ValidProcessor(std::string_view p) {
  if (p.empty() || p.size() > 64) return false;
  for (char c : p) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

// Each processor that has a generic one, from llvm's AMDGPUUsage.rst
// "Generic processors" table (with gfx940 and gfx941, since retired, as
// ROCm's copy lists them).
struct Member {
  std::string_view processor;
  std::string_view generic;
};
constexpr Member kGenericMembers[] = {
    {"gfx900", "gfx9-generic"},     {"gfx902", "gfx9-generic"},     {"gfx904", "gfx9-generic"},
    {"gfx906", "gfx9-generic"},     {"gfx909", "gfx9-generic"},     {"gfx90c", "gfx9-generic"},
    {"gfx940", "gfx9-4-generic"},   {"gfx941", "gfx9-4-generic"},   {"gfx942", "gfx9-4-generic"},
    {"gfx950", "gfx9-4-generic"},   {"gfx1010", "gfx10-1-generic"}, {"gfx1011", "gfx10-1-generic"},
    {"gfx1012", "gfx10-1-generic"}, {"gfx1013", "gfx10-1-generic"}, {"gfx1030", "gfx10-3-generic"},
    {"gfx1031", "gfx10-3-generic"}, {"gfx1032", "gfx10-3-generic"}, {"gfx1033", "gfx10-3-generic"},
    {"gfx1034", "gfx10-3-generic"}, {"gfx1035", "gfx10-3-generic"}, {"gfx1036", "gfx10-3-generic"},
    {"gfx1100", "gfx11-generic"},   {"gfx1101", "gfx11-generic"},   {"gfx1102", "gfx11-generic"},
    {"gfx1103", "gfx11-generic"},   {"gfx1150", "gfx11-generic"},   {"gfx1151", "gfx11-generic"},
    {"gfx1152", "gfx11-generic"},   {"gfx1153", "gfx11-generic"},   {"gfx1200", "gfx12-generic"},
    {"gfx1201", "gfx12-generic"},
};

// Both processors are the same, or the code's is the device's generic one.
// 2 for the same, 1 for generic (ROCm prefers a native code object).
int ProcessorScore(std::string_view code, std::string_view device) {
  if (code == device) return 2;
  return GenericProcessorOf(device) == code && !code.empty() ? 1 : 0;
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

std::string_view GenericProcessorOf(std::string_view processor) {
  for (const Member& m : kGenericMembers)
    if (m.processor == processor) return m.generic;
  return {};
}

bool IsCompatible(const TargetId& code, const TargetId& device) {
  return ProcessorScore(code.processor, device.processor) > 0 && FeatureScore(code.sramecc, device.sramecc) > 0 &&
         FeatureScore(code.xnack, device.xnack) > 0;
}

namespace internal {
// Used by SelectEntry: higher is a closer match; < 0 when incompatible. A
// native code object beats a generic one whatever their features, as ROCm
// looks for native first; features decide among the same processor.
int MatchScore(const TargetId& code, const TargetId& device) {
  if (!IsCompatible(code, device)) return -1;
  return 10 * ProcessorScore(code.processor, device.processor) + FeatureScore(code.sramecc, device.sramecc) +
         FeatureScore(code.xnack, device.xnack);
}
}  // namespace internal

}  // namespace hipr::co
