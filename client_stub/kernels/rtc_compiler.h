// Runtime compilation on the client (hiprtc): HIP source to an AMDGPU code
// object through AMD's code object manager, Debian's libamd-comgr2, opened
// with dlopen at the first compilation (a program that never compiles at run
// time never loads LLVM).
//
// The source is compiled as hiprtc does: HIP language with __HIPCC_RTC__, a
// preamble (the fixed-width integer types, the limits and the bits of <limits>
// the HIP headers need in that mode, then <hip/hip_runtime.h>) force-included,
// the device libraries (Debian's rocm-device-libs bitcode) linked as builtins,
// then code generation and linking for one target. The result is a plain code
// object that hipModuleLoadData ships to the worker like any other. The
// compilation is deterministic: the same source, options and target give the
// same bytes, which is how a sim twin is found for a runtime-compiled program
// (tests/e2e: hipr-rtc-compile builds the twin's code object the same way).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/status.h"

namespace hipr::client::rtc {

struct Header {
  std::string name;  // As the source #includes it.
  std::string text;
};

struct CompileRequest {
  std::string source;
  std::string name;  // The program's file name in messages ("prog.hip" if empty).
  std::vector<Header> headers;
  std::vector<std::string> options;           // hiprtcCompileProgram's options.
  std::vector<std::string> name_expressions;  // hiprtcAddNameExpression's, in order.
  // The target when the options name none: the current device's gcnArchName
  // ("gfx90a:sramecc+:xnack-"). Empty: the options must name one.
  std::string default_target;
  std::string device_lib_dir;  // rocm-device-libs' bitcode directory.
};

struct CompileResult {
  bool ok = false;               // false: a compile error, explained in `log`.
  std::string log;               // The compiler's diagnostics.
  std::string target;            // The target compiled for.
  std::vector<char> code;        // The code object (empty with -fgpu-rdc).
  std::vector<char> bitcode;     // LLVM bitcode, for hiprtcGetBitcode / linking.
  // Name expression -> the mangled kernel name it resolved to (only the
  // expressions that resolved; the others are named in `log`).
  std::vector<std::pair<std::string, std::string>> lowered;
};

// Compiles. A Status error is a problem with the compiler itself (comgr or
// the device libraries missing or failing); a compile error of the program is
// ok() with result->ok false.
Status Compile(const CompileRequest& request, CompileResult* result);

// Links LLVM bitcode modules (hiprtcGetBitcode's output of programs compiled
// with -fgpu-rdc) into one code object for `target`.
struct LinkResult {
  bool ok = false;
  std::string log;
  std::vector<char> code;
};
Status Link(const std::vector<std::vector<char>>& bitcode, const std::string& target,
            const std::vector<std::string>& options, LinkResult* result);

// ---- Pieces, exposed for the unit tests -------------------------------------

// The source with one line per name expression appended that makes the
// compiler instantiate and emit what it names.
std::string SourceWithNameExpressions(std::string_view source,
                                      const std::vector<std::string>& expressions);

// The name part of a demangled kernel ("void ns::k<float>(float*)" ->
// "ns::k<float>"), without spaces; a name that is not demangled comes back as
// is. Name expressions are matched in this form (leading '&' and spaces
// dropped), as hiprtc users write them ("ns::k<float>").
std::string NormalizedKernelName(std::string_view demangled);
std::string NormalizedExpression(std::string_view expression);

// The rocm-device-libs bitcode files a target links: the ISA version file
// ("oclc_isa_version_90a.bc") and the option files hipcc picks by default.
// Fails for a target that is not "gfx<digits/letters>[:features]".
Status DeviceLibraries(std::string_view target, std::vector<std::string>* names);

}  // namespace hipr::client::rtc
