// Included through the program's own include directory; OFFSET comes from
// its compile options (-DOFFSET=7), which the twin must see too.
#pragma once
#ifndef OFFSET
#error "OFFSET is not defined: the compile options did not reach this compile"
#endif
__device__ inline int add_offset(int v) { return v + OFFSET; }
