// Shipping a code object to the worker (kModuleLoad). The client names the
// code object by the SHA-256 of its ELF bytes and first sends only the name;
// the worker loads it from its cache (its session memory or its disk) or
// answers need_code, and only then the bytes cross the wire: lz4-compressed
// (one LZ4 block of the whole object) when that makes them smaller, raw
// otherwise. A framework that registers thousands of kernels thus ships
// almost nothing, and nothing at all for modules it never uses.
//
// Thread-safety: stateless; Remote::Call serializes the round trips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "client_stub/session/remote.h"
#include "protocol/code_object/code_object.h"
#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::client {

// Loads the code object `elf` (whose SHA-256 is `sha256`) as module `id` on
// `device` of `session`: one round trip
// when the worker has the code object, two when it must be sent. Blocks.
// Returns not ok only when the session failed (it is then dead); the
// worker's verdict is in *reply (error, globals, unavailable kernels). A
// worker that asks for the bytes twice is answered with a failed load.
Status ShipModule(Remote& session, int device, uint64_t id, co::Bytes elf, const co::Sha256Digest& sha256,
                  const std::string& name, msg::ModuleLoadReply* reply);

// LZ4 block compression of `in`: true and the compressed bytes in *out when
// they are smaller than `in`; false (send raw) otherwise or when `in` is
// too large for one LZ4 block.
bool CompressIfSmaller(co::Bytes in, std::vector<uint8_t>* out);

}  // namespace hipr::client
