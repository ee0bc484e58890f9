// api_unsupported: every exported HIP function hipr does not support answers
// with its documented error and logs its name once. The generated entries
// (names in the file given as argv[1], one per line, from the build's
// client_stub/gen/unsupported_exports.cc) must return hipErrorNotSupported on
// every call and leave it as the thread's last error; the hand-written ones
// (client_stub/api/handwritten_unsupported.cc) fail in their own types. The
// api_table scenario checks the stub's log: one line per function however
// often it was called.
#include <hip/hip_runtime.h>

#include <fstream>
#include <string>
#include <vector>

#include "common.h"

namespace {

using AnyEntry = int (*)();  // The generated entries read no arguments.

void* Find(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  CHECK(f != nullptr, "%s is not exported: %s", name, dlerror());
  Dl_info info{};
  CHECK(dladdr(f, &info) != 0 && info.dli_fname != nullptr && strstr(info.dli_fname, e2e::kStubFile) != nullptr,
        "%s resolves to %s, not the stub", name, info.dli_fname ? info.dli_fname : "?");
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CHECK(argc == 2, "usage: api_unsupported NAMES_FILE");
  std::ifstream in(argv[1]);
  CHECK(in.good(), "cannot read %s", argv[1]);
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  CHECK(names.size() >= 20, "only %zu names in %s", names.size(), argv[1]);  // The scenario passes the list.
  HIP_OK(hipDeviceSynchronize());  // A session, so the calls below are not refused for want of one.

  for (const std::string& name : names) {
    auto f = reinterpret_cast<AnyEntry>(Find(name.c_str()));
    HIP_OK(hipGetLastError());  // Clears it.
    for (int call = 0; call < 2; ++call) {
      const int rc = f();
      CHECK(rc == hipErrorNotSupported, "%s returned %d on call %d, expected hipErrorNotSupported", name.c_str(), rc,
            call + 1);
    }
    HIP_EXPECT(hipGetLastError(), hipErrorNotSupported);
    HIP_OK(hipGetLastError());
    printf("unsupported ok: %s\n", name.c_str());
  }

  // Hand-written: the activity and tracer hooks do nothing, and there is no
  // precompiled header.
  auto enable = reinterpret_cast<bool (*)(uint32_t, bool)>(Find("hipEnableActivityCallback"));
  CHECK(!enable(0, true), "hipEnableActivityCallback claimed to enable tracing");
  printf("unsupported ok: hipEnableActivityCallback\n");
  auto pch = reinterpret_cast<void (*)(const char**, unsigned int*)>(Find("__hipGetPCH"));
  const char* text = "x";
  unsigned int size = 7;
  pch(&text, &size);
  CHECK(text == nullptr && size == 0, "__hipGetPCH gave %p, %u", static_cast<const void*>(text), size);
  printf("unsupported ok: __hipGetPCH\n");
  // A remote device cannot reach this process's pinned memory.
  void* host = nullptr;
  void* dev = reinterpret_cast<void*>(0x1);
  HIP_OK(hipHostMalloc(&host, 4096, 0));
  HIP_EXPECT(hipHostGetDevicePointer(&dev, host, 0), hipErrorNotSupported);
  CHECK(dev == reinterpret_cast<void*>(0x1), "a failed hipHostGetDevicePointer wrote %p", dev);
  HIP_EXPECT(hipHostGetDevicePointer(&dev, &size, 0), hipErrorInvalidValue);  // Not pinned memory.
  HIP_OK(hipHostFree(host));
  printf("unsupported ok: hipHostGetDevicePointer\n");
  return e2e::Finish("api_unsupported");
}
