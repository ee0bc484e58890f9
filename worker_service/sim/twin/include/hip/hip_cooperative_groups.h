// Kernel twins: <hip/hip_cooperative_groups.h> is not supported.
#pragma once
#error "hipr sim twins: cooperative groups (<hip/hip_cooperative_groups.h>) is not supported by the sim device"
