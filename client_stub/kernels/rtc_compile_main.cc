// hipr-rtc-compile: compiles a HIP source file exactly as the stub's
// hiprtcCompileProgram does (rtc_compiler.h) and writes the code object.
// The build uses it to produce, ahead of time, the code object a test
// program will compile at run time, so that a sim twin can be built for it
// (the twin is found by the code object's SHA-256).
//
//   hipr-rtc-compile --target gfx90a:sramecc+:xnack- --source k.hip [--name k.hip]
//                    [--header NAME=FILE]... [--expression EXPR]... --output k.co [-- OPTION...]
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "client_stub/kernels/rtc_compiler.h"

namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  hipr::client::rtc::CompileRequest req;
  std::string source_path, output;
  std::vector<std::string> headers;
  req.device_lib_dir = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode";
  CLI::App app{"hipr-rtc-compile: compiles HIP source as the hipr stub's hiprtc does"};
  app.add_option("--target", req.default_target, "target id, e.g. gfx90a:sramecc+:xnack-")->required();
  app.add_option("--source", source_path, "the program's source file")->required();
  app.add_option("--name", req.name, "the program's name (hiprtcCreateProgram's name)");
  app.add_option("--header", headers, "NAME=FILE: a header the program includes as NAME");
  app.add_option("--expression", req.name_expressions, "a name expression (hiprtcAddNameExpression)");
  app.add_option("--device-lib-dir", req.device_lib_dir, "rocm-device-libs' bitcode directory");
  app.add_option("--output", output, "where to write the code object")->required();
  app.add_option("options", req.options, "compile options, after --");
  CLI11_PARSE(app, argc, argv);

  if (!ReadFile(source_path, &req.source)) {
    std::fprintf(stderr, "hipr-rtc-compile: cannot read %s\n", source_path.c_str());
    return 1;
  }
  for (const std::string& h : headers) {
    size_t eq = h.find('=');
    hipr::client::rtc::Header header;
    if (eq == std::string::npos || !ReadFile(h.substr(eq + 1), &header.text)) {
      std::fprintf(stderr, "hipr-rtc-compile: --header %s: expected NAME=FILE, a readable file\n", h.c_str());
      return 1;
    }
    header.name = h.substr(0, eq);
    req.headers.push_back(std::move(header));
  }
  hipr::client::rtc::CompileResult result;
  hipr::Status st = hipr::client::rtc::Compile(req, &result);
  if (!st.ok()) {
    std::fprintf(stderr, "hipr-rtc-compile: %s\n", st.message().c_str());
    return 1;
  }
  if (!result.ok || result.code.empty()) {
    std::fprintf(stderr, "hipr-rtc-compile: %s did not compile:\n%s", source_path.c_str(), result.log.c_str());
    return 1;
  }
  std::ofstream out(output + ".tmp", std::ios::binary);
  out.write(result.code.data(), static_cast<std::streamsize>(result.code.size()));
  out.close();
  if (!out || std::rename((output + ".tmp").c_str(), output.c_str()) != 0) {
    std::fprintf(stderr, "hipr-rtc-compile: cannot write %s\n", output.c_str());
    return 1;
  }
  return 0;
}
