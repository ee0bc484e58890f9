// Texture objects as the worker's devices make them: the checks every
// device applies to a msg::TextureCreateRequest, and the HIP resource and
// texture descriptions it stands for. The `hip` device hands those to the
// real hipCreateTextureObject; the sim device keeps the same fields in the
// descriptor its kernel twins sample through (twin_abi.h), so the path a
// real GPU takes is the one the sim tests, up to the runtime call.
// Header-only: both device libraries include it.
#pragma once

#include <cstdint>
#include <string>

#include <hip/hip_runtime_api.h>

#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::worker {

struct TextureLayout {
  uint32_t element_bytes = 0;
  uint32_t channels = 0;
  uint64_t width = 0;   // Elements in a row.
  uint64_t height = 1;  // Rows (1 for linear memory).
};

// kInvalidArgument (hipErrorInvalidValue) unless the request describes a
// texture HIP can make: 1, 2 or 4 channels of 8, 16 or 32 bits alike (float:
// 16 or 32), rows a whole number of elements, a pitch at least a row (and
// no address or pitch misaligned for the element), known enum values.
inline Status CheckTexture(const msg::TextureCreateRequest& r, TextureLayout* out) {
  auto bad = [](const std::string& why) { return Status(StatusCode::kInvalidArgument, "texture object: " + why); };
  if (r.shape != msg::kTextureLinear && r.shape != msg::kTexturePitch2D) return bad("unknown shape");
  const int32_t bits = r.channel_bits[0];
  uint32_t channels = 0;
  for (int32_t b : r.channel_bits) {
    if (b == 0) break;
    if (b != bits) return bad("channels of different widths");
    ++channels;
  }
  for (uint32_t i = channels; i < 4; ++i)
    if (r.channel_bits[i] != 0) return bad("a gap between channels");
  if (channels != 1 && channels != 2 && channels != 4) return bad("1, 2 or 4 channels");
  if (bits != 8 && bits != 16 && bits != 32) return bad("channels of 8, 16 or 32 bits");
  if (r.channel_kind != hipChannelFormatKindSigned && r.channel_kind != hipChannelFormatKindUnsigned &&
      r.channel_kind != hipChannelFormatKindFloat)
    return bad("unknown channel kind");
  if (r.channel_kind == hipChannelFormatKindFloat && bits == 8) return bad("8-bit float channels");
  const uint32_t element = static_cast<uint32_t>(bits / 8) * channels;
  const msg::Region& m = r.memory;
  if (m.address == 0 || m.width == 0 || m.height == 0 || m.width % element != 0 || m.address % element != 0)
    return bad("memory not a whole number of aligned elements");
  if (r.shape == msg::kTextureLinear && m.height != 1) return bad("linear memory of more than one row");
  if (r.shape == msg::kTexturePitch2D && (m.pitch < m.width || m.pitch % element != 0)) return bad("pitch");
  for (int32_t mode : r.address_mode)
    if (mode < hipAddressModeWrap || mode > hipAddressModeBorder) return bad("unknown address mode");
  if ((r.filter_mode != hipFilterModePoint && r.filter_mode != hipFilterModeLinear) ||
      (r.mipmap_filter_mode != hipFilterModePoint && r.mipmap_filter_mode != hipFilterModeLinear))
    return bad("unknown filter mode");
  if (r.read_mode != hipReadModeElementType && r.read_mode != hipReadModeNormalizedFloat)
    return bad("unknown read mode");
  // Linear filtering returns floats: integer elements must be read as normalized floats.
  if (r.filter_mode == hipFilterModeLinear && r.channel_kind != hipChannelFormatKindFloat &&
      r.read_mode != hipReadModeNormalizedFloat)
    return bad("linear filtering of integers read as integers");
  out->element_bytes = element;
  out->channels = channels;
  out->width = m.width / element;
  out->height = m.height;
  return Status::Ok();
}

// The request as HIP's descriptions (after CheckTexture).
inline void HipTextureDescs(const msg::TextureCreateRequest& r, const TextureLayout& layout, hipResourceDesc* res,
                            hipTextureDesc* tex) {
  *res = hipResourceDesc{};
  const hipChannelFormatDesc desc{r.channel_bits[0], r.channel_bits[1], r.channel_bits[2], r.channel_bits[3],
                                  static_cast<hipChannelFormatKind>(r.channel_kind)};
  void* ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(r.memory.address));
  if (r.shape == msg::kTextureLinear) {
    res->resType = hipResourceTypeLinear;
    res->res.linear.devPtr = ptr;
    res->res.linear.desc = desc;
    res->res.linear.sizeInBytes = r.memory.width;
  } else {
    res->resType = hipResourceTypePitch2D;
    res->res.pitch2D.devPtr = ptr;
    res->res.pitch2D.desc = desc;
    res->res.pitch2D.width = layout.width;
    res->res.pitch2D.height = layout.height;
    res->res.pitch2D.pitchInBytes = r.memory.pitch;
  }
  *tex = hipTextureDesc{};
  for (int i = 0; i < 3; ++i) tex->addressMode[i] = static_cast<hipTextureAddressMode>(r.address_mode[i]);
  tex->filterMode = static_cast<hipTextureFilterMode>(r.filter_mode);
  tex->readMode = static_cast<hipTextureReadMode>(r.read_mode);
  tex->sRGB = r.srgb;
  for (int i = 0; i < 4; ++i) tex->borderColor[i] = r.border_color[i];
  tex->normalizedCoords = r.normalized_coords;
  tex->maxAnisotropy = r.max_anisotropy;
  tex->mipmapFilterMode = static_cast<hipTextureFilterMode>(r.mipmap_filter_mode);
  tex->mipmapLevelBias = r.mipmap_level_bias;
  tex->minMipmapLevelClamp = r.min_mipmap_level_clamp;
  tex->maxMipmapLevelClamp = r.max_mipmap_level_clamp;
}

}  // namespace hipr::worker
