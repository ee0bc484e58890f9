// Force-included ahead of every C++ file that sees HIP's headers (CMake's
// hipr_hip_headers and the hip device modules).
//
// HIP's headers, compiled by a host compiler, define `__noinline__` away
// (amd_detail/host_defines.h, 5.2 to 7.2). Newer libstdc++ spells an
// attribute `[[__gnu__::__noinline__]]` in <format> (GCC 16, Debian sid), which
// that macro turns into `[[__gnu__::]]`, an error. Parsed first, <format>
// is protected by its include guard. Debian 12's libstdc++ has no <format>,
// so there CMake does not force it in (HIPR_HAVE_STD_FORMAT).
#pragma once

#if defined(__cplusplus) && __cplusplus >= 202002L && defined(__has_include)
#if __has_include(<format>)
#include <format>
#endif
#endif
