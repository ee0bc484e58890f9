// Kernel twins: <hip/hip_complex.h> is not supported.
#pragma once
#error "hipr sim twins: hipComplex (<hip/hip_complex.h>) is not supported by the sim device"
