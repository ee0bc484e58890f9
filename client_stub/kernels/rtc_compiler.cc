#include "client_stub/kernels/rtc_compiler.h"

// comgr 2 (Debian 12) installs amd_comgr.h at the top; comgr 3 (sid) in amd_comgr/.
#if __has_include(<amd_comgr/amd_comgr.h>)
#include <amd_comgr/amd_comgr.h>
#else
#include <amd_comgr.h>
#endif
#include <cxxabi.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "protocol/code_object/code_object.h"

namespace hipr::client::rtc {
namespace {

// The comgr whose interface this was compiled against (Debian 12's: 2).
#define HIPR_STRINGIFY_(x) #x
#define HIPR_STRINGIFY(x) HIPR_STRINGIFY_(x)
constexpr const char* kComgrLibrary = "libamd_comgr.so." HIPR_STRINGIFY(AMD_COMGR_INTERFACE_VERSION_MAJOR);
constexpr const char* kPreambleName = "hipr_rtc_preamble.h";

// What HIP's headers expect from the environment when __HIPCC_RTC__ keeps
// them from including the C and C++ standard headers; then the headers.
constexpr std::string_view kPreamble = R"(#pragma once
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SHRT_MAX __SHRT_MAX__
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#define LONG_MAX __LONG_MAX__
#define LLONG_MAX __LONG_LONG_MAX__
namespace std {
using ::size_t;
using ::ptrdiff_t;
using ::intptr_t;
using ::uintptr_t;
using ::int8_t;
using ::int16_t;
using ::uint8_t;
using ::uint16_t;
template <typename T> struct numeric_limits {
  static constexpr bool is_specialized = false;
  static constexpr bool is_integer = false;
};
#define HIPR_RTC_LIMITS(T, INTEGER)               \
  template <> struct numeric_limits<T> {          \
    static constexpr bool is_specialized = true;  \
    static constexpr bool is_integer = INTEGER;   \
  };
HIPR_RTC_LIMITS(bool, true)
HIPR_RTC_LIMITS(char, true)
HIPR_RTC_LIMITS(signed char, true)
HIPR_RTC_LIMITS(unsigned char, true)
HIPR_RTC_LIMITS(short, true)
HIPR_RTC_LIMITS(unsigned short, true)
HIPR_RTC_LIMITS(int, true)
HIPR_RTC_LIMITS(unsigned int, true)
HIPR_RTC_LIMITS(long, true)
HIPR_RTC_LIMITS(unsigned long, true)
HIPR_RTC_LIMITS(long long, true)
HIPR_RTC_LIMITS(unsigned long long, true)
HIPR_RTC_LIMITS(float, false)
HIPR_RTC_LIMITS(double, false)
#undef HIPR_RTC_LIMITS
}  // namespace std
#include <hip/hip_runtime.h>
)";

// The comgr functions used, resolved from the library at first use.
struct Comgr {
  void* handle = nullptr;
  std::string error;  // Why it is unusable, when it is.
#define HIPR_COMGR_FN(name) decltype(&::name) name = nullptr;
#define HIPR_COMGR_FUNCTIONS(X)                                                              \
  X(amd_comgr_status_string) X(amd_comgr_create_data) X(amd_comgr_release_data)              \
  X(amd_comgr_set_data) X(amd_comgr_set_data_name) X(amd_comgr_get_data)                     \
  X(amd_comgr_create_data_set) X(amd_comgr_destroy_data_set) X(amd_comgr_data_set_add)       \
  X(amd_comgr_action_data_count) X(amd_comgr_action_data_get_data)                           \
  X(amd_comgr_create_action_info) X(amd_comgr_destroy_action_info)                           \
  X(amd_comgr_action_info_set_isa_name) X(amd_comgr_action_info_set_language)                \
  X(amd_comgr_action_info_set_option_list) X(amd_comgr_action_info_set_logging)              \
  X(amd_comgr_do_action)
  HIPR_COMGR_FUNCTIONS(HIPR_COMGR_FN)
#undef HIPR_COMGR_FN
};

const Comgr& LoadComgr() {
  static Comgr comgr = [] {
    Comgr c;
    c.handle = dlopen(kComgrLibrary, RTLD_NOW | RTLD_LOCAL);
    if (c.handle == nullptr) {
      const char* why = dlerror();
      c.error = std::string("cannot load ") + kComgrLibrary + " (" + (why ? why : "?") +
                "): runtime compilation needs AMD's code object manager (Debian: apt install libamd-comgr2)";
      return c;
    }
#define HIPR_COMGR_SYM(name)                                                    \
  c.name = reinterpret_cast<decltype(c.name)>(dlsym(c.handle, #name));           \
  if (c.name == nullptr && c.error.empty()) c.error = std::string(kComgrLibrary) + " lacks " #name;
    HIPR_COMGR_FUNCTIONS(HIPR_COMGR_SYM)
#undef HIPR_COMGR_SYM
    return c;
  }();
  return comgr;
}

Status ComgrError(const Comgr& c, amd_comgr_status_t st, const char* what) {
  const char* text = nullptr;
  if (c.amd_comgr_status_string(st, &text) != AMD_COMGR_STATUS_SUCCESS || text == nullptr) text = "?";
  return Status(StatusCode::kInternal, std::string("comgr ") + what + ": " + text);
}

#define HIPR_COMGR_TRY(c, call, what)                              \
  do {                                                             \
    amd_comgr_status_t hipr_st_ = (call);                          \
    if (hipr_st_ != AMD_COMGR_STATUS_SUCCESS) return ComgrError(c, hipr_st_, what); \
  } while (0)

// Owning wrappers of comgr handles.
class DataSet {
 public:
  explicit DataSet(const Comgr& c) : c_(c) {}
  ~DataSet() {
    if (created_) c_.amd_comgr_destroy_data_set(set_);
  }
  DataSet(const DataSet&) = delete;
  DataSet& operator=(const DataSet&) = delete;
  Status Create() {
    HIPR_COMGR_TRY(c_, c_.amd_comgr_create_data_set(&set_), "create data set");
    created_ = true;
    return Status::Ok();
  }
  Status Add(amd_comgr_data_kind_t kind, std::string_view name, const void* bytes, size_t size) {
    amd_comgr_data_t data;
    HIPR_COMGR_TRY(c_, c_.amd_comgr_create_data(kind, &data), "create data");
    amd_comgr_status_t st = c_.amd_comgr_set_data(data, size, static_cast<const char*>(bytes));
    if (st == AMD_COMGR_STATUS_SUCCESS) st = c_.amd_comgr_set_data_name(data, std::string(name).c_str());
    if (st == AMD_COMGR_STATUS_SUCCESS) st = c_.amd_comgr_data_set_add(set_, data);
    c_.amd_comgr_release_data(data);  // The set holds its own reference.
    if (st != AMD_COMGR_STATUS_SUCCESS) return ComgrError(c_, st, "add data");
    return Status::Ok();
  }
  // The bytes of the index-th datum of `kind`; empty when there is none.
  Status Get(amd_comgr_data_kind_t kind, size_t index, std::vector<char>* out) const {
    out->clear();
    size_t count = 0;
    HIPR_COMGR_TRY(c_, c_.amd_comgr_action_data_count(set_, kind, &count), "count data");
    if (index >= count) return Status::Ok();
    amd_comgr_data_t data;
    HIPR_COMGR_TRY(c_, c_.amd_comgr_action_data_get_data(set_, kind, index, &data), "get data");
    size_t size = 0;
    amd_comgr_status_t st = c_.amd_comgr_get_data(data, &size, nullptr);
    if (st == AMD_COMGR_STATUS_SUCCESS) {
      out->resize(size);
      st = c_.amd_comgr_get_data(data, &size, out->data());
      out->resize(size);
    }
    c_.amd_comgr_release_data(data);
    if (st != AMD_COMGR_STATUS_SUCCESS) return ComgrError(c_, st, "read data");
    return Status::Ok();
  }
  // Every log the action wrote, appended to `log`.
  void AppendLogs(std::string* log) const {
    size_t count = 0;
    if (c_.amd_comgr_action_data_count(set_, AMD_COMGR_DATA_KIND_LOG, &count) != AMD_COMGR_STATUS_SUCCESS) return;
    for (size_t i = 0; i < count; ++i) {
      std::vector<char> text;
      if (!Get(AMD_COMGR_DATA_KIND_LOG, i, &text).ok()) continue;
      log->append(text.begin(), text.end());
    }
  }
  amd_comgr_data_set_t get() const { return set_; }

 private:
  const Comgr& c_;
  amd_comgr_data_set_t set_{};
  bool created_ = false;
};

class ActionInfo {
 public:
  explicit ActionInfo(const Comgr& c) : c_(c) {}
  ~ActionInfo() {
    if (created_) c_.amd_comgr_destroy_action_info(info_);
  }
  ActionInfo(const ActionInfo&) = delete;
  ActionInfo& operator=(const ActionInfo&) = delete;
  Status Create(const std::string& target, const std::vector<std::string>& options) {
    HIPR_COMGR_TRY(c_, c_.amd_comgr_create_action_info(&info_), "create action info");
    created_ = true;
    std::string isa = "amdgcn-amd-amdhsa--" + target;
    if (amd_comgr_status_t st = c_.amd_comgr_action_info_set_isa_name(info_, isa.c_str());
        st != AMD_COMGR_STATUS_SUCCESS)
      return Status(StatusCode::kNotFound, std::string(kComgrLibrary) + " does not know the target " + target +
                                               ": it predates that target, which runtime compilation on this client "
                                               "cannot serve");

    HIPR_COMGR_TRY(c_, c_.amd_comgr_action_info_set_language(info_, AMD_COMGR_LANGUAGE_HIP), "set language");
    HIPR_COMGR_TRY(c_, c_.amd_comgr_action_info_set_logging(info_, true), "set logging");
    std::vector<const char*> argv;
    for (const std::string& o : options) argv.push_back(o.c_str());
    HIPR_COMGR_TRY(c_, c_.amd_comgr_action_info_set_option_list(info_, argv.data(), argv.size()), "set options");
    return Status::Ok();
  }
  // Runs `action`; false (with the log appended) when comgr reports failure.
  bool Run(amd_comgr_action_kind_t action, const DataSet& in, const DataSet& out, std::string* log) const {
    amd_comgr_status_t st = c_.amd_comgr_do_action(action, info_, in.get(), out.get());
    out.AppendLogs(log);
    return st == AMD_COMGR_STATUS_SUCCESS;
  }

 private:
  const Comgr& c_;
  amd_comgr_action_info_t info_{};
  bool created_ = false;
};

// comgr runs the compiler in this process; one compilation at a time keeps
// LLVM's global state out of the question.
std::mutex& CompileMutex() {
  static std::mutex mu;
  return mu;
}

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::string WithoutSpaces(std::string_view s) {
  std::string out;
  for (char ch : s)
    if (ch != ' ' && ch != '\t' && ch != '\n') out.push_back(ch);
  return out;
}

// The user's options, sorted into what hipr decides (the target, relocatable
// device code, the device libraries' math flavour) and what goes to clang.
struct Options {
  std::string target;
  bool rdc = false;
  bool fast_math = false;
  bool daz = false;
  bool has_opt_level = false;
  bool has_std = false;
  std::vector<std::string> clang;
};

Status ParseOptions(const std::vector<std::string>& in, Options* out) {
  static constexpr std::string_view kTargetPrefixes[] = {"--gpu-architecture=", "--offload-arch=", "-arch=",
                                                         "--gpu-architecture ", "--offload-arch "};
  for (size_t i = 0; i < in.size(); ++i) {
    std::string_view o = in[i];
    bool target = false;
    for (std::string_view p : kTargetPrefixes) {
      if (StartsWith(o, p)) {
        out->target = std::string(o.substr(p.size()));
        target = true;
        break;
      }
    }
    if (target) continue;
    if (o == "--gpu-architecture" || o == "--offload-arch" || o == "-arch") {
      if (i + 1 == in.size()) return InvalidArgument(std::string(o) + " without a target");
      out->target = in[++i];
      continue;
    }
    if (o.empty()) continue;
    if (o == "-fgpu-rdc") out->rdc = true;
    if (o == "-ffast-math" || o == "--use_fast_math" || o == "-use_fast_math") {
      out->fast_math = true;
      out->clang.push_back("-ffast-math");
      continue;
    }
    if (o == "-fgpu-flush-denormals-to-zero") out->daz = true;
    if (StartsWith(o, "-O")) out->has_opt_level = true;
    if (StartsWith(o, "--std=")) {
      out->has_std = true;
      out->clang.push_back("-std=" + std::string(o.substr(6)));
      continue;
    }
    if (StartsWith(o, "-std=")) out->has_std = true;
    out->clang.emplace_back(o);
  }
  return Status::Ok();
}

Status DeviceLibraryPaths(const std::string& target, const Options& opts, const std::string& dir,
                          std::vector<std::string>* flags) {
  std::vector<std::string> names;
  HIPR_RETURN_IF_ERROR(DeviceLibraries(target, &names));
  for (std::string& n : names) {
    if (opts.fast_math && (n == "oclc_unsafe_math_off.bc" || n == "oclc_finite_only_off.bc"))
      n.replace(n.size() - 6, 3, "on");
    if (opts.daz && n == "oclc_daz_opt_off.bc") n = "oclc_daz_opt_on.bc";
    std::string path = dir + "/" + n;
    if (access(path.c_str(), R_OK) != 0) {
      // The libraries are there but predate the target (Debian 12's 5.2 and gfx942).
      if (StartsWith(n, "oclc_isa_version_") && access((dir + "/ocml.bc").c_str(), R_OK) == 0)
        return Status(StatusCode::kNotFound, "the device libraries in " + dir + " have no " + n + " for " + target +
                                                 ": they predate that target; compiling for it needs device libraries "
                                                 "(HIPR_RTC_DEVICE_LIB_DIR) and a " + kComgrLibrary + " that know it");
      return Status(StatusCode::kNotFound, "device library " + path +
                      " is missing: runtime compilation needs rocm-device-libs (Debian: apt install "
                      "rocm-device-libs), or HIPR_RTC_DEVICE_LIB_DIR naming its bitcode directory");
    }
    for (const char* f : {"-Xclang", "-mlink-builtin-bitcode", "-Xclang"}) flags->emplace_back(f);
    flags->push_back(std::move(path));
  }
  return Status::Ok();
}

// Codegen and link of bitcode already in `bitcode` into a code object.
Status CodegenAndLink(const Comgr& c, const std::string& target, const std::string& opt_level,
                      const DataSet& bitcode, std::string* log, bool* ok, std::vector<char>* code) {
  ActionInfo info(c);
  HIPR_RETURN_IF_ERROR(info.Create(target, {opt_level}));
  DataSet linked(c), relocatable(c), executable(c);
  for (DataSet* s : {&linked, &relocatable, &executable})
    HIPR_RETURN_IF_ERROR(s->Create());
  *ok = info.Run(AMD_COMGR_ACTION_LINK_BC_TO_BC, bitcode, linked, log) &&
        info.Run(AMD_COMGR_ACTION_CODEGEN_BC_TO_RELOCATABLE, linked, relocatable, log) &&
        info.Run(AMD_COMGR_ACTION_LINK_RELOCATABLE_TO_EXECUTABLE, relocatable, executable, log);
  if (!*ok) return Status::Ok();
  HIPR_RETURN_IF_ERROR(executable.Get(AMD_COMGR_DATA_KIND_EXECUTABLE, 0, code));
  if (code->empty()) {
    *ok = false;
    log->append("hipr: the linker produced no code object\n");
  }
  return Status::Ok();
}

std::string Demangle(const std::string& name) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status),
                                                   &std::free);
  return status == 0 && out ? std::string(out.get()) : name;
}

void ResolveNameExpressions(const std::vector<std::string>& expressions, const std::vector<char>& code,
                            CompileResult* result) {
  if (expressions.empty()) return;
  co::CodeObjectInfo info;
  if (Status st = co::ParseCodeObject(co::Bytes(reinterpret_cast<const uint8_t*>(code.data()), code.size()), &info);
      !st.ok()) {
    result->log += "hipr: cannot read the compiled code object's kernels: " + st.message() + "\n";
    return;
  }
  std::vector<std::pair<std::string, std::string>> kernels;  // normalized -> mangled
  for (const co::KernelInfo& k : info.kernels) kernels.emplace_back(NormalizedKernelName(Demangle(k.name)), k.name);
  for (const std::string& e : expressions) {
    std::string want = NormalizedExpression(e);
    auto it = std::find_if(kernels.begin(), kernels.end(), [&](const auto& k) { return k.first == want; });
    if (it == kernels.end())
      result->log += "hipr: name expression '" + e + "' names no kernel of the program\n";
    else
      result->lowered.emplace_back(e, it->second);
  }
}

}  // namespace

std::string SourceWithNameExpressions(std::string_view source, const std::vector<std::string>& expressions) {
  std::string out(source);
  if (expressions.empty()) return out;
  // A host variable holding the kernel's address makes the compiler
  // instantiate the kernel and emit it in the device code, as a launch does.
  out += "\n#pragma clang diagnostic ignored \"-Wunused-variable\"\n";
  for (size_t i = 0; i < expressions.size(); ++i)
    out += "static auto __hipr_rtc_name_expression_" + std::to_string(i) + " = " + expressions[i] + ";\n";
  return out;
}

std::string NormalizedKernelName(std::string_view demangled) {
  std::string s = WithoutSpaces(demangled);
  // Drop the parameter list: the last top-level "(...)".
  if (!s.empty() && s.back() == ')') {
    int depth = 0;
    for (size_t i = s.size(); i-- > 0;) {
      if (s[i] == ')') ++depth;
      if (s[i] == '(' && --depth == 0) {
        s.resize(i);
        break;
      }
    }
  }
  // Function templates demangle with their return type: kernels return void.
  if (StartsWith(s, "void") && s.size() > 4 && demangled.substr(0, 5) == "void ") s.erase(0, 4);
  return s;
}

std::string NormalizedExpression(std::string_view expression) {
  std::string s = WithoutSpaces(expression);
  for (;;) {
    if (!s.empty() && s.front() == '&') {
      s.erase(0, 1);
    } else if (s.size() >= 2 && s.front() == '(' && s.back() == ')') {
      s = s.substr(1, s.size() - 2);
    } else {
      return s;
    }
  }
}

Status DeviceLibraries(std::string_view target, std::vector<std::string>* names) {
  std::string_view proc = target.substr(0, target.find(':'));
  if (!StartsWith(proc, "gfx") || proc.size() < 4)
    return InvalidArgument("not an AMDGPU target: '" + std::string(target) + "'");
  std::string_view version = proc.substr(3);
  for (char ch : version)
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
      return InvalidArgument("not an AMDGPU target: '" + std::string(target) + "'");
  // gfx10 and later run wave32 by default; gfx9 and earlier wave64.
  bool wave64 = version.size() < 4;
  *names = {"hip.bc",
            "ocml.bc",
            "ockl.bc",
            "oclc_abi_version_400.bc",
            "oclc_correctly_rounded_sqrt_on.bc",
            "oclc_daz_opt_off.bc",
            "oclc_finite_only_off.bc",
            "oclc_unsafe_math_off.bc",
            wave64 ? "oclc_wavefrontsize64_on.bc" : "oclc_wavefrontsize64_off.bc",
            "oclc_isa_version_" + std::string(version) + ".bc"};
  return Status::Ok();
}

Status Compile(const CompileRequest& request, CompileResult* result) {
  *result = CompileResult{};
  Options opts;
  if (Status st = ParseOptions(request.options, &opts); !st.ok()) {
    result->log = "hipr: " + st.message() + "\n";
    return Status::Ok();
  }
  result->target = opts.target.empty() ? request.default_target : opts.target;
  if (result->target.empty()) {
    result->log = "hipr: no target: no current device to compile for and no --offload-arch option\n";
    return Status::Ok();
  }
  std::vector<std::string> flags;
  if (!opts.has_opt_level) flags.emplace_back("-O3");
  if (!opts.has_std) flags.emplace_back("-std=c++17");
  for (const char* f : {"-D__HIPCC_RTC__", "-include", kPreambleName}) flags.emplace_back(f);
  if (Status st = DeviceLibraryPaths(result->target, opts, request.device_lib_dir, &flags); !st.ok()) {
    if (st.code() == StatusCode::kInvalidArgument) {
      result->log = "hipr: " + st.message() + "\n";
      return Status::Ok();
    }
    return st;
  }
  flags.insert(flags.end(), opts.clang.begin(), opts.clang.end());
  std::string opt_level = "-O3";
  for (const std::string& o : opts.clang)
    if (StartsWith(o, "-O")) opt_level = o;

  const Comgr& c = LoadComgr();
  if (!c.error.empty()) return Status(StatusCode::kFailedPrecondition, c.error);
  std::lock_guard<std::mutex> lock(CompileMutex());
  std::string name = request.name.empty() ? "prog.hip" : request.name;
  std::string source = SourceWithNameExpressions(request.source, request.name_expressions);
  DataSet input(c), bitcode(c);
  for (DataSet* s : {&input, &bitcode})
    HIPR_RETURN_IF_ERROR(s->Create());
  HIPR_RETURN_IF_ERROR(input.Add(AMD_COMGR_DATA_KIND_SOURCE, name, source.data(), source.size()));
  HIPR_RETURN_IF_ERROR(input.Add(AMD_COMGR_DATA_KIND_INCLUDE, kPreambleName, kPreamble.data(), kPreamble.size()));
  for (const Header& h : request.headers)
    HIPR_RETURN_IF_ERROR(input.Add(AMD_COMGR_DATA_KIND_INCLUDE, h.name, h.text.data(), h.text.size()));
  ActionInfo compile(c);
  HIPR_RETURN_IF_ERROR(compile.Create(result->target, flags));
  if (!compile.Run(AMD_COMGR_ACTION_COMPILE_SOURCE_WITH_DEVICE_LIBS_TO_BC, input, bitcode, &result->log))
    return Status::Ok();
  HIPR_RETURN_IF_ERROR(bitcode.Get(AMD_COMGR_DATA_KIND_BC, 0, &result->bitcode));
  if (opts.rdc) {
    result->ok = !result->bitcode.empty();
    return Status::Ok();
  }
  bool ok = false;
  HIPR_RETURN_IF_ERROR(CodegenAndLink(c, result->target, opt_level, bitcode, &result->log, &ok, &result->code));
  if (!ok) return Status::Ok();
  result->ok = true;
  ResolveNameExpressions(request.name_expressions, result->code, result);
  return Status::Ok();
}

Status Link(const std::vector<std::vector<char>>& bitcode, const std::string& target,
            const std::vector<std::string>& options, LinkResult* result) {
  *result = LinkResult{};
  if (bitcode.empty()) {
    result->log = "hipr: nothing to link\n";
    return Status::Ok();
  }
  std::string opt_level = "-O3";
  for (const std::string& o : options)
    if (StartsWith(o, "-O")) opt_level = o;
  const Comgr& c = LoadComgr();
  if (!c.error.empty()) return Status(StatusCode::kFailedPrecondition, c.error);
  std::lock_guard<std::mutex> lock(CompileMutex());
  DataSet input(c);
  HIPR_RETURN_IF_ERROR(input.Create());
  for (size_t i = 0; i < bitcode.size(); ++i) {
    std::string name = "module" + std::to_string(i) + ".bc";
    HIPR_RETURN_IF_ERROR(input.Add(AMD_COMGR_DATA_KIND_BC, name, bitcode[i].data(), bitcode[i].size()));
  }
  bool ok = false;
  HIPR_RETURN_IF_ERROR(CodegenAndLink(c, target, opt_level, input, &result->log, &ok, &result->code));
  result->ok = ok;
  return Status::Ok();
}

}  // namespace hipr::client::rtc
