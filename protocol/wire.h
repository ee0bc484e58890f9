// HIPR wire format v1: the frame header, op codes and hard limits.
//
// Every frame starts with a 16-byte little-endian header. The payload of a
// request or reply is one msgpack body (an array of fields, see messages.h).
// Bulk bytes (copy data, code objects) never go through msgpack: they follow
// their request or reply as a run of kData frames carrying the same
// request_id, each at most the negotiated chunk size, so either side can move
// them straight between the socket and their final place. docs/protocol.md
// describes the format in prose; this header is the single source of truth
// for both encoder and decoder.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hipr::wire {

inline constexpr uint32_t kMagic = 0x48495052;  // "HIPR" as a big-endian read; on the wire: R P I H.
inline constexpr uint16_t kProtocolVersion = 1;
inline constexpr uint16_t kMinProtocolVersion = 1;

struct FrameHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t op;  // Op, with kReplyBit set on replies.
  uint32_t request_id;
  uint32_t payload_length;
};
static_assert(sizeof(FrameHeader) == 16, "the HIPR header is 16 bytes");
static_assert(alignof(FrameHeader) == 4);

inline constexpr uint16_t kReplyBit = 0x8000;

// Op codes, grouped by family in the high byte.
enum class Op : uint16_t {
  // Device 0x00xx.
  kDeviceSynchronize = 0x0001,
  kDeviceReset = 0x0002,
  kMemGetInfo = 0x0003,
  // Memory 0x01xx.
  kMalloc = 0x0101,
  kFree = 0x0102,
  kMemset = 0x0103,
  kHostRegister = 0x0104,    // A range of the shm host segment now holds pinned memory.
  kHostUnregister = 0x0105,  // ...and no longer does.
  kIpcGetMemHandle = 0x0106,    // A handle another session of this worker can open.
  kIpcOpenMemHandle = 0x0107,   // Maps another session's exported allocation.
  kIpcCloseMemHandle = 0x0108,  // Unmaps it.
  kTextureCreate = 0x0109,      // A texture object over device memory; replied with its handle.
  kTextureDestroy = 0x010A,     // Fire-and-forget.
  // Virtual memory management (hipMemAddressReserve, hipMemCreate, hipMemMap...).
  kVmmReserve = 0x010B,     // An address range the worker chooses; replied with its base.
  kVmmFree = 0x010C,        // Gives a reserved range back (nothing mapped in it).
  kVmmCreate = 0x010D,      // Physical memory, named by the client.
  kVmmRelease = 0x010E,     // Lets go of it; its pages live on while mapped.
  kVmmMap = 0x010F,         // Maps physical memory into a reserved range.
  kVmmUnmap = 0x0110,       // Unmaps whole mappings once their queued work has run.
  kVmmSetAccess = 0x0111,   // Which devices may read or write whole mappings.
  kVmmExport = 0x0112,      // A handle to physical memory another session of this worker can import.
  kVmmImport = 0x0113,      // Names another session's exported physical memory with a new id.
  // Copies 0x02xx. Every copy names a rectangular device region
  // (address, pitch, width, height); 1-D copies have height 1.
  kCopyToDevice = 0x0201,    // Bulk: width*height bytes, packed.
  kCopyFromDevice = 0x0202,  // Reply bulk: width*height bytes, packed.
  kCopyOnDevice = 0x0203,
  // Modules and kernels 0x03xx. Modules and functions are named by the
  // client (ids it chooses), like streams and events.
  kModuleLoad = 0x0301,    // Bulk (when code_bytes > 0): the code object, maybe lz4.
  kModuleUnload = 0x0302,  // Fire-and-forget.
  kLaunchKernel = 0x0311,  // Fire-and-forget.
  // Streams and events 0x04xx. Handles are ids chosen by the client.
  kStreamCreate = 0x0401,
  kStreamDestroy = 0x0402,
  kStreamSynchronize = 0x0403,
  kStreamQuery = 0x0404,
  kStreamWaitEvent = 0x0405,
  kStreamHostCallback = 0x0406,  // Fire-and-forget: a host callback in stream order.
  kHostCallbackDone = 0x0407,    // Fire-and-forget: the client ran it; the stream goes on.
  kStreamWaitValue = 0x0408,     // Fire-and-forget: the stream waits for a value in device memory.
  kStreamWriteValue = 0x0409,    // Fire-and-forget: the stream writes a value to device memory.
  kEventCreate = 0x0411,
  kEventDestroy = 0x0412,
  kEventRecord = 0x0413,
  kEventSynchronize = 0x0414,
  kEventQuery = 0x0415,
  kEventElapsedTime = 0x0416,
  kIpcGetEventHandle = 0x0417,   // A handle another session of this worker can open.
  kIpcOpenEventHandle = 0x0418,  // Names another session's exported event with a new id.
  // Graphs 0x042x: executable graphs named by the client (see messages.h).
  kGraphCreate = 0x0421,   // Fire-and-forget: the nodes, in an order their edges allow.
  kGraphLaunch = 0x0422,   // Fire-and-forget: every node, in stream order.
  kGraphDestroy = 0x0423,  // Fire-and-forget.
  // Generated calls 0x05xx: HIP functions whose remoting shim_gen writes
  // (shim_gen/annotations.txt). One op for all of them; the body names the
  // function by a 32-bit id (messages.h ApiCallHead).
  kApiCall = 0x0501,  // A round trip, or fire-and-forget when want_reply is false.
  // Session 0x0Fxx.
  kHello = 0x0F01,
  kGoodbye = 0x0F02,
  kHeartbeat = 0x0F03,  // No body, no reply; proves the sender is alive.
  kData = 0x0F04,       // A chunk of bulk bytes; payload is raw.
  kFatal = 0x0F05,      // Worker -> client: the session ends; body says why.
  kOutput = 0x0F06,     // Worker -> client, unsolicited: text device code printed.
  kHostCallbackReady = 0x0F07,  // Worker -> client, unsolicited: a stream reached a host callback.
  kShmSetup = 0x0F08,  // Worker -> client, first on a unix socket: the shm segment (SCM_RIGHTS).
  kDataLz4 = 0x0F09,  // A chunk of bulk bytes, lz4-compressed (see below); only where negotiated.
  kAuth = 0x0F0A,     // Client -> worker: the answer to the hello's challenge (messages.h AuthRequest).
};

inline constexpr uint16_t ReplyOp(Op op) { return static_cast<uint16_t>(op) | kReplyBit; }

// The op's name without the k ("Malloc"), for logs and metrics; nullptr for
// a code no Op names (the reply bit is ignored).
const char* OpName(uint16_t op);

// Limits. A peer that exceeds one is a protocol violation and the session
// ends: nothing is allocated on the word of an unchecked length.
inline constexpr uint32_t kMaxBodyBytes = 1u << 20;         // msgpack bodies.
inline constexpr uint32_t kMaxChunkBytes = 16u << 20;       // one kData frame.
inline constexpr uint32_t kDefaultChunkBytes = 4u << 20;
inline constexpr uint32_t kMinChunkBytes = 4u << 10;
inline constexpr uint32_t kMaxPayloadBytes = kMaxChunkBytes;
// The largest code object (and its compressed form) a session accepts.
inline constexpr uint64_t kMaxModuleBytes = uint64_t{1} << 30;
// The largest kOutput text; longer output is split over several frames.
inline constexpr uint32_t kMaxOutputBytes = 60u << 10;
static_assert(kMaxBodyBytes <= kMaxPayloadBytes);
// msgpack structure limits (Cap'n Proto ReaderOptions in spirit): a body of
// 1 MiB could otherwise declare billions of nested empty arrays.
inline constexpr uint32_t kMaxMsgpackDepth = 8;
inline constexpr uint32_t kMaxMsgpackArray = 4096;
inline constexpr uint32_t kMaxMsgpackMap = 256;
inline constexpr uint32_t kMaxMsgpackString = 64u << 10;
inline constexpr uint32_t kMaxMsgpackBin = 64u << 10;

// kDataLz4 payload: a u32 little-endian `raw_length`, the number of bulk bytes
// the chunk stands for (1..kMaxChunkBytes, and no more than is left of the
// transfer), then one lz4 block (LZ4_compress_default's format, no frame
// header) of at least one byte that decompresses to exactly raw_length bytes.
// A chunk is compressed on its own (no dictionary from earlier chunks), so
// it decompresses straight into its place in the destination. Anything else
// is a protocol violation.
inline constexpr uint32_t kLz4PrefixBytes = 4;
// Hello features (HelloRequest::features offers, HelloReply::features
// agrees): kDataLz4 chunks in bulk to the device (client -> worker) and from
// the device (worker -> client). A side sends kDataLz4 only in a direction
// both agreed to, and a receiver refuses it in any other.
inline constexpr char kFeatureLz4ToDevice[] = "bulk-lz4-h2d";
inline constexpr char kFeatureLz4FromDevice[] = "bulk-lz4-d2h";

// The optional capabilities of a device (HelloReply::capabilities), beyond
// the core every device has (memory, copies, streams, events, modules,
// launches). A client refuses what its worker's device lacks at once, with
// the HIP error a GPU without it gives, instead of asking.
inline constexpr char kCapabilityIpcMemory[] = "ipc-memory";            // hipIpc*MemHandle
inline constexpr char kCapabilityIpcEvents[] = "ipc-events";            // hipIpc*EventHandle
inline constexpr char kCapabilityVirtualMemory[] = "virtual-memory";    // hipMemAddressReserve, hipMemMap, ...
inline constexpr char kCapabilityShareableMemory[] = "shareable-memory";  // hipMemExportToShareableHandle
inline constexpr char kCapabilityTextures[] = "textures";               // hipCreateTextureObject
inline constexpr char kCapabilityHostRegister[] = "host-register";      // shm pinned memory registered
inline constexpr char kCapabilityCooperativeModuleLaunch[] = "cooperative-module-launch";

// Writes `h` to 16 bytes, little-endian, independent of host byte order.
void EncodeHeader(const FrameHeader& h, uint8_t out[sizeof(FrameHeader)]);
FrameHeader DecodeHeader(const uint8_t in[sizeof(FrameHeader)]);
inline FrameHeader MakeHeader(uint16_t op, uint32_t request_id, uint32_t payload_length) {
  return FrameHeader{kMagic, kProtocolVersion, op, request_id, payload_length};
}

}  // namespace hipr::wire
