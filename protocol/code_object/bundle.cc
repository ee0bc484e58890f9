// Clang offload bundles: the plain "__CLANG_OFFLOAD_BUNDLE__" table and the
// compressed "CCOB" wrapper (versions 1-3, zlib or zstd), plus entry-id
// splitting and device-entry selection.
#include <openssl/evp.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "protocol/code_object/code_object.h"
#include "protocol/code_object/elf_reader.h"

namespace hipr::co {
namespace internal {
int MatchScore(const TargetId& code, const TargetId& device);  // target_id.cc
}  // namespace internal

namespace {

using internal::InBounds;
using internal::LoadLe;

constexpr std::string_view kBundleMagic = "__CLANG_OFFLOAD_BUNDLE__";
constexpr std::string_view kCcobMagic = "CCOB";
constexpr uint64_t kPlainHeaderSize = 24 + 8;  // Magic, entry count.
constexpr uint64_t kEntryFixedSize = 24;       // Offset, size, id length.
constexpr uint64_t kMaxIdLength = 1024;        // Real ids are under 100 bytes.
// Real bundles hold the host entry and one per target (tens at most); a
// count beyond this is a lie that would have us read entry after entry of
// whatever memory follows a bundle passed with no size.
constexpr uint64_t kMaxEntries = 4096;

Status Malformed(const std::string& what) { return InvalidArgument("malformed offload bundle: " + what); }

bool StartsWith(Bytes data, std::string_view magic) {
  return data.size() >= magic.size() && std::memcmp(data.data(), magic.data(), magic.size()) == 0;
}

// Parses a plain bundle at the start of `data`; entries view `data`.
Status ParsePlain(Bytes data, Bundle* out) {
  if (!StartsWith(data, kBundleMagic)) return Malformed("bad magic");
  uint64_t count = 0;
  if (!LoadLe(data, 24, &count)) return Malformed("truncated header");
  // Each entry needs at least its fixed fields: bound the count before use.
  if (count > kMaxEntries || count > (data.size() - kPlainHeaderSize) / kEntryFixedSize) {
    return Malformed("entry count " + std::to_string(count) + " exceeds the data");
  }
  // Grown entry by entry rather than sized by `count`: callers such as
  // hipModuleLoadData pass a generous `data` whose tail may not be the
  // bundle's, so only entries actually read may cost memory.
  std::vector<BundleEntry> entries;
  entries.reserve(std::min<uint64_t>(count, 64));
  uint64_t pos = kPlainHeaderSize;
  for (uint64_t i = 0; i < count; ++i) {
    BundleEntry& e = entries.emplace_back();
    uint64_t id_len = 0;
    if (!LoadLe(data, pos, &e.offset) || !LoadLe(data, pos + 8, &e.size) ||
        !LoadLe(data, pos + 16, &id_len)) {
      return Malformed("truncated entry table");
    }
    pos += kEntryFixedSize;
    if (id_len == 0 || id_len > kMaxIdLength || !InBounds(pos, id_len, data.size())) {
      return Malformed("bad entry id length " + std::to_string(id_len));
    }
    e.id.assign(reinterpret_cast<const char*>(data.data()) + pos, id_len);
    pos += id_len;
    HIPR_RETURN_IF_ERROR(SplitEntryId(e.id, &e));
  }
  const uint64_t header_end = pos;
  uint64_t end = header_end;
  for (BundleEntry& e : entries) {
    if (!InBounds(e.offset, e.size, data.size()) || e.size > kMaxCodeObjectBytes) {
      return Malformed("entry '" + e.id + "' lies outside the data");
    }
    if (e.size != 0 && e.offset < header_end) {
      return Malformed("entry '" + e.id + "' overlaps the entry table");
    }
    e.bytes = data.subspan(e.offset, e.size);
    end = std::max(end, e.offset + e.size);
  }
  std::vector<const BundleEntry*> by_offset;
  for (const BundleEntry& e : entries) {
    if (e.size != 0) by_offset.push_back(&e);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const BundleEntry* a, const BundleEntry* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    if (by_offset[i - 1]->offset + by_offset[i - 1]->size > by_offset[i]->offset) {
      return Malformed("entries '" + by_offset[i - 1]->id + "' and '" + by_offset[i]->id + "' overlap");
    }
  }
  if (end > kMaxCodeObjectBytes) return Malformed("bundle exceeds the size limit");
  out->entries = std::move(entries);
  out->encoded_size = end;
  return Status::Ok();
}

// Grows `out` (full, holding `produced` bytes) geometrically, never past
// `cap`: a header that lies about the uncompressed size costs at most twice
// what the data really expands to, not what it claims.
void Grow(std::vector<uint8_t>* out, size_t produced, size_t cap) {
  out->resize(std::min(cap, std::max<size_t>(produced * 2, 64 << 10)));
}

// Inflates a zlib stream from `in` into `out`, producing exactly `expected`
// bytes; `*consumed` gets the bytes of `in` the stream occupies.
Status Inflate(Bytes in, uint64_t expected, std::vector<uint8_t>* out, uint64_t* consumed) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return Status(StatusCode::kInternal, "inflateInit failed");
  const size_t cap = expected + 1;  // One spare byte detects a stream that is too long.
  size_t produced = 0;
  uint64_t fed = 0;
  int rc = Z_OK;
  while (true) {
    if (zs.avail_in == 0 && fed < in.size()) {
      const uint64_t chunk = std::min<uint64_t>(in.size() - fed, 1u << 30);
      zs.next_in = const_cast<Bytef*>(in.data() + fed);
      zs.avail_in = static_cast<uInt>(chunk);
      fed += chunk;
    }
    if (produced == out->size()) {
      if (out->size() >= cap) break;
      Grow(out, produced, cap);
    }
    zs.next_out = out->data() + produced;
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out->size() - produced, 1u << 30));
    const uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0 && fed == in.size()) break;  // Truncated.
    if (rc != Z_OK && rc != Z_BUF_ERROR) break;
  }
  const uint64_t used = fed - zs.avail_in;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) return Malformed("bad or truncated zlib stream");
  if (produced != expected) return Malformed("zlib data does not match the stated size");
  out->resize(produced);
  *consumed = used;
  return Status::Ok();
}

// Decompresses one zstd frame occupying all of `in` into exactly `expected`
// bytes.
Status Unzstd(Bytes in, uint64_t expected, std::vector<uint8_t>* out) {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  if (dctx == nullptr) return Status(StatusCode::kInternal, "ZSTD_createDCtx failed");
  // The default window limit (2^27) stays: it bounds the decoder's own buffer
  // for hostile frame headers, and LLVM's compression levels stay within it.
  const size_t cap = expected + 1;
  size_t produced = 0;
  ZSTD_inBuffer ib{in.data(), in.size(), 0};
  size_t rc = 1;
  bool error = false;
  while (rc != 0) {
    if (produced == out->size()) {
      if (out->size() >= cap) break;
      Grow(out, produced, cap);
    }
    ZSTD_outBuffer ob{out->data() + produced, out->size() - produced, 0};
    const size_t before_in = ib.pos;
    rc = ZSTD_decompressStream(dctx, &ob, &ib);
    produced += ob.pos;
    if (ZSTD_isError(rc)) {
      error = true;
      break;
    }
    if (ob.pos == 0 && ib.pos == before_in) break;  // No progress: truncated.
  }
  ZSTD_freeDCtx(dctx);
  if (error || rc != 0) return Malformed("bad or truncated zstd frame");
  if (ib.pos != ib.size) return Malformed("trailing bytes after the zstd frame");
  if (produced != expected) return Malformed("zstd data does not match the stated size");
  out->resize(produced);
  return Status::Ok();
}

Status ParseCompressed(Bytes data, Bundle* out) {
  uint16_t version = 0, method = 0;
  if (!LoadLe(data, 4, &version) || !LoadLe(data, 6, &method)) return Malformed("truncated CCOB header");
  uint64_t total = 0, uncompressed = 0, header = 0;
  bool total_known = true;
  if (version == 1) {
    uint32_t u32 = 0;
    if (!LoadLe(data, 8, &u32)) return Malformed("truncated CCOB header");
    uncompressed = u32;
    header = 20;
    total_known = false;
  } else if (version == 2) {
    uint32_t t32 = 0, u32 = 0;
    if (!LoadLe(data, 8, &t32) || !LoadLe(data, 12, &u32)) return Malformed("truncated CCOB header");
    total = t32;
    uncompressed = u32;
    header = 24;
  } else if (version == 3) {
    if (!LoadLe(data, 8, &total) || !LoadLe(data, 16, &uncompressed)) {
      return Malformed("truncated CCOB header");
    }
    header = 32;
  } else {
    return Malformed("unsupported CCOB version " + std::to_string(version));
  }
  if (method != 0 && method != 1) return Malformed("unknown CCOB compression method " + std::to_string(method));
  uint8_t hash[8];
  if (!InBounds(header - 8, 8, data.size())) return Malformed("truncated CCOB header");
  std::memcpy(hash, data.data() + header - 8, 8);
  if (uncompressed > kMaxCodeObjectBytes) {
    return Malformed("CCOB claims " + std::to_string(uncompressed) + " uncompressed bytes, over the limit");
  }
  if (total_known && (total < header || total > data.size())) {
    return Malformed("CCOB total size " + std::to_string(total) + " does not fit the data");
  }
  Bytes payload = data.subspan(header, total_known ? total - header : data.size() - header);
  std::vector<uint8_t> storage;
  if (method == 1) {
    if (!total_known) {
      const size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
      if (ZSTD_isError(frame)) return Malformed("bad or truncated zstd frame");
      payload = payload.first(frame);
      total = header + frame;
    }
    HIPR_RETURN_IF_ERROR(Unzstd(payload, uncompressed, &storage));
  } else {
    uint64_t consumed = 0;
    HIPR_RETURN_IF_ERROR(Inflate(payload, uncompressed, &storage, &consumed));
    if (!total_known) total = header + consumed;
  }
  uint8_t md5[EVP_MAX_MD_SIZE];
  unsigned md5_len = 0;
  if (EVP_Digest(storage.data(), storage.size(), md5, &md5_len, EVP_md5(), nullptr) != 1 || md5_len != 16) {
    return Status(StatusCode::kInternal, "MD5 unavailable");
  }
  if (std::memcmp(md5, hash, 8) != 0) return Malformed("CCOB hash does not match the decompressed data");
  Bundle inner;
  HIPR_RETURN_IF_ERROR(ParsePlain(storage, &inner));
  out->compressed = true;
  out->ccob_version = version;
  out->ccob_method = method;
  out->encoded_size = total;
  out->entries = std::move(inner.entries);
  out->storage = std::move(storage);  // Moving keeps the heap buffer the entries view.
  return Status::Ok();
}

bool IsAmdgcnEntry(const BundleEntry& e) {
  return (e.kind.starts_with("hip") || e.kind == "hcc") && e.triple.starts_with("amdgcn") && e.size != 0;
}

}  // namespace

Status SplitEntryId(std::string_view id, BundleEntry* entry) {
  const size_t dash = id.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 >= id.size()) {
    return Malformed("bad entry id '" + std::string(id) + "'");
  }
  std::string_view rest = id.substr(dash + 1);
  // Walk four triple components.
  size_t pos = 0;
  int parts = 0;
  size_t triple_end = rest.size();
  size_t target_begin = rest.size();
  while (parts < 4) {
    const size_t next = rest.find('-', pos);
    ++parts;
    if (next == std::string_view::npos) {
      triple_end = rest.size();
      target_begin = rest.size();
      break;
    }
    if (parts == 4) {
      triple_end = next;
      target_begin = next + 1;
      break;
    }
    pos = next + 1;
  }
  std::string_view triple = rest.substr(0, triple_end);
  std::string_view target = rest.substr(std::min(target_begin, rest.size()));
  if (triple.empty() || triple.front() == '-') return Malformed("bad entry id '" + std::string(id) + "'");
  // Old ids carried a three-part triple and the processor as the fourth part
  // ("hip-amdgcn-amd-amdhsa-gfx906").
  const size_t last = triple.rfind('-');
  if (parts == 4 && target.empty() && last != std::string_view::npos &&
      triple.substr(last + 1).starts_with("gfx")) {
    target = triple.substr(last + 1);
    triple = triple.substr(0, last);
  }
  if (triple.ends_with('-')) triple.remove_suffix(1);  // Empty environment.
  entry->kind = std::string(id.substr(0, dash));
  entry->triple = std::string(triple);
  entry->target = std::string(target);
  return Status::Ok();
}

bool LooksLikeBundle(Bytes data) { return StartsWith(data, kBundleMagic); }
bool LooksLikeCompressedBundle(Bytes data) { return StartsWith(data, kCcobMagic); }

Status ParseBundle(Bytes data, Bundle* out) {
  Bundle bundle;
  if (LooksLikeBundle(data)) {
    HIPR_RETURN_IF_ERROR(ParsePlain(data, &bundle));
  } else if (LooksLikeCompressedBundle(data)) {
    HIPR_RETURN_IF_ERROR(ParseCompressed(data, &bundle));
  } else {
    return Malformed("neither __CLANG_OFFLOAD_BUNDLE__ nor CCOB magic");
  }
  *out = std::move(bundle);
  return Status::Ok();
}

Status ImageSize(Bytes data, uint64_t* size) {
  if (LooksLikeCompressedBundle(data)) {
    uint16_t version = 0, method = 0;
    if (!LoadLe(data, 4, &version) || !LoadLe(data, 6, &method)) return Malformed("truncated CCOB header");
    uint64_t total = 0, header = 0;
    if (version == 2) {
      uint32_t t32 = 0;
      if (!LoadLe(data, 8, &t32)) return Malformed("truncated CCOB header");
      total = t32;
      header = 24;
    } else if (version == 3) {
      if (!LoadLe(data, 8, &total)) return Malformed("truncated CCOB header");
      header = 32;
    } else if (version == 1 && method == 1 && data.size() >= 20) {
      const size_t frame = ZSTD_findFrameCompressedSize(data.data() + 20, data.size() - 20);
      if (ZSTD_isError(frame)) return Malformed("bad or truncated zstd frame");
      total = 20 + frame;
      header = 20;
    } else {
      // Version 1 with zlib stores no size: only inflating finds the end.
      Bundle bundle;
      HIPR_RETURN_IF_ERROR(ParseBundle(data, &bundle));
      *size = bundle.encoded_size;
      return Status::Ok();
    }
    if (total < header || total > data.size()) return Malformed("CCOB total size does not fit the data");
    *size = total;
    return Status::Ok();
  }
  if (LooksLikeBundle(data)) {
    Bundle bundle;
    HIPR_RETURN_IF_ERROR(ParsePlain(data, &bundle));
    *size = bundle.encoded_size;
    return Status::Ok();
  }
  if (LooksLikeAmdgpuElf(data)) {
    // `data` may be only an upper bound here (hipModuleLoadData): the
    // reader also refuses implausible headers (elf_reader.h).
    internal::ElfReader elf;
    HIPR_RETURN_IF_ERROR(elf.Open(data, internal::kMaxAmdgpuElfBytes));
    *size = elf.extent();
    return Status::Ok();
  }
  return InvalidArgument("not an offload bundle, CCOB or AMDGPU code object");
}

const BundleEntry* SelectEntry(const Bundle& bundle, const TargetId& device) {
  const BundleEntry* best = nullptr;
  int best_score = -1;
  for (const BundleEntry& e : bundle.entries) {
    if (!IsAmdgcnEntry(e)) continue;
    TargetId code;
    if (!ParseTargetId(e.target, &code).ok()) continue;
    const int score = internal::MatchScore(code, device);
    if (score > best_score) {
      best = &e;
      best_score = score;
    }
  }
  return best;
}

}  // namespace hipr::co
