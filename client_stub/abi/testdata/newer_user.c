// A library built against the newer runtime (newer_runtime.c): it needs
// hipMalloc@hip_4.2, which hipr's stub defines, and hipFutureFunction@hip_7.9,
// which it does not.
int hipMalloc(void** ptr, unsigned long size);
int hipFutureFunction(int value);
int newer_user_entry(void** p) { return hipMalloc(p, 16) + hipFutureFunction(1); }
