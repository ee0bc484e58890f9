// A stand-in for a libhiprtc newer than any hipr knows: libhiprtc.so.7 whose
// hiprtc* carry no version, as ROCm 6.4's and 7.2's do, one of them a
// function hipr's stub lacks. Link-only, for hipr-abi-check's test
// (abi_check_test.py).
int hiprtcVersion(int* major, int* minor) { return (int)(major == 0) + (int)(minor == 0); }
int hiprtcFutureFunction(int value) { return value; }
