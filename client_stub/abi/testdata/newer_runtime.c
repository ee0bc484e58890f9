// A stand-in for a HIP runtime newer than any hipr knows: libamdhip64.so.7
// with a version node hip_7.9 that defines a function hipr's stub lacks.
// Link-only, for hipr-abi-check's test (abi_check_test.py).
int hipMalloc(void** ptr, unsigned long size) { return (int)(ptr == 0) + (int)(size == 0); }
int hipFutureFunction(int value) { return value; }
