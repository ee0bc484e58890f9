// Kernel twins: <hip/hip_fp16.h>, half precision as HIP 5.2 defines it
// (hipr_twin_half.h).
#pragma once
#include "../../hipr_twin_prelude.h"
#include "../../hipr_twin_half.h"
