#include "protocol/wire.h"

namespace hipr::wire {
namespace {

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void Put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t Get32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

}  // namespace

void EncodeHeader(const FrameHeader& h, uint8_t out[sizeof(FrameHeader)]) {
  Put32(out + 0, h.magic);
  Put16(out + 4, h.version);
  Put16(out + 6, h.op);
  Put32(out + 8, h.request_id);
  Put32(out + 12, h.payload_length);
}

FrameHeader DecodeHeader(const uint8_t in[sizeof(FrameHeader)]) {
  return FrameHeader{Get32(in), Get16(in + 4), Get16(in + 6), Get32(in + 8), Get32(in + 12)};
}

const char* OpName(uint16_t code) {
  switch (static_cast<Op>(code & ~kReplyBit)) {
#define HIPR_OP_NAME(name, ...) \
  case Op::k##name:             \
    return #name;
    HIPR_OPS(HIPR_OP_NAME)
#undef HIPR_OP_NAME
  }
  return nullptr;
}

}  // namespace hipr::wire
