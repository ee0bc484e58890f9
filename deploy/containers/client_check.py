# The client check of check-steps.sh and smoke-images.sh, run inside the
# client image through its entrypoint (hipr-run): through the stub, by the
# name a HIP program links, it asks the worker named by HIPR_SERVER for its
# devices, allocates 1 MiB on device 0 and copies it there and back.
import ctypes

import numpy as np

h = ctypes.CDLL("libamdhip64.so.5")
h.hipMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
h.hipMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
h.hipFree.argtypes = [ctypes.c_void_p]
n = ctypes.c_int(0)
rc = h.hipGetDeviceCount(ctypes.byref(n))
assert rc == 0 and n.value >= 1, f"hipGetDeviceCount: error {rc}, {n.value} device(s)"
name = ctypes.create_string_buffer(256)
assert h.hipDeviceGetName(name, 256, 0) == 0
p = ctypes.c_void_p()
assert h.hipMalloc(ctypes.byref(p), 1 << 20) == 0
a = np.arange(1 << 18, dtype=np.float32)
b = np.zeros_like(a)
assert h.hipMemcpy(p, a.ctypes.data, a.nbytes, 1) == 0  # hipMemcpyHostToDevice
assert h.hipMemcpy(b.ctypes.data, p, a.nbytes, 2) == 0  # hipMemcpyDeviceToHost
assert (a == b).all(), "the copy back differs"
assert h.hipFree(p) == 0
print(f"{n.value} device(s), {name.value.decode()}, 1 MiB round trip equal")
