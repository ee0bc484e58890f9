// Texture objects (hipCreateTextureObject and the driver API's
// hipTexObject*): the worker makes the device's texture over this
// session's device memory (msg::TextureCreateRequest) and its handle is the
// hipTextureObject_t kernels receive. A texture reads linear memory,
// pitched 2-D memory, or a 2-D HIP array (pitched memory in hipr,
// hip_arrays.h). Textures that need image memory (1-D, 3-D, layered and
// cubemap arrays, mipmapped arrays) and resource views are
// hipErrorNotSupported, logged once. The descriptions a texture was made
// from are kept here and answer the Get functions.
#pragma once

#include <hip/hip_runtime_api.h>

namespace hipr::client {

// The descriptions a live texture object was made from.
struct TextureRecord {
  hipResourceDesc res{};
  hipTextureDesc tex{};
  int device = 0;  // Whose worker named it.
};

// hipCreateTextureObject's path (`view`: a resource view, which hipr
// refuses), hipDestroyTextureObject's, and the descriptions of a live
// texture object (false: no such texture).
hipError_t CreateTextureObject(hipTextureObject_t* out, const hipResourceDesc* res, const hipTextureDesc* tex,
                               const void* view);
hipError_t DestroyTextureObject(hipTextureObject_t object);
bool FindTexture(hipTextureObject_t object, TextureRecord* out);
// The resource a live texture object reads (false: no such texture).
bool TextureResource(hipTextureObject_t object, hipResourceDesc* out);

}  // namespace hipr::client
