// The entry point libmajor6.so offers main5 (tests/e2e/mixed_majors).
#pragma once

#include <cstddef>

// What the 5.x hipGetDeviceProperties said, for the 6.x side to compare.
struct Major5Props {
  char name[256];
  size_t total_global_mem;
  char gcn_arch_name[256];
};

extern "C" int Major6Checks(void* device_ptr, void* pinned_ptr, const Major5Props* expected);
// libmajor7.so's: `device_ptr` holds at least 2 KiB.
extern "C" int Major7Checks(void* device_ptr);
