// Kernel twins: <hip/hip_bfloat16.h> is not supported.
#pragma once
#error "hipr sim twins: bfloat16 (<hip/hip_bfloat16.h>) is not supported by the sim device"
