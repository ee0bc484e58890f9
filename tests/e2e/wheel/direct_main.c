/* A program whose own DT_NEEDED is libamdhip64.so.6, found through its RPATH
   (the wheel package's runtime stand-in): the one case LD_PRELOAD cannot keep
   another runtime out of, since glibc maps a program's dependencies before
   any code of the preloaded stub runs. run_e2e.py (wheel_preload) checks
   that its calls still reach the stub, which binds first, and that the stub
   says which foreign runtime is mapped. */
#include <stdio.h>

int hipGetDeviceCount(int* count);

int main(void) {
  int count = -1;
  int err = hipGetDeviceCount(&count);
  printf("direct_main: hipGetDeviceCount -> %d, %d device(s)\n", err, count);
  return err == 0 && count > 0 ? 0 : 1;
}
