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

#include "protocol/ops.h"

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

// Op codes: one per row of the table in ops.h, which says what each op
// carries and how it is answered.
enum class Op : uint16_t {
#define HIPR_OP_ENUMERATOR(name, code, ...) k##name = code,
  HIPR_OPS(HIPR_OP_ENUMERATOR)
#undef HIPR_OP_ENUMERATOR
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
// The worker understands kCopyChangedFromDevice (agreed whenever offered);
// without it the client reads managed memory back whole.
inline constexpr char kFeatureCopyChanged[] = "copy-changed";
// The worker answers kWorkerStatus (hipr-smi; agreed whenever offered).
inline constexpr char kFeatureWorkerStatus[] = "worker-status";
// The session survives a dropped link (docs/protocol.md "Resuming
// sessions"): after the hello both sides run the session's frames over a
// ResumableLink (resumable_link.h), and the reply carries a resume secret.
// Offered by a client on plain tcp; agreed by a worker with --resume-grace-s
// above 0.
inline constexpr char kFeatureResume[] = "resume";
// Offered with HelloRequest::rdma_qp, agreed with HelloReply::rdma_qp: after
// the reply the client proves the rdma path (kRdmaProbe over the queue pair)
// and tells the worker over tcp whether both switch (kRdmaVerdict). A worker
// answers an offer without it with an empty rdma_qp: the session stays on
// tcp.
inline constexpr char kFeatureRdmaProbe[] = "rdma-probe";
// The probe's limits: the bodies of kRdmaProbe and kRdmaVerdict are small,
// and the worker waits this long for the client's verdict after its reply
// (the client decides sooner: within the RC retry time of its queue pair
// plus a second).
inline constexpr uint32_t kMaxRdmaProbeBytes = 1024;
inline constexpr int kRdmaVerdictTimeoutMs = 15000;

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
inline constexpr char kCapabilityMemoryLease[] = "memory-lease";        // kMemLease*: hipMalloc with no round trip
inline constexpr char kCapabilityPeerCopy[] = "peer-copy";              // kPeer*: copies straight between workers
inline constexpr char kCapabilityCooperativeModuleLaunch[] = "cooperative-module-launch";

// Writes `h` to 16 bytes, little-endian, independent of host byte order.
void EncodeHeader(const FrameHeader& h, uint8_t out[sizeof(FrameHeader)]);
FrameHeader DecodeHeader(const uint8_t in[sizeof(FrameHeader)]);
inline FrameHeader MakeHeader(uint16_t op, uint32_t request_id, uint32_t payload_length) {
  return FrameHeader{kMagic, kProtocolVersion, op, request_id, payload_length};
}

}  // namespace hipr::wire
