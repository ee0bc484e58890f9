// Runtime compilation: hiprtc programs and the hiprtc/hip JIT linkers, all
// answered on the client. A program compiles here (rtc_compiler.h, through
// Debian's comgr) for the current device's target; the application then loads
// the code object with hipModuleLoadData, which ships it to the worker like
// any other. Nothing of this talks to the worker except the question of the
// current device's target, asked once per session (hipGetDeviceProperties
// data the session already holds).
//
// Programs and link states are checked against a registry: a handle that is
// not live fails with HIPRTC_ERROR_INVALID_PROGRAM / INVALID_INPUT instead of
// being dereferenced.
#include <hip/hiprtc.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "client_stub/api/api_common.h"
#include "client_stub/kernels/rtc_compiler.h"
#include "protocol/code_object/code_object.h"
#include "protocol/thread_annotations.h"

// The handle types the headers forward-declare: hiprtcProgram (5.2's
// hiprtc.h), hiprtcLinkState and hipLinkState_t (6.x).
struct _hiprtcProgram {
  std::string source;
  std::string name;
  std::vector<hipr::client::rtc::Header> headers;
  std::vector<std::string> name_expressions;
  bool compiled = false;  // Set by a compilation that succeeded.
  hipr::client::rtc::CompileResult result;
};

struct ihiprtcLinkState {
  std::vector<std::vector<char>> bitcode;
  std::vector<hipJitOption> options;  // The log buffers, written at completion.
  std::vector<void*> values;
  std::vector<char> code;  // hiprtcLinkComplete's output, owned until destroy.
  std::string log;
};

namespace hipr::client {
namespace {

constexpr hiprtcResult kLinkingError = static_cast<hiprtcResult>(100);  // HIPRTC_ERROR_LINKING (6.x).
// hipJitInputType / hiprtcJITInputType (6.x): the inputs the linker takes.
constexpr int kJitInputLLVMBitcode = 100;
constexpr int kJitInputLLVMBundledBitcode = 101;

template <class T>
class Registry {
 public:
  void Add(T* p) {
    MutexLock lock(mu_);
    live_.insert(p);
  }
  bool Remove(T* p) {
    MutexLock lock(mu_);
    return live_.erase(p) == 1;
  }
  bool Live(T* p) {
    MutexLock lock(mu_);
    return live_.count(p) == 1;
  }

 private:
  Mutex mu_;
  std::unordered_set<T*> live_ HIPR_GUARDED_BY(mu_);
};

Registry<_hiprtcProgram>& Programs() {
  static auto* r = new Registry<_hiprtcProgram>();  // Never destroyed: used during exit.
  return *r;
}
Registry<ihiprtcLinkState>& LinkStates() {
  static auto* r = new Registry<ihiprtcLinkState>();
  return *r;
}

// The current device's target (gcnArchName), or empty without a session.
std::string CurrentTarget() {
  Remote* s = LiveSession();
  if (s == nullptr || s->device_count() == 0) return {};
  int device = CurrentDevice();
  if (device < 0 || device >= s->device_count()) return {};
  return s->devices()[device].gcn_arch_name;
}

template <class F>
hiprtcResult RtcCall(const char* name, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    HIPR_LOG_ERROR("%s: out of host memory", name);
    return HIPRTC_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    HIPR_LOG_ERROR("%s: internal error: %s", name, e.what());
    return HIPRTC_ERROR_INTERNAL_ERROR;
  } catch (...) {
    HIPR_LOG_ERROR("%s: internal error", name);
    return HIPRTC_ERROR_INTERNAL_ERROR;
  }
}

// A compiler that cannot run (comgr or the device libraries missing) is the
// installation's problem: said in the program's log, where applications look
// after a failed compilation, and logged once.
void NoteCompilerProblem(const Status& st, std::string* log) {
  HIPR_LOG_ONCE(kError, "hiprtc: %s", st.message().c_str());
  *log += "hipr: " + st.message() + "\n";
}

hiprtcResult CreateProgram(hiprtcProgram* prog, const char* src, const char* name, int num_headers,
                           const char** headers, const char** include_names) {
  if (prog == nullptr || src == nullptr || num_headers < 0) return HIPRTC_ERROR_INVALID_INPUT;
  if (num_headers > 0 && (headers == nullptr || include_names == nullptr)) return HIPRTC_ERROR_INVALID_INPUT;
  auto p = std::make_unique<_hiprtcProgram>();
  p->source = src;
  p->name = name != nullptr && *name != '\0' ? name : "";
  for (int i = 0; i < num_headers; ++i) {
    if (headers[i] == nullptr || include_names[i] == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
    p->headers.push_back({include_names[i], headers[i]});
  }
  *prog = p.get();
  Programs().Add(p.release());
  return HIPRTC_SUCCESS;
}

hiprtcResult CompileProgram(hiprtcProgram prog, int num_options, const char** options) {
  if (num_options < 0 || (num_options > 0 && options == nullptr)) return HIPRTC_ERROR_INVALID_INPUT;
  rtc::CompileRequest req;
  req.source = prog->source;
  req.name = prog->name;
  req.headers = prog->headers;
  req.name_expressions = prog->name_expressions;
  for (int i = 0; i < num_options; ++i) {
    if (options[i] == nullptr) return HIPRTC_ERROR_INVALID_OPTION;
    req.options.emplace_back(options[i]);
  }
  req.device_lib_dir = Client::Get().config().rtc_device_lib_dir;
  bool names_target = false;
  for (const std::string& o : req.options)
    names_target |= o.starts_with("--gpu-architecture") || o.starts_with("--offload-arch") || o.starts_with("-arch");
  if (!names_target) req.default_target = CurrentTarget();
  prog->compiled = false;
  Status st = rtc::Compile(req, &prog->result);
  if (!st.ok()) {
    NoteCompilerProblem(st, &prog->result.log);
    return HIPRTC_ERROR_COMPILATION;
  }
  HIPR_LOG_DEBUG("hiprtcCompileProgram(%s) for %s: %s, %zu bytes of code", prog->name.c_str(),
                 prog->result.target.c_str(), prog->result.ok ? "compiled" : "failed", prog->result.code.size());
  if (!prog->result.ok) return HIPRTC_ERROR_COMPILATION;
  prog->compiled = true;
  return HIPRTC_SUCCESS;
}

hiprtcResult CopyOut(const std::vector<char>& bytes, char* out) {
  if (out == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  if (!bytes.empty()) std::memcpy(out, bytes.data(), bytes.size());
  return HIPRTC_SUCCESS;
}

// ---- Linking -------------------------------------------------------------------

// Bitcode of `type` for `target`: raw LLVM bitcode, or the target's entry of
// an offload bundle of bitcode (hipcc -fgpu-rdc --emit-llvm output).
Status BitcodeOf(int type, const void* data, size_t size, const std::string& target, std::vector<char>* out) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  if (type == kJitInputLLVMBitcode) {
    if (size < 4 || !(std::memcmp(bytes, "BC\xC0\xDE", 4) == 0 || std::memcmp(bytes, "\xDE\xC0\x17\x0B", 4) == 0))
      return InvalidArgument("the input is not LLVM bitcode");
    out->assign(bytes, bytes + size);
    return Status::Ok();
  }
  if (type == kJitInputLLVMBundledBitcode) {
    co::Bundle bundle;
    HIPR_RETURN_IF_ERROR(co::ParseBundle(co::Bytes(bytes, size), &bundle));
    co::TargetId device;
    HIPR_RETURN_IF_ERROR(co::ParseTargetId(target, &device));
    const co::BundleEntry* entry = co::SelectEntry(bundle, device);
    if (entry == nullptr) return InvalidArgument("the bundle has no bitcode for " + target);
    out->assign(entry->bytes.begin(), entry->bytes.end());
    return Status::Ok();
  }
  return {StatusCode::kNotSupported,
          "input type " + std::to_string(type) +
              ": hipr links LLVM bitcode (hipJitInputLLVMBitcode, hipJitInputLLVMBundledBitcode) only; "
              "AMD code objects are loaded with hipModuleLoadData instead"};
}

hiprtcResult LinkCreate(unsigned int num_options, hipJitOption* options, void** values, ihiprtcLinkState** state) {
  if (state == nullptr || (num_options > 0 && (options == nullptr || values == nullptr)))
    return HIPRTC_ERROR_INVALID_INPUT;
  auto s = std::make_unique<ihiprtcLinkState>();
  s->options.assign(options, options + num_options);
  s->values.assign(values, values + num_options);
  *state = s.get();
  LinkStates().Add(s.release());
  return HIPRTC_SUCCESS;
}

hiprtcResult LinkAdd(ihiprtcLinkState* state, int type, const void* data, size_t size, const char* what) {
  if (!LinkStates().Live(state)) return HIPRTC_ERROR_INVALID_INPUT;
  if (data == nullptr || size == 0) return HIPRTC_ERROR_INVALID_INPUT;
  std::vector<char> bc;
  if (Status st = BitcodeOf(type, data, size, CurrentTarget(), &bc); !st.ok()) {
    HIPR_LOG_ERROR("hiprtc link: %s: %s", what, st.message().c_str());
    state->log += std::string("hipr: ") + what + ": " + st.message() + "\n";
    return st.code() == StatusCode::kNotSupported ? HIPRTC_ERROR_INVALID_INPUT : kLinkingError;
  }
  state->bitcode.push_back(std::move(bc));
  return HIPRTC_SUCCESS;
}

hiprtcResult LinkAddFile(ihiprtcLinkState* state, int type, const char* path) {
  if (path == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (LinkStates().Live(state)) state->log += std::string("hipr: cannot open ") + path + "\n";
    return HIPRTC_ERROR_INVALID_INPUT;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return LinkAdd(state, type, bytes.data(), bytes.size(), path);
}

// Writes the log into the buffers the options named (info and error log).
void WriteLogBuffers(const ihiprtcLinkState& s) {
  auto value_of = [&](hipJitOption which) -> void* {
    for (size_t i = 0; i < s.options.size(); ++i)
      if (s.options[i] == which) return s.values[i];
    return nullptr;
  };
  for (auto [buffer, size] : {std::pair{hipJitOptionInfoLogBuffer, hipJitOptionInfoLogBufferSizeBytes},
                              std::pair{hipJitOptionErrorLogBuffer, hipJitOptionErrorLogBufferSizeBytes}}) {
    auto* out = static_cast<char*>(value_of(buffer));
    size_t cap = reinterpret_cast<uintptr_t>(value_of(size));
    if (out == nullptr || cap == 0) continue;
    size_t n = std::min(cap - 1, s.log.size());
    std::memcpy(out, s.log.data(), n);
    out[n] = '\0';
  }
}

hiprtcResult LinkComplete(ihiprtcLinkState* state, void** binary, size_t* size) {
  if (!LinkStates().Live(state) || binary == nullptr || size == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
  std::string target = CurrentTarget();
  if (target.empty()) {
    state->log += "hipr: no current device to link for\n";
    WriteLogBuffers(*state);
    return kLinkingError;
  }
  rtc::LinkResult result;
  Status st = rtc::Link(state->bitcode, target, {}, &result);
  state->log += result.log;
  if (!st.ok()) NoteCompilerProblem(st, &state->log);
  WriteLogBuffers(*state);
  if (!st.ok() || !result.ok) return kLinkingError;
  state->code = std::move(result.code);
  *binary = state->code.data();
  *size = state->code.size();
  return HIPRTC_SUCCESS;
}

hipError_t LinkErrorToHip(hiprtcResult r) {
  switch (r) {
    case HIPRTC_SUCCESS: return hipSuccess;
    case HIPRTC_ERROR_OUT_OF_MEMORY: return hipErrorOutOfMemory;
    case HIPRTC_ERROR_INVALID_INPUT: return hipErrorInvalidValue;
    default: return hipErrorInvalidConfiguration;  // A failed link, as ROCm reports it.
  }
}

}  // namespace
}  // namespace hipr::client

using namespace hipr::client;

HIPR_EXPORT hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name,
                                             int num_headers, const char** headers, const char** include_names) {
  return RtcCall("hiprtcCreateProgram",
                 [&] { return CreateProgram(prog, src, name, num_headers, headers, include_names); });
}

HIPR_EXPORT hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog) {
  return RtcCall("hiprtcDestroyProgram", [&] {
    if (prog == nullptr || !Programs().Remove(*prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    delete *prog;
    *prog = nullptr;
    return HIPRTC_SUCCESS;
  });
}

HIPR_EXPORT hiprtcResult hiprtcAddNameExpression(hiprtcProgram prog, const char* name_expression) {
  return RtcCall("hiprtcAddNameExpression", [&] {
    if (!Programs().Live(prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (name_expression == nullptr || *name_expression == '\0') return HIPRTC_ERROR_INVALID_INPUT;
    if (prog->compiled) return HIPRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION;
    prog->name_expressions.emplace_back(name_expression);
    return HIPRTC_SUCCESS;
  });
}

HIPR_EXPORT hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int num_options, const char** options) {
  return RtcCall("hiprtcCompileProgram", [&] {
    if (!Programs().Live(prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    return CompileProgram(prog, num_options, options);
  });
}

HIPR_EXPORT hiprtcResult hiprtcGetLoweredName(hiprtcProgram prog, const char* name_expression,
                                              const char** lowered_name) {
  return RtcCall("hiprtcGetLoweredName", [&] {
    if (!Programs().Live(prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (name_expression == nullptr || lowered_name == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
    if (!prog->compiled) return HIPRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION;
    for (const auto& [expr, lowered] : prog->result.lowered) {
      if (expr == name_expression) {
        *lowered_name = lowered.c_str();
        return HIPRTC_SUCCESS;
      }
    }
    return HIPRTC_ERROR_NAME_EXPRESSION_NOT_VALID;
  });
}

HIPR_EXPORT hiprtcResult hiprtcGetProgramLogSize(hiprtcProgram prog, size_t* size) {
  return RtcCall("hiprtcGetProgramLogSize", [&] {
    if (!Programs().Live(prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (size == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
    *size = prog->result.log.size() + 1;  // With the terminating NUL.
    return HIPRTC_SUCCESS;
  });
}

HIPR_EXPORT hiprtcResult hiprtcGetProgramLog(hiprtcProgram prog, char* log) {
  return RtcCall("hiprtcGetProgramLog", [&] {
    if (!Programs().Live(prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (log == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
    std::memcpy(log, prog->result.log.c_str(), prog->result.log.size() + 1);
    return HIPRTC_SUCCESS;
  });
}

HIPR_EXPORT hiprtcResult hiprtcGetCodeSize(hiprtcProgram prog, size_t* size) {
  return RtcCall("hiprtcGetCodeSize", [&] {
    if (!Programs().Live(prog)) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (size == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
    if (!prog->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
    *size = prog->result.code.size();
    return HIPRTC_SUCCESS;
  });
}

HIPR_EXPORT hiprtcResult hiprtcGetCode(hiprtcProgram prog, char* code) {
  return RtcCall("hiprtcGetCode", [&] {
    if (!Programs().Live(prog) || !prog->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
    return CopyOut(prog->result.code, code);
  });
}

// ROCm 6.x: the program's LLVM bitcode (compile with -fgpu-rdc to link it).
HIPR_EXPORT hiprtcResult hiprtcGetBitcodeSize(hiprtcProgram prog, size_t* size) {
  return RtcCall("hiprtcGetBitcodeSize", [&] {
    if (!Programs().Live(prog) || !prog->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
    if (size == nullptr) return HIPRTC_ERROR_INVALID_INPUT;
    *size = prog->result.bitcode.size();
    return HIPRTC_SUCCESS;
  });
}

HIPR_EXPORT hiprtcResult hiprtcGetBitcode(hiprtcProgram prog, char* bitcode) {
  return RtcCall("hiprtcGetBitcode", [&] {
    if (!Programs().Live(prog) || !prog->compiled) return HIPRTC_ERROR_INVALID_PROGRAM;
    return CopyOut(prog->result.bitcode, bitcode);
  });
}

// ROCm 6.x: hiprtc's JIT linker, over bitcode.
HIPR_EXPORT hiprtcResult hiprtcLinkCreate(unsigned int num_options, hipJitOption* options, void** values,
                                          ihiprtcLinkState** state) {
  return RtcCall("hiprtcLinkCreate", [&] { return LinkCreate(num_options, options, values, state); });
}

HIPR_EXPORT hiprtcResult hiprtcLinkAddData(ihiprtcLinkState* state, int type, void* image, size_t size,
                                           const char* name, unsigned int, hipJitOption*, void**) {
  return RtcCall("hiprtcLinkAddData",
                 [&] { return LinkAdd(state, type, image, size, name != nullptr ? name : "data"); });
}

HIPR_EXPORT hiprtcResult hiprtcLinkAddFile(ihiprtcLinkState* state, int type, const char* path, unsigned int,
                                           hipJitOption*, void**) {
  return RtcCall("hiprtcLinkAddFile", [&] { return LinkAddFile(state, type, path); });
}

HIPR_EXPORT hiprtcResult hiprtcLinkComplete(ihiprtcLinkState* state, void** binary, size_t* size) {
  return RtcCall("hiprtcLinkComplete", [&] { return LinkComplete(state, binary, size); });
}

HIPR_EXPORT hiprtcResult hiprtcLinkDestroy(ihiprtcLinkState* state) {
  return RtcCall("hiprtcLinkDestroy", [&] {
    if (!LinkStates().Remove(state)) return HIPRTC_ERROR_INVALID_INPUT;
    delete state;
    return HIPRTC_SUCCESS;
  });
}

// ROCm 6.4: the same linker in the runtime's own terms (hipError_t).
HIPR_EXPORT hipError_t hipLinkCreate(unsigned int num_options, hipJitOption* options, void** values,
                                     ihiprtcLinkState** state) {
  return ApiCall("hipLinkCreate", [&] {
    return LinkErrorToHip(RtcCall("hipLinkCreate", [&] { return LinkCreate(num_options, options, values, state); }));
  });
}

HIPR_EXPORT hipError_t hipLinkAddData(ihiprtcLinkState* state, int type, void* data, size_t size, const char* name,
                                      unsigned int, hipJitOption*, void**) {
  return ApiCall("hipLinkAddData", [&] {
    return LinkErrorToHip(
        RtcCall("hipLinkAddData", [&] { return LinkAdd(state, type, data, size, name != nullptr ? name : "data"); }));
  });
}

HIPR_EXPORT hipError_t hipLinkAddFile(ihiprtcLinkState* state, int type, const char* path, unsigned int,
                                      hipJitOption*, void**) {
  return ApiCall("hipLinkAddFile", [&] {
    return LinkErrorToHip(RtcCall("hipLinkAddFile", [&] { return LinkAddFile(state, type, path); }));
  });
}

HIPR_EXPORT hipError_t hipLinkComplete(ihiprtcLinkState* state, void** binary, size_t* size) {
  return ApiCall("hipLinkComplete", [&] {
    return LinkErrorToHip(RtcCall("hipLinkComplete", [&] { return LinkComplete(state, binary, size); }));
  });
}

HIPR_EXPORT hipError_t hipLinkDestroy(ihiprtcLinkState* state) {
  return ApiCall("hipLinkDestroy", [&] {
    if (!LinkStates().Remove(state)) return hipErrorInvalidHandle;
    delete state;
    return hipSuccess;
  });
}
