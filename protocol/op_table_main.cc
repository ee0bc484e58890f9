// hipr-op-table: the table of ops (protocol/ops.h) as the Markdown table of
// docs/protocol.md "Calls".
//
//   hipr-op-table                 prints the table
//   hipr-op-table --check FILE    exit 1 unless FILE holds it between the markers
//   hipr-op-table --update FILE   rewrites FILE's table between the markers
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "protocol/op_traits.h"

namespace {

using hipr::ops::kOpInfos;
using hipr::ops::Mode;
using hipr::ops::OpInfo;

constexpr const char* kBegin = "<!-- op table: generated from protocol/ops.h by hipr-op-table; do not edit -->";
constexpr const char* kEnd = "<!-- end of op table -->";

std::string Body(const char* type, const char* fields) {
  if (std::strcmp(type, "NoBody") == 0 || std::strcmp(type, "NoReply") == 0) return "none";
  if (std::strcmp(type, "RawBytes") == 0) return "raw bytes";
  return std::string("`") + type + "{" + fields + "}`";
}

std::string HowSent(const OpInfo& op) {
  std::string s;
  switch (op.mode) {
    case Mode::kCall: s = "round trip"; break;
    case Mode::kPost: s = "fire-and-forget"; break;
    case Mode::kCallOrPost: s = "round trip when `want_reply`, else fire-and-forget"; break;
    case Mode::kHandshake: s = "handshake"; break;
    case Mode::kToClient: s = "worker to client"; break;
    case Mode::kLink: s = "either way"; break;
  }
  if (op.flags & hipr::ops::kSynchronizing) s += "; synchronizing";
  if (op.flags & hipr::ops::kStreamOrdered) s += "; stream-ordered";
  if (op.flags & hipr::ops::kGraphNode) s += "; graph node";
  if (op.flags & hipr::ops::kBulkIn) s += "; bulk follows";
  if (op.flags & hipr::ops::kBulkOut) s += "; bulk follows the reply";
  return s;
}

std::string Table() {
  std::ostringstream out;
  out << kBegin << "\n";
  out << "| op | code | body | reply | sent | note |\n";
  out << "|----|------|------|-------|------|------|\n";
  for (const OpInfo& op : kOpInfos) {
    char code[8];
    std::snprintf(code, sizeof code, "0x%04X", static_cast<unsigned>(op.op));
    out << "| " << op.name << " | `" << code << "` | " << Body(op.request, op.request_fields) << " | "
        << Body(op.reply, op.reply_fields) << " | " << HowSent(op) << " | " << op.note << " |\n";
  }
  out << kEnd << "\n";
  return out.str();
}

int Usage() {
  std::cerr << "usage: hipr-op-table [--check FILE | --update FILE]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string table = Table();
  if (argc == 1) {
    std::cout << table;
    return 0;
  }
  if (argc != 3) return Usage();
  const std::string mode = argv[1], path = argv[2];
  if (mode != "--check" && mode != "--update") return Usage();
  std::ifstream in(path);
  if (!in) {
    std::cerr << "hipr-op-table: cannot read " << path << "\n";
    return 2;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  const size_t begin = text.find(kBegin);
  const size_t end = text.find(kEnd);
  if (begin == std::string::npos || end == std::string::npos || end < begin) {
    std::cerr << "hipr-op-table: " << path << " has no op table markers (" << kBegin << " ... " << kEnd << ")\n";
    return 1;
  }
  const size_t stop = end + std::strlen(kEnd) + 1;  // With its newline.
  const std::string current = text.substr(begin, stop - begin);
  if (mode == "--check") {
    if (current == table) return 0;
    std::cerr << "hipr-op-table: the op table in " << path << " is not protocol/ops.h's; run\n"
              << "  build/protocol/hipr-op-table --update " << path << "\n";
    return 1;
  }
  std::ofstream out(path, std::ios::trunc);
  out << text.substr(0, begin) << table << text.substr(std::min(stop, text.size()));
  if (!out) {
    std::cerr << "hipr-op-table: cannot write " << path << "\n";
    return 2;
  }
  return 0;
}
