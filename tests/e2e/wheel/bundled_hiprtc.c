/* A stand-in for the libhiprtc a PyTorch ROCm wheel bundles (torch/lib/libhiprtc.so). Its hiprtc*
   carry no version, as those of Debian's libhiprtc.so.6 and .so.7 do (abi_check_test checks theirs),
   so a library linked against it binds them to the preloaded stub. wheel_client.py reaches these
   functions only through dlsym on this file's own handle; a call through a linked reference would be
   a binding the stub lost, and aborts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int hiprtcResult;
typedef struct bundled_program* hiprtcProgram;

static void lost(const char* name) {
  fprintf(stderr, "E2E_FAIL bundled libhiprtc: %s was called through a linked reference\n", name);
  abort();
}

const char* hiprtcGetErrorString(hiprtcResult result) {
  (void)result;
  return "bundled libhiprtc";
}

hiprtcResult hiprtcVersion(int* major, int* minor) {
  *major = 99;
  *minor = 0;
  return 0;
}

hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name, int num_headers,
                                 const char** headers, const char** include_names) {
  (void)prog, (void)src, (void)name, (void)num_headers, (void)headers, (void)include_names;
  lost("hiprtcCreateProgram");
  return 0;
}

hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog) {
  (void)prog;
  lost("hiprtcDestroyProgram");
  return 0;
}

/* Given no target, the real library asks the HIP runtime for the current device, opening it by its
   bare name (dlopen("libamdhip64.so")); so does this one. 0 when the runtime it reached answered, and
   its file in *runtime. */
hiprtcResult hiprtcCompileProgram(hiprtcProgram prog, int num_options, const char** options) {
  (void)prog, (void)num_options, (void)options;
  void* runtime = dlopen("libamdhip64.so", RTLD_NOW);
  if (runtime == NULL) return 11; /* HIPRTC_ERROR_INTERNAL_ERROR */
  int (*get_device)(int*) = (int (*)(int*))dlsym(runtime, "hipGetDevice");
  int device = -1;
  return get_device != NULL && get_device(&device) == 0 && device == 0 ? 0 : 11;
}

/* The file that served the runtime the compiler opened. */
int bundled_runtime_file(char* file, size_t size) {
  void* runtime = dlopen("libamdhip64.so", RTLD_NOW | RTLD_NOLOAD);
  Dl_info info;
  if (runtime == NULL || !dladdr(dlsym(runtime, "hipGetDevice"), &info) || info.dli_fname == NULL) return 1;
  snprintf(file, size, "%s", info.dli_fname);
  return 0;
}
