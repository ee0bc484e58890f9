#include "protocol/code_object/metadata.h"

#include <msgpack.hpp>

#include <algorithm>
#include <string>

namespace hipr::co::internal {
namespace {

constexpr size_t kMaxDepth = 16;

Status Bad(const std::string& what) { return InvalidArgument("malformed AMDGPU metadata: " + what); }

std::string_view KeyOf(const msgpack::object& o) {
  if (o.type != msgpack::type::STR) return {};
  return std::string_view(o.via.str.ptr, o.via.str.size);
}

Status GetU32(const msgpack::object& o, std::string_view key, uint32_t* out) {
  if (o.type != msgpack::type::POSITIVE_INTEGER || o.via.u64 > UINT32_MAX) {
    return Bad(std::string(key) + " is not an unsigned 32-bit integer");
  }
  *out = static_cast<uint32_t>(o.via.u64);
  return Status::Ok();
}

Status GetStr(const msgpack::object& o, std::string_view key, std::string* out) {
  if (o.type != msgpack::type::STR) return Bad(std::string(key) + " is not a string");
  out->assign(o.via.str.ptr, o.via.str.size);
  return Status::Ok();
}

Status DecodeArg(const msgpack::object& o, KernelArg* arg) {
  if (o.type != msgpack::type::MAP) return Bad("kernel arg is not a map");
  bool has_offset = false, has_size = false, has_kind = false;
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    const msgpack::object_kv& kv = o.via.map.ptr[i];
    const std::string_view key = KeyOf(kv.key);
    if (key == ".offset") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &arg->offset));
      has_offset = true;
    } else if (key == ".size") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &arg->size));
      has_size = true;
    } else if (key == ".value_kind") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &arg->value_kind));
      has_kind = true;
    } else if (key == ".name") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &arg->name));
    } else if (key == ".type_name") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &arg->type_name));
    } else if (key == ".address_space") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &arg->address_space));
    }
  }
  if (!has_offset || !has_size || !has_kind) return Bad("kernel arg lacks .offset, .size or .value_kind");
  return Status::Ok();
}

Status DecodeKernel(const msgpack::object& o, KernelInfo* k) {
  if (o.type != msgpack::type::MAP) return Bad("kernel is not a map");
  bool has_name = false, has_symbol = false, has_kernarg_size = false;
  const msgpack::object* args = nullptr;
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    const msgpack::object_kv& kv = o.via.map.ptr[i];
    const std::string_view key = KeyOf(kv.key);
    if (key == ".name") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &k->name));
      has_name = true;
    } else if (key == ".symbol") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &k->symbol));
      has_symbol = true;
    } else if (key == ".kernarg_segment_size") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->kernarg_segment_size));
      has_kernarg_size = true;
    } else if (key == ".kernarg_segment_align") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->kernarg_segment_align));
    } else if (key == ".group_segment_fixed_size") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->group_segment_fixed_size));
    } else if (key == ".private_segment_fixed_size") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->private_segment_fixed_size));
    } else if (key == ".max_flat_workgroup_size") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->max_flat_workgroup_size));
    } else if (key == ".wavefront_size") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->wavefront_size));
    } else if (key == ".sgpr_count") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->sgpr_count));
    } else if (key == ".vgpr_count") {
      HIPR_RETURN_IF_ERROR(GetU32(kv.val, key, &k->vgpr_count));
    } else if (key == ".args") {
      if (kv.val.type != msgpack::type::ARRAY) return Bad(".args is not an array");
      args = &kv.val;
    }
  }
  if (!has_name || !has_symbol || !has_kernarg_size) {
    return Bad("kernel lacks .name, .symbol or .kernarg_segment_size");
  }
  if (args != nullptr) {
    k->args.resize(args->via.array.size);
    for (uint32_t i = 0; i < args->via.array.size; ++i) {
      HIPR_RETURN_IF_ERROR(DecodeArg(args->via.array.ptr[i], &k->args[i]));
      const KernelArg& a = k->args[i];
      if (uint64_t{a.offset} + a.size > k->kernarg_segment_size) {
        return Bad("arg " + std::to_string(i) + " of " + k->name + " lies outside its kernarg segment");
      }
    }
  }
  return Status::Ok();
}

Status DecodeRoot(const msgpack::object& root, CodeObjectInfo* out) {
  if (root.type != msgpack::type::MAP) return Bad("root is not a map");
  bool has_version = false;
  for (uint32_t i = 0; i < root.via.map.size; ++i) {
    const msgpack::object_kv& kv = root.via.map.ptr[i];
    const std::string_view key = KeyOf(kv.key);
    if (key == "amdhsa.version") {
      const msgpack::object& v = kv.val;
      if (v.type != msgpack::type::ARRAY || v.via.array.size < 2) return Bad("amdhsa.version is not [major, minor]");
      HIPR_RETURN_IF_ERROR(GetU32(v.via.array.ptr[0], key, &out->version_major));
      HIPR_RETURN_IF_ERROR(GetU32(v.via.array.ptr[1], key, &out->version_minor));
      has_version = true;
    } else if (key == "amdhsa.target") {
      HIPR_RETURN_IF_ERROR(GetStr(kv.val, key, &out->target));
    } else if (key == "amdhsa.kernels") {
      const msgpack::object& ks = kv.val;
      if (ks.type != msgpack::type::ARRAY) return Bad("amdhsa.kernels is not an array");
      out->kernels.resize(ks.via.array.size);
      for (uint32_t k = 0; k < ks.via.array.size; ++k) {
        HIPR_RETURN_IF_ERROR(DecodeKernel(ks.via.array.ptr[k], &out->kernels[k]));
      }
    }
  }
  if (!has_version) return Bad("no amdhsa.version");
  if (out->version_major != 1) {
    return Bad("unsupported amdhsa.version " + std::to_string(out->version_major) + "." +
               std::to_string(out->version_minor));
  }
  return Status::Ok();
}

}  // namespace

Status DecodeAmdgpuMetadata(Bytes desc, CodeObjectInfo* out) {
  if (desc.empty()) return Bad("empty note");
  // Every array element and map entry needs at least one byte of input, so
  // these caps keep the decoder's up-front allocations proportional to the note.
  const size_t n = desc.size();
  const msgpack::unpack_limit limit(/*array=*/n, /*map=*/n / 2 + 1, /*str=*/n, /*bin=*/n, /*ext=*/0, kMaxDepth);
  msgpack::object_handle handle;
  size_t offset = 0;
  try {
    handle = msgpack::unpack(reinterpret_cast<const char*>(desc.data()), n, offset, nullptr, nullptr, limit);
  } catch (const std::exception& e) {
    return Bad(std::string("bad msgpack: ") + e.what());
  }
  CodeObjectInfo info;
  HIPR_RETURN_IF_ERROR(DecodeRoot(handle.get(), &info));
  out->version_major = info.version_major;
  out->version_minor = info.version_minor;
  out->target = std::move(info.target);
  out->kernels = std::move(info.kernels);
  return Status::Ok();
}

}  // namespace hipr::co::internal
