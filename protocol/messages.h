// The bodies of HIPR v1 frames. Each struct travels as a msgpack array of its
// fields in the order HIPR_FIELDS lists them (see codec.h); append new fields
// at the end only. HIP error numbers travel as plain int32 (`error`): the
// protocol carries them but never interprets them.
//
// Handles (streams, events) are 64-bit ids chosen by the client; stream id 0
// is the legacy null stream. `device` is the calling client thread's current
// device ordinal.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "protocol/codec.h"
#include "protocol/status.h"

namespace hipr::msg {

// ---- Session -------------------------------------------------------------

// A range of virtual addresses reserved for device memory. The client
// reserves it (PROT_NONE) so no host object can ever live there; a sim
// session maps device memory at exactly these addresses.
struct AddressWindow {
  uint64_t base = 0;
  uint64_t size = 0;
  HIPR_FIELDS(base, size)
  bool Contains(uint64_t addr, uint64_t len) const {
    return addr >= base && len <= size && addr - base <= size - len;
  }
};

struct HelloRequest {
  uint16_t min_version = 0;
  uint16_t max_version = 0;
  std::string auth_token;  // Unused, always empty: secrets never cross the wire (kAuth).
  std::string client_name;  // Program name and host, for logs.
  uint32_t client_pid = 0;
  AddressWindow window;  // Offered window, already reserved by the client.
  uint32_t chunk_bytes = 0;  // Largest kData payload the client wants.
  std::vector<std::string> features;  // What the client offers (wire.h kFeature*).
  // The client's half of the authentication (protocol/auth.h): a fresh
  // random nonce, which the worker's proof covers (optional; empty from an
  // older client).
  std::vector<uint8_t> client_nonce;
  // The client's RDMA queue pair, offering the rdma transport: the 64 bytes
  // of protocol/rdma EncodeQpInfo (optional; empty: no offer, stay on tcp).
  std::vector<uint8_t> rdma_qp;
  // The client's device selection, "NAME=VALUE" for each of
  // HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES it
  // has set (optional; worker_service/device/visible_devices.h).
  std::vector<std::string> visible_devices;
  // Resuming a session whose link dropped (wire.h kFeatureResume;
  // docs/protocol.md "Resuming sessions"; optional): the session's id and
  // its current resume secret (HelloReply::resume_secret), and how many
  // bytes of the worker's stream the client has received. A hello with
  // resume_session set starts no new session.
  uint64_t resume_session = 0;
  std::vector<uint8_t> resume_secret;
  uint64_t resume_received = 0;
  static constexpr size_t kRequiredFields = 8;
  HIPR_FIELDS(min_version, max_version, auth_token, client_name, client_pid, window, chunk_bytes,
              features, client_nonce, rdma_qp, visible_devices, resume_session, resume_secret, resume_received)
};

// kAuth: the client's answer to HelloReply::auth_challenge. `mac` is
// auth::Mac(kClient, secret, challenge, client_nonce, tenant); empty when the
// client has no credential (the worker then logs that, and refuses).
struct AuthRequest {
  std::string tenant;
  std::vector<uint8_t> mac;
  HIPR_FIELDS(tenant, mac)
};

// Properties of one worker device, field by field (never a raw C struct:
// hipDeviceProp_t's layout differs between HIP majors). Sizes in bytes,
// clocks in kHz.
// One named device property (device_properties.h).
struct NamedValue {
  std::string name;
  int64_t value = 0;
  HIPR_FIELDS(name, value)
};

struct DeviceInfo {
  std::string name;
  std::string gcn_arch_name;  // Full target id, e.g. "gfx90a:sramecc+:xnack-".
  int32_t gcn_arch = 0;       // Deprecated numeric form, e.g. 910.
  uint64_t total_global_mem = 0;
  uint64_t shared_mem_per_block = 0;
  int32_t regs_per_block = 0;
  int32_t warp_size = 0;
  int32_t max_threads_per_block = 0;
  std::array<int32_t, 3> max_threads_dim{};
  std::array<int32_t, 3> max_grid_size{};
  int32_t clock_rate_khz = 0;
  int32_t memory_clock_rate_khz = 0;
  int32_t memory_bus_width_bits = 0;
  uint64_t total_const_mem = 0;
  int32_t major = 0;
  int32_t minor = 0;
  int32_t multi_processor_count = 0;
  int32_t l2_cache_size = 0;
  int32_t max_threads_per_multiprocessor = 0;
  int32_t clock_instruction_rate_khz = 0;
  int32_t pci_domain_id = 0;
  int32_t pci_bus_id = 0;
  int32_t pci_device_id = 0;
  uint64_t max_shared_memory_per_multiprocessor = 0;
  bool is_multi_gpu_board = false;
  bool integrated = false;
  bool cooperative_launch = false;
  bool ecc_enabled = false;
  bool managed_memory = false;
  bool large_bar = false;
  int32_t asic_revision = 0;
  uint64_t mem_pitch = 0;
  uint64_t texture_alignment = 0;
  int32_t max_texture_1d = 0;
  std::array<int32_t, 2> max_texture_2d{};
  std::array<int32_t, 3> max_texture_3d{};
  // hipDeviceGetUuid's 16 bytes; empty from an older worker (optional).
  std::vector<uint8_t> uuid;
  // hipDeviceProp_t::maxTexture1DLinear: the bytes a 1-D texture over linear
  // memory may span; 0 from an older worker (optional).
  int32_t max_texture_1d_linear = 0;
  // hipMemGetAllocationGranularity: the size and alignment unit of virtual
  // memory (kVmm*); 0 from an older worker (optional).
  uint64_t vmm_granularity = 0;
  // Every other hipDeviceProp_t field and attribute answer, by name
  // (device_properties.h); empty from an older worker (optional).
  std::vector<NamedValue> properties;
  static constexpr size_t kRequiredFields = 36;
  HIPR_FIELDS(name, gcn_arch_name, gcn_arch, total_global_mem, shared_mem_per_block,
              regs_per_block, warp_size, max_threads_per_block, max_threads_dim, max_grid_size,
              clock_rate_khz, memory_clock_rate_khz, memory_bus_width_bits, total_const_mem, major,
              minor, multi_processor_count, l2_cache_size, max_threads_per_multiprocessor,
              clock_instruction_rate_khz, pci_domain_id, pci_bus_id, pci_device_id,
              max_shared_memory_per_multiprocessor, is_multi_gpu_board, integrated,
              cooperative_launch, ecc_enabled, managed_memory, large_bar, asic_revision, mem_pitch,
              texture_alignment, max_texture_1d, max_texture_2d, max_texture_3d, uuid, max_texture_1d_linear,
              vmm_granularity, properties)
};

struct HelloReply {
  StatusCode status = StatusCode::kOk;  // Not ok: `message` says why; the session ends.
  std::string message;
  uint16_t version = 0;  // Agreed protocol version.
  uint64_t session_id = 0;
  std::string device_kind;  // "sim" or "hip".
  std::vector<DeviceInfo> devices;
  AddressWindow window;  // The window in use: the offer, or a counter-offer.
  uint32_t chunk_bytes = 0;  // Agreed largest kData payload.
  uint32_t heartbeat_ms = 0;  // The worker sends kHeartbeat this often while busy.
  int32_t driver_version = 0;
  int32_t runtime_version = 0;
  std::string worker_version;
  // What the worker agreed to of HelloRequest::features (wire.h kFeature*);
  // empty from an older worker (optional).
  std::vector<std::string> features;
  // The optional capabilities the worker's device has (wire.h
  // kCapability*); absent from an older worker, whose client assumes all
  // (optional).
  std::vector<std::string> capabilities;
  // Authentication (protocol/auth.h; optional). A worker with credentials
  // answers the hello with status kUnauthenticated and a fresh nonce here;
  // the client answers with kAuth, whose reply is the real HelloReply.
  std::vector<uint8_t> auth_challenge;
  // In the reply to kAuth: auth::Mac(kWorker, ...), proof that the worker
  // holds the tenant's secret too.
  std::vector<uint8_t> auth_proof;
  // The worker's answer to HelloRequest::rdma_qp: its own queue pair
  // (EncodeQpInfo), already connected to the client's, or empty: the session
  // stays on tcp (optional). Only in the final reply (kOk).
  std::vector<uint8_t> rdma_qp;
  // Where the client offered kFeatureResume and the worker agreed: the
  // secret (32 random bytes) that resumes this session once, and how long
  // the worker keeps a session whose link dropped. A new secret comes with
  // each resume's reply, with resume_received: how many bytes of the
  // client's stream the worker has received (optional).
  std::vector<uint8_t> resume_secret;
  uint32_t resume_grace_ms = 0;
  uint64_t resume_received = 0;
  static constexpr size_t kRequiredFields = 12;
  HIPR_FIELDS(status, message, version, session_id, device_kind, devices, window, chunk_bytes,
              heartbeat_ms, driver_version, runtime_version, worker_version, features, capabilities,
              auth_challenge, auth_proof, rdma_qp, resume_secret, resume_grace_ms, resume_received)
};

// kLinkAck: on a resumable link, the bytes of the worker's stream the
// client has received (the worker drops its copies of them). With
// want_reply the worker answers, which tells the client in turn that the
// worker has every byte the client sent before it. With `leaving` the
// client's process is exiting: once the link drops, the session ends at
// once instead of waiting for a resume.
struct LinkAck {
  uint64_t received = 0;
  bool want_reply = false;
  bool leaving = false;
  HIPR_FIELDS(received, want_reply, leaving)
};

// kRdmaProbe, request and reply: the first frame each way over a queue pair
// agreed in the hello (wire.h kFeatureRdmaProbe), before either side uses
// it. The client sends a fresh nonce and the session id of the HelloReply;
// the worker answers with both unchanged. At most wire::kMaxRdmaProbeBytes.
struct RdmaProbe {
  uint64_t session_id = 0;
  std::vector<uint8_t> nonce;  // 16 bytes.
  HIPR_FIELDS(session_id, nonce)
};
inline constexpr size_t kRdmaProbeNonceBytes = 16;

// kRdmaVerdict, client -> worker over tcp, right after the probe: `commit`
// (the probe came back: from the next frame on both sides use rdma) or not
// (both stay on tcp; `reason` says why, for the worker's log).
struct RdmaVerdict {
  bool commit = false;
  std::string reason;
  HIPR_FIELDS(commit, reason)
};

// kShmSetup: the first frame on a unix-socket connection, sent by the
// session process with four descriptors attached (SCM_RIGHTS): the sealed
// memfd segment, then the doorbells of ring 0's data and space and of ring
// 1's data and space (eventfds). See protocol/shm/shm_connection.h.
struct ShmSetup {
  uint32_t layout_version = 0;
  uint64_t ring_bytes = 0;
  uint64_t header_bytes = 0;  // Rings start here; ring 1 follows ring 0.
  // Bytes of the host segment (a sixth descriptor, sealed like the first):
  // where the client places hipHostMalloc memory so that copies to and from
  // it need no bytes in the stream. 0: none.
  uint64_t host_bytes = 0;
  HIPR_FIELDS(layout_version, ring_bytes, header_bytes, host_bytes)
};

// kFatal: the worker ends the session (protocol violation, device lost, the
// session process is about to exit).
struct Fatal {
  StatusCode status = StatusCode::kInternal;
  std::string message;
  HIPR_FIELDS(status, message)
};

// ---- Calls ---------------------------------------------------------------

// The reply to every call that returns nothing but its HIP error.
struct CallReply {
  int32_t error = 0;
  HIPR_FIELDS(error)
};

// kApiCall: a generated call. The body is [fn, device, want_reply, args]:
// `fn` the function's id (FNV-1a of its name, shim_gen/gen_remoting.py),
// `device` the calling thread's current device, `args` the array of its
// inputs in declaration order (generated api_calls.h). The reply (only when
// want_reply) is [error] or, when error is 0, [0, outputs]. The worker
// decodes the head alone first, then the arguments of that function.
struct ApiCallHead {
  uint32_t fn = 0;
  int32_t device = 0;
  bool want_reply = true;
  HIPR_FIELDS(fn, device, want_reply)
};
inline constexpr size_t kApiCallFields = 4;

template <class In>
struct ApiCallRequest {
  uint32_t fn = 0;
  int32_t device = 0;
  bool want_reply = true;
  In args;
  HIPR_FIELDS(fn, device, want_reply, args)
};

template <class Out>
struct ApiCallReply {
  int32_t error = 0;
  Out out;  // Present when error is 0.
  static constexpr size_t kRequiredFields = 1;
  HIPR_FIELDS(error, out)
};

struct DeviceRequest {  // kDeviceSynchronize, kDeviceReset, kMemGetInfo, kMemLeaseReturn.
  int32_t device = 0;
  HIPR_FIELDS(device)
};

struct MemInfoReply {
  int32_t error = 0;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  HIPR_FIELDS(error, free_bytes, total_bytes)
};

// kWorkerStatus (hipr-smi): what the worker can read of its devices, and
// the live sessions of the caller's tenant (every session where the worker
// authenticates no one). Memory figures are bytes.
struct WorkerStatusRequest {
  uint32_t flags = 0;  // None defined yet: 0.
  HIPR_FIELDS(flags)
};
// DeviceStatus::known: which of the health readings the worker has.
inline constexpr uint32_t kStatusTemperature = 1u << 0;
inline constexpr uint32_t kStatusPower = 1u << 1;
inline constexpr uint32_t kStatusBusy = 1u << 2;
inline constexpr uint32_t kStatusVramUsed = 1u << 3;
struct DeviceStatus {
  int32_t device = 0;
  int32_t error = 0;  // hipError_t of the memory query; the rest is 0 when it failed.
  uint64_t memory_free = 0, memory_total = 0;  // As hipMemGetInfo answers this session.
  uint32_t known = 0;  // kStatus* bits.
  double edge_celsius = 0;
  double power_watts = 0;   // Average package power.
  double busy_percent = 0;  // Graphics engine activity.
  uint64_t vram_used = 0;   // By every process on the GPU, as the driver counts it.
  HIPR_FIELDS(device, error, memory_free, memory_total, known, edge_celsius, power_watts, busy_percent, vram_used)
};
struct SessionStatus {
  uint64_t session_id = 0;
  uint64_t memory = 0;  // Device memory it holds.
  // Of `memory`, what a lease holds for allocations not made yet
  // (MemLeaseRequest; optional: 0 from an older worker).
  uint64_t leased = 0;
  static constexpr size_t kRequiredFields = 2;
  HIPR_FIELDS(session_id, memory, leased)
};
struct WorkerStatusReply {
  int32_t error = 0;
  std::string tenant;  // The caller's, as the worker shows it; empty: no authentication.
  std::vector<DeviceStatus> devices;
  std::vector<SessionStatus> sessions;  // The caller's own among them.
  uint64_t worker_memory_used = 0;      // Every session's, against...
  uint64_t worker_memory_budget = 0;    // ...--memory-budget (0: none).
  std::string health;  // Why there are no health readings, when there are none.
  static constexpr size_t kRequiredFields = 1;  // A bare CallReply: an error.
  HIPR_FIELDS(error, tenant, devices, sessions, worker_memory_used, worker_memory_budget, health)
};

// MallocRequest::flags.
// kMallocManaged: managed memory that every device of the session can
// dereference (hipMallocManaged on the `hip` device; the sim's memory is
// shared by its devices anyway). Used for `__managed__` variables' device
// copies.
inline constexpr uint32_t kMallocManaged = 1u << 0;
inline constexpr uint32_t kMallocKnownFlags = kMallocManaged;

struct MallocRequest {
  int32_t device = 0;
  uint64_t size = 0;
  uint32_t flags = 0;  // kMalloc* bits.
  HIPR_FIELDS(device, size, flags)
};

struct MallocReply {
  int32_t error = 0;
  uint64_t address = 0;
  HIPR_FIELDS(error, address)
};

struct FreeRequest {  // Fire-and-forget.
  uint64_t address = 0;
  HIPR_FIELDS(address)
};

// kMemLease: device memory taken for the session ahead of use (capability
// memory-lease), so that a later hipMalloc inside it needs no round trip.
// The worker grants as much of `want` bytes as fits in the device's memory
// and the session's limits, at least `need` (else out of memory and nothing
// taken): one range [base, base + size) of `device`, charged as allocated
// but reachable by no copy or kernel. A new lease of a device replaces its
// previous one, whose unplaced bytes go back first. kMemLeasePlace makes
// [address, address + size) of the lease an allocation, as hipMalloc's
// (sizes round up to `granularity`); kMemLeaseReturn (a DeviceRequest)
// gives back whatever of the device's lease is unplaced.
struct MemLeaseRequest {
  int32_t device = 0;
  uint64_t need = 0;
  uint64_t want = 0;
  HIPR_FIELDS(device, need, want)
};

struct MemLeaseReply {
  int32_t error = 0;
  uint64_t base = 0;
  uint64_t size = 0;
  uint64_t granularity = 0;
  HIPR_FIELDS(error, base, size, granularity)
};

struct MemLeasePlaceRequest {  // Fire-and-forget.
  int32_t device = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  HIPR_FIELDS(device, address, size)
};

// kHostRegister / kHostUnregister (shm only): a page-aligned range of the
// connection's shared host segment where the client placed (or is about to
// free) pinned memory. Copies may name segment rows (SharedHost) only inside
// one registered range; the session process pins the range for DMA on a real
// GPU. Ranges never overlap; an unregister names exactly a registered range.
struct HostRangeRequest {
  uint64_t offset = 0;
  uint64_t bytes = 0;
  HIPR_FIELDS(offset, bytes)
};

// IPC memory handles (hipIpc*MemHandle) between sessions of one worker. The
// handle is the device's: opaque to the client, which passes its 64 bytes
// on to another process (kIpcMemHandleBytes).
inline constexpr size_t kIpcMemHandleBytes = 64;

struct IpcGetMemHandleRequest {
  uint64_t address = 0;  // Anywhere inside a device allocation of this session.
  HIPR_FIELDS(address)
};

struct IpcGetMemHandleReply {
  int32_t error = 0;
  std::vector<uint8_t> handle;  // kIpcMemHandleBytes when error == 0.
  HIPR_FIELDS(error, handle)
};

struct IpcOpenMemHandleRequest {
  int32_t device = 0;  // Where the importer maps it: its current device.
  std::vector<uint8_t> handle;
  uint32_t flags = 0;  // hipIpcMemLazyEnablePeerAccess or 0.
  HIPR_FIELDS(device, handle, flags)
};

struct IpcOpenMemHandleReply {
  int32_t error = 0;
  uint64_t address = 0;  // The handle's pointer, mapped here.
  uint64_t base = 0;     // The mapping that holds it (the exported allocation).
  uint64_t size = 0;
  HIPR_FIELDS(error, address, base, size)
};

struct IpcCloseMemHandleRequest {
  uint64_t base = 0;  // IpcOpenMemHandleReply::base.
  HIPR_FIELDS(base)
};

// Virtual memory management. The worker chooses reservations (in its
// address window when it can, so the client needs no pages of its own for
// them); physical memory is named by a client-chosen id, like streams. A
// mapping puts physical memory (from offset 0) at `address` inside one
// reservation, with no access until kVmmSetAccess grants it. kVmmUnmap and
// kVmmSetAccess name whole mappings (one or several adjacent ones). Every
// kVmm* reply is CallReply except kVmmReserve's, kVmmExport's and kVmmImport's.
struct VmmReserveRequest {
  uint64_t size = 0;       // A multiple of DeviceInfo::vmm_granularity.
  uint64_t alignment = 0;  // 0 or a power of two.
  uint64_t hint = 0;       // A wished-for base; 0 for none.
  HIPR_FIELDS(size, alignment, hint)
};

struct VmmReserveReply {
  int32_t error = 0;
  uint64_t address = 0;
  HIPR_FIELDS(error, address)
};

struct VmmRangeRequest {  // kVmmFree (a whole reservation), kVmmUnmap.
  uint64_t address = 0;
  uint64_t size = 0;
  HIPR_FIELDS(address, size)
};

struct VmmCreateRequest {
  int32_t device = 0;
  uint64_t handle = 0;  // Client-chosen, unique in the session.
  uint64_t size = 0;    // A multiple of DeviceInfo::vmm_granularity.
  HIPR_FIELDS(device, handle, size)
};

struct VmmHandleRequest {  // kVmmRelease, kVmmExport.
  uint64_t handle = 0;
  HIPR_FIELDS(handle)
};

// kVmmExport's reply is IpcGetMemHandleReply: kIpcMemHandleBytes opaque
// bytes, the device's, that kVmmImport in a session of the same worker
// turns into physical memory `handle` (a fresh client id) on `device`.
struct VmmImportRequest {
  int32_t device = 0;
  uint64_t handle = 0;
  std::vector<uint8_t> token;
  HIPR_FIELDS(device, handle, token)
};

struct VmmImportReply {
  int32_t error = 0;
  uint64_t size = 0;  // Of the physical memory.
  HIPR_FIELDS(error, size)
};

struct VmmMapRequest {
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t offset = 0;  // Into the physical memory; 0, as HIP requires.
  uint64_t handle = 0;
  HIPR_FIELDS(address, size, offset, handle)
};

struct VmmAccess {
  int32_t device = 0;
  uint32_t flags = 0;  // hipMemAccessFlags: 0 none, 1 read, 3 read and write.
  HIPR_FIELDS(device, flags)
};

struct VmmSetAccessRequest {
  uint64_t address = 0;
  uint64_t size = 0;
  std::vector<VmmAccess> access;  // One entry per device named, at least one.
  HIPR_FIELDS(address, size, access)
};

// IPC event handles (hipIpc*EventHandle), also 64 opaque bytes
// (kIpcEventHandleBytes). kIpcGetEventHandle's body is EventRequest (an
// event created with hipEventInterprocess), its reply IpcGetMemHandleReply.
// kIpcOpenEventHandle names the exported event `event` (a fresh client id,
// then used with the event ops as any other; destroyed with kEventDestroy)
// on `device`; its reply is CallReply.
inline constexpr size_t kIpcEventHandleBytes = 64;

struct IpcOpenEventHandleRequest {
  int32_t device = 0;
  uint64_t event = 0;
  std::vector<uint8_t> handle;
  HIPR_FIELDS(device, event, handle)
};

// A rectangular device region: `height` rows of `width` bytes, `pitch` apart.
struct Region {
  uint64_t address = 0;
  uint64_t pitch = 0;
  uint64_t width = 0;
  uint64_t height = 1;
  HIPR_FIELDS(address, pitch, width, height)
  uint64_t bytes() const { return width * height; }
};

// kTextureCreate: a texture object (hipCreateTextureObject) over device
// memory of this session: 1-D linear memory (one row, kTextureLinear) or
// pitched 2-D memory (kTexturePitch2D). The client turns a 1-D or 2-D HIP
// array into one of these (hipr keeps arrays as pitched memory). Fields
// are hipTextureDesc's, enums as their HIP numbers. The reply's handle is
// the hipTextureObject_t kernels receive (on a GPU, the address of the
// texture's descriptors); kTextureDestroy (TextureDestroyRequest) frees it.
enum TextureShape : uint32_t { kTextureLinear = 1, kTexturePitch2D = 2 };

struct TextureCreateRequest {
  int32_t device = 0;
  uint32_t shape = kTextureLinear;
  Region memory;  // width: bytes of a row (elements * element size).
  std::array<int32_t, 4> channel_bits{};  // hipChannelFormatDesc x, y, z, w.
  int32_t channel_kind = 0;               // hipChannelFormatKind.
  std::array<int32_t, 3> address_mode{};
  int32_t filter_mode = 0;
  int32_t read_mode = 0;
  int32_t srgb = 0;
  std::array<float, 4> border_color{};
  int32_t normalized_coords = 0;
  uint32_t max_anisotropy = 0;
  int32_t mipmap_filter_mode = 0;
  float mipmap_level_bias = 0;
  float min_mipmap_level_clamp = 0;
  float max_mipmap_level_clamp = 0;
  HIPR_FIELDS(device, shape, memory, channel_bits, channel_kind, address_mode, filter_mode, read_mode, srgb,
              border_color, normalized_coords, max_anisotropy, mipmap_filter_mode, mipmap_level_bias,
              min_mipmap_level_clamp, max_mipmap_level_clamp)
};

struct TextureCreateReply {
  int32_t error = 0;
  uint64_t handle = 0;
  HIPR_FIELDS(error, handle)
};

struct TextureDestroyRequest {  // Fire-and-forget.
  uint64_t handle = 0;
  HIPR_FIELDS(handle)
};

struct MemsetRequest {  // Fire-and-forget.
  int32_t device = 0;
  uint64_t stream = 0;
  Region dst;
  uint32_t value = 0;
  uint8_t element_size = 1;  // 1, 2 or 4; width is a multiple of it.
  HIPR_FIELDS(device, stream, dst, value, element_size)
};

// kCopyToDevice: followed by dst.bytes() of bulk in kData frames.
// Host rows in the connection's shared host segment (shm): `offset` into
// it, `pitch` apart, each as wide as the copy's device region.
struct SharedHost {
  bool used = false;  // False: the bytes travel as bulk.
  uint64_t offset = 0;
  uint64_t pitch = 0;
  HIPR_FIELDS(used, offset, pitch)
};

struct CopyToDeviceRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  Region dst;
  bool want_reply = false;  // Blocking copies wait for completion and errors.
  SharedHost host;          // Used: no bulk follows; the worker reads the segment in stream order.
  static constexpr size_t kRequiredFields = 4;  // `host` came later.
  HIPR_FIELDS(device, stream, dst, want_reply, host)
};

// kCopyFromDevice: always replied; the reply is followed by src.bytes() of
// bulk in kData frames when error == 0.
struct CopyFromDeviceRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  Region src;
  SharedHost host;  // Used: the worker writes the segment, then replies with no bulk.
  static constexpr size_t kRequiredFields = 3;  // `host` came later.
  HIPR_FIELDS(device, stream, src, host)
};

// kCopyChangedFromDevice: managed memory's read-back. Like
// kCopyFromDevice of a 1-D region, but only the parts that were written
// since this session last asked about them (or since the allocation), as
// far as the device can tell; a device that cannot tell sends all of it.
struct CopyChangedRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  Region src;  // 1-D: height 1.
  HIPR_FIELDS(device, stream, src)
};
struct CopyChangedReply {
  int32_t error = 0;
  // [offset, length] pairs relative to src.address: ascending, disjoint,
  // non-empty, inside src. When error is 0 their bytes follow as bulk,
  // concatenated in that order.
  std::vector<uint64_t> runs;
  static constexpr size_t kRequiredFields = 1;  // A bare CallReply: an error.
  HIPR_FIELDS(error, runs)
};

struct CopyOnDeviceRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  Region dst;
  Region src;
  bool want_reply = false;
  HIPR_FIELDS(device, stream, dst, src, want_reply)
};

// Peer copies (capability `peer-copy`; worker_service/session/ and
// protocol/peer_link.h): bytes between two workers of one client, straight.
// kPeerListen: the destination opens a one-shot port for `device`.
struct PeerListenRequest {
  int32_t device = 0;
  HIPR_FIELDS(device)
};
struct PeerListenReply {
  int32_t error = 0;
  uint32_t port = 0;
  std::vector<uint8_t> token;  // protocol/peer_link.h kPeerTokenBytes.
  HIPR_FIELDS(error, port, token)
};
// kPeerAccept (fire-and-forget): the destination takes the bytes that come
// to the port `token` names into `dst`, on `stream`; its error is
// deferred. The session reads nothing else meanwhile.
struct PeerAcceptRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  Region dst;
  std::vector<uint8_t> token;
  HIPR_FIELDS(device, stream, dst, token)
};
// kPeerSend: the source sends `src` (when `stream` gets there) to
// `address` ("host:port" of the destination's port); the reply comes once
// the destination has the bytes in place, with its error if it had one.
struct PeerSendRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  Region src;
  std::string address;
  std::vector<uint8_t> token;
  HIPR_FIELDS(device, stream, src, address, token)
};

struct StreamCreateRequest {  // Fire-and-forget.
  int32_t device = 0;
  uint64_t stream = 0;
  uint32_t flags = 0;
  int32_t priority = 0;
  // hipExtStreamCreateWithCUMask's mask, 32 compute units a word; empty:
  // none (optional, absent from older clients).
  std::vector<uint32_t> cu_mask;
  static constexpr size_t kRequiredFields = 4;
  HIPR_FIELDS(device, stream, flags, priority, cu_mask)
};

struct StreamRequest {  // kStreamDestroy, kStreamSynchronize, kStreamQuery.
  uint64_t stream = 0;
  // Whose null stream stream 0 is: the client's current device. -1 (absent
  // from older clients): the worker's choice, every device's on the sim.
  int32_t device = -1;
  static constexpr size_t kRequiredFields = 1;
  HIPR_FIELDS(stream, device)
};

struct StreamWaitEventRequest {  // Fire-and-forget.
  uint64_t stream = 0;
  uint64_t event = 0;
  uint32_t flags = 0;
  // Whose null stream stream 0 is, as StreamRequest's (-1 from older
  // clients: the event's device on the sim, the last used on the hip device).
  int32_t device = -1;
  static constexpr size_t kRequiredFields = 3;
  HIPR_FIELDS(stream, event, flags, device)
};

// hipStreamWaitValue32/64: work queued on the stream after this waits until
// the `bytes`-wide (4 or 8) value at `address` (device memory, aligned)
// satisfies `flags` (hipStreamWaitValueGte/Eq/And/Nor) against `value`
// under `mask`.
struct StreamWaitValueRequest {  // Fire-and-forget.
  int32_t device = 0;
  uint64_t stream = 0;
  uint64_t address = 0;
  uint64_t value = 0;
  uint64_t mask = 0;
  uint32_t flags = 0;
  uint8_t bytes = 4;
  HIPR_FIELDS(device, stream, address, value, mask, flags, bytes)
};

// kStreamWriteValue: in stream order, `bytes` (4 or 8, aligned) of `value`
// land at `address` in one store, as a GPU's stream write does.
struct StreamWriteValueRequest {  // Fire-and-forget.
  int32_t device = 0;
  uint64_t stream = 0;
  uint64_t address = 0;
  uint64_t value = 0;
  uint8_t bytes = 4;
  HIPR_FIELDS(device, stream, address, value, bytes)
};

struct EventCreateRequest {  // Fire-and-forget.
  int32_t device = 0;
  uint64_t event = 0;
  uint32_t flags = 0;
  HIPR_FIELDS(device, event, flags)
};

struct EventRequest {  // kEventDestroy, kEventSynchronize, kEventQuery.
  uint64_t event = 0;
  HIPR_FIELDS(event)
};

struct EventRecordRequest {  // Fire-and-forget.
  uint64_t event = 0;
  uint64_t stream = 0;
  HIPR_FIELDS(event, stream)
};

struct EventElapsedRequest {
  uint64_t start = 0;
  uint64_t stop = 0;
  HIPR_FIELDS(start, stop)
};

struct EventElapsedReply {
  int32_t error = 0;
  float milliseconds = 0;
  HIPR_FIELDS(error, milliseconds)
};

// ---- Modules and kernels ---------------------------------------------------

// Code objects are named by the SHA-256 of their bytes (the ELF of one ISA,
// not the bundle). Loading is lazy: the client sends this at the first use
// of a module. First without the bytes (code_bytes = 0); the worker loads
// the module from its code-object cache, or replies need_code, and the
// client sends the request again followed by the bytes as bulk.
enum class Compression : uint32_t { kNone = 0, kLz4Block = 1 };

struct ModuleLoadRequest {
  int32_t device = 0;
  uint64_t module = 0;          // Client-chosen id, unique in the session.
  std::vector<uint8_t> sha256;  // 32 bytes.
  uint64_t code_bytes = 0;      // Size of the code object; 0: no bulk follows.
  Compression compression = Compression::kNone;
  uint64_t bulk_bytes = 0;      // Bytes of bulk that follow (compressed size).
  std::string name;             // Where the module came from, for logs.
  HIPR_FIELDS(device, module, sha256, code_bytes, compression, bulk_bytes, name)
};

// A __device__/__constant__ variable of a loaded module, at its device address.
struct ModuleGlobal {
  std::string name;
  uint64_t address = 0;
  uint64_t size = 0;
  HIPR_FIELDS(name, address, size)
};

struct ModuleLoadReply {
  int32_t error = 0;
  bool need_code = false;  // The worker lacks the code object: send it.
  std::string message;     // Why the load failed, or what the device cannot run.
  std::vector<ModuleGlobal> globals;
  // Kernels of the module this device cannot launch (a sim without a twin);
  // the client fails their launches itself and logs `message`.
  std::vector<std::string> unavailable_kernels;
  // No kernel of the module can run (then unavailable_kernels is empty: a
  // library module may have more kernels than one reply may list).
  bool all_kernels_unavailable = false;
  HIPR_FIELDS(error, need_code, message, globals, unavailable_kernels, all_kernels_unavailable)
};

struct ModuleUnloadRequest {  // Fire-and-forget.
  uint64_t module = 0;
  HIPR_FIELDS(module)
};

enum LaunchFlags : uint32_t { kLaunchCooperative = 1u << 0 };

// Launches one kernel (fire-and-forget). `kernarg` holds exactly the
// explicit argument bytes at the offsets of the code object's metadata; the
// device's runtime adds the hidden ones. A function id is named by the
// client: the first launch of an id carries the kernel's name, later ones
// may leave it empty.
struct LaunchRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  uint64_t module = 0;
  uint64_t function = 0;
  std::string kernel;  // Mangled name; required on the first launch of `function`.
  std::array<uint32_t, 3> grid{};   // In blocks.
  std::array<uint32_t, 3> block{};  // Threads per block.
  uint32_t shared_bytes = 0;        // Dynamic shared memory.
  uint32_t flags = 0;               // LaunchFlags.
  std::vector<uint8_t> kernarg;
  uint64_t start_event = 0;  // hipExtModuleLaunchKernel's events; 0: none.
  uint64_t stop_event = 0;
  // Work-items per dimension when the last block is partial
  // (hipExtModuleLaunchKernel): each within ((grid-1)*block, grid*block].
  // All zero (or absent, from an older client): grid * block.
  std::array<uint32_t, 3> global{};
  static constexpr size_t kRequiredFields = 12;
  HIPR_FIELDS(device, stream, module, function, kernel, grid, block, shared_bytes, flags, kernarg,
              start_event, stop_event, global)
};

// kStreamHostCallback: when `stream` reaches this point the worker sends
// HostCallbackReady{callback} and holds the stream until the client answers
// HostCallbackDone{callback} (it has run the function). Ids are the
// client's, unique in its session.
struct StreamHostCallbackRequest {
  int32_t device = 0;
  uint64_t stream = 0;
  uint64_t callback = 0;
  HIPR_FIELDS(device, stream, callback)
};

// kHostCallbackReady (worker -> client): `error` is the stream's status
// when it got there (0, or the error of earlier work on it).
struct HostCallbackReady {
  uint64_t callback = 0;
  int32_t error = 0;
  HIPR_FIELDS(callback, error)
};

// kHostCallbackDone (client -> worker).
struct HostCallbackDone {
  uint64_t callback = 0;
  HIPR_FIELDS(callback)
};

// Executable graphs (hipGraphInstantiate on the client; see
// docs/architecture.md "Graphs"). A node is the body of the stream
// operation it replays, encoded as that op's own request: kLaunchKernel
// (LaunchRequest; `kernel` always given), kMemset (MemsetRequest),
// kCopyOnDevice (CopyOnDeviceRequest, want_reply false), kEventRecord
// (EventRecordRequest), kStreamWaitEvent (StreamWaitEventRequest, flags 0),
// kStreamWaitValue (StreamWaitValueRequest), kStreamWriteValue
// (StreamWriteValueRequest) or kStreamHostCallback (empty body: a host
// node, run on the client). Each
// node's device and stream are ignored: a launch replays every node on the
// launch's device and stream, in the order given.
// `deps`: the nodes (indices in the graph, over all its frames, each
// before this one) that must finish before this one starts; read only when
// the graph's frames say `has_deps` (optional, appended: an older client's
// graph runs its nodes one after another).
struct GraphNode {
  uint16_t op = 0;
  std::vector<uint8_t> body;
  std::vector<uint32_t> deps;
  static constexpr size_t kRequiredFields = 2;
  HIPR_FIELDS(op, body, deps)
};

// kGraphCreate: `graph` is a client-chosen id, unique in its session. A
// graph too large for one body comes in several frames: the first creates
// it, each later one has `append` set and adds its nodes at the end. With
// `has_deps` (every frame of the graph the same) the nodes' `deps` are its
// edges, and a launch may run independent branches concurrently; without,
// node i follows node i - 1.
struct GraphCreateRequest {
  uint64_t graph = 0;
  int32_t device = 0;
  std::vector<GraphNode> nodes;
  bool append = false;
  bool has_deps = false;
  static constexpr size_t kRequiredFields = 4;
  HIPR_FIELDS(graph, device, nodes, append, has_deps)
};

// kGraphLaunch: `callbacks` are fresh host callback ids (as in
// StreamHostCallbackRequest), one per host node, in node order.
struct GraphLaunchRequest {
  uint64_t graph = 0;
  int32_t device = 0;
  uint64_t stream = 0;
  std::vector<uint64_t> callbacks;
  HIPR_FIELDS(graph, device, stream, callbacks)
};

// kGraphDestroy.
struct GraphRequest {
  uint64_t graph = 0;
  HIPR_FIELDS(graph)
};

// kOutput: text that device code wrote (printf). Sent before the reply of
// the synchronizing call that made it visible; the client writes it to its
// stdout.
struct Output {
  std::string text;
  HIPR_FIELDS(text)
};

}  // namespace hipr::msg
