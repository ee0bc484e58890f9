// Kernel twins: <hip/hip_fp16.h> is not supported.
#pragma once
#error "hipr sim twins: half precision (__half) (<hip/hip_fp16.h>) is not supported by the sim device"
