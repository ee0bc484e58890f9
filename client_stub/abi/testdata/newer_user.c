// A library built against the newer runtime (newer_runtime.c) and the newer
// libhiprtc (newer_hiprtc.c): it needs hipMalloc@hip_4.2 and the unversioned
// hiprtcVersion, which hipr's stub defines, and hipFutureFunction@hip_7.9 and
// hiprtcFutureFunction, which it does not.
int hipMalloc(void** ptr, unsigned long size);
int hipFutureFunction(int value);
int hiprtcVersion(int* major, int* minor);
int hiprtcFutureFunction(int value);
int newer_user_entry(void** p) {
  int major = 0, minor = 0;
  return hipMalloc(p, 16) + hipFutureFunction(1) + hiprtcVersion(&major, &minor) + hiprtcFutureFunction(2);
}
