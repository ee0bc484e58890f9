// Code-object toolkit: clang offload bundles (plain and CCOB-compressed),
// AMDGPU target ids, AMDGPU ELF code objects and their NT_AMDGPU_METADATA
// note. Shared by the client stub (kernarg layout, which entry to ship), the
// worker (what it was sent) and hipr-inspect.
//
// Everything here parses untrusted bytes: every offset and size is checked
// against the buffer; malformed input returns a Status, never crashes, and
// never allocates more than a bounded multiple of the input (decompression
// is capped by kMaxCodeObjectBytes).
//
// Thread-safety: all functions are pure; the structs are plain values.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"

namespace hipr::co {

using Bytes = std::span<const uint8_t>;

// No bundle, entry or decompressed payload may exceed this.
inline constexpr uint64_t kMaxCodeObjectBytes = uint64_t{4} << 30;

// ---- Target ids ------------------------------------------------------------

enum class Feature : uint8_t { kAny, kOn, kOff };  // absent, "+", "-"

// "gfx90a:sramecc+:xnack-" -> {processor "gfx90a", sramecc kOn, xnack kOff}.
struct TargetId {
  std::string processor;
  Feature sramecc = Feature::kAny;
  Feature xnack = Feature::kAny;
};
Status ParseTargetId(std::string_view text, TargetId* out);
// True if code built for `code` runs on a device whose (fully specified or
// partial) target id is `device`: the same processor or, for a generic code
// object (v6), the device's generic processor; and every feature the code
// pins (+/-) is not pinned the other way by the device.
bool IsCompatible(const TargetId& code, const TargetId& device);
// The generic processor whose code runs on `processor` ("gfx942" ->
// "gfx9-4-generic"), or empty when it has none.
std::string_view GenericProcessorOf(std::string_view processor);

// ---- Offload bundles -------------------------------------------------------

struct BundleEntry {
  std::string id;       // "hipv4-amdgcn-amd-amdhsa--gfx90a:xnack-"
  std::string kind;     // "hipv4", "hip", "host", "openmp"...
  std::string triple;   // "amdgcn-amd-amdhsa", "x86_64-unknown-linux"
  std::string target;   // "gfx90a:xnack-" (empty for host entries)
  uint64_t offset = 0;  // From the start of the (decompressed) bundle.
  uint64_t size = 0;
  Bytes bytes;          // View into the input or into Bundle::storage.
};

struct Bundle {
  bool compressed = false;   // Came as CCOB.
  uint16_t ccob_version = 0;
  uint16_t ccob_method = 0;  // 0 zlib, 1 zstd.
  uint64_t encoded_size = 0;  // Bytes of the input the bundle occupies.
  std::vector<BundleEntry> entries;
  std::vector<uint8_t> storage;  // Decompressed bytes when compressed.
  // Bundle is movable: entries' `bytes` point into `storage`'s heap buffer,
  // which a move keeps in place. Do not copy.
  Bundle() = default;
  Bundle(Bundle&&) = default;
  Bundle& operator=(Bundle&&) = default;
  Bundle(const Bundle&) = delete;
  Bundle& operator=(const Bundle&) = delete;
};

// Splits an entry id "<kind>-<triple>-<target id>" into entry->kind,
// ->triple and ->target. The triple is the next four dash-separated parts
// (the fourth, the environment, is usually empty and is then dropped:
// "amdgcn-amd-amdhsa"); the rest, which may itself contain '-', is the
// target id. Ids with a three-part triple ("host-x86_64-unknown-linux") have
// an empty target.
Status SplitEntryId(std::string_view id, BundleEntry* entry);

bool LooksLikeBundle(Bytes data);            // "__CLANG_OFFLOAD_BUNDLE__"
bool LooksLikeCompressedBundle(Bytes data);  // "CCOB"
// Parses a plain or compressed bundle at the start of `data`. `data` may
// extend past the bundle (hipModuleLoadData passes no size): encoded_size
// says where it ends (plain: the end of the furthest entry; CCOB: its total
// size, for version 1 the end of the compressed stream). Rejects entries
// outside the data, non-empty entries overlapping the entry table or each
// other, ids that SplitEntryId rejects, and CCOBs whose MD5 does not match.
// Output only on success.
Status ParseBundle(Bytes data, Bundle* out);
// The entry of an amdgcn kind ("hip"/"hipv4") whose target is compatible
// with `device` (preferring an exact processor+feature match), or nullptr.
const BundleEntry* SelectEntry(const Bundle& bundle, const TargetId& device);

// ---- AMDGPU code objects -----------------------------------------------------

struct KernelArg {
  std::string name;        // ".name" if present.
  std::string type_name;   // ".type_name" if present.
  std::string value_kind;  // "by_value", "global_buffer", "hidden_global_offset_x", ...
  uint32_t offset = 0;
  uint32_t size = 0;
  std::string address_space;  // ".address_space" if present.
  bool hidden() const { return value_kind.starts_with("hidden_"); }
};

struct KernelInfo {
  std::string name;    // ".name": the (mangled) kernel name.
  std::string symbol;  // ".symbol": name + ".kd".
  uint32_t kernarg_segment_size = 0;
  uint32_t kernarg_segment_align = 0;
  uint32_t group_segment_fixed_size = 0;
  uint32_t private_segment_fixed_size = 0;
  uint32_t max_flat_workgroup_size = 0;
  uint32_t wavefront_size = 0;
  uint32_t sgpr_count = 0;
  uint32_t vgpr_count = 0;
  std::vector<KernelArg> args;  // In metadata order: explicit first, then hidden.
  // Bytes the explicit arguments occupy: end of the last explicit arg.
  uint32_t explicit_kernarg_size() const;
  size_t explicit_arg_count() const;
};

// A defined STT_OBJECT symbol of the code object (a __device__/__constant__
// variable), from .symtab and .dynsym, deduplicated by name. Kernel
// descriptors (a kernel's ".symbol", "<name>.kd") are not listed.
struct GlobalVariable {
  std::string name;
  uint64_t size = 0;
};

struct CodeObjectInfo {
  uint32_t version_major = 0;  // amdhsa.version: [1,1] code object v4, [1,2] v5 and v6.
  uint32_t version_minor = 0;
  // e_ident[EI_ABIVERSION] under ELFOSABI_AMDGPU_HSA: 2 is v4, 3 v5, 4 v6
  // (what tells v6 from v5); 0 when the ELF says nothing.
  uint8_t abi_version = 0;
  std::string target;          // amdhsa.target, "amdgcn-amd-amdhsa--gfx90a"
  uint64_t elf_size = 0;       // Computed from the ELF headers.
  std::vector<KernelInfo> kernels;
  std::vector<GlobalVariable> variables;
  // "v4", "v5", "v6": from abi_version (N-2), else from amdhsa.version
  // ([1, N-3]); "?" when neither says.
  std::string version_name() const;
  // By ".name" or by ".symbol"; nullptr if absent.
  const KernelInfo* FindKernel(std::string_view name) const;
  const GlobalVariable* FindVariable(std::string_view name) const;
};

bool LooksLikeAmdgpuElf(Bytes data);  // ELF64, EM_AMDGPU.
// Parses the ELF headers, the NT_AMDGPU_METADATA note (owner "AMDGPU",
// type 32; from SHT_NOTE sections, else PT_NOTE segments) and the symbol
// tables. `data` may extend past the ELF. Requires amdhsa.version [1, x];
// each kernel needs .name, .symbol and .kernarg_segment_size, each arg
// .offset, .size and .value_kind, and every arg must lie inside
// .kernarg_segment_size. Output only on success.
Status ParseCodeObject(Bytes data, CodeObjectInfo* out);
// Size of a bundle (plain or CCOB: its encoded size) or an ELF code object
// at the start of `data`, from headers alone.
Status ImageSize(Bytes data, uint64_t* size);

// ---- Host shared objects ---------------------------------------------------

// What a host shared library says about itself: its DT_SONAME and the names
// of the symbol versions it defines (.gnu.version_d, without the base entry
// that repeats the file's name). The client stub reads a HIP runtime file
// from disk with this to learn its major ("libamdhip64.so.6", "hip_6.0")
// without ever loading it.
struct SharedObjectIdentity {
  std::string soname;                             // Empty when the file has none.
  std::vector<std::string> version_definitions;  // In file order.
};
// Reads the section headers' SHT_DYNAMIC and SHT_GNU_verdef sections and
// their string tables. A file without a dynamic section is malformed; one
// without version definitions gives an empty list. Output only on success.
Status ReadSharedObjectIdentity(Bytes data, SharedObjectIdentity* out);

// A .dynsym entry with its symbol version (.gnu.version with
// .gnu.version_d or .gnu.version_r).
struct DynamicSymbol {
  std::string name;
  bool defined = false;      // st_shndx is not SHN_UNDEF.
  bool weak = false;         // STB_WEAK.
  std::string version;       // "hip_6.0"; empty when unversioned.
  std::string version_file;  // Undefined and versioned: the file it is required from ("libamdhip64.so.6").
};
// What a host ELF file (executable or shared object) needs and offers at
// run time: DT_SONAME, DT_NEEDED in order, and every named dynamic symbol.
struct DynamicInfo {
  std::string soname;
  std::vector<std::string> needed;
  std::vector<DynamicSymbol> symbols;
};
// Reads them from the section headers (SHT_DYNAMIC, SHT_DYNSYM and the GNU
// version sections). A file without a dynamic section is malformed; an
// index into a missing or short version table is malformed too. Output only
// on success.
Status ReadDynamicInfo(Bytes data, DynamicInfo* out);

// ---- Hashes ----------------------------------------------------------------

using Sha256Digest = std::array<uint8_t, 32>;
Sha256Digest Sha256(Bytes data);
std::string ToHex(const Sha256Digest& digest);
bool FromHex(std::string_view hex, Sha256Digest* out);

}  // namespace hipr::co
