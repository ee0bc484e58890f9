// Internal to the code-object toolkit: decodes the msgpack description of an
// NT_AMDGPU_METADATA note (code object v4 [1,1] and v5 [1,2]; any [1,x] is
// accepted) into CodeObjectInfo's version, target and kernels.
#pragma once

#include "protocol/code_object/code_object.h"

namespace hipr::co::internal {

// msgpack limits derive from desc.size() so that no container header can make
// the decoder allocate more than a small multiple of the note itself.
// Unknown keys are ignored; known keys of the wrong type, missing required
// keys (".name", ".symbol", ".kernarg_segment_size"; per arg ".offset",
// ".size", ".value_kind") and args outside the kernarg segment are errors.
Status DecodeAmdgpuMetadata(Bytes desc, CodeObjectInfo* out);

}  // namespace hipr::co::internal
