/* Like PyTorch's libcaffe2_nvrtc.so on ROCm: a library linked against the wheel's own libhiprtc
   (DT_NEEDED libhiprtc.so, DT_RPATH $ORIGIN), opened by Python with RTLD_LOCAL as ATen opens that
   one. Its hiprtc* references are unversioned, so under LD_PRELOAD they bind to the stub, which
   comes first in the global scope: wheel_client.py checks which file serves them. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

typedef int hiprtcResult;
typedef struct program* hiprtcProgram;
hiprtcResult hiprtcVersion(int* major, int* minor);
hiprtcResult hiprtcCreateProgram(hiprtcProgram* prog, const char* src, const char* name, int num_headers,
                                 const char** headers, const char** include_names);
hiprtcResult hiprtcDestroyProgram(hiprtcProgram* prog);

/* The file serving this library's hiprtcCreateProgram in `file`, hiprtcVersion's major in *major;
   then a program made and destroyed through the same references. 0 when every call succeeded. */
int wheel_rtc_run(char* file, size_t size, int* major) {
  Dl_info info;
  if (!dladdr((void*)&hiprtcCreateProgram, &info) || info.dli_fname == NULL) return 1;
  snprintf(file, size, "%s", info.dli_fname);
  int minor = -1;
  if (hiprtcVersion(major, &minor) != 0) return 2;
  hiprtcProgram prog = NULL;
  if (hiprtcCreateProgram(&prog, "extern \"C\" __global__ void k(int* p) { *p = 1; }", "k.hip", 0, NULL, NULL) != 0 ||
      prog == NULL)
    return 3;
  return hiprtcDestroyProgram(&prog) == 0 && prog == NULL ? 0 : 4;
}
